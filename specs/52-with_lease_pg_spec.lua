-- with_lease on PostgreSQL: what 50-with_lease_spec.lua checks with
-- SQLite's statements (binding, refusals, their messages), with
-- PostgreSQL's.  The caller's statements are checked before they are sent
-- (one statement, no transaction control, no SET, no LISTEN, no DDL naming
-- the engine's tables, nothing temporary created) and run under the guard triggers, which refuse a write
-- of jobs or a lease_ table by what the statement does: through a DO
-- block, a CTE, a trigger or function of the caller's, at COMMIT.  Every
-- refused statement leaves the transaction usable and every table as it was.
local H = require("helpers")
local T = require("thread_helpers")
local lease = H.lease

if H.backend ~= "pg" then return end

-- The output rows, read through psql: job (bytea, as text), fence, k.
local function out_rows(p)
  return H.psql(p, "SELECT quote_literal(convert_from(job, 'UTF8')), fence, k FROM out ORDER BY ctid")
end

-- A database with table out and job "job" claimed by A at 100 for 30
-- (until 130); returns db, path, fence.
local function setup()
  local db, p = H.fresh("wlpg")
  db:close()
  H.psql(p, "CREATE TABLE out(job bytea, fence bigint, k text)")
  db = lease.open(p)
  db:enqueue("job")
  return db, p, db:claim("job", "A", 100, 30)
end

-- Everything another client sees: the jobs, the output rows, the gate.
local function everything(p)
  return { H.snapshot(p), out_rows(p), H.psql(p, "SELECT resource, fence FROM lease_fences ORDER BY 1") }
end

describe("with_lease on PostgreSQL", function()
  local db, p, fence
  before_each(function() db, p, fence = setup() end)
  after_each(function() db:close() end)

  it("binds integers, floats, strings, strings with zero bytes, nil and booleans", function()
    assert.is_true(db:with_lease("job", "A", fence, 110, function(tx)
      assert.are.equal(1, tx:exec("INSERT INTO out VALUES (?, ?, ?)", "a\0b", 2 ^ 53 + 0.5 - 0.5, 1.5))
      assert.are.equal(1, tx:exec("INSERT INTO out VALUES (?, ?, ?)", nil, true, false))
      assert.are.equal(1, tx:exec("INSERT INTO out VALUES (?, ?, ?)", "plain", math.maxinteger, "x"))
      local rows = {}
      for r in tx:rows("SELECT job, pg_typeof(job)::text AS t, length(job) AS n, fence, k FROM out ORDER BY ctid") do
        rows[#rows + 1] = r
      end
      assert.are.same({ job = "a\0b", t = "bytea", n = 3, fence = 2 ^ 53, k = "1.5" }, rows[1])
      assert.are.same({ t = "bytea", fence = 1, k = "0" }, rows[2])
      assert.are.same({ job = "plain", t = "bytea", n = 5, fence = math.maxinteger, k = "x" }, rows[3])
      -- result types as SQLite's binding gives them
      local r = tx:rows("SELECT 1::int2 AS a, 2::int4 AS b, true AS c, 7::numeric AS d, 2.5::numeric AS e,"
        .. " 0.25::float4 AS f, 'x'::text AS g, NULL::int AS h, '\\x00ff'::bytea AS i, now() > '2000-01-01' AS j")()
      assert.are.same({ a = 1, b = 2, c = 1, d = 7, e = 2.5, f = 0.25, g = "x", i = "\0\255", j = 1 }, r)
      assert.is_true(math.type(r.a) == "integer" and math.type(r.d) == "integer" and math.type(r.e) == "float")
      assert.are.equal(3, tx:exec("UPDATE out SET k = ?", -3))
      assert.are.equal(0, tx:exec("CREATE TABLE side(x int)"))
      assert.are.equal(0, tx:exec("SELECT 1"))
      assert.are.equal(2, tx:exec("DELETE FROM out WHERE fence < ?", 1152921504606846976))
    end))
    assert.are.equal("'plain'|9223372036854775807|-3\n", out_rows(p))
  end)

  it("takes $n parameters as they are, and numbers ? only outside literals, names and comments", function()
    assert.is_true(db:with_lease("job", "A", fence, 110, function(tx)
      assert.are.equal(1, tx:exec("INSERT INTO out VALUES ($2, $1, $3)", 5, "dollar", "k"))
      assert.are.equal(1, tx:exec("INSERT INTO out VALUES (?, ?, '?' || E'\\'?' || $$?$$ || $q$?$q$)"
        .. " -- ? in a comment\n /* ? /* nested ? */ */", "q", 6))
      local r = tx:rows([[SELECT k AS "a?b" FROM out WHERE fence = ?]], 6)()
      assert.are.equal("?'???", r["a?b"])
      assert.matches("sql mixes ? and $n parameters", H.error_of(tx.exec, tx, "SELECT ?, $1", 1, 2), 1, true)
      assert.matches("sql has 3 parameters, 2 given", H.error_of(tx.exec, tx, "SELECT $3::int", 1, 2), 1, true)
      assert.matches("sql holds no statement", H.error_of(tx.exec, tx, " -- nothing\n ;"), 1, true)
      assert.are.equal(0, tx:exec("SELECT 1;  -- one statement and a comment"))
    end))
    assert.are.equal("'dollar'|5|k\n'q'|6|?'???\n", out_rows(p))
  end)

  it("refuses statements that would end the transaction, change the session or write the engine's tables", function()
    assert.is_true(db:fence_gate("seed", 1))
    H.psql(p, "CREATE FUNCTION wipe() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM jobs;"
      .. " RETURN NEW; END $$; CREATE FUNCTION wipe_now() RETURNS int LANGUAGE sql AS"
      .. " $$ UPDATE jobs SET done = 1 RETURNING 1 $$")
    local before = everything(p)
    local refused = {
      "BEGIN", "COMMIT", "END", "ROLLBACK", "ABORT", "START TRANSACTION", "commit work",
      "PREPARE TRANSACTION 'x'", "SET search_path = public", "SET LOCAL lock_timeout = 0",
      "RESET ALL", "DISCARD ALL", "DEALLOCATE ALL", "deallocate lease_3",
      "PREPARE lease_3 AS SELECT 1", "COPY out FROM STDIN",
      "INSERT INTO jobs(id) VALUES ('new')", "UPDATE jobs SET done = 1", "DELETE FROM jobs",
      [[DELETE FROM "jobs"]], "TRUNCATE jobs", "TRUNCATE lease_fences",
      "INSERT INTO lease_fences VALUES ('r', 9)", "UPDATE lease_fences SET fence = 0",
      "WITH d AS (DELETE FROM jobs RETURNING 1) SELECT count(*) FROM d",
      "DO $$ BEGIN UPDATE jobs SET fence = 0; END $$",
      "DO $$ BEGIN EXECUTE 'DELETE FROM ' || 'jo' || 'bs'; END $$",
      "SELECT wipe_now()",
      "DROP TABLE jobs", "ALTER TABLE jobs ADD COLUMN x int", "ALTER TABLE jobs DISABLE TRIGGER lease_guard_rows",
      "CREATE TRIGGER t2 AFTER UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION wipe()",
      "CREATE INDEX i ON jobs(owner)", "DROP INDEX lease_jobs_pending", "CREATE TABLE lease_mine(x int)",
      "DROP FUNCTION lease_guard() CASCADE", "DROP SCHEMA public CASCADE",
      "DROP TABLE IF EXISTS Lease_A_Name_Longer_Than_Twenty_Three_Bytes",
      "INSERT INTO out VALUES ('x', 2, '3'); COMMIT",
    }
    for _, sql in ipairs(refused) do
      local err = H.error_of(db.with_lease, db, "job", "A", fence, 110, function(tx)
        tx:exec("INSERT INTO out VALUES ('kept?', 0, '0')")
        local e = H.error_of(tx.exec, tx, sql)
        assert(e:find("[misuse]", 1, true), sql .. ": " .. e)
        assert.matches("^lease%.tx:exec: ", e)
        -- the transaction is still open and usable
        assert.are.equal(1, tx:exec("INSERT INTO out VALUES ('after', 0, '0')"))
        error("roll back: " .. sql)
      end)
      assert.matches("roll back: " .. sql, err, 1, true)
    end
    assert.are.same(before, everything(p))
  end)

  it("refuses a statement that creates a temporary object or one named like the engine's, whatever its first word", function()
    local before = everything(p)
    -- each with the reason named
    local refused = {
      { "SELECT * INTO TEMP TABLE jobs FROM jobs", "the engine's own tables" },
      { "SELECT 1 AS x INTO TEMP TABLE jobs", "the engine's own tables" },
      { "select 1 as x into jobs", "the engine's own tables" },
      { "WITH j AS (SELECT * FROM out) SELECT * INTO TEMPORARY lease_fences FROM j", "the engine's own tables" },
      { "(SELECT 1 AS x INTO TEMP jobs)", "the engine's own tables" },
      { "SELECT 1 AS insert, 2 INTO TEMP jobs", "the engine's own tables" },
      { "SELECT 1 AS x INTO TEMP jobs UNION SELECT 2", "the engine's own tables" },
      { "EXPLAIN ANALYZE SELECT 1 AS x INTO TEMP jobs", "the engine's own tables" },
      { "EXPLAIN (ANALYZE) CREATE TEMP TABLE jobs AS SELECT 1 AS x", "the engine's own tables" },
      { "PREPARE mine AS SELECT 1 AS x INTO TEMP scratch", "temporary objects are not allowed" },
      { "CREATE TEMP TABLE scratch(x int)", "temporary objects are not allowed" },
      { "CREATE GLOBAL TEMPORARY TABLE scratch(x int)", "temporary objects are not allowed" },
      { "CREATE OR REPLACE TEMP VIEW text AS SELECT 1 AS x", "temporary objects are not allowed" },
      { "CREATE TEMP SEQUENCE s", "temporary objects are not allowed" },
      { "SELECT 1 AS x INTO TEMP bytea", "temporary objects are not allowed" },
      { "SELECT 1 AS x INTO LOCAL TEMP int8", "temporary objects are not allowed" },
      { "EXPLAIN ANALYZE CREATE TEMP TABLE bytea AS SELECT 1 AS x", "temporary objects are not allowed" },
      { "CREATE TABLE pg_temp.bytea(x int)", "temporary objects are not allowed" },
      { [[CREATE TYPE "pg_temp".int8 AS (x int)]], "temporary objects are not allowed" },
      { "CREATE VIEW v AS SELECT * FROM pg_temp.t", "temporary objects are not allowed" },
      { "IMPORT FOREIGN SCHEMA s FROM SERVER far INTO public", "IMPORT FOREIGN SCHEMA is not allowed" },
      { "LOAD 'auto_explain'", "LOAD is not allowed" },
      { "SET ROLE lease", "SET, RESET and DISCARD are not allowed" },
      { "SET SESSION AUTHORIZATION DEFAULT", "SET, RESET and DISCARD are not allowed" },
      { "RESET ROLE", "SET, RESET and DISCARD are not allowed" },
    }
    for _, c in ipairs(refused) do
      local err = H.error_of(db.with_lease, db, "job", "A", fence, 110, function(tx)
        local e = H.error_of(tx.exec, tx, c[1])
        assert(e:find("[misuse]", 1, true) and e:find(c[2], 1, true), c[1] .. ": " .. e)
        assert.matches("^lease%.tx:exec: statement refused: ", e)
        error("roll back: " .. c[1])
      end)
      assert.matches("roll back: " .. c[1], err, 1, true)
    end
    assert.are.same(before, everything(p))
    -- statements that only look alike are run: INSERT/MERGE INTO, a column named temp, a
    -- table of the caller's made by SELECT ... INTO, EXPLAIN of a read of jobs
    assert.is_true(db:with_lease("job", "A", fence, 110, function(tx)
      assert.are.equal(1, tx:exec("INSERT INTO out SELECT 'i', 1, 'x'"))
      assert.are.equal(1, tx:exec("WITH s AS (SELECT 2 AS f) INSERT INTO out SELECT 'w', f, 'x' FROM s"))
      assert.are.equal(1, tx:exec("MERGE INTO out USING (SELECT 3 AS f) s ON out.fence = s.f"
        .. " WHEN NOT MATCHED THEN INSERT VALUES ('m', s.f, 'x')"))
      assert.are.equal(0, tx:exec("CREATE TABLE readings(temp float8, temporary int)"))
      tx:exec("SELECT fence INTO out_copy FROM out")
      assert.is_true(tx:rows("EXPLAIN SELECT * FROM jobs")() ~= nil)
      -- nothing of the session's own was made: no temporary schema, jobs is the engine's
      local r = tx:rows("SELECT pg_my_temp_schema()::int AS t, 'jobs'::regclass::text AS j,"
        .. " to_regclass('pg_temp.jobs') IS NULL AS gone")()
      assert.are.same({ t = 0, j = "jobs", gone = 1 }, r)
    end))
    assert.are.equal("3\n", H.psql(p, "SELECT count(*) FROM out_copy"))
    -- the engine's later writes on this handle go to its own table
    assert.is_true(db:complete("job", "A", fence, 111, "stored"))
    assert.are.equal("1|stored\n", H.psql(p, "SELECT done, convert_from(result, 'UTF8') FROM jobs WHERE id = 'job'"))
  end)

  it("refuses LISTEN and UNLISTEN, so the handle's wait is still woken; NOTIFY is sent at the commit", function()
    assert.are.equal(false, db:wait("q", 0.05))   -- the handle listens from here on
    for _, sql in ipairs({ "UNLISTEN *", "UNLISTEN lease_wake", "unlisten \"lease_wake\"", "LISTEN mine" }) do
      assert.is_true(db:with_lease("job", "A", fence, 110, function(tx)
        local e = H.error_of(tx.exec, tx, sql)
        assert.matches("lease.tx:exec: statement refused: LISTEN and UNLISTEN are not allowed", e, 1, true)
      end))
    end
    -- a NOTIFY of the caller's goes out with the commit, as any other client's
    assert.is_true(db:with_lease("job", "A", fence, 110, function(tx)
      assert.are.equal(0, tx:exec("NOTIFY mine, 'x'"))
      assert.are.equal(1, tx:rows("SELECT count(*) AS n FROM pg_listening_channels() c WHERE c = 'lease_wake'")().n)
    end))
    -- another handle's enqueue wakes this handle's wait, long before its timeout
    local t = T.thread.spawn(function(path)
      local L = require("lease")
      local h = L.open(path)
      L.sleep(0.3)
      local at = L.now()
      h:enqueue("late", { queue = "q" })
      h:close()
      return at
    end, p)
    local woken = db:wait("q", 5)
    local back = lease.now()
    local ok, at = t:join()
    assert(ok, at)
    assert.are.equal(true, woken)
    assert.is_true(back - at < 2.5, "woke " .. (back - at) .. " s after the enqueue")
  end)

  it("refuses a write of the engine's tables by the caller's triggers, also deferred to COMMIT", function()
    local before = everything(p)
    -- a trigger that fires on the caller's insert
    H.psql(p, "CREATE FUNCTION wipe() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM jobs;"
      .. " RETURN NEW; END $$; CREATE TRIGGER sneak AFTER INSERT ON out FOR EACH ROW EXECUTE FUNCTION wipe()")
    local err = H.error_of(db.with_lease, db, "job", "A", fence, 110, function(tx)
      assert.matches("the engine's own tables", H.error_of(tx.exec, tx, "INSERT INTO out VALUES ('x', 1, '1')"), 1, true)
      error("done")
    end)
    assert.matches("done", err, 1, true)
    -- the same trigger, deferred to COMMIT: the commit fails, nothing is kept
    H.psql(p, "DROP TRIGGER sneak ON out; CREATE CONSTRAINT TRIGGER late AFTER INSERT ON out"
      .. " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION wipe()")
    err = H.error_of(db.with_lease, db, "job", "A", fence, 110, function(tx)
      assert.are.equal(1, tx:exec("INSERT INTO out VALUES ('x', 1, '1')"))
      assert.is_true(tx:complete("early"))
    end)
    assert.matches("the engine's own tables", err, 1, true)
    assert.are.same(before, everything(p))
    -- other clients write the tables as before: the guard is for with_lease only
    H.psql(p, "DROP TRIGGER late ON out; INSERT INTO out VALUES ('psql', 1, '1')")
    assert.are.equal("1\n", H.psql(p, "WITH u AS (UPDATE jobs SET owner = owner RETURNING 1) SELECT count(*) FROM u"))
  end)

  it("names the refusals and keeps the transaction usable after a failed statement", function()
    assert.is_true(db:with_lease("job", "A", fence, 110, function(tx)
      assert.matches("it would begin, commit or roll back the with_lease transaction",
        H.error_of(tx.exec, tx, "COMMIT"), 1, true)
      assert.matches("it would write the engine's own tables (jobs, lease_fences): use tx complete, renew or fence_gate",
        H.error_of(tx.exec, tx, "DELETE FROM jobs"), 1, true)
      assert.matches("it would change the engine's own tables", H.error_of(tx.exec, tx, "DROP TABLE jobs"), 1, true)
      assert.matches("more than one statement", H.error_of(tx.exec, tx, "SELECT 1; SELECT 2"), 1, true)
      assert.matches("does not exist (SQLSTATE 42P01) [error]",
        H.error_of(tx.rows, tx, "SELECT * FROM missing_table"), 1, true)
      assert.matches("syntax error", H.error_of(tx.exec, tx, "SELEC 1"), 1, true)
      tx:exec("CREATE TABLE u(x int UNIQUE)")
      tx:exec("INSERT INTO u VALUES (1)")
      assert.matches("%[constraint%]", H.error_of(tx.exec, tx, "INSERT INTO u VALUES (?)", 1))
      -- reads of the engine's tables, savepoints and reads of the catalog work
      local n = 0
      for r in tx:rows("SELECT id FROM jobs") do n = n + 1; assert.are.equal("job", r.id) end
      assert.are.equal(1, n)
      tx:exec("SAVEPOINT s")
      tx:exec("INSERT INTO out VALUES ('s', 1, '1')")
      tx:exec("RELEASE s")
      tx:exec("SAVEPOINT s2")
      tx:exec("INSERT INTO out VALUES ('gone', 1, '1')")
      tx:exec("ROLLBACK TO SAVEPOINT s2")
      for _ in tx:rows("SELECT column_name FROM information_schema.columns WHERE table_name = 'jobs'"
        .. " AND table_schema = current_schema()") do n = n + 1 end
      -- the job's row and jobs' 8 columns
      assert.are.equal(9, n)
    end))
    assert.are.equal("'s'|1|1\n", out_rows(p))
  end)

  it("gives a database made without the gate and the guards both at the first with_lease", function()
    H.psql(p, "DROP TABLE lease_fences; DROP FUNCTION lease_guard() CASCADE")   -- every guard trigger
    db:close()
    db = lease.open(p)
    assert.is_true(db:with_lease("job", "A", fence, 110, function(tx)
      assert.matches("the engine's own tables", H.error_of(tx.exec, tx, "UPDATE jobs SET done = 1"), 1, true)
      assert.is_true(tx:fence_gate("r", 2))
    end))
    assert.are.equal("2\n", H.psql(p, "SELECT fence FROM lease_fences"))
    assert.are.equal("2\n", H.psql(p, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'jobs'::regclass"
      .. " AND tgname LIKE 'lease_guard%'"))
  end)
end)
