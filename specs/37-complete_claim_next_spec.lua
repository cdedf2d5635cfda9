-- complete_claim_next: complete one job and claim the next in one write
-- transaction.  Each step must be exactly the call it is named after
-- (complete, then claim_next for the same owner at the same now); a
-- refused completion stores nothing and the claim still runs; a failure of
-- either step stores nothing at all.
local H = require("helpers")
local lease = H.lease
local T = require("thread_helpers")
local thread = T.thread

local ids = H.ids

-- The first n values of a call, as a list.
local function head(n, ...)
  local t = {}
  for i = 1, n do t[i] = (select(i, ...)) end
  return t
end

describe("complete_claim_next", function()
  local db, p
  before_each(function()
    db, p = H.fresh("ccn")
    db:enqueue_many({ "a", "b", "c" })
  end)
  after_each(function() db:close() end)

  it("stores the result and claims the next job in claim_next's order", function()
    local id, fence = db:claim_next("w", 1, 10)
    assert.are.same({ "a", 1 }, { id, fence })
    local ok, why, nid, nfence, job = db:complete_claim_next("a", "w", 1, 2, "ra", 10)
    assert.are.same({ true, nil, "b", 1 }, { ok, why, nid, nfence })
    assert.are.same({ "b", 1, "default", 0, 1, 25 },
      { job.id, job.fence, job.queue, job.priority, job.attempt, job.max_attempts })
    local a, b = db:state("a"), db:state("b")
    assert.are.same({ true, "ra" }, { a.done, a.result })
    assert.are.same({ "w", 12, 1, false }, { b.owner, b["until"], b.fence, b.done })
    -- the last job: stored, and nothing left to claim
    assert.are.same({ true, nil, "c", 1 }, head(4, db:complete_claim_next("b", "w", 1, 3, nil, 10)))
    assert.are.same({ true, nil, nil, "empty" }, { db:complete_claim_next("c", "w", 1, 4, "rc", 10) })
    assert.are.same({ 3, 3 }, { db:counts(5).total, db:counts(5).done })
  end)

  it("stores nothing for a refused completion, and still claims", function()
    assert.are.equal(1, db:claim("a", "w", 1, 10))   -- held until 11
    local before = db:state("a")
    assert.are.same({ false, "stale_fence", "b", 1 }, head(4, db:complete_claim_next("a", "w", 2, 2, "late", 5)))
    assert.are.same(before, db:state("a"))
    assert.are.same({ false, "not_owner", "c", 1 }, head(4, db:complete_claim_next("a", "x", 1, 2, "late", 5)))
    assert.are.same(before, db:state("a"))
    assert.are.same({ false, "missing", nil, "empty" }, { db:complete_claim_next("zz", "w", 1, 3, nil, 5) })
    -- at 11 the lease has run out: refused as expired, and the same job is
    -- claimed anew, its expired lease recorded as an error
    local ok, why, nid, nfence, job = db:complete_claim_next("a", "w", 1, 11, "late", 5)
    assert.are.same({ false, "expired", "a", 2, 2 }, { ok, why, nid, nfence, job.attempt })
    assert.are.same({ false, nil, "lease expired" },
      { db:state("a").done, db:state("a").result, db:state("a", 11).errors[1].message })
    assert.is_true(db:complete("a", "w", 2, 12, "ra"))
    assert.are.same({ false, "done" }, head(2, db:complete_claim_next("a", "w", 2, 13, "again", 5)))
    assert.are.equal("ra", db:state("a").result)
  end)

  it("claims a batch or from a named queue with claim_next's options", function()
    db:enqueue("m1", { queue = "mail" })
    db:enqueue("m2", { queue = "mail" })
    assert.are.equal(1, db:claim("a", "w", 1, 10))
    local ok, why, list = db:complete_claim_next("a", "w", 1, 2, "ra", 10, 5)
    assert.are.same({ true, nil, { "b", "c" } }, { ok, why, ids(list) })
    ok, why, list = db:complete_claim_next("b", "w", 1, 3, nil, 10, { n = 1, queue = "mail" })
    assert.are.same({ true, nil, { "m1" } }, { ok, why, ids(list) })
    local nid
    ok, why, nid = db:complete_claim_next("c", "w", 1, 3, nil, 10, { queue = "mail" })
    assert.are.same({ true, nil, "m2" }, { ok, why, nid })
    -- an empty batch says why, as claim_next's does
    assert.are.same({ true, nil, {}, "empty" }, { db:complete_claim_next("m1", "w", 1, 4, nil, 10, 3) })
  end)

  it("refuses bad arguments by name before anything is stored", function()
    assert.are.equal(1, db:claim("a", "w", 1, 10))
    local before = H.snapshot(p)
    local cases = {
      { { "", "w", 1, 2, nil, 10 }, "to 'complete_claim_next' (id must be a non-empty string" },
      { { "a", 7, 1, 2, nil, 10 }, "to 'complete_claim_next' (owner must be" },
      { { "a", "w", 1.5, 2, nil, 10 }, "to 'complete_claim_next' (fence must be an integer" },
      { { "a", "w", 1, 0 / 0, nil, 10 }, "to 'complete_claim_next' (now must be" },
      { { "a", "w", 1, 2, 5, 10 }, "to 'complete_claim_next' (result must be" },
      { { "a", "w", 1, 2, nil, 0 }, "to 'complete_claim_next' (ttl must be" },
      { { "a", "w", 1, 2, nil, nil }, "to 'complete_claim_next' (ttl must be" },
      { { "a", "w", 1, 2, nil, 10, 0 }, "to 'complete_claim_next' (n must be" },
      { { "a", "w", 1, 2, nil, 10, { queue = 3 } }, "to 'complete_claim_next' (opts.queue must be" },
      { { "a", "w", 1, 2, nil, 10, { size = 3 } }, "to 'complete_claim_next' (opts has an unknown key 'size'" },
    }
    for _, case in ipairs(cases) do
      local a = case[1]
      local ok, err = pcall(db.complete_claim_next, db, a[1], a[2], a[3], a[4], a[5], a[6], a[7])
      assert.is_false(ok)
      assert.truthy(tostring(err):find(case[2], 1, true), tostring(err))
      assert.are.same(before, H.snapshot(p))
    end
  end)

  it("stores nothing when the claim fails: the completion is rolled back with it", function()
    assert.are.equal(1, db:claim("a", "w", 1, 10))
    if H.backend == "pg" then
      H.sql(p, "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        .. " RAISE EXCEPTION 'boom'; END $$;"
        .. " CREATE TRIGGER boom BEFORE UPDATE ON jobs FOR EACH ROW"
        .. " WHEN (NEW.id = 'b' AND NEW.fence > OLD.fence) EXECUTE FUNCTION boom()")
    else
      H.sql(p, "CREATE TRIGGER boom BEFORE UPDATE OF fence ON jobs WHEN new.id = 'b'"
        .. " BEGIN SELECT RAISE(ABORT, 'boom'); END")
    end
    local before = H.snapshot(p)
    local ok, err = pcall(db.complete_claim_next, db, "a", "w", 1, 2, "ra", 10)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("^lease%.complete_claim_next: .*boom"), tostring(err))
    assert.are.same(before, H.snapshot(p))
    -- the handle goes on: the same call without the trigger stores both
    H.sql(p, "DROP TRIGGER boom" .. (H.backend == "pg" and " ON jobs" or ""))
    assert.are.same({ true, nil, "b", 1 }, head(4, db:complete_claim_next("a", "w", 1, 2, "ra", 10)))
    assert.are.equal("ra", db:state("a").result)
  end)

  it("hands each job out once across threads, each completion stored before the next claim's return", function()
    local n, jobs = 6, H.rounds(300, 120)
    local list = {}
    for i = 1, jobs do list[i] = ("job-%03d"):format(i) end
    assert.are.equal(jobs, db:enqueue_many(list) + 0)
    local function worker(path, me, start)
      local L = require("lease")
      local h = L.open(path)
      start:wait()
      local took, wrong = {}, {}
      local id, fence = h:claim_next(me, L.now(), 60)
      while id do
        took[#took + 1] = id .. "#" .. fence
        local ok, why, nid, nfence = h:complete_claim_next(id, me, fence, L.now(), me, 60)
        if not ok then wrong[#wrong + 1] = id .. " " .. tostring(why) end
        local s = h:state(id)
        if s.done ~= true or s.result ~= me then wrong[#wrong + 1] = "not stored " .. id end
        id, fence = nid, nfence
      end
      h:close()
      return took, wrong
    end
    local start = thread.barrier(n)
    local ts = {}
    for i = 1, n do ts[i] = thread.spawn(worker, p, "w" .. i, start) end
    local seen, total = T.handed_out_once(ts)
    assert.are.equal(jobs + 3, total)
    for id, who in pairs(seen) do
      local s = db:state(id)
      assert.are.same({ true, who }, { s.done, s.result })
    end
  end)
end)

describe("lease.pool with complete_claim_next", function()
  it("gives back, at a stop, the job claimed with the last completion", function()
    local db, p = H.fresh("ccn-pool")
    db:enqueue_many({ "a", "b", "c" })
    db:close()
    -- the handler of "a" stops the pool (SIGTERM) and waits for the stop to
    -- reach its worker: "b", claimed with a's completion, is given back
    -- with its attempt not counted, and "c" is never claimed
    local script = H.file("ccn-pool") .. ".lua"
    H.write(script, [[
      local pool = require("lease.pool")
      local s = pool.run({ db = arg[1], workers = 1, ttl = 30, poll = 0.01, handler = function(job)
        if job.id == "a" then
          local lease = require("lease")
          os.execute("kill -TERM " .. lease.pid())
          lease.sleep(0.5)
        end
        return "r-" .. job.id
      end })
      io.stdout:write(s.done, " ", s.shutdown, " ", tostring(s.interrupted), " ", #s.failed, "\n")
    ]])
    local status, out = H.host(H.sh(script) .. " " .. H.sh(p), nil, 20)
    assert.are.same({ 0, "1 1 TERM 0\n" }, { status, out })
    db = lease.open(p)
    local now = lease.now()
    local a, b, c = db:state("a", now), db:state("b", now), db:state("c", now)
    assert.are.same({ true, "r-a" }, { a.done, a.result })
    assert.are.same({ false, nil, "available", 0, 1 }, { b.done, b.owner, b.status, b.attempt, b.fence })
    assert.are.same({ "available", 0 }, { c.status, c.fence })
    db:close()
  end)
end)
