-- Contract step 4: claim.  A missing job, a done job, or one with
-- until > now gives nil and a reason; otherwise owner and until = now + ttl
-- are stored and the new fence (old + 1) returned.  At now == until the job
-- can be claimed again.
-- Catches the seed's broken change "until >= now treated as held": the
-- boundary claim at now == until below must succeed.
local H = require("helpers")

describe("step 4: claim", function()
  local db, p
  before_each(function()
    db, p = H.fresh()
    db:enqueue("job")
  end)
  after_each(function() db:close() end)

  it("grants a fresh job fence 1 and stores owner and until", function()
    assert.are.equal(1, db:claim("job", "A", 100, 30))
    local s = db:state("job")
    assert.are.equal("A", s.owner)
    assert.are.equal(130, s["until"])
    assert.are.equal(1, s.fence)
    assert.is_false(s.done)
  end)

  it("refuses a held job with nil, 'held' and changes nothing", function()
    db:claim("job", "A", 100, 30)
    local before = H.snapshot(p)
    assert.are.same({ nil, "held" }, { db:claim("job", "B", 100, 30) })
    assert.are.same({ nil, "held" }, { db:claim("job", "B", 129.999, 30) })
    -- the holder itself cannot claim again while it holds the lease
    assert.are.same({ nil, "held" }, { db:claim("job", "A", 110, 30) })
    assert.are.same(before, H.snapshot(p))
  end)

  it("grants the boundary now == until, with the next fence", function()
    assert.are.equal(1, db:claim("job", "A", 100, 30))
    assert.are.equal(2, db:claim("job", "B", 130, 30))
    local s = db:state("job")
    assert.are.equal("B", s.owner)
    assert.are.equal(160, s["until"])
    assert.are.equal(2, s.fence)
  end)

  it("grants an expired job, the fence growing every time", function()
    local now = 0
    for i = 1, 20 do
      assert.are.equal(i, db:claim("job", "w" .. i, now, 5))
      now = now + 5 + (i % 3)
    end
    assert.are.equal(20, db:state("job").fence)
  end)

  it("gives nil, 'missing' for an absent job and creates nothing", function()
    assert.are.same({ nil, "missing" }, { db:claim("ghost", "A", 0, 10) })
    assert.is_nil(db:state("ghost"))
  end)

  it("gives nil, 'done' for a completed job, even long after its lease ended", function()
    local f = db:claim("job", "A", 0, 10)
    assert.is_true(db:complete("job", "A", f, 5, "r"))
    local before = H.snapshot(p)
    assert.are.same({ nil, "done" }, { db:claim("job", "B", 1e9, 10) })
    assert.are.same(before, H.snapshot(p))
  end)

  it("is the same through the path function", function()
    assert.are.equal(1, H.lease.claim(p, "job", "A", 0, 10))
    assert.are.same({ nil, "held" }, { H.lease.claim(p, "job", "B", 9, 10) })
    assert.are.equal(2, H.lease.claim(p, "job", "B", 10, 10))
    assert.are.same({ nil, "missing" }, { H.lease.claim(p, "nope", "B", 10, 10) })
  end)

  it("treats integer and float time the same", function()
    db:enqueue("f")
    assert.are.equal(1, db:claim("job", "A", 100, 10))
    assert.are.equal(1, db:claim("f", "A", 100.0, 10.0))
    assert.are.same(db:state("job")["until"], db:state("f")["until"])
    assert.are.same({ nil, "held" }, { db:claim("job", "B", 109.5, 1) })
    assert.are.equal(2, db:claim("job", "B", 110.0, 1))
    assert.are.equal(2, db:claim("f", "B", 110, 1))
  end)

  it("does not wrap ttl = math.maxinteger into the past", function()
    assert.are.equal(1, db:claim("job", "A", 100, math.maxinteger or 2 ^ 63))
    assert.is_true(db:state("job")["until"] > 1e18)
    assert.are.same({ nil, "held" }, { db:claim("job", "B", 1e18, 1e6) })
  end)

  it("refuses to hand out a fence past the largest integer", function()
    H.sql(p, "UPDATE jobs SET fence = 9223372036854775807 WHERE id = 'job'")
    local err = H.error_of(db.claim, db, "job", "A", 0, 10)
    assert.matches("[range]", err, 1, true)
    if H.integers then
      local s = db:state("job")
      assert.are.equal(math.maxinteger, s.fence)
      assert.is_nil(s.owner)
    else
      assert.are.equal("|9223372036854775807\n", H.sqlite3(p, "SELECT owner, fence FROM jobs WHERE id = 'job'"))
    end
  end)

  it("returns a fence above 2^53 exactly, or says it cannot: never a rounded one", function()
    H.sql(p, "UPDATE jobs SET fence = 9007199254740992 WHERE id = 'job'")   -- 2^53
    if H.integers then
      assert.are.equal(9007199254740993, db:claim("job", "A", 0, 10))
      assert.are.equal(9007199254740993, db:state("job").fence)
      assert.is_true(db:renew("job", "A", 9007199254740993, 1, 10))
      assert.are.same({ false, "stale_fence" }, { db:renew("job", "A", 9007199254740992, 1, 10) })
    else
      -- no integer subtype (5.1, LuaJIT): 2^53 + 1 has no exact number
      local err = H.error_of(db.claim, db, "job", "A", 0, 10)
      assert.truthy(err:find("lease.claim: fence 9007199254740993 is above 2^53, which this Lua "
        .. "cannot hold exactly", 1, true), err)
      err = H.error_of(db.state, db, "job")
      assert.truthy(err:find("lease.state: fence 9007199254740993 is above 2^53", 1, true), err)
      err = H.error_of(db.renew, db, "job", "A", 2 ^ 53 + 2, 1, 10)
      assert.truthy(err:find("bad argument #4 to 'renew' (fence must be an integer of at most "
        .. "2^53 (this Lua has no integer subtype)", 1, true), err)
      -- the claim was stored (the row keeps the exact fence); its lease runs out
      assert.are.equal("A|9007199254740993\n", H.sqlite3(p, "SELECT owner, fence FROM jobs WHERE id = 'job'"))
    end
  end)

  it("refuses a job whose stored fence is not an integer #sqlite", function()
    H.sqlite3(p, "UPDATE jobs SET fence = 'seven' WHERE id = 'job'")
    local err = H.error_of(db.claim, db, "job", "A", 0, 10)
    assert.matches("[mismatch]", err, 1, true)
    assert.is_nil(db:state("job").owner)
  end)
end)
