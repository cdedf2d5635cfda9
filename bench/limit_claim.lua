-- bench/limit_claim.lua: what a concurrency limit costs claim_next on a
-- queue with a backlog, against the same claims without a limit, measured
-- in the same run.
--
-- Usage (run by build/lease, the project's Lua host with lease built in):
--   build/lease bench/limit_claim.lua DB [BACKLOG [CLAIMS [REPS]]]
-- DB       the database: a file path (removed first, then made afresh), or
--          a postgresql:// URI or libpq keyword string (anything with "=");
--          each measurement uses queues of its own, and their jobs stay in
--          the database: run it on a throwaway cluster, as
--          docs/benchmarks.md does
-- BACKLOG  ready jobs in the queue before the claims (default 100000)
-- CLAIMS   claim_next calls timed, none completed (default 200)
-- REPS     measurements of each kind, interleaved (default 3)
--
-- A measurement enqueues BACKLOG jobs into a queue of its own, sets (or
-- not) a concurrency limit above CLAIMS, then times CLAIMS claim_next calls
-- on that queue; each claim also walks past the jobs claimed before it,
-- which are still the queue's first.  It then completes what it claimed
-- and clears the limit, so the next measurement starts with no lease held
-- and no limit set.  Prints one line per measurement, then the medians:
--   RESULT backlog=<n> claims=<n> plain_ms=<ms> limited_ms=<ms> ratio=<limited/plain>
local lease = require("lease")
local path = arg[1]
local backlog, claims, reps = tonumber(arg[2] or 100000), tonumber(arg[3] or 200),
  tonumber(arg[4] or 3)
assert(path and backlog and claims and reps, "usage: bench/limit_claim.lua DB [BACKLOG [CLAIMS [REPS]]]")

local pg = path:find("^postgres") or path:find("=")
if not pg then
  for _, s in ipairs({ "", "-wal", "-shm" }) do os.remove(path .. s) end
end
local db = lease.open(path)
local run = ("%d"):format(math.floor(lease.now() * 1000) % 1000000000)

-- One measurement: milliseconds per claim_next.
local function measure(k, limited)
  local queue = ("limit-claim-%s-%d-%s"):format(run, k, limited and "l" or "p")
  for base = 0, backlog - 1, 5000 do
    local jobs = {}
    for i = base, math.min(backlog, base + 5000) - 1 do
      jobs[#jobs + 1] = { id = queue .. "-" .. i, queue = queue }
    end
    db:enqueue_many(jobs)
  end
  if limited then assert(db:limit(queue, { concurrency = claims + 10 })) end
  local held, now = {}, lease.now()
  local t0 = lease.now()
  for i = 1, claims do
    local id, fence = db:claim_next("bench", now, 3600, { queue = queue })
    assert(id, fence)
    held[i] = { id = id, fence = fence }
  end
  local ms = (lease.now() - t0) / claims * 1000
  assert(db:complete_many("bench", now, held))
  if limited then assert(db:limit(queue, {})) end
  return ms
end

local function median(t)
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

local plain, limited = {}, {}
for k = 1, reps do
  plain[k] = measure(k, false)
  limited[k] = measure(k, true)
  print(("rep %d: plain_ms=%.3f limited_ms=%.3f"):format(k, plain[k], limited[k]))
end
local p, l = median(plain), median(limited)
print(("RESULT backlog=%d claims=%d plain_ms=%.3f limited_ms=%.3f ratio=%.2f"):format(
  backlog, claims, p, l, l / p))
db:close()
