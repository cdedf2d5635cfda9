-- complete_many: complete a batch of jobs in one transaction, each exactly
-- as complete would (contract step 6): owner, fence, done and until are
-- checked for every job at the moment it is stored, a refused job keeps its
-- stored result, and a refused job does not stop the others.
local H = require("helpers")
local lease = H.lease

-- the rows of ids, as read back through the handle
local function states(db, ids)
  local out = {}
  for i, id in ipairs(ids) do out[i] = db:state(id) end
  return out
end

describe("complete_many", function()
  local db, p
  before_each(function() db, p = H.fresh("many") end)
  after_each(function() db:close() end)

  it("stores every job of a claim_next batch, with its result, and returns true", function()
    db:enqueue_many({ "a", "b", "c" })
    local jobs = db:claim_next("w", 0, 10, 3)
    for _, j in ipairs(jobs) do j.result = "r-" .. j.id end
    assert.are.same({ true }, { db:complete_many("w", 5, jobs) })
    for _, id in ipairs({ "a", "b", "c" }) do
      assert.are.same({ id = id, owner = "w", ["until"] = 10, fence = 1, result = "r-" .. id, done = true },
        H.row(db:state(id)))
    end
  end)

  it("refuses each job the way complete would, stores the others, and says why by position", function()
    db:enqueue_many({ "ok1", "stale", "other", "expired", "done", "ok2", "edge" })
    -- stale: w held fence 1, lost it at t=10, took it again with fence 2
    assert.are.equal(1, db:claim("stale", "w", 0, 10))
    assert.are.equal(2, db:claim("stale", "w", 10, 100))
    assert.are.equal(1, db:claim("other", "x", 0, 100))
    assert.are.equal(1, db:claim("expired", "w", 0, 5))
    assert.are.equal(1, db:claim("done", "w", 0, 100))
    assert.is_true(db:complete("done", "w", 1, 1, "first"))
    assert.are.equal(1, db:claim("ok1", "w", 0, 100))
    assert.are.equal(1, db:claim("ok2", "w", 0, 100))
    assert.are.equal(1, db:claim("edge", "w", 0, 20))   -- until 20: at now == 20 it has run out
    local refused_ids = { "stale", "other", "expired", "done", "edge" }
    local before = states(db, refused_ids)
    local ok, why = db:complete_many("w", 20, {
      { id = "ok1", fence = 1, result = "one" },
      { id = "stale", fence = 1, result = "late" },
      { id = "other", fence = 1, result = "late" },
      { id = "expired", fence = 1, result = "late" },
      { id = "done", fence = 1, result = "again" },
      { id = "missing", fence = 1, result = "late" },
      { id = "ok2", fence = 1 },
      { id = "edge", fence = 1, result = "late" },
    })
    assert.is_false(ok)
    assert.are.same({ [2] = "stale_fence", [3] = "not_owner", [4] = "expired", [5] = "done",
      [6] = "missing", [8] = "expired" }, why)
    -- the refused jobs are as they were; a done job keeps its first result
    assert.are.same(before, states(db, refused_ids))
    assert.are.equal("first", db:state("done").result)
    assert.is_nil(db:state("missing"))
    -- the others were stored, after the refusals too
    assert.are.same({ id = "ok1", owner = "w", ["until"] = 100, fence = 1, result = "one", done = true },
      H.row(db:state("ok1")))
    assert.are.same({ id = "ok2", owner = "w", ["until"] = 100, fence = 1, done = true }, H.row(db:state("ok2")))
  end)

  it("refuses the same id the second time in one batch: done", function()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 10)
    local ok, why = db:complete_many("w", 1, { { id = "a", fence = f, result = "1" },
      { id = "a", fence = f, result = "2" } })
    assert.is_false(ok)
    assert.are.same({ [2] = "done" }, why)
    assert.are.equal("1", db:state("a").result)
  end)

  it("refuses the same id the second time in one batch when other jobs come between: done", function()
    db:enqueue_many({ "a", "b" })
    local fa, fb = db:claim("a", "w", 0, 10), db:claim("b", "w", 0, 10)
    local ok, why = db:complete_many("w", 1, { { id = "a", fence = fa, result = "1" },
      { id = "b", fence = fb, result = "b" }, { id = "a", fence = fa, result = "2" } })
    assert.is_false(ok)
    assert.are.same({ [3] = "done" }, why)
    assert.are.same({ "1", "b" }, { db:state("a").result, db:state("b").result })
  end)

  it("returns true for an empty batch and changes nothing", function()
    db:enqueue("a")
    local before = H.snapshot(p)
    assert.are.same({ true }, { db:complete_many("w", 0, {}) })
    assert.are.same(before, H.snapshot(p))
  end)

  it("is one transaction: a failure part-way stores none of the batch #sqlite", function()
    db:enqueue_many({ "j1", "j2", "j3" })
    local jobs = db:claim_next("w", 0, 10, 3)
    -- another client's trigger makes the third write fail
    H.sqlite3(p, "CREATE TRIGGER boom BEFORE UPDATE OF done ON jobs WHEN NEW.id = 'j3'"
      .. " BEGIN SELECT RAISE(ABORT, 'boom'); END")
    local before = H.snapshot(p)
    local err = H.error_of(function() local _ = db:complete_many("w", 1, jobs) end)
    assert.truthy(err:find("lease.complete_many: boom [constraint]", 1, true), err)
    assert.are.same(before, H.snapshot(p))
    -- the handle is usable afterwards
    H.sqlite3(p, "DROP TRIGGER boom")
    assert.is_true(db:complete_many("w", 1, jobs))
  end)

  it("raises for a blocked job, as complete does, and stores none of the batch #sqlite", function()
    db:enqueue_many({ "a", "b" })
    local jobs = db:claim_next("w", 0, 10, 2)
    -- another client stores an until the engine cannot compare
    H.sqlite3(p, "UPDATE jobs SET until = 'soon' WHERE id = 'b'")
    local before = H.snapshot(p)
    local err = H.error_of(function() local _ = db:complete_many("w", 1, jobs) end)
    assert.truthy(err:find("[mismatch]", 1, true), err)
    assert.are.same(before, H.snapshot(p))
  end)

  it("raises busy past the busy timeout, never false, and stores nothing #sqlite", function()
    local d2 = lease.open(p, { busy_timeout = 0 })
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 10)
    local marker = p .. ".locked"
    local cli = os.getenv("LEASE_SQLITE3") or "sqlite3"
    if cli == "" then cli = "sqlite3" end
    local pipe = io.popen(cli .. " -batch " .. H.sh(p) .. " >/dev/null 2>&1", "w")
    pipe:write("BEGIN IMMEDIATE;\nUPDATE jobs SET owner = owner;\n.shell touch " .. H.sh(marker) .. "\n")
    pipe:flush()
    for _ = 1, 500 do if H.exists(marker) then break end os.execute("sleep 0.01") end
    local ok, err = pcall(d2.complete_many, d2, "w", 1, { { id = "a", fence = f } })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("[busy]", 1, true), err)
    pipe:write("COMMIT;\n")
    pipe:close()
    assert.is_false(d2:state("a").done)
    assert.is_true(d2:complete_many("w", 1, { { id = "a", fence = f } }))
    d2:close()
  end)

  it("checks every argument first: a bad one raises and stores nothing", function()
    db:enqueue_many({ "a", "b" })
    local fa, fb = db:claim("a", "w", 0, 10), db:claim("b", "w", 0, 10)
    local good = { id = "a", fence = fa, result = "r" }
    local before = H.snapshot(p)
    local cases = {
      { { "", 1, { good } }, "bad argument #1 to 'complete_many' (owner must be a non-empty string, got an empty string)" },
      { { 7, 1, { good } }, "bad argument #1 to 'complete_many' (owner must be a non-empty string, got 7)" },
      { { "w", 0 / 0, { good } }, "bad argument #2 to 'complete_many' (now must be a finite number" },
      { { "w", math.huge, { good } }, "bad argument #2 to 'complete_many' (now must be a finite number" },
      { { "w", "1", { good } }, "bad argument #2 to 'complete_many' (now must be a number, got a string)" },
      { { "w", 1, "a" }, "bad argument #3 to 'complete_many' (jobs must be a table, got a string)" },
      { { "w", 1, { good, "b" } }, "bad argument #3 to 'complete_many' (jobs[2] must be a table, got a string)" },
      { { "w", 1, { good, { fence = fb } } }, "(jobs[2].id must be a non-empty string, got nil)" },
      { { "w", 1, { good, { id = "", fence = fb } } }, "(jobs[2].id must be a non-empty string, got an empty string)" },
      { { "w", 1, { good, { id = 2, fence = fb } } }, "(jobs[2].id must be a non-empty string, got 2)" },
      { { "w", 1, { good, { id = "b" } } }, "(jobs[2].fence must be an integer, got nil)" },
      { { "w", 1, { good, { id = "b", fence = 1.5 } } }, "(jobs[2].fence must be an integer, got 1.5)" },
      { { "w", 1, { good, { id = "b", fence = "1" } } }, "(jobs[2].fence must be an integer, got a string)" },
      { { "w", 1, { good, { id = "b", fence = fb, result = 5 } } }, "(jobs[2].result must be a string or nil, got 5)" },
      { { "w", 1, { good, { id = "b", fence = fb, result = false } } }, "(jobs[2].result must be a string or nil, got boolean)" },
      -- a misspelt result would store none: every key is one claim_next gives, or result
      { { "w", 1, { good, { id = "b", fence = fb, reslut = "r" } } }, "(jobs[2] has an unknown key 'reslut')" },
      { { "w", 1, { good, { id = "b", fence = fb, [1] = "r" } } }, "(jobs[2] has an unknown key '1')" },
      -- an entry under any other key would be left out
      { { "w", 1, { good, x = { id = "b", fence = fb } } }, "(jobs must be a sequence, but has key x beside 1..1)" },
      { { "w", 1, { good, [3] = { id = "b", fence = fb } } }, "(jobs must be a sequence, but has key 3 beside 1..1)" },
    }
    for _, c in ipairs(cases) do
      local err = H.error_of(function() local _ = db:complete_many(table.unpack(c[1], 1, 3)) end)
      assert.truthy(err:find(c[2], 1, true), err .. "\nexpected: " .. c[2])
    end
    assert.are.same(before, H.snapshot(p))
  end)

  it("refuses a job table with a metatable: a field from it would not count", function()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 10)
    local job = setmetatable({ id = "a" }, { __index = { fence = f } })
    local err = H.error_of(function() local _ = db:complete_many("w", 1, { job }) end)
    assert.truthy(err:find("(jobs[1] must be a plain table, without a metatable", 1, true), err)
    assert.is_false(db:state("a").done)
  end)

  it("takes back the tables claim_next gave, each with its result", function()
    db:enqueue_many({ { id = "a", payload = "p", queue = "q", priority = 3, timeout = 9 } })
    local jobs = db:claim_next("w", 0, 10, { queue = "q", n = 1 })
    jobs[1].result = "done"
    assert.is_true(db:complete_many("w", 1, jobs))
    assert.are.equal("done", db:state("a").result)
  end)

  it("keeps zero bytes in ids and results", function()
    db:enqueue_many({ "a\0b", "a\0c" })
    local jobs = db:claim_next("w", 0, 10, 2)
    jobs[1].result, jobs[2].result = "x\0y", "x\0z"
    assert.is_true(db:complete_many("w", 1, jobs))
    assert.are.equal("x\0y", db:state("a\0b").result)
    assert.are.equal("x\0z", db:state("a\0c").result)
  end)

  it("has a path function with the same returns", function()
    db:enqueue_many({ "a", "b" })
    local fa = db:claim("a", "w", 0, 10)
    local ok, why = lease.complete_many(p, "w", 1, { { id = "a", fence = fa, result = "r" },
      { id = "b", fence = 1 } })
    assert.is_false(ok)
    assert.are.same({ [2] = "not_owner" }, why)
    assert.are.equal("r", db:state("a").result)
    -- a bad argument does not even create the file
    local q = H.path("never")
    local err = H.error_of(lease.complete_many, q, "w", 1, { { id = "a" } })
    assert.truthy(err:find("bad argument #4 to 'lease.complete_many' (jobs[1].fence must be an integer, got nil)",
      1, true), err)
    assert.is_false(H.exists(q))
  end)
end)
