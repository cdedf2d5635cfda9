-- The job queue, data and claiming: enqueue's options, state's queue
-- fields and status, claim_next by queue, priority and run_at, attempts.
local H = require("helpers")
local lease = H.lease

describe("job data", function()
  local db, p
  before_each(function() db, p = H.fresh() end)
  after_each(function() db:close() end)

  it("enqueue stores payload (any bytes), queue, priority, run_at and max_attempts", function()
    assert.is_true(db:enqueue("a", { payload = "x\0y", queue = "mail", priority = -3, run_at = 50,
      max_attempts = 4 }))
    local s = db:state("a", 10)
    assert.are.same({ "x\0y", "mail", -3, 50, 0, 4, "scheduled" },
      { s.payload, s.queue, s.priority, s.run_at, s.attempt, s.max_attempts, s.status })
    assert.are.same({}, s.errors)
    -- the defaults: no payload, "default", 0, at once, 25 attempts
    db:enqueue("b")
    s = db:state("b", 10)
    assert.are.same({ nil, "default", 0, nil, 0, 25, "available" },
      { s.payload, s.queue, s.priority, s.run_at, s.attempt, s.max_attempts, s.status })
    assert.are.same({ false, "exists" }, { db:enqueue("a", { payload = "other" }) })
    assert.are.equal("x\0y", db:state("a").payload)
    assert.are.equal("", (function() db:enqueue("e", { payload = "" }) return db:state("e").payload end)())
  end)

  it("enqueue_many takes ids and tables, opts giving the defaults", function()
    assert.are.equal(3, db:enqueue_many({ "a", { id = "b", priority = 2, payload = "pb" },
      { id = "c", queue = "other" } }, { payload = "dflt", priority = 1 }))
    assert.are.same({ "dflt", 1, "default" }, { db:state("a").payload, db:state("a").priority, db:state("a").queue })
    assert.are.same({ "pb", 2 }, { db:state("b").payload, db:state("b").priority })
    assert.are.same({ "dflt", "other" }, { db:state("c").payload, db:state("c").queue })
    assert.are.equal(0, db:enqueue_many({ "a", "b" }))
  end)

  it("enqueue_many with data: each job its own, an id named twice added once with its first entry's, an existing job kept", function()
    db:enqueue("old", { payload = "keep", priority = 7 })
    local before = H.qsnapshot(p)
    assert.are.equal(4, db:enqueue_many({
      { id = "x", payload = "px\0", queue = "q", priority = 2, run_at = 50, max_attempts = 3, timeout = 9 },
      { id = "old", payload = "new", priority = 1 },
      { id = "y", payload = "" },
      { id = "x", payload = "again", priority = 9 },
      "w",
      { id = "z", queue = "q" } }))
    local x = db:state("x", 10)
    assert.are.same({ "px\0", "q", 2, 50, 3, 9, "scheduled" },
      { x.payload, x.queue, x.priority, x.run_at, x.max_attempts, x.timeout, x.status })
    assert.are.same({ "keep", 7, "default" }, { db:state("old").payload, db:state("old").priority, db:state("old").queue })
    assert.are.same({ "", "default", 0, 25, "available" },
      { db:state("y").payload, db:state("y").queue, db:state("y").priority, db:state("y").max_attempts,
        db:state("y", 10).status })
    assert.are.same({ "q", 0 }, { db:state("z").queue, db:state("z").priority })
    assert.is_nil(db:state("w").payload)
    -- the jobs in the order given, after the one there before
    local ids = {}
    for i, j in ipairs(db:jobs("all", 10)) do ids[i] = j.id end
    assert.are.same({ "old", "x", "y", "w", "z" }, ids)
    assert.are.equal(0, db:enqueue_many({ "x", { id = "y", payload = "other" } }))
    assert.are.equal("", db:state("y").payload)
    assert.are_not.same(before, H.qsnapshot(p))
  end)

  it("state is a pure read whose status depends on the now given", function()
    db:enqueue("a", { run_at = 100 })
    local before = H.qsnapshot(p)
    assert.are.equal("scheduled", db:state("a", 99).status)
    assert.are.equal("available", db:state("a", 100).status)
    assert.are.equal("available", lease.state(p, "a", 100).status)
    assert.are.same(before, H.qsnapshot(p))
    local f = db:claim("a", "w", 100, 10)
    assert.are.equal("running", db:state("a", 105).status)
    assert.are.equal("available", db:state("a", 110).status)
    db:complete("a", "w", f, 105, "r")
    assert.are.equal("completed", db:state("a", 200).status)
    assert.are.equal(105, db:state("a").finished_at)
  end)

  it("refuses bad options with the argument named, and writes nothing", function()
    db:enqueue("keep")
    local before = H.qsnapshot(p)
    for _, c in ipairs({
      { function() db:enqueue("a", 5) end, "#2 to 'enqueue' (opts must be a table or nil, got 5)" },
      { function() db:enqueue("a", { colour = 1 }) end, "(opts has an unknown key 'colour')" },
      { function() db:enqueue("a", { payload = 5 }) end, "(opts.payload must be" },
      { function() db:enqueue("a", { queue = "" }) end, "(opts.queue must be a" },
      { function() db:enqueue("a", { queue = ("q"):rep(256) }) end, "queue must be at most 255 bytes" },
      { function() db:enqueue("a", { priority = 1.5 }) end, "(opts.priority must be an integer" },
      { function() db:enqueue("a", { run_at = 0 / 0 }) end, "(opts.run_at must be a finite number" },
      { function() db:enqueue("a", { run_at = "1" }) end, "(opts.run_at must be a number" },
      { function() db:enqueue("a", { max_attempts = 0 }) end, "(opts.max_attempts must be an integer" },
      { function() db:enqueue_many({ "x", { id = "y", priority = "1" } }) end,
        "#1 to 'enqueue_many' (ids[2].priority must be an integer" },
      { function() db:enqueue_many({ "x", { priority = 1 } }) end, "(ids[2].id must be a non-empty string" },
      { function() db:enqueue_many({ "x", { id = "y", what = 1 } }) end, "(ids[2] has an unknown key 'what')" },
      { function() db:enqueue_many({ "x" }, { max_attempts = -1 }) end, "#2 to 'enqueue_many' (opts.max_attempts" },
      { function() lease.enqueue(p, "a", { priority = "x" }) end, "#3 to 'lease.enqueue' (opts.priority" },
    }) do
      local err = H.error_of(c[1])
      assert.truthy(err:find(c[2], 1, true), err)
    end
    assert.are.same(before, H.qsnapshot(p))
  end)
end)

describe("claim_next over the queue", function()
  local db, p
  before_each(function() db, p = H.fresh() end)
  after_each(function() db:close() end)

  local function next_id(now, opts)
    local id = db:claim_next("w", now, 10, opts)
    return id
  end

  it("takes the smallest (priority, run_at, enqueue order) first", function()
    db:enqueue("late", { run_at = 5 })
    db:enqueue("plain")
    db:enqueue("urgent", { priority = -1 })
    db:enqueue("early", { run_at = 1 })
    db:enqueue("low", { priority = 7 })
    db:enqueue("plain2")
    local got = {}
    for i = 1, 6 do got[i] = next_id(10) end
    assert.are.same({ "urgent", "plain", "plain2", "early", "late", "low" }, got)
    assert.are.same({ nil, "empty" }, { db:claim_next("w", 10, 10) })
  end)

  it("does not hand out a scheduled job one tick before run_at, and does at it", function()
    db:enqueue("s", { run_at = 100 })
    assert.are.same({ nil, "empty" }, { db:claim_next("w", 99.999, 10) })
    assert.are.same({}, db:claim_next("w", 99.999, 10, 5))
    assert.are.equal("s", next_id(100))
  end)

  it("claims by id a scheduled job, as the contract says", function()
    db:enqueue("s", { run_at = 100 })
    assert.are.equal(1, db:claim("s", "w", 0, 10))
    assert.are.equal(1, db:state("s", 5).attempt)
  end)

  it("keeps queues apart, the default queue being \"default\"", function()
    db:enqueue("m", { queue = "mail" })
    db:enqueue("d")
    assert.are.same({ nil, "empty" }, { db:claim_next("w", 0, 10, { queue = "other" }) })
    local id, fence, job = db:claim_next("w", 0, 10, { queue = "mail" })
    assert.are.same({ "m", 1 }, { id, fence })
    assert.are.same({ id = "m", fence = 1, queue = "mail", priority = 0, attempt = 1, max_attempts = 25 }, job)
    assert.are.same({ "d" }, H.ids(db:claim_next("w", 0, 10, { n = 5 })))
    assert.are.same({ nil, "empty" }, { lease.claim_next(p, "w", 0, 10, { queue = "mail" }) })
  end)

  it("hands out the payload and counts each claim as an attempt, which a release gives back", function()
    db:enqueue("a", { payload = "P\0", max_attempts = 3 })
    local jobs = db:claim_next("w", 0, 10, { n = 1 })
    assert.are.same({ { id = "a", fence = 1, payload = "P\0", queue = "default", priority = 0,
      attempt = 1, max_attempts = 3 } }, jobs)
    assert.are.equal(1, db:state("a").attempt)
    db:release("a", "w", 1)
    assert.are.equal(0, db:state("a").attempt)
    assert.are.equal(1, select(3, db:claim_next("w", 1, 10)).attempt)
    assert.are.same({ 2, 1 }, { db:state("a").fence, db:state("a").attempt })
    -- a claim by another client's raw SQL counts (the fence counts it), and
    -- the contract's release by raw SQL gives nothing back
    db:release("a", "w", 2)
    H.sql(p, "UPDATE jobs SET owner = 'raw', until = 100, fence = fence + 1 WHERE id = 'a'")
    assert.are.equal(1, db:state("a").attempt)
    H.sql(p, "UPDATE jobs SET owner = NULL, until = 0 WHERE id = 'a'")
    assert.are.equal(2, select(3, db:claim_next("w", 1, 10)).attempt)
  end)

  it("records an expired lease as an error at the next claim, and discards when it used the last attempt", function()
    db:enqueue("a", { max_attempts = 2 })
    local f1 = db:claim("a", "w1", 0, 10)
    -- w1 never reports; at 10 its lease expired
    local id, f2 = db:claim_next("w2", 10, 10)
    assert.are.same({ "a", 2 }, { id, f2 })
    local s = db:state("a", 10)
    assert.are.same({ { attempt = 1, at = 10, owner = "w1", fence = f1, message = "lease expired" } }, s.errors)
    assert.are.equal(2, s.attempt)
    -- w2 never reports either: its attempt was the last
    assert.are.same({ nil, "empty" }, { db:claim_next("w3", 20, 10) })
    s = db:state("a", 20)
    assert.are.same({ "discarded", 2, 2 }, { s.status, s.attempt, #s.errors })
    assert.are.same({ nil, "discarded" }, { db:claim("a", "w3", 30, 10) })
    assert.are.equal(2, db:state("a").fence)
  end)

  it("claims the next job when the first one found is discarded by its expiry", function()
    db:enqueue("a", { max_attempts = 1 })
    db:enqueue("b")
    db:claim("a", "w1", 0, 10)
    assert.are.same({ "b", 1 }, { H.two(db:claim_next("w2", 10, 10)) })
    assert.are.equal("discarded", db:state("a", 10).status)
  end)

  it("refuses bad claim_next options and writes nothing", function()
    db:enqueue("a")
    local before = H.qsnapshot(p)
    for _, c in ipairs({
      { { "w", 0, 10, { n = 0 } }, "#4 to 'claim_next' (opts.n must be an integer from 1 to 1000000" },
      { { "w", 0, 10, { queue = "" } }, "#4 to 'claim_next' (opts.queue must be a" },
      { { "w", 0, 10, { queue = 5 } }, "#4 to 'claim_next' (opts.queue must be a" },
      { { "w", 0, 10, { size = 2 } }, "#4 to 'claim_next' (opts has an unknown key 'size')" },
      { { "w", 0, 10, true }, "#4 to 'claim_next' (n must be an integer" },
    }) do
      local err = H.error_of(function() local _ = db:claim_next(table.unpack(c[1], 1, 4)) end)
      assert.truthy(err:find("bad argument " .. c[2], 1, true), err)
    end
    assert.are.same(before, H.qsnapshot(p))
  end)
end)

-- SQLite writes a completion's queue row itself, just before the guarded
-- UPDATE of jobs in the same transaction, and the trigger lease_jobs_done
-- (schema step 16) leaves a row so completed alone: one write of the row.
describe("a completion's queue row on SQLite #sqlite", function()
  local db, p
  before_each(function()
    db, p = H.fresh()
    -- count every write of a queue row, whoever makes it
    H.sqlite3(p, "CREATE TABLE spec_writes(id TEXT);"
      .. " CREATE TRIGGER spec_count AFTER UPDATE ON lease_queue BEGIN"
      .. " INSERT INTO spec_writes VALUES (new.id); END")
  end)
  after_each(function() db:close() end)

  local function writes(id)
    return tonumber(H.sqlite3(p, "SELECT count(*) FROM spec_writes WHERE id = '" .. id .. "'"))
  end
  local function row(id)
    return H.sqlite3(p, "SELECT j.done, quote(j.result), q.state, quote(q.finished_at)"
      .. " FROM jobs j JOIN lease_queue q ON q.id = j.id WHERE j.id = '" .. id .. "'")
  end

  it("complete, complete_many and complete_claim_next write it once: completed, finished at their now", function()
    db:enqueue_many({ "a", "b", "c", "d" })
    local fa = db:claim("a", "w", 1, 100)
    local fb, fc = db:claim("b", "w", 1, 100), db:claim("c", "w", 1, 100)
    assert.are.same({ true }, { db:complete("a", "w", fa, 5, "ra") })
    assert.are.equal("1|'ra'|1|5.0\n", row("a"))
    assert.are.equal(1, writes("a"))
    assert.are.same({ true }, { db:complete_many("w", 6, { { id = "b", fence = fb, result = "rb" },
                                                           { id = "c", fence = fc } }) })
    assert.are.equal("1|'rb'|1|6.0\n", row("b"))
    assert.are.equal("1|NULL|1|6.0\n", row("c"))
    assert.are.same({ 1, 1 }, { writes("b"), writes("c") })
    local fd = db:claim("d", "w", 1, 100)
    assert.is_true((db:complete_claim_next("d", "w", fd, 7, "rd", 10)))
    assert.are.equal("1|'rd'|1|7.0\n", row("d"))
    assert.are.equal(1, writes("d"))
  end)

  it("a refused complete leaves it as it was", function()
    db:enqueue("a")
    local f1 = db:claim("a", "w", 1, 10)
    local f2 = db:claim("a", "v", 20, 10)
    assert.are.same({ false, "not_owner" }, { db:complete("a", "w", f1, 21, "late") })
    assert.are.same({ false, "expired" }, { db:complete("a", "v", f2, 30, "late") })
    assert.is_false((db:complete_many("w", 21, { { id = "a", fence = f1 } })))
    assert.are.equal("0|NULL|0|NULL\n", row("a"))
    assert.are.equal(0, writes("a"))
  end)

  it("another client's done = 1 still completes it, finished at the lease's until", function()
    db:enqueue("a")
    db:claim("a", "w", 1, 10)
    H.sqlite3(p, "UPDATE jobs SET done = 1, result = 'raw' WHERE id = 'a'")
    assert.are.equal("1|'raw'|1|11.0\n", row("a"))
    assert.are.equal("completed", db:state("a", 12).status)
  end)

  it("a job that a trigger changes between the two writes raises [mismatch] and stores nothing", function()
    db:enqueue_many({ "a", "b" })
    local fa, fb = db:claim("a", "w", 1, 100), db:claim("b", "w", 1, 100)
    H.sqlite3(p, "CREATE TRIGGER spec_meddle AFTER UPDATE OF state ON lease_queue"
      .. " WHEN new.id = 'b' BEGIN UPDATE jobs SET until = 0 WHERE id = new.id; END")
    local before = H.qsnapshot(p)
    local err = H.error_of(db.complete, db, "b", "w", fb, 5, "rb")
    assert.truthy(err:find("lease.complete: job b changed between its queue row and its jobs row", 1, true), err)
    assert.truthy(err:find("[mismatch]", 1, true), err)
    -- the batch rolls back whole: a, stored first, is not stored either
    err = H.error_of(db.complete_many, db, "w", 5, { { id = "a", fence = fa, result = "ra" },
                                                      { id = "b", fence = fb, result = "rb" } })
    assert.truthy(err:find("[mismatch]", 1, true), err)
    assert.are.same(before, H.qsnapshot(p))
    assert.are.equal("0|NULL|0|NULL\n", row("a"))
    assert.are.equal("0|NULL|0|NULL\n", row("b"))
    assert.are.same({ "running", "running" }, { db:state("a", 5).status, db:state("b", 5).status })
  end)

  -- with_lease's transaction goes on after a tx:complete the callback
  -- catches: both of the completion's writes are undone, the rest commits
  it("a tx:complete that fails inside with_lease leaves it as it was", function()
    db:enqueue("b")
    db:enqueue("child", { after = { "b" } })
    local f = db:claim("b", "w", 1, 100)
    H.sqlite3(p, "CREATE TRIGGER spec_meddle AFTER UPDATE OF state ON lease_queue"
      .. " WHEN new.id = 'b' AND new.state = 1 BEGIN UPDATE jobs SET until = 0 WHERE id = new.id; END;"
      .. " CREATE TABLE spec_side(n INTEGER)")
    local err
    assert.is_true((db:with_lease("b", "w", f, 5, function(tx)
      err = select(2, pcall(tx.complete, tx, "rb"))
      tx:exec("INSERT INTO spec_side VALUES (1)")
    end)))
    assert.truthy(tostring(err):find("nothing stored [mismatch]", 1, true), tostring(err))
    assert.are.equal("1\n", H.sqlite3(p, "SELECT count(*) FROM spec_side"))
    assert.are.equal("0|NULL|0|NULL\n", row("b"))
    assert.are.equal(0, writes("b"))
    -- another client's veto of the jobs row (a failing UPDATE) the same way
    H.sqlite3(p, "DROP TRIGGER spec_meddle; CREATE TRIGGER spec_veto BEFORE UPDATE OF done ON jobs"
      .. " BEGIN SELECT RAISE(ABORT, 'vetoed'); END")
    assert.is_true((db:with_lease("b", "w", f, 6, function(tx)
      err = select(2, pcall(tx.complete, tx, "rb"))
    end)))
    assert.truthy(tostring(err):find("vetoed", 1, true), tostring(err))
    assert.are.equal("0|NULL|0|NULL\n", row("b"))
    assert.are.same({ "running", "waiting" }, { db:state("b", 7).status, db:state("child", 7).status })
  end)

  it("a file of version 15 gets step 16's lease_jobs_done at a writable open", function()
    db:close()
    -- step 6's trigger, as a version 15 file has it
    H.sqlite3(p, "DROP TRIGGER lease_jobs_done;"
      .. " CREATE TRIGGER lease_jobs_done AFTER UPDATE OF done ON jobs"
      .. " WHEN (new.done <> 0) <> (old.done <> 0) BEGIN UPDATE lease_queue SET state = CASE WHEN new.done <> 0"
      .. " THEN 1 ELSE 0 END, finished_at = CASE WHEN new.done <> 0 THEN new.until END WHERE id = new.id; END;"
      .. " UPDATE lease_meta SET value = 15 WHERE key = 'schema_version'")
    db = assert(lease.open(p))
    assert.are.equal(lease.SCHEMA_VERSION, db:settings().schema_version)
    db:enqueue("a")
    local f = db:claim("a", "w", 1, 10)
    assert.is_true((db:complete("a", "w", f, 5, "r")))
    assert.are.equal("1|'r'|1|5.0\n", row("a"))
    assert.are.equal(1, writes("a"))
    assert.truthy(H.sqlite3(p, "SELECT sql FROM sqlite_master WHERE name = 'lease_jobs_done'")
      :find("state <> 1", 1, true))
  end)
end)
