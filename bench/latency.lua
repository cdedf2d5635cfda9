-- bench/latency.lua: enqueue-to-handler-start latency of an idle pool, one
-- job at a time.
--
-- Usage (run by build/lease, the project's Lua host with lease, lease.thread
-- and lease.pool built in):
--   build/lease bench/latency.lua DB PRODUCER [JOBS [GAP [WORKERS]]]
-- DB        the database: a file path (made afresh), or a postgresql:// URI
--           or libpq keyword string (the run uses a queue of its own)
-- PRODUCER  "thread" (a thread of the pool's process enqueues) or "process"
--           (another process does)
-- JOBS      how many jobs (default 200)
-- GAP       seconds between two enqueues (default 0.03; more than the
--           latency, so every job finds the pool idle)
-- WORKERS   the pool's workers (default 2)
--
-- The pool runs `forever` with its default poll in this process's main
-- thread; the producer enqueues one job at a time with its enqueue time
-- (lease.now()) as the payload, then sleeps GAP, and at the end sends this
-- process SIGTERM, which stops the pool.  Each handler returns lease.now()
-- at its start; the latency of a job is that minus its payload.  Prints:
--   RESULT jobs=<n> p50_ms=<ms> p99_ms=<ms> max_ms=<ms>
local lease = require("lease")
local pool = require("lease.pool")
local path, producer = arg[1], arg[2]
local jobs, gap, workers = tonumber(arg[3] or 200), tonumber(arg[4] or 0.03), tonumber(arg[5] or 2)
assert(path and (producer == "thread" or producer == "process") and jobs and gap and workers,
  "usage: bench/latency.lua DB thread|process [JOBS [GAP [WORKERS]]]")

-- A queue of this run's own (a PostgreSQL database may hold earlier runs'),
-- on a new file when DB is a file path.
local QUEUE = string.format("latency-%d-%d", lease.pid(), os.time())
if not (path:match("^postgres") or path:find("=", 1, true)) then
  for _, s in ipairs({ "", "-wal", "-shm" }) do os.remove(path .. s) end
end
lease.open(path):close()

-- The producer: enqueue one job at a time, then stop the pool (SIGTERM).
local PRODUCE = [[
local lease = require("lease")
local path, jobs, gap, pid, queue = ...
local db = lease.open(path)
lease.sleep(0.5)   -- the pool's workers are waiting by then
for i = 1, jobs do
  db:enqueue(queue .. "-" .. i, { queue = queue, payload = string.format("%.6f", lease.now()) })
  lease.sleep(gap)
end
lease.sleep(0.2)
db:close()
os.execute("kill -TERM " .. pid)
]]

local t
if producer == "thread" then
  t = lease.thread.spawn(load(PRODUCE), path, jobs, gap, lease.pid(), QUEUE)
else
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write((PRODUCE:gsub("local path, jobs, gap, pid, queue = %.%.%.",
    "local path, jobs, gap, pid, queue = arg[1], tonumber(arg[2]), tonumber(arg[3]), arg[4], arg[5]")))
  f:close()
  local host = os.getenv("LEASE_HOST") or "build/lease"
  os.execute(string.format("(%s %s '%s' %d %s %d %s; rm -f %s) &", host, script, path, jobs, gap,
    lease.pid(), QUEUE, script))
end

local s = pool.run({ db = path, workers = workers, queue = QUEUE, forever = true, ttl = 30,
                     handler = function() return string.format("%.6f", require("lease").now()) end })
if t then assert(t:join()) end

local db = lease.open(path)
local lat = {}
for _, j in ipairs(db:jobs({ queue = QUEUE, status = "completed", limit = 100000 })) do
  lat[#lat + 1] = (tonumber(j.result) - tonumber(j.payload)) * 1000
end
db:close()
table.sort(lat)
local function pct(p) return lat[math.max(1, math.ceil(#lat * p))] end
print(string.format("RESULT jobs=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f done=%d", #lat, pct(0.5),
  pct(0.99), lat[#lat], s.done))
