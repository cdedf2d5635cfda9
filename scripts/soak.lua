-- scripts/soak.lua: the soak's driver (run it through scripts/soak).
--
--   build/lease scripts/soak.lua --host build/lease [--full] [--claims N]
--       [--procs P] [--threads T] [--jobs J] [--ttl S] [--sync full|normal]
--       [--db PATH] [--keep]
--
-- Enqueues J jobs in a fresh database, starts P worker processes
-- (scripts/soak_worker.lua) of T threads each, all starting at the same
-- wall-clock second, which claim random jobs with a short lease (TTL
-- seconds, so most claims find the lease expired and the job is claimed
-- again and again) until N claims were granted in all.  --sync sets the
-- workers' synchronous option (default "full", the engine's default; with
-- "normal" a claim costs no fsync, and the run measures the locking alone).  Then it checks, from
-- the workers' logs and the database:
--   - no (id, fence) pair was handed out twice;
--   - each job's fences are exactly 1 .. its stored fence, no gap (every
--     fence handed out was logged by the one who got it);
--   - the fences each thread got for a job strictly increase;
--   - the log holds N claims, the workers' own counts agree;
--   - PRAGMA-level: the stored fence of each job is its highest logged one.
-- Prints the counts and the rate (granted claims per second of wall time,
-- from the common start to the last worker's end).  Exits 0 when every
-- check held, 1 otherwise, 2 on bad usage.
local lease = require("lease")

local opts = { claims = 20000, procs = 4, threads = 8, jobs = 16, ttl = 0.001 }
local sync = "full"
local host, dbpath, keep
local i = 1
--- Print msg on stderr and end the run.
-- @tparam string msg what went wrong
-- @tparam[opt=2] integer code the exit status (2: bad usage, 1: a check failed)
local function die(msg, code)
  io.stderr:write("soak: ", msg, "\n")
  os.exit(code or 2)
end
while arg[i] do
  local a, v = arg[i], arg[i + 1]
  if a == "--full" then opts.claims = 1000000; i = i + 1
  elseif a == "--keep" then keep = true; i = i + 1
  elseif a == "--host" then host = v; i = i + 2
  elseif a == "--db" then dbpath = v; i = i + 2
  elseif a == "--sync" then
    if v ~= "full" and v ~= "normal" then die("--sync must be full or normal") end
    sync = v
    i = i + 2
  elseif opts[a:match("^%-%-(%a+)$") or ""] then
    local n = tonumber(v)
    if not n or n <= 0 then die("bad value for " .. a .. ": " .. tostring(v)) end
    opts[a:sub(3)] = n
    i = i + 2
  else die("unknown argument " .. a .. " (see the header of scripts/soak)") end
end
for _, k in ipairs({ "claims", "procs", "threads", "jobs" }) do
  if math.type(opts[k]) ~= "integer" then
    opts[k] = math.tointeger(opts[k]) or die("--" .. k .. " must be an integer")
  end
end
if not host then die("--host PATH (the lease program) is required") end

--- Quote s for the shell.
-- @tparam string s any bytes
-- @treturn string s in single quotes
local function sh(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end
local here = (debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")) or "."
if not dbpath then
  dbpath = os.tmpname()
  os.remove(dbpath)
  dbpath = dbpath .. ".soak.db"
end
local prefix = dbpath .. ".log"
--- Remove the database, the files SQLite keeps beside it and the workers' logs.
local function remove_all()
  for _, sfx in ipairs({ "", "-wal", "-shm", "-journal" }) do os.remove(dbpath .. sfx) end
  for p = 1, opts.procs do
    for k = 1, opts.threads do os.remove(("%s.p%d.t%d.log"):format(prefix, p, k)) end
  end
end
remove_all()

do
  local db <close> = lease.open(dbpath)
  local ids = {}
  for j = 1, opts.jobs do ids[j] = "job" .. j end
  db:enqueue_many(ids)
end

local load = io.open("/proc/loadavg")
local loadavg = load and load:read("l"):match("^(%S+ %S+ %S+)") or "?"
if load then load:close() end
print(("soak: %d claims by %d processes x %d threads on %d jobs, ttl %g s, synchronous %s, db %s, load %s")
  :format(opts.claims, opts.procs, opts.threads, opts.jobs, opts.ttl, sync, dbpath, loadavg))
io.stdout:flush()

-- Start the workers; they begin together at t0.
local t0 = lease.now() + 1.0 + 0.1 * opts.procs
local pipes = {}
for p = 1, opts.procs do
  local quota = opts.claims // opts.procs + (p <= opts.claims % opts.procs and 1 or 0)
  local cmd = table.concat({ sh(host), sh(here .. "/soak_worker.lua"), sh(dbpath), sh(prefix),
    p, opts.threads, quota, opts.jobs, ("%.17g"):format(opts.ttl), ("%.17g"):format(t0),
    p * 7919 + os.time() % 1000, sync }, " ")
  pipes[p] = assert(io.popen(cmd .. " 2>&1", "r"))
end
local failed, sums = false, { 0, 0, 0, 0 }
for p = 1, opts.procs do
  local out = pipes[p]:read("a")
  local ok = pipes[p]:close()
  local a, g, h, b = out:match("soak%-worker %d+ (%d+) (%d+) (%d+) (%d+)")
  if not ok or not a then
    io.stderr:write("soak: worker ", p, " failed:\n", out)
    failed = true
  else
    sums[1], sums[2] = sums[1] + tonumber(a), sums[2] + tonumber(g)
    sums[3], sums[4] = sums[3] + tonumber(h), sums[4] + tonumber(b)
  end
end
local elapsed = lease.now() - t0
if failed then os.exit(1) end
load = io.open("/proc/loadavg")
local loadend = load and load:read("l"):match("^(%S+ %S+ %S+)") or "?"
if load then load:close() end

-- Read every log: seen[job][fence] = true.
local seen, count, dups, order = {}, 0, 0, 0
for j = 1, opts.jobs do seen["job" .. j] = {} end
for p = 1, opts.procs do
  for k = 1, opts.threads do
    local name = ("%s.p%d.t%d.log"):format(prefix, p, k)
    local f = assert(io.open(name))
    local last = {}
    for line in f:lines() do
      local id, fence, owner = line:match("^(%S+) (%d+) (%S+)$")
      fence = math.tointeger(tonumber(fence))
      if not id or not seen[id] or not fence or owner ~= ("p%dt%d"):format(p, k) then
        die("bad log line in " .. name .. ": " .. line, 1)
      end
      if seen[id][fence] then dups = dups + 1 end
      seen[id][fence] = true
      if last[id] and fence <= last[id] then order = order + 1 end
      last[id] = fence
      count = count + 1
    end
    f:close()
  end
end

-- The database: each job's stored fence is its highest, no gap below it.
local gaps, mismatched = 0, 0
do
  local db <close> = lease.open(dbpath)
  for j = 1, opts.jobs do
    local id = "job" .. j
    local st = db:state(id)
    for f = 1, st.fence do if not seen[id][f] then gaps = gaps + 1 end end
    for f in pairs(seen[id]) do if f > st.fence then mismatched = mismatched + 1 end end
  end
end

local ok = dups == 0 and order == 0 and gaps == 0 and mismatched == 0 and sums[4] == 0
  and count == opts.claims and sums[2] == opts.claims
print(("soak: %d claims granted (%d attempts, %d refused as held, %d busy) in %.1f s: %.0f claims/s; load %s")
  :format(count, sums[1], sums[3], sums[4], elapsed, count / elapsed, loadend))
print(("soak: fences handed out twice %d, gaps %d, out of order within a thread %d,"
  .. " above the stored fence %d: %s"):format(dups, gaps, order, mismatched, ok and "ok" or "FAILED"))
if not keep then remove_all() end
os.exit(ok and 0 or 1)
