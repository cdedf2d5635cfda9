-- Contract step 2: enqueue inserts a job in the default state and returns
-- true; an existing id returns false and changes nothing (INSERT OR IGNORE).
-- Catches the seed's broken change "INSERT OR REPLACE INTO jobs": a
-- re-enqueue of a claimed job would return true and reset owner, until and
-- fence (the fence would be handed out again).
local H = require("helpers")

describe("step 2: enqueue", function()
  it("inserts a new job in the default state", function()
    local db = H.fresh()
    assert.is_true(db:enqueue("job-1"))
    assert.are.same({ id = "job-1", ["until"] = 0, fence = 0, done = false }, H.row(db:state("job-1")))
  end)

  it("returns false, 'exists' for an existing id", function()
    local db = H.fresh()
    assert.is_true(db:enqueue("a"))
    local ok, why = db:enqueue("a")
    assert.is_false(ok)
    assert.are.equal("exists", why)
  end)

  it("does not reset a lease in progress", function()
    local db, p = H.fresh()
    db:enqueue("a")
    local fence = db:claim("a", "worker", 100, 30)
    assert.are.equal(1, fence)
    local before = H.snapshot(p)
    assert.is_false((db:enqueue("a")))
    assert.is_false((H.lease.enqueue(p, "a")))
    assert.are.same(before, H.snapshot(p))
    local s = db:state("a")
    assert.are.equal("worker", s.owner)
    assert.are.equal(130, s["until"])
    assert.are.equal(1, s.fence)
    -- the lease is still held: nobody else can claim it
    assert.is_nil((db:claim("a", "other", 110, 30)))
    -- and its holder can still complete
    assert.is_true(db:complete("a", "worker", fence, 120, "r"))
  end)

  it("does not reset a released job's fence or a done job", function()
    local db = H.fresh()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 10)
    assert.is_true(db:release("a", "w", f))
    assert.is_false((db:enqueue("a")))
    assert.are.equal(1, db:state("a").fence)
    db:enqueue("b")
    local g = db:claim("b", "w", 0, 10)
    assert.is_true(db:complete("b", "w", g, 1, "done-result"))
    assert.is_false((db:enqueue("b")))
    local s = db:state("b")
    assert.is_true(s.done)
    assert.are.equal("done-result", s.result)
    assert.are.same({ nil, "done" }, { db:claim("b", "w2", 100, 10) })
  end)

  it("works through the path function", function()
    local p = H.path()
    assert.is_true(H.lease.enqueue(p, "a"))
    assert.are.same({ false, "exists" }, { H.lease.enqueue(p, "a") })
  end)
end)
