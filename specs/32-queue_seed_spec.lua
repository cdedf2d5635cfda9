-- The job queue and the seed: the contract's jobs table stays the seed's,
-- a database made by the seed's own CREATE TABLE gets every feature, and
-- the seed's steps (docs/contract/seed.txt), run as raw SQL by another
-- client, keep their outcomes on a database that uses the queue.
local H = require("helpers")
local lease = H.lease

-- The seed's statements (docs/contract/CONTRACT.md steps 1-7), as another
-- client sends them; each returns what the seed's function would.
local SEED_CREATE = "CREATE TABLE IF NOT EXISTS jobs(id TEXT PRIMARY KEY, owner TEXT,"
  .. " until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT,"
  .. " done INTEGER NOT NULL DEFAULT 0)"
local seed = {}
function seed.enqueue(p, id)
  return H.sqlite3(p, "INSERT OR IGNORE INTO jobs(id) VALUES ('" .. id .. "'); SELECT changes()") == "1\n"
end
function seed.claim(p, id, owner, now, ttl)
  local out = H.sqlite3(p, "BEGIN IMMEDIATE; UPDATE jobs SET owner = '" .. owner .. "', until = "
    .. (now + ttl) .. ", fence = fence + 1 WHERE id = '" .. id .. "' AND done = 0 AND until <= " .. now
    .. "; SELECT changes(), fence FROM jobs WHERE id = '" .. id .. "'; COMMIT")
  local n, fence = out:match("^(%d+)|(%d+)")
  return n == "1" and tonumber(fence) or nil
end
function seed.renew(p, id, owner, fence, now, ttl)
  return H.sqlite3(p, "UPDATE jobs SET until = " .. (now + ttl) .. " WHERE id = '" .. id .. "' AND owner = '"
    .. owner .. "' AND fence = " .. fence .. " AND done = 0 AND until > " .. now .. "; SELECT changes()") == "1\n"
end
function seed.complete(p, id, owner, fence, now, result)
  return H.sqlite3(p, "UPDATE jobs SET result = '" .. result .. "', done = 1 WHERE id = '" .. id
    .. "' AND owner = '" .. owner .. "' AND fence = " .. fence .. " AND done = 0 AND until > " .. now
    .. "; SELECT changes()") == "1\n"
end
function seed.release(p, id, owner, fence)
  return H.sqlite3(p, "UPDATE jobs SET owner = NULL, until = 0 WHERE id = '" .. id .. "' AND owner = '"
    .. owner .. "' AND fence = " .. fence .. " AND done = 0; SELECT changes()") == "1\n"
end
function seed.state(p, id)
  return H.sqlite3(p, "SELECT id, owner, until, fence, result, done FROM jobs WHERE id = '" .. id .. "'")
end

describe("a database the seed made #sqlite", function()
  it("opens and gets every feature, its rows claimable in insertion order", function()
    local p = H.path("seeded")
    H.sqlite3(p, SEED_CREATE .. "; INSERT INTO jobs(id) VALUES ('s1'), ('s2');"
      .. " INSERT INTO jobs(id, owner, until, fence, result, done) VALUES ('s0', 'x', 5, 3, 'old', 1)")
    local db = lease.open(p)
    -- the jobs table is exactly as the seed made it
    assert.are.equal(SEED_CREATE:gsub("IF NOT EXISTS ", "") .. "\n",
      H.sqlite3(p, "SELECT sql FROM sqlite_master WHERE name = 'jobs'"))
    assert.are.same({ "completed", 5 }, { db:state("s0", 10).status, db:state("s0").finished_at })
    assert.are.same({ "s1", 1 }, { H.two(db:claim_next("w", 0, 10)) })
    db:enqueue("new", { payload = "p", priority = -1 })
    assert.are.same({ "new", 1 }, { H.two(db:claim_next("w", 0, 10)) })
    assert.are.same({ "s2", 1 }, { H.two(db:claim_next("w", 0, 10)) })
    assert.are.equal("retryable", (db:fail("s2", "w", 1, 1, "x")))
    assert.are.equal("ok\n", H.sqlite3(p, "PRAGMA integrity_check"))
    db:close()
  end)

  it("opens read-only with the queue's defaults, writing nothing", function()
    local p = H.path("seeded-ro")
    H.sqlite3(p, SEED_CREATE .. "; INSERT INTO jobs(id) VALUES ('a')")
    local before = H.read(p)
    local db = lease.open(p, { readonly = true })
    local s = db:state("a", 1)
    assert.are.same({ "available", "default", 0, 25 }, { s.status, s.queue, s.attempt, s.max_attempts })
    assert.are.equal(1, db:counts(1).available)
    db:close()
    H.assert_bytes(before, p)
  end)
end)

describe("the seed's steps on a database using the queue #sqlite", function()
  local db, p
  before_each(function()
    db, p = H.fresh()
    db:enqueue("queued", { payload = "data", priority = 2 })
    db:enqueue("sched", { run_at = 1000 })
    db:enqueue("disc", { max_attempts = 1 })
    db:fail("disc", "w", db:claim("disc", "w", 0, 10), 1, "gone")
  end)
  after_each(function() db:close() end)

  it("step 1: CREATE TABLE IF NOT EXISTS changes nothing", function()
    local before = H.qsnapshot(p)
    H.sqlite3(p, SEED_CREATE)
    assert.are.same(before, H.qsnapshot(p))
  end)

  it("step 2: enqueue of an existing id is refused and keeps its data; a new one is queued last", function()
    assert.is_false(seed.enqueue(p, "sched"))
    assert.is_false(seed.enqueue(p, "disc"))
    assert.are.same({ 1000, "discarded" }, { db:state("sched").run_at, db:state("disc", 1).status })
    assert.is_true(seed.enqueue(p, "raw"))
    local s = db:state("raw", 1)
    assert.are.same({ "available", "default", 0, 0 }, { s.status, s.queue, s.priority, s.attempt })
    assert.are.same({ "raw", "queued" }, H.ids(db:claim_next("w", 1, 10, 5)))
  end)

  it("step 3: state reads the contract's columns as the seed wrote them", function()
    assert.are.equal("queued||0.0|0||0\n", seed.state(p, "queued"))
    assert.are.equal("disc||0.0|1||0\n", seed.state(p, "disc"))
  end)

  it("steps 4-7: claim, renew, complete and release keep their outcomes", function()
    -- claim: free jobs (queued, scheduled: the seed knows no run_at) are claimed, the fence grows
    assert.are.equal(1, seed.claim(p, "queued", "A", 0, 10))
    assert.are.equal(1, seed.claim(p, "sched", "A", 0, 10))
    assert.is_nil(seed.claim(p, "queued", "B", 9.5, 10))      -- held
    assert.are.equal(2, seed.claim(p, "queued", "B", 10, 10))  -- the boundary now == until
    assert.are.equal(2, db:state("queued").attempt)            -- each claim counted
    -- renew and complete only under the current lease
    assert.is_false(seed.renew(p, "queued", "A", 1, 11, 10))
    assert.is_true(seed.renew(p, "queued", "B", 2, 11, 10))
    assert.is_false(seed.complete(p, "queued", "A", 1, 12, "late"))
    assert.is_true(seed.complete(p, "queued", "B", 2, 12, "ok"))
    assert.is_false(seed.complete(p, "queued", "B", 2, 12, "again"))
    assert.are.equal("queued|B|21.0|2|ok|1\n", seed.state(p, "queued"))
    assert.are.same({ "completed", "data" }, { db:state("queued", 13).status, db:state("queued").payload })
    -- release keeps the fence
    assert.is_true(seed.release(p, "sched", "A", 1))
    assert.are.equal("sched||0.0|1||0\n", seed.state(p, "sched"))
    -- attempted once (the raw claim counted), waiting for its run_at
    assert.are.same({ "retryable", 1000 }, { db:state("sched", 13).status, db:state("sched").run_at })
    -- the engine still refuses what the queue ended, whoever asks
    assert.are.same({ nil, "discarded" }, { db:claim("disc", "C", 20, 10) })
    assert.are.same({ nil, "empty" }, { db:claim_next("C", 20, 10) })
  end)

  it("a row another client deletes takes its queue data and errors with it", function()
    H.sqlite3(p, "DELETE FROM jobs WHERE id = 'disc'")
    assert.are.equal("0|0\n", H.sqlite3(p, "SELECT (SELECT count(*) FROM lease_queue WHERE id = 'disc'),"
      .. " (SELECT count(*) FROM lease_errors WHERE id = 'disc')"))
    assert.is_true(db:enqueue("disc"))
    assert.are.same({ "available", 0, {} }, { db:state("disc", 1).status, db:state("disc").attempt, db:state("disc").errors })
  end)

  it("a job done by hand and reset by hand gets a fresh attempt budget", function()
    db:claim("queued", "w", 0, 10)
    H.sqlite3(p, "UPDATE jobs SET done = 1 WHERE id = 'queued'")
    assert.are.equal("completed", db:state("queued", 1).status)
    H.sqlite3(p, "UPDATE jobs SET done = 0, owner = NULL, until = 0 WHERE id = 'queued'")
    local s = db:state("queued", 1)
    assert.are.same({ "available", 0 }, { s.status, s.attempt })
  end)

  it("a fence another client lowers counts no attempt below 0, by id or by claim_next", function()
    local q = H.path("lowered")
    local d = lease.open(q)
    -- inserted with fence 5, its attempts count from 5; then lowered to 1
    H.sqlite3(q, "INSERT INTO jobs(id, fence) VALUES ('j', 5); UPDATE jobs SET fence = 1 WHERE id = 'j'")
    assert.are.same({ "available", 0 }, { d:state("j", 1).status, d:state("j").attempt })
    local id, fence, job = d:claim_next("w", 1, 10)
    assert.are.same({ "j", 2, 0, 0 }, { id, fence, job.attempt, d:state("j").attempt })
    -- no attempt counted, so failing it with a budget of 1 retries, never discards
    H.sqlite3(q, "UPDATE lease_queue SET max_attempts = 1")
    assert.are.equal("retryable", (d:fail("j", "w", fence, 2, "x")))
    -- the failure counted from the fence it found: the next claim is attempt 1
    local f = d:claim("j", "w2", 100, 10)
    assert.are.same({ 3, 1 }, { f, d:state("j").attempt })
    d:close()
  end)

  it("a base_fence another client wrote far below the fence counts the largest attempt, not a negative one", function()
    local q = H.path("basefence")
    local d = lease.open(q)
    assert.is_true(d:enqueue("j", { max_attempts = 3 }))
    H.sqlite3(q, "UPDATE jobs SET fence = 5; UPDATE lease_queue SET base_fence = -9223372036854775808")
    local id, fence, job = d:claim_next("w", 1, 10)
    assert.are.same({ "j", 6 }, { id, fence })
    assert.is_true(job.attempt >= 2^62, tostring(job.attempt))
    assert.is_true(d:state("j").attempt >= 2^62, tostring(d:state("j").attempt))
    -- past its budget: failing it discards the job
    assert.are.equal("discarded", (d:fail("j", "w", fence, 2, "x")))
    d:close()
  end)
end)

-- A lease_queue of the layout that kept the attempts in a column of its own,
-- counted up by a trigger at each claim, as the engine made it before.
local OLD_LAYOUT = "CREATE TABLE lease_queue(id TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL,"
  .. " queue TEXT NOT NULL DEFAULT 'default', priority INTEGER NOT NULL DEFAULT 0, run_at REAL,"
  .. " attempt INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL DEFAULT 25,"
  .. " payload BLOB, state INTEGER NOT NULL DEFAULT 0, finished_at REAL);"
  .. " CREATE INDEX lease_queue_ready ON lease_queue(queue, priority, run_at, seq) WHERE state = 0;"
  .. " CREATE INDEX lease_queue_ended ON lease_queue(finished_at) WHERE state <> 0;"
  .. " CREATE TABLE lease_errors(id TEXT NOT NULL, attempt INTEGER, at REAL, owner TEXT, fence INTEGER,"
  .. " message BLOB);"
  .. " CREATE INDEX lease_errors_job ON lease_errors(id);"
  .. " CREATE TRIGGER lease_errors_kept AFTER INSERT ON lease_errors BEGIN"
  .. " DELETE FROM lease_errors WHERE id = new.id AND rowid <= (SELECT rowid"
  .. " FROM lease_errors WHERE id = new.id ORDER BY rowid DESC LIMIT 1 OFFSET 20); END;"
  .. " CREATE TRIGGER lease_jobs_deleted AFTER DELETE ON jobs BEGIN"
  .. " DELETE FROM lease_queue WHERE id = old.id; DELETE FROM lease_errors WHERE id = old.id; END;"
  .. " CREATE TRIGGER lease_jobs_done AFTER UPDATE OF done ON jobs"
  .. " WHEN (new.done <> 0) <> (old.done <> 0) BEGIN"
  .. " UPDATE lease_queue SET state = CASE WHEN new.done <> 0 THEN 1 ELSE 0 END,"
  .. " finished_at = CASE WHEN new.done <> 0 THEN new.until END,"
  .. " attempt = CASE WHEN new.done <> 0 THEN attempt ELSE 0 END WHERE id = new.id; END;"
  .. " CREATE TRIGGER lease_jobs_claimed AFTER UPDATE OF fence ON jobs"
  .. " WHEN new.fence > old.fence BEGIN"
  .. " UPDATE lease_queue SET attempt = attempt + 1 WHERE id = new.id; END;"
  .. " CREATE TRIGGER lease_jobs_added AFTER INSERT ON jobs WHEN typeof(new.id) = 'text' BEGIN"
  .. " INSERT OR REPLACE INTO lease_queue(id, seq, state, finished_at)"
  .. " VALUES (new.id, new.rowid, new.done <> 0, CASE WHEN new.done <> 0 THEN new.until END); END;"

describe("a database of the earlier queue layout #sqlite", function()
  it("opens with every job's attempts kept, then counts them by the fence", function()
    local p = H.path("oldlayout")
    -- a: claimed twice (attempt 2), then released; b: a retry reset its
    -- attempts after fence 4; c: done; d: enqueued, never claimed
    H.sqlite3(p, SEED_CREATE .. "; " .. OLD_LAYOUT
      .. " INSERT INTO jobs(id) VALUES ('a'), ('b'), ('c'), ('d');"
      .. " UPDATE jobs SET fence = fence + 1 WHERE id = 'a';"
      .. " UPDATE jobs SET fence = fence + 1 WHERE id = 'a';"
      .. " UPDATE jobs SET fence = 4 WHERE id = 'b'; UPDATE lease_queue SET attempt = 0 WHERE id = 'b';"
      .. " UPDATE jobs SET fence = 1, done = 1, until = 7 WHERE id = 'c';"
      .. " UPDATE lease_queue SET max_attempts = 3, payload = 'pa' WHERE id = 'a'")
    assert.are.equal("a|2\nb|0\nc|1\nd|0\n",
      H.sqlite3(p, "SELECT id, attempt FROM lease_queue ORDER BY id"))
    local db = lease.open(p)
    local function att(id) return db:state(id, 0).attempt end
    assert.are.same({ 2, 0, 1, 0 }, { att("a"), att("b"), att("c"), att("d") })
    assert.are.same({ "pa", 3, "completed" }, { db:state("a").payload, db:state("a").max_attempts,
      db:state("c", 10).status })
    -- the attempts column and the claim's trigger are gone; a claim writes
    -- no queue row, and its fence counts the attempt
    assert.are.equal("", H.sqlite3(p, "SELECT name FROM pragma_table_info('lease_queue')"
      .. " WHERE name = 'attempt'"))
    assert.are.equal("", H.sqlite3(p, "SELECT name FROM sqlite_master WHERE name IN"
      .. " ('lease_jobs_claimed', 'lease_jobs_added')"))
    local f = db:claim("a", "w", 0, 10)
    assert.are.same({ 3, 3 }, { f, att("a") })
    -- the third attempt was the last: failing it discards the job
    assert.are.equal("discarded", (db:fail("a", "w", f, 1, "x")))
    assert.are.same({ "b", 5 }, { H.two(db:claim_next("w", 0, 10)) })
    assert.are.equal(1, att("b"))
    assert.are.equal("ok\n", H.sqlite3(p, "PRAGMA integrity_check"))
    db:close()
    -- a second open finds the layout done and changes nothing
    local before = H.qsnapshot(p)
    lease.open(p):close()
    assert.are.same(before, H.qsnapshot(p))
  end)
end)

describe("counts over jobs other clients added #sqlite", function()
  -- what counts must say, by state and by status
  local function counts_of(db, now, queue)
    local c = db:counts(now, queue)
    return { c.total, c.done, c.ready, c.held, c.blocked, c.available, c.scheduled, c.running,
             c.retryable, c.completed, c.discarded, c.cancelled }
  end

  it("counts every jobs row, whether or not the queue has a row for it", function()
    local db, p = H.fresh("counts-mixed")
    for _, id in ipairs({ "a", "b", "c", "d", "e" }) do db:enqueue(id) end
    db:enqueue("o", { queue = "other" })
    db:enqueue("later", { run_at = 50 })
    assert.is_true(db:complete("a", "w", db:claim("a", "w", 0, 10), 1, "r"))
    assert.are.equal(1, db:claim("b", "w", 0, 10))
    db:enqueue("c1", { max_attempts = 1 })
    assert.are.equal("discarded", (db:fail("c1", "w", db:claim("c1", "w", 0, 10), 1, "x")))
    assert.is_true(db:cancel("d", 1))
    -- another client: a completed row, and a row whose id is not text (the
    -- queue keeps no row for it; it is blocked, and counted in the default queue)
    H.sqlite3(p, "INSERT INTO jobs(id, owner, until, fence, result, done) VALUES ('f', 'x', 1, 1, 'r', 1);"
      .. " INSERT INTO jobs(id) VALUES (x'07')")
    assert.are.equal("9\n", H.sqlite3(p, "SELECT count(*) FROM lease_queue"))
    --                total done ready held blocked avail sched run retry compl disc canc
    assert.are.same({ 10, 2, 6, 1, 1, 4, 1, 1, 0, 2, 1, 1 }, counts_of(db, 2))
    assert.are.same({ 9, 2, 5, 1, 1, 3, 1, 1, 0, 2, 1, 1 }, counts_of(db, 2, "default"))
    assert.are.same({ 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0 }, counts_of(db, 2, "other"))
    -- without the row the queue cannot hold, every job has its queue row
    H.sqlite3(p, "DELETE FROM jobs WHERE id = x'07'")
    assert.are.same({ 9, 2, 6, 1, 0, 3, 1, 1, 0, 2, 1, 1 }, counts_of(db, 2))
    assert.are.same({ 8, 2, 5, 1, 0, 2, 1, 1, 0, 2, 1, 1 }, counts_of(db, 2, "default"))
    -- after the lease and the schedule ran out
    assert.are.same({ 9, 2, 7, 0, 0, 5, 0, 0, 0, 2, 1, 1 }, counts_of(db, 100))
    db:close()
  end)

  it("counts a queue's finished jobs only, when other queues have finished jobs too", function()
    local db = H.fresh("counts-queues")
    db:enqueue("x")
    db:enqueue("y", { queue = "other" })
    db:enqueue("z", { queue = "other" })
    for _, id in ipairs({ "x", "y", "z" }) do
      assert.is_true(db:complete(id, "w", db:claim(id, "w", 0, 10), 1, "r"))
    end
    db:enqueue("open", { queue = "other" })
    --                total done ready held blocked avail sched run retry compl disc canc
    assert.are.same({ 4, 3, 1, 0, 0, 1, 0, 0, 0, 3, 0, 0 }, counts_of(db, 2))
    assert.are.same({ 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0 }, counts_of(db, 2, "default"))
    assert.are.same({ 3, 2, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0 }, counts_of(db, 2, "other"))
    assert.are.same({ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, counts_of(db, 2, "none"))
    db:close()
  end)

  it("counts a job another client renamed or replaced by its rowid as its jobs row says", function()
    --                total done ready held blocked avail sched run retry compl disc canc
    local cases = {
      { "INSERT INTO jobs(id) VALUES ('a'); UPDATE jobs SET id = 'b' WHERE id = 'a'",
        { 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0 } },
      { "INSERT INTO jobs(id, done) VALUES ('a', 1); UPDATE jobs SET id = 'b' WHERE id = 'a';"
        .. " UPDATE jobs SET done = 0 WHERE id = 'b'",
        { 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0 } },
      { "INSERT INTO jobs(id) VALUES ('a'); INSERT INTO jobs(id) VALUES (x'62');"
        .. " INSERT OR REPLACE INTO jobs(rowid, id) VALUES (1, 'c')",
        { 2, 0, 1, 0, 1, 2, 0, 0, 0, 0, 0, 0 } },
      { "INSERT INTO jobs(id, done) VALUES ('a', 1), ('b', 0); UPDATE jobs SET id = NULL WHERE id = 'b'",
        { 2, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0 } },
    }
    for k, case in ipairs(cases) do
      local db, p = H.fresh("counts-renamed-" .. k)
      H.sqlite3(p, case[1])
      assert.are.same(case[2], counts_of(db, 5), case[1])
      assert.are.same(case[2], counts_of(db, 5, "default"), case[1])
      db:close()
    end
  end)

  it("counts a file made without the queue on a read-only handle", function()
    local p = H.path("counts-seed-ro")
    H.sqlite3(p, SEED_CREATE .. "; INSERT INTO jobs(id) VALUES ('a'), ('b');"
      .. " INSERT INTO jobs(id, owner, until, fence, result, done) VALUES ('c', 'x', 5, 1, 'r', 1), ('d', 'x', 50, 1, NULL, 0)")
    local before = H.read(p)
    local db = lease.open(p, { readonly = true })
    assert.are.same({ 4, 1, 2, 1, 0, 2, 0, 1, 0, 1, 0, 0 }, counts_of(db, 10))
    assert.are.same({ 4, 1, 2, 1, 0, 2, 0, 1, 0, 1, 0, 0 }, counts_of(db, 10, "default"))
    db:close()
    H.assert_bytes(before, p)
  end)
end)

describe("a job another client renames", function()
  it("keeps its payload, priority, attempts, errors and place in the queue under the new id", function()
    local db, p = H.fresh("renamed")
    db:enqueue("first", { priority = 5 })
    db:enqueue("a", { payload = "pa", priority = 3, max_attempts = 5 })
    local id, fence = db:claim_next("w", 1, 10)
    assert.are.equal("a", id)
    assert.are.same({ "retryable" }, { (db:fail("a", "w", fence, 2, "boom", { run_at = 2 })) })
    H.sql(p, "UPDATE jobs SET id = 'b' WHERE id = 'a'")
    assert.is_nil(db:state("a"))
    local s = db:state("b", 1.5)
    assert.are.same({ "retryable", "pa", 3, 1, 5 }, { s.status, s.payload, s.priority, s.attempt, s.max_attempts })
    assert.are.equal(1, #s.errors)
    assert.are.equal("boom", s.errors[1].message)
    local got, f2, job = db:claim_next("w", 30, 10)
    assert.are.same({ "b", fence + 1, "pa", 2 }, { got, f2, job.payload, job.attempt })
    assert.is_true(db:complete("b", "w", f2, 31, "r"))
    local nid, nfence = db:claim_next("w", 32, 10)
    assert.are.same({ "first", 1 }, { nid, nfence })
    db:close()
  end)
end)

describe("a job another client renames, in SQLite's own ways #sqlite", function()
  local function queue_rows(p)
    return H.sqlite3(p, "SELECT quote(id), state, quote(CAST(payload AS TEXT)) FROM lease_queue ORDER BY seq")
  end

  it("to a blob id leaves the queue, and back to a text id joins it again", function()
    local db, p = H.fresh("renamed-blob")
    db:enqueue("a", { payload = "pa" })
    H.sqlite3(p, "UPDATE jobs SET id = x'6161' WHERE id = 'a'")
    assert.are.equal("", queue_rows(p))
    assert.are.same({ nil, "empty" }, { db:claim_next("w", 1, 10) })
    H.sqlite3(p, "UPDATE jobs SET id = 'c' WHERE id = x'6161'")
    assert.are.equal("'c'|0|NULL\n", queue_rows(p))
    local id, fence, job = db:claim_next("w", 1, 10)
    assert.are.same({ "c", 1, 1 }, { id, fence, job.attempt })
    -- a job with errors, renamed to NULL: its errors go with its queue row
    db:enqueue("n")
    assert.are.equal("retryable", (db:fail("n", "w", db:claim("n", "w", 0, 10), 1, "e", { run_at = 1 })))
    assert.are.equal("1\n", H.sqlite3(p, "SELECT count(*) FROM lease_errors"))
    H.sqlite3(p, "UPDATE jobs SET id = NULL WHERE id = 'n'")
    assert.are.equal("0|'c'|1\n", H.sqlite3(p, "SELECT (SELECT count(*) FROM lease_errors),"
      .. " (SELECT group_concat(quote(id)) FROM lease_queue), (SELECT count(*) FROM jobs WHERE id IS NULL)"))
    db:close()
  end)

  it("onto an id a write without triggers left in the queue gets its own queue row", function()
    local db, p = H.fresh("renamed-orphan")
    db:enqueue("a", { payload = "stale", priority = 9 })
    db:enqueue("x", { payload = "px" })
    assert.are.equal("retryable", (db:fail("a", "w", db:claim("a", "w", 0, 10), 1, "old error", { run_at = 1 })))
    -- a REPLACE by rowid deletes 'a' without firing its trigger: its queue row stays
    H.sqlite3(p, "INSERT OR REPLACE INTO jobs(rowid, id) SELECT rowid, 'y' FROM jobs WHERE id = 'a'")
    assert.are.equal("'a'|0|'stale'\n'y'|0|NULL\n'x'|0|'px'\n", queue_rows(p))
    H.sqlite3(p, "UPDATE jobs SET id = 'a' WHERE id = 'x'")
    assert.are.equal("'y'|0|NULL\n'a'|0|'px'\n", queue_rows(p))
    local s = db:state("a", 1)
    assert.are.same({ "available", "px", 0, {} }, { s.status, s.payload, s.priority, s.errors })
    local got = db:claim_next("w", 1, 10, { n = 5 })
    assert.are.same({ "y", "a" }, { got[1].id, got[2].id })
    db:close()
  end)

  -- SQLite fires the triggers of one statement in an order it does not
  -- document: each case runs with lease_jobs_done made before and after
  -- the engine's other triggers.
  local function done_trigger_made_last(p)
    local sql = H.sqlite3(p, "SELECT sql FROM sqlite_master WHERE name = 'lease_jobs_done'")
    H.sqlite3(p, "DROP TRIGGER lease_jobs_done; " .. sql)
  end

  it("and marks done or reopens in the same statement: the queue follows both", function()
    for _, last in ipairs({ false, true }) do
      local db, p = H.fresh("renamed-done-" .. tostring(last))
      if last then done_trigger_made_last(p) end
      db:enqueue("a", { payload = "pa" })
      db:enqueue("d")
      assert.is_true(db:complete("d", "w", db:claim("d", "w", 0, 10), 1, "r"))
      H.sqlite3(p, "UPDATE jobs SET id = 'b', done = 1, until = 5 WHERE id = 'a';"
        .. " UPDATE jobs SET id = 'e', done = 0, owner = NULL, until = 0 WHERE id = 'd'")
      assert.are.equal("'b'|1|'pa'\n'e'|0|NULL\n", queue_rows(p), tostring(last))
      assert.are.same({ "completed", "available" }, { db:state("b", 6).status, db:state("e", 6).status })
      local id, fence, job = db:claim_next("w", 6, 10)
      assert.are.same({ "e", 2, 1 }, { id, fence, job.attempt }, tostring(last))
      assert.are.same({ nil, "empty" }, { db:claim_next("w", 6, 10) })
      db:close()
    end
  end)

  it("in a file made before the engine followed renames: a writing handle brings the queue back", function()
    local p = H.path("renamed-older")
    -- a file of schema version 2 (no version row, no rename trigger), its
    -- layout as that version made it, where a job was renamed
    H.sqlite3(p, H.read((os.getenv("LEASE_SOURCE_DIR") or ".") .. "/specs/fixtures/sqlite_schema_v2.sql")
      .. "\nINSERT INTO jobs(id) VALUES ('a'), ('k'); UPDATE lease_queue SET payload = 'p' || id;"
      .. " UPDATE jobs SET id = 'b' WHERE id = 'a'")
    assert.are.equal("'a'|0|'pa'\n'k'|0|'pk'\n", queue_rows(p))
    -- a read-only handle reads the file's queue as it is, and writes nothing
    local before = H.read(p)
    local ro = lease.open(p, { readonly = true })
    assert.are.same({ "pk", 2 }, { ro:state("k", 1).payload, ro:counts(1).available })
    ro:close()
    H.assert_bytes(before, p)
    -- a writing handle makes the trigger again and gives the renamed job a queue row
    local db = lease.open(p)
    assert.are.equal("'b'|0|NULL\n'k'|0|'pk'\n", queue_rows(p))
    H.sqlite3(p, "UPDATE jobs SET id = 'c' WHERE id = 'k'")
    assert.are.same({ "b", "c" }, (function()
      local got = db:claim_next("w", 1, 10, { n = 5 })
      return { got[1].id, got[2].id }
    end)())
    assert.are.equal("pk", db:state("c").payload)
    db:close()
  end)
end)
