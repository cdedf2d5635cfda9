-- specs/faults/with_lease_chaos.lua: worker processes writing their output
-- rows inside with_lease, killed with SIGKILL at random moments.
--
--   build/lease specs/faults/with_lease_chaos.lua [--procs 3] [--rounds 60]
--     [--rows 8] [--ttl 0.3] [--seed S] [--timeout 100] [--dir DIR]
--
-- Starts PROCS worker processes (with_lease_worker.lua) on one database;
-- each claims jobs and, inside with_lease, writes ROWS rows per job into
-- the table out, then completes the job in the same transaction.  Then
-- ROUNDS rounds: sleep a random moment, SIGKILL a random worker (every
-- 10th round: all of them) and start it again under a new name, check,
-- top the jobs up.  At the end the workers stop cleanly and everything is
-- checked once more.  The invariants, read by another client (sqlite3):
--   1. PRAGMA integrity_check is "ok";
--   2. no partial set: every (job, fence) in out has exactly ROWS rows,
--      k = 1..ROWS, all by one owner;
--   3. one writer per job: out holds rows of at most one fence per job;
--   4. rows and completion commit together: a job has rows exactly when
--      it is done, and then its stored fence and result ("owner/fence")
--      are those of its rows.
-- Prints the seed first, then the counts; exits 1 on any violation.
local lease = require("lease")

local opt = { procs = 3, rounds = 60, rows = 8, ttl = 0.3, timeout = 100 }
do
  local i = 1
  while arg[i] do
    local k = arg[i]:match("^%-%-([%w_]+)$")
    if not k or arg[i + 1] == nil then
      io.stderr:write("with_lease_chaos: bad argument ", arg[i], " (see the header of this file)\n")
      os.exit(2)
    end
    opt[k] = k == "dir" and arg[i + 1] or tonumber(arg[i + 1])
    i = i + 2
  end
end
opt.seed = opt.seed or math.floor(lease.now() * 1000) % 1000000007
math.randomseed(opt.seed)

local function sh(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
local worker_file = here .. "/with_lease_worker.lua"
local host = arg[-1]
local sqlite3 = os.getenv("LEASE_SQLITE3")
if not sqlite3 or sqlite3 == "" then sqlite3 = "sqlite3" end

local dir = opt.dir or ((os.getenv("LEASE_TEST_TMP") or "/tmp") .. "/with-lease-chaos-" .. opt.seed)
assert(os.execute("rm -rf " .. sh(dir) .. " && mkdir -p " .. sh(dir)))
local dbpath, stopfile = dir .. "/jobs.db", dir .. "/stop"
local deadline = lease.now() + opt.timeout
print(("with_lease_chaos: seed %d, %d processes, %d rounds, %d rows per job, ttl %.2f s, dir %s")
  :format(opt.seed, opt.procs, opt.rounds, opt.rows, opt.ttl, dir))
io.stdout:flush()

local violations = 0
local function violation(fmt, ...)
  violations = violations + 1
  if violations <= 30 then print("VIOLATION: " .. fmt:format(...)) io.stdout:flush() end
end

-- Run sql through the sqlite3 tool; its output lines.
local function query(sql)
  local p = assert(io.popen(sh(sqlite3) .. " -batch -cmd '.timeout 10000' -separator '|' "
    .. sh(dbpath) .. " 2>&1 <<'EOF_SQL'\n" .. sql .. ";\nEOF_SQL\n"))
  local lines = {}
  for line in p:lines() do lines[#lines + 1] = line end
  p:close()
  return lines
end

-- The database: jobs, and the workers' output table.
do
  local db <close> = lease.open(dbpath)
  db:init_db()
end
query("CREATE TABLE out(job TEXT NOT NULL, fence INTEGER NOT NULL, owner TEXT NOT NULL,"
  .. " k INTEGER NOT NULL)")
local next_job = 0
local function add_jobs(n)
  local ids = {}
  for i = 1, n do ids[i] = ("job-%05d"):format(next_job + i) end
  next_job = next_job + n
  local db <close> = lease.open(dbpath)
  db:enqueue_many(ids)
end
add_jobs(24)

-- Workers.
local slots, incarnation = {}, 0
local stats = { kills = 0, starts = 0 }
local function stderr_of(name)
  local f = io.open(dir .. "/" .. name .. ".err", "rb")
  if not f then return "" end
  local s = f:read("a")
  f:close()
  return s
end
local function start(i)
  incarnation = incarnation + 1
  local name = ("p%di%d"):format(i, incarnation)
  local cmd = ("exec %s %s %s %s %d %d %.3f %s %.3f 2>%s"):format(sh(host), sh(worker_file),
    sh(dbpath), name, math.random(1, 1000000), opt.rows, opt.ttl, sh(stopfile), deadline,
    sh(dir .. "/" .. name .. ".err"))
  local pipe = assert(io.popen(cmd, "r"))
  local line = pipe:read("l")
  local pid = line and tonumber(line:match("^ready (%d+)$"))
  if not pid then
    violation("worker %s did not start: %s", name, tostring(line))
    pipe:close()
    return
  end
  slots[i] = { pipe = pipe, pid = pid, name = name }
  stats.starts = stats.starts + 1
end
local function reap(i, signalled)
  local s = slots[i]
  local ok, how, code = s.pipe:close()
  if signalled and (ok or how ~= "signal" or code ~= 9) then
    violation("worker %s ended on its own before the kill (%s %s): %s", s.name, tostring(how),
      tostring(code), stderr_of(s.name))
  elseif not signalled and not ok then
    violation("worker %s failed (%s %s): %s", s.name, tostring(how), tostring(code), stderr_of(s.name))
  elseif stderr_of(s.name) ~= "" then
    violation("worker %s wrote to stderr: %s", s.name, stderr_of(s.name))
  end
  slots[i] = nil
end

-- The invariants (see the header).
local function check(round)
  local ic = query("PRAGMA integrity_check")
  if ic[1] ~= "ok" then violation("round %s: integrity_check: %s", round, table.concat(ic, " ")) end
  for _, l in ipairs(query("SELECT job, fence, count(*), count(DISTINCT owner), min(k), max(k),"
      .. " count(DISTINCT k) FROM out GROUP BY job, fence"
      .. " HAVING count(*) <> " .. opt.rows .. " OR count(DISTINCT owner) <> 1 OR min(k) <> 1"
      .. " OR max(k) <> " .. opt.rows .. " OR count(DISTINCT k) <> " .. opt.rows)) do
    violation("round %s: a partial set of rows (job|fence|rows|owners|min k|max k|keys): %s", round, l)
  end
  for _, l in ipairs(query("SELECT job, group_concat(DISTINCT fence) FROM out GROUP BY job"
      .. " HAVING count(DISTINCT fence) > 1")) do
    violation("round %s: rows of more than one fence for a job: %s", round, l)
  end
  for _, l in ipairs(query("SELECT j.id, j.done, j.fence, j.result, o.fence, o.owner FROM jobs j"
      .. " LEFT JOIN (SELECT DISTINCT job, fence, owner FROM out) o ON o.job = j.id"
      .. " WHERE (o.job IS NULL AND j.done <> 0) OR (o.job IS NOT NULL AND (j.done = 0"
      .. " OR j.fence <> o.fence OR j.result IS NOT o.owner || '/' || o.fence))")) do
    violation("round %s: rows and completion disagree (id|done|fence|result|rows' fence|owner): %s",
      round, l)
  end
end

for i = 1, opt.procs do start(i) end
local t0 = lease.now()
for round = 1, opt.rounds do
  if lease.now() > deadline then violation("timeout after round %d", round - 1) break end
  lease.sleep(0.05 + math.random() * 0.25)
  if round % 10 == 0 then
    for i = 1, opt.procs do if slots[i] then os.execute("kill -9 " .. slots[i].pid .. " 2>/dev/null") end end
    for i = 1, opt.procs do if slots[i] then reap(i, true); stats.kills = stats.kills + 1 end end
  else
    local i = math.random(opt.procs)
    if slots[i] then
      os.execute("kill -9 " .. slots[i].pid .. " 2>/dev/null")
      reap(i, true)
      stats.kills = stats.kills + 1
    end
  end
  for i = 1, opt.procs do if not slots[i] then start(i) end end
  check(round)
  local ready = query("SELECT count(*) FROM jobs WHERE done = 0")
  if tonumber(ready[1]) and tonumber(ready[1]) < 12 then add_jobs(12) end
end
-- Stop cleanly, then the last check.
assert(io.open(stopfile, "w")):close()
for i = 1, opt.procs do if slots[i] then reap(i, false) end end
check("final")
local done = query("SELECT count(*) FROM jobs WHERE done <> 0")[1]
local rowsn = query("SELECT count(*) FROM out")[1]
print(("with_lease_chaos: %d kills, %d starts, %s jobs done, %s rows, %.1f s"):format(stats.kills,
  stats.starts, done, rowsn, lease.now() - t0))
if tonumber(done) == 0 then violation("no job was done: the rounds tested nothing") end
if violations > 0 then
  print(("with_lease_chaos: %d violations (seed %d)"):format(violations, opt.seed))
  os.exit(1)
end
print("with_lease_chaos: ok")
