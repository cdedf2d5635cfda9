-- lease.testing: drain runs the ready jobs inline through the pool's own
-- code on a fake clock (advancing it to the next due job when asked), and
-- enqueued lists the matching jobs' states.  The busted example of
-- docs/testing.md ("Testing your workers") runs as printed.
local H = require("helpers")
local T = require("lease.testing")

local src = os.getenv("LEASE_SOURCE_DIR")
if not src or src == "" then src = "." end

-- An absolute path of p (relative to the working directory).
local function absolute(p)
  if p:sub(1, 1) == "/" then return p end
  return (os.getenv("PWD") or ".") .. "/" .. p
end

-- The statuses of ids at now, in order.
local function statuses(db, ids, now)
  local out = {}
  for i, id in ipairs(ids) do out[i] = db:state(id, now).status end
  return out
end

describe("lease.testing: the documented example", function()
  it("runs as printed in docs/testing.md #sqlite", function()
    local doc = assert(H.read(src .. "/docs/testing.md"))
    local at = doc:find("\n## Testing your workers\n", 1, true)
    assert.truthy(at, "docs/testing.md: no section \"Testing your workers\"")
    local section = doc:sub(at)
    local worker, spec
    for block in section:gmatch("```lua\n(.-)```") do
      if block:match("^%-%- mailer%.lua") then worker = block end
      if block:match("^%-%- spec/mailer_spec%.lua") then spec = block end
    end
    assert.truthy(worker, "docs/testing.md: no ```lua block starting with -- mailer.lua")
    assert.truthy(spec, "docs/testing.md: no ```lua block starting with -- spec/mailer_spec.lua")
    local dir = H.dir()
    H.capture("mkdir -p " .. H.sh(dir .. "/spec"))
    H.write(dir .. "/mailer.lua", worker)
    H.write(dir .. "/spec/mailer_spec.lua", spec)
    local build = absolute(os.getenv("LEASE_BUILD_DIR") or "build")
    local out, ok = H.capture("cd " .. H.sh(dir) .. " && LUA_PATH=" .. H.sh(dir .. "/?.lua;;")
      .. " LUA_CPATH=" .. H.sh(build .. "/?.so;;") .. " " .. H.lua()
      .. " \"$(command -v busted)\" -o utfTerminal spec/mailer_spec.lua 2>&1")
    assert.is_true(ok, out)
    assert.truthy(out:find("2 successes / 0 failures / 0 errors", 1, true), out)
  end)
end)

describe("lease.testing.drain", function()
  it("runs retries after their backoff and scheduled jobs when it advances the clock", function()
    local db = H.fresh("testing-advance")
    finally(function() db:close() end)
    db:enqueue("a")
    db:enqueue("b", { max_attempts = 3 })
    db:enqueue("c", { max_attempts = 1 })
    db:enqueue("later", { run_at = 500 })
    local seen = {}
    local r = T.drain(db, function(job)
      seen[#seen + 1] = job.id .. "@" .. job.attempt
      if job.id == "b" and job.attempt < 3 then error("b is flaky") end
      if job.id == "c" then return 42 end   -- not a string: a handler error, as in the pool
      return "ran " .. job.id
    end, { now = 100, advance = true })
    assert.are.same({ "a", "b", "later" }, r.done)
    assert.are.same({ "b", "b" }, r.failed)
    assert.are.same({ "c" }, r.discarded)
    assert.are.same({}, r.refused)
    assert.are.same({}, r.hook_errors)
    assert.are.equal(500, r.now)
    assert.are.same({ "a@1", "b@1", "c@1", "b@2", "b@3", "later@1" }, seen)
    -- stored as the pool stores them: the errors at the clock's times, the
    -- retries after the engine's backoff (1 s, then 2 s, jitter 0.9..1.1)
    local b = db:state("b", r.now)
    assert.are.same({ "completed", "ran b", 3 }, { b.status, b.result, b.attempt })
    assert.are.equal(2, #b.errors)
    assert.truthy(b.errors[1].message:find("b is flaky", 1, true), b.errors[1].message)
    assert.are.equal(100, b.errors[1].at)
    assert.is_true(b.errors[2].at >= 100.9 and b.errors[2].at <= 101.1, tostring(b.errors[2].at))
    assert.are.equal("lease.testing", b.errors[1].owner)
    local c = db:state("c", r.now)
    assert.are.equal("discarded", c.status)
    assert.are.equal("handler returned a number, not a string or nil", c.errors[1].message)
    assert.are.same({ "completed", "completed", "discarded", "completed" },
      statuses(db, { "a", "b", "c", "later" }, r.now))
  end)

  it("leaves retries and scheduled jobs waiting without advance, and keeps the clock", function()
    local db = H.fresh("testing-still")
    finally(function() db:close() end)
    db:enqueue("a")
    db:enqueue("b")
    db:enqueue("later", { run_at = 500 })
    local r = T.drain(db, function(job)
      if job.id == "b" then error("not yet") end
      return job.id
    end, { now = 100 })
    assert.are.same({ "a" }, r.done)
    assert.are.same({ "b" }, r.failed)
    assert.are.equal(100, r.now)
    assert.are.same({ "completed", "retryable", "scheduled" }, statuses(db, { "a", "b", "later" }, 100))
    assert.are.equal(0, db:state("later").fence)
    -- a second drain later on picks them up
    r = T.drain(db, function(job) return job.id end, { now = 600 })
    assert.are.same({ "b", "later" }, r.done)
  end)

  it("drains only its queue, claims as owner with ttl, and starts at the database's clock", function()
    local db = H.fresh("testing-queue")
    finally(function() db:close() end)
    db:enqueue("d1")
    db:enqueue("m1", { queue = "mail" })
    db:enqueue("m2", { queue = "mail" })
    local r = T.drain(db, function(job)
      return job.owner .. " " .. job.ttl .. " " .. job.queue
    end, { queue = "mail", owner = "tester", ttl = 7 })
    assert.are.same({ "m1", "m2" }, r.done)
    assert.are.equal("tester 7 mail", db:state("m1").result)
    assert.are.equal(0, db:state("d1").fence)
    assert.is_true(math.abs(r.now - db:server_now()) < 60, tostring(r.now))
  end)

  it("calls the worker module's hooks; one that raises is reported and the job is stored", function()
    local db = H.fresh("testing-hooks")
    finally(function() db:close() end)
    db:enqueue("h1")
    db:enqueue("h2", { max_attempts = 1 })
    local evs = {}
    local r = T.drain(db, {
      handler = function(job)
        if job.id == "h2" then error("h2 fails") end
        return "ok"
      end,
      on_start = function(ev) evs[#evs + 1] = ev.event .. " " .. ev.id .. " " .. ev.fence end,
      on_success = function(ev) error("metrics down for " .. ev.id) end,
      on_discard = function(ev) evs[#evs + 1] = ev.event .. " " .. ev.id .. " " .. ev.owner end,
    }, { now = 0 })
    assert.are.same({ "start h1 1", "start h2 1", "discard h2 lease.testing" }, evs)
    assert.are.same({ "h1" }, r.done)
    assert.are.same({ "h2" }, r.discarded)
    assert.are.equal(1, #r.hook_errors)
    assert.truthy(r.hook_errors[1]:find("^h1 on_success: .*metrics down for h1"), r.hook_errors[1])
    assert.are.equal("ok", db:state("h1").result)
  end)

  it("gives every hook error, not the first few the pool's summary keeps", function()
    local db = H.fresh("testing-many-hooks")
    finally(function() db:close() end)
    local ids = {}
    for i = 1, 15 do ids[i] = "m" .. i end
    db:enqueue_many(ids)
    local r = T.drain(db, { handler = function() return "ok" end,
                            on_success = function(ev) error("hook of " .. ev.id) end }, { now = 0 })
    assert.are.equal(15, #r.done)
    assert.are.equal(15, #r.hook_errors)
    assert.truthy(r.hook_errors[15]:find("^m15 on_success: .*hook of m15"), r.hook_errors[15])
  end)

  it("refuses bad arguments, naming the function and argument, and claims nothing", function()
    local db = H.fresh("testing-bad")
    finally(function() db:close() end)
    db:enqueue("j")
    local ok = function() return "x" end
    for _, c in ipairs({
      { { nil, ok }, "bad argument #1 to 'lease.testing.drain' (lease handle expected, got nil)" },
      { { {}, ok }, "bad argument #1 to 'lease.testing.drain' (lease handle expected, got table)" },
      { { db, 5 }, "bad argument #2 to 'lease.testing.drain' (function or table {handler = fn, "
        .. "on_start = fn, ...} expected: it is a number)" },
      { { db, { on_start = ok } }, "bad argument #2 to 'lease.testing.drain' (function or table" },
      { { db, ok, 5 }, "bad argument #3 to 'lease.testing.drain' (table expected, got number)" },
      { { db, ok, { now = "0" } }, "bad argument #3 to 'lease.testing.drain' (now must be a number, got string)" },
      { { db, ok, { now = math.huge } }, "bad argument #3 to 'lease.testing.drain' (now must be a finite number)" },
      { { db, ok, { now = 0 / 0 } }, "bad argument #3 to 'lease.testing.drain' (now must be a finite number)" },
      { { db, ok, { ttl = 0 } }, "bad argument #3 to 'lease.testing.drain' (ttl must be a finite number of seconds > 0)" },
      { { db, ok, { queue = "" } }, "bad argument #3 to 'lease.testing.drain' (queue must be a non-empty string)" },
      { { db, ok, { owner = "" } }, "bad argument #3 to 'lease.testing.drain' (owner must be a non-empty string)" },
      { { db, ok, { advance = 1 } }, "bad argument #3 to 'lease.testing.drain' (advance must be a boolean, got number)" },
      { { db, ok, { adavnce = true } }, "bad argument #3 to 'lease.testing.drain' (unknown option 'adavnce')" },
      { { db, ok, setmetatable({}, { __index = { advance = true } }) },
        "bad argument #3 to 'lease.testing.drain' (a plain table expected, without a metatable" },
    }) do
      local err = H.error_of(T.drain, c[1][1], c[1][2], c[1][3])
      assert.truthy(err:find(c[2], 1, true), err)
    end
    for _, c in ipairs({
      { { 5 }, "bad argument #1 to 'lease.testing.enqueued' (lease handle expected, got number)" },
      { { db, "mail" }, "bad argument #2 to 'lease.testing.enqueued' (table expected, got string)" },
      { { db, { status = 1 } }, "bad argument #2 to 'lease.testing.enqueued' (status must be a string, got number)" },
      { { db, { now = math.huge } }, "bad argument #2 to 'lease.testing.enqueued' (now must be a finite number)" },
      { { db, { state = "done" } }, "bad argument #2 to 'lease.testing.enqueued' (unknown option 'state')" },
      -- a misspelt status would match nothing, and an assertion of none would pass
      { { db, { status = "complete" } }, "bad argument #2 to 'lease.testing.enqueued' (status must be one of "
        .. "available, scheduled, running, retryable, completed, discarded, cancelled, waiting, got 'complete')" },
    }) do
      local err = H.error_of(T.enqueued, c[1][1], c[1][2])
      assert.truthy(err:find(c[2], 1, true), err)
    end
    -- the error points at the caller
    local err = H.error_of(function() T.drain(db, ok, { ttl = -1 }) end)
    assert.truthy(err:find("^specs/56%-testing_spec%.lua:%d+: bad argument #3"), err)
    err = H.error_of(function() T.enqueued(nil) end)
    assert.truthy(err:find("^specs/56%-testing_spec%.lua:%d+: bad argument #1"), err)
    local st = db:state("j")
    assert.are.same({ 0, "available" }, { st.fence, st.status })
  end)
end)

describe("lease.testing.enqueued", function()
  it("lists the states of the jobs matching every filter, in enqueue order", function()
    local db = H.fresh("testing-enqueued")
    finally(function() db:close() end)
    db:enqueue("a", { payload = "x" })
    db:enqueue("b", { payload = "y", queue = "mail" })
    db:enqueue("c", { payload = "x", queue = "mail" })
    db:enqueue("d", { payload = "x", queue = "mail", run_at = 500 })
    local function ids(list) return H.ids(list) end
    assert.are.same({ "a", "b", "c", "d" }, ids(T.enqueued(db)))
    assert.are.same({ "b", "c", "d" }, ids(T.enqueued(db, { queue = "mail" })))
    assert.are.same({ "a", "c", "d" }, ids(T.enqueued(db, { payload = "x" })))
    assert.are.same({ "c" }, ids(T.enqueued(db, { queue = "mail", payload = "x", status = "available", now = 100 })))
    assert.are.same({ "c", "d" }, ids(T.enqueued(db, { queue = "mail", payload = "x", now = 600 })))
    assert.are.same({ "d" }, ids(T.enqueued(db, { status = "scheduled", now = 100 })))
    assert.are.same({ "d" }, ids(T.enqueued(db, { id = "d" })))
    assert.are.same({}, ids(T.enqueued(db, { id = "d", queue = "default" })))
    assert.are.same({}, ids(T.enqueued(db, { id = "nope" })))
    -- a key filter matches only jobs whose state carries that key: none here
    assert.are.same({}, ids(T.enqueued(db, { key = "k1" })))
    -- each entry is db:state's row
    local st = T.enqueued(db, { id = "b", now = 100 })[1]
    assert.are.same(db:state("b", 100), st)
  end)
end)
