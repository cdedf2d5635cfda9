-- bench/txn_per_job.lua: what one write transaction per job buys over two,
-- in one run.
--
-- Usage (the project's host, which has lease and lease.thread built in):
--   build/lease bench/txn_per_job.lua [JOBS] [REPS] [DIR]
-- JOBS  no-op jobs per measurement (default 10000)
-- REPS  repetitions (default 3)
-- DIR   where the database files go (default /tmp)
--
-- The baseline is the peer workload's loop (bench/peers): claim_next, then
-- complete, two write transactions per job.  The candidate stores each
-- result with complete_claim_next, which claims the next job in the same
-- transaction: one per job.  Both run with 1 and with 4 workers
-- (lease.thread, a handle each), at synchronous FULL and NORMAL,
-- interleaved within each repetition.  Prints jobs/s medians and the
-- candidate's ratio to the baseline of the same cell; asserts no time.
local lease = require("lease")
local thread = require("lease.thread")
local JOBS = tonumber(arg[1]) or 10000
local REPS = tonumber(arg[2]) or 3
local DIR = arg[3] or "/tmp"

-- One worker: its own handle; per = 1 (claim_next, complete: two
-- transactions per job) or 2 (complete_claim_next: one).  Returns the jobs
-- it completed.
local function worker(path, sync, owner, per, start)
  local L = require("lease")
  local d = L.open(path, { synchronous = sync })
  start:wait()
  local done = 0
  local id, fence = d:claim_next(owner, L.now(), 60)
  while id do
    if per == 1 then
      assert(d:complete(id, owner, fence, L.now()))
      id, fence = d:claim_next(owner, L.now(), 60)
    else
      local ok, why
      ok, why, id, fence = d:complete_claim_next(id, owner, fence, L.now(), nil, 60)
      assert(ok, why)
    end
    done = done + 1
  end
  d:close()
  return done
end

-- One measurement: a fresh file of JOBS jobs, then `workers` workers until
-- it is drained.  Returns jobs/s.
local function measure(sync, workers, per)
  local path = DIR .. "/lease-txn-per-job.db"
  for _, s in ipairs({ "", "-wal", "-shm" }) do os.remove(path .. s) end
  local db = lease.open(path, { synchronous = sync })
  for base = 0, JOBS - 1, 1000 do
    local ids = {}
    for i = base, math.min(JOBS, base + 1000) - 1 do ids[#ids + 1] = "job-" .. i end
    db:enqueue_many(ids)
  end
  local start = thread.barrier(workers + 1)
  local ts = {}
  for i = 1, workers do ts[i] = thread.spawn(worker, path, sync, "w" .. i, per, start) end
  start:wait()
  local t0, done = lease.now(), 0
  for i = 1, workers do
    local ok, n = ts[i]:join()
    if not ok then error("worker " .. i .. ": " .. tostring(n)) end
    done = done + n
  end
  local dt = lease.now() - t0
  db:close()
  for _, s in ipairs({ "", "-wal", "-shm" }) do os.remove(path .. s) end
  assert(done == JOBS, done .. " of " .. JOBS .. " jobs done")
  return JOBS / dt
end

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

local cells = {}
for _, sync in ipairs({ "full", "normal" }) do
  for _, workers in ipairs({ 1, 4 }) do
    cells[#cells + 1] = { sync = sync, workers = workers, [1] = {}, [2] = {} }
  end
end
for rep = 1, REPS do
  for _, c in ipairs(cells) do
    local order = rep % 2 == 1 and { 1, 2 } or { 2, 1 }
    for _, per in ipairs(order) do table.insert(c[per], measure(c.sync, c.workers, per)) end
  end
end
print(string.format("%d jobs, %d repetitions, medians", JOBS, REPS))
print("| synchronous | workers | claim_next + complete, jobs/s | complete_claim_next, jobs/s | ratio |")
print("|---|---:|---:|---:|---:|")
for _, c in ipairs(cells) do
  local a, b = median(c[1]), median(c[2])
  print(string.format("| %s | %d | %.0f | %.0f | %.2fx |", c.sync, c.workers, a, b, b / a))
end
