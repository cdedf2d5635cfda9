-- Contract step 6: complete stores result and done = 1 only under the
-- current lease (owner and fence match, done = 0, until > now).  Otherwise
-- false, and any stored result stays as it was.
-- Catches the seed's broken change "done >= 0": the second complete of a
-- done job below must be refused and the first result kept.
local H = require("helpers")

describe("step 6: complete", function()
  local db, p, fence
  before_each(function()
    db, p = H.fresh()
    db:enqueue("job")
    fence = db:claim("job", "A", 100, 30)   -- until = 130
  end)
  after_each(function() db:close() end)

  it("stores the result and done under the current lease", function()
    assert.is_true(db:complete("job", "A", fence, 110, "42"))
    local s = db:state("job")
    assert.is_true(s.done)
    assert.are.equal("42", s.result)
    assert.are.equal(fence, s.fence)
  end)

  it("refuses a second complete of a done job and keeps the first result", function()
    assert.is_true(db:complete("job", "A", fence, 110, "first"))
    local before = H.snapshot(p)
    assert.are.same({ false, "done" }, { db:complete("job", "A", fence, 111, "second") })
    assert.are.same({ false, "done" }, { db:complete("job", "A", fence, 111) })
    assert.are.same(before, H.snapshot(p))
    assert.are.equal("first", db:state("job").result)
  end)

  it("plays the seed's story: A stalls, B takes over, A's late complete is refused", function()
    -- A's lease runs out at 130; B claims at 131 and completes
    local fb = db:claim("job", "B", 131, 30)
    assert.are.equal(fence + 1, fb)
    assert.is_true(db:complete("job", "B", fb, 140, "B's result"))
    -- A wakes up and writes "completed" with its old fence
    assert.are.same({ false, "done" }, { db:complete("job", "A", fence, 141, "A's late result") })
    local s = db:state("job")
    assert.are.equal("B's result", s.result)
    assert.are.equal("B", s.owner)
    assert.are.equal(fb, s.fence)
  end)

  it("refuses A's late complete before B completes, so B's result lands", function()
    local fb = db:claim("job", "B", 130, 30)
    assert.are.same({ false, "not_owner" }, { db:complete("job", "A", fence, 131, "late") })
    assert.is_nil(db:state("job").result)
    assert.is_false(db:state("job").done)
    assert.is_true(db:complete("job", "B", fb, 140, "B"))
  end)

  it("refuses the same owner's older generation ('stale_fence')", function()
    local f2 = db:claim("job", "A", 130, 30)
    assert.are.same({ false, "stale_fence" }, { db:complete("job", "A", fence, 131, "old") })
    assert.is_nil(db:state("job").result)
    assert.is_true(db:complete("job", "A", f2, 131, "new"))
    assert.are.equal("new", db:state("job").result)
  end)

  it("refuses an expired lease, at and after the boundary ('expired')", function()
    local before = H.snapshot(p)
    assert.are.same({ false, "expired" }, { db:complete("job", "A", fence, 130, "r") })
    assert.are.same({ false, "expired" }, { db:complete("job", "A", fence, 1e6, "r") })
    assert.are.same(before, H.snapshot(p))
  end)

  it("refuses a missing job, another owner and a released lease", function()
    assert.are.same({ false, "missing" }, { db:complete("nope", "A", fence, 110, "r") })
    assert.are.same({ false, "not_owner" }, { db:complete("job", "B", fence, 110, "r") })
    assert.is_true(db:release("job", "A", fence))
    assert.are.same({ false, "not_owner" }, { db:complete("job", "A", fence, 110, "r") })
    assert.is_nil(db:state("job").result)
    assert.is_false(db:state("job").done)
  end)

  it("stores nil as NULL and an empty string as ''", function()
    assert.is_true(db:complete("job", "A", fence, 110))
    local s = db:state("job")
    assert.is_true(s.done)
    assert.is_nil(s.result)
    db:enqueue("e")
    local f = db:claim("e", "A", 0, 10)
    assert.is_true(db:complete("e", "A", f, 1, ""))
    assert.are.equal("", db:state("e").result)
  end)

  it("is the same through the path function", function()
    assert.are.same({ false, "not_owner" }, { H.lease.complete(p, "job", "B", fence, 110, "x") })
    assert.is_true(H.lease.complete(p, "job", "A", fence, 110, "x"))
    assert.are.same({ false, "done" }, { H.lease.complete(p, "job", "A", fence, 110, "y") })
    assert.are.equal("x", H.lease.state(p, "job").result)
  end)
end)
