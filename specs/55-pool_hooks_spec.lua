-- lease.pool's hooks: a worker module may return {handler = fn, on_start =
-- fn, on_success = fn, on_failure = fn, on_discard = fn, on_refusal = fn};
-- each hook is called in the worker's thread with a table describing the
-- job and the event.  A hook that raises is reported in the summary and
-- never changes what is stored for the job.
local H = require("helpers")
local lease = H.lease
local pool = require("lease.pool")

-- A worker file whose hooks append every event they get to the file log,
-- one line per event: "event=start;fence=1;id=ok;..." (keys sorted).
-- body: the worker's handler and extra module fields, as Lua text that
-- ends with the table's fields (after "handler = ").
local function hooked_worker(log, db_path, extra)
  local f = H.file("hooks-worker") .. ".lua"
  H.write(f, string.format([[
    local lease = require("lease")
    local LOG, DB = %q, %q
    local function record(ev)
      local keys = {}
      for k in pairs(ev) do keys[#keys + 1] = k end
      table.sort(keys)
      local parts = {}
      for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. tostring(ev[k]) end
      local out = assert(io.open(LOG, "a"))
      out:write(table.concat(parts, ";"), "\n")
      out:close()
    end
    local M = {
      on_start = record, on_success = record, on_failure = record,
      on_discard = record, on_refusal = record,
    }
    function M.handler(job)
      if job.id == "flaky" and job.attempt == 1 then error("flaky once") end
      if job.id == "bad" then error("always bad") end
      if job.id == "stolen" and job.fence == 1 then
        -- another worker takes over once the lease has run out, and completes it
        local own = lease.open(DB)
        local later = own:server_now() + job.ttl + 1
        local fence = assert(own:claim(job.id, "thief", later, 5))
        assert(own:complete(job.id, "thief", fence, later, "the thief's"))
        own:close()
      end
      return "done:" .. job.id
    end
    %s
    return M
  ]], log, db_path, extra or ""))
  return f
end

-- The events in the log, each a table of its fields (strings).
local function events(log)
  local out = {}
  for line in (H.read(log) or ""):gmatch("[^\n]+") do
    local ev = {}
    for k, v in line:gmatch("([^=;]+)=([^;]*)") do ev[k] = v end
    out[#out + 1] = ev
  end
  return out
end

-- The events of one job, in order.
local function of(evs, id)
  local out = {}
  for _, ev in ipairs(evs) do if ev.id == id then out[#out + 1] = ev end end
  return out
end

describe("lease.pool's hooks", function()
  it("see a success, a failure with retry, a discard and a refusal, with the job's data", function()
    local db, p = H.fresh("hooks")
    db:enqueue("ok", { priority = 1 })
    db:enqueue("flaky", { priority = 2 })
    db:enqueue("bad", { priority = 3, max_attempts = 1 })
    db:enqueue("stolen", { priority = 4, queue = "default" })
    db:close()
    local log = H.file("hooks-log")
    local worker = hooked_worker(log, p)
    finally(function() os.remove(worker); os.remove(log) end)
    local before = lease.now()
    local s = pool.run({ db = p, worker = worker, workers = 1, ttl = 30, poll = 0.01, owner = "hk",
                         backoff = function() return 0 end, signals = false })
    assert.are.same({}, s.failed)
    assert.are.equal(0, s.hook_errors)
    assert.are.same({}, s.hook_messages)
    local evs = events(log)

    -- a success: start, then success with the stored result
    local ok = of(evs, "ok")
    assert.are.equal(2, #ok)
    assert.are.same({ event = "start", id = "ok", queue = "default", priority = "1", attempt = "1",
                      max_attempts = "25", fence = "1", owner = "hk-1" }, ok[1])
    assert.are.same({ event = "success", id = "ok", queue = "default", priority = "1", attempt = "1",
                      max_attempts = "25", fence = "1", owner = "hk-1", result = "done:ok" }, ok[2])

    -- a failure with retry, then the retry's success
    local fl = of(evs, "flaky")
    assert.are.same({ "start", "failure", "start", "success" },
      { fl[1].event, fl[2].event, fl[3].event, fl[4].event })
    assert.are.equal("retryable", fl[2].status)
    assert.are.equal("1", fl[2].attempt)
    assert.are.equal("1", fl[2].fence)
    assert.truthy(fl[2].error:find("flaky once", 1, true), fl[2].error)
    local st = lease.state(p, "flaky")
    assert.are.equal(fl[2].error, st.errors[1].message)   -- the text stored with the job
    local run_at = tonumber(fl[2].run_at)
    assert.is_true(run_at >= before and run_at <= lease.now() + 1, fl[2].run_at)
    assert.are.same({ "2", "2", "done:flaky" }, { fl[4].attempt, fl[4].fence, fl[4].result })

    -- a discard: failure (status discarded), then discard with the error
    local bad = of(evs, "bad")
    assert.are.same({ "start", "failure", "discard" }, { bad[1].event, bad[2].event, bad[3].event })
    assert.are.equal(3, #bad)
    assert.are.equal("discarded", bad[2].status)
    assert.is_nil(bad[2].run_at)
    assert.are.equal("1", bad[3].max_attempts)
    assert.truthy(bad[3].error:find("always bad", 1, true), bad[3].error)
    assert.are.equal("discarded", lease.state(p, "bad").status)

    -- a refusal: the stale complete, with the engine's reason
    local sto = of(evs, "stolen")
    assert.are.same({ "start", "refusal" }, { sto[1].event, sto[2].event })
    assert.are.equal(2, #sto)
    assert.are.equal("complete", sto[2].op)
    assert.are.equal("1", sto[2].fence)
    assert.are.equal(1, s.refusals["complete " .. sto[2].reason], sto[2].reason)
    assert.are.equal("the thief's", lease.state(p, "stolen").result)

    assert.are.same({ 2, 1, 1, 1 }, { s.done, s.retried, s.discarded, s.refused })
  end)

  it("are called for each job of a batch", function()
    local db, p = H.fresh("hooks-batch")
    db:enqueue_many({ "b1", "b2", "b3" })
    db:close()
    local log = H.file("hooks-log")
    local worker = hooked_worker(log, p)
    finally(function() os.remove(worker); os.remove(log) end)
    local s = pool.run({ db = p, worker = worker, workers = 1, ttl = 30, batch = 3, signals = false })
    assert.are.same({}, s.failed)
    assert.are.equal(3, s.done)
    for _, id in ipairs({ "b1", "b2", "b3" }) do
      local e = of(events(log), id)
      assert.are.same({ "start", "success" }, { e[1] and e[1].event, e[2] and e[2].event }, id)
      assert.are.equal("done:" .. id, e[2].result)
    end
  end)

  it("that raise are reported, naming the hook, and never lose the job", function()
    local db, p = H.fresh("hooks-raise")
    db:enqueue("ok")
    db:enqueue("flaky", { max_attempts = 2 })
    db:enqueue("bad", { max_attempts = 1 })
    db:close()
    local log = H.file("hooks-log")
    local worker = hooked_worker(log, p, [[
      local function boom(ev) error("hook broke on " .. ev.id .. " at " .. ev.event) end
      M.on_start, M.on_success, M.on_failure, M.on_discard = boom, boom, boom, boom
    ]])
    finally(function() os.remove(worker); os.remove(log) end)
    local s = pool.run({ db = p, worker = worker, workers = 1, ttl = 30, poll = 0.01,
                         backoff = function() return 0 end, signals = false })
    assert.are.same({}, s.failed)
    -- each job's outcome is stored as if no hook had raised
    local st = lease.state(p, "ok")
    assert.are.same({ "completed", "done:ok" }, { st.status, st.result })
    st = lease.state(p, "flaky")
    assert.are.same({ "completed", "done:flaky", 2 }, { st.status, st.result, st.attempt })
    assert.truthy(st.errors[1].message:find("flaky once", 1, true), st.errors[1].message)
    st = lease.state(p, "bad")
    assert.are.equal("discarded", st.status)
    assert.truthy(st.errors[1].message:find("always bad", 1, true), st.errors[1].message)
    assert.are.same({ 2, 1, 1 }, { s.done, s.retried, s.discarded })
    -- starts: ok, flaky twice, bad; successes: ok, flaky; failures: flaky, bad; discard: bad
    assert.are.equal(9, s.hook_errors)
    assert.are.equal(9, #s.hook_messages)
    local text = pool.format(s)
    assert.truthy(text:find("\nhook errors        9 ", 1, true), text)
    assert.truthy(text:find("\nhook error         ok on_success: .*hook broke on ok at success"), text)
    assert.truthy(text:find("\nhook error         bad on_discard: .*hook broke on bad at discard"), text)
    assert.truthy(text:find("\nhook error         flaky on_failure: ", 1, true), text)
    assert.is_nil(pool.format(pool.run({ db = p, handler = function() end, workers = 1 }))
      :find("hook error", 1, true))
  end)

  it("may come with pool.run's handler option, as a table of functions", function()
    local db, p = H.fresh("hooks-option")
    db:enqueue_many({ "x", "y" })
    db:close()
    local s = pool.run({ db = p, workers = 1, ttl = 30, signals = false, handler = {
      handler = function(job) return job.id end,
      on_success = function(ev) if ev.id == "y" then error("no metrics server") end end,
    } })
    assert.are.same({}, s.failed)
    assert.are.equal(2, s.done)
    assert.are.equal(1, s.hook_errors)
    assert.truthy(s.hook_messages[1]:find("^y on_success: .*no metrics server"), s.hook_messages[1])
    assert.are.equal("y", lease.state(p, "y").result)
  end)

  it("refuses a module that is not a handler or a table of known hooks", function()
    local db, p = H.fresh("hooks-bad")
    db:enqueue("j")
    db:close()
    local up = 1
    local noop = function() end
    for _, c in ipairs({
      { {}, "handler must be a function or a table {handler = fn, on_start = fn, ...}: it is a table"
        .. " without a handler function (its field handler is nil)" },
      { { handler = noop, on_sucess = noop }, "it is a table with the unknown hook on_sucess" },
      { { handler = noop, on_start = "log" }, "a table whose field on_start is a string, not a function" },
      { { handler = noop, on_start = function() return up end }, "handler.on_start must have no upvalue" },
      { { handler = print }, "cannot copy a C function at handler" },
      { { handler = noop, on_success = print }, "cannot copy a C function at handler.on_success" },
    }) do
      local err = H.error_of(pool.run, { db = p, handler = c[1] })
      assert.truthy(err:find("bad argument #1 to 'lease.pool.run' (", 1, true), err)
      assert.truthy(err:find(c[2], 1, true), err)
    end
    -- a worker file: reported by each worker, the job left alone
    local f = H.file("worker") .. ".lua"
    H.write(f, "return { handler = function() end, on_finish = print }")
    finally(function() os.remove(f) end)
    local s = pool.run({ db = p, worker = f, workers = 2, ttl = 30 })
    assert.are.equal(2, #s.failed)
    assert.truthy(s.failed[1]:find(f .. " must return a handler function or a table {handler = fn, ...}: "
      .. "it is a table with the unknown hook on_finish", 1, true), s.failed[1])
    local st = lease.state(p, "j")
    assert.are.same({ "available", 0 }, { st.status, st.fence })
  end)

  it("come with `lease pool DB WORKER.lua` too: a raising hook is in the summary, exit status 0", function()
    local db, p = H.fresh("hooks-cli")
    db:enqueue("c1")
    db:close()
    local f = H.file("worker") .. ".lua"
    H.write(f, [[
      return {
        handler = function(job) return "ran " .. job.id end,
        on_success = function(ev) error("statsd is down (" .. ev.result .. ")") end,
      }
    ]])
    finally(function() os.remove(f) end)
    local status, out, err = H.host("pool " .. H.sh(p) .. " " .. H.sh(f) .. " -j 1 --quiet")
    assert.are.equal(0, status, err)
    assert.truthy(out:find("\nhook errors        1 ", 1, true), out)
    assert.truthy(out:find("\nhook error         c1 on_success: [^\n]*statsd is down %(ran c1%)"), out)
    assert.are.equal("ran c1", lease.state(p, "c1").result)
  end)
end)
