-- Argo CD health check for example.com/MyApp (operator 0.3.0 and later).
--
-- The operator reports kstatus-style conditions (Ready, Reconciling, Stalled) beside
-- OpenShift-style ones (Progressing, Degraded). This script reads them as kstatus (and so
-- Flux) does, so Argo CD and Flux agree on a MyApp:
--   1. status not yet written for metadata.generation        -> Progressing
--   2. Stalled True   (a problem the user must act on)       -> Degraded
--   3. Reconciling True (rollout, scale or retry under way)  -> Progressing
--   4. Ready True                                            -> Healthy, with Degraded's
--      message when Degraded is True (a problem the MyApp serves in spite of)
--   5. anything else                                         -> Progressing
-- Degraded alone is no alarm: the operator makes a problem that blocks the MyApp Stalled.
--
-- Only the base library is used (no string, os or io), so the script runs in Argo CD's
-- default sandbox without resource.customizations.useOpenLibs. It never raises an error:
-- an erroring script makes Argo CD report Unknown, which never converges.

-- Tables are what Argo CD turns JSON objects and arrays into; anything else in their place
-- is treated as absent.
local function tableOrEmpty(value)
  if type(value) == "table" then
    return value
  end
  return {}
end

local function nonEmptyString(value)
  return type(value) == "string" and value ~= ""
end

-- conditionsByType indexes the conditions by type; the first of a type wins, as the API
-- lists them as a map keyed by type.
local function conditionsByType(list)
  local byType = {}
  for _, c in ipairs(tableOrEmpty(list)) do
    if type(c) == "table" and nonEmptyString(c.type) and byType[c.type] == nil then
      byType[c.type] = c
    end
  end
  return byType
end

local function isTrue(c)
  return c ~= nil and c.status == "True"
end

-- messageOf is the condition's own message, or a stable one built from its type, status and
-- reason when the operator left the message out.
local function messageOf(c)
  if nonEmptyString(c.message) then
    return c.message
  end
  local text = c.type .. " is "
  if nonEmptyString(c.status) then
    text = text .. c.status
  else
    text = text .. "Unknown"
  end
  if nonEmptyString(c.reason) then
    text = text .. ": " .. c.reason
  end
  return text
end

local function result(status, message)
  return { status = status, message = message }
end

local function health(o)
  local generation = tableOrEmpty(o.metadata).generation
  if type(generation) ~= "number" then
    generation = nil
  end
  local waiting = "Waiting for the operator to report status"
  if generation ~= nil then
    waiting = "Waiting for the operator to observe generation " .. generation
  end

  -- 1. A status computed for an older spec says nothing about the current one.
  if type(o.status) ~= "table" then
    return result("Progressing", waiting)
  end
  local status = o.status
  if generation ~= nil then
    local observed = status.observedGeneration
    if type(observed) ~= "number" or observed < generation then
      return result("Progressing", waiting)
    end
  end
  local byType = conditionsByType(status.conditions)
  if generation ~= nil then
    for _, c in pairs(byType) do
      if type(c.observedGeneration) == "number" and c.observedGeneration < generation then
        return result("Progressing", waiting)
      end
    end
  end

  -- 2. A problem the user must act on.
  if isTrue(byType.Stalled) then
    return result("Degraded", messageOf(byType.Stalled))
  end

  -- 3. A rollout, scale or retry under way, even while enough pods keep Ready True.
  if isTrue(byType.Reconciling) then
    return result("Progressing", messageOf(byType.Reconciling))
  end

  -- 4 and 5.
  local ready = byType.Ready
  if isTrue(ready) then
    if isTrue(byType.Degraded) then
      return result("Healthy", messageOf(byType.Degraded))
    end
    return result("Healthy", messageOf(ready))
  end
  if ready ~= nil then
    return result("Progressing", messageOf(ready))
  end
  return result("Progressing", "Waiting for the operator to report the Ready condition")
end

return health(tableOrEmpty(obj))
