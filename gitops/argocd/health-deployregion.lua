-- Argo CD health of a DeployRegion (extendeddeployment.io/v1beta1, cluster-scoped).
-- The agent reports the region's node health in status.phase:
--   no status                                          -> Healthy (a region is usable before the agent reports on
--                                                         it; Progressing would hold its sync wave forever)
--   metadata.generation not yet observed               -> Progressing
--   Healthy                                            -> Healthy
--   Degraded or Failed                                 -> Healthy, the message says so
-- Node trouble is never Degraded: DeployRegions sit in sync wave -1, and gitops-engine fails a sync when a resource of
-- an earlier wave is Degraded. A region whose nodes fail would then stop every later sync from reaching wave 0, so the
-- fix for an outage could not be delivered during the outage. Argo CD has no warning state, so the trouble goes into
-- the message, node counts included; the region's status and Events carry the details.
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
if status.phase ~= "Healthy" then
  message = message .. " (shown as Healthy so that syncs go on; see kubectl describe deployregion " .. obj.metadata.name .. ")"
end
hs.status = "Healthy"
hs.message = message
return hs
