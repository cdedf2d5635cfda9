-- lease.pool: native worker threads running claim_next -> handler ->
-- complete, with heartbeats, releases on handler errors, and stale
-- completions refused.  Plus: concurrent claim_next from many threads never
-- hands one job to two live owners.
local H = require("helpers")
local lease = H.lease
local pool = require("lease.pool")
local thread = require("lease.thread")

-- A database with n jobs "j1".."jn"; returns path, ids.
local function queue(n)
  local db, p = H.fresh("pool")
  local ids = {}
  for i = 1, n do ids[i] = "j" .. i end
  db:enqueue_many(ids)
  db:close()
  return p, ids
end

-- The handler of most specs: the result names the generation that made it.
local function tag(job)
  return job.id .. "@" .. job.fence
end

describe("lease.pool", function()
  it("runs every job once and stores each handler's result", function()
    local p, ids = queue(40)
    local s = pool.run({ db = p, handler = tag, workers = 4, ttl = 30, completed = true })
    assert.are.same({}, s.failed)
    assert.are.equal(40, s.done)
    assert.are.equal(0, s.refused)
    assert.are.equal(1, s.max_fence)
    assert.are.equal(4, s.workers)
    local db = lease.open(p)
    finally(function() db:close() end)
    for _, id in ipairs(ids) do
      assert.are.equal(1, s.completed[id])
      local st = db:state(id)
      assert.is_true(st.done)
      assert.are.equal(id .. "@1", st.result)
    end
    local c = db:counts(lease.now())
    assert.are.same({ 40, 40, 0, 0 }, { c.total, c.completed, c.available, c.running })
  end)

  it("records no ids unless asked; the job gives owner, ttl, args, claimed_at and its methods", function()
    local p = queue(6)
    -- backoff 0: a handler whose assert fails is retried at once, so the
    -- run ends (the job discarded) in a moment, not after minutes of backoff
    local s = pool.run({ db = p, workers = 2, ttl = 30, args = { k = "v" }, signals = false,
      backoff = function() return 0 end,
      handler = function(job)
        local lease_ = require("lease")
        assert(type(job.heartbeat) == "function" and job.heartbeat == job.heartbeat)
        assert(type(job.with_lease) == "function")
        assert(job.ttl == 30 and job.args.k == "v" and job.owner:match("%-?%d+$"))
        assert(job.claimed_at <= lease_.now() and job.claimed_at > lease_.now() - 30)
        assert(job.heartbeat() == true)   -- within a third of the ttl: no write
        assert(job.no_such_field == nil)
        return job.owner
      end })
    assert.are.same({}, s.failed)
    assert.are.equal(6, s.done)
    assert.are.equal(0, s.renewed)
    assert.is_nil(s.completed)
    local db = lease.open(p)
    finally(function() db:close() end)
    for i = 1, 6 do
      local st = db:state("j" .. i)
      assert.are.equal(st.owner, st.result)
    end
  end)

  it("refuses stalled workers' late completions; the takeover's result stands", function()
    local p, ids = queue(12)
    local stall = { j2 = true, j5 = true, j9 = true }
    local s = pool.run({
      -- ttl 1: a job that does not stall completes within it even when a
      -- loaded host pauses the process for most of a second
      db = p, workers = 4, ttl = 1, poll = 0.01, args = stall, completed = true,
      handler = function(job)
        if job.args[job.id] and job.fence == 1 then
          require("lease").sleep(job.ttl * 2)   -- stuck, no heartbeat
        end
        return job.id .. "@" .. job.fence
      end,
    })
    assert.are.same({}, s.failed)
    assert.are.equal(12, s.done)
    assert.are.equal(3, s.refused)
    assert.are.equal(2, s.max_fence)
    -- each refusal comes with the engine's reason: the takeover has
    -- completed the job (done), or holds it still (not_owner)
    local n = 0
    for k, c in pairs(s.refusals) do
      assert.truthy(k == "complete done" or k == "complete not_owner", k)
      n = n + c
    end
    assert.are.equal(3, n)
    assert.truthy(pool.format(s):find("\nrefusals           complete [a-z_]+ %d"), pool.format(s))
    local db = lease.open(p)
    finally(function() db:close() end)
    for _, id in ipairs(ids) do
      local st = db:state(id)
      assert.are.equal(1, s.completed[id], id)
      assert.is_true(st.done)
      -- the stalled generation (fence 1) never stored its result
      local want = stall[id] and (id .. "@2") or (id .. "@1")
      assert.are.equal(want, st.result)
      assert.are.equal(stall[id] and 2 or 1, st.fence)
    end
  end)

  it("keeps a lease alive through heartbeats: no takeover, no refusal", function()
    -- Two ttls of work: without renewals both leases would lapse halfway.
    -- A renewal falls due every ttl/3, so the lease survives any pause of
    -- the machine (a slow fsync, a descheduled thread) under 2/3 of the
    -- ttl; the ttl is long enough for a shared, loaded CI host.
    local p = queue(2)
    local s = pool.run({
      db = p, workers = 2, ttl = 1.5, poll = 0.01,
      handler = function(job)
        local l = require("lease")
        local t0 = l.now()
        while l.now() - t0 < 3 do
          assert(job.heartbeat())
          l.sleep(0.02)
        end
        return "ok@" .. job.fence
      end,
    })
    assert.are.same({}, s.failed)
    assert.are.equal(2, s.done)
    assert.are.same({}, s.refusals)
    assert.are.equal(0, s.refused)
    assert.are.equal(0, s.renew_refused)
    assert.is_true(s.renewed >= 6, "renewed " .. s.renewed)
    assert.are.equal(1, s.max_fence)
    assert.are.equal("ok@1", lease.state(p, "j1").result)
  end)

  it("fails a job whose handler raised through db:fail; it runs again after the backoff", function()
    local p = queue(3)
    local s = pool.run({
      db = p, workers = 2, ttl = 30, poll = 0.01, backoff = function() return 0 end,
      handler = function(job)
        if job.id == "j2" and job.fence == 1 then error("flaky") end
        return job.id .. "@" .. job.fence
      end,
    })
    assert.are.equal(1, s.handler_errors)
    assert.are.equal(1, s.retried)
    assert.are.equal(3, s.done)
    assert.truthy(s.errors[1]:find("j2: .*flaky"), s.errors[1])
    local st = lease.state(p, "j2")
    assert.are.equal("j2@2", st.result)
    assert.truthy(st.errors[1].message:find("flaky", 1, true), st.errors[1].message)
  end)

  it("a job whose every attempt outlives its lease ends discarded, never completed", function()
    local db, p = H.fresh("pool")
    db:enqueue("old", { max_attempts = 1 })   -- discarded before the pool runs: not in its summary
    assert.are.equal("old", (db:claim_next("w0", lease.now() - 10, 1)))
    assert.is_nil((db:claim_next("w0", lease.now(), 1)))
    db:enqueue("j1", { max_attempts = 2 })
    db:enqueue("j2")
    db:close()
    local s = pool.run({
      db = p, workers = 2, ttl = 1, poll = 0.01,
      handler = function(job)
        if job.id == "j1" then require("lease").sleep(2.5) end   -- never heartbeats
        return "fine"
      end,
    })
    assert.are.equal(2, s.refused)
    for k in pairs(s.refusals) do assert.truthy(k:find("^complete %a"), k) end
    -- the summary counts the discard as the queue does, though no handler failed
    assert.are.equal(0, s.handler_errors)
    assert.are.equal(2, s.counts.discarded)   -- "old" and j1
    assert.are.equal(1, s.discarded)
    assert.are.equal(1, s.lease_expired)
    assert.are.same({ "j1" }, s.discarded_ids)
    local text = pool.format(s)
    assert.truthy(text:find("(retried after backoff: 0, discarded: 0)", 1, true), text)
    assert.truthy(text:find("\njobs discarded     1 (1 when their last lease expired)", 1, true), text)
    assert.truthy(text:find("\ndiscarded          j1", 1, true), text)
    local st = lease.state(p, "j1")
    assert.are.equal("discarded", st.status)
    assert.is_nil(st.result)
    assert.are.equal("fine", lease.state(p, "j2").result)
  end)

  it("is found with only package.cpath set, in a stock interpreter", function()
    local T = require("thread_helpers")
    local ok, code, out, err = T.run([[
      local pool = require("lease.pool")
      local cli = require("lease.cli")
      print(type(pool.run), type(cli.main))
    ]])
    assert.are.equal("", err)
    assert.is_true(ok, tostring(code))
    assert.are.equal("function\tfunction\n", out)
  end)

  it("treats a non-string result as a handler error", function()
    local p = queue(1)
    local s = pool.run({ db = p, workers = 1, ttl = 30, backoff = function() return 100 end,
                         drain_wait = 0, handler = function() return 42 end })
    assert.are.equal(1, s.handler_errors)
    assert.truthy(s.errors[1]:find("handler returned a number", 1, true), s.errors[1])
  end)

  it("loads a worker file once per thread, keeping its locals", function()
    local p = queue(10)
    local f = H.file("worker") .. ".lua"
    H.write(f, [[
      local count = 0                     -- one per worker thread
      return function(job)
        count = count + 1
        return job.owner .. "#" .. count
      end
    ]])
    local s = pool.run({ db = p, worker = f, workers = 2, ttl = 30 })
    assert.are.same({}, s.failed)
    assert.are.equal(10, s.done)
    local seen = {}
    local db = lease.open(p)
    finally(function() db:close() end)
    for i = 1, 10 do
      local r = db:state("j" .. i).result
      assert.truthy(r:match("^.+:%d+:%d#%d+$"), r)
      assert.is_nil(seen[r])
      seen[r] = true
    end
  end)

  it("reports a worker file that does not return a function", function()
    local p = queue(1)
    local f = H.file("worker") .. ".lua"
    H.write(f, "return 5")
    local s = pool.run({ db = p, worker = f, workers = 2, ttl = 30 })
    assert.are.equal(2, #s.failed)
    -- the file's error alone: no frame of the pool's
    assert.are.same({ "worker 1: " .. f .. " must return a handler function, returned number",
                      "worker 2: " .. f .. " must return a handler function, returned number" }, s.failed)
    assert.is_false(lease.state(p, "j1").done)
    -- the summary says it once, for both workers
    local text = pool.format(s)
    assert.truthy(text:find("\nworker failed      workers 1, 2: " .. f .. " must return", 1, true), text)
    assert.is_nil(text:find("worker failed      worker 2", 1, true), text)
  end)

  it("pool.format says that the counts leave out the workers cut off at shutdown", function()
    local text = pool.format({ workers = 2, queue = "q", done = 5, handler_errors = 0, retried = 0,
      discarded = 0, refused = 0, renew_refused = 0, renewed = 0, max_fence = 1, wall = 1, rate = 5,
      discarded_ids = {}, errors = {}, failed = {}, interrupted = "TERM", shutdown = 1, unfinished = 1 })
    assert.truthy(text:find("jobs done          5 (and those of the 1 workers cut off, which this summary "
      .. "cannot count)", 1, true), text)
    assert.truthy(text:find("1 workers still in a handler or hook were cut off", 1, true), text)
    text = pool.format({ workers = 2, queue = "q", done = 5, handler_errors = 0, retried = 0,
      discarded = 0, refused = 0, renew_refused = 0, renewed = 0, max_fence = 1, wall = 1, rate = 5,
      discarded_ids = {}, errors = {}, failed = {}, unfinished = 0 })
    assert.truthy(text:find("jobs done          5\n", 1, true), text)
  end)

  it("pool.format puts a failure's lines under each other, and one line for workers failing alike", function()
    local text = pool.format({ workers = 4, queue = "q", done = 0, handler_errors = 0, retried = 0,
      discarded = 0, refused = 0, renew_refused = 0, renewed = 0, max_fence = 0, wall = 1, rate = 0,
      discarded_ids = {}, errors = {},
      failed = { "worker 1: boom\nstack traceback:\n\tf.lua:3: in main chunk", "worker 2: other",
                 "worker 3: other", "counts at the end: gone" } })
    local want = table.concat({ "worker failed      worker 1: boom", "                   stack traceback:",
      "                     f.lua:3: in main chunk", "worker failed      workers 2, 3: other",
      "worker failed      counts at the end: gone" }, "\n")
    assert.are.equal(want, text:sub(-#want))
  end)

  it("writes a progress line only when asked", function()
    local p = queue(5)
    local out = io.tmpfile()
    local s = pool.run({ db = p, handler = tag, workers = 2, ttl = 30, progress = true, out = out })
    out:seek("set")
    local text = out:read("*a")
    out:close()
    assert.are.equal(5, s.done)
    assert.truthy(text:find("\r5/5 done", 1, true), text)
    assert.truthy(text:find("0 refused", 1, true), text)
    -- never more done than there are jobs, and never going backwards
    local last = 0
    for d, t in text:gmatch("\r(%d+)/(%d+) done") do
      assert.are.equal("5", t)
      assert.is_true(tonumber(d) <= 5 and tonumber(d) >= last, text)
      last = tonumber(d)
    end
  end)

  it("refuses bad options before starting anything", function()
    local p = queue(1)
    for _, c in ipairs({
      { { db = p }, "give exactly one of worker and handler" },
      { { db = p, handler = tag, worker = "x.lua" }, "give exactly one of worker and handler" },
      { { db = p, handler = tag, workers = 0 }, "workers must be an integer from 1 to 256" },
      { { db = p, handler = tag, workers = 1.5 }, "workers must be an integer from 1 to 256" },
      { { db = p, handler = tag, ttl = 0 }, "ttl must be a finite number of seconds > 0" },
      { { db = p, handler = tag, bogus = 1 }, "unknown option 'bogus'" },
      { { handler = tag }, "db must be a non-empty string" },
      { { db = p, handler = "f" }, "handler must be a function or a table {handler = fn, on_start = fn, ...}: it is a string" },
      { { db = p, handler = tag, attempts = 3 }, "unknown option 'attempts'" },
      { { db = p, handler = tag, out = {} }, "out must be a file or have a write method, got table" },
      { { db = p, handler = tag, out = 5 }, "out must be a file or have a write method, got number" },
      { { db = p, handler = tag, out = "f" }, "out must be a file or have a write method, got string" },
    }) do
      local err = H.error_of(pool.run, c[1])
      assert.truthy(err:find("bad argument #1 to 'lease.pool.run' (" .. c[2], 1, true), err)
    end
    local up = 1
    local err = H.error_of(pool.run, { db = p, handler = function() return tostring(up) end })
    assert.truthy(err:find("bad argument #1 to 'lease.pool.run' (handler must have no upvalue but _ENV", 1, true), err)
    assert.truthy(err:find("has 'up'", 1, true), err)
    -- the error points at the caller, not into the library
    err = H.error_of(function() pool.run({ db = p }) end)
    assert.truthy(err:find("^specs/18%-pool_spec%.lua:%d+: bad argument"), err)
    assert.are.equal(0, lease.state(p, "j1").fence)
  end)

  it("raises a database failure before starting threads", function()
    local err = H.error_of(pool.run, { db = H.dir() .. "/no/such.db", handler = tag })
    assert.truthy(err:find("[cantopen]", 1, true), err)
  end)

  it("refuses bad open options before starting threads", function()
    local p = queue(1)
    local err = H.error_of(pool.run, { db = p, handler = tag, open = { group_commit = "yes" } })
    assert.truthy(err:find("bad argument #1 to 'lease.pool.run' (open: group_commit must be a boolean",
      1, true), err)
    -- named as pool.run's option, at the caller
    err = H.error_of(function() pool.run({ db = p, handler = tag, open = { synchronus = "full" } }) end)
    assert.truthy(err:find("^specs/18%-pool_spec%.lua:%d+: bad argument #1 to 'lease%.pool%.run' "
      .. "%(open: unknown option 'synchronus'%)$"), err)
    assert.are.equal(0, lease.state(p, "j1").fence)
  end)

  it("writes its progress to any out with a write method, and goes on when out raises", function()
    local p = queue(4)
    local got = {}
    local out = setmetatable({}, { __index = { write = function(_, text) got[#got + 1] = text end } })
    local s = pool.run({ db = p, handler = tag, workers = 2, ttl = 30, progress = true, out = out })
    assert.are.equal(4, s.done)
    assert.truthy(table.concat(got):find("\r4/4 done", 1, true), table.concat(got))
    p = queue(4)
    local raising = { write = function() error("out is gone") end, flush = function() end }
    s = pool.run({ db = p, handler = tag, workers = 2, ttl = 30, progress = true, out = raising })
    assert.are.equal(4, s.done)
    assert.are.same({}, s.failed)
    assert.are.equal(4, lease.open(p):counts(0).completed)
  end)
end)

describe("claim_next from many threads", function()
  it("never hands one job to two live owners", function()
    local p = queue(300)
    local start = thread.barrier(6)
    local ts = {}
    for i = 1, 6 do
      ts[i] = thread.spawn(function(path, me, b)
        local l = require("lease")
        local db = l.open(path)   -- closed by __gc when the thread's state closes
        local got = {}
        b:wait()
        while true do
          local batch = db:claim_next(me, 100, 1000, 1 + #got % 3)
          if #batch == 0 then break end
          for _, j in ipairs(batch) do got[#got + 1] = j.id .. "=" .. j.fence end
        end
        return got
      end, p, "w" .. i, start)
    end
    local owner_of, total = {}, 0
    for i = 1, 6 do
      local ok, got = ts[i]:join()
      assert.is_true(ok, got)
      for _, g in ipairs(got) do
        local id, fence = g:match("^(.-)=(%d+)$")
        assert.is_nil(owner_of[id], id .. " handed to w" .. i .. " and " .. tostring(owner_of[id]))
        assert.are.equal("1", fence)
        owner_of[id] = "w" .. i
        total = total + 1
      end
    end
    assert.are.equal(300, total)
    local db = lease.open(p)
    finally(function() db:close() end)
    for id, w in pairs(owner_of) do assert.are.equal(w, db:state(id).owner) end
  end)

  it("hands an expired job to exactly one new owner per generation", function()
    local p = queue(50)
    local db = lease.open(p)
    finally(function() db:close() end)
    assert.are.equal(50, #db:claim_next("old", 0, 10, 50))
    local start = thread.barrier(5)
    local ts = {}
    for i = 1, 5 do
      ts[i] = thread.spawn(function(path, me, b)
        local d = require("lease").open(path)   -- closed by __gc when the thread's state closes
        local got = {}
        b:wait()
        repeat
          local id, fence = d:claim_next(me, 10, 10)
          if id then got[#got + 1] = id .. "=" .. fence end
        until not id
        return got
      end, p, "n" .. i, start)
    end
    local seen = 0
    local owners = {}
    for i = 1, 5 do
      local ok, got = ts[i]:join()
      assert.is_true(ok, got)
      for _, g in ipairs(got) do
        local id, fence = g:match("^(.-)=(%d+)$")
        assert.are.equal("2", fence)
        assert.is_nil(owners[id])
        owners[id] = "n" .. i
        seen = seen + 1
      end
    end
    assert.are.equal(50, seen)
    for id, w in pairs(owners) do
      assert.are.same({ false, "not_owner" }, { db:complete(id, "old", 1, 11, "late") })
      assert.are.equal(w, db:state(id).owner)
    end
  end)
end)
