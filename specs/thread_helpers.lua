-- specs/thread_helpers.lua: fixtures for the specs over native threads:
-- the thread module, a monotonic clock, and a way to run Lua
-- code in a subprocess with the lease module reachable.
local H = require("helpers")
local T = {}

T.thread = require("lease.thread")

local system = require("system")   -- luasystem: busted itself depends on it

--- T.now() -> number: monotonic seconds, for measuring waits.
function T.now()
  return system.monotime()
end

--- T.lua() -> string: the interpreter the specs run in (H.lua), quoted
-- for the shell.
T.lua = H.lua

--- T.run(code) -> ok, code, stdout, stderr: run the Lua chunk `code` in a
-- new process of T.lua(), with the build tree first on package.cpath so
-- the stock interpreter finds lease.so (the host has lease preloaded).
function T.run(code)
  local build = os.getenv("LEASE_BUILD_DIR") or "build"
  local script = H.file("script") .. ".lua"
  local errfile = script .. ".err"
  H.write(script, "package.cpath = " .. string.format("%q", build .. "/?.so;")
    .. " .. package.cpath\n" .. code)
  local out, ok, status = H.capture(T.lua() .. " " .. H.sh(script) .. " 2>" .. H.sh(errfile))
  local err = H.read(errfile) or ""
  os.remove(script); os.remove(errfile)
  return ok, status, out, err
end

--- T.states(path, ids) -> table: id -> state row (or false when absent),
-- read through a fresh connection.
function T.states(path, ids)
  local db = H.lease.open(path)
  local out = {}
  for _, id in ipairs(ids) do out[id] = db:state(id) or false end
  db:close()
  return out
end

return T
