-- Argo CD health of an ExtendedDeployment (extendeddeployment.io/v1beta1).
-- The agent computes the rollout phase itself (core/rollout/status.ts, core/rollout/status-decision.ts); this script
-- maps it with the rules edctl reads it by (core/rollout/status-reading.ts; gitops/health.test.ts holds both to one table):
--   no status, or metadata.generation not yet observed  -> Progressing
--   condition Valid=False (the agent cannot act on the spec) -> Degraded
--   phase Degraded (a group missed its progress deadline)  -> Degraded
--   phase Paused by a failed analysis (reason AnalysisFailed) -> Degraded
--   phase Paused or WaitingForConfirmation                 -> Suspended
--   phase Progressing                                      -> Progressing
--   phase Healthy                                          -> Healthy
-- Only Lua's base library is used: Argo CD runs health scripts without the string and math libraries.
local hs = { status = "Progressing", message = "" }

if obj.status == nil then
  hs.message = "Waiting for the extended-deployment agent to report status"
  return hs
end

local status = obj.status
local generation = obj.metadata.generation or 0
if status.observedGeneration == nil or status.observedGeneration < generation then
  hs.message = "Waiting for the agent to observe generation " .. generation
  return hs
end

local progressing = nil
if status.conditions ~= nil then
  for _, condition in ipairs(status.conditions) do
    if condition.type == "Valid" and condition.status == "False" then
      hs.status = "Degraded"
      hs.message = "Invalid spec: " .. (condition.message or "")
      return hs
    end
    if condition.type == "Progressing" then
      progressing = condition
    end
  end
end

local phase = status.phase
local message = phase or "no phase"
if progressing ~= nil and progressing.message ~= nil and progressing.message ~= "" then
  message = progressing.message
end
if status.overview ~= nil then
  message = message .. " (" .. status.overview .. ")"
end
hs.message = message

if phase == "Healthy" then
  hs.status = "Healthy"
elseif phase == "Degraded" then
  hs.status = "Degraded"
elseif phase == "Paused" and progressing ~= nil and progressing.reason == "AnalysisFailed" then
  hs.status = "Degraded"
elseif phase == "Paused" then
  hs.status = "Suspended"
elseif phase == "WaitingForConfirmation" then
  hs.status = "Suspended"
  hs.message = message .. "; approve with: edctl approve " .. obj.metadata.name .. " -n " .. (obj.metadata.namespace or "default")
elseif phase == nil then
  hs.message = "Waiting for the agent to report a rollout phase"
end
return hs
