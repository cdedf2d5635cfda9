-- bench/events.lua: what the events ledger costs, in one run.
--
-- Usage:
--   lua5.4 bench/events.lua [--build DIR] [--jobs N] [--batch B] [--reps R]
--                           [--sync full|normal] [--path P]
-- --build  where lease.so is (default build)
-- --jobs   jobs per measurement (default 2000)
-- --batch  claim_next(n) / complete_many size (default 100)
-- --reps   repetitions (default 5)
-- --sync   synchronous (default full, the engine's default)
-- --path   the database: a directory for SQLite files (default /tmp), or a
--          PostgreSQL connection string (postgresql://..., host=...)
--
-- Two workloads, each with the ledger on (events = true) and off
-- (events = false, open's default), on a fresh database each, interleaved
-- within each repetition in alternating order:
--   cycle  enqueue, claim_next, complete: three write transactions per job
--   batch  enqueue_many, claim_next(n), complete_many of B jobs at a time
--          (ten times as many jobs)
-- Prints jobs/s medians and the median of the per-repetition ratios
-- on/off (above 1: faster with the ledger), and the same for CPU time per
-- job (os.clock); asserts no time.
local args = {}
do
  local i = 1
  while arg[i] do
    args[arg[i]:gsub("^%-%-", "")] = arg[i + 1]
    i = i + 2
  end
end
local BUILD = args.build or "build"
package.cpath = BUILD .. "/?.so;" .. package.cpath
local lease = require("lease")
local JOBS = tonumber(args.jobs) or 2000
local BATCH = tonumber(args.batch) or 100
local REPS = tonumber(args.reps) or 5
local SYNC = args.sync or "full"
local PATH = args.path or "/tmp"
local PG = PATH:match("^postgres") or PATH:match("=")

local counter = 0
-- A fresh database: a new file; on PostgreSQL the same database (the ids
-- differ per measurement).
local function fresh(events)
  counter = counter + 1
  local opts = { synchronous = SYNC, events = events }
  if PG then return lease.open(PATH, opts) end
  local p = string.format("%s/lease-events-bench-%d-%d.db", PATH, counter, os.time())
  os.remove(p); os.remove(p .. "-wal"); os.remove(p .. "-shm")
  return lease.open(p, opts), p
end

local function cleanup(db, p)
  db:close()
  if p then os.remove(p); os.remove(p .. "-wal"); os.remove(p .. "-shm") end
end

-- Each workload returns jobs/s by the wall clock and the process's CPU
-- seconds per job (os.clock: less shaken by other load on the machine).
local function cycle(db, tag)
  local t0, c0 = lease.now(), os.clock()
  for i = 1, JOBS do
    local id = tag .. i
    assert(db:enqueue(id))
    local got, fence = db:claim_next("w", lease.now(), 60)
    assert(got == id)
    assert(db:complete(got, "w", fence, lease.now(), nil))
  end
  return JOBS / (lease.now() - t0), (os.clock() - c0) / JOBS
end

local function batch(db, tag)
  local t0, c0 = lease.now(), os.clock()
  local done = 0
  while done < JOBS * 10 do
    local ids = {}
    for i = 1, BATCH do ids[i] = tag .. (done + i) end
    db:enqueue_many(ids)
    local list = db:claim_next("w", lease.now(), 60, BATCH)
    assert(#list == BATCH)
    assert(db:complete_many("w", lease.now(), list))
    done = done + BATCH
  end
  return done / (lease.now() - t0), (os.clock() - c0) / done
end

local function median(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = v end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) / 2] or (s[n / 2] + s[n / 2 + 1]) / 2
end

local function new() return { on = {}, off = {}, ratio = {}, con = {}, coff = {}, cratio = {} } end
local results = { cycle = new(), batch = new() }
for rep = 1, REPS do
  for _, w in ipairs({ { "cycle", cycle }, { "batch", batch } }) do
    local name, fn = w[1], w[2]
    local got, cpu = {}, {}
    local order = rep % 2 == 1 and { "on", "off" } or { "off", "on" }
    for _, mode in ipairs(order) do
      local db, p = fresh(mode == "on")
      got[mode], cpu[mode] = fn(db, name .. rep .. mode)
      cleanup(db, p)
    end
    local r = results[name]
    r.on[#r.on + 1], r.off[#r.off + 1] = got.on, got.off
    r.ratio[#r.ratio + 1] = got.on / got.off
    r.con[#r.con + 1], r.coff[#r.coff + 1] = cpu.on * 1e6, cpu.off * 1e6
    r.cratio[#r.cratio + 1] = cpu.off / cpu.on
  end
end

print(string.format("events ledger cost: %s, synchronous=%s, %d jobs (cycle), %d (batch, %d at a time), %d reps (medians)",
  PG and "PostgreSQL" or "SQLite", SYNC, JOBS, JOBS * 10, BATCH, REPS))
print("| workload | events off, jobs/s | events on, jobs/s | on / off | CPU µs/job off | CPU µs/job on | CPU off / on |")
print("|---|---:|---:|---:|---:|---:|---:|")
for _, name in ipairs({ "cycle", "batch" }) do
  local r = results[name]
  print(string.format("| %s | %.0f | %.0f | %.3f | %.1f | %.1f | %.3f |", name, median(r.off),
    median(r.on), median(r.ratio), median(r.coff), median(r.con), median(r.cratio)))
end
