-- lease.pool as a job system: handler errors through db:fail and the
-- backoff (retried, then done; or discarded with their errors in the
-- database), payloads and JSON decoding, queues, batch mode, owner names
-- unique per process, and shutdown on a signal (sent by a handler to this
-- very process: the pool catches it, so the spec process lives on).
local H = require("helpers")
local lease = H.lease
local pool = require("lease.pool")

-- A database with jobs; entries are ids or enqueue option tables with an id.
local function queue(list, opts)
  local db, p = H.fresh("svc")
  for _, e in ipairs(list) do
    if type(e) == "string" then assert(db:enqueue(e, opts))
    else
      local o = {}
      for k, v in pairs(opts or {}) do o[k] = v end
      for k, v in pairs(e) do if k ~= "id" then o[k] = v end end
      assert(db:enqueue(e.id, o))
    end
  end
  db:close()
  return p
end

-- ids "j1".."jn"
local function ids(n)
  local t = {}
  for i = 1, n do t[i] = "j" .. i end
  return t
end

describe("lease.pool failures", function()
  it("reports in the summary a queue that cannot be counted at the end #sqlite", function()
    -- another program's lease_queue, without the column the engine counts
    -- attempts from, under the engine's marker triggers
    local p = H.path("uncountable")
    H.sqlite3(p, "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0,"
      .. " fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0);"
      .. " CREATE TABLE lease_queue(id TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL,"
      .. " queue TEXT NOT NULL DEFAULT 'default', priority INTEGER NOT NULL DEFAULT 0, run_at REAL,"
      .. " max_attempts INTEGER NOT NULL DEFAULT 25, payload BLOB, state INTEGER NOT NULL DEFAULT 0,"
      .. " finished_at REAL) WITHOUT ROWID;"
      .. " CREATE TABLE lease_errors(id TEXT NOT NULL, attempt INTEGER, at REAL, owner TEXT,"
      .. " fence INTEGER, message BLOB);"
      .. " CREATE TRIGGER lease_jobs_enqueued AFTER INSERT ON jobs BEGIN"
      .. " INSERT OR REPLACE INTO lease_queue(id, seq) VALUES (new.id, new.rowid); END;"
      .. " CREATE TRIGGER lease_jobs_renamed AFTER UPDATE OF id ON jobs BEGIN SELECT 1; END;"
      .. " INSERT INTO jobs(id) VALUES ('a')")
    local s = pool.run({ db = p, workers = 2, ttl = 30, signals = false, handler = function() end })
    assert.are.equal(0, s.done)
    assert.is_nil(s.counts)
    assert.is_nil(s.blocked)
    assert.are.equal(3, #s.failed)
    assert.truthy(s.failed[3]:find("^counts at the end: lease%.counts: .*base_fence"), s.failed[3])
    assert.truthy(pool.format(s):find("worker failed      counts at the end", 1, true))
    assert.are.equal("0\n", H.sqlite3(p, "SELECT fence FROM jobs"))
  end)

  it("fails a job through db:fail with the pool's backoff, then runs it again: done", function()
    local p = queue(ids(4), { max_attempts = 3 })
    local t0 = lease.now()
    local s = pool.run({
      db = p, workers = 2, ttl = 30, poll = 0.01, signals = false,
      backoff = function(attempt) return 0.3 * attempt end,
      handler = function(job)
        if job.id == "j2" and job.attempt == 1 then error("flaky " .. job.attempt, 0) end
        return job.id .. "@" .. job.attempt .. "/" .. job.max_attempts
      end,
    })
    assert.are.same({}, s.failed)
    assert.are.equal(4, s.done)
    assert.are.equal(1, s.handler_errors)
    assert.are.equal(1, s.retried)
    assert.are.equal(0, s.discarded)
    -- the draining pool waited for the retry (0.3 s after the failure)
    assert.is_true(lease.now() - t0 >= 0.3)
    local st = lease.state(p, "j2")
    assert.are.equal("completed", st.status)
    assert.are.equal("j2@2/3", st.result)
    assert.are.equal(2, st.attempt)
    assert.are.equal(1, #st.errors)
    assert.are.equal("flaky 1", st.errors[1].message)
    assert.are.equal(1, st.errors[1].attempt)
    assert.truthy(st.errors[1].owner:find(":" .. H.pid() .. ":", 1, true), st.errors[1].owner)
    assert.are.equal("j1@1/3", lease.state(p, "j1").result)
  end)

  it("stores the backoff as the job's run_at: retryable until then", function()
    local p = queue({ "a" }, { max_attempts = 5 })
    local t0 = lease.now()
    local s = pool.run({
      db = p, workers = 1, ttl = 30, signals = false, drain_wait = 0,
      backoff = function() return 100 end,
      handler = function() error("later", 0) end,
    })
    assert.are.equal(1, s.retried)
    local st = lease.state(p, "a")
    assert.are.equal("retryable", st.status)
    assert.is_true(st.run_at >= t0 + 100 and st.run_at <= lease.now() + 100, tostring(st.run_at))
    assert.are.equal(1, st.attempt)
    assert.are.equal("later", st.errors[1].message)
    -- not claimable before run_at
    local db = lease.open(p)
    finally(function() db:close() end)
    assert.are.same({ nil, "empty" }, { db:claim_next("x", lease.now(), 10) })
  end)

  -- A backoff function that fails on a later attempt (backoff(1) is checked
  -- when the pool starts): each kind of failure is stored with the job's
  -- error, the engine's backoff is used, and the worker goes on.
  for _, bad in ipairs({
    { "raises", function(a) if a == 1 then return 0 end error("no delay today", 0) end, "raised no delay today" },
    { "returns nil", function(a) if a == 1 then return 0 end return nil end, "returned nil" },
    { "returns NaN", function(a) if a == 1 then return 0 end return 0 / 0 end, "returned %-?nan" },
    { "returns an infinity", function(a) if a == 1 then return 0 end return math.huge end, "returned inf" },
    { "returns minus infinity", function(a) if a == 1 then return 0 end return -math.huge end, "returned %-inf" },
    { "returns a negative number", function(a) if a == 1 then return 0 end return -1 end, "returned %-1" },
    -- a delay so long its run_at reads as another time unit (milliseconds)
    { "returns a delay the clock check refuses", function(a) if a == 1 then return 0 end return 1e14 end,
      "returned [%d.e+]+, which the clock check refused" },
  }) do
    it("treats a backoff function that " .. bad[1] .. " as part of the handler error", function()
      local p = queue({ { id = "bad", priority = -1 }, "g1", "g2" }, { max_attempts = 5 })
      local s = pool.run({
        db = p, workers = 1, ttl = 30, poll = 0.01, signals = false, drain_wait = 0,
        backoff = bad[2],
        handler = function(job)
          if job.id == "bad" then error("broken " .. job.attempt, 0) end
          return "fine"
        end,
      })
      -- the worker lived on: no failure, the other jobs done after it
      assert.are.same({}, s.failed)
      assert.are.equal(2, s.done)
      assert.are.equal(2, s.handler_errors)
      assert.are.equal(2, s.retried)
      assert.are.equal("fine", lease.state(p, "g2").result)
      local st = lease.state(p, "bad")
      assert.are.equal("retryable", st.status)
      assert.are.equal(2, st.attempt)
      assert.is_nil(st.owner)
      assert.are.equal(2, #st.errors)
      assert.are.equal("broken 1", st.errors[1].message)
      local m = st.errors[2].message
      assert.truthy(m:find("^broken 2; backoff%(2%) " .. bad[3]), m)
      assert.truthy(m:find("the engine's backoff was used", 1, true), m)
      assert.truthy(s.errors[2]:find("bad: broken 2; backoff(2)", 1, true), s.errors[2])
      -- the engine's backoff for attempt 2: 2 s with its jitter
      local d = st.run_at - st.errors[2].at
      assert.is_true(d >= 1.8 and d <= 2.2, tostring(d))
    end)
  end

  it("discards a job that always fails after its max_attempts, its errors in the database", function()
    local p = queue({ "bad", "good" }, { max_attempts = 3 })
    local s = pool.run({
      db = p, workers = 2, ttl = 30, poll = 0.01, signals = false,
      backoff = function() return 0.05 end,
      handler = function(job)
        if job.id == "bad" then error({ code = job.attempt }) end   -- not a string
        return "fine"
      end,
    })
    assert.are.equal(1, s.done)
    assert.are.equal(3, s.handler_errors)
    assert.are.equal(2, s.retried)
    assert.are.equal(1, s.discarded)
    assert.are.same({ "bad" }, s.discarded_ids)
    assert.truthy(pool.format(s):find("\ndiscarded          bad", 1, true), pool.format(s))
    local st = lease.state(p, "bad")
    assert.are.equal("discarded", st.status)
    assert.are.equal(3, st.attempt)
    assert.are.equal(3, #st.errors)
    for k, e in ipairs(st.errors) do
      assert.are.equal(k, e.attempt)
      assert.truthy(e.message:find("^table: "), e.message)
    end
    assert.are.equal("completed", lease.state(p, "good").status)
  end)

  it("counts a result of the wrong type and a payload that is not JSON as handler errors", function()
    local p = queue({ { id = "n", payload = "{}" }, { id = "j", payload = "{not json" },
                      { id = "ok", payload = '{"x": [1, 2]}' } }, { max_attempts = 1 })
    local s = pool.run({
      db = p, workers = 1, ttl = 30, signals = false, decode = "json",
      handler = function(job)
        if job.id == "n" then return 42 end
        return job.payload .. "=" .. job.data.x[2]
      end,
    })
    assert.are.equal(1, s.done)
    assert.are.equal(2, s.discarded)
    assert.are.equal('{"x": [1, 2]}=2', lease.state(p, "ok").result)
    assert.truthy(lease.state(p, "n").errors[1].message:find("handler returned a number", 1, true))
    assert.truthy(lease.state(p, "j").errors[1].message:find("payload is not JSON", 1, true))
  end)

  it("decodes payloads as lease.json.decode does, and fails a job whose payload nests too deep", function()
    local deep = string.rep("[", 200000) .. string.rep("]", 200000)
    local p = queue({ { id = "deep", payload = deep }, { id = "nul", payload = '{"b": [1, null, 3]}' },
                      { id = "tail", payload = '{"x": 1} {"x": 2}' }, { id = "after", payload = "[7]" } },
                    { max_attempts = 1 })
    local s = pool.run({
      db = p, workers = 1, ttl = 30, signals = false, decode = "json",
      handler = function(job)
        if job.id == "nul" then
          return #job.data.b .. tostring(job.data.b[2] == require("lease.json").null)
        end
        return tostring(job.data[1])
      end,
    })
    -- the worker goes on after the deep payload: every job is handled
    assert.are.same({}, s.failed)
    assert.are.equal(2, s.done)
    assert.are.equal(2, s.discarded)
    assert.are.equal("3true", lease.state(p, "nul").result)
    assert.are.equal("7", lease.state(p, "after").result)
    for _, id in ipairs({ "deep", "tail" }) do
      local st = lease.state(p, id)
      assert.are.equal("discarded", st.status)
      assert.truthy(st.errors[1].message:find("payload is not JSON", 1, true), st.errors[1].message)
    end
  end)

  it("gives handlers the job's payload, queue, priority and attempts", function()
    local p = queue({ { id = "a", payload = "x\0y", priority = -3 } }, { queue = "mail", max_attempts = 7 })
    local s = pool.run({
      db = p, workers = 1, ttl = 30, signals = false, queue = "mail",
      handler = function(job)
        return table.concat({ job.payload, job.queue, job.priority, job.attempt, job.max_attempts }, "|")
      end,
    })
    assert.are.equal(1, s.done)
    assert.are.equal("x\0y|mail|-3|1|7", lease.state(p, "a").result)
  end)
end)

describe("lease.pool queues and batches", function()
  it("claims from its own queue only", function()
    local p = queue({ "d1", "d2" })
    local db = lease.open(p)
    assert(db:enqueue("m1", { queue = "mail" }))
    db:close()
    local s = pool.run({ db = p, workers = 2, ttl = 30, signals = false, queue = "mail",
                         handler = function(job) return job.queue end })
    assert.are.equal(1, s.done)
    assert.are.equal("mail", lease.state(p, "m1").result)
    assert.are.equal("available", lease.state(p, "d1").status)
  end)

  it("completes every job exactly once in batch mode, with complete_many", function()
    local list = ids(203)
    local p = queue(list, { max_attempts = 2 })
    local s = pool.run({
      db = p, workers = 3, ttl = 30, poll = 0.01, signals = false, batch = 10,
      backoff = function() return 0 end, completed = true,
      handler = function(job)
        if job.id == "j7" and job.attempt == 1 then error("once") end
        return job.id .. "@" .. job.fence
      end,
    })
    assert.are.same({}, s.failed)
    assert.are.equal(203, s.done)
    assert.are.equal(1, s.retried)
    local db = lease.open(p)
    finally(function() db:close() end)
    for _, id in ipairs(list) do
      assert.are.equal(1, s.completed[id], id)
      local st = db:state(id)
      assert.are.equal("completed", st.status)
      assert.are.equal(id .. "@" .. st.fence, st.result)
    end
    assert.are.equal(203, db:counts(lease.now()).completed)
  end)

  it("counts every stored job of a batch without the completed list, each with its own result", function()
    local p = queue(ids(57))
    -- batches of 7: a job returning nil often takes the place, in the
    -- batch, of one that returned a string in the batch before
    local s = pool.run({ db = p, workers = 1, ttl = 30, poll = 0.01, signals = false, batch = 7,
                         handler = function(job)
                           if tonumber(job.id:sub(2)) % 2 == 1 then return job.id end
                         end })
    assert.are.same({}, s.failed)
    assert.is_nil(s.completed)
    assert.are.same({ 57, 0, 0 }, { s.done, s.refused, s.handler_errors })
    assert.are.same({ 57, 57 }, { s.counts.completed, s.counts.total })
    local db = lease.open(p)
    finally(function() db:close() end)
    for i = 1, 57 do
      local st = db:state("j" .. i)
      assert.are.same({ "completed", i % 2 == 1 and ("j" .. i) or nil }, { st.status, st.result }, "j" .. i)
    end
  end)
end)

describe("lease.pool owners", function()
  it("names its owners <host>:<pid>:<n> by default, <owner>-<n> when given", function()
    local p = queue(ids(20))
    local s = pool.run({ db = p, workers = 3, ttl = 30, signals = false,
                         handler = function(job) return job.owner end })
    assert.are.equal(20, s.done)
    local prefix = lease.hostname() .. ":" .. H.pid() .. ":"
    for i = 1, 20 do
      local r = lease.state(p, "j" .. i).result
      assert.are.equal(prefix, r:sub(1, #prefix), r)
      assert.truthy(r:sub(#prefix + 1):match("^[123]$"), r)
    end
    assert.are.equal("x-2", pool.owner_name({ owner = "x" }, 2))
  end)
end)

describe("lease.pool shutdown", function()
  -- first: if a caught signal were not counted, the services below would
  -- never stop
  it("counts a caught signal; with signals = false the pool leaves them to the caller", function()
    local p = queue({ "a" })
    local before = lease.signals()
    lease.on_signal({ "USR1" })
    finally(function() lease.on_signal({ "USR1" }, false) end)
    os.execute("kill -USR1 " .. H.pid())
    lease.sleep(0.05)
    assert.are.same({ before + 1, "USR1" }, { lease.signals() })
    local s = pool.run({ db = p, workers = 1, ttl = 30, signals = false,
                         handler = function() return "x" end })
    assert.is_nil(s.interrupted)
    assert.are.equal(1, s.done)
  end)

  -- A handler that sends SIGTERM to this process on job "kill" (when
  -- job.args.kill, the database), once job.args.held jobs are held (so
  -- the shutdown finds every worker holding one, however slowly the
  -- others started), then works `job.args.work` seconds on every job.
  local function signalling(job)
    local l = require("lease")
    if job.id == "kill" and job.args.kill then
      local db = assert(l.open(job.args.kill))
      local deadline = l.now() + 20
      while db:counts(l.now()).running < job.args.held do
        assert(l.now() < deadline, "the other workers never claimed")
        l.sleep(0.01)
      end
      db:close()
      os.execute("kill -TERM " .. l.pid())
    end
    l.sleep(job.args.work)
    return "done by " .. job.owner
  end

  it("stops claiming on SIGTERM, lets running handlers finish, returns with the summary", function()
    local list = { "kill" }
    for i = 1, 30 do list[#list + 1] = "j" .. i end
    local p = queue(list)
    local t0 = lease.now()
    local s = pool.run({ db = p, workers = 2, ttl = 30, poll = 0.01, forever = true,
                         shutdown_grace = 5, args = { work = 0.2, kill = p, held = 2 },
                         handler = signalling })
    -- a service (forever) stopped well within the grace: nothing cut off;
    -- each worker gives back the job it claimed with its last result
    assert.is_true(lease.now() - t0 < 3, "took " .. (lease.now() - t0))
    assert.are.equal("TERM", s.interrupted)
    assert.are.equal(0, s.unfinished)
    assert.are.equal(2, s.shutdown)
    assert.is_true(s.done >= 1 and s.done <= 4, "done " .. s.done)
    assert.truthy(pool.format(s):find("shutdown           on SIGTERM: 2 jobs given back", 1, true))
    local db = lease.open(p)
    finally(function() db:close() end)
    assert.are.equal("completed", db:state("kill").status)
    local c = db:counts(lease.now())
    assert.are.equal(s.done, c.completed)
    assert.are.equal(31 - s.done, c.available)
    assert.are.equal(0, c.running)
  end)

  it("fails what is still held after the grace back to the queue, the attempt not counted", function()
    local p = queue({ "kill", "other" }, { max_attempts = 1 })
    local t0 = lease.now()
    local s = pool.run({ db = p, workers = 2, ttl = 30, poll = 0.01, forever = true,
                         shutdown_grace = 0.3, args = { work = 3, kill = p, held = 2 },
                         handler = signalling })
    local took = lease.now() - t0
    assert.is_true(took >= 0.3 and took < 2.5, "took " .. took)
    assert.are.equal("TERM", s.interrupted)
    assert.are.equal(2, s.unfinished)
    assert.are.equal(2, s.shutdown)
    assert.are.equal(0, s.done)
    local db = lease.open(p)
    finally(function() db:close() end)
    for _, id in ipairs({ "kill", "other" }) do
      local st = db:state(id)
      -- max_attempts 1, and still not discarded: the shutdown did not count
      assert.are.equal("available", st.status, id)
      assert.is_nil(st.owner)
      assert.are.equal("shutdown", st.errors[#st.errors].message)
    end
    -- the cut-off handlers' late completes are refused
    lease.sleep(3.2)
    assert.are.equal("available", db:state("kill").status)
    assert.is_nil(db:state("kill").result)
    -- and the next run does them
    local s2 = pool.run({ db = p, workers = 2, ttl = 30, signals = false, args = { work = 0 },
                          handler = signalling })
    assert.are.equal(2, s2.done)
    assert.are.equal("completed", db:state("other").status)
  end)

  it("stops at once on a second signal, still giving back what it holds", function()
    local p = queue({ "kill" })
    local t0 = lease.now()
    local s = pool.run({
      db = p, workers = 1, ttl = 30, poll = 0.01, forever = true, shutdown_grace = 30,
      handler = function(job)
        local l = require("lease")
        -- TERM twice: while os.execute runs, glibc's system() ignores SIGINT
        -- in the whole process, so a kill -INT sent from it would be lost
        os.execute("kill -TERM " .. l.pid())
        l.sleep(0.3)
        os.execute("kill -TERM " .. l.pid())
        l.sleep(3)
        return "late " .. job.fence
      end,
    })
    assert.is_true(lease.now() - t0 < 2, "took " .. (lease.now() - t0))
    assert.are.equal("TERM", s.interrupted)
    assert.are.equal(1, s.shutdown)
    assert.are.equal(1, s.unfinished)
    local st = lease.state(p, "kill")
    assert.are.equal("available", st.status)
    assert.are.equal("shutdown", st.errors[#st.errors].message)
  end)

  it("gives back the rest of a batch when asked to stop in the middle", function()
    local list = { "kill" }
    for i = 1, 9 do list[#list + 1] = "j" .. i end
    local p = queue(list, { max_attempts = 1 })
    local s = pool.run({ db = p, workers = 1, ttl = 30, forever = true, batch = 10,
                         shutdown_grace = 5, handler = function(job)
                           local l = require("lease")
                           if job.id == "kill" then
                             os.execute("kill -TERM " .. l.pid())
                             l.sleep(0.4)   -- the pool sees the signal meanwhile
                           end
                           return "ok"
                         end })
    assert.are.equal(0, s.unfinished)
    assert.are.equal(1, s.done)
    assert.are.equal(9, s.shutdown)
    local db = lease.open(p)
    finally(function() db:close() end)
    assert.are.equal("completed", db:state("kill").status)
    for i = 1, 9 do
      local st = db:state("j" .. i)
      assert.are.equal("available", st.status)
      assert.are.equal("shutdown", st.errors[1].message)
    end
  end)

end)

describe("lease.pool options", function()
  it("refuses the new options' bad values before starting anything", function()
    local p = queue({ "a" })
    local h = function() return "x" end
    for _, c in ipairs({
      { { db = p, handler = h, attempts = 3 }, "unknown option 'attempts': how often a job is tried is its own max_attempts" },
      { { db = p, handler = h, queue = "" }, "queue must be a non-empty string" },
      { { db = p, handler = h, forever = 1 }, "forever must be a boolean, got number" },
      { { db = p, handler = h, shutdown_grace = -1 }, "shutdown_grace must be a finite number of seconds >= 0" },
      { { db = p, handler = h, drain_wait = 0 / 0 }, "drain_wait must be a finite number of seconds >= 0" },
      { { db = p, handler = h, batch = 0 }, "batch must be an integer from 1 to 1000000" },
      { { db = p, handler = h, decode = "xml" }, "decode must be \"json\" or nil" },
      { { db = p, handler = h, owner = "" }, "owner must be a non-empty string" },
      { { db = p, handler = h, backoff = function() return -1 end }, "backoff(1) must return a finite number of seconds >= 0, returned -1" },
      { { db = p, handler = h, backoff = function() error("no") end }, "backoff(1) must return a finite number of seconds >= 0, raised" },
    }) do
      local err = H.error_of(pool.run, c[1])
      assert.truthy(err:find("bad argument #1 to 'lease.pool.run' (" .. c[2], 1, true), err)
    end
    local up = 2
    local err = H.error_of(function() pool.run({ db = p, handler = h, backoff = function() return up end }) end)
    assert.truthy(err:find("(backoff must have no upvalue but _ENV", 1, true), err)
    assert.truthy(err:find("^specs/29%-pool_service_spec%.lua:%d+: bad argument"), err)
    local st = lease.state(p, "a")
    assert.are.equal("available", st.status)
    assert.are.equal(0, st.fence)
  end)
end)

-- A lost database connection: the pool's workers wait it out and go on.
describe("lease.pool and lost connections", function()
  it("retries only the connection-level errors of each backend", function()
    local function err(code, file)
      return "lease.claim_next: boom [" .. code .. "] (file \"" .. file .. "\")"
    end
    assert.are.equal("pg", pool.backend("host=/tmp/x dbname=jobs"))
    assert.are.equal("pg", pool.backend("postgresql://u@h/db"))
    assert.are.equal("sqlite", pool.backend("jobs.db"))
    assert.is_true(pool.retried(err("ioerr", "h"), "pg"))
    assert.is_true(pool.retried(err("cantopen", "h"), "pg"))
    assert.is_true(pool.retried(err("busy", "h"), "pg"))
    assert.is_false(pool.retried(err("schema", "h"), "pg"))
    -- on SQLite ioerr and cantopen are the disk or the file: not waited out
    assert.is_false(pool.retried(err("ioerr", "jobs.db"), "sqlite"))
    assert.is_false(pool.retried(err("cantopen", "jobs.db"), "sqlite"))
    assert.is_true(pool.retried(err("busy", "jobs.db"), "sqlite"))
    assert.is_false(pool.retried("handler: [ioerr] said the handler", "pg"))
  end)

  it("settles a complete whose outcome was lost: stored once, or refused when another lease ended it", function()
    local db = H.fresh("settle")
    finally(function() db:close() end)
    db:enqueue_many({ "a", "b" })
    local cfg = { ttl = 30, queue = "default", batch = 1, completed = true, handler = function() end }
    local st = {}
    local w = pool._new_worker(db, cfg, "w1", lease.now, st)
    local fa = db:claim("a", "w1", db:server_now(), 30)
    assert.is_true(db:complete("a", "w1", fa, db:server_now(), "ra"))   -- it committed; the answer was lost
    local fb = db:claim("b", "w1", db:server_now(), 0.01)
    lease.sleep(0.05)
    local fb2 = db:claim("b", "w2", db:server_now(), 30)   -- the lease expired; w2 took it
    assert.is_true(db:complete("b", "w2", fb2, db:server_now(), "w2's"))
    w.pending = { results = { { id = "a", fence = fa, result = "ra" }, { id = "b", fence = fb, result = "rb" } },
                  jobs = { { id = "a", fence = fa }, { id = "b", fence = fb } } }
    pool._settle(w)
    assert.is_nil(w.pending)
    assert.are.same({ 1, 1 }, { st.done, st.refused })
    assert.are.same({ "a" }, st.completed)
    assert.are.same({ ["complete done"] = 1 }, st.refusals)
    assert.are.equal("w2's", db:state("b").result)
  end)

  it("says unknown, not 0, for the queue when the count at the end failed", function()
    local s = { workers = 1, queue = "default", done = 3, handler_errors = 0, retried = 0, discarded = 0,
                refused = 0, renew_refused = 0, renewed = 0, max_fence = 1, wall = 1, rate = 3,
                discarded_ids = {}, errors = {}, failed = { "counts at the end: boom" } }
    local text = pool.format(s)
    assert.truthy(text:find("queue now          unknown", 1, true), text)
    assert.truthy(text:find("blocked jobs       unknown", 1, true), text)
    assert.falsy(text:find("0 completed", 1, true), text)
  end)

  if H.backend ~= "pg" then return end

  -- Terminate every client connection of the cluster but psql's own, now
  -- (wait = nil) or after `wait` seconds in the background.
  local KILL = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
    .. " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
  local function kill_all_after(p, wait)
    local psql = os.getenv("LEASE_PSQL")
    if not psql or psql == "" then psql = "psql" end
    os.execute("(sleep " .. wait .. "; " .. H.sh(psql) .. " -X -q -d " .. H.sh(p) .. " -c " .. H.sh(KILL)
      .. ") >/dev/null 2>&1 &")
  end

  for _, batch in ipairs({ 1, 4 }) do
    it("drains the whole queue through two rounds of terminated connections (batch " .. batch .. ")", function()
      local n = 300
      local p = queue(ids(n))
      local log = H.file("log")
      local out = assert(io.open(log, "w"))
      kill_all_after(p, 0.3)
      kill_all_after(p, 0.8)
      local s = pool.run({ db = p, workers = 4, ttl = 1, poll = 0.05, batch = batch, signals = false,
        completed = true, out = out,
        handler = function(job)
          require("lease").sleep(0.01)
          return job.id .. "@" .. job.fence
        end })
      out:close()
      assert.are.same({}, s.failed)
      assert.is_true(s.db_errors >= 1)
      assert.are.equal(n, s.done)
      assert.are.equal(n, s.counts.completed)   -- the pool's own handle lost its connection too
      local text = pool.format(s)
      assert.truthy(text:find("database errors    " .. s.db_errors, 1, true), text)
      assert.truthy(H.read(log):find("lease.pool: worker %d+: lease%.[%w_]+: .*%[%a+%].*; trying again in"),
        H.read(log))
      local db = lease.open(p)
      finally(function() db:close() end)
      for _, id in ipairs(ids(n)) do
        assert.are.equal(1, s.completed[id], id)
        local st = db:state(id)
        assert.are.equal(id .. "@" .. st.fence, st.result)
      end
    end)
  end

  it("stores again the result whose complete lost its connection, after a wait of a few seconds at most", function()
    local p = queue(ids(3))
    local psql = os.getenv("LEASE_PSQL")
    if not psql or psql == "" then psql = "psql" end
    local out = assert(io.open(H.file("log"), "w"))
    local t0 = lease.now()
    -- poll 20: the wait after the error is capped at pool.RETRY_MAX
    -- ttl 8: longer than that wait, shorter than the spec would take without settle
    local s = pool.run({ db = p, workers = 1, ttl = 8, poll = 20, signals = false, out = out,
      args = { psql = psql, db = p, kill = KILL },
      handler = function(job)
        if job.id == "j2" and job.fence == 1 then   -- the connection is gone when the worker completes j2
          os.execute(string.format("%q -X -q -d %q -c %q >/dev/null 2>&1", job.args.psql, job.args.db,
            job.args.kill))
        end
        return job.id .. "@" .. job.fence
      end })
    out:close()
    assert.is_true(lease.now() - t0 < pool.RETRY_MAX + 3)
    assert.are.same({}, s.failed)
    assert.are.same({ 3, 1, 0, 1 }, { s.done, s.db_errors, s.refused, s.max_fence })
    for _, id in ipairs(ids(3)) do
      assert.are.equal(id .. "@1", lease.state(p, id).result)   -- each handled once, j2 too
    end
  end)
end)
