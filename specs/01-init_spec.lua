-- Contract step 1: init_db creates the table if missing; calling it again
-- changes nothing and never resets an existing table (resetting fences would
-- make old tokens valid again).
-- Catches the seed's broken change "CREATE TABLE jobs" (not idempotent):
-- the second init_db raises "table jobs already exists".
local H = require("helpers")
local lease = H.lease

describe("step 1: init_db", function()
  it("creates the jobs table with the contract's columns #sqlite", function()
    local p = H.path()
    assert.is_true(lease.init_db(p))
    local cols = H.sqlite3(p, "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('jobs')")
    assert.are.equal(table.concat({
      "id|TEXT|0||1", "owner|TEXT|0||0", "until|REAL|1|0|0",
      "fence|INTEGER|1|0|0", "result|TEXT|0||0", "done|INTEGER|1|0|0", "" }, "\n"), cols)
  end)

  it("is idempotent: a second and third call return true and keep every row and fence", function()
    local p = H.path()
    assert.is_true(lease.init_db(p))
    assert.is_true(lease.enqueue(p, "a"))
    local fence = lease.claim(p, "a", "w1", 0, 10)
    assert.are.equal(1, fence)
    local before = H.snapshot(p)
    assert.is_true(lease.init_db(p))
    assert.is_true(lease.init_db(p))
    assert.are.same(before, H.snapshot(p))
    -- the fence goes on from where it was, never from 0
    assert.are.equal(2, lease.claim(p, "a", "w2", 10, 10))
  end)

  it("is idempotent through a handle too", function()
    local db, p = H.fresh()
    assert.is_true(db:enqueue("a"))
    assert.are.equal(1, db:claim("a", "w", 0, 5))
    assert.is_true(db:init_db())
    assert.is_true(db:init_db())
    local s = db:state("a")
    assert.are.equal(1, s.fence)
    assert.are.equal("w", s.owner)
    db:close()
    assert.is_true(lease.init_db(p))
    assert.are.equal(1, lease.state(p, "a").fence)
  end)

  it("opening a file again keeps the table as it is #sqlite", function()
    local db, p = H.fresh()
    db:enqueue("x")
    db:claim("x", "w", 0, 5)
    db:close()
    for _ = 1, 3 do lease.open(p):close() end
    assert.are.equal(1, lease.state(p, "x").fence)
    assert.are.equal(1, tonumber(H.sqlite3(p, "SELECT count(*) FROM sqlite_master WHERE name = 'jobs'")))
  end)
end)
