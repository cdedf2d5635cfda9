-- Contract step 7: release, when owner and fence match and done = 0, sets
-- owner = NULL and until = 0, keeps the fence and returns true; otherwise
-- false.
-- Catches the seed's broken change "fence = 0" in release: the fence must
-- be kept, and the next claim must get a larger one than any handed out.
local H = require("helpers")

describe("step 7: release", function()
  local db, p, fence
  before_each(function()
    db, p = H.fresh()
    db:enqueue("job")
    fence = db:claim("job", "A", 100, 30)
  end)
  after_each(function() db:close() end)

  it("clears owner and until and keeps the fence", function()
    assert.is_true(db:release("job", "A", fence))
    local s = db:state("job")
    assert.is_nil(s.owner)
    assert.are.equal(0, s["until"])
    assert.are.equal(fence, s.fence)
    assert.is_false(s.done)
  end)

  it("never lets a fence be handed out twice across releases", function()
    local seen = { [fence] = true }
    local f = fence
    for i = 1, 10 do
      assert.is_true(db:release("job", i % 2 == 1 and "A" or "B", f))
      f = db:claim("job", i % 2 == 0 and "A" or "B", 100 + i, 30)
      assert.is_nil(seen[f])
      seen[f] = true
      assert.are.equal(fence + i, f)
    end
    -- and the released generation's token is worthless
    assert.are.same({ false, "stale_fence" }, { db:complete("job", "A", fence, 120, "old") })
  end)

  it("lets the job be claimed at once, before the old deadline", function()
    assert.is_true(db:release("job", "A", fence))
    assert.are.equal(fence + 1, db:claim("job", "B", 101, 30))
  end)

  it("refuses another owner, a stale fence, a done job and a missing job", function()
    local before = H.snapshot(p)
    assert.are.same({ false, "not_owner" }, { db:release("job", "B", fence) })
    assert.are.same({ false, "stale_fence" }, { db:release("job", "A", fence + 1) })
    assert.are.same({ false, "missing" }, { db:release("nope", "A", fence) })
    assert.are.same(before, H.snapshot(p))
    assert.is_true(db:complete("job", "A", fence, 110, "r"))
    before = H.snapshot(p)
    assert.are.same({ false, "done" }, { db:release("job", "A", fence) })
    assert.are.same(before, H.snapshot(p))
  end)

  it("works on an expired lease that nobody took over", function()
    assert.is_true(db:release("job", "A", fence))
    assert.are.same({ false, "not_owner" }, { db:release("job", "A", fence) })
  end)

  it("refuses the old holder once someone took over", function()
    local f2 = db:claim("job", "B", 130, 30)
    assert.are.same({ false, "not_owner" }, { db:release("job", "A", fence) })
    assert.are.equal("B", db:state("job").owner)
    assert.are.equal(f2, db:state("job").fence)
  end)

  it("is the same through the path function", function()
    assert.is_true(H.lease.release(p, "job", "A", fence))
    assert.are.equal(fence, H.lease.state(p, "job").fence)
  end)
end)
