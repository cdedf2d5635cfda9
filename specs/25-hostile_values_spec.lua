-- Values the engine cannot honour, written by another client or passed in
-- by a caller: the engine refuses them with a clear error, never stores
-- them half-way, and never lets them stall a queue or a pool.
local H = require("helpers")
local lease = H.lease
local pool = require("lease.pool")

-- Another client's BEFORE trigger `side` on table tbl that skips the write
-- `op` ("UPDATE", "INSERT OR UPDATE", ...) of a row when cond holds:
-- RAISE(IGNORE) on SQLite, RETURN NULL on PostgreSQL (where a quoted word
-- in cond is read as bytea).
local function skip(p, tbl, op, cond)
  if H.backend == "pg" then
    H.psql(p, "CREATE FUNCTION side() RETURNS trigger LANGUAGE plpgsql AS $$"
      .. " BEGIN IF " .. cond:gsub("'(%w+)'", "'%1'::bytea") .. " THEN RETURN NULL; END IF;"
      .. " RETURN new; END $$; CREATE TRIGGER side BEFORE " .. op .. " ON " .. tbl
      .. " FOR EACH ROW EXECUTE FUNCTION side()")
  else
    H.sqlite3(p, "CREATE TRIGGER side BEFORE " .. op .. " ON " .. tbl .. " WHEN " .. cond
      .. " BEGIN SELECT RAISE(IGNORE); END")
  end
end

-- Another client's BEFORE INSERT trigger `side` on table tbl that fails
-- every insert with message: RAISE(ABORT) on SQLite, RAISE EXCEPTION on
-- PostgreSQL (with SQLSTATE sqlstate when given).
local function abort_inserts(p, tbl, message, sqlstate)
  if H.backend == "pg" then
    H.psql(p, "CREATE FUNCTION side() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
      .. " RAISE EXCEPTION '" .. message .. "'"
      .. (sqlstate and " USING ERRCODE = '" .. sqlstate .. "'" or "") .. "; END $$;"
      .. " CREATE TRIGGER side BEFORE INSERT ON " .. tbl .. " FOR EACH ROW EXECUTE FUNCTION side()")
  else
    H.sqlite3(p, "CREATE TRIGGER side BEFORE INSERT ON " .. tbl
      .. " BEGIN SELECT RAISE(ABORT, '" .. message .. "'); END")
  end
end

-- The clock mark of database p as stored (text; "" when there is none),
-- and as a number (nil for a text that is none).
local function mark_text(p)
  return (H.sql(p, "SELECT value FROM lease_meta WHERE key = 'clock_mark'"):gsub("\n$", ""))
end
local function mark(p)
  return tonumber(mark_text(p))
end

-- Each of `calls` (functions) raises [mismatch] with `text` in its message
-- (a Lua pattern when `pattern` is true, else plain text) and leaves the
-- queue's rows of database p (H.qsnapshot) as they were.
local function refused(p, calls, text, pattern)
  local before = H.qsnapshot(p)
  for _, call in ipairs(calls) do
    local err = H.error_of(call)
    assert.truthy(err:find(text, 1, not pattern), err)
    assert.truthy(err:find("[mismatch]", 1, true), err)
    assert.are.same(before, H.qsnapshot(p))
  end
end

-- A database with a normal job "ok" and the job "bad", on which `sql` (run
-- by the sqlite3 tool, another client) then stores something odd.
local function with_bad(sql)
  local db, p = H.fresh("hostile")
  db:enqueue_many({ "ok", "bad" })
  db:close()
  H.sqlite3(p, sql)
  return p
end

describe("a job another client left unclaimable (blocked) #sqlite", function()
  local cases = {
    { "an until stored as text", "UPDATE jobs SET owner = 'A', fence = 1, until = datetime('now', '+1 hour') WHERE id = 'bad'",
      "its stored until is not a number", "mismatch" },
    { "a fence stored as 1.5", "UPDATE jobs SET fence = 1.5 WHERE id = 'bad'",
      "its stored fence is not a non-negative integer", "mismatch" },
    { "a negative fence", "UPDATE jobs SET fence = -1 WHERE id = 'bad'",
      "its stored fence is not a non-negative integer", "mismatch" },
    { "a fence at 2^63-1", "UPDATE jobs SET fence = 9223372036854775807 WHERE id = 'bad'",
      "its fence is at its maximum", "range" },
  }
  for _, c in ipairs(cases) do
    it("with " .. c[1] .. " is refused, reported, counted and skipped", function()
      local p = with_bad(c[2])
      local db = lease.open(p)
      finally(function() db:close() end)
      local before = H.snapshot(p)
      local err = H.error_of(db.claim, db, "bad", "B", 1e15, 10)
      assert.truthy(err:find("lease.claim: cannot claim this job: " .. c[3], 1, true), err)
      assert.truthy(err:find("[" .. c[4] .. "]", 1, true), err)
      if H.integers or c[4] ~= "range" then
        local s = db:state("bad")
        assert.truthy(s.blocked and s.blocked:find(c[3], 1, true), tostring(s.blocked))
        assert.are.same({ "bad" }, { db:jobs("blocked", 1e15)[1].id })
      else
        -- a Lua without integers (5.1, LuaJIT) cannot hold the stored fence:
        -- reading the row says so instead of giving a rounded fence
        for _, read in ipairs({ function() return db:state("bad") end,
                                function() return db:jobs("blocked", 1e15) end }) do
          local e = H.error_of(read)
          assert.truthy(e:find("fence 9223372036854775807 is above 2^53", 1, true), e)
        end
      end
      assert.are.same({ total = 2, ready = 1, held = 0, done = 0, blocked = 1 }, H.counts(db:counts(1e15)))
      assert.are.equal(0, #db:jobs("held", 1e15))
      -- claim_next takes the good job and never the blocked one
      assert.are.same({ "ok", 1 }, { H.two(db:claim_next("B", 1e15, 10)) })
      assert.are.same({ nil, "empty" }, { H.two(db:claim_next("B", 1e15, 10)) })
      assert.are.same(before[2], H.snapshot(p)[2])
    end)
  end

  it("with an until stored as text takes no renew or complete, even from its owner", function()
    local p = with_bad("UPDATE jobs SET owner = 'A', fence = 1, until = 'tomorrow' WHERE id = 'bad'")
    local db = lease.open(p)
    finally(function() db:close() end)
    local s = db:state("bad")
    assert.is_true(s["until"] ~= s["until"])   -- NaN: not a number, never a made-up one
    for _, call in ipairs({
      function() return db:renew("bad", "A", 1, 1e15, 10) end,
      function() return db:complete("bad", "A", 1, 1e15, "late") end,
    }) do
      local err = H.error_of(call)
      assert.truthy(err:find("cannot write to this job: its stored until is not a number [mismatch]", 1, true), err)
    end
    assert.is_nil(db:state("bad").result)
    -- a release repairs it: until = 0, the fence kept, claimable again
    assert.is_true(db:release("bad", "A", 1))
    assert.is_nil(db:state("bad").blocked)
    assert.are.equal(2, db:claim("bad", "B", 0, 10))
  end)

  it("with an id that is NULL or empty is never handed out", function()
    local db, p = H.fresh("ids")
    db:enqueue("ok")
    db:close()
    H.sqlite3(p, "INSERT INTO jobs(id) VALUES (NULL); INSERT INTO jobs(id) VALUES ('');"
      .. " INSERT INTO jobs(id) VALUES (x'00ff')")
    db = lease.open(p)
    assert.are.same({ total = 4, ready = 1, held = 0, done = 0, blocked = 3 }, H.counts(db:counts(0)))
    local b = db:claim_next("w", 0, 10, 10)
    assert.are.same({ { id = "ok", fence = 1 } }, H.idfence(b))
    db:close()
  end)

  it("does not keep a pool waiting", function()
    local p = with_bad("UPDATE jobs SET fence = 1.5 WHERE id = 'bad'")
    local w = H.file("w") .. ".lua"
    H.write(w, "return function(job) return 'done' end\n")
    -- in a child process with a deadline: a pool that waits forever fails here
    local status, out, err = H.host("pool -j 2 --ttl 5 " .. H.sh(w) .. " " .. H.sh(p), nil, 60)
    assert.are.equal("", err)
    assert.are.equal(0, status, out)
    assert.truthy(out:find("jobs done          1\n", 1, true), out)
    assert.truthy(out:find("blocked jobs       1\n", 1, true), out)
  end)
end)

describe("a done or paused another client stored as a value not 0 or 1 #sqlite", function()
  -- the engine's SQL decides on `done <> 0` and `paused <> 0`: a text or a
  -- blob is never equal to 0, so what every read returns must say the same
  local odd = { { "0.5", "0.5" }, { "'yes'", "a text" }, { "x'01'", "a blob" } }

  for _, v in ipairs(odd) do
    it("reads a done stored as " .. v[2] .. " as done, as status and claim do", function()
      local p = with_bad("UPDATE jobs SET done = " .. v[1] .. " WHERE id = 'bad'")
      local db = lease.open(p)
      finally(function() db:close() end)
      local s = db:state("bad", 1)
      assert.are.same({ true, "completed" }, { s.done, s.status })
      assert.are.same({ nil, "done" }, { H.two(db:claim("bad", "W", 1, 10)) })
      local listed = db:jobs("done", 1)
      assert.are.same({ "bad", true }, { listed[1].id, listed[1].done })
      assert.is_false(db:state("ok", 1).done)
    end)

    it("reads a paused stored as " .. v[2] .. " as paused, as the wait does", function()
      local db, p = H.fresh("paused")
      db:enqueue("j", { queue = "q" })
      db:pause("q")
      db:close()
      H.sqlite3(p, "UPDATE lease_queues SET paused = " .. v[1] .. " WHERE name = 'q'")
      db = lease.open(p)
      finally(function() db:close() end)
      assert.are.same({ "q", true }, { db:queues(1)[1].name, db:queues(1)[1].paused })
      assert.are.same({ nil, "paused" }, { H.two(db:claim_next("w", 1, 10, { queue = "q" })) })
      assert.are.equal(0, db:state("j").fence)
    end)
  end
end)

describe("a write another client's trigger skips #sqlite", function()
  -- a trigger RAISE(IGNORE) leaves the row as it was: the call raises
  -- [mismatch] and the transaction rolls back, as complete and claim do
  local function with_trigger(sql, prepare)
    local db, p = H.fresh("skipped")
    prepare(db)
    db:close()
    H.sqlite3(p, sql)
    db = lease.open(p)
    return db, p
  end
  local skip_done = "CREATE TRIGGER side BEFORE UPDATE OF done ON jobs BEGIN SELECT RAISE(IGNORE); END"
  local skip_queue = "CREATE TRIGGER side BEFORE UPDATE ON lease_queue BEGIN SELECT RAISE(IGNORE); END"

  it("refuses a retry of a completed job whose reopen is skipped", function()
    local db, p = with_trigger(skip_done, function(d)
      d:enqueue("d")
      d:complete("d", "w", d:claim("d", "w", 1, 10), 2, "r")
    end)
    finally(function() db:close() end)
    refused(p, { function() return db:retry("d", 20) end }, "retry's reopen of d changed no row")
    assert.are.same({ true, "completed" }, { db:state("d", 20).done, db:state("d", 20).status })
  end)

  it("refuses a retry of an expired lease whose reopen is skipped (its owner stays)", function()
    local db, p = with_trigger(skip_done, function(d)
      d:enqueue("d")
      d:claim("d", "w", 1, 10)
    end)
    finally(function() db:close() end)
    refused(p, { function() return db:retry("d", 20) end }, "retry's reopen of d changed no row")
    assert.are.equal("w", db:state("d", 20).owner)
  end)

  it("refuses a retry whose queue row another client's trigger ends again", function()
    local db, p = with_trigger("CREATE TRIGGER side AFTER UPDATE ON lease_queue WHEN new.state = 0"
      .. " BEGIN UPDATE lease_queue SET state = 1 WHERE id = new.id; END", function(d)
      d:enqueue("d")
      d:complete("d", "w", d:claim("d", "w", 1, 10), 2, "r")
    end)
    finally(function() db:close() end)
    refused(p, { function() return db:retry("d", 20) end }, "retry of d left it ended in its queue")
    assert.are.same({ true, "completed" }, { db:state("d", 20).done, db:state("d", 20).status })
  end)

  it("refuses a cancel whose queue row is not ended", function()
    local db, p = with_trigger(skip_queue, function(d) d:enqueue("d") end)
    finally(function() db:close() end)
    refused(p, { function() return db:cancel("d", 20) end }, "cancel of d changed no row")
    assert.are.equal("available", db:state("d", 20).status)
  end)

  it("refuses an enqueue whose job data is not stored", function()
    local db, p = with_trigger(skip_queue, function(d) d:enqueue("d") end)
    finally(function() db:close() end)
    refused(p, { function() return db:enqueue("e", { payload = "x" }) end },
      "enqueue's queue data of e changed no row")
    assert.is_nil(db:state("e"))
  end)
end)

describe("a claim or discard another client's trigger skips", function()
  -- A BEFORE UPDATE trigger another client defined skips the write of job
  -- b (RAISE(IGNORE) on SQLite, RETURN NULL on PostgreSQL), or on
  -- lease_errors the insert of b's error record.  Every claim
  -- path raises [mismatch] naming b and stores nothing; none loops on b.
  local T = 1000
  -- x held by w (fence 1), b (`tries` attempts, its lease expired at
  -- T + 10 when lapsed), then a and c; the trigger on tbl made afterwards.
  local function setup(tbl, lapsed, tries, now)
    local db, p = H.fresh("skipclaim")
    assert.are.equal(2, db:enqueue_many({ "x", { id = "b", max_attempts = tries } }))
    assert.are.equal(1, db:claim("x", "w", T, 1000))
    if lapsed then assert.are.equal(1, db:claim("b", "old", T, 10)) end
    db:enqueue_many({ "a", "c" })
    -- the clock mark at the call's now: complete_claim_next on PostgreSQL
    -- then takes its one round trip, which commits unless a round fails
    assert.is_true(db:renew("x", "w", 1, now, 1000))
    db:close()
    if tbl == "lease_errors" then skip(p, tbl, "INSERT", "new.id = 'b'")
    else skip(p, tbl, "UPDATE", "old.id = 'b'") end
    return p
  end
  -- Each call in a child process under timeout (a call that loops on b
  -- fails here instead of hanging the suite): what it printed.
  local calls = {
    ["claim_next(3)"] = "d:claim_next('w', T, 10, 3)",
    ["claim of b"] = "d:claim('b', 'w', T, 10)",
    ["complete_claim_next"] = "d:complete_claim_next('x', 'w', 1, T, 'r', 10, { n = 3 })",
    ["complete_many_claim_next"] = "d:complete_many_claim_next('w', T, { { id = 'x', fence = 1,"
      .. " result = 'r' } }, 10, { n = 3 })",
  }
  local function run(p, call, now)
    local script = H.file("skip") .. ".lua"
    H.write(script, "package.cpath = " .. string.format("%q", package.cpath) .. "\n"
      .. "local d = require('lease').open(" .. string.format("%q", p) .. ")\n"
      .. "local T = " .. now .. "\n"
      -- a refused claim first, which reads the clock mark: complete_claim_next
      -- on PostgreSQL then tries its one round trip
      .. "assert(select(2, d:claim('x', 'z', T, 10)) == 'held')\n"
      .. "print(select(2, pcall(function() return " .. calls[call] .. " end)))\n")
    local out = H.capture("timeout 60 " .. H.lua() .. " " .. H.sh(script) .. " 2>&1")
    os.remove(script)
    return out
  end
  for _, case in ipairs({
    { "jobs", false, 1, T, "claim of b changed no row", "(the claim of b) " },
    { "jobs", true, 2, T + 100, "claim of b changed no row", "(the claim of b, its lease lapsed) " },
    { "lease_queue", true, 1, T + 100, "a claim's discard of b changed no row",
      "(the discard of b's last attempt) " },
    { "lease_errors", true, 2, T + 100, "a claim's error record of b changed no row",
      "(the error record of b's lapsed lease) " },
    { "lease_errors", true, 1, T + 100, "a claim's error record of b changed no row",
      "(the error record of b's last attempt) " },
  }) do
    local tbl, lapsed, tries, now, text, title = case[1], case[2], case[3], case[4], case[5], case[6]
    for _, call in ipairs({ "claim_next(3)", "claim of b", "complete_claim_next",
                            "complete_many_claim_next" }) do
      it(title .. call
        .. " raises [mismatch] and stores nothing", function()
        local p = setup(tbl, lapsed, tries, now)
        local before = H.qsnapshot(p)
        local out = run(p, call, now)
        assert.truthy(out:find(text, 1, true), out)
        assert.truthy(out:find("[mismatch]", 1, true), out)
        assert.are.same(before, H.qsnapshot(p))
      end)
    end
  end
end)

describe("other writes another client's trigger skips", function()
  -- the call raises [mismatch] naming what it wrote, and stores nothing;
  -- an id that is there is still "exists", a move another tick made first
  -- is still no job
  local T = 1699999980

  it("tick whose move of a due schedule is skipped", function()
    local db, p = H.fresh("skiptick")
    db:schedule("s", T, { every = 10 })
    db:schedule("t", T, { every = 10 })
    db:close()
    skip(p, "lease_schedules", "UPDATE", "old.name = 's'")
    db = lease.open(p)
    finally(function() db:close() end)
    local listed = db:schedules()
    refused(p, { function() return db:tick(T + 10) end }, "tick's move of schedule s changed no row")
    assert.are.same(listed, db:schedules())
    assert.is_nil(db:state("t@" .. (T + 10)))
  end)

  for _, case in ipairs({
    { "schedule of a new name", "INSERT", function(d) return d:schedule("s", T, { every = 5 }) end,
      "schedule of s" },
    { "schedule of a name there", "INSERT OR UPDATE", function(d) return d:schedule("t", T, { every = 5 }) end,
      "schedule of t" },
    { "unschedule", "DELETE", function(d) return d:unschedule("t") end, "unschedule of t" },
  }) do
    it(case[1] .. " whose write is skipped", function()
      local db, p = H.fresh("skipsched")
      db:schedule("t", T, { every = 10 })
      db:close()
      -- SQLite replaces a schedule by INSERT OR REPLACE, PostgreSQL upserts
      skip(p, "lease_schedules", H.backend == "pg" and case[2] or case[2]:match("^%a+"), "true")
      db = lease.open(p)
      finally(function() db:close() end)
      local listed = db:schedules()
      refused(p, { function() return case[3](db) end }, case[4] .. " changed no row")
      assert.are.same(listed, db:schedules())
    end)
  end

  it("unschedule of a name not there is still missing", function()
    local db, p = H.fresh("skipsched")
    db:close()
    skip(p, "lease_schedules", "DELETE", "true")
    db = lease.open(p)
    finally(function() db:close() end)
    assert.are.same({ false, "missing" }, { db:unschedule("t") })
  end)

  it("a claim from a queue with a rate whose count of the claims is skipped", function()
    -- the rate would count fewer claims than were made, and let more through
    local db, p = H.fresh("skiprate")
    db:enqueue_many({ { id = "a", queue = "q" }, { id = "b", queue = "q" }, { id = "x", queue = "q" } })
    db:limit("q", { rate = 5, per = 60 })
    local f = db:claim("x", "w", T, 100)
    db:close()
    skip(p, "lease_queue_claims", "INSERT", "true")
    db = lease.open(p)
    finally(function() db:close() end)
    refused(p, {
      function() return db:claim_next("w", T, 10, { queue = "q", n = 2 }) end,
      function() return db:complete_claim_next("x", "w", f, T, "r", 10, { queue = "q" }) end,
      function() return db:complete_many_claim_next("w", T, { { id = "x", fence = f } }, 10, { queue = "q" }) end,
    }, "the claims counted for the rate of queue q changed no row")
  end)

  it("fence_gate whose write of the fence is skipped, alone and inside with_lease", function()
    -- a skipped gate is no refusal: the fence it had to store is not there
    local db, p = H.fresh("skipgate")
    db:enqueue("j")
    local f = db:claim("j", "w", T, 100)
    assert.is_true(db:fence_gate("r", 5))
    db:close()
    skip(p, "lease_fences", H.backend == "pg" and "INSERT OR UPDATE" or "INSERT", "true")
    if H.backend ~= "pg" then
      H.sqlite3(p, "CREATE TRIGGER side_u BEFORE UPDATE ON lease_fences BEGIN SELECT RAISE(IGNORE); END")
    end
    db = lease.open(p)
    finally(function() db:close() end)
    local read = function()
      return H.backend == "pg" and H.psql(p, "SELECT encode(resource, 'escape'), fence FROM lease_fences")
        or H.sqlite3(p, "SELECT resource, fence FROM lease_fences")
    end
    local gates = read()
    for _, case in ipairs({
      { "r", function() return db:fence_gate("r", 7) end },
      { "r", function() return db:fence_gate("r", 5) end },   -- equal: the row it locks is not written
      { "n", function() return db:fence_gate("n", 1) end },
      { "r", function() return db:with_lease("j", "w", f, T + 1, function(tx) return tx:fence_gate("r", 6) end) end },
    }) do
      refused(p, { case[2] }, "fence_gate's fence of " .. case[1] .. " changed no row")
      assert.are.equal(gates, read())
    end
    -- a smaller fence is still refused as stale
    assert.are.same({ false, "stale_fence" }, { db:fence_gate("r", 4) })
  end)

  it("fence_gate over a fence another client stored as 7.5 or as text refuses as its upsert does #sqlite", function()
    local db, p = H.fresh("oddgate")
    assert.is_true(db:fence_gate("r", 1))
    db:close()
    H.sqlite3(p, "INSERT INTO lease_fences VALUES ('h', 7.5), ('t', 'abc')")
    db = lease.open(p)
    finally(function() db:close() end)
    local before = H.sqlite3(p, "SELECT resource, quote(fence) FROM lease_fences ORDER BY resource")
    -- 7 >= 7.5 and 20 >= 'abc' are false: refused as stale, nothing stored
    assert.are.same({ false, "stale_fence" }, { db:fence_gate("h", 7) })
    assert.are.same({ false, "stale_fence" }, { db:fence_gate("t", 20) })
    assert.are.equal(before, H.sqlite3(p, "SELECT resource, quote(fence) FROM lease_fences ORDER BY resource"))
    assert.is_true(db:fence_gate("h", 8))
    assert.are.equal("8\n", H.sqlite3(p, "SELECT quote(fence) FROM lease_fences WHERE resource = 'h'"))
  end)

  for _, case in ipairs({
    { "enqueue's dependency of c", "lease_deps", "INSERT", "true",
      function(d) return d:enqueue("c", { after = { "p" } }) end, "enqueue whose dependency" },
    { "enqueue's wait of c", "lease_queue", "UPDATE", "old.id = 'c' AND new.state = 4",
      function(d) return d:enqueue("c", { after = { "p" } }) end, "enqueue whose wait" },
    { "enqueue's wait of c", "lease_queue", "UPDATE", "old.id = 'c' AND new.state = 4",
      function(d) return d:enqueue_many({ "x", { id = "c", after = { "x" } } }) end,
      "enqueue_many whose wait" },
    { "retry's wait of w", "lease_queue", "UPDATE", "old.id = 'w' AND new.state = 4",
      function(d) return d:retry("w", T + 1) end, "retry with dependencies whose wait" },
  }) do
    it(case[6] .. " is skipped", function()
      -- a job that would not wait for its parents could run before them
      local db, p = H.fresh("skipdeps")
      db:enqueue("p")
      db:enqueue("w", { after = { "p" } })
      assert.is_true(db:cancel("w", T))
      -- the same parent listed twice stores one edge: no skipped write
      assert.is_true(db:enqueue("d", { after = { "p", "p" } }))
      db:close()
      skip(p, case[2], case[3], case[4])
      db = lease.open(p)
      finally(function() db:close() end)
      refused(p, { function() return case[5](db) end }, case[1] .. " changed no row")
      assert.are.same({ "waiting", "cancelled" }, { db:state("d", T).status, db:state("w", T).status })
    end)
  end

  it("a write with the ledger on whose event another client's trigger skips", function()
    local db, p = H.fresh("skipevent", { events = true })
    db:enqueue("a")
    db:close()
    skip(p, "lease_events", "INSERT", "true")
    db = lease.open(p, { events = true })
    finally(function() db:close() end)
    for _, c in ipairs({ { "b", function() return db:enqueue("b") end },
                         { "a", function() return db:claim("a", "w", T, 10) end },
                         { "a", function() return db:claim_next("w", T, 10) end } }) do
      refused(p, { c[2] }, "the ledger's event of " .. c[1] .. " changed no row")
    end
  end)

  for _, case in ipairs({ { "lease_queue", "UPDATE", "old.id = 'b'", "fail's queue state of b" },
                         { "lease_errors", "INSERT", "true", "fail's error record of b" } }) do
    it("fail whose " .. case[4]:match("fail's (.-) of") .. " is skipped", function()
      local db, p = H.fresh("skipfail")
      db:enqueue("b", { max_attempts = 1 })
      local f = db:claim("b", "w", T, 100)
      db:close()
      skip(p, case[1], case[2], case[3])
      db = lease.open(p)
      finally(function() db:close() end)
      refused(p, { function() return db:fail("b", "w", f, T + 1, "boom") end }, case[4] .. " changed no row")
      assert.are.same({ "running", "w" }, { db:state("b", T + 1).status, db:state("b", T + 1).owner })
    end)
  end

  it("prune whose raise of the fence floor is skipped", function()
    local db, p = H.fresh("skipfloor")
    db:enqueue_many({ "a", "b" })
    for _, id in ipairs({ "a", "b" }) do db:complete(id, "w", db:claim(id, "w", T, 10), T, "r") end
    db:close()
    if H.backend == "pg" then
      skip(p, "lease_meta", "INSERT OR UPDATE", "new.key = 'fence_floor'")
    else
      H.sqlite3(p, "CREATE TRIGGER side_i BEFORE INSERT ON lease_meta WHEN new.key = 'fence_floor'"
        .. " BEGIN SELECT RAISE(IGNORE); END; CREATE TRIGGER side_u BEFORE UPDATE ON lease_meta"
        .. " WHEN new.key = 'fence_floor' BEGIN SELECT RAISE(IGNORE); END")
    end
    db = lease.open(p)
    finally(function() db:close() end)
    refused(p, { function() return db:prune(T + 100) end }, "prune's raise of the fence floor changed no row")
    assert.are.equal("completed", db:state("a", T + 100).status)
  end)

  -- retry, cancel and the queue's settings, each with its write skipped
  for _, case in ipairs({
    { "retry of a completed job", "jobs", function(d) d:complete("d", "w", d:claim("d", "w", T, 10), T, "r") end,
      function(d) return d:retry("d", T + 1) end },
    { "retry of a completed job", "lease_queue", function(d) d:complete("d", "w", d:claim("d", "w", T, 10), T, "r") end,
      function(d) return d:retry("d", T + 1) end },
    { "retry of an expired lease", "jobs", function(d) d:claim("d", "w", T, 10) end,
      function(d) return d:retry("d", T + 100) end },
    { "retry of an expired lease", "lease_queue", function(d) d:claim("d", "w", T, 10) end,
      function(d) return d:retry("d", T + 100) end },
    { "cancel", "lease_queue", function() end, function(d) return d:cancel("d", T + 1) end },
  }) do
    it(case[1] .. " whose write of " .. case[2] .. " is skipped", function()
      local db, p = H.fresh("skipadmin")
      db:enqueue("d")
      case[3](db)
      db:close()
      skip(p, case[2], "UPDATE", "old.id = 'd'")
      db = lease.open(p)
      finally(function() db:close() end)
      refused(p, { function() return case[4](db) end }, "of d ")
    end)
  end

  it("pause, resume and limit whose settings row is skipped", function()
    local db, p = H.fresh("skipcontrol")
    db:enqueue("d", { queue = "q" })
    db:close()
    if H.backend == "pg" then
      skip(p, "lease_queues", "INSERT OR UPDATE", "true")
    else
      H.sqlite3(p, "CREATE TRIGGER side_i BEFORE INSERT ON lease_queues BEGIN SELECT RAISE(IGNORE); END;"
        .. " CREATE TRIGGER side_u BEFORE UPDATE ON lease_queues BEGIN SELECT RAISE(IGNORE); END")
    end
    db = lease.open(p)
    finally(function() db:close() end)
    refused(p, { function() return db:pause("q") end, function() return db:resume("q") end,
                 function() return db:limit("q", { concurrency = 2 }) end },
      "the settings of queue q changed no row")
    assert.are.same({ false }, { db:queues(1)[1].paused })
    assert.are.same({ "d", 1 }, { H.two(db:claim_next("w", 1, 10, { queue = "q" })) })
  end)

  it("renew, complete and release whose guarded update is skipped", function()
    local db, p = H.fresh("skipheld")
    db:enqueue("b")
    local f = db:claim("b", "w", T, 100)
    db:close()
    skip(p, "jobs", "UPDATE", "old.id = 'b'")
    db = lease.open(p)
    finally(function() db:close() end)
    refused(p, { function() return db:renew("b", "w", f, T + 1, 100) end,
                 function() return db:complete("b", "w", f, T + 1, "r") end,
                 function() return db:release("b", "w", f) end }, "b changed")
  end)

  it("every complete whose write of the job's queue row is skipped", function()
    -- the job stored done with its queue row left open would never be
    -- pruned, and the jobs after it would never open
    local db, p = H.fresh("skipqrow")
    db:enqueue_many({ "b", "n" })
    local f = db:claim("b", "w", T, 100)
    db:close()
    skip(p, "lease_queue", "UPDATE", "old.id = 'b'")
    -- a job whose queue row another client deleted
    if H.backend == "pg" then
      H.psql(p, "INSERT INTO jobs(id) VALUES ('plain'::bytea); DELETE FROM lease_queue WHERE id = 'plain'::bytea")
    else
      H.sqlite3(p, "INSERT INTO jobs(id) VALUES ('plain'); DELETE FROM lease_queue WHERE id = 'plain'")
    end
    db = lease.open(p)
    finally(function() db:close() end)
    refused(p, {
      function() return db:complete("b", "w", f, T + 1, "r") end,
      function() return db:complete_many("w", T + 1, { { id = "b", fence = f, result = "r" } }) end,
      function() return db:complete_many("w", T + 1, { { id = "b", fence = f }, { id = "b", fence = f } }) end,
      function() return db:complete_claim_next("b", "w", f, T + 1, "r", 10, { n = 2 }) end,
      function() return db:complete_many_claim_next("w", T + 1, { { id = "b", fence = f } }, 10) end,
      function() return db:with_lease("b", "w", f, T + 1, function(tx) return tx:complete("r") end) end,
    }, "complete's queue row of b changed no row")
    assert.are.same({ "running", "w" }, { db:state("b", T + 1).status, db:state("b", T + 1).owner })
    -- another job, and one without a queue row, complete
    assert.is_true(db:complete("n", "w", db:claim("n", "w", T, 100), T + 1, "r"))
    assert.is_true(db:complete("plain", "w", db:claim("plain", "w", T, 100), T + 1, "r"))
    assert.are.same({ "completed", "completed" }, { db:state("n", T + 2).status, db:state("plain", T + 2).status })
    local rows = H.backend == "pg" and H.psql(p, "SELECT count(*) FROM lease_queue WHERE id = 'plain'::bytea")
      or H.sqlite3(p, "SELECT count(*) FROM lease_queue WHERE id = 'plain'")
    assert.are.equal("0", rows:match("%d+"))
  end)

  it("tx:complete whose write of the queue row is skipped leaves with_lease's transaction usable", function()
    local db, p = H.fresh("skiptx")
    db:enqueue("b")
    local f = db:claim("b", "w", T, 100)
    db:close()
    skip(p, "lease_queue", "UPDATE", "old.id = 'b'")
    if H.backend == "pg" then H.psql(p, "CREATE TABLE out(v text)")
    else H.sqlite3(p, "CREATE TABLE out(v TEXT)") end
    db = lease.open(p)
    finally(function() db:close() end)
    local err
    assert.is_true(db:with_lease("b", "w", f, T + 1, function(tx)
      local ok, e = pcall(tx.complete, tx, "r")
      err = not ok and tostring(e)
      assert.are.equal(1, tx:exec("INSERT INTO out VALUES ('kept')"))
      return true
    end))
    assert.truthy(err and err:find("complete's queue row of b changed no row", 1, true), err)
    assert.are.same({ "running", "w" }, { db:state("b", T + 1).status, db:state("b", T + 1).owner })
    local out = H.backend == "pg" and H.psql(p, "SELECT v FROM out") or H.sqlite3(p, "SELECT v FROM out")
    assert.are.equal("kept", (out:gsub("\n$", "")))
  end)

  it("an enqueue whose dependency another client's trigger refuses raises its error and stores nothing", function()
    local db, p = H.fresh("abortdeps")
    db:enqueue("p")
    db:close()
    abort_inserts(p, "lease_deps", "no edges")
    db = lease.open(p)
    finally(function() db:close() end)
    local before = H.qsnapshot(p)
    for _, call in ipairs({ function() return db:enqueue("c", { after = { "p" } }) end,
                            function() return db:enqueue_many({ "x", { id = "c", after = { "x", "p" } } }) end }) do
      local err = H.error_of(call)
      assert.truthy(err:find("no edges", 1, true), err)
      assert.are.same(before, H.qsnapshot(p))
    end
  end)

  -- the insert of job b's row (an id that is there is still "exists"), or
  -- of its queue row (a job without one would never be claimed)
  for _, case in ipairs({ { "of a new id", "jobs", "enqueue of b changed no row" },
                         { "of the job's queue row", "lease_queue", "enqueue's queue %a+ of b changed no row" } }) do
    it("enqueue and enqueue_many whose insert " .. case[1] .. " is skipped", function()
      local db, p = H.fresh("skipenq")
      db:enqueue("x")
      db:close()
      skip(p, case[2], "INSERT", "new.id = 'b'")
      db = lease.open(p)
      finally(function() db:close() end)
      refused(p, { function() return db:enqueue("b") end,
                   function() return db:enqueue("b", { payload = "p", queue = "q" }) end,
                   function() return db:enqueue("b", { after = { "x" } }) end,
                   function() return db:enqueue_many({ "a", "b", "c" }) end,
                   function() return db:enqueue_many({ "a", { id = "b", priority = 2 } }) end,
                   function() return db:enqueue_many({ "a", { id = "b", key = "k" } }) end },
        case[3], true)
      assert.are.same({ false, 1, true }, { db:enqueue("x"), db:enqueue_many({ "x", "a" }), db:enqueue("y") })
    end)
  end

  -- other ways another client leaves a job the enqueue inserted without
  -- its queue row: a trigger of its own, on any table the enqueue writes
  -- (LEASE_QUEUE in capitals, jobs, lease_deps, lease_events), deletes the
  -- row, or the engine's trigger that makes the row is gone
  local function delete_b(tbl, cond)
    return "CREATE TRIGGER side AFTER INSERT ON " .. tbl .. " WHEN " .. cond
      .. " BEGIN DELETE FROM lease_queue WHERE id = 'b'; END"
  end
  for _, case in ipairs({
    { "a trigger on LEASE_QUEUE deletes it", delete_b("LEASE_QUEUE", "new.id = 'b'"), "of b " },
    { "a trigger on jobs deletes it", delete_b("jobs", "new.id = 'c'"), "of b " },
    { "a trigger on lease_deps deletes it", delete_b("lease_deps", "new.child = 'b'"), "of b " },
    { "a trigger on lease_events deletes it", delete_b("lease_events", "new.id = 'b'"), "of b ", true },
    { "lease_jobs_enqueued is dropped", "DROP TRIGGER lease_jobs_enqueued", "of a " } }) do
    it("enqueue_many whose job is left without its queue row: " .. case[1] .. " #sqlite", function()
      local db, p = H.fresh("unqueued", { events = true })
      db:enqueue("x")
      db:close()
      H.sqlite3(p, case[2])
      db = lease.open(p, { events = case[4] or false })
      finally(function() db:close() end)
      refused(p, { function() return db:enqueue_many({ "a", { id = "b", after = { "x" } }, "c" }) end },
        "enqueue's queue row " .. case[3])
    end)
  end

  it("enqueue by a handle that enqueued before another client made such a trigger #sqlite", function()
    -- the handle looked at the file's triggers at its first enqueue; the
    -- trigger made since, on its open file, is seen at the next one
    local db, p = H.fresh("unqueuedlate")
    finally(function() db:close() end)
    assert.are.same({ true, 1 }, { db:enqueue("x"), db:enqueue_many({ "y" }) })
    H.sqlite3(p, delete_b("lease_queue", "new.id = 'b'"))
    refused(p, { function() return db:enqueue("b") end,
                 function() return db:enqueue_many({ "a", "b" }) end },
      "enqueue's queue row of b ")
    H.sqlite3(p, "DROP TRIGGER side")
    assert.are.same({ true, 2 }, { db:enqueue("b"), db:enqueue_many({ "a", "c" }) })
  end)
end)

describe("a clock mark another client stored as -Inf or +Inf", function()
  -- repaired to the next write's now, as a mark that is not a number is
  local T = 1.7e9
  for _, v in ipairs({ { "-Inf", "-1e999", "'-Infinity'" }, { "+Inf", "1e999", "'Infinity'" },
                       { "NaN", "'NaN'", "'NaN'" } }) do
    it("(" .. v[1] .. ") is replaced by the next now, and the unit check holds again", function()
      local db, p = H.fresh("mark")
      db:enqueue_many({ "a", "b", "c" })
      db:claim("a", "w", T, 10)
      db:close()
      H.sql(p, "UPDATE lease_meta SET value = " .. (H.backend == "pg" and v[3] or v[2])
        .. " WHERE key = 'clock_mark'")
      db = lease.open(p)
      finally(function() db:close() end)
      assert.are.equal(1, db:claim("b", "w", T + 100, 10))
      assert.are.equal(T + 100, mark(p))
      local err = H.error_of(db.claim, db, "c", "w", T * 1000, 10)
      assert.truthy(err:find("off by a factor of 100", 1, true) and err:find("[misuse]", 1, true), err)
      assert.are.equal(0, db:state("c").fence)
    end)
  end
end)

describe("a clock mark another client stored that is no number", function()
  -- counts as none, as on SQLite: the next write's now is stored over it,
  -- where PostgreSQL's float8 input would refuse it in every statement
  -- that reads the mark
  local T = 1.7e9
  local function spoil(p, text)
    H.sql(p, "UPDATE lease_meta SET value = '" .. text .. "' WHERE key = 'clock_mark'")
  end
  for _, text in ipairs({ "abc", "1e999", "12 monkeys", "" }) do
    it("('" .. text .. "') is replaced by the next write's now, whatever the write", function()
      local db, p = H.fresh("nomark")
      db:enqueue_many({ "a", "b", "c", "d", "e" })
      local f = db:claim("a", "w", T, 1000)
      local fd = db:claim("d", "w", T, 1000)
      db:close()
      db = lease.open(p)
      finally(function() db:close() end)
      -- an enqueue takes no now: it stores none, and the mark counts as none
      for i, call in ipairs({
        { function() return db:with_lease("d", "w", fd, T + 100, function(tx) return tx:complete("r") end) end,
          true },
        { function() return db:claim("b", "w", T + 100, 1000) end, true },
        { function() return db:enqueue("x") end, false },
        { function() return (db:claim_next("w", T + 100, 1000)) end, true },
        { function() return (db:complete_many("w", T + 100, { { id = "a", fence = f, result = "r" } })) end, true },
      }) do
        spoil(p, text)
        assert.truthy(call[1](), "call " .. i)
        if call[2] then assert.are.equal(T + 100, mark(p), "call " .. i) end
      end
      assert.are.same({ "completed", "running", "running", "completed", "available" },
        { db:state("a", T + 100).status, db:state("b", T + 100).status,
          db:state("c", T + 100).status, db:state("d", T + 100).status, db:state("x", T + 100).status })
      local err = H.error_of(db.claim, db, "e", "w", T * 1000, 10)
      assert.truthy(err:find("off by a factor of 100", 1, true), err)
    end)
  end

  it("is told from a number float8 reads, which a write failing for another reason keeps", function()
    -- another client's trigger fails the enqueue as a float8 input would
    -- (SQLSTATE 22P02 on PostgreSQL): the mark, a number, stays
    local db, p = H.fresh("keepmark")
    finally(function() db:close() end)
    db:enqueue("a")
    db:claim("a", "w", T, 10)   -- the mark's row
    abort_inserts(p, "lease_queue", "not a float", "22P02")
    for _, text in ipairs({ "1e+300", "1.7976931348623157e+308", "5e-324", " 1000 ", ".5", "-0",
                            "-Infinity", "+nan", "123456789012345678901" }) do
      spoil(p, text)
      local err = H.error_of(db.enqueue, db, "b")
      assert.truthy(err:find("not a float", 1, true), err)
      assert.are.equal(text, mark_text(p))
    end
  end)

  it("is replaced by a handle whose complete_claim_next read the mark before", function()
    local db, p = H.fresh("nomarkccn")
    finally(function() db:close() end)
    db:enqueue_many({ "a", "b", "c" })
    local id, f = db:claim_next("w", T, 1000)
    local stored, why, nid, nf = db:complete_claim_next(id, "w", f, T + 1, "r", 1000)
    assert.are.same({ true, "b" }, { stored, nid }, why)
    spoil(p, "abc")
    stored, why, nid = db:complete_claim_next("b", "w", nf, T + 200, "r", 1000)
    assert.are.same({ true, "c" }, { stored, nid }, why)
    assert.are.equal(T + 200, mark(p))
    assert.are.same({ "completed", "completed", "running" },
      { db:state("a", T + 200).status, db:state("b", T + 200).status, db:state("c", T + 200).status })
  end)
end)

describe("strings the database cannot hold", function()
  it("are refused as arguments before anything is written", function()
    if os.getenv("LEASE_SANITIZED") then
      pending("needs gigabytes under a sanitizer")
      return
    end
    local db, p = H.fresh("big")
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 100)
    local before = H.snapshot(p)
    local big = ("x"):rep(1000000001)
    -- not tail calls: LuaJIT would count self in the argument numbers
    local err = H.error_of(function() local _ = db:complete("a", "w", f, 1, big) end)
    assert.truthy(err:find("bad argument #5 to 'complete' (result must be at most 1000000000 bytes, got 1000000001)", 1, true), err)
    err = H.error_of(function() local _ = db:enqueue(big) end)
    assert.truthy(err:find("bad argument #1 to 'enqueue' (id must be at most 1000000000 bytes", 1, true), err)
    err = H.error_of(function() local _ = db:claim("a", big, 0, 1) end)
    assert.truthy(err:find("(owner must be at most 1000000000 bytes", 1, true), err)
    err = H.error_of(function() local _ = db:enqueue_many({ "b", big }) end)
    assert.truthy(err:find("(ids[2] must be at most 1000000000 bytes", 1, true), err)
    big = nil   -- luacheck: ignore
    collectgarbage()
    assert.are.same(before, H.snapshot(p))
    assert.is_false(db:state("a").done)
    db:close()
  end)

  it("a path with a zero byte is refused, and nothing is created", function()
    local p = H.path("nul")
    local err = H.error_of(lease.open, p .. "\0junk")
    assert.truthy(err:find("bad argument #1 to 'lease.open' (path must not contain zero bytes)", 1, true), err)
    err = H.error_of(lease.enqueue, p .. "\0junk", "a")
    assert.truthy(err:find("bad argument #1 to 'lease.enqueue' (path must not contain zero bytes)", 1, true), err)
    assert.is_false(H.exists(p))
  end)
end)

describe("the pool and the lease program with odd inputs", function()
  it("survives a handler error object whose __tostring raises", function()
    local db, p = H.fresh("tostring")
    db:enqueue_many({ "j1", "j2", "j3", "j4" }, { max_attempts = 1 })
    db:close()
    local s = pool.run({
      db = p, workers = 2, ttl = 30,
      handler = function(job)
        if job.id == "j2" then
          error(setmetatable({}, { __tostring = function() error("no tostring for you") end }))
        end
        return "ok"
      end,
    })
    assert.are.same({}, s.failed)
    assert.are.equal(3, s.done)
    assert.are.same({ "j2" }, s.discarded_ids)
    assert.truthy(s.errors[1]:find("j2: (an error object of type table)", 1, true), s.errors[1])
    assert.are.equal("(an error object of type table)", lease.state(p, "j2").errors[1].message)
  end)

  it("refuses options that cannot reach the worker threads, or a ttl too small to matter", function()
    local db, p = H.fresh("opts")
    db:enqueue("j")
    db:close()
    local err = H.error_of(pool.run, { db = p, handler = function() return "x" end, args = { co = coroutine.create(function() end) } })
    assert.truthy(err:find("bad argument #1 to 'lease.pool.run' (cannot copy a coroutine", 1, true), err)
    err = H.error_of(pool.run, { db = p, handler = function() return "x" end, ttl = 1e-9 })
    assert.truthy(err:find("bad argument #1 to 'lease.pool.run' (ttl must be", 1, true), err)
    assert.are.equal(0, lease.state(p, "j").fence)
  end)

  it("lease jobs|pool refuse infinite or useless numbers as usage errors", function()
    local db, p = H.fresh("cli")
    db:enqueue("j")
    db:close()
    local w = H.file("w") .. ".lua"
    H.write(w, "return function() return 'x' end\n")
    for _, args in ipairs({ "jobs " .. H.sh(p) .. " --now 1e999", "jobs " .. H.sh(p) .. " --now nan",
                            "pool --ttl 1e999 " .. H.sh(w) .. " " .. H.sh(p),
                            "pool --ttl 1e-9 " .. H.sh(w) .. " " .. H.sh(p) }) do
      local status, out, err = H.host(args)
      assert.are.equal(2, status, args .. ": " .. err)
      assert.are.equal("", out)
      assert.truthy(err:find("usage: lease", 1, true), err)
    end
    assert.are.equal(0, lease.state(p, "j").fence)
  end)

  it("lease jobs --json stays valid UTF-8 JSON for byte-string ids", function()
    -- id, then the id as the JSON carries it: valid UTF-8 unchanged, every
    -- other byte as the Latin-1 character of its number (U+0080..U+00FF)
    local cases = {
      { "caf\195\169", "caf\195\169" },                                -- U+00E9
      { "\240\159\152\128", "\240\159\152\128" },                      -- U+1F600, four bytes
      { "nul\0x", "nul\0x" },
      { "bin\255\254", "bin\195\191\195\190" },                         -- bytes no sequence starts with
      { "\237\160\128", "\195\173\194\160\194\128" },                  -- U+D800, a surrogate
      { "\192\128", "\195\128\194\128" },                              -- NUL in two bytes (overlong)
      { "\224\128\128", "\195\160\194\128\194\128" },                  -- overlong in three bytes
      { "\240\128\128\128", "\195\176\194\128\194\128\194\128" },      -- overlong in four bytes
      { "\244\144\128\128", "\195\180\194\144\194\128\194\128" },      -- U+110000, above Unicode
      { "a\226\130", "a\195\162\194\130" },                            -- a sequence cut short
      { "\226\130\65", "\195\162\194\130A" },                          -- a continuation byte missing
    }
    local ids = {}
    for i, c in ipairs(cases) do ids[i] = c[1] end
    local db, p = H.fresh("json")
    db:enqueue_many(ids)
    db:close()
    local status, out = H.host("jobs " .. H.sh(p) .. " --json")
    assert.are.equal(0, status)
    -- iconv (glibc) refuses any byte string that is not UTF-8
    local file = H.file("json") .. ".out"
    H.write(file, out)
    local _, valid = H.capture("iconv -f UTF-8 -t UTF-8 " .. H.sh(file) .. " >/dev/null 2>&1")
    os.remove(file)
    assert.is_true(valid, "output is not UTF-8")
    local list = require("dkjson").decode(out)
    assert.are.equal(#cases, #list)
    for i, c in ipairs(cases) do assert.are.equal(c[2], list[i].id, "case " .. i) end
  end)
end)
