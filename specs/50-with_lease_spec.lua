-- db:with_lease: the worker's own writes commit in the lease's
-- transaction, only while the lease holds (checked as complete checks it),
-- and roll back with the function's error.  tx:exec / tx:rows bind
-- parameters, refuse statements that would end the transaction or write
-- the engine's tables; tx:complete / tx:renew act on the held job inside
-- the same transaction.  Every refused or failed call leaves every table
-- as it was.  The cases that name SQLite's own statements carry #sqlite;
-- their PostgreSQL counterparts are in 52-with_lease_pg_spec.lua.
local H = require("helpers")
local lease = H.lease

-- The worker's output table, read through another client: one line per row
-- ('job'|fence|k).  On PostgreSQL job is bytea (a string with a zero byte
-- is sent as bytea), fence bigint, k text; rows in insertion order.
local function out_rows(p)
  if H.backend == "pg" then
    return H.psql(p, "SELECT quote_literal(convert_from(job, 'UTF8')), fence, k FROM out ORDER BY ctid")
  end
  return H.sqlite3(p, "SELECT quote(job), quote(fence), quote(k) FROM out ORDER BY rowid")
end

-- The SQL that creates the output table on the spec's backend.
local OUT_TABLE = H.backend == "pg" and "CREATE TABLE out(job bytea, fence bigint, k text)"
  or "CREATE TABLE out(job TEXT, fence INTEGER, k)"

-- A database with table out and job "job" claimed by A at 100 for 30
-- (until 130); returns db, path, fence.
local function setup()
  local db, p = H.fresh("wl")
  db:close()
  H.sql(p, OUT_TABLE)
  db = lease.open(p)
  db:enqueue("job")
  return db, p, db:claim("job", "A", 100, 30)
end

-- Everything another client sees: the jobs and the output rows.
local function everything(p)
  return { H.snapshot(p), out_rows(p) }
end

describe("with_lease", function()
  local db, p, fence
  before_each(function() db, p, fence = setup() end)
  after_each(function() db:close() end)

  it("runs fn under the lease and commits its rows with tx:complete at once", function()
    local ok, a, b = db:with_lease("job", "A", fence, 110, function(tx)
      assert.are.equal(1, tx:exec("INSERT INTO out VALUES (?, ?, ?)", "job", fence, 1))
      assert.are.equal(1, tx:exec("INSERT INTO out VALUES (?, ?, ?)", "job", fence, 2))
      assert.is_true(tx:complete("two rows"))
      return "x", 7
    end)
    assert.are.same({ true, "x", 7 }, { ok, a, b })
    assert.are.equal("'job'|1|1\n'job'|1|2\n", out_rows(p))
    local s = lease.state(p, "job")
    assert.is_true(s.done)
    assert.are.equal("two rows", s.result)
  end)

  it("a stale worker's with_lease never runs fn and leaves every table unchanged", function()
    local fb = db:claim("job", "B", 131, 30)   -- A's lease ran out at 130
    assert.is_true(db:with_lease("job", "B", fb, 135, function(tx)
      tx:exec("INSERT INTO out VALUES ('job', ?, 'B')", fb)
    end))
    local before = everything(p)
    local ran = false
    -- A wakes up: with its old fence and name ...
    assert.are.same({ false, "not_owner" }, { db:with_lease("job", "A", fence, 140, function(tx)
      ran = true
      tx:exec("INSERT INTO out VALUES ('job', ?, 'A')", fence)
    end) })
    -- ... and as B's name with A's old fence
    assert.are.same({ false, "stale_fence" }, { db:with_lease("job", "B", fence, 140, function()
      ran = true
    end) })
    assert.is_false(ran)
    assert.are.same(before, everything(p))
    -- after B completes, every with_lease is refused as done
    assert.is_true(db:complete("job", "B", fb, 140, "B"))
    before = everything(p)
    assert.are.same({ false, "done" }, { db:with_lease("job", "B", fb, 141, function() ran = true end) })
    assert.is_false(ran)
    assert.are.same(before, everything(p))
  end)

  it("refuses the holder of a job the queue cancelled, as complete does, and runs nothing", function()
    assert.is_true(db:cancel("job", 115))
    local before = everything(p)
    local ran = false
    assert.are.same({ false, "cancelled" }, { db:with_lease("job", "A", fence, 116, function(tx)
      ran = true
      tx:exec("INSERT INTO out VALUES ('job', ?, 'A')", fence)
    end) })
    assert.are.same({ false, "cancelled" }, { db:complete("job", "A", fence, 116, "late") })
    assert.is_false(ran)
    assert.are.same(before, everything(p))
  end)

  it("refuses a worker whose lease expired between claim and with_lease", function()
    local before = everything(p)
    local ran = false
    assert.are.same({ false, "expired" }, { db:with_lease("job", "A", fence, 130, function() ran = true end) })
    assert.are.same({ false, "expired" }, { db:with_lease("job", "A", fence, 500, function() ran = true end) })
    assert.is_false(ran)
    assert.are.same(before, everything(p))
  end)

  it("refuses with the reason complete gives, in every state", function()
    local cases = {
      { "missing", function() return "nope", "A", fence, 110 end },
      { "not_owner", function() return "job", "Z", fence, 110 end },
      { "stale_fence", function() return "job", "A", fence + 1, 110 end },
      { "expired", function() return "job", "A", fence, 130 end },
    }
    for _, c in ipairs(cases) do
      local id, owner, f, now = c[2]()
      local ran = false
      assert.are.same({ false, c[1] }, { db:with_lease(id, owner, f, now, function() ran = true end) })
      assert.are.same({ false, c[1] }, { db:complete(id, owner, f, now, "r") })
      assert.is_false(ran)
    end
    -- a job another client made blocked raises as complete does: on SQLite
    -- an until that is not a number, on PostgreSQL (whose table refuses
    -- that) a fence at its maximum, held by A with that fence
    local word = "[mismatch]"
    if H.backend == "pg" then
      H.psql(p, "UPDATE jobs SET fence = 9223372036854775807 WHERE id = 'job'")
      fence, word = math.maxinteger, "[range]"
    else
      H.sqlite3(p, "UPDATE jobs SET until = 'x' WHERE id = 'job'")
    end
    local before = everything(p)
    local e1 = H.error_of(db.with_lease, db, "job", "A", fence, 110, function() error("ran") end)
    local e2 = H.error_of(db.complete, db, "job", "A", fence, 110, "r")
    assert.matches(word, e1, 1, true)
    assert.are.equal(e2:gsub("lease%.complete", "lease.with_lease"), e1)
    assert.are.same(before, everything(p))
  end)

  it("rolls back fn's rows when it raises, keeps the job held, and raises again with a traceback", function()
    local before = everything(p)
    local err = H.error_of(db.with_lease, db, "job", "A", fence, 110, function(tx)
      tx:exec("INSERT INTO out VALUES ('job', ?, 1)", fence)
      error("handler failed")
    end)
    assert.matches("handler failed", err, 1, true)
    assert.matches("stack traceback:", err, 1, true)
    assert.are.same(before, everything(p))
    -- the same handle sees nothing either, and the job is still held by A
    local s = db:state("job")
    assert.are.same({ "A", fence, false }, { s.owner, s.fence, s.done })
    assert.is_true(db:with_lease("job", "A", fence, 111, function(tx)
      local n = 0
      for _ in tx:rows("SELECT * FROM out") do n = n + 1 end
      assert.are.equal(0, n)
    end))
    -- an error value that is not a string comes back as it was
    local obj = setmetatable({}, { __tostring = function() return "obj" end })
    local ok, e = pcall(db.with_lease, db, "job", "A", fence, 110, function() error(obj) end)
    assert.is_false(ok)
    assert.are.equal(obj, e)
  end)

  it("tx:complete inside fn and a later raise leave the job not done", function()
    local before = everything(p)
    H.error_of(db.with_lease, db, "job", "A", fence, 110, function(tx)
      assert.is_true(tx:complete("early"))
      assert.is_true(tx:renew(100))
      tx:exec("INSERT INTO out VALUES ('job', ?, 1)", fence)
      error("late failure")
    end)
    assert.are.same(before, everything(p))
    local s = db:state("job")
    assert.is_false(s.done)
    assert.is_nil(s.result)
    assert.are.equal(130, s["until"])
  end)

  it("a tx used after fn returns raises", function()
    local kept
    assert.is_true(db:with_lease("job", "A", fence, 110, function(tx) kept = tx end))
    local before = everything(p)
    local msg = "attempt to use a lease tx after its with_lease function returned"
    assert.matches(msg, H.error_of(kept.exec, kept, "INSERT INTO out VALUES (1, 2, 3)"), 1, true)
    assert.matches(msg, H.error_of(kept.rows, kept, "SELECT 1"), 1, true)
    assert.matches(msg, H.error_of(kept.complete, kept, "r"), 1, true)
    assert.matches(msg, H.error_of(kept.renew, kept, 10), 1, true)
    assert.matches(msg, H.error_of(kept.fence_gate, kept, "r", 1), 1, true)
    assert.are.same(before, everything(p))
    assert.matches("ended", tostring(kept))
  end)

  it("tx:renew extends the lease inside the transaction; tx:complete answers as complete", function()
    assert.is_true(db:with_lease("job", "A", fence, 120, function(tx)
      assert.is_true(tx:renew(50))            -- until = 170
      assert.is_true(tx:renew(60, 125))       -- until = 185
    end))
    assert.are.equal(185, db:state("job")["until"])
    assert.is_true(db:with_lease("job", "A", fence, 180, function(tx)
      assert.is_true(tx:complete())
      assert.are.same({ false, "done" }, { tx:complete("again") })
      assert.are.same({ false, "done" }, { tx:renew(10) })
    end))
    local s = db:state("job")
    assert.is_true(s.done)
    assert.is_nil(s.result)
  end)

  it("binds strings with zero bytes as TEXT, integers, floats, nil and booleans #sqlite", function()
    assert.is_true(db:with_lease("job", "A", fence, 110, function(tx)
      assert.are.equal(1, tx:exec("INSERT INTO out VALUES (?, ?, ?)", "a\0b", 2 ^ 53 + 0.5 - 0.5, 1.5))
      assert.are.equal(1, tx:exec("INSERT INTO out VALUES (?, ?, ?)", nil, true, false))
      local rows = {}
      for r in tx:rows("SELECT job, typeof(job) AS t, length(CAST(job AS BLOB)) AS n, fence, k FROM out ORDER BY rowid") do
        rows[#rows + 1] = r
      end
      assert.are.same({ job = "a\0b", t = "text", n = 3, fence = 2 ^ 53, k = 1.5 }, rows[1])
      assert.are.same({ t = "null", fence = 1, k = 0 }, rows[2])
      assert.are.equal(2, tx:exec("UPDATE out SET k = ?", -3))
      assert.are.equal(0, tx:exec("CREATE TABLE side(x)"))
      assert.are.equal(0, tx:exec("SELECT 1"))
    end))
    assert.are.equal("610062|9007199254740992|-3\n|1|-3\n",
      H.sqlite3(p, "SELECT hex(job), fence, k FROM out ORDER BY rowid"))
  end)

  it("refuses statements that would end the transaction or write the engine's tables #sqlite", function()
    assert.is_true(db:fence_gate("seed", 1))   -- lease_fences exists
    local before = everything(p)
    local refused = {
      "BEGIN", "COMMIT", "END", "ROLLBACK", "BEGIN IMMEDIATE",
      "ATTACH ':memory:' AS other", "DETACH main", "PRAGMA query_only = 0",
      "PRAGMA journal_mode = delete", "PRAGMA writable_schema = 1",
      "INSERT INTO jobs(id) VALUES ('new')", "UPDATE jobs SET done = 1",
      "DELETE FROM jobs", "DROP TABLE jobs", "ALTER TABLE jobs ADD COLUMN x",
      "CREATE TRIGGER t2 AFTER UPDATE ON jobs BEGIN SELECT 1; END",
      "CREATE INDEX i ON jobs(owner)", "DROP INDEX lease_queue_ended",
      "CREATE TEMP TABLE jobs(x)", "INSERT INTO lease_fences VALUES ('r', 9)",
      "INSERT INTO out VALUES (1, 2, 3); COMMIT",
      -- the job queue's objects: every name starting with lease_ is the engine's
      "UPDATE lease_queue SET base_fence = 0", "DELETE FROM lease_errors",
      "DROP TRIGGER lease_jobs_done", "DROP INDEX lease_queue_due",
      "CREATE TABLE lease_mine(x)",
    }
    for _, sql in ipairs(refused) do
      local err = H.error_of(db.with_lease, db, "job", "A", fence, 110, function(tx)
        tx:exec("INSERT INTO out VALUES ('kept?', 0, 0)")
        local e = H.error_of(tx.exec, tx, sql)
        assert.matches("[misuse]", e, 1, true)
        assert.matches("^lease%.tx:exec: ", e)
        -- the transaction is still open and usable
        assert.are.equal(1, tx:exec("INSERT INTO out VALUES ('after', 0, 0)"))
        error("roll back: " .. sql)
      end)
      assert.matches("roll back: " .. sql, err, 1, true)
    end
    assert.are.same(before, everything(p))
  end)

  it("names the refusals: ending the transaction, the engine's tables, several statements #sqlite", function()
    assert.is_true(db:with_lease("job", "A", fence, 110, function(tx)
      assert.matches("it would begin, commit or roll back the with_lease transaction",
        H.error_of(tx.exec, tx, "COMMIT"), 1, true)
      assert.matches("the engine's own tables", H.error_of(tx.exec, tx, "DELETE FROM jobs"), 1, true)
      assert.matches("more than one statement", H.error_of(tx.exec, tx, "SELECT 1; SELECT 2"), 1, true)
      assert.matches("sql has 2 parameters, 1 given",
        H.error_of(tx.exec, tx, "SELECT ?, ?", 1), 1, true)
      assert.matches("no such table", H.error_of(tx.rows, tx, "SELECT * FROM missing_table"), 1, true)
      tx:exec("CREATE TABLE u(x UNIQUE)")
      tx:exec("INSERT INTO u VALUES (1)")
      assert.matches("%[constraint%]", H.error_of(tx.exec, tx, "INSERT INTO u VALUES (?)", 1))
      -- a trigger of the caller's that would write jobs is refused when it fires
      tx:exec("CREATE TRIGGER sneak AFTER INSERT ON out BEGIN DELETE FROM jobs; END")
      assert.matches("the engine's own tables", H.error_of(tx.exec, tx, "INSERT INTO out VALUES (1, 2, 3)"), 1, true)
      tx:exec("DROP TRIGGER sneak")
      -- reads of the engine's tables, savepoints and reading pragmas work
      local n = 0
      for r in tx:rows("SELECT id FROM jobs") do n = n + 1; assert.are.equal("job", r.id) end
      assert.are.equal(1, n)
      tx:exec("SAVEPOINT s")
      tx:exec("INSERT INTO out VALUES ('s', 1, 1)")
      tx:exec("RELEASE s")
      for _ in tx:rows("PRAGMA table_info(jobs)") do n = n + 1 end
      assert.are.equal(7, n)
    end))
    -- the savepoint's rows committed with the rest, not before
    assert.are.equal("'s'|1|1\n", out_rows(p))
  end)

  it("keeps RELEASE of a savepoint from committing: a raise still rolls it back", function()
    local before = everything(p)
    H.error_of(db.with_lease, db, "job", "A", fence, 110, function(tx)
      tx:exec("SAVEPOINT s")
      tx:exec("INSERT INTO out VALUES ('s', 1, 1)")
      tx:exec("RELEASE s")
      error("after release")
    end)
    assert.are.same(before, everything(p))
  end)

  it("refuses every other call on the handle while fn runs", function()
    local other = lease.open(p)
    finally(function() other:close() end)
    assert.is_true(db:with_lease("job", "A", fence, 110, function(tx)
      for _, call in ipairs({
        function() return db:state("job") end,
        function() return db:complete("job", "A", fence, 110, "x") end,
        function() return db:with_lease("job", "A", fence, 110, function() end) end,
        function() return db:fence_gate("r", 1) end,
      }) do
        assert.matches("this handle is inside a with_lease callback: use its tx [misuse]",
          H.error_of(call), 1, true)
      end
      tx:exec("INSERT INTO out VALUES ('job', 1, 1)")
      -- another connection does not see the rows yet
      assert.are.equal("", out_rows(p))
    end))
    assert.are.equal("'job'|1|1\n", out_rows(p))
    -- and the handle works again
    assert.is_false(db:state("job").done)
  end)

  it("checks every argument before touching the database", function()
    local before = everything(p)
    local f = function() error("ran") end
    assert.matches("bad argument #2 to 'with_lease' (id must be a non-empty string, got an empty string)",
      H.error_of(db.with_lease, db, "", "A", fence, 110, f), 1, true)
    assert.matches("bad argument #4 to 'with_lease' (fence must be an integer",
      H.error_of(db.with_lease, db, "job", "A", 1.5, 110, f), 1, true)
    assert.matches("bad argument #5 to 'with_lease' (now must be a finite number",
      H.error_of(db.with_lease, db, "job", "A", fence, 0 / 0, f), 1, true)
    assert.matches("bad argument #6 to 'with_lease' (fn must be a function, got no value)",
      H.error_of(db.with_lease, db, "job", "A", fence, 110), 1, true)
    assert.is_true(db:with_lease("job", "A", fence, 110, function(tx)
      assert.matches("bad argument #4 to 'exec' (a parameter must be a string, number, boolean or nil, got table)",
        H.error_of(tx.exec, tx, "SELECT ?, ?", 1, {}), 1, true)
      assert.matches("bad argument #2 to 'renew' (ttl must be a number > 0, got 0)",
        H.error_of(tx.renew, tx, 0), 1, true)
      assert.matches("bad argument #3 to 'fence_gate' (fence must be an integer >= 0, got -1)",
        H.error_of(tx.fence_gate, tx, "r", -1), 1, true)
    end))
    assert.are.same(before, everything(p))
  end)
end)

describe("job.with_lease in a pool", function()
  it("commits each handler's rows with the lease; a stalled worker's rows never appear", function()
    local pool = require("lease.pool")
    local db, p = H.fresh("wl-pool")
    local ids = {}
    for i = 1, 8 do ids[i] = "j" .. i end
    db:enqueue_many(ids)
    db:close()
    H.sql(p, "CREATE TABLE out(job TEXT, fence INTEGER, owner TEXT)")
    local s = pool.run({
      db = p, workers = 3, ttl = 1, poll = 0.01, args = { j3 = true },
      handler = function(job)
        if job.args[job.id] and job.fence == 1 then require("lease").sleep(job.ttl * 2) end
        local ok, why = job.with_lease(function(tx)
          tx:exec("INSERT INTO out VALUES (?, ?, ?)", job.id, job.fence, job.owner)
        end)
        -- refused: nothing written; the pool's complete is refused as well
        if not ok then return "refused: " .. why end
        return job.id .. "@" .. job.fence
      end,
    })
    assert.are.equal(8, s.done)
    assert.is_true(s.refused >= 1)   -- the stalled worker's complete, at least
    -- one row per job, written under the fence that completed it
    local id = H.backend == "pg" and "convert_to(o.job, 'UTF8')" or "o.job"
    local rows = H.sql(p, "SELECT o.job, CASE WHEN o.fence = j.fence THEN 1 ELSE 0 END FROM out o"
      .. " JOIN jobs j ON j.id = " .. id .. " ORDER BY o.job")
    assert.are.equal("j1|1\nj2|1\nj3|1\nj4|1\nj5|1\nj6|1\nj7|1\nj8|1\n", rows)
    assert.are.equal("2\n", H.sql(p, "SELECT fence FROM out WHERE job = 'j3'"))
  end)
end)

describe("examples/fenced_worker.lua #sqlite", function()
  it("shows the stale worker's rows never appearing, and counts them", function()
    local d = H.dir() .. "/run"
    local build = os.getenv("LEASE_BUILD_DIR") or "build"
    local out, ok = H.capture("LUA_CPATH=" .. H.sh(build .. "/?.so;;") .. " " .. H.lua()
      .. " examples/fenced_worker.lua " .. H.sh(d) .. " 2>&1")
    assert.is_true(ok, out)
    assert.truthy(out:find("A  wakes up, with_lease with fence 1 %-> false, done"), out)
    assert.truthy(out:find("invoice lines written by A: 0, by B: 3", 1, true), out)
    assert.truthy(out:find("ok: the stale worker's rows never appeared", 1, true), out)
    -- the files hold what it printed
    assert.are.equal("B|3\n", H.sqlite3(d .. "/jobs.db",
      "SELECT written_by, count(*) FROM invoice_lines GROUP BY written_by"))
    assert.are.equal("invoice-totals/invoice-42|2\n", H.sqlite3(d .. "/store.db",
      "SELECT resource, fence FROM lease_fences"))
  end)
end)
