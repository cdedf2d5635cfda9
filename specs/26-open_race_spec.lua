-- specs/26-open_race_spec.lua: opening while others open or write.
--
-- Many connections open the same brand-new file, or an empty 0-byte file
-- (as os.tmpname() leaves it), at the same moment, from threads and from
-- processes, through lease.open and the path functions.  The first of them
-- switches the file to WAL and creates the table while the others read the
-- file being switched; each must wait for the others' locks up to its busy
-- timeout (10 s), as every operation does, and never fail `busy` at once.
-- Two cases make a collision certain.  Another client holds the write lock
-- of an empty file while they all open: each waits for it in its schema
-- transaction.  A lease file another client turned back to a rollback
-- journal, whose write lock that client holds: the open has no schema to
-- write, so its switch to WAL meets the lock, which SQLite reports at once
-- without calling the busy handler; the open must wait all the same.
local H = require("helpers")
local T = require("thread_helpers")
local system = require("system")

-- Under a sanitizer every connection is many times slower: fewer rounds.
local SANITIZED = os.getenv("LEASE_SANITIZED") ~= nil
local THREADS, ROUNDS = 6, SANITIZED and 10 or 100
local PROCS, PROC_ROUNDS = 4, SANITIZED and 5 or 40

-- One opener: wait for the common start, then open and enqueue through a
-- handle (even k) or through the path function (odd k).  Returns true, or
-- false and the error.  Runs in a thread or in a subprocess.
local function opener(path, start, k)
  local lease = require("lease")
  local sys = require("system")
  while sys.gettime() < start do end
  return pcall(function()
    if k % 2 == 0 then
      local db = lease.open(path)
      db:enqueue("job" .. k)
      db:close()
    else
      lease.enqueue(path, "job" .. k)
    end
  end)
end

-- A fresh path for round r: absent for odd rounds, an empty file for even.
local function round_path(r)
  local path = H.path("race")
  if r % 2 == 0 then H.write(path, "") end
  return path
end

local function remove(path)
  os.remove(path); os.remove(path .. "-wal"); os.remove(path .. "-shm")
end

-- Another client (the sqlite3 tool) takes the write lock of path and keeps
-- it until "COMMIT;" is written to the returned pipe.  Returns once it holds
-- the lock (it touches path .. ".held" after BEGIN IMMEDIATE).
local function hold_lock(path)
  local cli = os.getenv("LEASE_SQLITE3")
  if not cli or cli == "" then cli = "sqlite3" end
  local marker = path .. ".held"
  os.remove(marker)
  local holder = assert(io.popen(cli .. " " .. H.sh(path) .. " >/dev/null 2>&1", "w"))
  holder:write("BEGIN IMMEDIATE;\n.shell touch " .. H.sh(marker) .. "\n")
  holder:flush()
  local deadline = system.monotime() + 30
  while not H.exists(marker) do
    assert(system.monotime() < deadline, "the sqlite3 tool did not take the lock")
    H.lease.sleep(0.01)
  end
  os.remove(marker)
  return holder
end

-- Every opener enqueued its job: the file is sound and holds them all.
local function assert_all(path, n)
  local db = H.lease.open(path)
  local c = db:counts(0)
  db:close()
  assert.are.equal(n, c.total, path)
end

describe("opening at the same moment #sqlite", function()
  it("from " .. THREADS .. " threads, " .. ROUNDS .. " rounds, new and empty files: none fails", function()
    local failures = {}
    for r = 1, ROUNDS do
      local path = round_path(r)
      local start = system.gettime() + 0.01
      local ts = {}
      for k = 1, THREADS do ts[k] = T.thread.spawn(opener, path, start, k) end
      for k = 1, THREADS do
        local _, ok, err = ts[k]:join()
        if not ok then failures[#failures + 1] = ("round %d: %s"):format(r, tostring(err)) end
      end
      if #failures == 0 then assert_all(path, THREADS) end
      remove(path)
    end
    assert.are.same({}, failures)
  end)

  it("from " .. PROCS .. " processes, " .. PROC_ROUNDS .. " rounds, new and empty files: none fails", function()
    local paths = {}
    for r = 1, PROC_ROUNDS do paths[r] = round_path(r) end
    local start, gap = system.gettime() + 1.0, 0.05
    -- Each process opens paths[r] at start + r * gap, as do the others.
    local list = {}
    for r, p in ipairs(paths) do list[r] = ("%q"):format(p) end
    local build = os.getenv("LEASE_BUILD_DIR") or "build"
    local pipes = {}
    for k = 1, PROCS do
      local script = H.path("proc") .. ".lua"
      H.write(script, ([[
        package.cpath = %q .. package.cpath
        local opener = (loadstring or load)(%q, "opener", "b")
        local paths, start, gap, k = {%s}, %.6f, %.3f, %d
        for r, path in ipairs(paths) do
          local ok, err = opener(path, start + r * gap, k + r)
          if not ok then print(("round %%d: %%s"):format(r, tostring(err))) end
        end
      ]]):format(build .. "/?.so;", string.dump(opener), table.concat(list, ","), start, gap, k))
      pipes[k] = { script = script, p = assert(io.popen(T.lua() .. " " .. H.sh(script) .. " 2>&1")) }
    end
    local out = {}
    for k = 1, PROCS do
      local text = pipes[k].p:read("*a")
      local ok = pipes[k].p:close()
      os.remove(pipes[k].script)
      if text ~= "" or not ok then out[#out + 1] = ("process %d: %s"):format(k, text) end
    end
    assert.are.same({}, out)
    for r = 1, PROC_ROUNDS do
      assert_all(paths[r], PROCS)
      remove(paths[r])
    end
  end)
  it("while another client holds the write lock of an empty file: all wait for it", function()
    local path = round_path(2)
    local holder = hold_lock(path)
    local ts = {}
    for k = 1, THREADS do
      ts[k] = T.thread.spawn(function(p, k_)
        local lease = require("lease")
        local sys = require("system")
        local ok, err = pcall(function()
          if k_ % 2 == 0 then
            local db = lease.open(p)
            db:enqueue("job" .. k_)
            db:close()
          else
            lease.enqueue(p, "job" .. k_)
          end
        end)
        return ok, err, sys.monotime()
      end, path, k)
    end
    H.lease.sleep(0.3)
    local released = system.monotime()
    holder:write("COMMIT;\n")
    holder:close()
    local failures = {}
    for k = 1, THREADS do
      local _, ok, err, finished = ts[k]:join()
      if not ok then failures[#failures + 1] = tostring(err) end
      -- none got past the lock before the holder let it go
      if ok and finished < released then
        failures[#failures + 1] = ("opener %d finished %.3f s before the lock was released"):format(k, released - finished)
      end
    end
    assert.are.same({}, failures)
    assert_all(path, THREADS)
    remove(path)
  end)

  it("a lease file turned back to a rollback journal, its write lock held: the switch to WAL waits for it", function()
    local path = round_path(1)
    local db = H.lease.open(path)
    assert(db:enqueue("before"))
    db:close()
    assert.are.equal("delete\n", H.sqlite3(path, "PRAGMA journal_mode=DELETE"))
    local holder = hold_lock(path)
    local t = T.thread.spawn(function(p)
      local lease = require("lease")
      local sys = require("system")
      local started = sys.monotime()
      local ok, err = pcall(function()
        local h = lease.open(p)
        h:enqueue("after")
        h:close()
      end)
      return ok, err, started, sys.monotime()
    end, path)
    H.lease.sleep(0.3)
    local released = system.monotime()
    holder:write("COMMIT;\n")
    holder:close()
    local _, ok, err, started, finished = t:join()
    assert.is_true(ok, tostring(err))
    -- the open began while the lock was held, and ended after it was let go
    assert.is_true(started < released - 0.1, ("opened %.3f s after the lock was released"):format(started - released))
    assert.is_true(finished >= released, ("opened %.3f s before the lock was released"):format(released - finished))
    assert.are.equal("wal\n", H.sqlite3(path, "PRAGMA journal_mode"))
    assert_all(path, 2)
    remove(path)
  end)

  it("raises busy once the busy timeout ran out, not before", function()
    local path = round_path(2)
    local holder = hold_lock(path)
    local t0 = system.monotime()
    local ok, err = pcall(H.lease.open, path, { busy_timeout = 0.3 })
    local waited = system.monotime() - t0
    holder:write("COMMIT;\n")
    holder:close()
    assert.is_false(ok)
    assert.matches("%[busy%]", err)
    assert.is_true(waited >= 0.29, ("raised after %.3f s"):format(waited))
    remove(path)
  end)
end)
