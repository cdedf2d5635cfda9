-- examples/stale_worker.lua: the seed's scenario against a real database file.
--
--   worker A claims a job, then stalls; its lease runs out; worker B claims
--   the job (a larger fence) and completes it; A wakes up and tries to renew
--   and to complete with its old fence: both are refused, B's result stays.
--
-- Usage: build/lease examples/stale_worker.lua [database-path]
--    or: LUA_CPATH='build/?.so;;' lua5.4 examples/stale_worker.lua [database-path]
-- The database path must not exist yet (default: a new temporary file).
-- Time is a plain number here, as in the contract: the caller's clock.
local lease = require("lease")

local path = arg[1]
if path then
  local f = io.open(path, "rb")
  if f then
    f:close()
    io.stderr:write("stale_worker: ", path, " exists: give a path for a new database\n")
    os.exit(2)
  end
else
  local tmp = os.tmpname()   -- an empty file, made safely; the database sits beside it
  os.remove(tmp)
  path = tmp .. ".db"
end

local db = lease.open(path)
local id, ttl = "invoice-42", 10
local ok_all = true

--- Print one step: the time, who did what, and the outcome.
-- @tparam number t the scenario's clock (seconds)
-- @tparam string who "A", "B" or ""
-- @tparam string what the call made
-- @param ... what the call returned
local function step(t, who, what, ...)
  local out = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if v ~= nil or i == 1 then out[#out + 1] = tostring(v) end
  end
  print(string.format("t=%-3s %-2s %-44s -> %s", t, who, what, table.concat(out, ", ")))
end

--- Check an outcome the scenario depends on; remember a mismatch.
-- @tparam boolean cond whether the outcome was the expected one
-- @tparam string what the expectation, printed when it failed
local function expect(cond, what)
  if not cond then
    ok_all = false
    print("   !! unexpected: " .. what)
  end
end

--- The scenario's steps on db, printed as they happen.
local function scenario()
  print("lease " .. lease.version .. ": a stale worker's late write, on " .. path)
  print()
  assert(db:enqueue(id))
  step(0, "", "enqueue " .. id, true)

  local fa = db:claim(id, "A", 0, ttl)
  step(0, "A", "claim (ttl " .. ttl .. ")", "fence " .. tostring(fa))
  expect(fa == 1, "A should get fence 1")

  local ok, why = db:renew(id, "A", fa, 6, ttl)
  step(6, "A", "renew with fence " .. fa, ok, why)
  expect(ok, "A's renew inside its lease should succeed")
  print("       A  stalls (a long GC pause, a frozen VM, a partition...)")

  local fb, held = db:claim(id, "B", 10, ttl)
  step(10, "B", "claim while A's lease runs to t=16", fb, held)
  expect(fb == nil and held == "held", "B must not get a held lease")

  fb = db:claim(id, "B", 16, ttl)
  step(16, "B", "claim at t=16, A's lease has run out", "fence " .. tostring(fb))
  expect(fb == 2, "B should get fence 2")

  ok, why = db:renew(id, "A", fa, 17, ttl)
  step(17, "A", "wakes up, renews with fence " .. fa, ok, why)
  expect(ok == false and why == "not_owner", "A's late renew must be refused")

  ok, why = db:complete(id, "A", fa, 18, "A's total: 100")
  step(18, "A", "completes with fence " .. fa, ok, why)
  expect(ok == false and why == "not_owner", "A's late complete must be refused")

  ok, why = db:complete(id, "B", fb, 19, "B's total: 120")
  step(19, "B", "completes with fence " .. fb, ok, why)
  expect(ok, "B's complete under its lease should succeed")

  ok, why = db:complete(id, "A", fa, 20, "A's total: 100")
  step(20, "A", "retries its complete with fence " .. fa, ok, why)
  expect(ok == false and why == "done", "A's retry must be refused")
end

-- db is closed when the scenario ends, however it ends (every Lua version:
-- no `<close>`); an error is raised again after the close.
local ran, err = pcall(scenario)
db:close()
if not ran then error(err, 0) end

-- Read the row back through a new connection, as any other reader would.
local s = lease.state(path, id)
print()
print(string.format("stored: owner=%s fence=%d done=%s result=%q", s.owner, s.fence,
  tostring(s.done), s.result))
expect(s.result == "B's total: 120" and s.fence == 2 and s.done, "B's result must be stored")
print(ok_all and "ok: the stale worker's writes were refused; B's result stands"
              or "FAILED: see the lines marked !!")
os.exit(ok_all and 0 or 1)
