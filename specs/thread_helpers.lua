-- specs/thread_helpers.lua: fixtures for the specs over native threads:
-- the thread module, a monotonic clock, and a way to run Lua
-- code in a subprocess with the lease module reachable.
local H = require("helpers")
local T = {}

T.thread = require("lease.thread")

local system = require("system")   -- luasystem: busted itself depends on it
local luassert = require("luassert")   -- busted's assert, which specs see as `assert`

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

--- T.handed_out_once(ts) -> seen, total: join the worker threads ts, each
-- returning `took` (its jobs as "id#fence") and `wrong` (what it found not
-- as it should be), and assert that each ran to the end, found nothing
-- wrong, and that no job was handed out twice or at a fence other than 1.
-- seen maps each job's id to the name of the worker that took it ("w<i>"
-- for ts[i]); total counts the jobs taken.
function T.handed_out_once(ts)
  local seen, total = {}, 0
  for i = 1, #ts do
    local ok, took, wrong = ts[i]:join()
    assert(ok, took)
    luassert.are.same({}, wrong)
    for _, t in ipairs(took) do
      local id, fence = t:match("^(.-)#(%d+)$")
      luassert.is_nil(seen[id], "handed out twice: " .. id)
      seen[id] = "w" .. i
      luassert.are.equal("1", fence)
      total = total + 1
    end
  end
  return seen, total
end

return T
