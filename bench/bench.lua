-- bench/bench.lua: cost per operation against the SQLite floor, in one run.
--
-- Usage (from the source tree, after a build; scripts/bench does both):
--   lua5.4 bench/bench.lua [--smoke] [--reps N] [--build DIR] [--dir DIR]
--                          [--out DIR] [--only a,b,...] [--sync full,normal]
--
-- Prints Markdown tables of medians over --reps repetitions.  Every row is
-- a ratio against a baseline measured in this same process: the floor (the
-- engine's own SQL through raw SQLite prepared statements in C, same
-- pragmas; lease_bench.c) for the single-thread rows, one thread for the
-- thread rows.  Within one repetition every variant runs once, in an order
-- that rotates from one repetition to the next, and ratios are taken per
-- repetition before the median, so a slow spell on this shared machine hits
-- baseline and candidate alike.  Nothing here asserts a time: the targets
-- section says met or missed, the exit status only says the run worked.
--
-- The cycle and renew workloads also run bench/seed_sketch.py (the seed's
-- own sketch in Python, a connection per call) when python3 is on PATH.
--
-- Workloads (--only names): cycle, qcycle, renew, claim_next,
-- claim_next_ended, batch, claim_next_batch, threads,
-- claim_many, with_lease, memory, group, frames.  --smoke runs all of them on tiny sizes in seconds
-- (ctest's bench_smoke).  --out writes the plot data (threads.dat,
-- claim_next.dat) and the printed tables (table.md) there.

-- ---------------------------------------------------------------------------
-- Options
-- ---------------------------------------------------------------------------
local opt = {
  reps = 7, build = "build", dir = nil, out = nil, smoke = false, only = nil,
  syncs = { "full", "normal" }, child = nil,
}
do
  local i = 1
  while i <= #arg do
    local a = arg[i]
    local function val()
      i = i + 1
      if arg[i] == nil then error("bench: " .. a .. " needs a value") end
      return arg[i]
    end
    if a == "--smoke" then opt.smoke = true
    elseif a == "--reps" then opt.reps = assert(tonumber(val()), "--reps N")
    elseif a == "--build" then opt.build = val()
    elseif a == "--dir" then opt.dir = val()
    elseif a == "--out" then opt.out = val()
    elseif a == "--only" then
      opt.only = {}
      for w in val():gmatch("[^,]+") do opt.only[w] = true end
    elseif a == "--sync" then
      opt.syncs = {}
      for w in val():gmatch("[^,]+") do opt.syncs[#opt.syncs + 1] = w end
    elseif a == "--child" then opt.child = val()
    else error("bench: unknown option " .. a) end
    i = i + 1
  end
end
if opt.smoke and opt.reps == 7 then opt.reps = 2 end
opt.dir = opt.dir or (opt.build .. "/bench-tmp")

package.cpath = opt.build .. "/?.so;" .. package.cpath
local script_dir = (debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")) or "."
package.path = script_dir .. "/?.lua;" .. package.path

local lease = require("lease")
local B = require("lease_bench")
local clock, cpu = B.clock, B.cpu

-- Sizes: the full run, or the smoke run's tiny ones.
local S = opt.smoke and {
  target = 0.01,            -- seconds per timed batch
  min_n = 5, max_n = 200,
  sizes = { 100, 1000 },
  batch = 100, batch_rounds = 2,
  threads = { 1, 2 }, thread_seconds = 0.05, thread_reps = 1,
  owners = { 2, 4 },
  mem_jobs = 10000, mem_handles = 5,
  group_seconds = 0.05, group_reps = 1, group_jobs = 5000,
} or {
  target = 0.25,
  min_n = 20, max_n = 200000,
  sizes = { 1000, 10000, 100000, 1000000 },
  batch = 1000, batch_rounds = 20,
  threads = { 1, 2, 4, 8 }, thread_seconds = 1.0, thread_reps = 5,
  owners = { 2, 4, 8, 16, 32, 64 },
  mem_jobs = 1000000, mem_handles = 100,
  group_seconds = 1.0, group_reps = 5, group_jobs = 200000,
}

local OWNER, NOW, TTL, RESULT = "worker-1", 1, 1e9, "ok"

-- ---------------------------------------------------------------------------
-- Helpers
-- ---------------------------------------------------------------------------
local function sh(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

-- The median of a list of numbers (the mean of the two middle ones when
-- the count is even).
local function median(t)
  local x = {}
  for i, v in ipairs(t) do x[i] = v end
  table.sort(x)
  local n = #x
  if n == 0 then return 0 / 0 end
  if n % 2 == 1 then return x[(n + 1) // 2] end
  return (x[n // 2] + x[n // 2 + 1]) / 2
end

-- Remove a database file and its WAL companions.
local function rmdb(p)
  os.remove(p); os.remove(p .. "-wal"); os.remove(p .. "-shm")
end

local serial = 0
-- A fresh id prefix: no two batches of a run share an id.
local function fresh(tag)
  serial = serial + 1
  return string.format("%s%d-", tag, serial)
end

-- n ids "<prefix><i>" (0-based, as lease_bench.c makes them), made before
-- the clock starts.
local function make_ids(prefix, n)
  local t = {}
  for i = 1, n do t[i] = prefix .. (i - 1) end
  return t
end

-- n rounds of claim_next + complete + enqueue on q (a Lua handle or the
-- LuaSQL version: the same methods), with one id per round from prefix;
-- returns the seconds spent in claim_next alone.
local function timed_claim_next(prefix, q, n)
  local ids, t = make_ids(prefix, n), 0
  for i = 1, n do
    local t0 = clock()
    local id, fence = q:claim_next(OWNER, NOW, TTL)
    t = t + (clock() - t0)
    if not id then error("claim_next found nothing") end
    q:complete(id, OWNER, fence, NOW, RESULT)
    q:enqueue(ids[i])
  end
  return t
end

-- The output of a shell command, trimmed.
local function capture(cmd)
  local p = io.popen(cmd .. " 2>/dev/null")
  if not p then return "" end
  local s = p:read("a") or ""
  p:close()
  return (s:gsub("%s+$", ""))
end

-- Everything printed is also kept, for --out/table.md.
local printed = {}
local function out(...)
  local line = table.concat({ ... })
  printed[#printed + 1] = line
  io.write(line, "\n")
  io.flush()
end

-- Format a number with thousands kept readable.
local function fmt_rate(x)
  if x ~= x then return "n/a" end
  if x >= 100 then return string.format("%.0f", x) end
  return string.format("%.1f", x)
end
local function fmt_us(x)
  if x ~= x then return "n/a" end
  if x >= 100 then return string.format("%.0f", x) end
  if x >= 10 then return string.format("%.1f", x) end
  return string.format("%.2f", x)
end
local function fmt_x(x)
  if x ~= x then return "n/a" end
  return string.format("%.2fx", x)
end

-- ---------------------------------------------------------------------------
-- Measuring
-- ---------------------------------------------------------------------------

-- A variant: name, and run(n, state) -> seconds for n operations.  setup
-- (optional) runs once before the repetitions, with the sync mode.
-- measure() calibrates each variant's n so one batch takes about
-- S.target seconds, then runs the repetitions in rotating order.
-- quantum (optional): n is a whole multiple of it (batch workloads).
-- Returns { [name] = { per_op = {...}, n = n } }.
local function measure(variants, reps, quantum)
  local res = {}
  quantum = quantum or 1
  local function whole(n) return math.max(quantum, n - n % quantum) end
  for _, v in ipairs(variants) do
    local n = whole(S.min_n)
    -- warm-up and calibration: grow n until a batch is long enough to time
    while true do
      local t = v.run(n)
      if t >= S.target / 4 or n >= S.max_n then
        n = whole(math.max(S.min_n, math.min(S.max_n, math.floor(n * S.target / math.max(t, 1e-9)))))
        break
      end
      n = whole(math.min(S.max_n, n * 4))
    end
    res[v.name] = { per_op = {}, cpu_op = {}, n = n }
  end
  for r = 1, reps do
    for k = 0, #variants - 1 do
      local v = variants[(k + r - 1) % #variants + 1]
      local e = res[v.name]
      local wall, cpu_t = v.run(e.n)
      e.per_op[r] = wall / e.n
      if cpu_t then e.cpu_op[r] = cpu_t / e.n end
    end
  end
  return res
end

-- The median over repetitions of base's per-op time divided by name's:
-- how many times name's throughput the baseline's is (1.00 = the same).
-- field: "per_op" (wall time, the default) or "cpu_op" (CPU time).
local function ratio(res, name, base, field)
  field = field or "per_op"
  local q = {}
  for r, t in ipairs(res[name][field]) do q[r] = res[base][field][r] / t end
  return median(q)
end

-- One row per variant: median us/op, ops/s, and the ratio to base; with
-- with_cpu, also the median CPU us/op and the ratio on CPU time.
local function print_rows(label, sync, variants, res, base, with_cpu)
  for _, v in ipairs(variants) do
    local m = median(res[v.name].per_op)
    local row = string.format("| %s | %s | %s | %s | %s | %s |", label, sync, v.name, fmt_us(m * 1e6),
      fmt_rate(1 / m), fmt_x(ratio(res, v.name, base)))
    if with_cpu then
      row = row .. string.format(" %s | %s |", fmt_us(median(res[v.name].cpu_op) * 1e6),
        fmt_x(ratio(res, v.name, base, "cpu_op")))
    end
    out(row)
  end
end

-- The scratch directory, emptied.
local function scratch(name)
  local p = opt.dir .. "/" .. name
  rmdb(p)
  return p
end

local summary = {}   -- target lines, filled as workloads finish

-- ---------------------------------------------------------------------------
-- The variants of one workload on one sync mode
-- ---------------------------------------------------------------------------
local luasql_lease = require("luasql_lease")

-- The seed's sketch in Python (bench/seed_sketch.py), run when python3 is here.
local SKETCH = script_dir .. "/seed_sketch.py"
local has_python = os.execute("command -v python3 >/dev/null 2>&1")
has_python = has_python == true or has_python == 0
local SKETCH_NAME = "Python seed sketch (connection per call)"
local PATH_NAME = "Lua path (lease.claim(path, ...))"

-- Run the sketch's timed command cmd ("cycle" or "renew") for n operations
-- on path with ids from prefix; returns its wall and CPU seconds.  One
-- Python process serves the whole run (seed_sketch.py serve): commands go
-- down its stdin, results come back through a named pipe.
local sketch_srv
local function sketch(cmd, path, prefix, n)
  if not sketch_srv then
    local fifo = opt.dir .. "/seed_sketch.fifo"
    os.remove(fifo)
    local made = os.execute("mkfifo " .. sh(fifo))
    if not (made == true or made == 0) then error("bench: mkfifo " .. fifo .. " failed") end
    local w = assert(io.popen("python3 " .. sh(SKETCH) .. " serve " .. sh(fifo), "w"))
    sketch_srv = { w = w, r = assert(io.open(fifo, "r")), fifo = fifo }
  end
  sketch_srv.w:write(string.format("%s\t%s\t%s\t%d\n", cmd, path, prefix, n))
  sketch_srv.w:flush()
  local s = sketch_srv.r:read("l")
  local wall, cpu_t = (s or ""):match("^(%S+) (%S+)")
  if not wall then error("bench: seed_sketch.py " .. cmd .. " failed: " .. tostring(s)) end
  return tonumber(wall), tonumber(cpu_t)
end

-- End the sketch's process, if one was started.
local function sketch_done()
  if not sketch_srv then return end
  sketch_srv.w:close()
  sketch_srv.r:close()
  os.remove(sketch_srv.fifo)
  sketch_srv = nil
end

-- Open every API on its own file for workload `w`; returns the handles and
-- a close function.
local function open_all(w, sync)
  local h = {}
  h.fp, h.cp, h.hp, h.pp, h.sp = scratch(w .. "-" .. sync .. "-floor.db"),
    scratch(w .. "-" .. sync .. "-capi.db"), scratch(w .. "-" .. sync .. "-handle.db"),
    scratch(w .. "-" .. sync .. "-path.db"), scratch(w .. "-" .. sync .. "-luasql.db")
  h.yp = scratch(w .. "-" .. sync .. "-sketch.db")
  h.floor = B.floor(h.fp, sync)
  h.capi = B.capi(h.cp, sync)
  h.db = lease.open(h.hp, { synchronous = sync })
  -- the path functions use the default options: synchronous FULL.  For
  -- NORMAL, the file is set up by a handle; the path functions' own
  -- connection still runs at FULL, what the path API does.
  lease.open(h.pp, { synchronous = sync }):close()
  -- the sketch: Python's defaults (rollback journal, synchronous FULL)
  if has_python then os.execute("python3 " .. sh(SKETCH) .. " init " .. sh(h.yp)) end
  h.sql = luasql_lease.open(h.sp, sync)
  function h.close()
    h.floor:close(); h.capi:close(); h.db:close(); h.sql:close()
  end
  return h
end

-- ---------------------------------------------------------------------------
-- Workload: enqueue + claim + complete, one job at a time
-- ---------------------------------------------------------------------------
local function cycle_variants(h)
  return {
    { name = "floor (raw SQLite, C)", run = function(n) return h.floor:cycle(fresh("f"), n) end },
    { name = "C API", run = function(n) return h.capi:cycle(fresh("c"), n) end },
    { name = "Lua handle", run = function(n)
      local db, ids = h.db, make_ids(fresh("h"), n)
      local c0, t0 = cpu(), clock()
      for i = 1, n do
        local id = ids[i]
        db:enqueue(id)
        local fence = db:claim(id, OWNER, NOW, TTL)
        if not db:complete(id, OWNER, fence, NOW, RESULT) then error("handle cycle refused") end
      end
      return clock() - t0, cpu() - c0
    end },
    { name = PATH_NAME, run = function(n)
      local p, ids = h.pp, make_ids(fresh("p"), n)
      local c0, t0 = cpu(), clock()
      for i = 1, n do
        local id = ids[i]
        lease.enqueue(p, id)
        local fence = lease.claim(p, id, OWNER, NOW, TTL)
        if not lease.complete(p, id, OWNER, fence, NOW, RESULT) then error("path cycle refused") end
      end
      return clock() - t0, cpu() - c0
    end },
    { name = "LuaSQL (one connection)", run = function(n)
      local db, ids = h.sql, make_ids(fresh("s"), n)
      local c0, t0 = cpu(), clock()
      for i = 1, n do
        local id = ids[i]
        db:enqueue(id)
        local fence = db:claim(id, OWNER, NOW, TTL)
        if not db:complete(id, OWNER, fence, NOW, RESULT) then error("luasql cycle refused") end
      end
      return clock() - t0, cpu() - c0
    end },
    has_python and { name = SKETCH_NAME, run = function(n) return sketch("cycle", h.yp, fresh("y"), n) end }
      or nil,
  }
end

-- ---------------------------------------------------------------------------
-- Workload: claim_next with N ended and scheduled jobs in the table
-- ---------------------------------------------------------------------------
-- Half the N jobs are completed, half scheduled far in the future, and 100
-- are ready; each timed claim_next is followed, untimed, by a complete of
-- that job and an enqueue, so the table keeps its shape.  What the job
-- queue's index promises: the cost does not grow with the jobs it ended or
-- that wait for their run_at.
local function run_claim_next_ended()
  out("")
  out("### claim_next (one job) with N completed and scheduled jobs in the table, 100 ready")
  out("")
  out("| N ended + scheduled | sync | API | median us/op | x own cost at N=" .. S.sizes[1] .. " |")
  out("|---:|---|---|---:|---:|")
  local data, first, last = {}, S.sizes[1], S.sizes[#S.sizes]
  for _, size in ipairs(S.sizes) do
    local path = scratch(string.format("claim_next_ended-%d.db", size))
    do
      local db = lease.open(path, { synchronous = "normal" })
      local chunk, done = 100000, 0
      while done < size do
        local n = math.min(chunk, size - done)
        local list = {}
        for i = 1, n do
          local k = done + i
          list[i] = k % 2 == 0 and { id = "e" .. k, run_at = 1e12 } or "e" .. k
        end
        db:enqueue_many(list)
        local todo = db:claim_next(OWNER, NOW, TTL, chunk)
        for _, j in ipairs(todo) do j.result = RESULT end
        if #todo > 0 then db:complete_many(OWNER, NOW, todo) end
        done = done + n
      end
      db:enqueue_many(make_ids(fresh("r"), 100))
      db:close()
    end
    for _, sync in ipairs(opt.syncs) do
      local ca = B.capi(path, sync)
      local db = lease.open(path, { synchronous = sync })
      local vs = {
        { name = "C API", run = function(n) return ca:claim_next(fresh("ec"), n) end },
        { name = "Lua handle", run = function(n) return timed_claim_next(fresh("eh"), db, n) end },
      }
      local res = measure(vs, opt.reps)
      data[sync] = data[sync] or {}
      data[sync][size] = {}
      for _, v in ipairs(vs) do
        local m = median(res[v.name].per_op)
        data[sync][size][v.name] = m
        out(string.format("| %d | %s | %s | %s | %s |", size, sync, v.name, fmt_us(m * 1e6),
          fmt_x(m / data[sync][first][v.name])))
      end
      ca:close(); db:close()
    end
    rmdb(path)
  end
  for _, sync in ipairs(opt.syncs) do
    for _, api in ipairs({ "C API", "Lua handle" }) do
      local g = data[sync][last][api] / data[sync][first][api]
      summary[#summary + 1] = {
        target = string.format("claim_next with N=%d completed and scheduled jobs <= 2x the cost at"
          .. " N=%d (%s, %s)", last, first, api, sync),
        value = string.format("%.2fx (%s us vs %s us)", g, fmt_us(data[sync][last][api] * 1e6),
          fmt_us(data[sync][first][api] * 1e6)),
        met = g <= 2,
      }
    end
  end
end

-- ---------------------------------------------------------------------------
-- Workload: the job queue's cycle, enqueue + claim_next + complete
-- ---------------------------------------------------------------------------
-- The floor runs the contract's statements alone (no job queue beside the
-- table): the cost of this cycle before the queue existed.
local function qcycle_variants(h)
  return {
    { name = "floor (raw SQLite, C)", run = function(n) return h.floor:qcycle(fresh("qf"), n) end },
    { name = "C API", run = function(n) return h.capi:qcycle(fresh("qc"), n) end },
    { name = "Lua handle", run = function(n)
      local db, ids = h.db, make_ids(fresh("qh"), n)
      local c0, t0 = cpu(), clock()
      for i = 1, n do
        db:enqueue(ids[i])
        local id, fence = db:claim_next(OWNER, NOW, TTL)
        if not db:complete(id, OWNER, fence, NOW, RESULT) then error("handle qcycle refused") end
      end
      return clock() - t0, cpu() - c0
    end },
  }
end

local function renew_variants(h)
  -- each variant renews its own claimed job, now advancing by 1 per renew
  -- so until really changes (SQLite does not write an unchanged row)
  local function held(enq, claim)
    local id = fresh("r") .. "job"
    enq(id)
    return id, assert(claim(id))
  end
  return {
    { name = "floor (raw SQLite, C)", run = function(n) return h.floor:renew(fresh("rf"), n) end },
    { name = "C API", run = function(n) return h.capi:renew(fresh("rc"), n) end },
    { name = "Lua handle", run = function(n)
      local db = h.db
      local id, fence = held(function(i) db:enqueue(i) end,
        function(i) return db:claim(i, OWNER, NOW, TTL) end)
      local c0, t0 = cpu(), clock()
      for i = 1, n do
        if not db:renew(id, OWNER, fence, NOW + i, TTL) then error("handle renew refused") end
      end
      return clock() - t0, cpu() - c0
    end },
    { name = PATH_NAME, run = function(n)
      local p = h.pp
      local id, fence = held(function(i) lease.enqueue(p, i) end,
        function(i) return lease.claim(p, i, OWNER, NOW, TTL) end)
      local c0, t0 = cpu(), clock()
      for i = 1, n do
        if not lease.renew(p, id, OWNER, fence, NOW + i, TTL) then error("path renew refused") end
      end
      return clock() - t0, cpu() - c0
    end },
    { name = "LuaSQL (one connection)", run = function(n)
      local db = h.sql
      local id, fence = held(function(i) db:enqueue(i) end,
        function(i) return db:claim(i, OWNER, NOW, TTL) end)
      local c0, t0 = cpu(), clock()
      for i = 1, n do
        if not db:renew(id, OWNER, fence, NOW + i, TTL) then error("luasql renew refused") end
      end
      return clock() - t0, cpu() - c0
    end },
    has_python and { name = SKETCH_NAME, run = function(n) return sketch("renew", h.yp, fresh("yr"), n) end }
      or nil,
  }
end

local single_results = {}   -- [workload][sync] = res, for the targets

local function run_single(w, make)
  out("")
  out(string.format("### %s", w == "cycle" and "One enqueue + claim + complete cycle (3 transactions)"
    or w == "qcycle" and "The job queue's cycle: enqueue + claim_next + complete (3 transactions;"
      .. " the floor runs the contract's statements without the queue)"
    or "renew (1 transaction)"))
  out("")
  out("Wall time is what the targets speak of; CPU time (this process, all threads) is beside")
  out("it because other work on a shared machine lengthens wall time but not CPU time.")
  out("")
  out("| workload | sync | API | median us/op | ops/s | x floor | CPU us/op | x floor (CPU) |")
  out("|---|---|---|---:|---:|---:|---:|---:|")
  single_results[w] = {}
  for _, sync in ipairs(opt.syncs) do
    local h = open_all(w, sync)
    local vs = make(h)
    local res = measure(vs, opt.reps)
    print_rows(w, sync, vs, res, vs[1].name, true)
    single_results[w][sync] = res
    h.close()
  end
  -- the path row against the handle row and against the seed's sketch
  -- (the workloads that have a path row: cycle and renew)
  if not single_results[w][opt.syncs[1]][PATH_NAME] then return end
  out("")
  out("The path functions against the handle and against the seed's sketch (medians of")
  out("per-repetition ratios; above 1 the path functions are faster).  They run at")
  out("synchronous FULL whatever the handle's setting, as the sketch does.")
  out("")
  out("| workload | sync | Lua path ops/s | x Lua handle | x Python seed sketch | sketch ops/s |")
  out("|---|---|---:|---:|---:|---:|")
  for _, sync in ipairs(opt.syncs) do
    local res = single_results[w][sync]
    local sk = res[SKETCH_NAME]
    out(string.format("| %s | %s | %s | %s | %s | %s |", w, sync, fmt_rate(1 / median(res[PATH_NAME].per_op)),
      fmt_x(ratio(res, PATH_NAME, "Lua handle")), sk and fmt_x(ratio(res, PATH_NAME, SKETCH_NAME)) or "n/a",
      sk and fmt_rate(1 / median(sk.per_op)) or "n/a (no python3)"))
  end
end

-- ---------------------------------------------------------------------------
-- Workload: with_lease with one insert against complete plus the same
-- insert in a transaction of its own (one commit against two)
-- ---------------------------------------------------------------------------
local function with_lease_variants(db)
  local INSERT = "INSERT INTO out(job, fence, v) VALUES (?, ?, ?)"
  -- n jobs enqueued and claimed, untimed; returns ids and fences
  local function held(prefix, n)
    local ids, fences = make_ids(fresh(prefix), n), {}
    db:enqueue_many(ids)
    for i = 1, n do fences[i] = db:claim(ids[i], OWNER, NOW, TTL) end
    return ids, fences
  end
  return {
    { name = "complete + insert, 2 transactions", run = function(n)
      local ids, fences = held("w2", n)
      local c0, t0 = cpu(), clock()
      for i = 1, n do
        local id, fence = ids[i], fences[i]
        if not db:with_lease(id, OWNER, fence, NOW, function(tx) tx:exec(INSERT, id, fence, RESULT) end) then
          error("with_lease refused")
        end
        if not db:complete(id, OWNER, fence, NOW, RESULT) then error("complete refused") end
      end
      return clock() - t0, cpu() - c0
    end },
    { name = "with_lease: insert + tx:complete, 1 transaction", run = function(n)
      local ids, fences = held("w1", n)
      local c0, t0 = cpu(), clock()
      for i = 1, n do
        local id, fence = ids[i], fences[i]
        if not db:with_lease(id, OWNER, fence, NOW, function(tx)
          tx:exec(INSERT, id, fence, RESULT)
          assert(tx:complete(RESULT))
        end) then error("with_lease refused") end
      end
      return clock() - t0, cpu() - c0
    end },
  }
end

local function run_with_lease()
  out("")
  out("### with_lease: one insert and the completion in one transaction, against two")
  out("")
  out("Both variants per job: the worker's insert and complete, on a job already claimed; x is")
  out("the throughput against complete plus the insert in a separate transaction (with_lease")
  out("without tx:complete, then db:complete): one commit against two.")
  out("")
  out("| workload | sync | API | median us/op | ops/s | x two transactions | CPU us/op | x (CPU) |")
  out("|---|---|---|---:|---:|---:|---:|---:|")
  for _, sync in ipairs(opt.syncs) do
    local path = scratch("with_lease-" .. sync .. ".db")
    local db = lease.open(path, { synchronous = sync })
    db:enqueue("setup")
    local f = db:claim("setup", OWNER, NOW, TTL)
    db:with_lease("setup", OWNER, f, NOW, function(tx)
      tx:exec("CREATE TABLE out(job TEXT, fence INTEGER, v TEXT)")
    end)
    local vs = with_lease_variants(db)
    local res = measure(vs, opt.reps)
    print_rows("with_lease", sync, vs, res, vs[1].name, true)
    local r = ratio(res, vs[2].name, vs[1].name)
    summary[#summary + 1] = { target = "with_lease (1 commit) faster than complete + insert (2 commits) ("
      .. sync .. ")", met = r > 1, value = fmt_x(r) }
    db:close()
  end
end

-- ---------------------------------------------------------------------------
-- Workload: claim_next against table size
-- ---------------------------------------------------------------------------
local claim_next_data = {}   -- [sync][size][api] = median us

local function run_claim_next()
  out("")
  out("### claim_next (one job, one transaction) with N pending jobs in the table")
  out("")
  out("Each timed claim_next is followed, untimed, by a complete of that job and an enqueue")
  out("of a new one, so N jobs stay pending throughout.")
  out("")
  out("| N pending | sync | API | median us/op | x floor | x own cost at N=" .. S.sizes[1] .. " |")
  out("|---:|---|---|---:|---:|---:|")
  local growth = {}
  for _, size in ipairs(S.sizes) do
    -- one file per size, filled once by the floor (one transaction per 10^4)
    local path = scratch(string.format("claim_next-%d.db", size))
    do
      local f = B.floor(path, "normal")
      f:fill(fresh("n"), size)
      f:close()
    end
    for _, sync in ipairs(opt.syncs) do
      local fl, ca = B.floor(path, sync), B.capi(path, sync)
      local db = lease.open(path, { synchronous = sync })
      local sq = luasql_lease.open(path, sync)
      local vs = {
        { name = "floor (raw SQLite, C)", run = function(n) return fl:claim_next(fresh("nf"), n) end },
        { name = "C API", run = function(n) return ca:claim_next(fresh("nc"), n) end },
        { name = "Lua handle", run = function(n) return timed_claim_next(fresh("nh"), db, n) end },
        { name = "LuaSQL (one connection)", run = function(n) return timed_claim_next(fresh("ns"), sq, n) end },
      }
      local res = measure(vs, opt.reps)
      claim_next_data[sync] = claim_next_data[sync] or {}
      claim_next_data[sync][size] = {}
      for _, v in ipairs(vs) do
        local m = median(res[v.name].per_op)
        claim_next_data[sync][size][v.name] = m
        growth[sync .. v.name] = growth[sync .. v.name] or m
        out(string.format("| %d | %s | %s | %s | %s | %s |", size, sync, v.name, fmt_us(m * 1e6),
          fmt_x(ratio(res, v.name, vs[1].name)), fmt_x(m / growth[sync .. v.name])))
      end
      fl:close(); ca:close(); db:close(); sq:close()
    end
    rmdb(path)
  end
  local first, last = S.sizes[1], S.sizes[#S.sizes]
  for _, sync in ipairs(opt.syncs) do
    for _, api in ipairs({ "C API", "Lua handle" }) do
      local g = claim_next_data[sync][last][api] / claim_next_data[sync][first][api]
      summary[#summary + 1] = {
        target = string.format("claim_next per-op cost at N=%d <= 2x the cost at N=%d (%s, %s)",
          last, first, api, sync),
        value = string.format("%.2fx (%s us vs %s us)", g, fmt_us(claim_next_data[sync][last][api] * 1e6),
          fmt_us(claim_next_data[sync][first][api] * 1e6)),
        met = g <= 2,
      }
    end
  end
end

-- ---------------------------------------------------------------------------
-- Workload: batches (one transaction per stage)
-- ---------------------------------------------------------------------------

-- The batch worker's steady state: complete the batch held and claim the
-- next in one transaction (complete_many_claim_next), size fresh jobs
-- enqueued untimed before each; n counts the jobs through the timed step.
local function fused_variants(h, size)
  return {
    { name = "floor (raw SQLite, C)", run = function(n) return h.floor:fused(fresh("ff"), n // size, size) end },
    { name = "C API", run = function(n) return h.capi:fused(fresh("fc"), n // size, size) end },
    { name = "Lua handle", run = function(n)
      local db, t, rounds = h.db, 0, n // size
      db:enqueue_many(make_ids(fresh("fh"), size))
      local jobs = db:claim_next(OWNER, NOW, TTL, size)
      for _ = 1, rounds do
        db:enqueue_many(make_ids(fresh("fh"), size))
        for i = 1, #jobs do jobs[i].result = RESULT end
        local t0 = clock()
        local ok, _, next_batch = db:complete_many_claim_next(OWNER, NOW, jobs, TTL, size)
        t = t + (clock() - t0)
        if not ok or #next_batch ~= size then error("batch complete_many_claim_next refused") end
        jobs = next_batch
      end
      for i = 1, #jobs do jobs[i].result = RESULT end
      if not db:complete_many(OWNER, NOW, jobs) then error("batch complete_many refused") end
      return t
    end },
  }
end

local function run_batch()
  local size = S.batch
  out("")
  out(string.format("### Batches of %d jobs: enqueue_many, claim_next(n), complete", size))
  out("")
  out("enqueue_many and claim_next(n) are one transaction each.  \"end to end\" is both plus a")
  out("complete for every job (one transaction each); \"end to end, complete_many\" completes the")
  out("batch in one transaction (the floor: the same guarded UPDATE for each job in one transaction).")
  out("complete_many_claim_next completes the batch held and claims the next in one transaction,")
  out("a batch worker's steady state (the floor: complete_many's and claim_next's statements in one")
  out("transaction); enqueue_many runs untimed between.")
  out("")
  out("| stage | sync | API | median us/job | jobs/s | x floor |")
  out("|---|---|---|---:|---:|---:|")
  for _, stage in ipairs({ "enqueue", "claim", "all", "many", "fused" }) do
    -- enqueue_many and claim_next(n) alone: the rest of the batch runs
    -- untimed, completing with complete_many so it does not dominate the run
    local part, many = stage == "many" and "all" or stage, stage ~= "all"
    for _, sync in ipairs(opt.syncs) do
      local h = open_all("batch-" .. stage, sync)
      local vs = stage == "fused" and fused_variants(h, size) or {
        { name = "floor (raw SQLite, C)", run = function(n)
          return h.floor:batch(fresh("bf"), n // size, size, part, many)
        end },
        { name = "C API", run = function(n)
          return h.capi:batch(fresh("bc"), n // size, size, part, many)
        end },
        { name = "Lua handle", run = function(n)
          local db, t = h.db, 0
          for _ = 1, n // size do
            local ids = make_ids(fresh("bh"), size)
            local t0 = clock()
            db:enqueue_many(ids)
            if part == "enqueue" then t = t + (clock() - t0) end
            if part == "claim" then t0 = clock() end
            local jobs = db:claim_next(OWNER, NOW, TTL, size)
            if part == "claim" then t = t + (clock() - t0) end
            if #jobs ~= size then error("batch claim_next took " .. #jobs) end
            if many then
              for i = 1, #jobs do jobs[i].result = RESULT end
              if not db:complete_many(OWNER, NOW, jobs) then error("batch complete_many refused") end
            else
              for i = 1, #jobs do
                local j = jobs[i]
                if not db:complete(j.id, OWNER, j.fence, NOW, RESULT) then error("batch complete refused") end
              end
            end
            if part == "all" then t = t + (clock() - t0) end
          end
          return t
        end },
      }
      -- n counts jobs, in whole batches
      local res = measure(vs, opt.reps, size)
      local label = ({ enqueue = "enqueue_many", claim = "claim_next(n)", all = "end to end",
        many = "end to end, complete_many", fused = "complete_many_claim_next" })[stage]
      print_rows(label, sync, vs, res, vs[1].name)
      if stage == "many" then
        for _, api in ipairs({ "C API", "Lua handle" }) do
          local rate = 1 / median(res[api].per_op)
          summary[#summary + 1] = {
            target = string.format("batched enqueue+claim+complete >= 150k jobs/s end to end (%s, %s)", api, sync),
            value = string.format("%s jobs/s", fmt_rate(rate)), met = rate >= 150000 }
        end
      end
      h.close()
    end
  end
end

-- ---------------------------------------------------------------------------
-- Workload: claim_next(n) per job against claim_next(1)
-- ---------------------------------------------------------------------------
-- What a batch saves: claim_next(n) is one transaction for n jobs, so its
-- cost per job should fall well below one claim_next(1) per job.  Every
-- round enqueues n fresh jobs (one enqueue_many), claims them with one
-- claim_next(n) (timed) and completes them with one complete_many.  The
-- baseline is claim_next(1) on the same API in the same repetition.
local CLAIM_SIZES = { 1, 16, 64 }
local function run_claim_next_batch()
  out("")
  out("### claim_next(n) per job against claim_next(1)")
  out("")
  out("Each round: enqueue_many of n fresh jobs, one claim_next(n) (timed), one complete_many.")
  out("The ratio is claim_next(1)'s cost per job over claim_next(n)'s, per repetition (above 1:")
  out("the batch is cheaper per job); for the Lua handle also on the process's CPU time, which")
  out("other work on a shared machine disturbs less than wall time.")
  out("")
  out("| n | sync | API | median us/job | jobs/s | x claim_next(1) per job | CPU us/job | x on CPU |")
  out("|---:|---|---|---:|---:|---:|---:|---:|")
  for _, sync in ipairs(opt.syncs) do
    local h = open_all("claim_next_batch", sync)
    local vs = {}
    for _, api in ipairs({ "C API", "Lua handle" }) do
      for _, size in ipairs(CLAIM_SIZES) do
        local name = string.format("%s, claim_next(%d)", api, size)
        vs[#vs + 1] = { name = name, api = api, size = size, run = api == "C API" and function(n)
          return h.capi:batch(fresh("kc"), n // size, size, "claim", true)
        end or function(n)
          local db, t, c = h.db, 0, 0
          for _ = 1, n // size do
            db:enqueue_many(make_ids(fresh("kh"), size))
            local c0, t0 = cpu(), clock()
            local jobs = db:claim_next(OWNER, NOW, TTL, size)
            t, c = t + (clock() - t0), c + (cpu() - c0)
            if #jobs ~= size then error("claim_next(" .. size .. ") took " .. #jobs) end
            for i = 1, #jobs do jobs[i].result = RESULT end
            if not db:complete_many(OWNER, NOW, jobs) then error("complete_many refused") end
          end
          return t, c
        end }
      end
    end
    -- n counts jobs, in whole batches of the largest size
    local res = measure(vs, opt.reps, CLAIM_SIZES[#CLAIM_SIZES])
    for _, v in ipairs(vs) do
      local m = median(res[v.name].per_op)
      local base = string.format("%s, claim_next(1)", v.api)
      local has_cpu = #res[v.name].cpu_op > 0
      out(string.format("| %d | %s | %s | %s | %s | %s | %s | %s |", v.size, sync, v.api, fmt_us(m * 1e6),
        fmt_rate(1 / m), fmt_x(ratio(res, v.name, base)),
        has_cpu and fmt_us(median(res[v.name].cpu_op) * 1e6) or "n/a",
        has_cpu and fmt_x(ratio(res, v.name, base, "cpu_op")) or "n/a"))
      if v.size == CLAIM_SIZES[#CLAIM_SIZES] then
        local r = ratio(res, v.name, base)
        summary[#summary + 1] = {
          target = string.format("claim_next(%d) per job vs claim_next(1): >= 8x cheaper (%s, %s)",
            v.size, v.api, sync),
          value = string.format("%s (%s us vs %s us per job)%s", fmt_x(r), fmt_us(m * 1e6),
            fmt_us(median(res[base].per_op) * 1e6),
            has_cpu and string.format("; CPU time: %s", fmt_x(ratio(res, v.name, base, "cpu_op"))) or ""),
          met = r >= 8,
        }
      end
    end
    h.close()
  end
end

-- ---------------------------------------------------------------------------
-- Workload: N threads on one file
-- ---------------------------------------------------------------------------
local thread_data = {}   -- [sync][api][nthreads] = { rate, ratio }

-- One Lua thread of the thread workload: its own handle, then cycles on
-- its own ids for `seconds` after the start barrier.  Runs in a fresh
-- lua_State (lease.thread): no upvalues but _ENV, everything as arguments.
-- Returns cycles, busy failures, other failures, the first failure, the
-- longest cycle and the time it ran.
local function lua_thread_worker(path, sync, prefix, seconds, start)
  local lease_ = require("lease")
  local clock_ = require("lease_bench").clock
  local db = lease_.open(path, { synchronous = sync })
  start:wait()
  local t0 = clock_()
  local cycles, busy, errors, first, worst, i = 0, 0, 0, nil, 0, 0
  while clock_() - t0 < seconds do
    i = i + 1
    local id = prefix .. i
    local c0 = clock_()
    local ok, err = pcall(function()
      db:enqueue(id)
      local fence = db:claim(id, "worker-1", 1, 1e9)
      return db:complete(id, "worker-1", fence, 1, "ok")
    end)
    local c = clock_() - c0
    if c > worst then worst = c end
    if ok and err then cycles = cycles + 1
    elseif not ok and tostring(err):find("[busy]", 1, true) then busy = busy + 1
    else errors = errors + 1; first = first or tostring(err) end
  end
  local elapsed = clock_() - t0
  db:close()
  return cycles, busy, errors, first, worst, elapsed
end

-- lease_bench.threads' counterpart on Lua threads: the same returns.
local function lua_threads(path, sync, n, seconds, _, prefix)
  local thread = require("lease.thread")
  local start = thread.barrier(n)
  local ts = {}
  for i = 1, n do
    ts[i] = thread.spawn(lua_thread_worker, path, sync, prefix .. i .. "-", seconds, start)
  end
  local cycles, busy, errors, first, minc, worst, elapsed = 0, 0, 0, nil, nil, 0, 0
  for i = 1, n do
    local ok, c, b, e, f, w, el = ts[i]:join()
    if not ok then error("Lua thread: " .. tostring(c)) end
    cycles, busy, errors = cycles + c, busy + b, errors + e
    first = first or f
    if not minc or c < minc then minc = c end
    if w > worst then worst = w end
    if el > elapsed then elapsed = el end
  end
  return cycles, elapsed, busy, errors, first, minc, worst
end

local function run_threads()
  out("")
  out("### N threads, each with its own handle, running cycles on one file")
  out("")
  out(string.format("Each measurement runs %.2g s; aggregate = all threads' cycles / wall time.", S.thread_seconds))
  out("\"x 1 thread\" is against the same API's 1-thread run of the same repetition.  \"fair\" is")
  out("the fewest cycles one thread ran / the mean (1 = even); \"worst\" the longest single cycle.")
  out("")
  out("| threads | sync | API | cycles/s (aggregate) | x 1 thread | busy errors | other errors | fair | worst cycle ms |")
  out("|---:|---|---|---:|---:|---:|---:|---:|---:|")
  local apis = { { "capi", "C API (pthreads)" }, { "lua", "Lua handle (lease.thread)" },
    { "floor", "floor (SQLite's busy handler)" } }
  for _, sync in ipairs(opt.syncs) do
    local path = scratch("threads-" .. sync .. ".db")
    lease.open(path, { synchronous = sync }):close()
    local rows = {}
    for r = 1, S.thread_reps do
      for k = 0, #apis - 1 do
        local api = apis[(k + r - 1) % #apis + 1][1]
        for _, n in ipairs(S.threads) do
          local run_threads_of = api == "lua" and lua_threads or B.threads
          local cycles, elapsed, busy, errors, first, minc, worst =
            run_threads_of(path, sync, n, S.thread_seconds, api, fresh("t"))
          if errors > 0 then error("threads (" .. api .. ", " .. n .. "): " .. tostring(first)) end
          local key = api .. n
          rows[key] = rows[key] or { rate = {}, ratio = {}, busy = 0, errors = 0, fair = {}, worst = 0 }
          local e = rows[key]
          e.rate[r] = cycles / elapsed
          e.busy = e.busy + busy
          e.errors = e.errors + errors
          e.fair[r] = cycles > 0 and minc * n / cycles or 0
          if worst > e.worst then e.worst = worst end
        end
        for _, n in ipairs(S.threads) do
          local e = rows[api .. n]
          e.ratio[r] = e.rate[r] / rows[api .. S.threads[1]].rate[r]
        end
      end
    end
    thread_data[sync] = {}
    for _, a in ipairs(apis) do
      thread_data[sync][a[1]] = {}
      for _, n in ipairs(S.threads) do
        local e = rows[a[1] .. n]
        local rate, rt = median(e.rate), median(e.ratio)
        thread_data[sync][a[1]][n] = { rate = rate, ratio = rt, busy = e.busy }
        out(string.format("| %d | %s | %s | %s | %s | %d | %d | %.2f | %.0f |", n, sync, a[2], fmt_rate(rate),
          fmt_x(rt), e.busy, e.errors, median(e.fair), e.worst * 1e3))
      end
    end
    rmdb(path)
    local top = S.threads[#S.threads]
    for _, a in ipairs({ { "capi", "C API" }, { "lua", "Lua handle" } }) do
      local t = thread_data[sync][a[1]][top]
      summary[#summary + 1] = {
        target = string.format("%d threads: aggregate >= 0.9x of 1 thread, 0 busy errors (%s, %s)", top,
          a[2], sync),
        value = string.format("%.2fx, %d busy errors", t.ratio, t.busy),
        met = t.ratio >= 0.9 and t.busy == 0,
      }
    end
  end
end

-- ---------------------------------------------------------------------------
-- Workload: claim_many
-- ---------------------------------------------------------------------------
local function run_claim_many()
  out("")
  out("### claim_many (contract step 8): one call on a fresh job, per number of owners")
  out("")
  out("claim_many starts one thread per owner (at most 64), each opening its own connection,")
  out("released together by a barrier.  Baseline: the same number of claims one after the")
  out("other on one open handle (what the call replaces when threads are not needed).  Each")
  out("call is checked to hand out exactly one fence.")
  out("")
  out("| owners | sync | API | median ms/call | us per owner | x sequential claims |")
  out("|---:|---|---|---:|---:|---:|")
  for _, sync in ipairs(opt.syncs) do
    local cp, hp = scratch("many-" .. sync .. "-capi.db"), scratch("many-" .. sync .. "-lua.db")
    local ca = B.capi(cp, sync)
    local db = lease.open(hp, { synchronous = sync })
    for _, n in ipairs(S.owners) do
      local owners = {}
      for i = 1, n do owners[i] = "o" .. i end
      local vs = {
        { name = "sequential claims (C API, one handle)", run = function(k)
          return ca:claim_seq(fresh("ms"), n, k)
        end },
        { name = "claim_many (C)", run = function(k) return ca:claim_many(fresh("mc"), n, k) end },
        { name = "db:claim_many (Lua)", run = function(k)
          local ids, t = make_ids(fresh("ml"), k), 0
          for i = 1, k do
            db:enqueue(ids[i])
            local t0 = clock()
            local res = db:claim_many(ids[i], owners, NOW, TTL)
            t = t + (clock() - t0)
            local won = 0
            for j = 1, n do if res[j] then won = won + 1 end end
            if won ~= 1 then error("claim_many handed out " .. won .. " fences") end
          end
          return t
        end },
      }
      local saved = S.min_n
      S.min_n = 2
      local res = measure(vs, opt.reps)
      S.min_n = saved
      for _, v in ipairs(vs) do
        local m = median(res[v.name].per_op)
        out(string.format("| %d | %s | %s | %s | %s | %s |", n, sync, v.name, fmt_us(m * 1e3),
          fmt_us(m * 1e6 / n), fmt_x(ratio(res, v.name, vs[1].name))))
      end
    end
    ca:close(); db:close()
  end
end

-- ---------------------------------------------------------------------------
-- Memory, each measured in a child process of its own
-- ---------------------------------------------------------------------------
local function child(name)
  local interp = arg[-1] or "lua5.4"
  local cmd = string.format("%s %s --child %s --build %s --dir %s %s", sh(interp), sh(arg[0]), name,
    sh(opt.build), sh(opt.dir), opt.smoke and "--smoke" or "")
  local r = capture(cmd)
  local t = {}
  for k, v in r:gmatch("([%w_]+)=(%-?[%d.]+)") do t[k] = tonumber(v) end
  if not t.ok then error("bench: memory child " .. name .. " failed: " .. r) end
  return t
end

local function run_child(name)
  local rss0, hwm0 = B.rss()
  if name == "handle" then
    local path = scratch("mem-handle.db")
    lease.open(path):close()
    collectgarbage(); collectgarbage()
    local r0 = B.rss()
    local keep = {}
    local function one(i)
      local db = lease.open(path, { synchronous = "normal" })
      local id = "m" .. i
      db:enqueue(id)
      db:complete(id, OWNER, db:claim(id, OWNER, NOW, TTL), NOW, RESULT)
      keep[#keep + 1] = db
    end
    one(1)
    collectgarbage(); collectgarbage()
    local r1 = B.rss()
    for i = 2, S.mem_handles do one(i) end
    collectgarbage(); collectgarbage()
    local r2 = B.rss()
    io.write(string.format("ok=1 first=%d each=%.1f base=%d\n", r1 - r0,
      (r2 - r1) / (S.mem_handles - 1), r0))
  elseif name == "thread" then
    local path = scratch("mem-thread.db")
    lease.open(path):close()
    local n = 8
    local before, alive, errors = B.mem_threads(path, n, "mt")
    io.write(string.format("ok=%d each=%.1f\n", errors == 0 and 1 or 0, (alive - before) / n))
  elseif name == "luathread" then
    local path = scratch("mem-luathread.db")
    lease.open(path):close()
    local thread = require("lease.thread")
    local n = 8
    local ready, leave = thread.barrier(n + 1), thread.barrier(n + 1)
    collectgarbage(); collectgarbage()
    local before = B.rss()
    local ts = {}
    for i = 1, n do
      ts[i] = thread.spawn(function(p, me, r, l)
        local d = require("lease").open(p, { synchronous = "normal" })
        for k = 1, 100 do
          local id = me .. k
          d:enqueue(id)
          d:complete(id, "w", d:claim(id, "w", 1, 1e9), 1, "ok")
        end
        r:wait()
        l:wait()
        d:close()
        return true
      end, path, "lt" .. i .. "-", ready, leave)
    end
    ready:wait()
    local alive = B.rss()
    leave:wait()
    local ok = 1
    for i = 1, n do if not ts[i]:join() then ok = 0 end end
    io.write(string.format("ok=%d each=%.1f\n", ok, (alive - before) / n))
  elseif name == "jobs" then
    local path = scratch("mem-jobs.db")
    local db = lease.open(path, { synchronous = "normal" })
    local _, h1 = B.rss()
    for b = 0, S.mem_jobs // 10000 - 1 do
      local ids = {}
      for i = 1, 10000 do ids[i] = string.format("job-%d-%d", b, i) end
      db:enqueue_many(ids)
    end
    for _ = 1, 10000 do
      local id, fence = db:claim_next(OWNER, NOW, TTL)
      db:complete(id, OWNER, fence, NOW, RESULT)
    end
    local jobs = db:claim_next(OWNER, NOW, TTL, 1000)
    for _, j in ipairs(jobs) do db:complete(j.id, OWNER, j.fence, NOW, RESULT) end
    collectgarbage()
    local _, h2 = B.rss()
    db:close()
    rmdb(path)
    io.write(string.format("ok=1 hwm_before=%d hwm=%d\n", h1, h2))
  end
  local _ = rss0 + hwm0
end

local function run_memory()
  out("")
  out("### Memory (RSS, each in a fresh process)")
  out("")
  local h, t, lt, j = child("handle"), child("thread"), child("luathread"), child("jobs")
  out("| what | kB |")
  out("|---|---:|")
  out(string.format("| lua5.4 with lease loaded, before any handle (VmRSS) | %d |", h.base))
  out(string.format("| the first Lua handle, opened and used for one cycle | %d |", h.first))
  out(string.format("| each further handle (mean over %d) | %.0f |", S.mem_handles - 1, h.each))
  out(string.format("| one C thread with its own handle, 100 cycles run (mean over 8) | %.0f |", t.each))
  out(string.format("| one Lua thread (lease.thread: its own lua_State) with its own handle, 100 cycles run (mean over 8) | %.0f |",
    lt.each))
  out(string.format("| peak (VmHWM) of a Lua process before filling the table | %d |", j.hwm_before))
  out(string.format("| peak (VmHWM) after enqueuing %d jobs (batches of 10^4) and claiming/completing 11000 | %d |",
    S.mem_jobs, j.hwm))
end

-- ---------------------------------------------------------------------------
-- The machine
-- ---------------------------------------------------------------------------
local function machine()
  out("### Machine")
  out("")
  local model = capture("lscpu | sed -n 's/^Model name: *//p'")
  local hyp = capture("lscpu | sed -n 's/^Hypervisor vendor: *//p'")
  local mem = capture("awk '/MemTotal/ {printf \"%.1f GiB\", $2/1048576}' /proc/meminfo")
  local fs = capture("df -PT " .. sh(opt.dir) .. " | awk 'NR==2 {print $2}'")
  local dev = capture("df -P " .. sh(opt.dir) .. " | awk 'NR==2 {print $1}'")
  out(string.format("- CPU: %s, %s cores (nproc)%s", model, capture("nproc"), hyp ~= "" and (", " .. hyp .. " guest") or ""))
  out(string.format("- memory: %s; database files on %s (%s)", mem, dev, fs))
  out(string.format("- SQLite %s, %s, %s", B.sqlite_version(), _VERSION, capture("uname -sr")))
  out(string.format("- %d repetitions, medians; journal_mode=WAL everywhere but in the Python seed sketch"
    .. " (Python's sqlite3 defaults: rollback journal, synchronous FULL)", opt.reps))
  out(string.format("- load average at the start (1, 5, 15 min): %s (other work on this shared machine shows here)",
    capture("cut -d' ' -f1-3 /proc/loadavg")))
  out(B.heap_pinned and "- the heap is never trimmed in this process (lease_bench.c, pin_heap), so the"
    .. " allocator's page faults strike the floor and the engine alike"
    or "- the heap could not be pinned (mallopt refused): the allocator's page faults may strike one row and not another")
end

-- ---------------------------------------------------------------------------
-- Main
-- ---------------------------------------------------------------------------
os.execute("mkdir -p " .. sh(opt.dir))
if opt.child then
  run_child(opt.child)
  os.exit(0)
end

local function want(w) return not opt.only or opt.only[w] end

-- ---------------------------------------------------------------------------
-- Workload: claim+complete on one queue, 1 and 4 threads, group commit on/off
-- ---------------------------------------------------------------------------
local group_res = {}   -- [sync][gc][nthreads] = { rates per repetition }

-- One worker of the group workload (a lease.thread, no upvalues): its own
-- handle, claim_next + complete until `seconds` pass or the queue is
-- empty.  Returns the jobs done and the time it ran.
local function group_worker(path, sync, gc, me, start, seconds)
  local lease_ = require("lease")
  local clock_ = require("lease_bench").clock
  local db = lease_.open(path, { synchronous = sync, group_commit = gc })
  start:wait()
  local t0, n = clock_(), 0
  while clock_() - t0 < seconds do
    local id, fence = db:claim_next(me, 1, 1e9)
    if not id then break end
    assert(db:complete(id, me, fence, 1, "ok"))
    n = n + 1
  end
  local elapsed = clock_() - t0
  db:close()
  return n, elapsed
end

-- jobs/s of n threads on a fresh queue of `jobs` jobs (the enqueuing handle
-- closed before they start, so one thread is the file's only writer).
local function group_run(sync, gc, n, jobs)
  local thread = require("lease.thread")
  local path = scratch("group.db")
  rmdb(path)
  local db = lease.open(path, { synchronous = sync })
  db:enqueue_many(make_ids(fresh("g"), jobs))
  db:close()
  local start = thread.barrier(n)
  local ts = {}
  for i = 1, n do ts[i] = thread.spawn(group_worker, path, sync, gc, "w" .. i, start, S.group_seconds) end
  local total, elapsed = 0, 0
  for i = 1, n do
    local ok, c, el = ts[i]:join()
    if not ok then error("group worker: " .. tostring(c)) end
    total = total + c
    if el > elapsed then elapsed = el end
  end
  rmdb(path)
  if total >= jobs then error("group: the queue ran dry; enqueue more jobs") end
  return total / elapsed
end

local function run_group()
  local gcs = { true, false }
  local variants = {}
  for _, sync in ipairs(opt.syncs) do
    group_res[sync] = { [true] = {}, [false] = {} }
    for _, gc in ipairs(gcs) do
      for _, n in ipairs({ 1, 4 }) do
        group_res[sync][gc][n] = {}
        variants[#variants + 1] = { sync = sync, gc = gc, n = n }
      end
    end
  end
  for r = 1, S.group_reps do
    for k = 0, #variants - 1 do
      local v = variants[(k + r - 1) % #variants + 1]
      group_res[v.sync][v.gc][v.n][r] = group_run(v.sync, v.gc, v.n, S.group_jobs)
    end
  end
  -- a ratio per repetition, then the median
  local function rat(a, b)
    local t = {}
    for r = 1, S.group_reps do t[r] = a[r] / b[r] end
    return median(t)
  end
  out("")
  out("### Group commit: claim_next + complete, 1 and 4 threads on one queue")
  out("")
  out(string.format("Each thread has its own handle (lease.thread); each measurement runs %.2g s on", S.group_seconds))
  out(string.format("a fresh queue; medians of %d interleaved repetitions, ratios per repetition.", S.group_reps))
  out("")
  out("| sync | group commit | 1 thread jobs/s | 4 threads jobs/s | 4 / 1 thread | on / off (4 threads) |")
  out("|---|---|---:|---:|---:|---:|")
  for _, sync in ipairs(opt.syncs) do
    for _, gc in ipairs(gcs) do
      local g = group_res[sync][gc]
      out(string.format("| %s | %s | %s | %s | %s | %s |", sync, gc and "on" or "off",
        fmt_rate(median(g[1])), fmt_rate(median(g[4])), fmt_x(rat(g[4], g[1])),
        gc and fmt_x(rat(g[4], group_res[sync][false][4])) or ""))
    end
  end
  if group_res.full then
    local r = rat(group_res.full[true][4], group_res.full[true][1])
    summary[#summary + 1] = { target = "4 threads >= 3x 1 thread, claim_next + complete (full, group commit)",
      met = r >= 3, value = fmt_x(r) }
  end
end

-- ---------------------------------------------------------------------------
-- Workload: WAL frames per cycle, the floor against the engine
-- ---------------------------------------------------------------------------
-- At synchronous NORMAL a commit's cost is mostly its WAL frames: every page
-- the transaction changed is appended to the -wal (a frame: a header and the
-- page, two write calls and a checksum).  Counted from the -wal's growth over
-- FRAME_CYCLES cycles after a warm-up, few enough that no checkpoint restarts
-- the -wal meanwhile (SQLite's default checkpoints at 1000 frames).
local FRAME_CYCLES = 40
-- The batch row: FRAME_ROUNDS rounds of FRAME_BATCH jobs each (enqueue_many,
-- claim_next(n), complete_many: three transactions), counted per job.
local FRAME_ROUNDS, FRAME_BATCH = 2, 200

-- Frames the -wal of `path` grew by while run() ran.
local function wal_frames(path, run)
  local function size()
    local f = io.open(path .. "-wal", "rb")
    if not f then return 0 end
    local n = f:seek("end")
    f:close()
    return n
  end
  local page = 4096   -- SQLite's default page size, which every file here uses
  local before = size()
  run()
  local grown = size() - before
  if grown < 0 then error("frames: the -wal was restarted during the count") end
  return grown / (24 + page)
end

local function run_frames()
  out("")
  out("### WAL frames per operation (synchronous NORMAL)")
  out("")
  out(string.format("Pages appended to the -wal per operation, from its growth over %d operations", FRAME_CYCLES))
  out("on a fresh file after a warm-up; the floor runs the contract's statements alone.")
  out("")
  out(string.format("The batch row counts %d rounds of %d jobs (enqueue_many, claim_next(n) and",
    FRAME_ROUNDS, FRAME_BATCH))
  out("complete_many, a transaction each) per job.")
  out("")
  out("| workload | API | frames per cycle | x floor |")
  out("|---|---|---:|---:|")
  for _, w in ipairs({ "cycle", "qcycle", "batch" }) do
    local fp, cp = scratch("frames-" .. w .. "-floor.db"), scratch("frames-" .. w .. "-capi.db")
    rmdb(fp); rmdb(cp)
    local floor, capi = B.floor(fp, "normal"), B.capi(cp, "normal")
    -- run(b, prefix, warm): a warm-up, or the counted operations; returns
    -- how many cycles (jobs, for batch) the counted run went through
    local function run(b, prefix, warm)
      if w == "batch" then
        b:batch(prefix, warm and 1 or FRAME_ROUNDS, FRAME_BATCH, "all", true)
        return FRAME_ROUNDS * FRAME_BATCH
      end
      b[w](b, prefix, warm and 5 or FRAME_CYCLES)
      return FRAME_CYCLES
    end
    run(floor, fresh("wf"), true)
    run(capi, fresh("wc"), true)
    local nf, nc
    local ff = wal_frames(fp, function() nf = run(floor, fresh("f"), false) end)
    local fc = wal_frames(cp, function() nc = run(capi, fresh("c"), false) end)
    ff, fc = ff / nf, fc / nc
    floor:close(); capi:close()
    rmdb(fp); rmdb(cp)
    local label = w == "batch" and string.format("batch of %d (per job)", FRAME_BATCH) or w
    out(string.format("| %s | floor (raw SQLite, C) | %.2f | 1.00x |", label, ff))
    out(string.format("| %s | C API | %.2f | %.2fx |", label, fc, fc / ff))
  end
end

local t_start = clock()
out(string.format("## lease benchmark%s", opt.smoke and " (smoke run: tiny sizes, numbers meaningless)" or ""))
out("")
machine()
if want("cycle") then run_single("cycle", cycle_variants) end
if want("qcycle") then run_single("qcycle", qcycle_variants) end
if want("frames") then run_frames() end
if want("renew") then run_single("renew", renew_variants) end
if want("claim_next") then run_claim_next() end
if want("claim_next_ended") then run_claim_next_ended() end
if want("batch") then run_batch() end
if want("claim_next_batch") then run_claim_next_batch() end
if want("threads") then run_threads() end
if want("claim_many") then run_claim_many() end
if want("with_lease") then run_with_lease() end
if want("memory") then run_memory() end
if want("group") then run_group() end

sketch_done()

-- Targets ---------------------------------------------------------------
local function single_target(w, sync, cand, base, goal, what)
  local res = single_results[w] and single_results[w][sync]
  if not res then return end
  local r, rc = ratio(res, cand, base), ratio(res, cand, base, "cpu_op")
  summary[#summary + 1] = { target = what, met = r >= goal,
    value = string.format("%s (CPU time: %s)", fmt_x(r), fmt_x(rc)) }
end
for _, sync in ipairs(opt.syncs) do
  single_target("cycle", sync, "Lua handle", "floor (raw SQLite, C)", 0.9,
    "Lua handle >= 0.9x the C floor per cycle (" .. sync .. ")")
  single_target("cycle", sync, "Lua handle", "LuaSQL (one connection)", 1.5,
    "Lua handle >= 1.5x the LuaSQL version per cycle (" .. sync .. ")")
  for _, api in ipairs({ "C API", "Lua handle" }) do
    single_target("qcycle", sync, api, "floor (raw SQLite, C)", 1 / 1.3,
      "enqueue + claim_next + complete with the job queue costs <= 1.3x the contract's"
      .. " statements alone (throughput >= 0.77x; " .. api .. ", " .. sync .. ")")
  end
  if has_python then
    single_target("cycle", sync, PATH_NAME, SKETCH_NAME, 10,
      "Lua path >= 10x the Python seed sketch per cycle (" .. sync .. " section; both at FULL)")
  end
end
-- the path functions run at FULL: held against the handle at FULL
single_target("cycle", "full", PATH_NAME, "Lua handle", 1 / 1.5,
  "Lua path within 1.5x of the Lua handle per cycle (>= 0.67x; full)")
if #summary > 0 then
  out("")
  out("### Targets")
  out("")
  out("| target | measured | |")
  out("|---|---|---|")
  for _, s in ipairs(summary) do
    out(string.format("| %s | %s | %s |", s.target, s.value, s.met and "met" or "MISSED"))
  end
end

-- Plot data and the table ---------------------------------------------------
if opt.out then
  os.execute("mkdir -p " .. sh(opt.out))
  local f = assert(io.open(opt.out .. "/threads.dat", "w"))
  f:write("# threads  capi_full_ratio capi_normal_ratio floor_full_ratio floor_normal_ratio",
    " capi_full_rate capi_normal_rate lua_full_ratio lua_normal_ratio\n")
  for _, n in ipairs(S.threads) do
    local function g(sync, api, k)
      local d = thread_data[sync] and thread_data[sync][api] and thread_data[sync][api][n]
      return d and d[k] or 0 / 0
    end
    f:write(string.format("%d %.4f %.4f %.4f %.4f %.1f %.1f %.4f %.4f\n", n, g("full", "capi", "ratio"),
      g("normal", "capi", "ratio"), g("full", "floor", "ratio"), g("normal", "floor", "ratio"),
      g("full", "capi", "rate"), g("normal", "capi", "rate"), g("full", "lua", "ratio"),
      g("normal", "lua", "ratio")))
  end
  f:close()
  f = assert(io.open(opt.out .. "/claim_next.dat", "w"))
  f:write("# pending  us/op: floor_full capi_full handle_full floor_normal capi_normal handle_normal",
    " luasql_full luasql_normal\n")
  for _, size in ipairs(S.sizes) do
    local function g(sync, api)
      local d = claim_next_data[sync] and claim_next_data[sync][size]
      return d and d[api] and d[api] * 1e6 or 0 / 0
    end
    f:write(string.format("%d %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f\n", size,
      g("full", "floor (raw SQLite, C)"), g("full", "C API"), g("full", "Lua handle"),
      g("normal", "floor (raw SQLite, C)"), g("normal", "C API"), g("normal", "Lua handle"),
      g("full", "LuaSQL (one connection)"), g("normal", "LuaSQL (one connection)")))
  end
  f:close()
end

out("")
out(string.format("Load average at the end (1, 5, 15 min): %s", capture("cut -d' ' -f1-3 /proc/loadavg")))
out("")
out(string.format("bench: done in %.0f s", clock() - t_start))
if opt.out then
  local f = assert(io.open(opt.out .. "/table.md", "w"))
  f:write(table.concat(printed, "\n"), "\n")
  f:close()
end
