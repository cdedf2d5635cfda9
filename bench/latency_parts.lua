-- bench/latency_parts.lua: where an idle worker's enqueue-to-start time goes.
--
-- Usage (run by build/lease, the project's Lua host):
--   build/lease bench/latency_parts.lua DB [JOBS [GAP]]
-- DB    a file path (made afresh) or a postgresql:// URI
-- JOBS  jobs enqueued one at a time (default 100)
-- GAP   seconds between them (default 0.03), so that every process is idle
--       when the next one comes, as in bench/latency.lua
--
-- One waiter, a lease.thread with its own handle, loops: db:wait on the
-- run's queue, then claim_next at db:server_now(), then complete. The main
-- thread enqueues. Per job it records the enqueue call, the time from the
-- enqueue's return to the waiter's wake (the wait returned), and from the
-- wake to claim_next's return, then prints their medians and 90th
-- percentiles in milliseconds:
--   PART enqueue p50_ms=<ms> p90_ms=<ms>
--   PART enqueued_to_woken p50_ms=<ms> p90_ms=<ms>
--   PART woken_to_claimed p50_ms=<ms> p90_ms=<ms>
-- and the cost of one db:server_now() (on PostgreSQL a round trip to the
-- server; on SQLite the local clock) back to back and after GAP idle:
--   PART server_now_busy p50_ms=<ms> p90_ms=<ms>
--   PART server_now_idle p50_ms=<ms> p90_ms=<ms>
local lease = require("lease")
local path = arg[1]
local jobs, gap = tonumber(arg[2] or 100), tonumber(arg[3] or 0.03)
assert(path and jobs and jobs >= 1 and gap and gap >= 0,
  "usage: bench/latency_parts.lua DB [JOBS [GAP]]")

local QUEUE = string.format("parts-%d-%d", lease.pid(), os.time())
if not (path:match("^postgres") or path:find("=", 1, true)) then
  for _, s in ipairs({ "", "-wal", "-shm" }) do os.remove(path .. s) end
end

-- The waiter: returns "id woken_at claimed_at" lines (lease.now() seconds).
local WAITER = [[
local lease = require("lease")
local path, queue, jobs = ...
local db <close> = lease.open(path)
local out = {}
while #out < jobs do
  if db:wait(queue, 5) then
    local woken = lease.now()
    local id, fence = db:claim_next("parts", db:server_now(), 30, { queue = queue })
    local claimed = lease.now()
    if id then
      assert(db:complete(id, "parts", fence, db:server_now(), "done"))
      out[#out + 1] = string.format("%s %.6f %.6f", id, woken, claimed)
    end
  end
end
return table.concat(out, "\n")
]]

local db = lease.open(path)
local waiter = lease.thread.spawn(load(WAITER), path, QUEUE, jobs)
lease.sleep(0.5)   -- the waiter is waiting by then

local sent = {}
for i = 1, jobs do
  local id = QUEUE .. "-" .. i
  local t0 = lease.now()
  db:enqueue(id, { queue = QUEUE })
  sent[id] = { t0, lease.now() }
  lease.sleep(gap)
end
local ok, lines = waiter:join()
assert(ok, lines)

local enq, woke, claim = {}, {}, {}
for id, woken, claimed in lines:gmatch("(%S+) (%S+) (%S+)") do
  local s = sent[id]
  enq[#enq + 1] = (s[2] - s[1]) * 1e3
  woke[#woke + 1] = (tonumber(woken) - s[2]) * 1e3
  claim[#claim + 1] = (tonumber(claimed) - tonumber(woken)) * 1e3
end

local busy, idle = {}, {}
for i = 1, jobs do
  local t = lease.now()
  db:server_now()
  busy[i] = (lease.now() - t) * 1e3
end
for i = 1, jobs do
  lease.sleep(gap)
  local t = lease.now()
  db:server_now()
  idle[i] = (lease.now() - t) * 1e3
end
db:close()

local function report(name, xs)
  table.sort(xs)
  local function pct(p) return xs[math.max(1, math.ceil(#xs * p))] end
  print(string.format("PART %s p50_ms=%.3f p90_ms=%.3f", name, pct(0.5), pct(0.9)))
end
report("enqueue", enq)
report("enqueued_to_woken", woke)
report("woken_to_claimed", claim)
report("server_now_busy", busy)
report("server_now_idle", idle)
