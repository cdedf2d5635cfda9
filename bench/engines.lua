-- bench/engines.lua: SQLite and PostgreSQL side by side, in one run,
-- through the same Lua handle API.
--
-- Usage (from the source tree, after a build with libpq):
--   scripts/pg-cluster run auto -- lua5.4 bench/engines.lua [--reps 5] [--n 2000]
--   lua5.4 bench/engines.lua --pg CONNINFO [--build build] [--reps 5] [--n 2000]
--     [--engines pg] [--workloads chain,many100,enqueue]
-- --engines (sqlite, pg) and --workloads (cycle, next1, next4, chain,
-- many100, enqueue, enqueue_data, batch) keep the columns and rows named.
--
-- Workloads: cycle (enqueue + claim + complete, one handle), claim_next(1)
-- + complete with 1 and 4 threads (lease.thread, a handle each), a
-- complete_claim_next loop (one handle), claim_next(100) + complete_many of
-- the 100 (one handle), enqueue_many in calls of 1000 alone (ids, and
-- entries with data), and batches of
-- 1000 (enqueue_many, claim_next(1000), complete_many).  Each
-- runs at both durability settings: SQLite synchronous full / normal,
-- PostgreSQL synchronous_commit on / off.  Within a repetition every
-- variant runs once, in an order that rotates between repetitions; the
-- table holds medians.  PostgreSQL is reached through whatever CONNINFO
-- names (the throwaway cluster: a Unix socket, fsync off, so its "on" rows
-- measure the commit path but not the disk's flush).  Asserts no time.
local opt = { reps = 5, n = 2000, build = "build", pg = os.getenv("LEASE_TEST_PG") }
local words = { pg = true, build = true, engines = true, workloads = true }
do
  local i = 1
  while arg[i] do
    local k, v = arg[i]:match("^%-%-(%w+)$"), arg[i + 1]
    if not k or v == nil then error("bench/engines.lua: bad argument " .. tostring(arg[i])) end
    opt[k] = words[k] and v or assert(tonumber(v), arg[i])
    i = i + 2
  end
end
assert(opt.pg and opt.pg ~= "", "bench/engines.lua: give --pg CONNINFO or set LEASE_TEST_PG")
package.cpath = opt.build .. "/?.so;" .. package.cpath
local lease = require("lease")
local thread = require("lease.thread")

local tmp = os.getenv("TMPDIR") or "/tmp"
-- the server's own psql when scripts/pg-cluster says which
local PSQL = os.getenv("LEASE_PSQL") or "psql"
local serial = 0

-- A fresh database of engine `eng` ("sqlite" or "pg"): a file, or a schema.
local function fresh(eng)
  serial = serial + 1
  if eng == "sqlite" then
    local p = ("%s/lease-engines-%d-%d.db"):format(tmp, os.time(), serial)
    os.remove(p); os.remove(p .. "-wal"); os.remove(p .. "-shm")
    return p
  end
  local schema = ("bench_%d_%d"):format(os.time(), serial)
  assert(os.execute(PSQL .. " -X -q -d '" .. opt.pg .. "' -c 'SET client_min_messages = warning'"
    .. " -c 'DROP SCHEMA IF EXISTS " .. schema .. " CASCADE; CREATE SCHEMA " .. schema .. "' >/dev/null"))
  return opt.pg .. " options='-csearch_path=" .. schema .. "'"
end

-- Remove what fresh made.
local function drop(eng, p)
  if eng == "sqlite" then
    os.remove(p); os.remove(p .. "-wal"); os.remove(p .. "-shm")
  else
    local schema = p:match("search_path=([%w_]+)")
    os.execute(PSQL .. " -X -q -d '" .. opt.pg .. "' -c 'SET client_min_messages = warning'"
      .. " -c 'DROP SCHEMA " .. schema .. " CASCADE' >/dev/null")
  end
end

-- cycle: n x (enqueue, claim, complete) on one handle; returns cycles/s.
local function cycle(path, sync, n)
  local db = lease.open(path, { synchronous = sync })
  local t0 = lease.now()
  for i = 1, n do
    local id = "c" .. i
    db:enqueue(id)
    local f = assert(db:claim(id, "w", 1, 1e9))
    assert(db:complete(id, "w", f, 1, "ok"))
  end
  local dt = lease.now() - t0
  db:close()
  return n / dt
end

-- One thread of the claim_next workload: claim one job, complete it, until
-- the queue is empty.  Runs in its own lua_State: everything as arguments.
local function next_worker(path, sync, owner, start)
  local l = require("lease")
  local db = l.open(path, { synchronous = sync })
  start:wait()
  local done = 0
  while true do
    local id, f = db:claim_next(owner, 1, 1e9)
    if not id then break end
    assert(db:complete(id, owner, f, 1, "ok"))
    done = done + 1
  end
  db:close()
  return done
end

-- claim_next(1) + complete over n jobs by `threads` threads; jobs/s.
local function claim_next(path, sync, n, threads)
  local db = lease.open(path, { synchronous = sync })
  local ids = {}
  for i = 1, n do ids[i] = ("n%06d"):format(i) end
  db:enqueue_many(ids)
  local start = thread.barrier(threads + 1)
  local ts = {}
  for k = 1, threads do ts[k] = thread.spawn(next_worker, path, sync, "w" .. k, start) end
  start:wait()
  local t0 = lease.now()
  local total = 0
  for k = 1, threads do
    local ok, done = ts[k]:join()
    assert(ok, done)
    total = total + done
  end
  local dt = lease.now() - t0
  assert(total == n and db:counts(1).done == n, "claim_next: not every job done once")
  db:close()
  return n / dt
end

-- complete_claim_next over n jobs, one handle: each result stored and the
-- next job claimed in one call; jobs/s.
local function chain(path, sync, n)
  local db = lease.open(path, { synchronous = sync })
  local ids = {}
  for i = 1, n do ids[i] = ("k%06d"):format(i) end
  db:enqueue_many(ids)
  local t0 = lease.now()
  local done, id, f = 0, db:claim_next("w", 1, 1e9)
  while id do
    local stored, why
    stored, why, id, f = db:complete_claim_next(id, "w", f, 1, nil, 1e9)
    assert(stored, why)
    done = done + 1
  end
  local dt = lease.now() - t0
  assert(done == n, "chain: not every job done once")
  db:close()
  return n / dt
end

-- claim_next(100) then complete_many of the 100 over n jobs, one handle;
-- jobs/s.
local function many100(path, sync, n)
  local db = lease.open(path, { synchronous = sync })
  local ids = {}
  for i = 1, n do ids[i] = ("m%06d"):format(i) end
  db:enqueue_many(ids)
  local t0 = lease.now()
  local done = 0
  while true do
    local got = db:claim_next("w", 1, 1e9, 100)
    if #got == 0 then break end
    for _, j in ipairs(got) do j.result = nil end
    assert(db:complete_many("w", 1, got) == true)
    done = done + #got
  end
  local dt = lease.now() - t0
  assert(done == n, "many100: not every job done once")
  db:close()
  return n / dt
end

-- enqueue_many in calls of 1000 ids (data: entries with a payload and a
-- priority), n jobs in all; jobs/s.
local function enqueue(path, sync, n, data)
  local db = lease.open(path, { synchronous = sync })
  local calls = {}
  for c = 1, math.max(1, n // 1000) do
    local ids = {}
    for i = 1, 1000 do
      local id = ("e%d-%d"):format(c, i)
      ids[i] = data and { id = id, payload = "p" .. i, priority = i % 3 } or id
    end
    calls[c] = ids
  end
  local t0 = lease.now()
  for _, ids in ipairs(calls) do db:enqueue_many(ids) end
  local dt = lease.now() - t0
  db:close()
  return #calls * 1000 / dt
end

-- batches of 1000: enqueue_many, claim_next(1000), complete_many; jobs/s.
local function batch(path, sync, n)
  local db = lease.open(path, { synchronous = sync })
  local size, rounds = 1000, math.max(1, n // 1000)
  local t0 = lease.now()
  for r = 1, rounds do
    local ids = {}
    for i = 1, size do ids[i] = ("b%d-%d"):format(r, i) end
    db:enqueue_many(ids)
    local jobs = db:claim_next("w", 1, 1e9, size)
    local items = {}
    for i, j in ipairs(jobs) do items[i] = { id = j.id, fence = j.fence, result = "ok" } end
    assert(db:complete_many("w", 1, items) == true)
  end
  local dt = lease.now() - t0
  db:close()
  return rounds * size / dt
end

local engines = {
  { eng = "sqlite", sync = "full", col = "SQLite full" },
  { eng = "sqlite", sync = "normal", col = "SQLite normal" },
  { eng = "pg", sync = "full", col = "PostgreSQL sync on" },
  { eng = "pg", sync = "normal", col = "PostgreSQL sync off" },
}
local workloads = {
  { key = "cycle", name = "cycle (enqueue+claim+complete), cycles/s", run = function(p, s) return cycle(p, s, opt.n) end },
  { key = "next1", name = "claim_next(1)+complete, 1 thread, jobs/s", run = function(p, s) return claim_next(p, s, opt.n, 1) end },
  { key = "next4", name = "claim_next(1)+complete, 4 threads, jobs/s", run = function(p, s) return claim_next(p, s, opt.n, 4) end },
  { key = "chain", name = "complete_claim_next loop, 1 handle, jobs/s", run = function(p, s) return chain(p, s, opt.n) end },
  { key = "many100", name = "claim_next(100)+complete_many, 1 handle, jobs/s", run = function(p, s) return many100(p, s, opt.n * 5) end },
  { key = "enqueue", name = "enqueue_many in calls of 1000, jobs/s", run = function(p, s) return enqueue(p, s, opt.n * 5) end },
  { key = "enqueue_data", name = "enqueue_many with payloads in calls of 1000, jobs/s",
    run = function(p, s) return enqueue(p, s, opt.n * 5, true) end },
  { key = "batch", name = "batches of 1000, jobs/s", run = function(p, s) return batch(p, s, opt.n * 5) end },
}

-- Keep the engines and workloads a comma list names (--engines, --workloads).
local function keep(list, names, field)
  if not names then return list end
  local want, out = {}, {}
  for w in names:gmatch("[^,]+") do want[w] = true end
  for _, x in ipairs(list) do if want[x[field]] then out[#out + 1] = x end end
  assert(#out > 0, "bench/engines.lua: nothing left of " .. names)
  return out
end
engines = keep(engines, opt.engines, "eng")
workloads = keep(workloads, opt.workloads, "key")

local results = {}   -- workload -> column -> { rates }
for r = 1, opt.reps do
  for k = 0, #engines - 1 do
    local e = engines[(k + r - 1) % #engines + 1]
    for _, w in ipairs(workloads) do
      local p = fresh(e.eng)
      local rate = w.run(p, e.sync)
      drop(e.eng, p)
      results[w.name] = results[w.name] or {}
      results[w.name][e.col] = results[w.name][e.col] or {}
      table.insert(results[w.name][e.col], rate)
    end
  end
  io.stderr:write(("engines: repetition %d of %d done\n"):format(r, opt.reps))
end

local function median(t)
  table.sort(t)
  local m = #t // 2
  return #t % 2 == 1 and t[m + 1] or (t[m] + t[m + 1]) / 2
end

print(("Medians of %d repetitions, n = %d; SQLite on a file in %s, PostgreSQL at %s."):format(
  opt.reps, opt.n, tmp, opt.pg))
print()
local head, rule = "| workload |", "|---|"
for _, e in ipairs(engines) do head, rule = head .. " " .. e.col .. " |", rule .. "---:|" end
print(head)
print(rule)
for _, w in ipairs(workloads) do
  local row = "| " .. w.name .. " |"
  for _, e in ipairs(engines) do row = row .. (" %.0f |"):format(median(results[w.name][e.col])) end
  print(row)
end
print("engines: done")
