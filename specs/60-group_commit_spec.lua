-- Group commit: handles of one process writing the same file share a
-- transaction and its commit.  Each write keeps its own guarded statement
-- and its own outcome; a refused or failing write touches only its caller;
-- no caller hears of its write before the commit that stored it.
--
-- How a batch is made on purpose: another client (LuaSQL, its own
-- connection) holds the write lock; threads with their own handles queue
-- their writes one after another (each starts once the one before said it
-- is about to write, plus a pause); the first waits for the lock as the
-- leader, the others queue behind it.  When the lock is let go, the leader
-- takes all of them into one transaction.
local H = require("helpers")
local T = require("thread_helpers")
local thread = T.thread
local lease = H.lease

-- Wait `s` seconds (on a channel nobody sends to).
local function nap(s) thread.channel():recv(s) end

-- Hold the write lock of `path` through another SQLite client; returns
-- the function that lets it go (COMMIT).
local function hold_lock(path)
  local env = require("luasql.sqlite3").sqlite3()
  local con = assert(env:connect(path))
  assert(con:execute("BEGIN IMMEDIATE"))
  return function()
    assert(con:execute("COMMIT"))
    con:close()
    env:close()
  end
end

-- One queued writer (runs in its own thread): open a handle (options
-- opt), say so on `ready`, then run op = {method, args...} and return
-- pcall's results, the handle's view of the job `check` right after, and
-- the time the call took.
local function writer(path, opt, ready, op, check)
  local lease_ = require("lease")
  local unpack_ = table.unpack or unpack   -- luacheck: ignore
  local clock = require("system").monotime
  local db = lease_.open(path, opt)
  ready:send(true)
  local t0 = clock()
  local res = { pcall(db[op[1]], db, unpack_(op, 2)) }
  local took = clock() - t0
  local seen = check and db:state(check) or false
  db:close()
  return res, seen, took
end

-- Run the ops as a batch behind a held lock (see the top); returns, for
-- each op in order, { res = pcall's results, seen = state row, took = s }.
local function batch(path, ops, opts)
  local release = hold_lock(path)
  local ready = thread.channel()
  local ts = {}
  for i, op in ipairs(ops) do
    ts[i] = thread.spawn(writer, path, opts and opts[i] or {}, ready, op.call, op.check)
    assert.is_true(ready:recv(10))
    nap(0.05)   -- its write is queued before the next thread starts
  end
  nap(0.3)
  release()
  local out = {}
  for i = 1, #ts do
    local ok, res, seen, took = ts[i]:join()
    assert(ok, res)
    out[i] = { res = res, seen = seen, took = took }
  end
  return out
end

-- The frames in path's -wal (each commit appends the pages it changed).
local function wal_frames(path)
  local f = io.open(path .. "-wal", "rb")
  if not f then return 0 end
  local size = f:seek("end")
  f:close()
  if size <= 32 then return 0 end
  local page = tonumber(H.sqlite3(path, "PRAGMA page_size"):match("%d+"))
  return (size - 32) / (page + 24)
end

describe("group commit #sqlite", function()
  it("is an open option: group_commit = true or false; anything else is refused", function()
    local p = H.path("opt")
    lease.open(p, { group_commit = false }):close()
    lease.open(p, { group_commit = true }):close()
    local e = H.error_of(lease.open, p, { group_commit = "no" })
    assert.matches("group_commit must be a boolean", e, 1, true)
  end)

  it("commits writes queued behind one lock as one transaction (off: one each)", function()
    local frames = {}
    for _, on in ipairs({ true, false }) do
      local db, p = H.fresh("frames", { group_commit = on })
      local ops = {}
      for i = 1, 4 do
        assert.is_true(db:enqueue("j" .. i))
        ops[i] = { call = { "claim", "j" .. i, "w", 1, 100 } }
      end
      -- the clock mark stored first, so that no claim below moves it
      assert.are.same({ nil, "missing" }, { db:claim("none", "w", 1, 100) })
      local before = wal_frames(p)
      local opts = { { group_commit = on }, { group_commit = on }, { group_commit = on },
                     { group_commit = on } }
      local out = batch(p, ops, opts)
      for i = 1, 4 do assert.are.same({ true, 1 }, out[i].res) end
      frames[on] = wal_frames(p) - before
      db:close()
    end
    -- the four claims change the same pages: once in one transaction,
    -- four times in four
    assert.is_true(frames[true] > 0)
    assert.is_true(frames[false] >= 4 * frames[true],
      ("frames: %s together, %s apart"):format(frames[true], frames[false]))
  end)

  it("never shares a transaction between handles of different synchronous settings", function()
    local frames = {}
    for _, mixed in ipairs({ false, true }) do
      local db, p = H.fresh("sync")
      assert.is_true(db:enqueue("a"))
      assert.is_true(db:enqueue("b"))
      assert.are.same({ nil, "missing" }, { db:claim("none", "w", 1, 100) })
      local before = wal_frames(p)
      local out = batch(p, { { call = { "claim", "a", "w", 1, 100 } },
                             { call = { "claim", "b", "w", 1, 100 } } },
                        { { synchronous = "full" }, { synchronous = mixed and "normal" or "full" } })
      assert.are.same({ true, 1 }, out[1].res)
      assert.are.same({ true, 1 }, out[2].res)
      frames[mixed] = wal_frames(p) - before
      db:close()
    end
    assert.is_true(frames[true] >= 2 * frames[false],
      ("frames: %s same setting, %s mixed"):format(frames[false], frames[true]))
  end)

  it("never lends a writable connection to a read-only handle", function()
    local db, p = H.fresh("ro")
    assert.is_true(db:enqueue("a"))
    local before = H.snapshot(p)
    local out = batch(p, { { call = { "claim", "a", "w", 1, 100 } },
                           { call = { "enqueue", "ro-job" } } },
                      { {}, { readonly = true } })
    assert.are.same({ true, 1 }, out[1].res)
    assert.is_false(out[2].res[1])
    assert.matches("%[readonly%]", out[2].res[2])
    local after = H.snapshot(p)
    assert.are.equal(1, #after)
    assert.are_not.equal(before[1], after[1])
    db:close()
  end)

  it("gives a refusal and a failing write their own outcomes; the others in the batch commit", function()
    local db, p = H.fresh("mixed")
    local fence = {}
    for i = 1, 5 do
      local id = "g" .. i
      assert.is_true(db:enqueue(id))
      fence[i] = db:claim(id, "w", 1, 1e6)
    end
    assert.is_true(db:enqueue("bad"))
    -- another client's row the engine cannot honour: until is text, so the
    -- job is blocked and completing it fails (not a refusal)
    H.sqlite3(p, "UPDATE jobs SET owner = 'w', fence = 7, until = 'x' WHERE id = 'bad'")
    local before = H.snapshot(p)
    local out = batch(p, {
      { call = { "complete", "g1", "w", fence[1], 2, "r1" }, check = "g1" },
      { call = { "complete", "g2", "w", fence[2] + 1, 2, "r2" }, check = "g2" },
      { call = { "claim", "g5", "other", 2, 5 }, check = "g5" },
      { call = { "complete", "g4", "w", fence[4], 2, "r4" }, check = "g4" },
      -- g3 is stored before bad fails: the failure must undo it
      { call = { "complete_many", "w", 2, { { id = "g3", fence = fence[3], result = "r3" },
                                            { id = "bad", fence = 7 } } }, check = "g3" },
      { call = { "enqueue", "new" }, check = "new" },
    })
    assert.are.same({ true, true }, out[1].res)
    assert.are.same({ true, false, "stale_fence" }, out[2].res)
    assert.are.same({ true, nil, "held" }, { out[3].res[1], out[3].res[2], out[3].res[3] })
    assert.are.same({ true, true }, out[4].res)
    assert.is_false(out[5].res[1])
    assert.matches("^lease%.complete_many: cannot write to this job: its stored until is not a number",
      out[5].res[2])
    assert.are.same({ true, true }, out[6].res)
    -- each caller saw its own outcome on its own handle at once
    assert.is_true(out[1].seen.done)
    assert.is_false(out[2].seen.done)
    assert.is_true(out[4].seen.done)
    assert.is_false(out[5].seen.done)
    assert.is_table(out[6].seen)
    -- in the file: g1 and g4 done, new added; g2, g3, g5 and bad as they were
    local after = H.snapshot(p)
    assert.are.equal("'g1'|'w'|1000001.0|1|'r1'|1", after[1])
    assert.are.equal(before[2], after[2])
    assert.are.equal(before[3], after[3])
    assert.are.equal("'g4'|'w'|1000001.0|1|'r4'|1", after[4])
    assert.are.equal(before[5], after[5])
    assert.are.equal(before[6], after[6])
    assert.are.equal("'new'|NULL|0.0|0|NULL|0", after[7])
    db:close()
  end)

  it("gives a follower busy when its own busy timeout runs out while it is queued", function()
    local db, p = H.fresh("busy")
    assert.is_true(db:enqueue("a"))
    assert.is_true(db:enqueue("b"))
    local before = H.snapshot(p)
    local release = hold_lock(p)
    local ready = thread.channel()
    local leader = thread.spawn(writer, p, { busy_timeout = 20 }, ready,
                                { "claim", "a", "w", 1, 100 }, "a")
    assert.is_true(ready:recv(10))
    nap(0.1)
    local follower = thread.spawn(writer, p, { busy_timeout = 0.2 }, ready,
                                  { "claim", "b", "w", 1, 100 }, "b")
    assert.is_true(ready:recv(10))
    local ok, res, _, took = follower:join()
    assert.is_true(ok)
    assert.is_false(res[1])
    assert.matches("^lease%.claim: database is locked %[busy%]", res[2])
    assert.is_true(took >= 0.15 and took < 5, "took " .. took)
    assert.are.same(before, H.snapshot(p))
    release()
    local ok2, res2 = leader:join()
    assert.is_true(ok2)
    assert.are.same({ true, 1 }, res2)
    db:close()
  end)

  it("gives every caller of a batch the failure of its COMMIT, and stores none of them", function()
    -- a child process under a file-size limit: the -wal cannot grow past it,
    -- so the COMMIT of the batch fails (full); with room, the same handles go on
    local p = H.path("full")
    local db = lease.open(p)
    for i = 1, 4 do assert.is_true(db:enqueue("f" .. i)) end
    db:close()
    local before = H.snapshot(p)
    local code = [==[
local lease = require("lease")
local thread = require("lease.thread")
local path = arg[1]
local f = assert(io.open("/proc/self/stat"))
local pid = f:read("*l"):match("^(%d+)")
f:close()
local function writer(path_, ready, go, id)
  local lease_ = require("lease")
  local db = lease_.open(path_)
  go:recv(10)
  ready:send(true)
  local res = { pcall(db.complete, db, id, "w", 1, 2, ("x"):rep(40000)) }
  ready:recv(10)   -- space returned
  local after = { pcall(db.enqueue, db, id .. "-later") }
  db:close()
  return res, after
end
local env = require("luasql.sqlite3").sqlite3()
local con = assert(env:connect(path))
-- the writers claim first, with room; then the limit, then the batch
local db = lease.open(path)
for i = 1, 4 do assert(db:claim("f" .. i, "w", 1, 1e6)) end
local size = 0
for _, s in ipairs({ "", "-wal" }) do
  local h = io.open(path .. s, "rb")
  if h then size = math.max(size, h:seek("end")); h:close() end
end
os.execute("prlimit --pid " .. pid .. " --fsize=" .. (size + 100000) .. ":unlimited")
assert(con:execute("BEGIN IMMEDIATE"))
local ready, go, ts = thread.channel(), {}, {}
for i = 1, 4 do
  go[i] = thread.channel()
  ts[i] = thread.spawn(writer, path, ready, go[i], "f" .. i)
  go[i]:send(true)
  ready:recv(10)
  ready:recv(0.05)
end
ready:recv(0.3)
assert(con:execute("COMMIT"))
con:close(); env:close()
ready:recv(1)
os.execute("prlimit --pid " .. pid .. " --fsize=unlimited:unlimited")
for i = 1, 4 do ready:send(true) end
for i = 1, 4 do
  local ok, res, after = ts[i]:join()
  assert(ok, res)
  print("complete", i, tostring(res[1]), tostring(res[2]))
  print("after", i, tostring(after[1]), tostring(after[2]))
end
db:close()
]==]
    local build = os.getenv("LEASE_BUILD_DIR") or "build"
    local script = H.path("full") .. ".lua"
    H.write(script, "package.cpath = " .. string.format("%q", build .. "/?.so;")
      .. " .. package.cpath\n" .. code)
    local cmd = "trap '' XFSZ; exec " .. H.lua() .. " " .. H.sh(script) .. " " .. H.sh(p)
    local out, ok = H.capture("sh -c " .. H.sh(cmd) .. " 2>&1")
    os.remove(script)
    assert(ok, out)
    local fails = 0
    for i = 1, 4 do
      local r1, r2 = out:match("complete\t" .. i .. "\t(%S+)\t([^\n]*)")
      assert.are.equal("false", r1, out)
      assert.matches("^lease%.complete: .* %[full%]", r2)
      fails = fails + 1
      assert.are.equal("true\ttrue", out:match("after\t" .. i .. "\t([^\n]*)"), out)
    end
    assert.are.equal(4, fails)
    -- nothing of the batch stored: the jobs are as claimed, not done
    local after = H.snapshot(p)
    for i = 1, 4 do
      assert.are.equal("'f" .. i .. "'|'w'|1000001.0|1|NULL|0", after[i])
      assert.are_not.equal(before[i], after[i])
    end
  end)

  describe("many threads on one file", function()
    -- A worker: claim_next and complete until no job is left, each outcome
    -- read back at once through its own handle.  Returns the jobs it
    -- completed with their fences, and every outcome it heard before it
    -- could read it.
    local function worker(path, sync, me, start)
      local lease_ = require("lease")
      local db = lease_.open(path, { synchronous = sync })
      start:wait()
      local took, unseen = {}, {}
      while true do
        local id, fence = db:claim_next(me, 1, 1e6)
        if not id then break end
        local s = db:state(id)
        if s.owner ~= me or s.fence ~= fence then unseen[#unseen + 1] = "claim " .. id end
        assert(db:complete(id, me, fence, 2, me))
        s = db:state(id)
        if s.done ~= true or s.result ~= me then unseen[#unseen + 1] = "complete " .. id end
        took[#took + 1] = id .. "#" .. fence
      end
      db:close()
      return took, unseen
    end

    for _, sync in ipairs({ "full", "normal" }) do
      it("hands each job out once and stores every accepted complete before saying so (" .. sync .. ")", function()
        local db, p = H.fresh("many", { synchronous = sync })
        local ids = {}
        for i = 1, 400 do ids[i] = ("job-%03d"):format(i) end
        assert.are.equal(400, db:enqueue_many(ids))
        local n = 6
        local start = thread.barrier(n)
        local ts = {}
        for i = 1, n do ts[i] = thread.spawn(worker, p, sync, "w" .. i, start) end
        local seen, total = T.handed_out_once(ts)
        assert.are.equal(400, total)
        for _, id in ipairs(ids) do
          local s = db:state(id)
          assert.is_true(s.done)
          assert.are.equal(seen[id], s.result)
          assert.are.equal(seen[id], s.owner)
        end
        db:close()
      end)
    end

    it("goes on when threads end or raise with their handles left open", function()
      local db, p = H.fresh("quit")
      local ids = {}
      for i = 1, 200 do ids[i] = ("q-%03d"):format(i) end
      db:enqueue_many(ids)
      local function quitter(path, me, start, k)
        local lease_ = require("lease")
        local h = lease_.open(path)   -- never closed: the state's end collects it
        start:wait()
        for _ = 1, k do
          local id, fence = h:claim_next(me, 1, 1e6)
          if not id then break end
          assert(h:complete(id, me, fence, 2, me))
        end
        if k % 2 == 0 then error("quitting " .. me) end
        return me
      end
      local start = thread.barrier(8)
      local ts = {}
      for i = 1, 6 do ts[i] = thread.spawn(quitter, p, "q" .. i, start, i * 3) end
      for i = 7, 8 do ts[i] = thread.spawn(quitter, p, "s" .. i, start, 1000 + 1) end
      for i = 1, 8 do
        local ok, err = ts[i]:join()
        if i <= 6 and i % 2 == 0 then
          assert.is_false(ok)
          assert.matches("quitting", tostring(err))
        else
          assert.is_true(ok)
        end
      end
      -- every job was completed by someone, each once
      local c = db:counts(3)
      assert.are.equal(200, c.total)
      assert.are.equal(200, c.done)
      for _, id in ipairs(ids) do assert.are.equal(1, db:state(id).fence) end
      db:close()
    end)
  end)
end)
