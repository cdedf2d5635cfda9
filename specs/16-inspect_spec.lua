-- Inspection (db:jobs, db:counts) and the worker helpers lease.now and
-- lease.sleep.
local H = require("helpers")
local lease = H.lease

local ids = H.ids

describe("db:jobs and db:counts", function()
  local db
  before_each(function()
    db = H.fresh("inspect")
    db:enqueue_many({ "held", "done", "ready", "expired", "released" })
    db:claim("held", "w", 0, 100)
    local f = db:claim("done", "w", 0, 100)
    assert.is_true(db:complete("done", "w", f, 1, "result"))
    db:claim("expired", "w", 0, 5)
    local g = db:claim("released", "w", 0, 100)
    assert.is_true(db:release("released", "w", g))
  end)
  after_each(function() db:close() end)

  it("lists each kind in enqueue order at a given now", function()
    assert.are.same({ "held", "done", "ready", "expired", "released" }, ids(db:jobs("all", 10)))
    assert.are.same({ "ready", "expired", "released" }, ids(db:jobs("ready", 10)))
    assert.are.same({ "held" }, ids(db:jobs("held", 10)))
    assert.are.same({ "done" }, ids(db:jobs("done", 10)))
    -- at now = 4 the expired job was still held
    assert.are.same({ "held", "expired" }, ids(db:jobs("held", 4)))
  end)

  it("gives rows shaped like db:state plus seq", function()
    local all = db:jobs("all", 10)
    for _, j in ipairs(all) do
      local s = H.row(db:state(j.id))
      s.seq = j.seq
      local r = H.row(j)
      r.seq = j.seq
      assert.are.same(s, r)
      assert.is_true(H.is_integer(j.seq))
    end
  end)

  it("pages with limit and after", function()
    local p1 = db:jobs("all", 10, 2)
    assert.are.same({ "held", "done" }, ids(p1))
    local p2 = db:jobs("all", 10, 2, p1[2].seq)
    assert.are.same({ "ready", "expired" }, ids(p2))
    local p3 = db:jobs("all", 10, 2, p2[2].seq)
    assert.are.same({ "released" }, ids(p3))
    assert.are.same({}, db:jobs("all", 10, 2, p3[1].seq))
  end)

  it("counts by state", function()
    assert.are.same({ total = 5, ready = 3, held = 1, done = 1, blocked = 0 }, H.counts(db:counts(10)))
    assert.are.same({ total = 5, ready = 2, held = 2, done = 1, blocked = 0 }, H.counts(db:counts(4)))
  end)

  it("refuses bad arguments", function()
    local jobs = function(...) local _ = db:jobs(...) end
    for _, c in ipairs({
      { { "some", 1 }, "#1 to 'jobs' (which must be" },
      { { nil, 1 }, "#1 to 'jobs' (which must be" },
      { { "all", 0 / 0 }, "#2 to 'jobs' (now must be a finite number" },
      { { "all", "1" }, "#2 to 'jobs' (now must be a number" },
      { { "all", 1, 0 }, "#3 to 'jobs' (limit must be an integer from 1 to 100000" },
      { { "all", 1, 10, 1.5 }, "#4 to 'jobs' (after must be an integer" },
    }) do
      local err = H.error_of(jobs, table.unpack(c[1], 1, 4))
      assert.truthy(err:find("bad argument " .. c[2], 1, true), err)
    end
    local err = H.error_of(function() local _ = db:counts(nil) end)
    assert.truthy(err:find("bad argument #1 to 'counts' (now must be a number", 1, true), err)
  end)
end)

describe("lease.now and lease.sleep", function()
  it("now is wall-clock seconds as a float", function()
    local t = lease.now()
    if H.integers then assert.are.equal("float", math.type(t)) end
    assert.is_true(math.abs(t - os.time()) < 2)
  end)

  it("sleep waits at least the time asked", function()
    local t0 = lease.now()
    lease.sleep(0.05)
    assert.is_true(lease.now() - t0 >= 0.049)
    lease.sleep(0)
  end)

  it("sleep refuses negative, NaN, infinite and non-numbers", function()
    for _, bad in ipairs({ -1, 0 / 0, math.huge, "1", {} }) do
      local err = H.error_of(lease.sleep, bad)
      assert.truthy(err:find("bad argument #1 to 'lease.sleep' (seconds must be", 1, true), err)
    end
    assert.truthy(H.error_of(lease.sleep):find("got no value", 1, true))
  end)
end)
