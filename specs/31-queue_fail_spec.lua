-- The job queue, failing and operator actions: fail under complete's
-- guard, the backoff, discard at max_attempts, retry, cancel, prune, and
-- the listing and counts by status.
local H = require("helpers")
local lease = H.lease

describe("fail", function()
  local db, p
  before_each(function() db, p = H.fresh() end)
  after_each(function() db:close() end)

  it("records the error, ends the lease and makes the job retryable after the backoff", function()
    db:enqueue("a")
    local id, f = db:claim_next("w", 100, 30)
    local status, run_at = db:fail(id, "w", f, 110, "boom")
    assert.are.equal("retryable", status)
    -- attempt 1: 1 second, jitter within [0.9, 1.1]
    assert.is_true(run_at >= 110.9 and run_at <= 111.1, tostring(run_at))
    local s = db:state("a", 110)
    assert.are.same({ "retryable", 1, run_at, f }, { s.status, s.attempt, s.run_at, s.fence })
    assert.is_nil(s.owner)
    assert.are.equal(0, s["until"])
    assert.are.same({ { attempt = 1, at = 110, owner = "w", fence = f, message = "boom" } }, s.errors)
    -- not claimable by claim_next before run_at, then claimable
    assert.are.same({ nil, "empty" }, { db:claim_next("w", 110.5, 30) })
    assert.are.equal("a", (db:claim_next("w", 111.1, 30)))
  end)

  it("takes opts.run_at instead of the backoff, and attempt = false gives the attempt back", function()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 10)
    assert.are.same({ "retryable", 500 }, { db:fail("a", "w", f, 1, "later", { run_at = 500 }) })
    f = db:claim("a", "w", 600, 10)
    assert.are.equal(2, db:state("a").attempt)
    assert.are.same({ "retryable", 601 }, { db:fail("a", "w", f, 601, "shutdown", { attempt = false }) })
    local s = db:state("a", 601)
    assert.are.same({ 1, "available", 2 }, { s.attempt, s.status, #s.errors })
  end)

  it("refuses a stale worker with complete's reasons and records nothing", function()
    db:enqueue("a")
    local f1 = db:claim("a", "A", 0, 10)
    local f2 = db:claim("a", "B", 10, 10)
    local before = H.qsnapshot(p)
    assert.are.same({ false, "not_owner" }, { db:fail("a", "A", f1, 12, "late") })
    assert.are.same({ false, "stale_fence" }, { db:fail("a", "B", f1, 12, "x") })
    assert.are.same({ false, "expired" }, { db:fail("a", "B", f2, 20, "x") })
    assert.are.same({ false, "missing" }, { db:fail("nope", "B", f2, 12, "x") })
    assert.are.same(before, H.qsnapshot(p))
    -- the one error is A's expired lease, recorded when B claimed
    assert.are.equal("lease expired\n", H.sql(p, "SELECT " .. H.text("message") .. " FROM lease_errors"))
    assert.is_true(db:complete("a", "B", f2, 12, "r"))
    assert.are.same({ false, "done" }, { db:fail("a", "B", f2, 13, "x") })
  end)

  it("discards the job when the failed attempt was its last", function()
    db:enqueue("a", { max_attempts = 2 })
    local f = db:claim("a", "w", 0, 10)
    assert.are.equal("retryable", (db:fail("a", "w", f, 1, "one", { run_at = 1 })))
    f = db:claim("a", "w", 2, 10)
    assert.are.same({ "discarded" }, { db:fail("a", "w", f, 3, "two") })
    local s = db:state("a", 3)
    assert.are.same({ "discarded", 2, 3 }, { s.status, s.attempt, s.finished_at })
    assert.are.same({ "one", "two" }, { s.errors[1].message, s.errors[2].message })
    assert.are.same({ nil, "empty" }, { db:claim_next("w", 100, 10) })
    assert.are.same({ nil, "discarded" }, { db:claim("a", "w", 100, 10) })
  end)

  it("attempt = false counts none of the attempt, never below 0, and keeps the last attempt's job open", function()
    db:enqueue("a", { max_attempts = 1 })
    local f = db:claim("a", "w", 0, 10)
    assert.are.equal(1, db:state("a").attempt)
    assert.are.same({ "retryable", 1 }, { db:fail("a", "w", f, 1, "shutdown", { attempt = false }) })
    local s = db:state("a", 1)
    assert.are.same({ 0, "available", 1 }, { s.attempt, s.status, #s.errors })
    assert.is_nil(s.finished_at)
    -- the next claim is attempt 1 again, and its failure the last one
    f = db:claim("a", "w", 2, 10)
    assert.are.equal(1, db:state("a").attempt)
    assert.are.same({ "discarded" }, { db:fail("a", "w", f, 3, "two") })
    assert.are.same({ "discarded", 1, 3 }, { db:state("a", 3).status, db:state("a").attempt,
                                            db:state("a").finished_at })
  end)

  it("an expired lease on the last attempt: claim by id discards the job and records the error", function()
    db:enqueue("a", { max_attempts = 1 })
    local f = db:claim("a", "w1", 0, 10)
    assert.are.same({ nil, "discarded" }, { db:claim("a", "w2", 10, 10) })
    local s = db:state("a", 10)
    assert.are.same({ "discarded", 1, f, 10 }, { s.status, s.attempt, s.fence, s.finished_at })
    assert.are.same({ { attempt = 1, at = 10, owner = "w1", fence = f, message = "lease expired" } }, s.errors)
    -- below the budget the same claim records the error and takes the job
    db:enqueue("b", { max_attempts = 2 })
    local g = db:claim("b", "w1", 0, 10)
    assert.are.equal(g + 1, db:claim("b", "w2", 10, 10))
    s = db:state("b", 10)
    assert.are.same({ "running", 2, 1 }, { s.status, s.attempt, #s.errors })
  end)

  it("keeps the last 20 errors, oldest first", function()
    db:enqueue("a", { max_attempts = 100 })
    for i = 1, 23 do
      local f = db:claim("a", "w", i, 0.5)
      db:fail("a", "w", f, i, "e" .. i, { run_at = i })
    end
    local errs = db:state("a").errors
    assert.are.equal(20, #errs)
    assert.are.same({ "e4", 4, "e23", 23 }, { errs[1].message, errs[1].attempt, errs[20].message, errs[20].attempt })
  end)

  it("refuses bad arguments with the argument named, and writes nothing", function()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 10)
    local before = H.qsnapshot(p)
    for _, c in ipairs({
      { { nil, "w", f, 1 }, "#1 to 'fail' (id must be a non-empty string" },
      { { "a", "", f, 1 }, "#2 to 'fail' (owner must be a non-empty string" },
      { { "a", "w", 1.5, 1 }, "#3 to 'fail' (fence must be an integer" },
      { { "a", "w", f, 0 / 0 }, "#4 to 'fail' (now must be a finite number" },
      { { "a", "w", f, 1, 5 }, "#5 to 'fail' (message must be a string or nil" },
      { { "a", "w", f, 1, "m", 5 }, "#6 to 'fail' (opts must be a table or nil" },
      { { "a", "w", f, 1, "m", { when = 1 } }, "#6 to 'fail' (opts has an unknown key 'when')" },
      { { "a", "w", f, 1, "m", { run_at = 1 / 0 } }, "#6 to 'fail' (opts.run_at must be a finite number" },
      { { "a", "w", f, 1, "m", { attempt = 0 } }, "#6 to 'fail' (opts.attempt must be a boolean or nil" },
    }) do
      local err = H.error_of(function() db:fail(table.unpack(c[1], 1, 6)) end)
      assert.truthy(err:find("bad argument " .. c[2], 1, true), err)
    end
    local err = H.error_of(function() lease.fail(p, "a", "w", f, "now") end)
    assert.truthy(err:find("bad argument #5 to 'lease.fail' (now must be", 1, true), err)
    assert.are.same(before, H.qsnapshot(p))
  end)

  it("works through the path function", function()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 10)
    assert.are.same({ "retryable", 9 }, { lease.fail(p, "a", "w", f, 1, "m", { run_at = 9 }) })
  end)
end)

describe("release and the attempts", function()
  local db, p
  before_each(function() db, p = H.fresh() end)
  after_each(function() db:close() end)

  it("gives the attempt back: released claims never use up max_attempts, and never count past it", function()
    db:enqueue("job", { max_attempts = 2 })
    for i = 1, 5 do
      local id, f, j = db:claim_next("w" .. i, i, 30)
      assert.are.same({ "job", i, 1, 2 }, { id, f, j.attempt, j.max_attempts })
      assert.is_true(db:release(id, "w" .. i, f))
      assert.are.same({ 0, "available" }, { db:state("job", i).attempt, db:state("job", i).status })
    end
    -- the budget holds for the attempts that end otherwise
    local id, f = db:claim_next("w", 10, 30)
    assert.are.equal("retryable", (db:fail(id, "w", f, 11, "x", { run_at = 11 })))
    id, f = db:claim_next("w", 12, 30)
    assert.are.same({ "discarded" }, { db:fail(id, "w", f, 13, "y") })
    assert.are.same({ "discarded", 2 }, { db:state("job", 14).status, db:state("job", 14).attempt })
  end)

  it("gives back the attempt of a lease that expired, whose holder released it, and of no other holder", function()
    db:enqueue("once", { max_attempts = 1 })
    local f = db:claim("once", "A", 100, 5)
    assert.are.same({ false, "expired" }, { db:fail("once", "A", f, 120, "x") })
    -- release keeps the contract: no until is checked
    assert.is_true(db:release("once", "A", f))
    assert.are.equal(0, db:state("once", 120).attempt)
    assert.are.equal(2, db:claim("once", "B", 121, 5))
    -- a release refused gives nothing back
    assert.are.same({ false, "not_owner" }, { db:release("once", "A", 2) })
    assert.are.same({ 1, "B" }, { db:state("once", 122).attempt, db:state("once", 122).owner })
  end)

  it("never gives back an attempt not counted: a base another client raised to the fence stays", function()
    db:enqueue("j", { max_attempts = 1 })
    local f = db:claim("j", "A", 1, 100)
    H.sql(p, "UPDATE lease_queue SET base_fence = 1 WHERE id = 'j'")   -- attempt 0 while held
    assert.is_true(db:release("j", "A", f))
    assert.are.equal("1\n", H.sql(p, "SELECT base_fence FROM lease_queue WHERE id = 'j'"))
    -- the next claim counts, and its fail is the last attempt
    local id, f2, job = db:claim_next("B", 2, 10)
    assert.are.same({ "j", 2, 1 }, { id, f2, job.attempt })
    assert.are.same({ "discarded" }, { db:fail("j", "B", f2, 3, "x") })
  end)
end)

describe("lease.backoff", function()
  it("grows exponentially to the one-hour cap, with the jitter at every attempt", function()
    for attempt = 1, 60 do
      local base = math.min(2 ^ (attempt - 1), 3600)
      local seen, n = {}, 0
      for _ = 1, 20 do
        local d = lease.backoff(attempt)
        assert.is_true(d >= 0.9 * base and d <= 1.1 * base, attempt .. ": " .. d)
        if not seen[d] then seen[d], n = true, n + 1 end
      end
      -- never one value for every job failing at this attempt, the capped ones included
      assert.is_true(n > 1, attempt .. ": " .. n .. " distinct delays")
      if attempt >= 13 then assert.is_nil(seen[3600], attempt .. ": exactly the cap") end
    end
    -- around the cap the draws spread both sides of it
    local below, above = false, false
    for _ = 1, 200 do
      local d = lease.backoff(40)
      below, above = below or d < 3600, above or d > 3600
    end
    assert.is_true(below and above)
    for _, attempt in ipairs({ 1000, math.maxinteger }) do
      local d = lease.backoff(attempt)
      assert.is_true(d >= 0.9 * 3600 and d <= 1.1 * 3600, attempt .. ": " .. d)
    end
    -- jitter: twenty draws are not all the same
    local seen = {}
    for _ = 1, 20 do seen[lease.backoff(5)] = true end
    assert.is_true(next(seen, next(seen)) ~= nil)
    local err = H.error_of(lease.backoff, 0)
    assert.truthy(err:find("bad argument #1 to 'lease.backoff' (attempt must be an integer", 1, true), err)
  end)
end)

describe("retry, cancel, prune", function()
  local db, p
  before_each(function() db, p = H.fresh() end)
  after_each(function() db:close() end)

  it("retry makes a discarded job claimable again with a fresh budget, the fence kept", function()
    db:enqueue("a", { max_attempts = 1 })
    local f = db:claim("a", "w", 0, 10)
    assert.are.same({ "discarded" }, { db:fail("a", "w", f, 1, "bad") })
    assert.is_true(db:retry("a", 2))
    local s = db:state("a", 2)
    assert.are.same({ "available", 0, 1, 1 }, { s.status, s.attempt, s.fence, #s.errors })
    local id, f2 = db:claim_next("w", 2, 10)
    assert.are.same({ "a", 2 }, { id, f2 })
    assert.is_true(db:complete("a", "w", f2, 3, "ok"))
    -- a completed job can be retried too: done goes back to false
    assert.is_true(db:retry("a", 4))
    assert.are.same({ false, "available" }, { db:state("a", 4).done, db:state("a", 4).status })
    assert.are.same({ "a", 3 }, { H.two(db:claim_next("w", 4, 10)) })
    assert.are.same({ false, "held" }, { db:retry("a", 5) })
    assert.are.same({ false, "missing" }, { db:retry("nope", 5) })
    -- a cancelled job is reopened even while held: its lease ends
    db:cancel("a", 5)
    assert.is_true(db:retry("a", 6))
    local c = db:state("a", 6)
    assert.are.same({ "available", 0, 3 }, { c.status, c.attempt, c.fence })
    assert.is_nil(c.owner)
  end)

  it("cancel while held refuses the holder's complete, renew and fail; the fence never goes down", function()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 100)
    assert.is_true(db:cancel("a", 5))
    local before = H.qsnapshot(p)
    assert.are.same({ false, "cancelled" }, { db:complete("a", "w", f, 6, "r") })
    assert.are.same({ false, "cancelled" }, { db:renew("a", "w", f, 6, 10) })
    assert.are.same({ false, "cancelled" }, { db:fail("a", "w", f, 6, "x") })
    assert.are.same(before, H.qsnapshot(p))
    assert.are.same({ nil, "cancelled" }, { db:claim("a", "v", 200, 10) })
    assert.are.same({ nil, "empty" }, { db:claim_next("v", 200, 10) })
    local s = db:state("a", 6)
    assert.are.same({ "cancelled", f, 5 }, { s.status, s.fence, s.finished_at })
    assert.are.same({ false, "cancelled" }, { db:cancel("a", 7) })
    -- the holder may still give the lease back
    assert.is_true(db:release("a", "w", f))
    assert.is_true(db:retry("a", 8))
    assert.are.equal(f + 1, db:claim("a", "v", 8, 10))
  end)

  it("claim_next skips ended jobs ahead of a ready one", function()
    db:enqueue_many({ "canc", { id = "disc", max_attempts = 1 }, "ready" })
    db:cancel("canc", 0)
    db:fail("disc", "w", db:claim("disc", "w", 0, 10), 1, "x")
    assert.are.same({ "ready", 1 }, { H.two(db:claim_next("w", 2, 10)) })
  end)

  it("cancel refuses completed and discarded jobs", function()
    db:enqueue_many({ "c", { id = "d", max_attempts = 1 } })
    db:complete("c", "w", db:claim("c", "w", 0, 10), 1, "r")
    db:fail("d", "w", db:claim("d", "w", 0, 10), 1, "x")
    assert.are.same({ false, "done" }, { db:cancel("c", 2) })
    assert.are.same({ false, "discarded" }, { db:cancel("d", 2) })
    assert.are.same({ false, "missing" }, { db:cancel("x", 2) })
  end)

  it("prune deletes ended jobs finished before the time, never a held one", function()
    db:enqueue_many({ "done", { id = "disc", max_attempts = 1 }, "held", "canc", "open", "late" })
    db:complete("done", "w", db:claim("done", "w", 0, 10), 1, "r")
    db:fail("disc", "w", db:claim("disc", "w", 0, 10), 2, "x")
    db:claim("held", "w", 0, 1000)
    db:cancel("held", 3)           -- cancelled while a worker holds it until 1000
    db:cancel("canc", 4)
    db:cancel("late", 50)
    assert.are.equal(0, db:prune(1))   -- strictly before
    assert.are.equal(1, db:prune(100, { status = "discarded" }))
    assert.are.equal(0, db:prune(100, { queue = "other" }))
    assert.are.equal(3, db:prune(100))
    assert.is_nil(db:state("done"))
    assert.is_table(db:state("held"))
    assert.is_table(db:state("open"))
    assert.are.equal("held\nopen\n", H.sql(p, "SELECT " .. H.text("id") .. " FROM jobs ORDER BY id"))
    assert.are.equal("held\nopen\n", H.sql(p, "SELECT " .. H.text("id") .. " FROM lease_queue ORDER BY id"))
    assert.are.equal("0\n", H.sql(p, "SELECT count(*) FROM lease_errors"))
    -- a before past its lease is not enough while the database has seen no
    -- now past it (its clock mark): the lease may still run
    assert.are.equal(0, lease.prune(p, 2000))
    assert.is_table(db:state("held"))
    -- once a write's now is past it, the cancelled job goes too
    assert.are.equal(1, db:claim("open", "w", 1500, 10))
    assert.are.equal(1, lease.prune(p, 2000))
    assert.is_nil(db:state("held"))
  end)

  it("prune of every ended job (before = math.huge, or a day ahead) spares a lease that runs past the latest now", function()
    local T = 1700000000
    db:enqueue_many({ "held", "ended", "done" })
    db:claim("held", "w", T, 50000)
    db:cancel("held", T + 1)   -- cancelled while held until T + 50000
    db:claim("ended", "w", T, 10)
    db:cancel("ended", T + 1)  -- cancelled while held until T + 10
    assert.is_true(db:complete("done", "w", db:claim("done", "w", T + 5000, 30), T + 5001, "r"))
    -- the latest now the database saw is T + 5001 (its mark moves in steps
    -- of a ten-millionth, about 170 s here): "ended"'s lease is over, and a
    -- before a day ahead spares "held" as math.huge does
    assert.are.equal(2, db:prune(T + 86400 + 5001))
    assert.are.equal(0, db:prune(math.huge))
    local row = db:state("held", T + 5001)
    assert.are.same({ "cancelled", "w", 1 }, { row.status, row.owner, row.fence })
    assert.is_nil(db:state("ended", T + 5001))
    assert.are.equal("held\n", H.sql(p, "SELECT " .. H.text("id") .. " FROM jobs ORDER BY id"))
    -- a write whose now is past its lease moves the mark, and then it goes too
    db:enqueue("next")
    assert.are.equal(2, db:claim("next", "v", T + 200000, 10))   -- above the fence floor
    assert.are.equal(1, db:prune(math.huge))
    assert.are.equal("next\n", H.sql(p, "SELECT " .. H.text("id") .. " FROM jobs"))
  end)

  it("prune deletes an ended job whose id another client stored as a blob, not the text job of the same bytes #sqlite", function()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 1000)
    -- the triggers make no queue row for an id that is not text: the
    -- other client writes one too
    H.sqlite3(p, "INSERT INTO jobs(id, until, done) VALUES (x'61', 5, 1);"
      .. " INSERT INTO lease_queue(id, seq, state, finished_at) VALUES (x'61', 99, 1, 5)")
    assert.are.equal(1, db:prune(100))
    assert.are.equal("text\n", H.sqlite3(p, "SELECT typeof(id) FROM jobs"))
    assert.are.equal("text\n", H.sqlite3(p, "SELECT typeof(id) FROM lease_queue"))
    assert.is_true(db:complete("a", "w", f, 1, "r"))
  end)

  it("refuses bad arguments of retry, cancel and prune, and writes nothing", function()
    db:enqueue("a")
    local before = H.qsnapshot(p)
    for _, c in ipairs({
      { function() db:retry("", 1) end, "#1 to 'retry' (id must be a non-empty string" },
      { function() db:retry("a", 0 / 0) end, "#2 to 'retry' (now must be a finite number" },
      { function() db:cancel(nil, 1) end, "#1 to 'cancel' (id must be a non-empty string" },
      { function() db:cancel("a", "1") end, "#2 to 'cancel' (now must be a number" },
      { function() db:prune("x") end, "#1 to 'prune' (before must be a number" },
      { function() db:prune(0 / 0) end, "#1 to 'prune' (before must be a number, got nan)" },
      { function() db:prune(1, { status = "available" }) end, "#2 to 'prune' (opts.status must be" },
      { function() db:prune(1, { age = 1 }) end, "#2 to 'prune' (opts has an unknown key 'age')" },
      { function() db:prune(1, { queue = "" }) end, "#2 to 'prune' (opts.queue must be" },
      { function() lease.cancel(p, "a") end, "#3 to 'lease.cancel' (now must be" },
    }) do
      local err = H.error_of(c[1])
      assert.truthy(err:find("bad argument " .. c[2], 1, true), err)
    end
    assert.are.same(before, H.qsnapshot(p))
  end)
end)

-- prune deletes jobs rows; the fence floor (lease_meta, key fence_floor)
-- keeps the highest fence it deleted, and every job enqueued after starts
-- there, so no fence handed out before is handed out again, not even to a
-- job enqueued again under a pruned id (docs/contract/CONTRACT.md).
describe("prune and the fence floor", function()
  local db, p
  before_each(function() db, p = H.fresh() end)
  after_each(function() db:close() end)

  local function floor()
    return H.sql(p, "SELECT value FROM lease_meta WHERE key = 'fence_floor'")
  end

  -- Take job id to `fences` more fences (claimed and released), then
  -- complete it at time `at`.
  local function run(id, fences, at)
    local f
    for _ = 1, fences do
      f = assert(db:claim(id, "w", at, 10))
      if _ < fences then assert.is_true(db:release(id, "w", f)) end
    end
    assert.is_true(db:complete(id, "w", f, at, "r"))
    return f
  end

  it("a job enqueued again under a pruned id hands out fences above those handed out before", function()
    db:enqueue("job")
    local a = db:claim("job", "A", 1, 10)    -- A stalls
    local b = db:claim("job", "B", 20, 10)   -- A's lease ran out
    assert.are.same({ 1, 2 }, { a, b })
    assert.is_true(db:fence_gate("job", b))
    assert.is_true(db:complete("job", "B", b, 21, "by B"))
    assert.are.equal("", floor())
    assert.are.equal(1, db:prune(100))
    assert.are.equal("2\n", floor())
    assert.is_true(db:enqueue("job"))
    local s = db:state("job", 25)
    assert.are.same({ 2, 0, "available" }, { s.fence, s.attempt, s.status })
    local c = db:claim("job", "A", 30, 10)   -- A's worker picks up the new job
    assert.are.equal(3, c)
    assert.are.equal(1, db:state("job", 30).attempt)
    -- A's late write with the fence of the first job is refused
    assert.are.same({ false, "stale_fence" }, { db:complete("job", "A", a, 31, "late A") })
    assert.are.same({ false, "stale_fence" }, { db:fence_gate("job", a) })
    assert.is_true(db:fence_gate("job", c))
    assert.is_true(db:complete("job", "A", c, 32, "new run"))
    assert.are.equal("new run", db:state("job").result)
    assert.are.equal("2\n", floor())
  end)

  it("every job enqueued after a prune starts at the floor, whichever way it is enqueued", function()
    db:enqueue("old")
    run("old", 4, 41)
    assert.are.equal(1, db:prune(100))
    assert.are.equal("4\n", floor())
    assert.is_true(db:enqueue("one"))
    assert.is_true(db:enqueue("data", { payload = "p", priority = 2, queue = "q" }))
    assert.is_true(db:enqueue("keyed", { key = "k" }))
    assert.is_true(db:enqueue("child", { after = { "one" } }))
    assert.are.equal(2, db:enqueue_many({ "m1", "m2" }))
    assert.are.equal(2, db:enqueue_many({ { id = "d1", payload = "x" }, { id = "d2", queue = "q" } }))
    assert.are.equal(2, db:enqueue_many({ { id = "k1", key = "k1" }, { id = "a1", after = { "k1" } } }))
    assert.is_true(lease.enqueue(p, "path"))
    local ids = { "one", "data", "keyed", "child", "m1", "m2", "d1", "d2", "k1", "a1", "path" }
    for _, id in ipairs(ids) do
      local s = db:state(id, 50)
      assert.are.same({ id, 4, 0 }, { id, s.fence, s.attempt })
    end
    for _, id in ipairs({ "one", "data", "keyed", "m1", "m2", "d1", "d2", "k1", "path" }) do
      assert.are.same({ id, 5 }, { id, db:claim(id, "w", 50, 10) })
      assert.are.same({ id, 1 }, { id, db:state(id, 50).attempt })
    end
    -- claim_next too hands out the floor + 1
    assert.is_true(db:complete("one", "w", 5, 51, "r"))
    assert.are.same({ "child", 5 }, { H.two(db:claim_next("w", 52, 10)) })
  end)

  it("keeps the highest fence pruned: never lowered, whatever order one prune deletes its jobs in", function()
    db:enqueue_many({ "lo", "hi" })
    run("hi", 5, 10)
    run("lo", 1, 50)
    assert.are.equal(1, db:prune(20))    -- hi, fence 5
    assert.are.equal("5\n", floor())
    assert.are.equal(1, db:prune(100))   -- lo, fence 1
    assert.are.equal("5\n", floor())
    -- one prune of two jobs, ended in one order, then in the other
    local top = 5
    for round, order in ipairs({ { "x", "y" }, { "y", "x" } }) do
      local x, y = "x" .. round, "y" .. round
      assert.are.equal(2, db:enqueue_many({ x, y }))
      assert.are.equal(top + 3, run(x, 3, order[1] == "x" and 200 or 300))
      assert.are.equal(top + 1, run(y, 1, order[1] == "y" and 200 or 300))
      assert.are.equal(2, db:prune(1000))
      top = top + 3
      assert.are.equal(top .. "\n", floor())
    end
    db:enqueue("next")
    assert.are.equal(top + 1, db:claim("next", "w", 0, 10))
  end)

  it("reads a floor another client stored as text digits as the fence it names, as both backends do", function()
    db:enqueue("low")
    run("low", 3, 1)
    -- the stored fence is read as text: 2^63-1 is past what a Lua 5.1 or LuaJIT number holds
    for n, c in ipairs({ { "'7'", "7" }, { "'0007'", "7" }, { "'99999999999999999999'", "0" }, { "'7x'", "0" },
                         { "''", "0" }, { "'9999999999999999999'", "9223372036854775807" } }) do
      H.sql(p, "DELETE FROM lease_meta WHERE key = 'fence_floor'")
      H.sql(p, "INSERT INTO lease_meta(key, value) VALUES ('fence_floor', " .. c[1] .. ")")
      local id = "t" .. n
      assert.is_true(db:enqueue(id))
      assert.are.same({ c[1], c[2] .. "\n" }, { c[1], H.sql(p, "SELECT fence FROM jobs WHERE id = '" .. id .. "'") })
    end
    -- a prune of a lower fence leaves a text floor where it was
    H.sql(p, "UPDATE lease_meta SET value = '7' WHERE key = 'fence_floor'")
    assert.are.equal(1, db:prune(100))   -- low, fence 3
    assert.are.equal("7\n", floor())
    db:enqueue("after")
    assert.are.equal(8, db:claim("after", "w", 0, 10))
  end)

  it("a job pruned at the largest fence leaves the jobs enqueued after blocked, never past it", function()
    db:enqueue("max")
    run("max", 1, 1)
    H.sql(p, "UPDATE jobs SET fence = 9223372036854775807 WHERE id = 'max'")
    assert.are.equal(1, db:prune(100))
    assert.are.equal("9223372036854775807\n", floor())
    db:enqueue_many({ "next", { id = "more", queue = "q" } })
    local err = H.error_of(db.claim, db, "next", "A", 0, 10)
    assert.matches("[range]", err, 1, true)
    assert.are.same({ nil, "empty" }, { H.two(db:claim_next("w", 0, 10, { queue = "q" })) })
    assert.are.equal("|9223372036854775807\n|9223372036854775807\n",
      H.sql(p, "SELECT owner, fence FROM jobs ORDER BY id"))
  end)
end)

describe("jobs{...} and counts by status", function()
  local db
  before_each(function()
    db = H.fresh()
    db:enqueue_many({ "avail", { id = "sched", run_at = 100 }, "run", "done", { id = "disc", max_attempts = 1 },
      "canc", { id = "retr", queue = "q2" } })
    db:claim("run", "w", 0, 50)
    db:complete("done", "w", db:claim("done", "w", 0, 10), 1, ("r"):rep(1000))
    db:fail("disc", "w", db:claim("disc", "w", 0, 10), 1, "x")
    db:cancel("canc", 1)
    db:fail("retr", "w", db:claim("retr", "w", 0, 10), 1, "y", { run_at = 60 })
  end)
  after_each(function() db:close() end)

  it("filters by status and queue, with seq, result sizes and errors on request", function()
    local by = {}
    for _, w in ipairs({ "available", "scheduled", "running", "retryable", "completed", "discarded", "cancelled" }) do
      by[w] = H.ids(db:jobs{ status = w, now = 10 })
    end
    assert.are.same({ available = { "avail" }, scheduled = { "sched" }, running = { "run" },
      retryable = { "retr" }, completed = { "done" }, discarded = { "disc" }, cancelled = { "canc" } }, by)
    assert.are.same({ "retr" }, H.ids(db:jobs{ queue = "q2", now = 10 }))
    local d = db:jobs{ status = "completed", now = 10, results = false }[1]
    assert.are.same({ nil, 1000, 4 }, { d.result, d.result_size, d.seq })
    assert.are.equal(("r"):rep(1000), db:jobs{ status = "completed", now = 10 }[1].result)
    local r = db:jobs{ status = "retryable", now = 10, errors = true }[1]
    assert.are.equal("y", r.errors[1].message)
    assert.is_nil(db:jobs{ status = "retryable", now = 10 }[1].errors)
    local page = db:jobs{ now = 10, limit = 3 }
    assert.are.same({ "avail", "sched", "run" }, H.ids(page))
    assert.are.same({ "done", "disc", "canc" }, H.ids(db:jobs{ now = 10, limit = 3, after = page[3].seq }))
    local err = H.error_of(function() db:jobs{ status = "lost" } end)
    assert.truthy(err:find("bad argument #1 to 'jobs' (filter.status must be a status word", 1, true), err)
    err = H.error_of(function() db:jobs{ now = "x" } end)
    assert.truthy(err:find("bad argument #1 to 'jobs' (filter.now must be a number", 1, true), err)
    err = H.error_of(function() db:jobs{ state = "x" } end)
    assert.truthy(err:find("(filter has an unknown key 'state')", 1, true), err)
  end)

  it("counts by status, adding up to total, for all queues or one", function()
    local c = db:counts(10)
    assert.are.same({ 7, 1, 1, 1, 1, 1, 1, 1 }, { c.total, c.available, c.scheduled, c.running,
      c.retryable, c.completed, c.discarded, c.cancelled })
    c = db:counts(10, "q2")
    assert.are.same({ 1, 1, 0 }, { c.total, c.retryable, c.available })
  end)
end)
