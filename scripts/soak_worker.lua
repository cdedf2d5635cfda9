-- scripts/soak_worker.lua: one process of the soak (scripts/soak), run by
-- the host program:
--
--   build/lease scripts/soak_worker.lua DB LOGPREFIX PROC THREADS QUOTA JOBS TTL START SEED SYNC
--
-- Runs THREADS native threads (lease.thread), each with its own handle on
-- DB, opened with synchronous = SYNC ("full" or "normal").  Each waits until the wall clock reaches START, then claims random
-- jobs job1..jobJOBS as owner "p<PROC>t<k>" with now = lease.now() and the
-- given TTL (seconds) until it was granted its share of QUOTA claims.
-- Every granted claim is one line "id fence owner" in the thread's own log
-- LOGPREFIX.p<PROC>.t<k>.log.  A claim that raised busy (the write lock
-- stayed taken past the 10 s busy timeout) is counted and retried; any other
-- error ends the process with the message on stderr.  Prints one line:
--   soak-worker PROC attempts GRANTED HELD BUSY
local lease = require("lease")
local thread = require("lease.thread")

local db, prefix, proc, nthreads, quota, njobs, ttl, start, seed, sync = table.unpack(arg, 1, 10)
proc, nthreads, quota, njobs = tonumber(proc), tonumber(nthreads), tonumber(quota), tonumber(njobs)
ttl, start, seed = tonumber(ttl), tonumber(start), tonumber(seed)
assert(proc and nthreads and quota and njobs and ttl and start and seed and sync,
  "usage: soak_worker.lua DB LOGPREFIX PROC THREADS QUOTA JOBS TTL START SEED SYNC")

--- One thread's loop (runs in its own Lua state: no upvalues but _ENV).
-- @tparam string path the database file
-- @tparam string logpath this thread's log file
-- @tparam string owner this thread's owner name
-- @tparam integer want claims to be granted
-- @tparam integer jobs how many jobs there are (job1 .. jobN)
-- @tparam number ttl lease length, seconds
-- @tparam number t0 wall-clock second to start at
-- @tparam integer rseed random seed
-- @tparam string sync "full" or "normal": the handle's synchronous option
-- @treturn integer attempts, granted, held (refused: the lease was valid), busy
-- @raise any database error other than busy
local function loop(path, logpath, owner, want, jobs, ttl, t0, rseed, sync)
  local lease = require("lease")
  local d <close> = lease.open(path, { synchronous = sync })
  local log = assert(io.open(logpath, "w"))
  log:setvbuf("full")
  math.randomseed(rseed)
  while lease.now() < t0 do lease.sleep(0.001) end
  local attempts, granted, held, busy = 0, 0, 0, 0
  while granted < want do
    local id = "job" .. math.random(jobs)
    attempts = attempts + 1
    local ok, fence, why = pcall(d.claim, d, id, owner, lease.now(), ttl)
    if not ok then
      if not tostring(fence):find("busy", 1, true) then error(fence, 0) end
      busy = busy + 1
    elseif fence then
      granted = granted + 1
      log:write(id, " ", fence, " ", owner, "\n")
    elseif why == "held" then
      held = held + 1
    else
      error("claim " .. id .. " refused: " .. tostring(why), 0)
    end
  end
  assert(log:close())
  return attempts, granted, held, busy
end

local threads = {}
for k = 1, nthreads do
  local want = quota // nthreads + (k <= quota % nthreads and 1 or 0)
  threads[k] = thread.spawn(loop, db, ("%s.p%d.t%d.log"):format(prefix, proc, k),
    ("p%dt%d"):format(proc, k), want, njobs, ttl, start, seed * 100 + k, sync)
end
local total = { 0, 0, 0, 0 }
for k = 1, nthreads do
  local r = table.pack(threads[k]:join())
  if not r[1] then
    io.stderr:write("soak-worker ", proc, " thread ", k, ": ", tostring(r[2]), "\n")
    os.exit(1)
  end
  for i = 1, 4 do total[i] = total[i] + r[i + 1] end
end
print(("soak-worker %d %d %d %d %d"):format(proc, total[1], total[2], total[3], total[4]))
