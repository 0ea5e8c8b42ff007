-- Argo CD health of a DeployRegion (extendeddeployment.io/v1beta1, cluster-scoped).
-- The agent reports the region's node health in status.phase:
--   no status                                          -> Healthy (a region is usable before the agent reports on
--                                                         it; Progressing would hold its sync wave forever)
--   metadata.generation not yet observed               -> Progressing
--   Healthy                                            -> Healthy
--   Degraded or Failed                                 -> Degraded
-- Only Lua's base library is used: Argo CD runs health scripts without the string and math libraries.
local hs = { status = "Progressing", message = "" }

if obj.status == nil or obj.status.phase == nil then
  hs.status = "Healthy"
  hs.message = "No node health reported for this region yet"
  return hs
end

local status = obj.status
local generation = obj.metadata.generation or 0
if status.observedGeneration ~= nil and status.observedGeneration < generation then
  hs.message = "Waiting for the agent to observe generation " .. generation
  return hs
end

local message = status.phase
if status.nodes ~= nil then
  message = status.phase .. ": " .. (status.readyNodes or 0) .. " of " .. status.nodes .. " nodes ready"
end
hs.message = message

if status.phase == "Healthy" then
  hs.status = "Healthy"
elseif status.phase == "Degraded" or status.phase == "Failed" then
  hs.status = "Degraded"
end
return hs
