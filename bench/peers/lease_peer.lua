-- bench/peers/lease_peer.lua: one measurement of lease for bench/peers/run.
--
-- Usage (run by build/lease, the project's Lua host with lease, lease.thread
-- and lease.pool built in):
--   build/lease bench/peers/lease_peer.lua MODE WORKLOAD JOBS DB SYNC
-- MODE      "loop" (a hand-written handle loop) or "pool" (lease.pool.run)
-- WORKLOAD  w1 (one worker), w2 (four workers), w3 (batches of 100)
-- JOBS      how many no-op jobs
-- DB        the database: a file path, or a postgresql:// URI
-- SYNC      "full" or "normal" (lease.open's synchronous option)
--
-- Enqueues JOBS jobs with enqueue_many in chunks of 1000 (timed), then runs
-- them all (claim, empty handler, complete; lease's W1 and W2 store each
-- result with complete_claim_next, which claims the next job in the same
-- transaction; timed from the start of the
-- workers to the last completion) and prints one line:
--   RESULT enqueue_s=<seconds> process_s=<seconds> done=<jobs completed>
-- or, when this build cannot run the workload:
--   SKIP <reason>
local lease = require("lease")
local mode, workload, jobs, db_path, sync = arg[1], arg[2], tonumber(arg[3]), arg[4], arg[5]
assert(mode == "loop" or mode == "pool", "MODE must be loop or pool")
assert(workload == "w1" or workload == "w2" or workload == "w3", "WORKLOAD must be w1, w2 or w3")
assert(jobs and jobs >= 1 and db_path and (sync == "full" or sync == "normal"),
  "usage: lease_peer.lua MODE WORKLOAD JOBS DB SYNC")

local TTL, CHUNK, BATCH, WORKERS = 60, 1000, 100, 4
local now = lease.now

-- Opening a postgresql:// URI needs a build with the PostgreSQL backend;
-- any other build refuses it with cantopen.
local ok, db = pcall(lease.open, db_path, { synchronous = sync })
if not ok then
  -- the reason without the file name, so every skipped cell says the same
  print("SKIP lease.open refused a " .. db_path:match("^[^:/]*") .. " address: "
    .. (tostring(db):gsub(' %(file ".*"%)$', "")))
  os.exit(0)
end

-- Enqueue: ids made before the clock starts.
local t0 = now()
for base = 0, jobs - 1, CHUNK do
  local ids = {}
  for i = base, math.min(jobs, base + CHUNK) - 1 do ids[#ids + 1] = "job-" .. i end
  db:enqueue_many(ids)
end
local enqueue_s = now() - t0

-- One worker of the hand-written loop: its own handle, claim_next, an empty
-- handler, then complete_claim_next (the result stored and the next job
-- claimed in one transaction); batch > 1 claims and completes batch jobs
-- per call.
-- It moves to a lease.thread, so everything comes in as arguments.
-- Returns how many jobs it completed.
local function loop_worker(path, synchronous, owner, batch, ttl, start)
  local L = require("lease")
  local d <close> = L.open(path, { synchronous = synchronous })
  if start then start:wait() end
  local done = 0
  if batch > 1 then
    while true do
      local t = L.now()
      local got = d:claim_next(owner, t, ttl, batch)
      if #got == 0 then break end
      for _, j in ipairs(got) do j.result = nil end
      assert(d:complete_many(owner, L.now(), got))
      done = done + #got
    end
  else
    local id, fence = d:claim_next(owner, L.now(), ttl)
    while id do
      local stored, why
      stored, why, id, fence = d:complete_claim_next(id, owner, fence, L.now(), nil, ttl)
      assert(stored, why)
      done = done + 1
    end
  end
  return done
end

local done, process_s
if mode == "loop" then
  local batch = workload == "w3" and BATCH or 1
  if workload == "w2" then
    local thread = require("lease.thread")
    local start = thread.barrier(WORKERS + 1)
    local ts = {}
    for i = 1, WORKERS do
      ts[i] = thread.spawn(loop_worker, db_path, sync, "worker-" .. i, 1, TTL, start)
    end
    start:wait()
    t0 = now()
    done = 0
    for i = 1, WORKERS do
      local okj, n = ts[i]:join()
      if not okj then error("worker " .. i .. ": " .. tostring(n)) end
      done = done + n
    end
    process_s = now() - t0
  else
    t0 = now()
    done = loop_worker(db_path, sync, "worker-1", batch, TTL, nil)
    process_s = now() - t0
  end
else
  local pool = require("lease.pool")
  local o = {
    db = db_path, workers = workload == "w2" and WORKERS or 1, ttl = TTL,
    open = { synchronous = sync }, handler = function() return nil end,
  }
  if workload == "w3" then o.batch = BATCH end
  t0 = now()
  local okp, summary = pcall(pool.run, o)
  process_s = now() - t0
  if not okp then
    if workload == "w3" and tostring(summary):find("unknown option 'batch'", 1, true) then
      db:close()
      print("SKIP lease.pool has no batch option in this build")
      os.exit(0)
    end
    error(summary, 0)
  end
  if #summary.failed > 0 then error("pool worker failed: " .. tostring(summary.failed[1])) end
  done = summary.done
end

local c = db:counts(now())
db:close()
if c.done ~= jobs then error(string.format("%d of %d jobs done", c.done, jobs)) end
print(string.format("RESULT enqueue_s=%.6f process_s=%.6f done=%d", enqueue_s, process_s, done))
