--- Helpers for testing workers in a busted (or any Lua) suite: run the
-- ready jobs of a queue inline, in the calling thread, on a clock the test
-- controls, and look at what was enqueued.
--
--   local T = require("lease.testing")
--   local r = T.drain(db, require("my_worker"), { now = 0, advance = true })
--   assert.are.same({ "a", "b" }, r.done)
--   assert.are.equal(1, #T.enqueued(db, { queue = "mail", status = "available" }))
--
-- drain runs each job through the same code as a lease.pool worker
-- (pool._handle_one): the handler's result is stored with
-- complete_claim_next, a handler error with db:fail under the pool's rules
-- (the engine's backoff, the same stored text), and the worker module's
-- hooks (lease.pool.HOOKS) are called as a pool calls them.  Only the clock
-- differs: every `now` the worker passes to the database is drain's clock,
-- which moves only when drain advances it.
-- @module lease.testing
local testing = {}

local pool = require("lease.pool")
local observe = require("lease.observe")

-- drain's options and their types.
local DRAIN_OPTS = { now = "number", advance = "boolean", queue = "string", owner = "string",
                     ttl = "number" }
-- enqueued's filters and their types.
local ENQUEUED_OPTS = { queue = "string", id = "string", payload = "string", key = "string",
                        status = "string", now = "number" }
-- The statuses a job's state may have.
local STATUSES = observe.STATUSES

--- Raise a bad-argument error at the caller of a lease.testing function
-- (level 3: argerror, the function, its caller; one more per helper between).
-- @tparam string fname the function, "drain" or "enqueued"
-- @tparam integer n the argument's number
-- @tparam string msg what is wrong
-- @tparam[opt=0] integer helpers how many helper calls lie between argerror
-- and the function
-- @raise always: "bad argument #n to 'lease.testing.fname' (msg)"
local function argerror(fname, n, msg, helpers)
  error("bad argument #" .. n .. " to 'lease.testing." .. fname .. "' (" .. msg .. ")", 3 + (helpers or 0))
end

--- Whether x is a finite number.
-- @param x any value
-- @treturn boolean
local function finite(x)
  return type(x) == "number" and x == x and x > -math.huge and x < math.huge
end

--- Raise unless db is a lease handle (something with the handle's methods).
-- @tparam string fname the function checking it
-- @param db the value given
local function check_handle(fname, db)
  local ok, m = pcall(function() return db.claim_next end)
  if type(db) ~= "userdata" or not ok or type(m) ~= "function" then
    argerror(fname, 1, "lease handle expected, got " .. type(db), 1)
  end
end

--- Check an options table against its known keys and types.
-- @tparam string fname the function checking it
-- @tparam integer n the argument's number
-- @param o the value given (nil: an empty table)
-- @tparam table known key -> type name
-- @treturn table o, or a new empty table
local function check_opts(fname, n, o, known)
  if o == nil then return {} end
  if type(o) ~= "table" then argerror(fname, n, "table expected, got " .. type(o), 1) end
  if getmetatable(o) ~= nil then
    argerror(fname, n, "a plain table expected, without a metatable (options are read from the table's own fields)", 1)
  end
  for k, v in pairs(o) do
    local want = known[k]
    if not want then argerror(fname, n, "unknown option '" .. tostring(k) .. "'", 1) end
    if type(v) ~= want then
      argerror(fname, n, string.format("%s must be a %s, got %s", k, want, type(v)), 1)
    end
  end
  return o
end

--- The earliest run_at after now of the queue's jobs waiting for it
-- (scheduled, or retryable after a failure), or nil when none waits.
-- @param db the handle
-- @tparam string queue the queue
-- @tparam number now the clock
-- @treturn number|nil the run_at
-- @raise a database error
local function next_due(db, queue, now)
  local due
  for _, status in ipairs({ "scheduled", "retryable" }) do
    local after = 0
    repeat
      local page = db:jobs({ status = status, queue = queue, now = now, results = false,
                             limit = 1000, after = after })
      for _, j in ipairs(page) do
        if j.run_at and j.run_at > now and (not due or j.run_at < due) then due = j.run_at end
        after = j.seq
      end
    until #page < 1000
  end
  return due
end

--- A handle whose server_now is the given clock: every other method is
-- the real handle's (the worker's code reads the database's clock through
-- db:server_now() only).
-- @param db the real handle
-- @tparam table clock `{now = seconds}`, read at each call
-- @treturn table the proxy
local function clocked(db, clock)
  local methods = { server_now = function() return clock.now end }
  return setmetatable({}, { __index = function(_, k)
    local m = methods[k]
    if m then return m end
    local f = db[k]
    if type(f) ~= "function" then return f end
    m = function(_, ...) return f(db, ...) end
    methods[k] = m
    return m
  end })
end

--- Run the ready jobs of a queue inline, in the calling thread, as a
-- lease.pool worker would, on a fake clock.  Each job is claimed with
-- claim_next at the clock's time and handled by pool._handle_one: the
-- result stored with complete_claim_next, a handler error (or a result
-- that is not a string or nil) stored with db:fail, retried after the
-- engine's backoff or discarded after the job's last attempt.  The clock
-- starts at `now` and moves only when `advance` is true and no job is
-- ready: then to the earliest run_at of the queue's scheduled and
-- retryable jobs, so retries and scheduled jobs run too.  drain returns
-- when no job is ready (and, with advance, none waits), or when the queue
-- is paused or at a limit.  A handler that enqueues a job for every job it
-- runs keeps drain going for ever.
-- @param db an open handle (lease.open), SQLite or PostgreSQL
-- @tparam function|table handler the handler `function(job)`, or a worker
-- module `{handler = fn, on_start = fn, ...}` whose hooks are called as the
-- pool calls them (lease.pool.HOOKS); it runs in this thread, so it may
-- have upvalues
-- @tparam[opt] table opts
--   now (number, seconds, default db:server_now()): where the clock starts;
--   advance (boolean, default false): move the clock to the next due job
--     when none is ready;
--   queue (string, default "default"): the queue drained;
--   owner (string, default "lease.testing"): the owner of the claims;
--   ttl (number, seconds > 0, default 10): the leases' length.
-- @treturn table `{done =, failed =, discarded =, refused =, hook_errors =,
-- now =}`: done, the ids whose result was stored, in the order they ran;
-- failed, the ids of handler errors stored as retryable (an id once per
-- failure); discarded, the ids discarded after a handler error on their
-- last attempt; refused, the ids whose complete or fail the engine refused;
-- hook_errors, "<id> <hook>: <message>" for each hook that raised (all of
-- them, where the pool's summary keeps a few); now,
-- the clock at the end (seconds)
-- @raise "bad argument #n to 'lease.testing.drain' (...)" for a bad
-- argument, before anything is claimed; a database error
function testing.drain(db, handler, opts)
  check_handle("drain", db)
  local fn, hooks, why = pool.worker_module(handler)
  if not fn then
    argerror("drain", 2, "function or table {handler = fn, on_start = fn, ...} expected: it " .. why)
  end
  opts = check_opts("drain", 3, opts, DRAIN_OPTS)
  if opts.now ~= nil and not finite(opts.now) then argerror("drain", 3, "now must be a finite number") end
  if opts.ttl ~= nil and not (finite(opts.ttl) and opts.ttl > 0) then
    argerror("drain", 3, "ttl must be a finite number of seconds > 0")
  end
  if opts.queue == "" then argerror("drain", 3, "queue must be a non-empty string") end
  if opts.owner == "" then argerror("drain", 3, "owner must be a non-empty string") end

  local clock = { now = opts.now or db:server_now() }
  local r = { done = {}, failed = {}, discarded = {}, refused = {}, hook_errors = {} }
  local function add(list, ev) list[#list + 1] = ev.id end
  -- drain's own records, then the module's hook (whose error the pool reports)
  local record = {
    on_start = function() end,
    on_success = function(ev) add(r.done, ev) end,
    on_failure = function(ev) if ev.status == "retryable" then add(r.failed, ev) end end,
    on_discard = function(ev) add(r.discarded, ev) end,
    on_refusal = function(ev) if ev.op ~= "renew" then add(r.refused, ev) end end,
  }
  local wrapped = {}
  for _, name in ipairs(pool.HOOKS) do
    local own, theirs = record[name], hooks and hooks[name]
    wrapped[name] = function(ev)
      own(ev)
      if theirs then theirs(ev) end
    end
  end
  local queue = opts.queue or "default"
  local cfg = { handler = fn, ttl = opts.ttl or 10, queue = queue, batch = 1 }
  local w = pool._new_worker(clocked(db, clock), cfg, opts.owner or "lease.testing",
    function() return clock.now end, {})
  w.hooks = wrapped
  w.messages_kept = math.huge   -- every hook's error, not the pool's first few
  while true do
    local c, at = w.next, w.next_at
    w.next = nil
    if not c then
      at = clock.now
      local id, fence, job = db:claim_next(w.owner, clock.now, cfg.ttl, w.claim_opts)
      if id then
        c = job or { id = id, fence = fence }
      elseif fence == "empty" and opts.advance then
        local due = next_due(db, queue, clock.now)
        if not due then break end
        clock.now = due
      else
        break
      end
    end
    if c then pool._handle_one(w, c, at) end
  end
  r.hook_errors = w.st.hook_messages
  r.now = clock.now
  return r
end

--- The states (as db:state gives them) of the jobs that match every filter
-- given, in enqueue order: a test's view of what was enqueued.
-- @param db an open handle (lease.open)
-- @tparam[opt] table filter
--   queue (string): the job's queue;
--   id (string): the job's id;
--   payload (string): the job's payload, byte for byte;
--   key (string): the job's unique key, where the state has one (a job
--     whose state has no key does not match);
--   status (string): the status at now ("available", "running", ...);
--   now (number, seconds, default db:server_now()): the time the states
--     are read at.
-- @treturn {table,...} the states, each with its id
-- @raise "bad argument #n to 'lease.testing.enqueued' (...)" for a bad
-- argument; a database error
function testing.enqueued(db, filter)
  check_handle("enqueued", db)
  filter = check_opts("enqueued", 2, filter, ENQUEUED_OPTS)
  if filter.now ~= nil and not finite(filter.now) then
    argerror("enqueued", 2, "now must be a finite number")
  end
  if filter.status ~= nil then
    local known = false
    for _, s in ipairs(STATUSES) do known = known or s == filter.status end
    if not known then
      argerror("enqueued", 2, "status must be one of " .. table.concat(STATUSES, ", ") .. ", got '"
        .. filter.status .. "'")
    end
  end
  local now = filter.now or db:server_now()
  local function matches(st)
    return st ~= nil and (filter.queue == nil or st.queue == filter.queue)
      and (filter.payload == nil or st.payload == filter.payload)
      and (filter.key == nil or st.key == filter.key)
      and (filter.status == nil or st.status == filter.status)
  end
  local out = {}
  if filter.id then
    local st = db:state(filter.id, now)
    if matches(st) then out[1] = st end
    return out
  end
  local after = 0
  repeat
    local page = db:jobs({ queue = filter.queue, now = now, results = false, limit = 1000, after = after })
    for _, j in ipairs(page) do
      local st = db:state(j.id, now)
      if matches(st) then out[#out + 1] = st end
      after = j.seq
    end
  until #page < 1000
  return out
end

return testing
