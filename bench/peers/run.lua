-- bench/peers/run.lua: the measuring half of bench/peers/run (which starts
-- Redis and PostgreSQL and passes --root, --tmp, --redis-port, --pg-host and
-- --pg-bin).  Options of its own: --jobs N (default 20000), --reps R
-- (default 3), --latency-jobs N (default 200), --only a,b,... (system
-- names, see SYSTEMS and LATENCY), --out DIR (default docs), --list.
--
-- Every measurement is a separate process on a fresh database: enqueue N
-- no-op jobs (timed: the enqueue rate), then process them all (claim, empty
-- handler, complete; timed from the start of the workers to the last
-- completion).  W1 one worker, W2 four workers (each system's own
-- concurrency), W3 batches of 100 where the system has a batch API.  Each
-- repetition runs every (system, workload) cell once, in an order that
-- rotates from one repetition to the next; the table shows medians.  A
-- driver that prints "SKIP reason" (a system this build or machine cannot
-- run) leaves its cells as "skipped" and the reason is printed and noted.
--
-- Then the latency workload: an idle worker, jobs enqueued one at a time
-- (each after the previous one started), the time from just before the
-- enqueue to the handler's start; p50 and p99 of --latency-jobs jobs per
-- measurement, medians over the repetitions (LATENCY).

local opt = { jobs = 20000, reps = 3, latency_jobs = 200, out = nil, only = nil }
do
  local i = 1
  while i <= #arg do
    local a = arg[i]
    local function val()
      i = i + 1
      if arg[i] == nil then error("bench/peers/run: " .. a .. " needs a value", 0) end
      return arg[i]
    end
    if a == "--jobs" then opt.jobs = math.tointeger(tonumber(val()))
    elseif a == "--reps" then opt.reps = math.tointeger(tonumber(val()))
    elseif a == "--latency-jobs" then opt.latency_jobs = math.tointeger(tonumber(val()))
    elseif a == "--out" then opt.out = val()
    elseif a == "--only" then
      opt.only = {}
      for w in val():gmatch("[^,]+") do opt.only[w] = true end
    elseif a == "--list" then opt.list = true
    elseif a == "--root" then opt.root = val()
    elseif a == "--tmp" then opt.tmp = val()
    elseif a == "--redis-port" then opt.redis_port = val()
    elseif a == "--pg-host" then opt.pg_host = val()
    elseif a == "--pg-bin" then opt.pg_bin = val()
    else error("bench/peers/run: unknown option " .. a, 0) end
    i = i + 1
  end
  if not (opt.jobs and opt.jobs >= 100) then error("bench/peers/run: --jobs must be an integer >= 100", 0) end
  if not (opt.reps and opt.reps >= 1) then error("bench/peers/run: --reps must be an integer >= 1", 0) end
  if not (opt.latency_jobs and opt.latency_jobs >= 10) then
    error("bench/peers/run: --latency-jobs must be an integer >= 10", 0)
  end
  assert(opt.root and opt.tmp, "run through bench/peers/run")
end
local ROOT = opt.root
opt.out = opt.out or (ROOT .. "/docs")

local function sh(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

-- The output of a shell command, trimmed.
local function capture(cmd)
  local p = assert(io.popen(cmd .. " 2>/dev/null"))
  local s = p:read("a") or ""
  p:close()
  return (s:gsub("%s+$", ""))
end

local serial = 0
-- A fresh SQLite file name in the temporary directory.
local function fresh_file(tag)
  serial = serial + 1
  return string.format("%s/%s-%d.db", opt.tmp, tag, serial)
end

-- A fresh PostgreSQL database on the throwaway cluster; returns its name.
local function fresh_pgdb(tag)
  serial = serial + 1
  local name = string.format("%s_%d", tag, serial)
  assert(os.execute(string.format("%s/createdb -h %s -U lease %s", opt.pg_bin, sh(opt.pg_host), name)),
    "createdb " .. name .. " failed")
  return name
end

local function dropdb(name)
  os.execute(string.format("%s/dropdb -h %s -U lease %s", opt.pg_bin, sh(opt.pg_host), name))
end

local NODE = "node"
local LEASE = sh(ROOT .. "/build/lease") .. " " .. sh(ROOT .. "/bench/peers/lease_peer.lua")
local function node(peer)
  return NODE .. " " .. sh(ROOT .. "/bench/peers/" .. peer .. "/bench.mjs")
end

-- The systems, in table order.  cmd(workload, jobs) returns the shell
-- command of one measurement and a function to run after it (cleanup).
-- workloads: which of w1, w2, w3 the system has.  hook: a row kept for a
-- backend the build may lack (its driver prints SKIP then).
-- A shell command setting the run's Redis to an append-only file fsynced
-- as `fsync` says ("always", "everysec"), or to no append-only file (nil,
-- Redis's default), and waiting until the file it starts is written.
local function redis_aof(fsync)
  local cli = "redis-cli -p " .. opt.redis_port .. " "
  local set = fsync and ("CONFIG SET appendonly yes >/dev/null && " .. cli
    .. "CONFIG SET appendfsync " .. fsync) or "CONFIG SET appendonly no"
  return cli .. set .. " >/dev/null && while " .. cli
    .. "INFO persistence | grep -Eq '^aof_rewrite_(in_progress|scheduled):1'; do sleep 0.1; done && "
end

-- The BullMQ measurement of workload w with n jobs, on a fresh queue name,
-- at the durability redis_aof(fsync) sets.
local function bullmq(w, n, fsync)
  serial = serial + 1
  return redis_aof(fsync) .. node("bullmq") .. " " .. w .. " " .. n .. " " .. opt.redis_port .. " q" .. serial
end

local SYSTEMS = {
  { name = "lease-full", label = "lease, Lua handle loop (W2: 4 `lease.thread`s, own handles)",
    durability = "WAL, synchronous FULL (default)", workloads = { w1 = true, w2 = true, w3 = true },
    cmd = function(w, n) local f = fresh_file("lf")
      return LEASE .. " loop " .. w .. " " .. n .. " " .. sh(f) .. " full" end },
  { name = "lease-normal", label = "lease, Lua handle loop", durability = "WAL, synchronous NORMAL",
    workloads = { w1 = true, w2 = true, w3 = true },
    cmd = function(w, n) local f = fresh_file("ln")
      return LEASE .. " loop " .. w .. " " .. n .. " " .. sh(f) .. " normal" end },
  { name = "pool-full", label = "`lease.pool` (W1 `workers = 1`, W2 `workers = 4`)",
    durability = "WAL, synchronous FULL (default)", workloads = { w1 = true, w2 = true, w3 = true },
    cmd = function(w, n) local f = fresh_file("pf")
      return LEASE .. " pool " .. w .. " " .. n .. " " .. sh(f) .. " full" end },
  { name = "pool-normal", label = "`lease.pool`", durability = "WAL, synchronous NORMAL",
    workloads = { w1 = true, w2 = true, w3 = true },
    cmd = function(w, n) local f = fresh_file("pn")
      return LEASE .. " pool " .. w .. " " .. n .. " " .. sh(f) .. " normal" end },
  -- lease on PostgreSQL: the same handle loop against a postgresql:// URI
  -- on the throwaway cluster (fsync on, as graphile-worker's row); a build
  -- without the PostgreSQL backend refuses the URI and the row is skipped.
  { name = "lease-pg", label = "lease on PostgreSQL, Lua handle loop (W2: 4 `lease.thread`s)", hook = true,
    durability = "synchronous_commit on (`synchronous = \"full\"`)",
    workloads = { w1 = true, w2 = true, w3 = true },
    cmd = function(w, n) local db = fresh_pgdb("leasepg")
      local uri = string.format("postgresql:///%s?host=%s&user=lease", db, opt.pg_host)
      return "cd " .. sh(opt.tmp) .. " && " .. LEASE .. " loop " .. w .. " " .. n .. " " .. sh(uri) .. " full",
        function() dropdb(db) end end },
  { name = "plainjob", label = "plainjob 0.0.14 (better-sqlite3 12.11.1; W2: 4 processes)",
    durability = "WAL, synchronous NORMAL (hard-coded)", workloads = { w1 = true, w2 = true },
    cmd = function(w, n) local f = fresh_file("pj")
      return node("plainjob") .. " " .. w .. " " .. n .. " " .. sh(f) end },
  { name = "liteque", label = "liteque 0.8.0 (better-sqlite3 11.9.1; W2: `concurrency: 4`)",
    durability = "WAL, synchronous NORMAL (hard-coded)", workloads = { w1 = true, w2 = true },
    cmd = function(w, n) local f = fresh_file("lq")
      return node("liteque") .. " " .. w .. " " .. n .. " " .. sh(f) end },
  -- BullMQ at three durabilities of the one Redis: each measurement sets
  -- the server's append-only file first (redis_aof).
  { name = "bullmq", label = "BullMQ 6.7.0 + Redis (W2: `concurrency: 4`)",
    durability = "no AOF, RDB snapshots only (Redis defaults): not durable",
    workloads = { w1 = true, w2 = true },
    cmd = function(w, n) return bullmq(w, n, nil) end },
  { name = "bullmq-everysec", label = "BullMQ 6.7.0 + Redis (W2: `concurrency: 4`)",
    durability = "AOF, `appendfsync everysec`: loses up to a second",
    workloads = { w1 = true, w2 = true },
    cmd = function(w, n) return bullmq(w, n, "everysec") end },
  { name = "bullmq-always", label = "BullMQ 6.7.0 + Redis (W2: `concurrency: 4`)",
    durability = "AOF, `appendfsync always`: fsync on every write",
    workloads = { w1 = true, w2 = true },
    cmd = function(w, n) return bullmq(w, n, "always") end },
  { name = "graphile", label = "graphile-worker 0.17.3 + PostgreSQL (W2: `concurrency: 4`)",
    durability = "fsync on, synchronous_commit on (PostgreSQL defaults)",
    workloads = { w1 = true, w2 = true, w3 = true },
    cmd = function(w, n) local db = fresh_pgdb("graphile")
      local conn = string.format("postgresql:///%s?host=%s&user=lease", db, opt.pg_host)
      return node("graphile") .. " " .. w .. " " .. n .. " " .. sh(conn), function() dropdb(db) end end },
}
local WORKLOADS = { "w1", "w2", "w3" }

-- The latency workload's systems, in table order: cmd(jobs) returns the
-- shell command of one measurement (it prints "RESULT ... p50_ms=<ms>
-- p99_ms=<ms> ...") and a function to run after it.  lease's side is
-- bench/latency.lua: a `forever` pool waiting in db:wait, the producer a
-- thread of its process or another process.
local LATENCY_LUA = sh(ROOT .. "/build/lease") .. " " .. sh(ROOT .. "/bench/latency.lua")
local function lease_latency(producer, pg)
  return function(n)
    if not pg then
      return LATENCY_LUA .. " " .. sh(fresh_file("lat")) .. " " .. producer .. " " .. n
    end
    local db = fresh_pgdb("leaselat")
    local uri = string.format("postgresql:///%s?host=%s&user=lease", db, opt.pg_host)
    return LATENCY_LUA .. " " .. sh(uri) .. " " .. producer .. " " .. n, function() dropdb(db) end
  end
end
local LATENCY = {
  { name = "lat-lease", label = "`lease.pool`, SQLite (WAL, synchronous FULL)",
    producer = "a thread of the pool's process", cmd = lease_latency("thread") },
  { name = "lat-lease-process", label = "`lease.pool`, SQLite (WAL, synchronous FULL)",
    producer = "another process", cmd = lease_latency("process") },
  { name = "lat-lease-pg", label = "`lease.pool` on PostgreSQL", producer = "a thread of the pool's process",
    cmd = lease_latency("thread", true) },
  { name = "lat-lease-pg-process", label = "`lease.pool` on PostgreSQL", producer = "another process",
    cmd = lease_latency("process", true) },
  { name = "lat-bullmq", label = "BullMQ 6.7.0 + Redis (no AOF)", producer = "the worker's process",
    cmd = function(n)
      serial = serial + 1
      return redis_aof(nil) .. node("bullmq") .. " lat " .. n .. " " .. opt.redis_port .. " lat" .. serial end },
  { name = "lat-graphile", label = "graphile-worker 0.17.3 + PostgreSQL", producer = "the worker's process",
    cmd = function(n) local db = fresh_pgdb("graphilelat")
      local conn = string.format("postgresql:///%s?host=%s&user=lease", db, opt.pg_host)
      return node("graphile") .. " lat " .. n .. " " .. sh(conn), function() dropdb(db) end end },
}

if opt.list then
  for _, s in ipairs(SYSTEMS) do print(s.name, s.label) end
  for _, s in ipairs(LATENCY) do print(s.name, s.label .. ", producer: " .. s.producer) end
  os.exit(0)
end

-- The cells to measure, in table order.
local systems, cells = {}, {}
for _, s in ipairs(SYSTEMS) do
  if not opt.only or opt.only[s.name] then
    systems[#systems + 1] = s
    s.res = {}
    for _, w in ipairs(WORKLOADS) do
      if s.workloads[w] then
        cells[#cells + 1] = { sys = s, w = w }
        s.res[w] = { rate = {}, enq = {} }
      end
    end
  end
end
local latency = {}
for _, s in ipairs(LATENCY) do
  if not opt.only or opt.only[s.name] then
    latency[#latency + 1] = s
    s.p50, s.p99 = {}, {}
  end
end
if #cells == 0 and #latency == 0 then error("bench/peers/run: --only names no system (try --list)", 0) end

local function median(t)
  local x = {}
  for i, v in ipairs(t) do x[i] = v end
  table.sort(x)
  local n = #x
  if n == 0 then return nil end
  if n % 2 == 1 then return x[(n + 1) // 2] end
  return (x[n // 2] + x[n // 2 + 1]) / 2
end

local function loadavg() return (capture("cut -d' ' -f1-3 /proc/loadavg")) end

local started = os.date("!%Y-%m-%d %H:%M UTC")
local load_start = loadavg()
io.stderr:write(string.format("peers: %d jobs, %d repetitions, %d cells, load %s\n",
  opt.jobs, opt.reps, #cells, load_start))

local skipped = {}   -- [cell] = reason
for r = 1, opt.reps do
  for k = 0, #cells - 1 do
    local c = cells[(k + r - 1) % #cells + 1]
    local s = c.sys
    if not skipped[c] then
      local cmd, after = s.cmd(c.w, opt.jobs)
      local t0 = os.time()
      local out = capture("timeout --foreground 900 sh -c " .. sh(cmd .. " 2>&1"))
      if after then after() end
      local enq, proc = out:match("RESULT enqueue_s=(%S+) process_s=(%S+)")
      local skip = out:match("SKIP ([^\n]*)")
      if enq then
        local e = s.res[c.w]
        e.rate[#e.rate + 1] = opt.jobs / tonumber(proc)
        e.enq[#e.enq + 1] = opt.jobs / tonumber(enq)
        io.stderr:write(string.format("  rep %d %-13s %s %9.0f jobs/s  (enqueue %.0f/s, %ds)\n",
          r, s.name, c.w, opt.jobs / tonumber(proc), opt.jobs / tonumber(enq), os.time() - t0))
      elseif skip then
        skipped[c] = skip
        s.skips = s.skips or {}
        s.skips[#s.skips + 1] = { w = c.w, why = skip }
        io.stderr:write(string.format("  %s %s: skipped: %s\n", s.name, c.w, skip))
      else
        error(string.format("bench/peers/run: %s %s failed:\n%s\n(command: %s)", s.name, c.w, out, cmd), 0)
      end
    end
  end
end
-- The latency workload: every system once per repetition, rotating.
for r = 1, opt.reps do
  for k = 0, #latency - 1 do
    local s = latency[(k + r - 1) % #latency + 1]
    local cmd, after = s.cmd(opt.latency_jobs)
    local out = capture("timeout --foreground 900 sh -c " .. sh(cmd .. " 2>&1"))
    if after then after() end
    local p50, p99 = out:match("RESULT .*p50_ms=(%S+) p99_ms=(%S+)")
    if not p50 then
      error(string.format("bench/peers/run: %s failed:\n%s\n(command: %s)", s.name, out, cmd), 0)
    end
    s.p50[#s.p50 + 1], s.p99[#s.p99 + 1] = tonumber(p50), tonumber(p99)
    io.stderr:write(string.format("  rep %d %-20s p50 %7.2f ms  p99 %7.2f ms\n", r, s.name, p50, p99))
  end
end
local load_end = loadavg()

-- ---------------------------------------------------------------------------
-- The table, the plot data, the plot
-- ---------------------------------------------------------------------------
local function fmt(x)
  if not x then return "-" end
  if x >= 10000 then return string.format("%.1fk", x / 1000) end
  if x >= 1000 then return string.format("%.2fk", x / 1000) end
  return string.format("%.0f", x)
end

local versions = {
  node = capture("node --version"),
  redis = capture("redis-server --version"):match("v=(%S+)") or "?",
  pg = capture(opt.pg_bin .. "/postgres --version"):match("(%d+%.%d+)") or "?",
  sqlite = capture("sqlite3 --version"):match("^(%S+)") or "?",
  cpu = capture("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"):gsub("^%s+", ""),
  cores = capture("nproc"),
}

local lines = {}
local function put(s) lines[#lines + 1] = s end
put("# lease beside other job queues")
put("")
put("Generated by `bench/peers/run` (set-up: `bench/peers/setup`); do not edit by hand.")
put("")
local names = {}
for _, s in ipairs(systems) do names[#names + 1] = s.name end
for _, s in ipairs(latency) do names[#names + 1] = s.name end
put(string.format("- Command: `bench/peers/run --jobs %d --reps %d --latency-jobs %d%s`", opt.jobs, opt.reps,
  opt.latency_jobs, opt.only and (" --only " .. table.concat(names, ",")) or ""))
put("- Date: " .. started)
put(string.format("- Machine: %s, %s cores; load average %s at the start, %s at the end",
  versions.cpu, versions.cores, load_start, load_end))
put(string.format("- Node %s, Redis %s, PostgreSQL %s (throwaway cluster, Unix socket), SQLite %s",
  versions.node, versions.redis, versions.pg, versions.sqlite))
put("")
put(string.format("%d no-op jobs per measurement (claim, empty handler, complete), each on a fresh", opt.jobs))
put("database; jobs/s = jobs / (first worker start to last completion), so worker start-up is")
put(string.format("included. Medians of %d interleaved repetitions (every cell once per repetition,", opt.reps))
put("rotating order). W1: one worker. W2: four workers, each system's own way (named in the")
put("row); lease's W1 and W2 loops store each result with `complete_claim_next`, which claims")
put("the worker's next job in the same transaction. W3: one worker taking jobs 100 at a time")
put("and completing them in batches, where the system has that (lease:")
put("`claim_next(owner, now, ttl, 100)` and `complete_many`;")
put("graphile-worker: `localQueue.size = 100`, `completeJobBatchDelay = 0`). Enqueue: jobs")
put("added in calls of 1000 (`enqueue_many`, `addMany`, `addBulk`, `addJobs`; liteque one by")
put("one, it has no bulk call), median over all of the system's measurements.")
put("")
put("| system | durability | W1 jobs/s | W2 jobs/s | W3 jobs/s | enqueue jobs/s |")
put("|---|---|---:|---:|---:|---:|")
local dat = {}
for _, s in ipairs(systems) do
  local row, cell, allenq = {}, {}, {}
  for _, w in ipairs(WORKLOADS) do
    local e = s.res[w]
    row[w] = e and median(e.rate)
    cell[w] = (e and not row[w]) and "skipped" or fmt(row[w])
    if e then for _, v in ipairs(e.enq) do allenq[#allenq + 1] = v end end
  end
  local enq = median(allenq)
  put(string.format("| %s | %s | %s | %s | %s | %s |", s.label, s.durability,
    cell.w1, cell.w2, cell.w3, enq and fmt(enq) or "skipped"))
  if enq then
    dat[#dat + 1] = string.format("%q %s %s %s %s", s.name,
      row.w1 and string.format("%.1f", row.w1) or "NaN", row.w2 and string.format("%.1f", row.w2) or "NaN",
      row.w3 and string.format("%.1f", row.w3) or "NaN", string.format("%.1f", enq))
  end
end
put("")
put("\"-\": the system has no such call. Durability is each system's as configured here;")
put("only the FULL rows, PostgreSQL's and (with `synchronous_commit on`) the hook row survive a")
put("power loss with every acknowledged completion; NORMAL keeps the database intact but may lose")
put("the last commits; Redis without an append-only file loses everything since its last snapshot,\n"
  .. "with `appendfsync everysec` up to a second of writes, with `always` no acknowledged write.")
for _, s in ipairs(systems) do
  local order, by = {}, {}
  for _, k in ipairs(s.skips or {}) do
    if not by[k.why] then by[k.why] = {}; order[#order + 1] = k.why end
    table.insert(by[k.why], k.w:upper())
  end
  for _, why in ipairs(order) do
    put("")
    put(string.format("Skipped: `%s` %s: %s", s.name, table.concat(by[why], ", "), why))
  end
  if s.hook and s.skips and #s.skips > 0 then
    put("")
    put(string.format("The `%s` row needs a build with the PostgreSQL backend: the same handle loop", s.name))
    put("against a `postgresql://` URI on the run's PostgreSQL cluster.")
  end
end

-- Ratios of the medians above that the project keeps targets for.
local by_name = {}
for _, s in ipairs(systems) do by_name[s.name] = s end
local function med(name, w)
  local s = by_name[name]
  return s and s.res[w] and median(s.res[w].rate)
end
local ratios = {
  { "lease FULL: 4 workers / 1 worker", "lease-full", "w2", "lease-full", "w1", 3 },
  { "lease FULL, 4 workers / BullMQ, 4 workers", "lease-full", "w2", "bullmq", "w2", 1 },
  { "lease NORMAL, 4 workers / plainjob, 4 workers", "lease-normal", "w2", "plainjob", "w2", 1.5 },
  { "lease NORMAL, 4 workers / BullMQ, 4 workers", "lease-normal", "w2", "bullmq", "w2", 1.2 },
  { "lease FULL, 4 workers / BullMQ with `appendfsync always`, 4 workers (equal durability)",
    "lease-full", "w2", "bullmq-always", "w2", 1 },
  { "lease NORMAL, 4 workers / BullMQ with `appendfsync everysec`, 4 workers (equal durability)",
    "lease-normal", "w2", "bullmq-everysec", "w2", 1 },
}
for _, sync in ipairs({ "full", "normal" }) do
  for _, w in ipairs(WORKLOADS) do
    ratios[#ratios + 1] = { string.format("`lease.pool` / hand loop, %s, %s", sync:upper(), w:upper()),
      "pool-" .. sync, w, "lease-" .. sync, w, 0.9 }
  end
end
local rlines = {}
for _, r in ipairs(ratios) do
  local a, b = med(r[2], r[3]), med(r[4], r[5])
  if a and b then
    local x = a / b
    rlines[#rlines + 1] = string.format("| %s | %.2fx | %.1fx | %s |", r[1], x, r[6], x >= r[6] and "met" or "missed")
  end
end
if #rlines > 0 then
  put("")
  put("Ratios of the medians above against the project's targets:")
  put("")
  put("| ratio | this run | target | |")
  put("|---|---:|---:|---|")
  for _, l in ipairs(rlines) do put(l) end
end
put("")
put("![jobs/s by system and workload](peers.svg)")
if #latency > 0 then
  put("")
  put("## Enqueue to start, an idle worker")
  put("")
  put(string.format("One worker waiting on an empty queue; %d jobs enqueued one at a time, each once the",
    opt.latency_jobs))
  put("worker is idle again; the time from just before the enqueue to the handler's start. Medians")
  put(string.format("over %d repetitions of each measurement's p50 and p99. lease: `bench/latency.lua`", opt.reps))
  put("(a `forever` pool of 2 workers with its default `poll`, waiting in `db:wait`); BullMQ and")
  put("graphile-worker: `bench.mjs lat` (one worker, producer in its process).")
  put("")
  put("| system | producer | p50 ms | p99 ms |")
  put("|---|---|---:|---:|")
  for _, s in ipairs(latency) do
    put(string.format("| %s | %s | %.2f | %.2f |", s.label, s.producer, median(s.p50), median(s.p99)))
  end
end

os.execute("mkdir -p " .. sh(opt.out))
local f = assert(io.open(opt.out .. "/peers.md", "w"))
f:write(table.concat(lines, "\n"), "\n")
f:close()
io.write(table.concat(lines, "\n"), "\n")

local datfile = opt.tmp .. "/peers.dat"
f = assert(io.open(datfile, "w"))
f:write("# system W1 W2 W3 enqueue\n", table.concat(dat, "\n"), "\n")
f:close()
-- Only the workloads with at least one figure are plotted (gnuplot refuses
-- a histogram column without a valid point).
local cols = {}
for i, w in ipairs(WORKLOADS) do
  for _, sys in ipairs(systems) do
    if sys.res[w] and median(sys.res[w].rate) then cols[#cols + 1] = tostring(i + 1); break end
  end
end
if #cols == 0 then error("bench/peers/run: nothing was measured", 0) end
assert(os.execute(string.format("gnuplot -e %s %s", sh("datafile='" .. datfile .. "'; outfile='" .. opt.out .. "/peers.svg'; cols='" ..
  table.concat(cols, " ") .. "'; subtitle='" ..
  string.format("%d jobs, medians of %d runs, %s", opt.jobs, opt.reps, started) .. "'"),
  sh(ROOT .. "/bench/peers/plot.gp"))), "gnuplot failed")
io.stderr:write("peers: wrote " .. opt.out .. "/peers.md and " .. opt.out .. "/peers.svg\n")
