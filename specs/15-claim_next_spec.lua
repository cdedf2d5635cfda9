-- claim_next and enqueue_many: the queue operations that find work.
-- claim_next claims the oldest-enqueued ready job (not done, until <= now)
-- with claim's rule: fence + 1 under one write lock.
local H = require("helpers")
local lease = H.lease

local ids = H.ids

describe("claim_next", function()
  local db, p
  before_each(function() db, p = H.fresh("next") end)
  after_each(function() db:close() end)

  it("hands out jobs in enqueue order, not id order", function()
    for _, id in ipairs({ "c", "a", "b" }) do db:enqueue(id) end
    assert.are.same({ "c", 1 }, { H.two(db:claim_next("w", 0, 10)) })
    assert.are.same({ "a", 1 }, { H.two(db:claim_next("w", 0, 10)) })
    assert.are.same({ "b", 1 }, { H.two(db:claim_next("w", 0, 10)) })
    assert.are.same({ nil, "empty" }, { H.two(db:claim_next("w", 0, 10)) })
  end)

  it("stores owner, until and the new fence as claim does", function()
    db:enqueue("a")
    local id, fence = db:claim_next("worker", 100, 30)
    assert.are.equal("a", id)
    assert.are.equal(1, fence)
    assert.are.same({ id = "a", owner = "worker", ["until"] = 130, fence = 1, done = false }, H.row(db:state("a")))
    -- the fence it gave works for complete
    assert.is_true(db:complete("a", "worker", fence, 110, "r"))
  end)

  it("gives nil, 'empty' on an empty queue and an empty batch with n", function()
    assert.are.same({ nil, "empty" }, { H.two(db:claim_next("w", 0, 10)) })
    assert.are.same({}, db:claim_next("w", 0, 10, 5))
  end)

  it("takes up to n jobs in one call, oldest first", function()
    assert.are.equal(5, db:enqueue_many({ "j1", "j2", "j3", "j4", "j5" }))
    local b = db:claim_next("w", 0, 10, 2)
    assert.are.same({ { id = "j1", fence = 1 }, { id = "j2", fence = 1 } }, H.idfence(b))
    assert.are.same({ "j3", "j4", "j5" }, ids(db:claim_next("w", 0, 10, 10)))
    assert.are.same({}, db:claim_next("w", 0, 10, 10))
    for _, id in ipairs({ "j1", "j2", "j3", "j4", "j5" }) do
      assert.are.equal("w", db:state(id).owner)
    end
  end)

  it("returns a batch in enqueue order after its jobs were rewritten out of order", function()
    -- rows written since their enqueue (claimed, released) sit elsewhere in
    -- the table (PostgreSQL writes a new row version), so the order the
    -- UPDATE meets them is not enqueue order
    local list = {}
    for i = 1, 40 do list[i] = string.format("r%02d", i) end
    assert.are.equal(40, db:enqueue_many(list))
    for i = 1, 40, 3 do
      local f = db:claim(list[i], "x", 0, 10)
      assert.is_true(db:release(list[i], "x", f))
    end
    for i = 40, 1, -7 do
      local f = db:claim(list[i], "y", 0, 10)
      assert.is_true(db:release(list[i], "y", f))
    end
    assert.are.same(list, ids(db:claim_next("w", 0, 10, 40)))
  end)

  it("keeps the order of ids enqueued together (ties in one transaction)", function()
    local list = {}
    for i = 50, 1, -1 do list[#list + 1] = "t" .. i end
    assert.are.equal(50, db:enqueue_many(list))
    assert.are.same(list, ids(db:claim_next("w", 0, 10, 50)))
  end)

  it("skips held and done jobs and changes nothing about them", function()
    db:enqueue_many({ "held", "done", "free" })
    local f = db:claim("held", "x", 0, 1000)
    local g = db:claim("done", "x", 0, 100)
    assert.is_true(db:complete("done", "x", g, 1, "kept"))
    local before_held, before_done = db:state("held"), db:state("done")
    -- at 500 the done job's old deadline (100) has passed: done still wins
    assert.are.same({ "free", 1 }, { H.two(db:claim_next("w", 500, 10)) })
    assert.are.same({ nil, "empty" }, { H.two(db:claim_next("w", 500, 10)) })
    assert.are.same(before_held, db:state("held"))
    assert.are.same(before_done, db:state("done"))
    assert.are.equal(1, f)
  end)

  it("makes an expired job ready again, at the boundary, in its enqueue place", function()
    db:enqueue_many({ "old", "new" })
    assert.are.same({ "old", 1 }, { H.two(db:claim_next("A", 0, 10)) })
    -- before old's lease ends, only new is ready
    assert.are.same({ "new", 1 }, { H.two(db:claim_next("B", 9, 10)) })
    assert.are.same({ nil, "empty" }, { H.two(db:claim_next("C", 9.5, 10)) })
    -- at now == until old is ready again, with the next fence
    assert.are.same({ "old", 2 }, { H.two(db:claim_next("C", 10, 10)) })
    -- and A's generation is fenced off
    assert.are.same({ false, "not_owner" }, { db:complete("old", "A", 1, 10, "late") })
  end)

  it("hands an expired older job out before newer fresh ones", function()
    db:enqueue("first")
    db:claim_next("A", 0, 5)
    db:enqueue_many({ "second", "third" })
    assert.are.same({ "first", "second" }, ids(db:claim_next("B", 5, 5, 2)))
  end)

  it("makes a released job ready at once", function()
    db:enqueue("a")
    local _, f = db:claim_next("A", 0, 100)
    assert.is_true(db:release("a", "A", f))
    assert.are.same({ "a", 2 }, { H.two(db:claim_next("B", 1, 100)) })
  end)

  it("never hands out a job whose fence cannot grow", function()
    db:enqueue_many({ "maxed", "ok" })
    H.sql(p, "UPDATE jobs SET fence = 9223372036854775807 WHERE id = 'maxed'")
    assert.are.same({ "ok", 1 }, { H.two(db:claim_next("w", 0, 10)) })
    assert.are.same({ nil, "empty" }, { H.two(db:claim_next("w", 0, 10)) })
    assert.are.equal("|9223372036854775807\n", H.sql(p, "SELECT owner, fence FROM jobs WHERE id = 'maxed'"))
  end)

  it("refuses bad arguments before touching the database", function()
    db:enqueue("a")
    local before = H.snapshot(p)
    local claim_next = function(...) local _ = db:claim_next(...) end
    for _, c in ipairs({
      { { nil, 0, 10 }, "#1 to 'claim_next' (owner must be a non-empty string" },
      { { "", 0, 10 }, "#1 to 'claim_next' (owner" },
      { { "w", 0 / 0, 10 }, "#2 to 'claim_next' (now must be a finite number" },
      { { "w", 0, 0 }, "#3 to 'claim_next' (ttl must be a number > 0" },
      { { "w", 0, "1" }, "#3 to 'claim_next' (ttl must be a number" },
      { { "w", 1e300, 1e-300 }, "#3 to 'claim_next' (now + ttl" },
      { { "w", 0, 10, 0 }, "#4 to 'claim_next' (n must be an integer from 1 to 1000000 or nil, got 0)" },
      { { "w", 0, 10, 1.5 }, "#4 to 'claim_next' (n must be an integer" },
      { { "w", 0, 10, "2" }, "#4 to 'claim_next' (n must be an integer" },
      { { "w", 0, 10, 1e7 }, "#4 to 'claim_next' (n must be an integer" },
    }) do
      local err = H.error_of(claim_next, table.unpack(c[1], 1, 4))
      assert.truthy(err:find("bad argument " .. c[2], 1, true), err)
    end
    assert.are.same(before, H.snapshot(p))
  end)

  it("works through the path function", function()
    lease.enqueue_many(p, { "x", "y" })
    assert.are.same({ "x", 1 }, { H.two(lease.claim_next(p, "w", 0, 10)) })
    assert.are.same({ "y" }, ids(lease.claim_next(p, "w", 0, 10, 3)))
    assert.are.same({ nil, "empty" }, { H.two(lease.claim_next(p, "w", 0, 10)) })
  end)

  it("gives a jobs table another client made the queue's index, and no index of its own #sqlite", function()
    local q = H.path("foreign")
    H.sqlite3(q, "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0,"
      .. " fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0);"
      .. " INSERT INTO jobs(id) VALUES ('z'), ('y')")
    assert.are.same({ "z", 1 }, { H.two(lease.claim_next(q, "w", 0, 10)) })
    assert.are.equal("sqlite_autoindex_jobs_1\n",
      H.sqlite3(q, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs'"
        .. " ORDER BY name"))
    assert.are.equal("lease_queue_due\nlease_queue_ended\nlease_queue_key\n",
      H.sqlite3(q, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'lease_queue'"
        .. " ORDER BY name"))
  end)

  it("drops the index on jobs that files of earlier versions carry, never on a read-only handle #sqlite", function()
    local q = H.path("older")
    H.sqlite3(q, "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0,"
      .. " fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0);"
      .. " CREATE INDEX lease_jobs_pending ON jobs(done) WHERE done = 0;"
      .. " INSERT INTO jobs(id) VALUES ('z'), ('y')")
    local indexes = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs' ORDER BY name"
    local ro = lease.open(q, { readonly = true })
    assert.are.same({ "y", "z" }, { ro:state("y").id, ro:state("z").id })
    ro:close()
    assert.are.equal("lease_jobs_pending\nsqlite_autoindex_jobs_1\n", H.sqlite3(q, indexes))
    local d = lease.open(q)
    assert.are.same({ "z", 1 }, { H.two(d:claim_next("w", 0, 10)) })
    d:close()
    assert.are.equal("sqlite_autoindex_jobs_1\n", H.sqlite3(q, indexes))
  end)

  it("raises busy past the busy timeout, never nil #sqlite", function()
    local d2 = H.lease.open(p, { busy_timeout = 0 })
    db:enqueue("a")
    local cli = os.getenv("LEASE_SQLITE3") or "sqlite3"
    if cli == "" then cli = "sqlite3" end
    local marker = p .. ".locked"
    local pipe = io.popen(cli .. " -batch " .. H.sh(p) .. " >/dev/null 2>&1", "w")
    pipe:write("BEGIN IMMEDIATE;\nUPDATE jobs SET owner = owner;\n.shell touch " .. H.sh(marker) .. "\n")
    pipe:flush()
    for _ = 1, 500 do if H.exists(marker) then break end os.execute("sleep 0.01") end
    local ok, err = pcall(d2.claim_next, d2, "w", 0, 10)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("[busy]", 1, true), err)
    pipe:write("COMMIT;\n")
    pipe:close()
    assert.are.same({ "a", 1 }, { H.two(d2:claim_next("w", 0, 10)) })
    d2:close()
  end)
end)

describe("enqueue_many", function()
  it("returns how many ids were new and leaves existing jobs as they were", function()
    local db = H.fresh()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 100)
    assert.are.equal(2, db:enqueue_many({ "a", "b", "c", "b" }))
    assert.are.equal("w", db:state("a").owner)
    assert.are.equal(f, db:state("a").fence)
    assert.are.equal(0, db:enqueue_many({}))
  end)

  it("checks every id first: a bad one inserts nothing", function()
    local db, p = H.fresh()
    db:enqueue("keep")
    local before = H.snapshot(p)
    for _, bad in ipairs({ { "x", "" }, { "x", 5 }, { "x", {} }, { "x", false } }) do
      local err = H.error_of(function() local _ = db:enqueue_many(bad) end)
      assert.truthy(err:find("bad argument #1 to 'enqueue_many' (ids[2]", 1, true), err)
    end
    local err = H.error_of(function() local _ = db:enqueue_many("x") end)
    assert.truthy(err:find("ids must be a table", 1, true), err)
    -- an id under any other key would not be enqueued
    err = H.error_of(function() local _ = db:enqueue_many({ "x", y = "z" }) end)
    assert.truthy(err:find("(ids must be a sequence, but has key y beside 1..1)", 1, true), err)
    assert.are.same(before, H.snapshot(p))
    assert.is_nil(db:state("x"))
  end)

  it("keeps zero bytes in ids", function()
    local db = H.fresh()
    assert.are.equal(2, db:enqueue_many({ "a\0b", "a\0c" }))
    assert.are.equal("a\0b", (db:claim_next("w", 0, 1)))
  end)
end)
