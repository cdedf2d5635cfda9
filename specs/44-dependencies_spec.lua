-- Job dependencies: db:enqueue(id, {after = {...}}) makes a job wait
-- (status "waiting") until every job it lists is completed.  The release
-- happens in the completing parent's own fenced complete (complete,
-- complete_many, complete_claim_next), so a stale completion releases
-- nothing; a parent discarded or cancelled cancels the jobs waiting below
-- it, each with an error naming its parent.  Another client's done = 1
-- releases them too, and a parent no longer there (pruned, or deleted by
-- another client) counts as done.  Backend-neutral.
local H = require("helpers")
local lease = H.lease

-- The status and error messages of job id, read through a new connection.
local function seen(p, id, now)
  local h = lease.open(p)
  local s = h:state(id, now or 50)
  h:close()
  if not s then return nil end
  local msgs = {}
  for _, e in ipairs(s.errors) do msgs[#msgs + 1] = e.message end
  return s.status, msgs, s
end

-- How many dependency rows the database holds.
local function edges(p)
  return tonumber((H.sql(p, "SELECT count(*) FROM lease_deps"):match("%d+")))
end

describe("a job enqueued after others", function()
  local db, p
  before_each(function() db, p = H.fresh("deps") end)
  after_each(function() db:close() end)

  it("waits, is never claimed, and shows its parents", function()
    assert.is_true(db:enqueue("p1"))
    assert.is_true(db:enqueue("p2"))
    assert.is_true(db:enqueue("c", { after = { "p2", "p1" } }))
    local s = db:state("c", 1)
    assert.are.equal("waiting", s.status)
    assert.are.same({ "p1", "p2" }, s.after)          -- every parent, by id
    assert.is_nil(db:state("p1", 1).after)
    assert.are.same({ nil, "waiting" }, { H.two(db:claim("c", "w", 1, 10)) })
    local got = db:claim_next("w", 1, 10, { n = 10 })
    assert.are.same({ "p1", "p2" }, H.ids(got))
    assert.are.same({ nil, "empty" }, { H.two(db:claim_next("w", 1, 10)) })
    local c = db:counts(1)
    assert.are.equal(1, c.waiting)
    assert.are.equal(2, c.running)
    assert.are.same({ "c" }, H.ids(db:jobs({ status = "waiting", now = 1 })))
    assert.are.equal(2, edges(p))
  end)

  it("is released by its parent's complete, and only when every parent is completed", function()
    db:enqueue("p1")
    db:enqueue("p2")
    db:enqueue("c", { after = { "p1", "p2" } })
    local f1 = db:claim("p1", "w", 1, 10)
    local f2 = db:claim("p2", "w", 1, 10)
    assert.is_true(db:complete("p1", "w", f1, 2, "r1"))
    assert.are.equal("waiting", (seen(p, "c", 3)))
    assert.are.same({ nil, "empty" }, { H.two(db:claim_next("w", 3, 10)) })
    assert.is_true(db:complete("p2", "w", f2, 4, "r2"))
    assert.are.equal("available", (seen(p, "c", 5)))
    assert.are.equal("c", (db:claim_next("w", 5, 10)))
    assert.are.equal(0, db:counts(5).waiting)
  end)

  -- enqueued again alone, or in a batch with data (two statements of the
  -- PostgreSQL backend)
  local again = {
    { "enqueue", function() return db:enqueue("p") end },
    { "enqueue_many", function()
      return db:enqueue_many({ { id = "p", payload = "x" }, { id = "other", priority = 2 } }) == 2
    end },
  }
  for _, way in ipairs(again) do
    local how, enqueue_again = way[1], way[2]
    it("is released by a parent pruned and enqueued again under its id (" .. how .. "), once that one completes", function()
      db:enqueue("p")
      db:enqueue("q")
      db:enqueue("c", { after = { "p", "q" } })
      local fp = db:claim("p", "w", 1, 10)
      assert.is_true(db:complete("p", "w", fp, 2))
      assert.are.equal(1, db:prune(3, { status = "completed" }))
      -- a new job under the pruned parent's id: the edge names it now
      assert.is_true(enqueue_again())
      local fq = db:claim("q", "w", 4, 10)
      assert.is_true(db:complete("q", "w", fq, 5))
      assert.are.equal("waiting", (seen(p, "c", 6)))
      local fp2 = db:claim("p", "w", 6, 10)
      assert.is_true(db:complete("p", "w", fp2, 7))
      assert.are.equal("available", (seen(p, "c", 8)))
    end)
  end

  it("becomes scheduled, not available, when released before its run_at", function()
    db:enqueue("p")
    db:enqueue("c", { after = { "p" }, run_at = 100 })
    assert.is_true(db:complete("p", "w", db:claim("p", "w", 1, 10), 2))
    assert.are.equal("scheduled", (seen(p, "c", 3)))
    assert.are.same({ nil, "empty" }, { H.two(db:claim_next("w", 3, 10)) })
    assert.are.equal("c", (db:claim_next("w", 100, 10)))
  end)

  it("counts a parent already completed as done at enqueue", function()
    db:enqueue("p1")
    db:enqueue("p2")
    assert.is_true(db:complete("p1", "w", db:claim("p1", "w", 1, 10), 2))
    assert.is_true(db:enqueue("a", { after = { "p1" } }))
    assert.are.equal("available", (seen(p, "a", 3)))
    assert.is_true(db:enqueue("b", { after = { "p1", "p2" } }))
    assert.are.equal("waiting", (seen(p, "b", 3)))
  end)

  it("takes parents from earlier in the same enqueue_many", function()
    assert.are.equal(3, db:enqueue_many({ "m1", { id = "m2", after = { "m1" } },
      { id = "m3", after = { "m1", "m2" } } }))
    assert.are.equal("available", (seen(p, "m1", 1)))
    assert.are.equal("waiting", (seen(p, "m2", 1)))
    assert.are.equal("waiting", (seen(p, "m3", 1)))
  end)

  it("takes a chain of 3000 in one enqueue_many, each entry with its own after", function()
    -- each entry's list is kept alive while the call runs; more lists
    -- than the Lua stack has room for crashed the process
    local ids = { "c1" }
    for i = 2, 3000 do ids[i] = { id = "c" .. i, after = { "c" .. (i - 1) } } end
    assert.are.equal(3000, db:enqueue_many(ids))
    local c = db:counts(1)
    assert.are.same({ 3000, 1, 2999 }, { c.total, c.available, c.waiting })
    assert.are.equal("waiting", (seen(p, "c3000", 1)))
    local f = db:claim("c1", "w", 1, 10)
    assert.is_true(db:complete("c1", "w", f, 2, "r"))
    assert.are.equal("available", (seen(p, "c2", 3)))
    assert.are.equal("waiting", (seen(p, "c3", 3)))
  end)

  it("waits for the key's holder when the earlier entry it lists was skipped as a duplicate",
    function()
      assert.is_true(db:enqueue("h", { key = "k" }))
      assert.are.equal(3, db:enqueue_many({ { id = "m1", key = "k" }, { id = "m2", after = { "m1" } },
        { id = "a", key = "j" }, { id = "b", key = "j" }, { id = "c", after = { "b", "m2" } } }))
      assert.is_nil(db:state("m1"))
      assert.is_nil(db:state("b"))
      local st, _, row = seen(p, "m2", 1)
      assert.are.equal("waiting", st)
      assert.are.same({ "h" }, row.after)              -- the holder, not the id never stored
      st, _, row = seen(p, "c", 1)
      assert.are.equal("waiting", st)
      assert.are.same({ "a", "m2" }, row.after)
      local got = db:claim_next("w", 1, 10, { n = 10 })
      assert.are.same({ "h", "a" }, H.ids(got))          -- m2 and c wait
      assert.is_true(db:complete("h", "w", db:state("h").fence, 2))
      assert.are.equal("available", (seen(p, "m2", 3)))
      assert.are.equal("waiting", (seen(p, "c", 3)))
      assert.are.equal(3, edges(p))
    end)

  it("counts an earlier entry whose id is already there as that job", function()
    db:enqueue("x")
    assert.is_true(db:complete("x", "w", db:claim("x", "w", 1, 10), 2))
    assert.are.equal(1, db:enqueue_many({ "x", { id = "y", after = { "x" } } }))
    assert.are.equal("available", (seen(p, "y", 3)))
    db:enqueue("z")
    assert.are.equal(1, db:enqueue_many({ "z", { id = "v", after = { "z" } } }))
    assert.are.equal("waiting", (seen(p, "v", 3)))
  end)
end)

describe("complete_many on a database where no job waits for another", function()
  local db, p
  before_each(function() db, p = H.fresh("deps-none") end)
  after_each(function() db:close() end)

  it("completes its batch, and a job enqueued after one of the next completions is released by it", function()
    for _, id in ipairs({ "a", "b", "p", "q", "e" }) do db:enqueue(id) end
    local got = db:claim_next("w", 1, 10, { n = 5 })
    local fence = {}
    for _, j in ipairs(got) do fence[j.id] = j.fence end
    assert.are.same({ true }, { db:complete_many("w", 2, { { id = "a", fence = fence.a },
      { id = "b", fence = fence.b } }) })
    assert.are.equal(0, edges(p))
    -- a child of p and one of q: each parent's completion, single or in a batch, opens it
    assert.is_true(db:enqueue("c", { after = { "p" } }))
    assert.is_true(db:enqueue("d", { after = { "q" } }))
    assert.is_true(db:complete("p", "w", fence.p, 3, "r"))
    assert.are.equal("available", (seen(p, "c", 4)))
    assert.are.same({ true }, { db:complete_many("w", 4, { { id = "q", fence = fence.q },
      { id = "e", fence = fence.e } }) })
    assert.are.equal("available", (seen(p, "d", 5)))
  end)
end)

describe("a stale completion", function()
  local db, p
  before_each(function()
    db, p = H.fresh("deps-stale")
    db:enqueue("p")
    db:enqueue("c", { after = { "p" } })
  end)
  after_each(function() db:close() end)

  it("of a worker whose lease expired and was claimed again releases nothing", function()
    local old = db:claim("p", "w", 1, 10)
    local new = db:claim("p", "w", 20, 10)          -- expired, claimed again
    assert.are.same({ false, "stale_fence" }, { db:complete("p", "w", old, 21, "late") })
    local st, _, row = seen(p, "c", 22)
    assert.are.equal("waiting", st)
    assert.are.equal(0, row.attempt)
    assert.are.equal("running", (seen(p, "p", 22)))
    assert.are.same({ nil, "empty" }, { H.two(db:claim_next("x", 22, 10)) })
    -- another owner's late complete is refused as well, and releases nothing
    local other = db:claim("p", "v", 40, 10)
    assert.are.same({ false, "not_owner" }, { db:complete("p", "w", new, 41, "late") })
    assert.are.equal("waiting", (seen(p, "c", 42)))
    -- the holder's complete releases it
    assert.is_true(db:complete("p", "v", other, 43, "r"))
    assert.are.equal("available", (seen(p, "c", 44)))
  end)

  it("in complete_many releases nothing, while the granted one in the batch does", function()
    db:enqueue("q")
    db:enqueue("d", { after = { "q" } })
    local old = db:claim("p", "w", 1, 10)
    db:claim("p", "w", 20, 10)
    local fq = db:claim("q", "w", 20, 10)
    local ok, refused = db:complete_many("w", 21, { { id = "p", fence = old }, { id = "q", fence = fq } })
    assert.is_false(ok)
    assert.are.same({ [1] = "stale_fence" }, refused)
    assert.are.equal("waiting", (seen(p, "c", 22)))
    assert.are.equal("available", (seen(p, "d", 22)))
  end)

  it("in complete_claim_next releases nothing; a granted one releases a job the same call claims", function()
    local old = db:claim("p", "w", 1, 10)
    local new = db:claim("p", "w", 20, 10)
    local r = { db:complete_claim_next("p", "w", old, 21, "late", 10) }
    assert.are.same({ false, "stale_fence", nil, "empty" }, { r[1], r[2], r[3], r[4] })
    assert.are.equal("waiting", (seen(p, "c", 22)))
    r = { db:complete_claim_next("p", "w", new, 22, "r", 10) }
    assert.are.same({ true, nil, "c" }, { r[1], r[2], r[3] })
    assert.are.equal("running", (seen(p, "c", 23)))
  end)
end)

describe("a parent that ends without completing", function()
  local db, p
  before_each(function()
    db, p = H.fresh("deps-end")
    db:enqueue("p", { max_attempts = 1 })
    db:enqueue("c", { after = { "p" } })
    db:enqueue("g", { after = { "c" } })
    db:enqueue("other")
    db:enqueue("o", { after = { "other" } })
  end)
  after_each(function() db:close() end)

  local function cancelled_below(word)
    local st, msgs = seen(p, "c")
    assert.are.equal("cancelled", st)
    assert.are.same({ 'dependency "p" was ' .. word }, msgs)
    st, msgs = seen(p, "g")
    assert.are.equal("cancelled", st)
    assert.are.same({ 'dependency "c" was cancelled' }, msgs)
    assert.are.equal("waiting", (seen(p, "o")))
    assert.are.same({ nil, "cancelled" }, { H.two(db:claim("c", "w", 60, 10)) })
  end

  it("discarded when its retries are used up cancels the jobs waiting below it", function()
    local f = db:claim("p", "w", 1, 10)
    assert.are.equal("discarded", (db:fail("p", "w", f, 2, "boom")))
    cancelled_below("discarded")
  end)

  it("discarded when it expired on its last attempt cancels them too", function()
    db:claim("p", "w", 1, 10)
    assert.are.same({ nil, "discarded" }, { H.two(db:claim("p", "w", 20, 10)) })
    cancelled_below("discarded")
  end)

  it("discarded by claim_next's expiry cancels them too", function()
    db:claim_next("w", 1, 10)
    assert.are.equal("other", (db:claim_next("w", 20, 10)))
    assert.are.equal("discarded", (seen(p, "p")))
    cancelled_below("discarded")
  end)

  it("cancelled cancels them, and cancel works on a waiting job", function()
    assert.is_true(db:cancel("p", 5))
    cancelled_below("cancelled")
    assert.is_true(db:cancel("o", 5))
    assert.are.equal("cancelled", (seen(p, "o")))
    assert.are.same({ false, "cancelled" }, { db:cancel("o", 6) })
  end)

  it("retried with its child: the child waits again, then runs after the parent", function()
    assert.is_true(db:cancel("p", 5))
    assert.is_true(db:retry("c", 6))
    assert.are.equal("waiting", (seen(p, "c")))
    assert.is_true(db:retry("p", 7))
    assert.is_true(db:complete("p", "w", db:claim("p", "w", 8, 10), 9))
    assert.are.equal("available", (seen(p, "c")))
    assert.are.equal("cancelled", (seen(p, "g")))
  end)

  it("completed with its child, then both retried child first: the child waits for the parent again", function()
    assert.is_true(db:complete("p", "w", db:claim("p", "w", 1, 10), 2))
    assert.are.equal("available", (seen(p, "c")))
    assert.is_true(db:complete("c", "w", db:claim("c", "w", 3, 10), 4))
    assert.is_true(db:retry("p", 5))
    assert.is_true(db:retry("c", 6))
    assert.are.equal("waiting", (seen(p, "c")))
    assert.are.same({ nil, "waiting" }, { H.two(db:claim("c", "w", 7, 10)) })
    assert.is_true(db:complete("p", "w", db:claim("p", "w", 8, 10), 9))
    assert.are.equal("available", (seen(p, "c")))
  end)
end)

describe("a parent ended by another client of the database", function()
  local db, p
  before_each(function()
    db, p = H.fresh("deps-other")
    db:enqueue_many({ "p1", "p2", "solo", "keep" })
    db:enqueue("c", { after = { "p1", "p2" } })
    db:enqueue("s", { after = { "solo" } })
    db:enqueue("k", { after = { "keep", "p1" } })
  end)
  after_each(function() db:close() end)

  it("completed by a done = 1 it stores releases the waiting child once every parent is completed", function()
    H.sql(p, "UPDATE jobs SET done = 1, until = 2 WHERE id = 'p1'")
    assert.are.equal("completed", (seen(p, "p1", 3)))
    assert.are.equal("waiting", (seen(p, "c", 3)))
    assert.are.same({ nil, "waiting" }, { H.two(db:claim("c", "w", 3, 10)) })
    H.sql(p, "UPDATE jobs SET done = 1, until = 4 WHERE id = 'p2'")
    assert.are.equal("available", (seen(p, "c", 5)))
    assert.are.equal("waiting", (seen(p, "k", 5)))     -- keep is not completed
    assert.are.equal(1, db:claim("c", "w", 5, 10))
    -- the engine's complete of the last parent releases k as before
    assert.is_true(db:complete("keep", "w", db:claim("keep", "w", 6, 10), 7, "r"))
    assert.are.equal("available", (seen(p, "k", 8)))
  end)

  it("completed in the engine's order runs no body of lease_jobs_done, another client's done = 1 runs it #sqlite",
    function()
      -- the engine's complete makes the queue row completed, then stores
      -- done = 1; the sqlite3 tool traces each statement a trigger runs
      local out = H.sqlite3(p, "UPDATE lease_queue SET state = 1 WHERE id = 'p1';\n"
        .. ".trace stdout --stmt\nUPDATE jobs SET done = 1, until = 2 WHERE id = 'p1';\n"
        .. "SELECT 'then p2';\nUPDATE jobs SET done = 1, until = 2 WHERE id = 'p2'")
      local p1, p2 = out:match("^(.-)\nthen p2\n(.*)$")
      assert.is_not_nil(p1, out)
      -- p1's done = 1: the trigger's WHEN alone; p2's (its row still
      -- open): the body's two statements
      assert.is_nil(p1:find("\n%-%- UPDATE"), out)
      local _, bodies = p2:gsub("\n%-%- UPDATE lease_queue", "")
      assert.are.equal(2, bodies, out)
      assert.are.equal("completed", (seen(p, "p2", 3)))
      assert.are.equal("available", (seen(p, "c", 3)))
    end)

  it("deleted before it finished counts as done, as a pruned one does", function()
    H.sql(p, "DELETE FROM jobs WHERE id = 'solo'")
    assert.are.equal("available", (seen(p, "s", 3)))
    assert.are.equal(1, db:claim("s", "w", 3, 10))
    -- one of two parents deleted: the child waits for the other
    local f2 = db:claim("p2", "w", 3, 10)
    H.sql(p, "DELETE FROM jobs WHERE id = 'p1'")
    assert.are.equal("waiting", (seen(p, "c", 4)))
    assert.are.equal("waiting", (seen(p, "k", 4)))
    assert.is_true(db:complete("p2", "w", f2, 5, "r"))
    assert.are.equal("available", (seen(p, "c", 6)))
    assert.are.equal("waiting", (seen(p, "k", 6)))
  end)

  -- an enqueue after a job as a build of lease other than this one, or
  -- another client, writes it: the edge, then the child waiting
  it("listed by rows another client writes in lease_deps releases the child at its end", function()
    db:enqueue_many({ "lone", "x" })
    H.sql(p, "INSERT INTO lease_deps(child, parent) VALUES ('x', 'lone');"
      .. " UPDATE lease_queue SET state = 4 WHERE id = 'x'")
    assert.are.equal("waiting", (seen(p, "x", 2)))
    assert.is_true(db:complete("lone", "w", db:claim("lone", "w", 2, 10), 3, "r"))
    assert.are.equal("available", (seen(p, "x", 4)))
  end)

  it("named by an edge another client moves to it releases the child at its end, the old parent's releasing nothing", function()
    db:enqueue_many({ "lone", "x", "before" })
    assert.is_true(db:enqueue("y", { after = { "before" } }))
    H.sql(p, "UPDATE lease_deps SET parent = 'lone' WHERE child = 'y'")
    assert.is_true(db:complete("before", "w", db:claim("before", "w", 2, 10), 3, "r"))
    assert.are.equal("waiting", (seen(p, "y", 4)))
    assert.is_true(db:complete("lone", "w", db:claim("lone", "w", 4, 10), 5, "r"))
    assert.are.equal("available", (seen(p, "y", 6)))
  end)

  -- solo completed and listed by t with keep, then pruned; put_back()
  -- makes a job under solo's id again: t waits for it after keep completes
  -- and runs once it completes
  local function pruned_then(put_back)
    assert.is_true(db:complete("solo", "w", db:claim("solo", "w", 2, 10), 3, "r"))
    assert.is_true(db:enqueue("t", { after = { "solo", "keep" } }))
    assert.are.equal(1, db:prune(4, { status = "completed" }))
    put_back()
    assert.is_true(db:complete("keep", "w", db:claim("keep", "w", 5, 10), 6, "r"))
    assert.are.equal("waiting", (seen(p, "t", 7)))
    assert.is_true(db:complete("solo", "w", db:claim("solo", "w", 7, 10), 8, "r"))
    assert.are.equal("available", (seen(p, "t", 9)))
  end

  it("pruned, then another job renamed to its id, releases the child when that one completes", function()
    pruned_then(function()
      db:enqueue("z")
      H.sql(p, "UPDATE jobs SET id = 'solo' WHERE id = 'z'")
    end)
  end)

  if H.backend == "pg" then
    -- enqueued again by a statement that writes its queue row itself, as
    -- an earlier build's enqueue does
    it("pruned, then enqueued again with its queue row written by the inserting statement, releases the child at its end", function()
      pruned_then(function()
        H.sql(p, "WITH i AS (INSERT INTO jobs(id) VALUES ('solo') RETURNING id, seq, fence)"
          .. " INSERT INTO lease_queue(id, seq, queue, due_at, base_fence)"
          .. " SELECT id, seq, 'default', 0, fence FROM i")
      end)
    end)
  end

  it("cancelled, its child retried, then pruned: the child runs, a listed job pruned counting as done", function()
    assert.is_true(db:cancel("solo", 2))
    local st, msgs = seen(p, "s", 3)
    assert.are.equal("cancelled", st)
    assert.are.same({ 'dependency "solo" was cancelled' }, msgs)
    assert.is_true(db:retry("s", 3))
    assert.are.equal("waiting", (seen(p, "s", 4)))
    -- a completed parent pruned changes nothing for a child waiting on another
    assert.is_true(db:complete("p1", "w", db:claim("p1", "w", 4, 10), 5, "r"))
    assert.are.equal(2, db:prune(10))   -- solo (cancelled) and p1 (completed)
    assert.are.equal("available", (seen(p, "s", 11)))
    assert.are.equal("waiting", (seen(p, "c", 11)))      -- p2 still open
    assert.are.equal("waiting", (seen(p, "k", 11)))      -- keep still open
    assert.are.same({ nil, "waiting" }, { H.two(db:claim("c", "w", 11, 10)) })
    assert.are.equal(1, db:claim("s", "w", 11, 10))
  end)
end)

describe("enqueue after", function()
  local db, p
  before_each(function()
    db, p = H.fresh("deps-bad")
    db:enqueue("p")
  end)
  after_each(function() db:close() end)

  it("refuses a job that does not exist, naming it, with nothing stored", function()
    local before = H.qsnapshot(p)
    assert.are.same({ false, "missing", "nope" }, { db:enqueue("c", { after = { "p", "nope" } }) })
    assert.are.same({ false, "missing", "zz" },
      { db:enqueue_many({ "m1", { id = "m2", after = { "zz" } } }) })
    assert.are.same(before, H.qsnapshot(p))
    assert.are.equal(0, edges(p))
    assert.is_nil(db:state("c"))
  end)

  it("names the first refused job in the batch's order, whatever their ids' order", function()
    db:enqueue("q")
    db:enqueue("m")
    db:cancel("m", 1)
    local before = H.qsnapshot(p)
    assert.are.same({ false, "missing", "zz" }, { db:enqueue("c", { after = { "q", "zz", "aa", "p" } }) })
    assert.are.same({ false, "missing", "zz" },
      { db:enqueue_many({ { id = "c1", after = { "p", "zz" } }, { id = "c2", after = { "aa", "q" } } }) })
    assert.are.same({ false, "cancelled", "m" },
      { db:enqueue_many({ { id = "c1", after = { "q" } }, { id = "c2", after = { "p", "m" } },
                          { id = "c3", after = { "a" } } }) })
    assert.are.same(before, H.qsnapshot(p))
    assert.are.equal(0, edges(p))
    if H.backend == "pg" then   -- no listed job flagged as waited on
      assert.are.equal("0", H.sql(p, "SELECT count(*) FROM lease_queue WHERE waited_on"):match("%d+"))
    end
  end)

  it("refuses a discarded or cancelled job, naming it, with nothing stored", function()
    db:enqueue("x")
    db:cancel("x", 1)
    local before = H.qsnapshot(p)
    assert.are.same({ false, "cancelled", "x" }, { db:enqueue("c", { after = { "p", "x" } }) })
    assert.are.same(before, H.qsnapshot(p))
  end)

  it("refuses a cancelled job named by an earlier entry of the same batch, with nothing stored",
    function()
      db:enqueue("x")
      db:cancel("x", 1)
      local before = H.qsnapshot(p)
      assert.are.same({ false, "cancelled", "x" },
        { db:enqueue_many({ "n1", "x", { id = "c", after = { "x" } } }) })
      assert.are.same(before, H.qsnapshot(p))
      assert.are.equal(0, edges(p))
      assert.is_nil(db:state("n1"))
    end)

  it("raises for a bad after, naming the function and the argument, with nothing stored", function()
    local before = H.qsnapshot(p)
    local function bad(opts, want)
      local err = H.error_of(db.enqueue, db, "c", opts)
      assert.truthy(err:find("bad argument #3 to 'enqueue' (" .. want, 1, true), err)
    end
    bad({ after = "p" }, "opts.after must be a table, got a string")
    bad({ after = { "p", 7 } }, "opts.after[2] must be a non-empty string, got 7")
    bad({ after = { "" } }, "opts.after[1] must be a non-empty string, got an empty string")
    bad({ after = { "p", "c" } }, "opts.after[2] is the job's own id")
    -- a listed job under any other key would be left out: the job would not wait for it
    bad({ after = { "p", x = "q" } }, "opts.after must be a sequence, but has key x beside 1..1")
    bad({ after = { x = "q" } }, "opts.after must be a sequence, but has key x beside 1..0")
    local err = H.error_of(db.enqueue_many, db, { { id = "m", after = { "m" } } })
    assert.truthy(err:find("bad argument #2 to 'enqueue_many' (ids[1].after[1] is the job's own id",
      1, true), err)
    err = H.error_of(db.enqueue_many, db, { { id = "m", after = { "p", [3] = "q" } } })
    assert.truthy(err:find("(ids[1].after must be a sequence, but has key 3 beside 1..1)", 1, true), err)
    assert.are.same(before, H.qsnapshot(p))
    assert.are.equal(0, edges(p))
  end)
end)

describe("lease enqueue --after", function()
  it("stores the dependencies, refuses a missing one, and lease show and jobs print them", function()
    local db, p = H.fresh("deps-cli")
    db:enqueue("p1")
    db:enqueue("p2")
    local q = H.sh(p)
    local st, out, err = H.host("enqueue " .. q .. " c --after p1 --after p2")
    assert.are.same({ 0, "enqueued c\n", "" }, { st, out, err })
    assert.are.same({ "p1", "p2" }, db:state("c").after)
    assert.are.equal("waiting", db:state("c").status)
    local before = H.qsnapshot(p)
    st, out, err = H.host("enqueue " .. q .. " d --after p1 --after nope")
    assert.are.same({ 1, "" }, { st, out })
    assert.truthy(err:find('its --after job "nope" is not there', 1, true), err)
    st, out = H.host("enqueue " .. q .. " d --after nope --json")
    assert.are.equal(1, st)
    assert.truthy(out:find('"reason":"missing","after":"nope"', 1, true), out)
    local _
    st, _, err = H.host("enqueue " .. q .. " d --after d")
    assert.are.equal(2, st)
    assert.truthy(err:find("--after names the job itself", 1, true), err)
    assert.are.same(before, H.qsnapshot(p))
    st, out = H.host("show " .. q .. " c")
    assert.are.equal(0, st)
    assert.truthy(out:find("status      waiting\n", 1, true), out)
    assert.truthy(out:find("after       p1, p2\n", 1, true), out)
    st, out = H.host("jobs " .. q .. " --status waiting")
    assert.are.equal(0, st)
    assert.truthy(out:find("\nc +waiting", 1, false), out)
    assert.truthy(out:find("1 waiting", 1, true), out)
    db:close()
  end)
end)

-- One thread of the race below: complete parent `which` of every round,
-- each round started with the other thread at the barrier.
local function completer(path, which, rounds, b)
  local db = require("lease").open(path)
  local refused = 0
  for r = 1, rounds do
    b:wait()
    if db:complete(which .. "-" .. r, "w", 1, 2, "r") ~= true then refused = refused + 1 end
  end
  db:close()
  return refused
end

describe("a job after two parents completed at the same moment by two clients", function()
  it("is released every time, in repeated rounds", function()
    local T = require("thread_helpers")
    local ROUNDS = 60
    local db, p = H.fresh("deps-race")
    local ids = {}
    for r = 1, ROUNDS do
      ids[#ids + 1] = "a-" .. r
      ids[#ids + 1] = "b-" .. r
    end
    assert.are.equal(2 * ROUNDS, db:enqueue_many(ids))
    for r = 1, ROUNDS do
      assert.is_true(db:enqueue("c-" .. r, { after = { "a-" .. r, "b-" .. r } }))
    end
    for _, id in ipairs(ids) do assert.are.equal(1, db:claim(id, "w", 1, 100)) end
    local b = T.thread.barrier(2)
    local ta = T.thread.spawn(completer, p, "a", ROUNDS, b)
    local tb = T.thread.spawn(completer, p, "b", ROUNDS, b)
    assert.are.same({ true, 0 }, { ta:join() })
    assert.are.same({ true, 0 }, { tb:join() })
    local waiting = {}
    for r = 1, ROUNDS do
      if seen(p, "c-" .. r, 3) ~= "available" then waiting[#waiting + 1] = "c-" .. r end
    end
    assert.are.same({}, waiting)
    assert.are.equal(ROUNDS, db:counts(3).available)
    db:close()
  end)
end)

-- The two threads of the race below, each round started at the barrier:
-- one enqueues a batch whose first entry repeats the key of the round's
-- holder (skipped while the holder is unfinished) and whose second lists
-- it, then more jobs to keep its transaction open; the other ends the
-- holder: completes it in odd rounds, cancels it in even ones.
local function key_enqueuer(path, rounds, b)
  local db = require("lease").open(path)
  for r = 1, rounds do
    local batch = { { id = "dup-" .. r, key = "k-" .. r }, { id = "c-" .. r, after = { "dup-" .. r } } }
    for i = 1, 20 do batch[#batch + 1] = "f-" .. r .. "-" .. i end
    b:wait()
    db:enqueue_many(batch)
  end
  db:close()
  return true
end

local function holder_ender(path, rounds, b)
  local db = require("lease").open(path)
  local refused = 0
  for r = 1, rounds do
    b:wait()
    local ok
    if r % 2 == 1 then ok = db:complete("h-" .. r, "w", 1, 2, "r") else ok = db:cancel("h-" .. r, 2) end
    if ok ~= true then refused = refused + 1 end
  end
  db:close()
  return refused
end

describe("a job after an entry skipped for its key, while another client ends the key's holder", function()
  it("waits, runs or is cancelled as its parent's end says, in repeated rounds", function()
    local T = require("thread_helpers")
    local ROUNDS = H.rounds(40, 80)
    local db, p = H.fresh("deps-key-race")
    for r = 1, ROUNDS do
      assert.is_true(db:enqueue("h-" .. r, { key = "k-" .. r }))
      assert.are.equal(1, db:claim("h-" .. r, "w", 1, 100))
    end
    local b = T.thread.barrier(2)
    local te = T.thread.spawn(key_enqueuer, p, ROUNDS, b)
    local tc = T.thread.spawn(holder_ender, p, ROUNDS, b)
    assert.are.same({ true, true }, { te:join() })
    assert.are.same({ true, 0 }, { tc:join() })
    -- c-r lists the holder (dup-r skipped) or dup-r (stored: the holder had
    -- ended before the batch); it runs once that one is completed, is
    -- cancelled when it is, and waits while it is open
    local want = { completed = "available", cancelled = "cancelled", available = "waiting" }
    for r = 1, ROUNDS do
      local st, _, row = seen(p, "c-" .. r, 3)
      local parent = row.after[1]
      assert.truthy(parent == "h-" .. r or parent == "dup-" .. r, parent)
      local pst = seen(p, parent, 3)
      assert.are.equal(want[pst], st, "c-" .. r .. " after " .. parent .. " " .. tostring(pst))
    end
    db:close()
  end)
end)

-- One thread of the race below: each round, at the barrier, enqueue the
-- round's children of parents a, b and c, listed in the order `order`
-- gives: "ab" one job after a then b and one after c; "ba" a batch whose
-- first entry lists b and second a, and one job after c, b and a.
local function opposite_enqueuer(path, order, rounds, b)
  local db = require("lease").open(path)
  local added = 0
  for r = 1, rounds do
    local a, bb, c = "a-" .. r, "b-" .. r, "c-" .. r
    b:wait()
    if order == "ab" then
      added = added + db:enqueue_many({ { id = "x-" .. r, after = { a, bb } } })
      added = added + db:enqueue_many({ { id = "y-" .. r, after = { c } } })
    else
      added = added + db:enqueue_many({ { id = "u-" .. r, after = { bb } }, { id = "v-" .. r, after = { a } } })
      added = added + db:enqueue_many({ { id = "w-" .. r, after = { c, bb, a } } })
    end
  end
  db:close()
  return added
end

-- PostgreSQL's count of deadlocks in the spec's database, once no backend
-- of the application `app` is left (a backend reports its deadlocks to
-- the statistics at the latest as it exits).
local function deadlocks_after(path, app)
  local left
  for _ = 1, 50 do
    left = H.sql(path, "SELECT count(*) FROM pg_stat_activity WHERE application_name = '"
      .. app .. "'"):match("%d+")
    if left == "0" then break end
    lease.sleep(0.1)
  end
  assert.are.equal("0", left)
  lease.sleep(0.5)
  return tonumber((H.sql(path, "SELECT pg_stat_clear_snapshot(); SELECT deadlocks FROM"
    .. " pg_stat_database WHERE datname = current_database()"):match("(%d+)%s*$")))
end

describe("enqueues listing the same parents in opposite orders", function()
  it("never wait for each other, alone or in batches, in repeated rounds", function()
    local T = require("thread_helpers")
    local ROUNDS = 30
    local db, p = H.fresh("deps-opposite")
    local app = "lease-deps-opposite-" .. H.pid()
    local before = H.backend == "pg" and deadlocks_after(p, app)
    local tp = H.backend == "pg" and p .. " application_name=" .. app or p
    for r = 1, ROUNDS do
      assert.are.equal(3, db:enqueue_many({ "a-" .. r, "b-" .. r, "c-" .. r }))
    end
    local b = T.thread.barrier(2)
    local t1 = T.thread.spawn(opposite_enqueuer, tp, "ab", ROUNDS, b)
    local t2 = T.thread.spawn(opposite_enqueuer, tp, "ba", ROUNDS, b)
    assert.are.same({ true, 2 * ROUNDS }, { t1:join() })
    assert.are.same({ true, 3 * ROUNDS }, { t2:join() })
    assert.are.equal(8 * ROUNDS, edges(p))
    assert.are.equal(5 * ROUNDS, db:counts(3).waiting)
    if H.backend == "pg" then assert.are.equal(before, deadlocks_after(p, app)) end
    db:close()
  end)
end)
