-- complete_many_claim_next: complete a batch and claim the next in one
-- write transaction.  Each step must be exactly the call it is named after
-- (complete_many, then claim_next for the same owner at the same now); a
-- refused job stores nothing and the claim still runs; a failure of either
-- step stores nothing at all.  Backend-neutral.
local H = require("helpers")
local lease = H.lease

-- The first n values of a call, as a list.
local function head(n, ...)
  local t = {}
  for i = 1, n do t[i] = (select(i, ...)) end
  return t
end

-- The jobs of a claim_next list as complete_many's entries, each with result r.
local function results(list, r)
  local out = {}
  for i, j in ipairs(list) do out[i] = { id = j.id, fence = j.fence, result = r .. j.id } end
  return out
end

describe("complete_many_claim_next", function()
  local db, p
  before_each(function()
    db, p = H.fresh("cmcn")
    db:enqueue_many({ "a", "b", "c", "d", "e" })
  end)
  after_each(function() db:close() end)

  it("stores every result and claims the next batch in claim_next's order", function()
    local first = db:claim_next("w", 1, 10, 2)
    local ok, refused, next_batch = db:complete_many_claim_next("w", 2, results(first, "r-"), 10, 2)
    assert.are.same({ true }, { ok, refused })
    assert.are.same({ "c", "d" }, { next_batch[1].id, next_batch[2].id })
    assert.are.same({ 1, 1, "default", 1 }, { next_batch[1].fence, next_batch[2].fence,
      next_batch[1].queue, next_batch[1].attempt })
    local a, b, c = db:state("a"), db:state("b"), db:state("c")
    assert.are.same({ true, "r-a", true, "r-b" }, { a.done, a.result, b.done, b.result })
    assert.are.same({ "w", 12, false }, { c.owner, c["until"], c.done })
    -- the single form: id, fence, job; then the last ones, and nothing left
    local r = { db:complete_many_claim_next("w", 3, results(next_batch, "r-"), 10) }
    assert.are.same({ true, nil, "e", 1 }, { r[1], r[2], r[3], r[4] })
    r = { db:complete_many_claim_next("w", 4, { { id = "e", fence = 1 } }, 10, { n = 3 }) }
    assert.are.same({ true, nil, {}, "empty" }, r)
    assert.are.same({ 5, 5 }, { db:counts(5).total, db:counts(5).done })
  end)

  it("stores nothing for a refused job, stores the others and still claims", function()
    local first = db:claim_next("w", 1, 10, 3)
    local before = db:state("b")
    local list = results(first, "r-")
    list[2].fence = 7                      -- b: stale
    list[4] = { id = "zz", fence = 1 }     -- missing
    local ok, refused, next_batch = db:complete_many_claim_next("w", 2, list, 10, 5)
    assert.are.same({ false, { [2] = "stale_fence", [4] = "missing" } }, { ok, refused })
    assert.are.same({ "d", "e" }, { next_batch[1].id, next_batch[2].id })
    assert.are.same(before, db:state("b"))
    assert.are.same({ true, "r-a", true, "r-c" },
      { db:state("a").done, db:state("a").result, db:state("c").done, db:state("c").result })
    -- an empty list is the claim alone
    assert.are.same({ true, nil, {}, "empty" }, { db:complete_many_claim_next("w", 3, {}, 10, 2) })
  end)

  it("claims from a named queue with claim_next's options", function()
    db:enqueue("m1", { queue = "mail" })
    local a = db:claim_next("w", 1, 10, 1)
    local r = { db:complete_many_claim_next("w", 2, results(a, ""), 10, { n = 2, queue = "mail" }) }
    assert.are.same({ true, nil, 1, "m1", "mail" }, { r[1], r[2], #r[3], r[3][1].id, r[3][1].queue })
  end)

  it("refuses bad arguments by name before anything is stored", function()
    local first = db:claim_next("w", 1, 10, 1)
    local good = results(first, "")
    local before = H.snapshot(p)
    local cases = {
      { { 7, 2, good, 10 }, "to 'complete_many_claim_next' (owner must be" },
      { { "w", 0 / 0, good, 10 }, "to 'complete_many_claim_next' (now must be" },
      { { "w", 2, "a", 10 }, "to 'complete_many_claim_next' (jobs must be" },
      { { "w", 2, { { id = "a", fence = 1.5 } }, 10 }, "(jobs[1].fence must be an integer" },
      { { "w", 2, { { id = "", fence = 1 } }, 10 }, "(jobs[1].id must be a non-empty string" },
      { { "w", 2, { { id = "a", fence = 1, result = 5 } }, 10 }, "(jobs[1].result must be" },
      { { "w", 2, { { id = "a", fence = 1, reslut = "r" } }, 10 }, "(jobs[1] has an unknown key 'reslut')" },
      { { "w", 2, { { id = "a", fence = 1 }, x = {} }, 10 }, "(jobs must be a sequence, but has key x" },
      { { "w", 2, good, 0 }, "to 'complete_many_claim_next' (ttl must be" },
      { { "w", 2, good, nil }, "to 'complete_many_claim_next' (ttl must be" },
      { { "w", 2, good, 10, 0 }, "to 'complete_many_claim_next' (n must be" },
      { { "w", 2, good, 10, { queue = 3 } }, "to 'complete_many_claim_next' (opts.queue must be" },
      { { "w", 2, good, 10, { size = 3 } }, "(opts has an unknown key 'size'" },
    }
    for _, case in ipairs(cases) do
      local a = case[1]
      local ok, err = pcall(db.complete_many_claim_next, db, a[1], a[2], a[3], a[4], a[5])
      assert.is_false(ok)
      assert.truthy(tostring(err):find(case[2], 1, true), tostring(err))
      assert.are.same(before, H.snapshot(p))
    end
  end)

  it("stores nothing when the claim fails: the completions are rolled back with it", function()
    local first = db:claim_next("w", 1, 10, 2)
    if H.backend == "pg" then
      H.sql(p, "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        .. " RAISE EXCEPTION 'boom'; END $$;"
        .. " CREATE TRIGGER boom BEFORE UPDATE ON jobs FOR EACH ROW"
        .. " WHEN (NEW.id = 'c' AND NEW.fence > OLD.fence) EXECUTE FUNCTION boom()")
    else
      H.sql(p, "CREATE TRIGGER boom BEFORE UPDATE OF fence ON jobs WHEN new.id = 'c'"
        .. " BEGIN SELECT RAISE(ABORT, 'boom'); END")
    end
    local before = H.snapshot(p)
    local ok, err = pcall(db.complete_many_claim_next, db, "w", 2, results(first, "r-"), 10, 2)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("^lease%.complete_many_claim_next: .*boom"), tostring(err))
    assert.are.same(before, H.snapshot(p))
    -- the handle goes on: the same call without the trigger stores both
    H.sql(p, "DROP TRIGGER boom" .. (H.backend == "pg" and " ON jobs" or ""))
    assert.are.same({ true, nil }, head(2, db:complete_many_claim_next("w", 2, results(first, "r-"), 10, 2)))
    assert.are.same({ "r-a", "running" }, { db:state("a").result, db:state("c", 3).status })
  end)
end)

describe("lease.pool's batch mode", function()
  it("stores each batch with the next one's claim, and gives that batch back at a stop", function()
    local db, p = H.fresh("cmcn-pool")
    db:enqueue_many({ "a", "b", "c", "d", "e", "f" })
    db:close()
    -- the on_success hook of "b" (the first batch's last job, called once
    -- the batch is stored) stops the pool and waits for the stop to reach
    -- its worker: a and b are stored, c and d, claimed with their
    -- completion, are given back with no attempt counted, and e and f are
    -- never claimed
    local worker = H.file("cmcn-worker") .. ".lua"
    H.write(worker, [[
      local lease = require("lease")
      return {
        handler = function(job) return "r-" .. job.id end,
        on_success = function(ev)
          if ev.id ~= "b" then return end
          os.execute("kill -TERM " .. lease.pid())
          lease.sleep(0.5)
        end,
      }
    ]])
    local script = H.file("cmcn-pool") .. ".lua"
    H.write(script, [[
      local pool = require("lease.pool")
      local s = pool.run({ db = arg[1], worker = arg[2], workers = 1, ttl = 30, poll = 0.01, batch = 2 })
      io.stdout:write(s.done, " ", s.shutdown, " ", tostring(s.interrupted), " ", #s.failed, "\n")
    ]])
    local status, out = H.host(H.sh(script) .. " " .. H.sh(p) .. " " .. H.sh(worker), nil, 20)
    assert.are.same({ 0, "2 2 TERM 0\n" }, { status, out })
    db = lease.open(p)
    local now = lease.now()
    for _, id in ipairs({ "a", "b" }) do
      assert.are.same({ true, "r-" .. id }, { db:state(id, now).done, db:state(id, now).result })
    end
    for _, id in ipairs({ "c", "d" }) do
      local s = db:state(id, now)
      assert.are.same({ false, nil, "available", 0, 1 }, { s.done, s.owner, s.status, s.attempt, s.fence })
    end
    for _, id in ipairs({ "e", "f" }) do assert.are.same({ "available", 0 }, { db:state(id, now).status, db:state(id, now).fence }) end
    db:close()
  end)

  it("runs every job once through batches claimed with the completions", function()
    local db, p = H.fresh("cmcn-pool-all")
    local ids = {}
    for i = 1, 50 do ids[i] = ("j%02d"):format(i) end
    db:enqueue_many(ids)
    db:close()
    local pool = require("lease.pool")
    local s = pool.run({ db = p, workers = 2, ttl = 30, poll = 0.01, batch = 4, completed = true,
      signals = false, handler = function(job) return "r-" .. job.id end })
    assert.are.same({ 50, 0 }, { s.done, #s.failed })
    for _, id in ipairs(ids) do assert.are.equal(1, s.completed[id], id) end
    db = lease.open(p)
    local c = db:counts(lease.now())
    assert.are.same({ 50, 50 }, { c.total, c.done })
    for _, id in ipairs(ids) do assert.are.equal(1, db:state(id).fence, id) end   -- claimed once
    db:close()
  end)
end)
