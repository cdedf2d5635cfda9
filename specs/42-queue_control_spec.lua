-- Queue control: db:pause / db:resume stop and restart claim_next on one
-- queue; db:limit caps the jobs of a queue held at once (concurrency) and
-- handed out per window (rate), enforced in the claim's own transaction
-- across handles, threads and processes; db:queues lists them.  The CLI's
-- pause, resume, limit and queues, and the pool waiting on a paused queue
-- (woken by its resume).
local H = require("helpers")
local T = require("thread_helpers")
local thread = T.thread
local lease = H.lease

local function fill(db, queue, n, prefix)
  for i = 1, n do db:enqueue((prefix or queue) .. i, { queue = queue }) end
end

-- The queue's settings and jobs, read through a new connection.
local function queue_state(p, queue)
  local h = lease.open(p)
  local out
  for _, q in ipairs(h:queues(0)) do if q.name == queue then out = q end end
  local snap = {}
  for _, j in ipairs(h:jobs({ queue = queue, now = 0 })) do
    snap[#snap + 1] = table.concat({ j.id, tostring(j.owner), tostring(j.fence), tostring(j["until"]) }, "|")
  end
  h:close()
  return out, snap
end

describe("pause and resume", function()
  local db, p
  before_each(function() db, p = H.fresh("pause") end)
  after_each(function() db:close() end)

  it("stops claim_next on the paused queue with 'paused' while other queues go on", function()
    fill(db, "a", 3)
    fill(db, "b", 2)
    assert.are.equal(true, db:pause("a"))
    assert.are.same({ nil, "paused" }, { H.two(db:claim_next("w", 1, 10, { queue = "a" })) })
    local list, why = db:claim_next("w", 1, 10, { queue = "a", n = 3 })
    assert.are.same({ {}, "paused" }, { list, why })
    assert.are.equal("b1", (db:claim_next("w", 1, 10, { queue = "b" })))
    -- nothing of a was touched
    assert.are.equal(3, db:counts(1, "a").available)
    assert.are.equal(true, db:resume("a"))
    assert.are.equal("a1", (db:claim_next("w", 1, 10, { queue = "a" })))
    -- an empty queue still says empty
    db:pause("b")
    db:resume("b")
    assert.are.equal("b2", (db:claim_next("w", 1, 10, { queue = "b" })))
    assert.are.same({ nil, "empty" }, { H.two(db:claim_next("w", 1, 10, { queue = "b" })) })
  end)

  it("lets leases already held renew, complete and fail on a paused queue", function()
    fill(db, "a", 3)
    local l = db:claim_next("w", 1, 10, { queue = "a", n = 3 })
    db:pause("a")
    assert.are.equal(true, db:renew(l[1].id, "w", l[1].fence, 2, 10))
    assert.are.equal(true, db:complete(l[1].id, "w", l[1].fence, 3, "r"))
    assert.are.equal("retryable", (db:fail(l[2].id, "w", l[2].fence, 3, "boom")))
    assert.are.equal(true, db:release(l[3].id, "w", l[3].fence))
    assert.are.same({ nil, "paused" }, { H.two(db:claim_next("w", 100, 10, { queue = "a" })) })
    -- complete_claim_next completes and reports the claim's refusal
    db:resume("a")
    local id, fence = db:claim_next("w", 200, 10, { queue = "a" })
    db:pause("a")
    local ok, why, nid, nwhy = db:complete_claim_next(id, "w", fence, 201, "r", 10, { queue = "a" })
    assert.are.same({ true, nil, nil, "paused" }, { ok, why, nid, nwhy })
  end)

  it("is seen at once by a second handle on the same database", function()
    fill(db, "a", 2)
    local other = lease.open(p)
    other:pause("a")
    assert.are.same({ nil, "paused" }, { H.two(db:claim_next("w", 1, 10, { queue = "a" })) })
    other:resume("a")
    assert.are.equal("a1", (db:claim_next("w", 1, 10, { queue = "a" })))
    other:close()
  end)
end)

-- A claimer of queue "u" in a native thread, until stop has a message:
-- kind 0 claim_next, 1 complete_claim_next, 2 the same on a handle that
-- records events, 3 complete_many_claim_next (each holding what it took,
-- completing it at its next call), with the thread's clock as now.
local function claimer(path, me, kind, ttl, stop)
  local L = require("lease")
  local h = L.open(path, { events = kind == 2 })
  local held, calls = {}, 0
  local opts = { queue = "u", n = 2 }
  while not stop:recv(0) do
    local now = L.now()
    calls = calls + 1
    if #held == 0 or kind == 0 then
      held = h:claim_next(me, now, ttl, opts)
    elseif kind == 3 then
      local items = {}
      for i, j in ipairs(held) do items[i] = { id = j.id, fence = j.fence, result = me } end
      local _, _, got = h:complete_many_claim_next(me, now, items, ttl, opts)
      held = got
    else
      local j = held[1]
      local ok, _, nid, nfence = h:complete_claim_next(j.id, me, j.fence, now, me, ttl, { queue = "u" })
      assert(ok, "complete_claim_next refused")
      held = nid and { { id = nid, fence = nfence } } or {}
    end
  end
  h:close()
  return calls
end

-- The ok claims of "u" in the ledger between a change of its settings
-- and the next (op: "pause", or "limit" for both), each an error: with
-- the change and the claims ordered, a claim that commits after the
-- change draws its seq after the change's.
local function claims_between(db, op)
  local bad, stopped, since = {}, false, 0
  repeat
    local page = db:events({ since_seq = since, limit = 10000 })
    for _, e in ipairs(page) do
      if e.queue == "u" and e.id == nil then
        if op == "limit" then stopped = not stopped else stopped = e.op == op end
      elseif stopped and e.op == "claim" and e.outcome == "ok" then
        bad[#bad + 1] = ("claim of %s (seq %d) after the %s"):format(e.id, e.seq, op)
      end
      since = e.seq
    end
  until #page < 10000
  return bad
end

-- Rounds of change (pause, or a concurrency limit below the leases held)
-- while 8 threads claim from "u" by every claim path, and undo: after
-- change returns, no claim of "u" commits until undo (its count of
-- available jobs stays as it is, and the ledger has no claim between the
-- change and the undo).  Returns the rounds' failures and how many jobs
-- were claimed between rounds.
local function claims_stopped(p, op, change, undo)
  local ttl, rounds, jobs = 1000, H.rounds(8, 12), 8000
  local db = lease.open(p, { events = true })
  local ids = {}
  for i = 1, jobs do ids[i] = "u" .. i end
  db:enqueue_many(ids, { queue = "u" })
  local stop = thread.channel()
  local ts = {}
  for w = 1, 8 do ts[w] = thread.spawn(claimer, p, "w" .. w, w % 4, ttl, stop) end
  local function available() return db:counts(lease.now(), "u").available end
  lease.sleep(0.1)
  local bad, moved = {}, 0
  for r = 1, rounds do
    local before = available()
    change(db)
    local a0 = available()
    moved = moved + (before - a0)
    lease.sleep(0.03)
    local a1 = available()
    undo(db)
    if a1 ~= a0 then bad[#bad + 1] = ("round %d: %d jobs claimed after it returned"):format(r, a0 - a1) end
    lease.sleep(0.02)
  end
  for _ = 1, #ts do stop:send(true) end
  for _, t in ipairs(ts) do
    local ok, err = t:join()
    assert(ok, err)
  end
  for _, b in ipairs(claims_between(db, op)) do bad[#bad + 1] = b end
  assert.is_true(available() > 0, "the queue ran dry")
  db:close()
  return bad, moved
end

describe("pause and limit while claims are in progress", function()
  local db, p
  before_each(function() db, p = H.fresh("atomic") end)
  after_each(function() db:close() end)

  it("no claim of a queue commits after pause returns, by any claim path, until resume", function()
    local bad, moved = claims_stopped(p, "pause", function(h) h:pause("u") end, function(h) h:resume("u") end)
    assert.are.same({}, bad)
    assert.is_true(moved > 0, "no job was claimed between the rounds")
  end)

  it("no claim commits past a concurrency limit after limit returns, by any claim path", function()
    -- another queue's limit keeps lease_jobs_live, which limit would
    -- otherwise build and drop each round
    db:limit("other", { concurrency = 5 })
    local bad, moved = claims_stopped(p, "limit", function(h) h:limit("u", { concurrency = 1 }) end,
      function(h) h:limit("u", {}) end)
    assert.are.same({}, bad)
    assert.is_true(moved > 0, "no job was claimed between the rounds")
  end)
end)

describe("queues(now)", function()
  local db
  before_each(function() db = H.fresh("queues") end)
  after_each(function() db:close() end)

  it("lists every queue with jobs or settings, with its settings and a count per status word", function()
    fill(db, "a", 3)
    db:enqueue("later", { queue = "b", run_at = 50 })
    db:limit("c", { concurrency = 2, rate = 5, per = 1.5 })
    db:pause("a")
    db:resume("a")
    db:pause("b")
    db:resume("a")
    fill(db, "a", 0)
    db:claim_next("w", 1, 10, { queue = "default" })   -- nothing there: no queue appears
    assert.are.same({
      { name = "a", paused = false, total = 3, available = 3, scheduled = 0, running = 0,
        retryable = 0, completed = 0, discarded = 0, cancelled = 0, waiting = 0 },
      { name = "b", paused = true, total = 1, available = 0, scheduled = 1, running = 0,
        retryable = 0, completed = 0, discarded = 0, cancelled = 0, waiting = 0 },
      { name = "c", paused = false, concurrency = 2, rate = 5, per = 1.5, total = 0, available = 0,
        scheduled = 0, running = 0, retryable = 0, completed = 0, discarded = 0, cancelled = 0,
        waiting = 0 },
    }, db:queues(1))
    local id, fence = db:claim_next("w", 1, 10, { queue = "a" })
    db:complete(id, "w", fence, 2, nil)
    db:claim_next("w", 2, 10, { queue = "a" })
    local a = db:queues(3)[1]
    assert.are.same({ 1, 1, 1 }, { a.available, a.running, a.completed })
    -- a queue whose settings are all removed and that has no jobs leaves the list
    db:limit("c", {})
    assert.are.same({ "a", "b" }, H.ids((function()
      local out = {}
      for i, q in ipairs(db:queues(3)) do out[i] = { id = q.name } end
      return out
    end)()))
  end)
end)

describe("a database older than queue control (schema version 3)", function()
  -- Layout 3 from its fixture, with two jobs another client wrote.
  local function v3(name)
    local p = H.path(name)
    local sql = H.read((os.getenv("LEASE_SOURCE_DIR") or ".") .. "/specs/fixtures/"
      .. ("%s_schema_v3.sql"):format(H.backend))
    H.sql(p, sql .. "\nINSERT INTO jobs(id) VALUES ('a'), ('b');")
    return p
  end

  it("is read by a read-only handle as having no queue paused or limited", function()
    local p = v3("control-ro-v3")
    local ro = lease.open(p, { readonly = true })
    assert.are.equal(3, ro:settings().schema_version)
    local q = ro:queues(1)
    assert.are.same({ "default", false, 2, 2 }, { q[1].name, q[1].paused, q[1].total, q[1].available })
    assert.is_nil(q[1].concurrency)
    ro:close()
  end)

  it("gets the settings' tables at a writable open, and pause works there", function()
    local p = v3("control-rw-v3")
    local db = lease.open(p)
    assert.are.equal(lease.SCHEMA_VERSION, db:settings().schema_version)
    db:pause("default")
    assert.are.same({ nil, "paused" }, { db:claim_next("w", 1, 10) })
    db:close()
  end)
end)

describe("limits", function()
  local db, p
  before_each(function() db, p = H.fresh("limit") end)
  after_each(function() db:close() end)

  it("concurrency: claim_next with n returns at most the room left, then 'limited'", function()
    fill(db, "q", 6)
    assert.are.equal(true, db:limit("q", { concurrency = 3 }))
    assert.are.equal(2, #db:claim_next("w", 1, 10, { queue = "q", n = 2 }))
    assert.are.same({ "q3" }, H.ids(db:claim_next("w", 1, 10, { queue = "q", n = 5 })))
    assert.are.same({ nil, "limited" }, { H.two(db:claim_next("w", 1, 10, { queue = "q" })) })
    local list, why = db:claim_next("w", 1, 10, { queue = "q", n = 4 })
    assert.are.same({ {}, "limited" }, { list, why })
    -- a completion frees its slot
    local s = db:state("q1")
    db:complete("q1", "w", s.fence, 2, nil)
    assert.are.equal("q4", (db:claim_next("w", 2, 10, { queue = "q" })))
    assert.are.same({ nil, "limited" }, { H.two(db:claim_next("w", 2, 10, { queue = "q" })) })
  end)

  it("concurrency: an expired lease frees its slot, at the boundary", function()
    fill(db, "q", 3)
    db:limit("q", { concurrency = 1 })
    assert.are.equal("q1", (db:claim_next("w", 0, 10, { queue = "q" })))
    assert.are.same({ nil, "limited" }, { H.two(db:claim_next("w", 9.999, 10, { queue = "q" })) })
    -- until = 10: at now 10 the lease has expired (until <= now)
    assert.are.equal("q1", (db:claim_next("w", 10, 10, { queue = "q" })))
  end)

  -- A job cancelled while a worker holds it keeps its slot until that
  -- lease ends: the worker may still be running it.  On PostgreSQL also
  -- without lease_jobs_live (a role that may not make it), where the count
  -- reads the queue's rows by their state.
  local modes = { "" }
  if H.backend == "pg" then modes[2] = " (without lease_jobs_live)" end
  for _, mode in ipairs(modes) do
    it("concurrency: a job cancelled while held keeps its slot until its lease ends" .. mode, function()
      fill(db, "q", 3)
      db:limit("q", { concurrency = 1 })
      if mode ~= "" then H.psql(p, "DROP INDEX lease_jobs_live") end
      assert.are.equal("q1", (db:claim_next("w", 0, 10, { queue = "q" })))
      assert.are.equal(true, db:cancel("q1", 1))
      assert.are.equal("cancelled", db:state("q1").status)
      assert.are.same({ nil, "limited" }, { H.two(db:claim_next("v", 2, 10, { queue = "q" })) })
      local list, why = db:claim_next("v", 9.999, 10, { queue = "q", n = 2 })
      assert.are.same({ {}, "limited" }, { list, why })
      -- the holder's writes are refused, and its lease ends at 10
      local s = db:state("q1")
      assert.are.same({ false, "cancelled" }, { H.two(db:complete("q1", "w", s.fence, 3, nil)) })
      assert.are.equal("q2", (db:claim_next("v", 10, 10, { queue = "q" })))
      -- a retry of the cancelled job ends its lease (owner nil) and frees
      -- the slot; the retried job is due after q3
      assert.are.equal(true, db:cancel("q2", 11))
      assert.are.equal(true, db:retry("q2", 12))
      assert.are.equal(nil, db:state("q2").owner)
      assert.are.equal("q3", (db:claim_next("v", 12, 10, { queue = "q" })))
      assert.are.same({ nil, "limited" }, { H.two(db:claim_next("v", 13, 10, { queue = "q" })) })
    end)
  end

  it("rate: at most rate jobs in any window of per seconds, over the caller's clock", function()
    fill(db, "r", 10)
    db:limit("r", { rate = 3, per = 10 })
    assert.are.equal(2, #db:claim_next("w", 100, 1, { queue = "r", n = 2 }))
    assert.are.equal(1, #db:claim_next("w", 105, 1, { queue = "r", n = 5 }))
    assert.are.same({ nil, "limited" }, { H.two(db:claim_next("w", 109.999, 1, { queue = "r" })) })
    -- the window is (now - per, now]: the claims at 100 leave it at 110
    assert.are.equal(2, #db:claim_next("w", 110, 1, { queue = "r", n = 5 }))
    assert.are.same({ nil, "limited" }, { H.two(db:claim_next("w", 114.9, 1, { queue = "r" })) })
    assert.are.equal(1, #db:claim_next("w", 115, 1, { queue = "r", n = 5 }))
    -- {} removes the limits: every job not held at once (4 never claimed, 5 expired)
    assert.are.equal(true, db:limit("r", {}))
    assert.are.equal(9, #db:claim_next("w", 115, 1, { queue = "r", n = 10 }))
  end)

  it("rate: holds whatever order the claimers' nows commit in", function()
    -- Claimers read now before they wait for the write lock, so a claim with
    -- a later now can commit first.  Rate 2 per 10; a claim's time is its
    -- now, or the latest claim recorded less per when that is later, and it
    -- counts the claims within per of that time on either side.
    fill(db, "s", 8)
    db:limit("s", { rate = 2, per = 10 })
    local a, b = db, lease.open(p)
    -- the claims recorded for the queue, tenths of the caller's unit
    local function ledger()
      local out = {}
      for line in H.sql(p, "SELECT CAST(at * 10 AS INTEGER) FROM lease_queue_claims"
        .. " WHERE queue = 's' ORDER BY at"):gmatch("[^\n]+") do
        out[#out + 1] = tonumber(line)
      end
      return out
    end
    local function claim(h, now, n) return h:claim_next("w", now, 1000, { queue = "s", n = n }) end
    assert.are.same({ "s1", "s2" }, H.ids(claim(a, 100, 5)))
    assert.are.same({ {}, "limited" }, { claim(b, 100, 5) })
    -- A at 110.5 commits before B at 109: (99, 109] already holds the two at 100
    assert.are.same({ "s3" }, H.ids(claim(a, 110.5, 1)))
    assert.are.same({ 1000, 1000, 1105 }, ledger())
    assert.are.same({ {}, "limited" }, { claim(b, 109, 5) })
    assert.are.same({ 1000, 1000, 1105 }, ledger())
    -- A at 112 takes one (110.5 and 112 in (102, 112]); B at 111 after it
    -- would make three in (102, 112]
    assert.are.same({ "s4" }, H.ids(claim(a, 112, 1)))
    assert.are.same({ {}, "limited" }, { claim(b, 111, 5) })
    -- later claims prune those no claim counts any more: at or before 140 - 20
    assert.are.same({ "s5" }, H.ids(claim(a, 135, 1)))
    assert.are.same({ "s6" }, H.ids(claim(a, 140, 1)))
    assert.are.same({ 1350, 1400 }, ledger())
    -- B's clock, more than a window behind, is moved up to 140 - 10 = 130:
    -- (120, 140) holds 135 alone, so one more, recorded at 130
    assert.are.same({ "s7" }, H.ids(claim(b, 109, 5)))
    assert.are.same({ 1300, 1350, 1400 }, ledger())
    assert.are.same({ {}, "limited" }, { claim(b, 109, 5) })
    assert.are.same({ {}, "limited" }, { claim(a, 139.9, 5) })
    -- (140, 160) holds none: 150 has room for two and takes the last job,
    -- pruning 130 (at or before 150 - 20)
    assert.are.same({ "s8" }, H.ids(claim(a, 150, 5)))
    assert.are.same({ 1350, 1400, 1500 }, ledger())
    local c = db:counts(150, "s")
    assert.are.same({ 8, 0 }, { c.total, c.available })
    b:close()
  end)

  it("each call replaces the queue's limits, and pause wins over room", function()
    fill(db, "q", 5)
    db:limit("q", { concurrency = 1 })
    db:limit("q", { rate = 2, per = 60 })
    assert.are.equal(2, #db:claim_next("w", 1, 10, { queue = "q", n = 5 }))
    db:limit("q", { concurrency = 5 })
    db:pause("q")
    assert.are.same({ nil, "paused" }, { H.two(db:claim_next("w", 1, 10, { queue = "q" })) })
    db:resume("q")
    local q = queue_state(p, "q")
    assert.are.same({ 5, nil, nil, false }, { q.concurrency, q.rate, q.per, q.paused })
    assert.are.equal(3, #db:claim_next("w", 1, 10, { queue = "q", n = 5 }))
  end)

  it("refuses bad input by name and changes nothing", function()
    fill(db, "q", 2)
    db:limit("q", { concurrency = 2 })
    local before_q, before_jobs = queue_state(p, "q")
    local cases = {
      { "limit", "q", { concurrency = 0 }, "limits.concurrency must be an integer >= 1" },
      { "limit", "q", { concurrency = -1 }, "limits.concurrency must be an integer >= 1" },
      { "limit", "q", { concurrency = 1.5 }, "limits.concurrency must be an integer" },
      { "limit", "q", { rate = 3 }, "limits.rate needs limits.per" },
      { "limit", "q", { per = 3 }, "limits.per needs limits.rate" },
      { "limit", "q", { rate = 3, per = 0 / 0 }, "limits.per must be a finite number of seconds > 0, got" },
      { "limit", "q", { rate = 3, per = 1 / 0 }, "limits.per must be a finite number of seconds > 0, got" },
      { "limit", "q", { rate = 3, per = 0 }, "limits.per must be a finite number of seconds > 0, got 0" },
      { "limit", "q", { rate = 3, per = -1 }, "limits.per must be a finite number of seconds > 0, got -1" },
      { "limit", "q", { rate = 0, per = 1 }, "limits.rate must be an integer >= 1" },
      { "limit", "q", { concurency = 3 }, "limits has an unknown key 'concurency'" },
      { "limit", "q", nil, "bad argument #3 to 'limit' (limits must be a table" },
      { "limit", "", {}, "bad argument #2 to 'limit' (queue must be a non-empty string" },
      { "pause", "", nil, "bad argument #2 to 'pause' (queue must be a non-empty string" },
      { "resume", 5, nil, "bad argument #2 to 'resume' (queue must be a non-empty string" },
      { "pause", ("x"):rep(256), nil, "queue must be at most 255 bytes" },
      { "queues", 0 / 0, nil, "bad argument #2 to 'queues' (now must be a number, got nan)" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(db[c[1]], db, c[2], c[3])
      assert.is_false(ok, c[4])
      assert.is_truthy(tostring(err):find(c[4], 1, true), tostring(err) .. " / " .. c[4])
    end
    local after_q, after_jobs = queue_state(p, "q")
    assert.are.same(before_q, after_q)
    assert.are.same(before_jobs, after_jobs)
    assert.are.same({ "q" }, (function()
      local out = {}
      for i, q in ipairs(db:queues(0)) do out[i] = q.name end
      return out
    end)())
  end)

  it("concurrency holds exactly across native threads in repeated rounds", function()
    local limit, workers, jobs = 3, 6, H.rounds(240, 60)
    fill(db, "c", jobs, "c-")
    db:limit("c", { concurrency = limit })
    local function worker(path, me, start)
      local L = require("lease")
      local h = L.open(path)
      start:wait()
      local took, worst, refusals = 0, 0, 0
      local idle = 0
      while idle < 200 do
        local list, why = h:claim_next(me, L.now(), 60, { queue = "c", n = 2 })
        if #list == 0 then
          if why == "limited" then refusals = refusals + 1 end
          idle = why == "empty" and idle + 1 or 0
          if why == "empty" and h:counts(L.now(), "c").available == 0 then break end
          L.sleep(0.001)
        else
          -- inside the round, with the jobs held: never more than the limit live
          local running = h:counts(L.now(), "c").running
          if running > worst then worst = running end
          took = took + #list
          L.sleep(0.003)   -- held a while, so that the other workers meet the limit
          for _, j in ipairs(list) do h:complete(j.id, me, j.fence, L.now(), me) end
        end
      end
      h:close()
      return took, worst, refusals
    end
    local start = thread.barrier(workers)
    local ts = {}
    for i = 1, workers do ts[i] = thread.spawn(worker, p, "w" .. i, start) end
    local total, worst, refusals = 0, 0, 0
    for _, t in ipairs(ts) do
      local ok, took, w, r = t:join()
      assert(ok, took)
      total, worst, refusals = total + took, math.max(worst, w), refusals + r
    end
    assert.are.equal(jobs, total)
    assert.is_true(worst <= limit, "saw " .. worst .. " live leases")
    -- the workers met the limit: a claim was refused, or the jobs held reached it
    assert.is_true(refusals > 0 or worst == limit, "the limit never refused a claim nor was reached")
    assert.are.equal(jobs, db:counts(lease.now(), "c").completed)
  end)

  it("concurrency holds exactly across threads that complete and claim in one call", function()
    -- complete_many_claim_next: each call stores the last batch's results
    -- and claims the next in one transaction
    local limit, workers, jobs = 3, 6, H.rounds(240, 60)
    fill(db, "m", jobs, "m-")
    db:limit("m", { concurrency = limit })
    local function worker(path, me, start)
      local L = require("lease")
      local h = L.open(path)
      start:wait()
      local took, worst, idle, held = 0, 0, 0, {}
      while idle < 200 do
        local _, _, list, why = h:complete_many_claim_next(me, L.now(), held, 60, { queue = "m", n = 2 })
        held = {}
        if #list == 0 then
          idle = why == "empty" and idle + 1 or 0
          if why == "empty" and h:counts(L.now(), "m").available == 0 then break end
          L.sleep(0.001)
        else
          local running = h:counts(L.now(), "m").running
          if running > worst then worst = running end
          took = took + #list
          for k, j in ipairs(list) do held[k] = { id = j.id, fence = j.fence, result = me } end
        end
      end
      h:close()
      return took, worst
    end
    local start = thread.barrier(workers)
    local ts = {}
    for i = 1, workers do ts[i] = thread.spawn(worker, p, "w" .. i, start) end
    local total, worst = 0, 0
    for _, t in ipairs(ts) do
      local ok, took, w = t:join()
      assert(ok, took)
      total, worst = total + took, math.max(worst, w)
    end
    assert.are.equal(jobs, total)
    assert.is_true(worst <= limit, "saw " .. worst .. " live leases")
    assert.are.equal(jobs, db:counts(lease.now(), "m").completed)
  end)

  it("concurrency holds exactly across processes", function()
    local limit, procs, jobs = 2, 4, H.rounds(80, 40)
    fill(db, "p", jobs, "p-")
    db:limit("p", { concurrency = limit })
    local build = os.getenv("LEASE_BUILD_DIR") or "build"
    local script = H.file("proc") .. ".lua"
    H.write(script, "package.cpath = " .. string.format("%q", build .. "/?.so;") .. " .. package.cpath\n" .. [[
local L = require("lease")
local h = L.open(arg[1])
local me, took, worst = arg[2], 0, 0
local deadline = L.now() + 60
while L.now() < deadline do
  local list, why = h:claim_next(me, L.now(), 60, { queue = "p", n = 2 })
  if #list == 0 then
    if why == "empty" and h:counts(L.now(), "p").available == 0 then break end
    L.sleep(0.002)
  else
    local running = h:counts(L.now(), "p").running
    if running > worst then worst = running end
    took = took + #list
    L.sleep(0.001)
    for _, j in ipairs(list) do h:complete(j.id, me, j.fence, L.now(), me) end
  end
end
io.write(took, " ", worst, "\n")
]])
    local cmd = {}
    for i = 1, procs do
      cmd[#cmd + 1] = T.lua() .. " " .. H.sh(script) .. " " .. H.sh(p) .. " proc" .. i
    end
    local out = H.capture("timeout 120 sh -c " .. H.sh(table.concat(cmd, " & ") .. " & wait"))
    local total, worst, lines = 0, 0, 0
    for took, w in out:gmatch("(%d+) (%d+)") do
      total, worst, lines = total + tonumber(took), math.max(worst, tonumber(w)), lines + 1
    end
    os.remove(script)
    assert.are.equal(procs, lines, out)
    assert.are.equal(jobs, total)
    assert.is_true(worst <= limit, "saw " .. worst .. " live leases")
  end)
end)

describe("the CLI's pause, resume, limit and queues", function()
  it("pauses, resumes, limits and lists queues; bad flags are usage errors that change nothing", function()
    local db, p = H.fresh("cli-control")
    fill(db, "mail", 2)
    db:close()
    local status, out = H.host("pause " .. H.sh(p) .. " mail")
    assert.are.same({ 0, "paused mail\n" }, { status, out })
    status, out = H.host("limit " .. H.sh(p) .. " mail --concurrency 3 --rate 10 --per 60")
    assert.are.same({ 0, "limited mail: concurrency 3, rate 10 per 60 s\n" }, { status, out })
    status, out = H.host("queues " .. H.sh(p) .. " --json")
    assert.are.equal(0, status)
    local q = require("lease.json").decode(out)[1]
    assert.are.same({ "mail", true, 3, 10, 60, 2 }, { q.name, q.paused, q.concurrency, q.rate, q.per, q.available })
    status, out = H.host("queues " .. H.sh(p))
    assert.are.equal(0, status)
    assert.is_truthy(out:find("mail%s+paused%s+concurrency 3, rate 10/60s%s+2"), out)
    for _, bad in ipairs({ "limit " .. H.sh(p) .. " mail --rate 3", "limit " .. H.sh(p) .. " mail --concurrency 0",
                           "limit " .. H.sh(p) .. " mail", "limit " .. H.sh(p) .. " mail --clear --concurrency 2",
                           "pause " .. H.sh(p), "pause " .. H.sh(p) .. " ''" }) do
      status = H.host(bad)
      assert.are.equal(2, status, bad)
    end
    -- --per: seconds or a duration, > 0; 0 and -1 get the same message
    for _, per in ipairs({ "0", "-1", "nan", "inf", "1x", "" }) do
      local st, o, e = H.host("limit " .. H.sh(p) .. " mail --rate 5 --per " .. H.sh(per))
      assert.are.same({ 2, "" }, { st, o }, per)
      assert.is_truthy(e:find("--per needs a number of seconds > 0 or a duration (30s, 2m, 1h), got '"
        .. per .. "'", 1, true), e)
    end
    out = select(2, H.host("queues " .. H.sh(p) .. " --json"))
    q = require("lease.json").decode(out)[1]
    assert.are.same({ true, 3, 10, 60 }, { q.paused, q.concurrency, q.rate, q.per })
    -- a duration; the limits not named are cleared
    assert.are.same({ 0, "limited mail: rate 7 per 90 s\n", "" },
      { H.host("limit " .. H.sh(p) .. " mail --rate 7 --per 1m30s") })
    q = require("lease.json").decode(select(2, H.host("queues " .. H.sh(p) .. " --json")))[1]
    assert.are.same({ true, nil, 7, 90 }, { q.paused, q.concurrency, q.rate, q.per })
    assert.are.same({ 0, "resumed mail\n", "" }, { H.host("resume " .. H.sh(p) .. " mail") })
    assert.are.same({ 0, "cleared the limits of mail\n", "" }, { H.host("limit " .. H.sh(p) .. " mail --clear") })
    q = require("lease.json").decode(select(2, H.host("queues " .. H.sh(p) .. " --json")))[1]
    assert.are.same({ false, nil, nil }, { q.paused, q.concurrency, q.rate })
  end)
end)

describe("lease.pool on a paused queue", function()
  it("waits like on an empty queue, then goes on after resume", function()
    local db, p = H.fresh("pool-pause")
    fill(db, "default", 4, "j")
    db:pause("default")
    local worker = H.file("worker") .. ".lua"
    H.write(worker, "return function(job) return 'ok' end\n")
    local function run_pool(path, w)
      local pool = require("lease.pool")
      return pool.run({ db = path, worker = w, workers = 2, poll = 0.02, ttl = 10 }).done
    end
    local t = thread.spawn(run_pool, p, worker)
    lease.sleep(0.3)
    -- nothing was handed out while paused, and the pool is still waiting
    assert.are.equal(4, db:counts(lease.now()).available)
    db:resume("default")
    local ok, done = t:join()
    assert.are.same({ true, 4 }, { ok, done })
    assert.are.equal(4, db:counts(lease.now()).completed)
    db:close()
  end)

  -- A draining pool of two workers (poll 30 s) on a paused queue of two
  -- jobs, in a thread, once its workers wait: the database, its path and
  -- the thread, whose join gives the jobs done and the time it ended.
  local function paused_pool(name)
    local db, p = H.fresh(name)
    fill(db, "default", 2, "j")
    db:pause("default")
    local function run_pool(path)
      local pool = require("lease.pool")
      local s = pool.run({ db = path, workers = 2, poll = 30, ttl = 10, signals = false,
                           handler = function() return "ok" end })
      return s.done, require("lease").now()
    end
    local t = thread.spawn(run_pool, p)
    lease.sleep(0.5)
    assert.are.equal(2, db:counts(lease.now()).available)
    return db, p, t
  end

  it("ends a draining pool once its paused queue is empty, not a poll later", function()
    -- a cancel wakes no waiter: the worker waiting on the paused queue
    -- must see the queue drained by itself
    local db, _, t = paused_pool("pool-pause-cancel")
    local cancelled = lease.now()
    assert.is_true(db:cancel("j1", cancelled))
    assert.is_true(db:cancel("j2", cancelled))
    local ok, done, ended = t:join()
    assert.are.same({ true, 0 }, { ok, done })
    assert.is_true(ended - cancelled < 10, "the pool ended " .. (ended - cancelled) .. " s after the cancels")
    local c = db:counts(lease.now())
    assert.are.same({ 0, 2 }, { c.available, c.cancelled })
    db:close()
  end)

  it("starts the jobs at the resume, not a poll later", function()
    local db, _, t = paused_pool("pool-pause-wake")
    local resumed = lease.now()
    db:resume("default")
    local ok, done, ended = t:join()
    assert.are.same({ true, 2 }, { ok, done })
    assert.is_true(ended - resumed < 10, "the pool ended " .. (ended - resumed) .. " s after the resume")
    assert.are.equal(2, db:counts(lease.now()).completed)
    db:close()
  end)
end)
