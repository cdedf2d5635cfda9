-- Contract step 5: renew sets until = now + ttl only when owner and fence
-- match, done = 0 and until > now; otherwise false and a reason.  An expired
-- lease cannot be revived.
-- Catches the seed's broken change "until >= now" (revives an expired
-- lease): the renew at now == until below must be refused, until unchanged.
local H = require("helpers")

describe("step 5: renew", function()
  local db, p, fence
  before_each(function()
    db, p = H.fresh()
    db:enqueue("job")
    fence = db:claim("job", "A", 100, 30)   -- until = 130
  end)
  after_each(function() db:close() end)

  it("extends the current lease to now + ttl", function()
    assert.is_true(db:renew("job", "A", fence, 120, 30))
    assert.are.equal(150, db:state("job")["until"])
    -- and keeps owner and fence
    assert.are.equal("A", db:state("job").owner)
    assert.are.equal(fence, db:state("job").fence)
  end)

  it("refuses at the boundary now == until: 'expired', until unchanged", function()
    local before = H.snapshot(p)
    assert.are.same({ false, "expired" }, { db:renew("job", "A", fence, 130, 30) })
    assert.are.same(before, H.snapshot(p))
    assert.are.equal(130, db:state("job")["until"])
  end)

  it("cannot revive an expired lease that nobody took over", function()
    assert.are.same({ false, "expired" }, { db:renew("job", "A", fence, 500, 1000) })
    assert.are.equal(130, db:state("job")["until"])
    -- so another worker can take it
    assert.are.equal(fence + 1, db:claim("job", "B", 500, 10))
  end)

  it("refuses another owner ('not_owner') and an old fence ('stale_fence')", function()
    local before = H.snapshot(p)
    assert.are.same({ false, "not_owner" }, { db:renew("job", "B", fence, 110, 30) })
    assert.are.same({ false, "stale_fence" }, { db:renew("job", "A", fence + 1, 110, 30) })
    assert.are.same({ false, "stale_fence" }, { db:renew("job", "A", fence - 1, 110, 30) })
    assert.are.same(before, H.snapshot(p))
  end)

  it("refuses the old generation after a takeover, even by the same owner name", function()
    local f2 = db:claim("job", "A", 130, 30)   -- A restarted and claimed again
    assert.are.equal(fence + 1, f2)
    assert.are.same({ false, "stale_fence" }, { db:renew("job", "A", fence, 140, 30) })
    assert.are.equal(160, db:state("job")["until"])
    assert.is_true(db:renew("job", "A", f2, 140, 30))
  end)

  it("refuses a done job ('done') and a missing one ('missing')", function()
    assert.is_true(db:complete("job", "A", fence, 110, "r"))
    assert.are.same({ false, "done" }, { db:renew("job", "A", fence, 110, 30) })
    assert.are.equal(130, db:state("job")["until"])
    assert.are.same({ false, "missing" }, { db:renew("nope", "A", fence, 110, 30) })
  end)

  it("refuses a released lease", function()
    assert.is_true(db:release("job", "A", fence))
    assert.are.same({ false, "not_owner" }, { db:renew("job", "A", fence, 110, 30) })
    assert.are.equal(0, db:state("job")["until"])
  end)

  it("is the same through the path function", function()
    assert.is_true(H.lease.renew(p, "job", "A", fence, 129, 10))
    assert.are.same({ false, "expired" }, { H.lease.renew(p, "job", "A", fence, 139, 10) })
  end)
end)
