-- claim_next(n): one call takes a batch of jobs in the queue's order,
-- each with claim's rule (fence + 1, owner, until = now + ttl) and an
-- attempt counted, a job whose lease ended unreported getting its "lease
-- expired" error first.  The batch must equal n claims one after the other.
local H = require("helpers")

local ids = H.ids

-- {id, fence, attempt} of each job of a batch.
local function ifa(list)
  local out = {}
  for i, j in ipairs(list) do out[i] = { j.id, j.fence, j.attempt } end
  return out
end

describe("claim_next(n) batches", function()
  local db, p
  before_each(function() db, p = H.fresh("batch") end)
  after_each(function() db:close() end)

  it("takes one batch across priorities and run_at in claim order, the next batch going on from there", function()
    db:enqueue("p0a")
    db:enqueue("sched5", { run_at = 5 })
    db:enqueue("urgent", { priority = -2 })
    db:enqueue("sched1", { run_at = 1 })
    db:enqueue("low", { priority = 3 })
    db:enqueue("p0b")
    db:enqueue("future", { run_at = 100 })
    db:enqueue("urg2", { priority = -2, run_at = 2 })
    local b1 = db:claim_next("w", 10, 1000, 4)
    assert.are.same({ { "urgent", 1, 1 }, { "urg2", 1, 1 }, { "p0a", 1, 1 }, { "p0b", 1, 1 } }, ifa(b1))
    assert.are.same({ "sched1", "sched5", "low" }, ids(db:claim_next("w", 10, 1000, 10)))
    assert.are.same({}, db:claim_next("w", 10, 1000, 10))
    assert.are.equal("scheduled", db:state("future", 10).status)
    assert.are.same({ "future" }, ids(db:claim_next("w", 100, 1000, 10)))
  end)

  it("mixes jobs whose lease ended with never-claimed and released ones, in queue order", function()
    db:enqueue_many({ "a", "b", "c", "d", "e", "f" })
    assert.are.equal(1, db:claim("a", "old", 0, 10))
    assert.are.equal(1, db:claim("c", "old", 0, 10))
    assert.is_true(db:release("d", "old", db:claim("d", "old", 0, 10)))
    assert.are.equal(1, db:claim("e", "keep", 0, 1000))
    local kept = db:state("e", 20)
    local batch = db:claim_next("w", 20, 10, 10)
    -- d's release gave its attempt back
    assert.are.same({ { "a", 2, 2 }, { "b", 1, 1 }, { "c", 2, 2 }, { "d", 2, 1 }, { "f", 1, 1 } }, ifa(batch))
    -- each ended lease is recorded once, at its deadline, with its holder and fence
    for _, id in ipairs({ "a", "c" }) do
      local s = db:state(id, 20)
      assert.are.same({ { attempt = 1, at = 10, owner = "old", fence = 1, message = "lease expired" } }, s.errors)
      assert.are.same({ "w", 30, 2, 2, "running" }, { s.owner, s["until"], s.fence, s.attempt, s.status })
    end
    for _, id in ipairs({ "b", "d", "f" }) do
      local s = db:state(id, 20)
      assert.are.same({}, s.errors)
      assert.are.same({ "w", 30 }, { s.owner, s["until"] })
    end
    assert.are.same(kept, db:state("e", 20))
    -- the old holder is fenced off; the batch's fences work
    assert.are.same({ false, "not_owner" }, { db:complete("a", "old", 1, 20, "late") })
    for _, j in ipairs(batch) do j.result = "ok" end
    assert.is_true(db:complete_many("w", 21, batch))
    assert.are.equal(6, db:counts(21).total)
    assert.are.equal(5, db:counts(21).done)
  end)

  it("discards a job whose ended lease used its last attempt and fills the batch from the jobs after it", function()
    db:enqueue("x", { max_attempts = 1 })
    db:enqueue("y", { max_attempts = 1 })
    db:enqueue_many({ "a", "b", "c" })
    db:claim("x", "old", 0, 10)
    db:claim("y", "old", 0, 10)
    local batch = db:claim_next("w", 10, 10, 3)
    assert.are.same({ { "a", 1, 1 }, { "b", 1, 1 }, { "c", 1, 1 } }, ifa(batch))
    for _, id in ipairs({ "x", "y" }) do
      local s = db:state(id, 10)
      assert.are.same({ "discarded", 1, 1, 1 }, { s.status, s.fence, s.attempt, #s.errors })
    end
    assert.are.same({}, db:claim_next("w", 19, 10, 5))
  end)

  it("never takes cancelled, discarded, held, done or blocked jobs, and leaves them as they were #sqlite #lua53", function()
    db:enqueue("disc", { max_attempts = 1 })
    db:enqueue_many({ "a", "canc", "held", "done", "blk", "z" })
    assert.is_true(db:cancel("canc", 0))
    assert.are.same({ "discarded" }, { db:fail("disc", "x", db:claim("disc", "x", 0, 10), 1, "boom") })
    db:claim("held", "x", 0, 1000)
    assert.is_true(db:complete("done", "x", db:claim("done", "x", 0, 10), 1, "r"))
    H.sqlite3(p, "UPDATE jobs SET fence = 9223372036854775807 WHERE id = 'blk'")
    local before = {}
    for _, id in ipairs({ "disc", "canc", "held", "done", "blk" }) do before[id] = db:state(id, 20) end
    assert.are.same({ { "a", 1, 1 }, { "z", 1, 1 } }, ifa(db:claim_next("w", 20, 10, 10)))
    for id, s in pairs(before) do assert.are.same(s, db:state(id, 20), id) end
  end)

  it("grows each job's fence and attempt by one per batch, ended leases and new jobs together", function()
    db:enqueue_many({ "a", "b", "c" })
    for r = 1, 4 do
      db:enqueue("n" .. r)
      local now = 5 * (r - 1)
      local batch = db:claim_next("w" .. r, now, 5, 10)
      local want = { { "a", r, r }, { "b", r, r }, { "c", r, r } }
      for k = 1, r do want[#want + 1] = { "n" .. k, r - k + 1, r - k + 1 } end
      assert.are.same(want, ifa(batch))
      for _, j in ipairs(batch) do
        local s = db:state(j.id, now)
        assert.are.same({ "w" .. r, now + 5, j.fence }, { s.owner, s["until"], s.fence })
        assert.are.equal(j.fence - 1, #s.errors)
      end
    end
  end)

  it("hands out a large batch once each, in (priority, enqueue) order", function()
    local list, want = {}, { {}, {}, {} }
    for i = 1, 300 do
      local id = string.format("k%03d", (i * 7) % 300)
      list[i] = { id = id, priority = i % 3 }
      table.insert(want[i % 3 + 1], id)
    end
    assert.are.equal(300, db:enqueue_many(list))
    local all = {}
    for _, w in ipairs(want) do for _, id in ipairs(w) do all[#all + 1] = id end end
    local batch = db:claim_next("w", 0, 10, 1000)
    assert.are.same(all, ids(batch))
    for _, j in ipairs(batch) do assert.are.same({ 1, 1 }, { j.fence, j.attempt }) end
    assert.are.equal(300, db:counts(1).held)
  end)
end)
