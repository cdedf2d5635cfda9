-- Job timeouts: db:enqueue(id, {timeout = seconds}) stores a job's timeout
-- (db:state, claim_next hand it out); lease.pool stops a handler still
-- running that long after it started at its next Lua instruction and fails
-- the job with "timeout: ...", counted as an attempt (retried, then
-- discarded); the pool's `timeout` option serves jobs without one; a pool
-- never waits for a handler blocked inside C past its timeout plus
-- shutdown_grace.  Bad timeouts are refused with nothing stored.
local H = require("helpers")
local lease = H.lease
local pool = require("lease.pool")

-- A database with the jobs of `list` ({id, opts} pairs); returns its path.
local function queue(list)
  local db, p = H.fresh("timeout")
  for _, e in ipairs(list) do assert.is_true(db:enqueue(e[1], e[2])) end
  db:close()
  return p
end

-- A handler that spins in Lua (never calling into C for long) until
-- job.args.spin seconds passed, then returns "escaped": a timeout shorter
-- than that stops it first.  The bound keeps a broken timeout from hanging
-- the suite, as does the count of its runs per job in the worker's globals:
-- past job.args.runs (default 3) it returns "too many runs" at once, so a
-- job whose timeouts are not counted as attempts still ends.
local function spinner(job)
  local l = require("lease")
  _G.runs = _G.runs or {}
  _G.runs[job.id] = (_G.runs[job.id] or 0) + 1
  if _G.runs[job.id] > (job.args.runs or 3) then return "too many runs" end
  local stop, n = l.now() + job.args.spin, 0
  while l.now() < stop do
    for _ = 1, 1000 do n = n + 1 end
  end
  return "escaped"
end

-- The last error message kept with a job.
local function last_error(st)
  return st.errors[#st.errors] and st.errors[#st.errors].message
end

local MESSAGE = "timeout: handler ran longer than %g s"

describe("a job's timeout", function()
  it("is stored by enqueue and enqueue_many, shown by state, handed out by claim_next", function()
    local db = H.fresh("timeout-store")
    finally(function() db:close() end)
    assert.is_true(db:enqueue("a", { timeout = 0.25, priority = 1 }))
    assert.are.equal(2, db:enqueue_many({ "b", { id = "c", timeout = 90 } }, { timeout = 7 }))
    assert.is_true(db:enqueue("d", { priority = 2 }))
    assert.are.same({ 0.25, 7, 90 }, { db:state("a").timeout, db:state("b").timeout,
                                       db:state("c").timeout })
    assert.is_nil(db:state("d").timeout)
    local id, fence, job = db:claim_next("w", lease.now(), 10)
    assert.are.same({ "b", 1, 7 }, { id, fence, job.timeout })
    local jobs = db:claim_next("w", lease.now(), 10, { n = 3 })
    assert.are.same({ "c", "a", "d" }, H.ids(jobs))
    assert.are.same({ 90, 0.25 }, { jobs[1].timeout, jobs[2].timeout })
    assert.is_nil(jobs[3].timeout)
  end)

  it("that is not a finite number of seconds > 0 is refused, nothing stored", function()
    local db = H.fresh("timeout-bad")
    finally(function() db:close() end)
    for _, v in ipairs({ 0, -1, 0 / 0, math.huge, -math.huge, "1", true }) do
      local err = H.error_of(db.enqueue, db, "x", { timeout = v })
      assert.truthy(err:find("bad argument #3 to 'enqueue' (opts.timeout must be a finite number"
        .. " of seconds > 0, got ", 1, true), err)
      err = H.error_of(db.enqueue_many, db, { "y", { id = "z", timeout = v } })
      assert.truthy(err:find("bad argument #2 to 'enqueue_many' (ids[2].timeout must be a finite"
        .. " number of seconds > 0", 1, true), err)
      err = H.error_of(db.enqueue_many, db, { "y" }, { timeout = v })
      assert.truthy(err:find("bad argument #3 to 'enqueue_many' (opts.timeout", 1, true), err)
    end
    assert.is_nil(db:state("x"))
    assert.is_nil(db:state("y"))
    assert.are.equal(0, db:counts(lease.now()).total)
    for _, v in ipairs({ 0, -2, math.huge, 0 / 0 }) do
      local err = H.error_of(pool.run, { db = H.file(), handler = function() end, timeout = v })
      assert.truthy(err:find("bad argument #1 to 'lease.pool.run' (timeout must be a finite number"
        .. " of seconds > 0)", 1, true), err)
    end
    local err = H.error_of(pool.run, { db = H.file(), handler = function() end, timeout = "2s" })
    assert.truthy(err:find("timeout must be a number, got string", 1, true), err)
  end)

  it("stops a spinning handler, the job failed with timeout as an attempt: retried, then discarded", function()
    local p = queue({ { "spin", { timeout = 0.2, max_attempts = 2 } } })
    local t0 = lease.now()
    local s = pool.run({ db = p, workers = 1, ttl = 30, signals = false, drain_wait = 5,
                         args = { spin = 3 }, backoff = function() return 0 end, handler = spinner })
    local took = lease.now() - t0
    assert.is_true(took >= 0.4 and took < 3, "took " .. took)
    assert.are.same({}, s.failed)
    assert.are.same({ 0, 2, 2, 1, 1, 0 },
      { s.done, s.handler_errors, s.timed_out, s.retried, s.discarded, s.refused })
    assert.truthy(pool.format(s):find("2 timed out", 1, true))
    local db = lease.open(p)
    finally(function() db:close() end)
    local st = db:state("spin")
    assert.are.same({ "discarded", 2, 2 }, { st.status, st.attempt, #st.errors })
    for _, e in ipairs(st.errors) do assert.are.equal(MESSAGE:format(0.2), e.message) end
    assert.is_nil(st.result)
  end)

  it("stops `while true do end`, and a handler whose own pcall catches the timeout", function()
    local p = queue({ { "bare", { timeout = 0.15, max_attempts = 1 } },
                      { "caught", { timeout = 0.15, max_attempts = 1 } } })
    local t0 = lease.now()
    local s = pool.run({ db = p, workers = 2, ttl = 30, signals = false, drain_wait = 0,
      handler = function(job)
        if job.id == "bare" then while true do end end   -- luacheck: ignore 512
        while true do pcall(function() while true do end end) end   -- luacheck: ignore 512
      end })
    assert.is_true(lease.now() - t0 < 2.5, "took " .. (lease.now() - t0))
    assert.are.same({ 2, 2, 0 }, { s.timed_out, s.discarded, s.done })
    local db = lease.open(p)
    finally(function() db:close() end)
    for _, id in ipairs({ "bare", "caught" }) do
      local st = db:state(id)
      assert.are.same({ "discarded", 1, MESSAGE:format(0.15) }, { st.status, st.attempt, last_error(st) })
    end
  end)

  it("leaves a fast handler alone, and its hook does not outlive the job", function()
    local p = queue({ { "t1", { timeout = 5, priority = 1 } }, { "t2", { timeout = 0.5, priority = 2 } },
                      { "plain", { priority = 3 } } })
    local s = pool.run({ db = p, workers = 1, ttl = 30, signals = false, drain_wait = 0,
      handler = function(job)
        local n = 0
        for i = 1, 100000 do n = n + i end   -- work enough for the hook to look at the clock
        return (job.timeout and string.format("%g", job.timeout) or "nil") .. " "
          .. tostring(debug.gethook() ~= nil)
      end })
    assert.are.same({ 3, 0, 0 }, { s.done, s.handler_errors, s.timed_out })
    local db = lease.open(p)
    finally(function() db:close() end)
    assert.are.same({ "5 true", "0.5 true", "nil false" },
      { db:state("t1").result, db:state("t2").result, db:state("plain").result })
    assert.are.same({ 1, 1, 1 }, { db:state("t1").attempt, db:state("t2").attempt, db:state("plain").attempt })
  end)

  it("leaves the worker module's hooks outside the handler's time: slow hooks are not stopped", function()
    -- each hook spins in Lua for twice the timeout; the success and failure
    -- hooks then raise, so their messages show they ran to the end
    local p = queue({ { "fast", { timeout = 0.15, max_attempts = 1, priority = 1 } },
                      { "slow", { timeout = 0.15, max_attempts = 1, priority = 2 } } })
    local s = pool.run({ db = p, workers = 2, ttl = 30, signals = false, drain_wait = 0,
      handler = {
        handler = function(job)
          if job.id == "fast" then return "ok" end
          while true do end   -- luacheck: ignore 512
        end,
        on_start = function()
          local l = require("lease")
          local stop = l.now() + 0.3
          while l.now() < stop do end   -- luacheck: ignore 512
        end,
        on_success = function(ev)
          local l = require("lease")
          local stop = l.now() + 0.3
          while l.now() < stop do end   -- luacheck: ignore 512
          error("success " .. ev.result, 0)
        end,
        on_failure = function(ev)
          local l = require("lease")
          local stop = l.now() + 0.3
          while l.now() < stop do end   -- luacheck: ignore 512
          error("failure " .. ev.error, 0)
        end,
      } })
    assert.are.same({}, s.failed)
    assert.are.same({ 1, 1, 1, 2 }, { s.done, s.timed_out, s.discarded, s.hook_errors })
    table.sort(s.hook_messages)
    assert.are.same({ "fast on_success: success ok",
                      "slow on_failure: failure " .. MESSAGE:format(0.15) }, s.hook_messages)
    local db = lease.open(p)
    finally(function() db:close() end)
    assert.are.same({ "completed", "ok" }, { db:state("fast").status, db:state("fast").result })
    assert.are.same({ "discarded", MESSAGE:format(0.15) }, { db:state("slow").status, last_error(db:state("slow")) })
  end)

  it("is kept by lease.testing's drain, which runs the pool's code: a spinning handler stopped", function()
    local T = require("lease.testing")
    local db = H.fresh("timeout-drain")
    finally(function() db:close() end)
    assert.is_true(db:enqueue("spin", { timeout = 0.1, max_attempts = 1, priority = 1 }))
    assert.is_true(db:enqueue("ok", { timeout = 5, priority = 2 }))
    local r = T.drain(db, function(job)
      if job.id == "spin" then while true do end end   -- luacheck: ignore 512
      return string.format("done %g", job.timeout)
    end)
    assert.are.same({ { "ok" }, {}, { "spin" }, {} }, { r.done, r.failed, r.discarded, r.refused })
    local st = db:state("spin", r.now)
    assert.are.same({ "discarded", 1, MESSAGE:format(0.1) }, { st.status, st.attempt, last_error(st) })
    assert.are.equal("done 5", db:state("ok", r.now).result)
    -- the timeout's hook is gone from the calling thread
    assert.is_nil(debug.gethook())
  end)

  it("is the pool's timeout for a job without one; a job's own overrides it either way", function()
    local p = queue({ { "default", { max_attempts = 1 } }, { "longer", { timeout = 5, max_attempts = 1 } },
                      { "shorter", { timeout = 0.15, max_attempts = 1 } } })
    local s = pool.run({ db = p, workers = 3, ttl = 30, signals = false, drain_wait = 0, timeout = 0.3,
                         args = { spin = 0.6 }, handler = spinner })
    assert.are.same({ 1, 2, 2 }, { s.done, s.timed_out, s.discarded })
    local db = lease.open(p)
    finally(function() db:close() end)
    assert.are.same({ "discarded", MESSAGE:format(0.3) }, { db:state("default").status, last_error(db:state("default")) })
    assert.are.same({ "completed", "escaped" }, { db:state("longer").status, db:state("longer").result })
    assert.are.same({ "discarded", MESSAGE:format(0.15) }, { db:state("shorter").status, last_error(db:state("shorter")) })
    -- the pool's timeout is not stored with the job
    assert.is_nil(db:state("default").timeout)
  end)

  it("keeps the lease past the timeout, so the failure is the holder's fenced write", function()
    -- ttl 0.9 is shorter than the timeout: without a renewal the lease
    -- would lapse before the timeout's failure could be stored
    local p = queue({ { "long", { timeout = 1.2, max_attempts = 1 } } })
    local s = pool.run({ db = p, workers = 1, ttl = 0.9, signals = false, drain_wait = 0,
                         args = { spin = 3 }, handler = spinner })
    assert.are.same({ 1, 1, 0, 0 }, { s.timed_out, s.discarded, s.refused, s.lease_expired })
    assert.is_true(s.renewed >= 1)
    local db = lease.open(p)
    finally(function() db:close() end)
    local st = db:state("long")
    assert.are.same({ "discarded", 1, 1, MESSAGE:format(1.2), 1 },
      { st.status, st.attempt, #st.errors, last_error(st), st.errors[1].fence })
  end)

  it("a draining pool returns within timeout + grace from a handler blocked inside C", function()
    local p = queue({ { "stuck", { timeout = 0.2, max_attempts = 1 } }, { "quick" } })
    local t0 = lease.now()
    local s = pool.run({ db = p, workers = 2, ttl = 30, signals = false, drain_wait = 0,
                         shutdown_grace = 0.2, args = { mark = H.file("stuck-mark") },
                         handler = function(job)
                           if job.id ~= "stuck" then return "ok" end
                           -- blocked once only: a retry (which must not come) ends the run
                           local f = io.open(job.args.mark, "r")
                           if f then
                             f:close()
                             return "ran again"
                           end
                           io.open(job.args.mark, "w"):close()
                           require("lease").sleep(3)
                           return "ok"
                         end })
    -- timeout + grace, well before the blocked handler's end
    local took = lease.now() - t0
    assert.is_true(took >= 0.4 and took < 2.5, "took " .. took)
    assert.are.same({ 1, 1, 1, 1 }, { s.done, s.timed_out, s.discarded, s.unfinished })
    local db = lease.open(p)
    finally(function() db:close() end)
    local st = db:state("stuck")
    assert.are.same({ "discarded", 1, MESSAGE:format(0.2) }, { st.status, st.attempt, last_error(st) })
    -- the handler comes back later: its result is not stored
    lease.sleep(3 - took + 0.3)
    st = db:state("stuck")
    assert.are.same({ "discarded", 1 }, { st.status, #st.errors })
    assert.is_nil(st.result)
  end)

  it("counts a timeout the pool stored for a blocked handler once, when that handler comes back", function()
    -- "slow" keeps the pool running until the blocked handler is back
    local p = queue({ { "stuck", { timeout = 0.2, max_attempts = 1 } }, { "slow" } })
    local s = pool.run({ db = p, workers = 2, ttl = 30, signals = false, drain_wait = 0,
                         shutdown_grace = 0.1, handler = function(job)
                           require("lease").sleep(job.id == "stuck" and 0.8 or 1.2)
                           return "ok"
                         end })
    assert.are.same({ 1, 1, 1, 1, 0, 1 },
      { s.done, s.handler_errors, s.timed_out, s.discarded, s.unfinished, s.refused })
    assert.are.same({ "stuck: " .. MESSAGE:format(0.2) }, s.errors)
    local db = lease.open(p)
    finally(function() db:close() end)
    local st = db:state("stuck")
    assert.are.same({ "discarded", 1, 1 }, { st.status, st.attempt, #st.errors })
    assert.is_nil(st.result)
  end)

  -- The lease of a job whose handler is blocked inside C lasts until the
  -- timeout's failure is written: by the worker when the handler comes back
  -- before the timeout plus shutdown_grace, else by the pool itself then.
  -- ttl 1 is shorter than timeout + grace (1.2), ttl 0.5 shorter than
  -- timeout + ttl would need; a second worker polls for the job all along.
  for _, case in ipairs({
    { ttl = 1, batch = 1, block = 1.6, writer = "the pool" },
    { ttl = 0.5, batch = 2, block = 1.6, writer = "the pool" },
    { ttl = 0.5, batch = 1, block = 0.9, writer = "the worker" },
  }) do
    it(string.format("keeps the lease until %s stores the failure of a handler blocked in C"
      .. " (ttl %g, batch %d)", case.writer, case.ttl, case.batch), function()
      local db, p = H.fresh("timeout-grace", { events = true })
      finally(function() db:close() end)
      assert.is_true(db:enqueue("stuck", { timeout = 0.2, max_attempts = 2 }))
      local t0 = lease.now()
      local s = pool.run({ db = p, open = { events = true }, workers = 2,
                           ttl = case.ttl, batch = case.batch, shutdown_grace = 1, poll = 0.05,
                           drain_wait = 0, signals = false, args = { block = case.block },
                           backoff = function() return 60 end,
                           handler = function(job)
                             -- a second claim (a lapsed lease) returns at once
                             if job.fence > 1 then return "taken over" end
                             require("lease").sleep(job.args.block)
                             return "late"
                           end })
      local by_pool = case.writer == "the pool" and 1 or 0
      assert.are.same({ 1, 1, 1, 0, 0, by_pool },
        { s.timed_out, s.handler_errors, s.retried, s.refused, s.done, s.unfinished })
      -- the blocked handler comes back (its late failure, if any, is refused)
      lease.sleep(math.max(0, t0 + case.block + 0.3 - lease.now()))
      local st = db:state("stuck")
      local owner = st.errors[1] and st.errors[1].owner
      assert.are.same({ "retryable", 1, 1, 1, MESSAGE:format(0.2), 1 },
        { st.status, st.attempt, st.fence, #st.errors, st.errors[1].message, st.errors[1].fence })
      assert.is_nil(st.result)
      -- what was stored: one claim, the renewal at the handler's start and
      -- the timeout's failure, all by one worker under fence 1; the lease
      -- never lapsed and no one else claimed the job
      local stored = {}
      for _, e in ipairs(db:events({ id = "stuck", limit = 1000 })) do
        if e.op ~= "enqueue" and e.outcome == "ok" then
          stored[#stored + 1] = e.op .. " " .. tostring(e.owner) .. " " .. tostring(e.fence)
        end
      end
      assert.are.same({ "claim " .. owner .. " 1", "renew " .. owner .. " 1", "fail " .. owner .. " 1" },
        stored)
    end)
  end

  it("a pool shutting down on a signal returns once the timeout stops the handler", function()
    local p = queue({ { "kill", { timeout = 0.3, max_attempts = 3 } } })
    local t0 = lease.now()
    local s = pool.run({ db = p, workers = 1, ttl = 30, poll = 0.01, forever = true, shutdown_grace = 20,
      handler = function()
        local l = require("lease")
        os.execute("kill -TERM " .. l.pid())
        while true do end   -- luacheck: ignore 512
      end })
    local took = lease.now() - t0
    assert.is_true(took < 2, "took " .. took)
    assert.are.same({ "TERM", 0, 1, 1, 0 }, { s.interrupted, s.unfinished, s.timed_out, s.retried, s.shutdown })
    local db = lease.open(p)
    finally(function() db:close() end)
    local st = db:state("kill")
    -- an attempt counted, not given back as a shutdown
    assert.are.same({ 1, MESSAGE:format(0.3) }, { st.attempt, last_error(st) })
  end)

  it("comes with a database of the layout before it: read there as none, stored once upgraded", function()
    local db, p = H.fresh("timeout-layout-before")
    assert.is_true(db:enqueue("old", { payload = "po" }))
    db:close()
    -- the layout before TIMEOUT: without its column, nor what later steps
    -- made that cannot be made twice (UNIQUE's column key and its index)
    H.sql(p, "DROP INDEX lease_queue_key; ALTER TABLE lease_queue DROP COLUMN key;"
      .. " ALTER TABLE lease_queue DROP COLUMN timeout")
    H.sql(p, "UPDATE lease_meta SET value = " .. (H.backend == "pg" and "'" or "")
      .. (lease.SCHEMA_STEPS.TIMEOUT - 1) .. (H.backend == "pg" and "'" or "") .. " WHERE key = 'schema_version'")
    local ro = lease.open(p, { readonly = true })
    assert.are.equal(lease.SCHEMA_STEPS.TIMEOUT - 1, ro:settings().schema_version)
    local st = ro:state("old")
    assert.are.same({ "po", nil }, { st.payload, st.timeout })
    ro:close()
    db = lease.open(p)
    finally(function() db:close() end)
    assert.are.equal(lease.SCHEMA_VERSION, db:settings().schema_version)
    assert.is_true(db:enqueue("new", { timeout = 3 }))
    assert.are.same({ 3, nil }, { db:state("new").timeout, db:state("old").timeout })
  end)
end)

describe("the CLI's --timeout", function()
  -- Run cli.main(argv); returns status, stdout text, stderr text.
  local run = H.cli

  it("enqueue stores seconds or a duration, show prints it; a bad one is a usage error", function()
    local p = H.path("timeout-cli")
    assert.are.same({ 0, "enqueued a\n", "" }, { run({ "enqueue", p, "a", "--timeout", "2m" }) })
    assert.are.equal(0, (run({ "enqueue", p, "b", "--timeout", "0.5" })))
    assert.are.equal(0, (run({ "enqueue", p, "c" })))
    assert.are.same({ 120, 0.5 }, { lease.state(p, "a").timeout, lease.state(p, "b").timeout })
    assert.is_nil(lease.state(p, "c").timeout)
    for _, bad in ipairs({ "0", "-1", "x", "2q", "inf", "" }) do
      local status, out, err = run({ "enqueue", p, "d", "--timeout", bad })
      assert.are.same({ 2, "" }, { status, out })
      assert.truthy(err:find("--timeout needs a number of seconds > 0 or a duration (30s, 2m, 1h), got '"
        .. bad .. "'", 1, true), err)
    end
    assert.is_nil(lease.state(p, "d"))
    local _, out = run({ "show", p, "a" })
    assert.truthy(out:find("\ntimeout     120 s\n", 1, true), out)
    _, out = run({ "show", p, "c" })
    assert.truthy(out:find("\ntimeout     -\n", 1, true), out)
    _, out = run({ "show", p, "b", "--json" })
    assert.truthy(out:find('"max_attempts":25,"timeout":0.5,', 1, true), out)
  end)

  it("pool --timeout stops a handler on jobs without their own", function()
    local p = H.path("timeout-cli-pool")
    assert.are.equal(0, (run({ "enqueue", p, "spin", "--max-attempts", "1" })))
    local worker = H.file("worker") .. ".lua"
    H.write(worker, "return function(job) while true do end end\n")
    local status, out = run({ "pool", p, worker, "-j", "1", "--timeout", "0.2", "--drain-wait", "0",
                              "--quiet" })
    assert.are.equal(1, status)   -- a job was discarded
    assert.truthy(out:find("handler error      spin: " .. MESSAGE:format(0.2), 1, true), out)
    assert.truthy(out:find("1 timed out", 1, true), out)
    assert.are.equal("discarded", lease.state(p, "spin").status)
    local err
    status, out, err = run({ "pool", p, worker, "--timeout", "0" })
    assert.are.same({ 2, "" }, { status, out })
    assert.truthy(err:find("--timeout needs a number of seconds > 0", 1, true), err)
  end)
end)
