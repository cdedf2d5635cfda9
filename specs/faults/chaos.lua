-- specs/faults/chaos.lua: worker processes killed at random moments, and
-- processes with threads, on one database.
--
--   build/lease specs/faults/chaos.lua [--procs 4] [--threads 1] [--kills 100]
--     [--rounds N] [--ttl 0.25] [--seed S] [--timeout 240] [--dir DIR]
--     [--pg CONNINFO [--restart-dir CLUSTERDIR --restarts N]]
--
-- With --pg the database is a new schema on that PostgreSQL server instead
-- of an SQLite file (no integrity_check: the server keeps its own), and with
-- --restarts the server is killed with SIGKILL and restarted N times during
-- the run (scripts/pg-cluster restart-hard CLUSTERDIR).  Workers then see
-- ioerr, cantopen or busy while it is down: they log E lines ("outcome
-- unknown", like a kill between commit and log) and carry on.
--
-- Starts PROCS worker processes (the host running chaos_worker.lua, each
-- with THREADS loops) on one database with real leases (lease.now(), ttl
-- TTL seconds).  Then ROUNDS rounds (default KILLS): sleep a random moment,
-- SIGKILL a random worker (KILLS of the rounds, spread evenly) and start it
-- again under a new owner name, check everything, top the jobs up.  At the
-- end the workers are stopped cleanly and everything is checked once more.
--
-- Each loop logs what the engine told it, flushed before it goes on
-- (chaos_worker.lua).  A kill can land between a commit and its log line,
-- so a fence may be stored without being logged; the invariants allow
-- exactly that and nothing more:
--   1. PRAGMA integrity_check is "ok" after every round;
--   2. per job, no fence is logged twice (by any process or thread);
--   3. per job, fences grow in commit order: when claim A returned before
--      claim B was called (monotonic clock), A's fence < B's;
--   4. the stored fence is >= every logged fence of the job;
--   5. a renew, complete or release reported true used a fence logged as
--      granted to that same owner;
--   6. at most one complete per job is reported true; its result and fence
--      are what the database holds, and the job is done;
--   7. a done job never changes (owner, fence, result) afterwards;
--   8. a done job's result is "<owner>/<fence>" of its stored owner and
--      fence: written by the holder of the last fence, never an older one;
--   9. a late complete after stalling past the lease is refused, and so
--      is every write with a wrong token (an older fence, another owner's
--      name) and every claim of a job the loop completed;
--  10. a renew or complete reported true came before the lease ran out
--      (its now < the claim's now + ttl, or the last renew's);
--  11. (at the end) one holder at a time: a job is granted again only when
--      the last lease ran out or was released, never after its complete;
--      a lease whose holder was killed before logging how it ended may
--      have been released unlogged, so those takeovers are only counted;
--  12. no worker fails on its own (anything on its stderr, an exit not
--      caused by our SIGKILL, a clean stop that does not exit 0).
-- Prints the seed first (rerun with --seed to replay the same choices;
-- timing still differs), then the counts; exits 1 on any violation.
local lease = require("lease")

-- Options ---------------------------------------------------------------
local opt = { procs = 4, threads = 1, kills = 100, ttl = 0.25, timeout = 240 }
do
  local i = 1
  while arg[i] do
    local k = arg[i]:match("^%-%-([%w_%-]+)$")
    k = k and k:gsub("%-", "_")
    if not k or arg[i + 1] == nil then
      io.stderr:write("chaos: bad argument ", arg[i], " (see the header of this file)\n")
      os.exit(2)
    end
    local text = k == "dir" or k == "pg" or k == "restart_dir"
    opt[k] = text and arg[i + 1] or tonumber(arg[i + 1])
    i = i + 2
  end
end
opt.rounds = opt.rounds or opt.kills
opt.seed = opt.seed or math.floor(lease.now() * 1000) % 1000000007
assert(opt.rounds >= opt.kills, "--rounds must be >= --kills")
math.randomseed(opt.seed)

local function sh(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
local worker_file = here .. "/chaos_worker.lua"
local host = arg[-1]   -- the program running this script (build/lease)
local sqlite3 = os.getenv("LEASE_SQLITE3")
if not sqlite3 or sqlite3 == "" then sqlite3 = "sqlite3" end

local dir = opt.dir or ((os.getenv("LEASE_TEST_TMP") or "/tmp") .. "/chaos-" .. opt.seed)
assert(os.execute("rm -rf " .. sh(dir) .. " && mkdir -p " .. sh(dir)))
local dbpath, stopfile = dir .. "/jobs.db", dir .. "/stop"
opt.restarts = opt.restarts or 0
if opt.pg then
  -- a schema of its own on the server, named after the seed
  local schema = "chaos_" .. opt.seed
  local p = io.popen("psql -X -q -v ON_ERROR_STOP=1 -d " .. sh(opt.pg) .. " -c "
    .. sh("DROP SCHEMA IF EXISTS " .. schema .. " CASCADE; CREATE SCHEMA " .. schema) .. " 2>&1")
  local out = p:read("a")
  assert(p:close(), "chaos: creating the schema failed: " .. out)
  dbpath = opt.pg .. " options='-csearch_path=" .. schema .. "'"
end
local t_start = lease.now()
local deadline = t_start + opt.timeout

print(("chaos: seed %d, %d processes x %d threads, %d rounds, %d kills, ttl %.2f s, dir %s")
  :format(opt.seed, opt.procs, opt.threads, opt.rounds, opt.kills, opt.ttl, dir))
io.stdout:flush()

-- Violations ------------------------------------------------------------
local violations, shown = 0, 0
local function violation(fmt, ...)
  violations = violations + 1
  if shown < 30 then
    shown = shown + 1
    print("VIOLATION: " .. fmt:format(...))
    io.stdout:flush()
  end
end

-- The driver's own handle for one use; on PostgreSQL it waits out a
-- server restart (up to 60 s) instead of failing.
local function open_db()
  local t0 = lease.now()
  while true do
    local ok, db = pcall(lease.open, dbpath)
    if ok then return db end
    if not opt.pg or lease.now() - t0 > 60 then error(db, 0) end
    lease.sleep(0.2)
  end
end

-- Jobs ------------------------------------------------------------------
-- The driver opens a handle only while it uses one, so that when every
-- worker is killed at once no connection is left and the restarted
-- workers recover the WAL the dead ones left (SQLite's crash recovery).
local next_job = 0
-- enqueue n fresh jobs
local function add_jobs(n)
  local ids = {}
  for i = 1, n do ids[i] = ("job-%05d"):format(next_job + i) end
  next_job = next_job + n
  local db <close> = open_db()
  db:enqueue_many(ids)
end
add_jobs(32)

-- Workers ---------------------------------------------------------------
local slots = {}        -- slot -> { pipe =, pid =, name =, started = }
local incarnation = 0
local stats = { kills = 0, starts = 0 }
local killed = {}       -- names of the worker processes killed by us

-- start the worker of slot i under a new name
local function start(i)
  incarnation = incarnation + 1
  local name = ("p%di%d"):format(i, incarnation)
  local cmd = ("exec %s %s %s %s %s %d %d %s %s %.3f 2>%s"):format(sh(host), sh(worker_file),
    sh(dbpath), sh(dir), name, math.random(1, 1000000), opt.threads, opt.ttl, sh(stopfile),
    deadline, sh(dir .. "/" .. name .. ".err"))
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

-- the text of a worker's stderr file ("" when empty or missing)
local function stderr_of(name)
  local f = io.open(dir .. "/" .. name .. ".err", "rb")
  if not f then return "" end
  local s = f:read("a")
  f:close()
  return s
end

-- SIGKILL the worker of slot i (again, when already signalled) and reap
-- it; it must die of our signal
local function kill(i)
  local s = slots[i]
  os.execute("kill -9 " .. s.pid .. " 2>/dev/null")
  local ok, how, code = s.pipe:close()
  stats.kills = stats.kills + 1
  if ok or how ~= "signal" or code ~= 9 then
    violation("worker %s ended on its own before the kill (%s %s): %s", s.name, tostring(how),
      tostring(code), stderr_of(s.name))
  elseif stderr_of(s.name) ~= "" then
    violation("worker %s wrote to stderr: %s", s.name, stderr_of(s.name))
  end
  killed[s.name] = true
  slots[i] = nil
end

-- Logs ------------------------------------------------------------------
local logs = {}         -- path -> { off = bytes read, rest = partial line }
local claims = {}       -- id -> fence -> { owner =, now =, t0 =, t1 = }
local max_logged = {}   -- id -> the highest fence in any log
local completed = {}    -- id -> { fence =, owner =, result = } of its complete
local released = {}     -- id -> fence -> true when a release of it was logged
local resolved = {}     -- id -> fence -> true when its holder logged how it ended
local counts = { C = 0, R = 0, D = 0, L = 0, S = 0, F = 0, W = 0, E = 0 }
local unknown = {}      -- id -> fence -> true when a call on it failed (outcome unknown)
local calls_failed = 0  -- calls that failed while the server was down
local touched = {}      -- ids with new claims since the last order check

-- mark (id, fence) in one of the tables above
local function mark(t, id, fence, v)
  t[id] = t[id] or {}
  t[id][fence] = v
end

-- check one log line against what came before
local function take(line, file)
  local w = {}
  for x in line:gmatch("%S+") do w[#w + 1] = x end
  local kind, id, fence, owner = w[1], w[2], tonumber(w[3]), w[4]
  if not (kind and counts[kind] and id and fence and owner) then
    return violation("unreadable line in %s: %q", file, line)
  end
  counts[kind] = counts[kind] + 1
  claims[id] = claims[id] or {}
  if kind == "E" then   -- a call failed (server down): its outcome is unknown
    if id == "-" then calls_failed = calls_failed + 1 else mark(unknown, id, fence, true) end
    return
  end
  if kind == "C" then
    local prev = claims[id][fence]
    if prev then
      return violation("%s: fence %d handed out twice, to %s and to %s", id, fence, prev.owner, owner)
    end
    claims[id][fence] = { owner = owner, now = tonumber(w[5]), t0 = tonumber(w[6]), t1 = tonumber(w[7]) }
    claims[id][fence].lease_end = claims[id][fence].now + opt.ttl
    if fence > (max_logged[id] or 0) then max_logged[id] = fence end
    touched[id] = true
    return
  end
  local c = claims[id][fence]
  if not c or c.owner ~= owner then
    return violation("%s: %s by %s with fence %d, which was logged as granted to %s", id, kind,
      owner, fence, c and c.owner or "nobody")
  end
  -- a renew or complete reported true happened before the lease ran out
  -- (the holder's own log has every renew it made, in order)
  local now = tonumber(kind == "R" and w[5] or kind == "D" and w[6] or nil)
  if now and now >= c.lease_end then
    violation("%s: %s by %s with fence %d at now=%.6f, after its lease ran out at %.6f", id,
      kind == "R" and "renew" or "complete", owner, fence, now, c.lease_end)
  end
  if kind == "R" then
    c.lease_end = now + opt.ttl
  elseif kind == "D" then
    mark(resolved, id, fence, true)
    if completed[id] then
      return violation("%s completed twice: %s/%d and %s/%d", id, completed[id].owner,
        completed[id].fence, owner, fence)
    end
    completed[id] = { fence = fence, owner = owner, result = w[5] }
  elseif kind == "L" then
    mark(released, id, fence, true)
    mark(resolved, id, fence, true)
  elseif kind == "F" then
    mark(resolved, id, fence, true)
  elseif kind == "S" then
    mark(resolved, id, fence, true)
    if w[5] ~= "false" then
      violation("%s: a late complete by %s with fence %d after its lease ran out returned %s", id,
        owner, fence, tostring(w[5]))
    end
  elseif kind == "W" and w[7] ~= "false" then
    violation("%s: %s with a wrong token (%s) on the lease of %s, fence %d, returned %s", id,
      tostring(w[5]), tostring(w[6]), owner, fence, tostring(w[7]))
  end
end

-- read what every log file gained since the last call
local function read_logs()
  local p = io.popen("ls " .. sh(dir))
  for name in p:lines() do
    if name:match("%.log$") then
      local path = dir .. "/" .. name
      local st = logs[path] or { off = 0, rest = "" }
      logs[path] = st
      local f = io.open(path, "rb")
      if f then
        f:seek("set", st.off)
        local data = f:read("a") or ""
        f:close()
        st.off = st.off + #data
        data = st.rest .. data
        local last = 1
        for line, stop in data:gmatch("([^\n]*)\n()") do
          take(line, name)
          last = stop
        end
        st.rest = data:sub(last)
      end
    end
  end
  p:close()
end

-- invariant 3 for the jobs with new claims: no claim that returned before
-- another was called holds a higher fence
local function check_order()
  for id in pairs(touched) do
    local list = {}
    for fence, c in pairs(claims[id]) do list[#list + 1] = { fence = fence, t0 = c.t0, t1 = c.t1, owner = c.owner } end
    table.sort(list, function(x, y) return x.fence < y.fence end)
    -- walk from the highest fence down, keeping the earliest return seen above
    local min_t1, at = math.huge, nil
    for k = #list, 1, -1 do
      local c = list[k]
      if min_t1 < c.t0 then
        violation("%s: fence %d (%s) was granted after fence %d (%s) had been returned",
          id, c.fence, c.owner, at.fence, at.owner)
        break
      end
      if c.t1 < min_t1 then min_t1, at = c.t1, c end
    end
  end
  touched = {}
end

-- invariant 11, once every log is complete: a job is granted again only
-- when the last lease ran out (the new claim's now >= the holder's now +
-- ttl, logged renewals counted) or was released; and never after its
-- complete.  A lease whose holder was killed before it logged how the lease
-- ended may have been released without a log line: such pairs are skipped
-- (and counted).
local skipped = 0
local function check_holders()
  for id, fences in pairs(claims) do
    for f, a in pairs(fences) do
      local b = fences[f + 1]
      if b then
        local lease_end = a.lease_end
        if b.now < lease_end and not (released[id] and released[id][f]) then
          if (killed[a.owner:match("^(p%d+i%d+)")] or (unknown[id] and unknown[id][f]))
              and not (resolved[id] and resolved[id][f]) then
            skipped = skipped + 1
          else
            violation("%s: fence %d granted to %s at now=%.6f while %s's lease (fence %d) ran to"
              .. " %.6f and was not released", id, f + 1, b.owner, b.now, a.owner, f, lease_end)
          end
        end
      end
      if completed[id] and f > completed[id].fence then
        violation("%s: fence %d granted to %s after the job was completed with fence %d", id, f,
          a.owner, completed[id].fence)
      end
    end
  end
end

-- The database ------------------------------------------------------------
local done_rows = {}    -- id -> "owner|fence|result" once seen done
local unlogged = { claims = 0, completes = 0 }   -- commits whose log line a kill took (final check)

-- every job as stored, through a handle of the driver's
local function read_db()
  local db <close> = open_db()
  local rows, after = {}, 0
  while true do
    local page = db:jobs("all", lease.now(), 5000, after)
    for _, r in ipairs(page) do rows[#rows + 1] = r end
    if #page < 5000 then return rows end
    after = page[#page].seq
  end
end

-- invariants 1, 4, 6, 7, 8 against the database; `final` (every worker
-- stopped) also counts the commits whose log line a kill took
local function check_db(round, final)
  -- (the sqlite3 tool waits out a WAL recovery by restarted workers)
  if not opt.pg then
    local p = io.popen(sh(sqlite3) .. " -cmd '.timeout 10000' " .. sh(dbpath)
      .. " 'PRAGMA integrity_check' 2>&1")
    local out = p:read("a")
    p:close()
    if out ~= "ok\n" then violation("round %d: integrity_check says %q", round, out) end
  end
  local seen = {}
  for _, r in ipairs(read_db()) do
    seen[r.id] = r
    if (max_logged[r.id] or 0) > r.fence then
      violation("%s: stored fence %d is below logged fence %d", r.id, r.fence, max_logged[r.id])
    end
    if final then
      for f = 1, r.fence do
        if not claims[r.id] or not claims[r.id][f] then unlogged.claims = unlogged.claims + 1 end
      end
      if r.done and not completed[r.id] then unlogged.completes = unlogged.completes + 1 end
    end
    if r.done then
      local key = ("%s|%d|%s"):format(tostring(r.owner), r.fence, tostring(r.result))
      if done_rows[r.id] and done_rows[r.id] ~= key then
        violation("%s changed after it was done: %s, now %s", r.id, done_rows[r.id], key)
      end
      done_rows[r.id] = key
      if r.result ~= tostring(r.owner) .. "/" .. r.fence then
        violation("%s: done with result %q, but its owner and fence are %s/%d", r.id,
          tostring(r.result), tostring(r.owner), r.fence)
      end
    elseif done_rows[r.id] then
      violation("%s was done and is not any more", r.id)
    end
  end
  for id, c in pairs(completed) do
    local r = seen[id]
    if not r or not r.done or r.fence ~= c.fence or r.result ~= c.result then
      violation("%s: complete by %s with fence %d reported true, the database holds %s", id,
        c.owner, c.fence, r and ("done=%s fence=%d result=%s"):format(tostring(r.done), r.fence,
          tostring(r.result)) or "no row")
    end
  end
  return seen
end

-- one full check: logs first, then the database (so a logged event has
-- always committed before the database is read)
local function check(round, final)
  read_logs()
  check_order()
  check_db(round, final)
end

-- Run -----------------------------------------------------------------------
-- The whole run, then the summary line.
local function run()
  -- Kill rounds are spread evenly over the rounds; every 10th kill round
  -- kills every worker at once (no connection survives: the restarted ones
  -- recover the WAL), the others one worker chosen at random.
  for i = 1, opt.procs do start(i) end
  local kill_rounds, all_at_once, restarts = 0, 0, 0
  local pg_cluster = here .. '/../../scripts/pg-cluster'
  for round = 1, opt.rounds do
    if lease.now() > deadline then
      violation("timed out after %d of %d rounds", round - 1, opt.rounds)
      break
    end
    lease.sleep(0.05 + math.random() * 0.25)
    if math.floor(round * opt.kills / opt.rounds) > kill_rounds then
      kill_rounds = kill_rounds + 1
      local victims = { math.random(opt.procs) }
      if kill_rounds % 10 == 0 then
        victims = {}
        for i = 1, opt.procs do victims[i] = i end
        for _, i in ipairs(victims) do   -- all at once: signal first, then reap
          if slots[i] then os.execute("kill -9 " .. slots[i].pid .. " 2>/dev/null") end
        end
        all_at_once = all_at_once + 1
      end
      for _, i in ipairs(victims) do if slots[i] then kill(i) end end
      for _, i in ipairs(victims) do start(i) end
    end
    -- a server restart in the middle of the run (kill -9 of the postmaster)
    if restarts < opt.restarts
        and round == math.floor(opt.rounds * (restarts + 1) / (opt.restarts + 1)) then
      restarts = restarts + 1
      if not os.execute(sh(pg_cluster) .. " restart-hard " .. sh(opt.restart_dir) .. " >/dev/null") then
        violation("round %d: the server did not restart", round)
      end
    end
    check(round)
    local c
    do
      local db <close> = open_db()
      c = db:counts(lease.now())
    end
    if c.ready + c.held < 48 then add_jobs(64) end
  end

  -- Stop cleanly: every worker must exit 0 with nothing on stderr.
  assert(io.open(stopfile, "w")):close()
  for i = 1, opt.procs do
    local s = slots[i]
    if s then
      local ok, how, code = s.pipe:close()
      if not ok then
        violation("worker %s did not stop cleanly (%s %s): %s", s.name, tostring(how), tostring(code),
          stderr_of(s.name))
      elseif stderr_of(s.name) ~= "" then
        violation("worker %s wrote to stderr: %s", s.name, stderr_of(s.name))
      end
    end
  end
  check(opt.rounds + 1, true)
  check_holders()
  local final
  do
    local db <close> = open_db()
    final = db:counts(lease.now())
  end

  print(("chaos: %d kills (%d rounds of all %d at once), %d claims, %d renews, %d completes,"
    .. " %d releases; refused: %d lost leases, %d late completes, %d wrong tokens;"
    .. " lost to kills between commit and log: %d claims, %d completes; %d takeovers of killed"
    .. " holders not checked; %d jobs, %d done; violations %d; %.1f s")
    :format(stats.kills, all_at_once, opt.procs, counts.C, counts.R, counts.D, counts.L, counts.F,
      counts.S, counts.W, unlogged.claims, unlogged.completes, skipped, final.total, final.done,
      violations, lease.now() - t_start))
  if opt.pg then
    print(("chaos: PostgreSQL, %d server restarts; %d calls failed while it was down (ioerr,"
      .. " cantopen or busy, never a wrong outcome), leaving %d leases in doubt")
      :format(restarts, calls_failed, counts.E - calls_failed))
  end
end

-- A driver error must not leave workers running (closing their pipes
-- waits for them): tell them to stop, then report.
local ok, err = xpcall(run, debug.traceback)
if not ok then
  local f = io.open(stopfile, "w")
  if f then f:close() end
  io.stderr:write("chaos: ", tostring(err), "\n")
  os.exit(1)
end
if violations == 0 then os.execute("rm -rf " .. sh(dir)) end
os.exit(violations == 0 and 0 or 1)
