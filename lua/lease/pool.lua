--- A pool of native worker threads over one database file: a batch run
-- that drains a queue, or a service that keeps waiting for new jobs.
--
-- Each worker is an OS thread (`lease.thread`) with its own Lua state and
-- its own connection.  It loops: `claim_next` in its queue -> `handler(job)`
-- -> `complete` with the fence it got, as `complete_claim_next`, which
-- claims its next job in the same transaction.  A handler keeps its lease alive by
-- calling `job.heartbeat()`, which renews it (at most every ttl/3 seconds,
-- so it can be called often).  A handler error goes to `db:fail`: the
-- error is recorded in the database with the job, which comes back after
-- its backoff, or is discarded once it used its `max_attempts` (both are
-- the job's, kept by the engine).  A complete, fail or renew the engine
-- refuses (the lease was lost: the job expired and someone else took it)
-- is counted with its reason and the work is dropped, never stored.
--
-- Without `forever`, workers stop when no job of the queue is available or
-- running and no retry is due within `drain_wait` seconds; with it they
-- keep waiting for new jobs.  A worker with nothing to claim waits in
-- db:wait: an enqueue (or release, retry...) on the database wakes it, and
-- so does the due time of a job scheduled for later, with `poll` as the
-- longest wait between looks.
-- Every `now` the pool passes to the database (claim, renew, complete,
-- fail, counts) is `db:server_now()`: on PostgreSQL the server's clock, one
-- clock for workers on many hosts; on SQLite the same as `lease.now()`.
-- Durations the pool measures itself (heartbeat spacing, shutdown grace,
-- progress) use the local `lease.now()`.
-- A SIGINT or SIGTERM (while `signals` is on) stops the claiming; handlers
-- that are running get `shutdown_grace` seconds to finish, and whatever a
-- worker of this pool still holds after that (or at once, on a second
-- signal) is failed back to the queue with the error "shutdown", not
-- counted against the job's attempts.
-- A job may carry a timeout (`db:enqueue(id, {timeout = seconds})`; the
-- pool's `timeout` option for jobs without one): a handler still running
-- that long after it started is stopped at its next Lua instruction (a
-- count hook, `debug.sethook`, in the worker's Lua state) and the job is
-- failed with "timeout: handler ran longer than N s", counted as an
-- attempt like any handler error.  A handler blocked inside C (a sleep, a
-- socket) is stopped only when it comes back to Lua.
--
--   local pool = require("lease.pool")
--   local summary = pool.run{ db = "jobs.db", worker = "worker.lua", workers = 4 }
--
-- worker.lua returns the handler: `function(job) ... return result end`,
-- where job = `{ id =, fence =, owner =, ttl =, args =, payload =, data =,
-- queue =, priority =, attempt =, max_attempts =, timeout =, heartbeat = fn,
-- with_lease = fn }`, or a table `{ handler = fn, on_start = fn,
-- on_success = fn, on_failure = fn, on_discard = fn, on_refusal = fn }`
-- whose hooks (all optional) see each job's events (see pool.HOOKS).  It is
-- loaded once in each worker thread, so it may keep its own locals.
-- @module lease.pool
local pool = {}
local compat = require("lease.compat")

--- Seconds a running handler gets to finish after the first shutdown
-- signal, unless `shutdown_grace` says otherwise.
pool.SHUTDOWN_GRACE = 10

--- Seconds ahead a draining pool (not `forever`) looks for retries: a job
-- that failed and comes back sooner than that is waited for; one that
-- comes back later is left in the queue for the next run.
pool.DRAIN_WAIT = 30

local DEFAULTS = { workers = 4, ttl = 10, poll = 1, queue = "default", forever = false,
                   shutdown_grace = pool.SHUTDOWN_GRACE, signals = true, batch = 1,
                   drain_wait = pool.DRAIN_WAIT, completed = false }
local KNOWN = {
  db = "string", worker = "string", handler = true, workers = "number",
  ttl = "number", poll = "number", progress = "boolean", args = true,
  open = "table", owner = "string", out = true, queue = "string", forever = "boolean",
  shutdown_grace = "number", signals = "boolean", backoff = "function", decode = "string",
  batch = "number", drain_wait = "number", completed = "boolean", timeout = "number",
}

--- The counters every worker keeps, summed over the workers into the
-- summary.  A worker bumps them through one function, which also sends an
-- event of the same name for the progress line (only when progress is on).
-- @table COUNTERS
-- @field done completions stored (handler results)
-- @field refused completes and fails the engine refused (the lease was lost)
-- @field renewed renewals stored by job.heartbeat()
-- @field renew_refused renewals the engine refused
-- @field retried handler errors stored by db:fail, the job retryable after its backoff
-- @field discarded handler errors stored by db:fail that used the job's last
-- attempt (the summary adds the jobs discarded when their last lease expired)
-- @field handler_errors handler errors (raised, a result of the wrong type,
-- or a payload that did not decode)
-- @field shutdown jobs failed back to the queue at shutdown (attempt not counted)
-- @field timed_out handler errors that were a timeout (counted in handler_errors too)
-- @field hook_errors hooks (pool.HOOKS) that raised; the job's outcome was
-- stored all the same
-- @field db_errors database calls of the worker that failed with an error it
-- waits out and retries (a lost PostgreSQL connection, see pool.RETRIED)
pool.COUNTERS = { "done", "refused", "renewed", "renew_refused", "retried", "discarded",
                  "handler_errors", "shutdown", "timed_out", "hook_errors", "db_errors" }

--- The database error codes (the word in `[...]` of a database error) a
-- worker waits out and goes on after, by backend; any other error ends the
-- worker (reported in the summary's failed).  On PostgreSQL a lost
-- connection raises `ioerr` from the call that lost it and is opened again
-- at the next call, which raises `cantopen` while the server cannot be
-- reached; `busy` is a lock wait past its timeout on both backends.  On
-- SQLite `ioerr` and `cantopen` are the disk or the file failing, which
-- waiting does not mend: they end the worker as before.
-- @table RETRIED
pool.RETRIED = { pg = { ioerr = true, cantopen = true, busy = true }, sqlite = { busy = true } }

--- The longest wait, seconds, of a worker between two tries after a
-- database error of pool.RETRIED: it waits about `poll` (at most this)
-- after the first, twice as long after each next one in a row, at most
-- this, each wait cut by a random part of up to a half (so the workers do
-- not come back all at once).
pool.RETRY_MAX = 5

--- The hooks a worker module may return beside its handler, each called in
-- the worker's thread with one new table per event: `{event =, id =,
-- queue =, priority =, attempt =, max_attempts =, fence =, owner =}` plus
-- the fields of its event.  A hook that raises is counted (hook_errors),
-- its message kept for the summary (hook_messages), and the job goes on as
-- if it had not: its result or error is stored all the same.
-- @table HOOKS
-- @field on_start before the handler runs (event "start")
-- @field on_success after its result was stored (event "success", result)
-- @field on_failure after a handler error was stored with db:fail (event
-- "failure", error = the stored text, status = "retryable" with run_at
-- (when it comes back), or "discarded", after its last attempt)
-- @field on_discard after on_failure, when that failure discarded the job
-- (event "discard", error)
-- @field on_refusal when the engine refused the job's complete, fail or
-- renew because the lease was lost (event "refusal", op = "complete",
-- "fail" or "renew", reason = the engine's word)
pool.HOOKS = { "on_start", "on_success", "on_failure", "on_discard", "on_refusal" }

-- How many handler error messages each worker keeps for the summary (every
-- one is stored with its job in the database).
local MAX_ERRORS = 10

-- The longest db:wait of an idle worker, seconds: how soon it sees a
-- request to stop.
local WAIT_SLICE = 0.25

-- The longest db:wait of an idle worker of a draining pool, seconds: how
-- soon it sees that the others finished the queue (a completion wakes no
-- waiter).
local DRAIN_SLICE = 0.05

-- libpq's connection keywords: a path starting with one of them and "="
-- is a PostgreSQL connection string (as the engine reads paths).
local PG_KEYWORDS = {
  host = true, hostaddr = true, port = true, dbname = true, user = true, password = true,
  passfile = true, service = true, options = true, application_name = true,
  connect_timeout = true, sslmode = true, target_session_attrs = true, client_encoding = true,
  channel_binding = true, gssencmode = true, sslrootcert = true,
}

-- The error stored with a job failed back at shutdown.
local SHUTDOWN_MESSAGE = "shutdown"

-- The error stored with a job whose handler ran past its timeout (seconds).
local TIMEOUT_MESSAGE = "timeout: handler ran longer than %g s"

-- How many Lua instructions a handler under a timeout runs between two
-- looks at the clock (the count of its hook).
local TIMEOUT_CHECK_EVERY = 1000

-- ===========================================================================
-- Options
-- ===========================================================================

--- Raise a bad-argument error for pool.run's options, positioned at the
-- caller of pool.run (level 4: bad, check_options, pool.run, its caller).
-- @tparam string msg what is wrong
-- @raise always: "bad argument #1 to 'lease.pool.run' (msg)"
local function bad(msg)
  error("bad argument #1 to 'lease.pool.run' (" .. msg .. ")", 4)
end

--- Raise unless fn has no upvalue but _ENV (it moves to other threads as code).
-- @tparam string name the option's name
-- @tparam function fn its value
-- @raise "bad argument #1 to 'lease.pool.run' (NAME must have no upvalue but _ENV ...)",
-- or "(cannot copy a C function at NAME)" for a C function (no thread can
-- take one; every Lua version says it alike)
local function check_movable(name, fn)
  if debug.getinfo(fn, "S").what == "C" then
    error("bad argument #1 to 'lease.pool.run' (cannot copy a C function at " .. name .. ")", 4)
  end
  for i = 1, math.huge do
    local up = debug.getupvalue(fn, i)
    if up == nil then break end
    if up ~= "_ENV" then
      error("bad argument #1 to 'lease.pool.run' (" .. name .. " must have no upvalue but _ENV"
        .. " (it runs in other threads), has '" .. up .. "': pass values through args, or use"
        .. " a worker file)", 4)
    end
  end
end

--- Whether x is a finite number >= 0.
-- @param x any value
-- @treturn boolean
local function seconds(x)
  return type(x) == "number" and x >= 0 and x < math.huge
end

--- Check pool.run's options and fill in the defaults.
-- @tparam table o the options as pool.run documents them
-- @treturn table a new table: the options with defaults filled in
-- @raise "bad argument #1 to 'lease.pool.run' (...)" naming the option
local function check_options(o)
  if type(o) ~= "table" then bad("options must be a table, got " .. type(o)) end
  if getmetatable(o) ~= nil then
    bad("options must be a plain table, without a metatable (options are read from the table's own fields)")
  end
  for k, v in pairs(o) do
    local want = KNOWN[k]
    if k == "attempts" then
      bad("unknown option 'attempts': how often a job is tried is its own max_attempts (db:enqueue)")
    end
    if not want then bad("unknown option '" .. tostring(k) .. "'") end
    if want ~= true and type(v) ~= want then
      bad(string.format("%s must be a %s, got %s", k, want, type(v)))
    end
  end
  local c = {}
  for k, v in pairs(o) do c[k] = v end
  for k, v in pairs(DEFAULTS) do if c[k] == nil then c[k] = v end end
  if not c.db or c.db == "" then bad("db must be a non-empty string") end
  if (c.worker == nil) == (c.handler == nil) then bad("give exactly one of worker and handler") end
  if c.handler then
    local handler, hooks, why = pool.worker_module(c.handler)
    if not handler then
      bad("handler must be a function or a table {handler = fn, on_start = fn, ...}: it " .. why)
    end
    check_movable("handler", handler)
    for name, fn in pairs(hooks or {}) do check_movable("handler." .. name, fn) end
  end
  if not compat.is_integer(c.workers) or c.workers < 1 or c.workers > 256 then
    bad("workers must be an integer from 1 to 256")
  end
  local now = require("lease").now()
  if not (c.ttl > 0 and c.ttl < math.huge and now + c.ttl > now) then
    bad("ttl must be a finite number of seconds > 0, large enough to change lease.now()")
  end
  if not (c.poll > 0 and c.poll < math.huge) then bad("poll must be a finite number of seconds > 0") end
  if c.queue == "" then bad("queue must be a non-empty string") end
  if not seconds(c.shutdown_grace) then bad("shutdown_grace must be a finite number of seconds >= 0") end
  if not seconds(c.drain_wait) then bad("drain_wait must be a finite number of seconds >= 0") end
  if c.timeout ~= nil and not (c.timeout > 0 and c.timeout < math.huge) then
    bad("timeout must be a finite number of seconds > 0")
  end
  if not compat.is_integer(c.batch) or c.batch < 1 or c.batch > 1000000 then
    bad("batch must be an integer from 1 to 1000000")
  end
  if c.decode ~= nil and c.decode ~= "json" then bad("decode must be \"json\" or nil") end
  if c.owner == "" then bad("owner must be a non-empty string") end
  if c.out ~= nil then
    -- a file, or any value whose write method takes strings (looked up as
    -- out:write is, so a file's metatable counts)
    local ok, write = pcall(function() return c.out.write end)
    if not ok or type(write) ~= "function" then
      bad("out must be a file or have a write method, got " .. type(c.out))
    end
  end
  if c.backoff then
    check_movable("backoff", c.backoff)
    local ok, d = pcall(c.backoff, 1)
    if not ok or not seconds(d) then
      bad("backoff(1) must return a finite number of seconds >= 0, "
        .. (ok and ("returned " .. tostring(d)) or ("raised " .. tostring(d))))
    end
  end
  return c
end

local HOOK_NAMES = {}
for _, name in ipairs(pool.HOOKS) do HOOK_NAMES[name] = true end

--- Read a worker module: the handler function itself, or a table
-- `{handler = fn, on_start = fn, on_success = fn, on_failure = fn,
-- on_discard = fn, on_refusal = fn}` (the hooks optional, see pool.HOOKS).
-- The table's other fields are the module's own and left alone, but a
-- field named on_... that is not a hook is refused (a misspelt hook).
-- @param mod what a worker file returned, or pool.run's handler option
-- @treturn function|nil the handler, or nil when mod is neither form
-- @treturn table|nil the hooks given (name -> function), nil when none
-- @treturn string|nil when mod is neither form, what is wrong with it:
-- "is a number", "is a table without a handler function (its field
-- handler is nil)", "is a table with the unknown hook on_sucess (...)",
-- "is a table whose field on_start is a string, not a function"
function pool.worker_module(mod)
  if type(mod) == "function" then return mod end
  if type(mod) ~= "table" then return nil, nil, "is a " .. type(mod) end
  if type(mod.handler) ~= "function" then
    return nil, nil, "is a table without a handler function (its field handler is "
      .. type(mod.handler) .. ")"
  end
  local hooks
  for k, v in pairs(mod) do
    if type(k) == "string" and k:sub(1, 3) == "on_" then
      if not HOOK_NAMES[k] then
        return nil, nil, "is a table with the unknown hook " .. k .. " (known: "
          .. table.concat(pool.HOOKS, ", ") .. ")"
      end
      if type(v) ~= "function" then
        return nil, nil, "is a table whose field " .. k .. " is a " .. type(v) .. ", not a function"
      end
      hooks = hooks or {}
      hooks[k] = v
    end
  end
  return mod.handler, hooks
end

--- The backend a path opens, as the engine tells them apart: "pg" for a
-- PostgreSQL connection string (`postgresql://`, `postgres://`, or libpq's
-- keyword form `host=... dbname=...`), else "sqlite".
-- @tparam string path the pool's db option
-- @treturn string "pg" or "sqlite"
function pool.backend(path)
  if path:find("^postgresql://") or path:find("^postgres://") then return "pg" end
  local word = path:match("^[ \t]*([a-z_]+)[ \t]*=")
  return (word and PG_KEYWORDS[word]) and "pg" or "sqlite"
end

--- Whether a worker waits out an error and goes on: a database error whose
-- code (`[ioerr]` ... before its `(file "...")`) pool.RETRIED lists for
-- the backend.
-- @param err the error value a database call raised
-- @tparam string backend "pg" or "sqlite" (pool.backend)
-- @treturn boolean
function pool.retried(err, backend)
  if type(err) ~= "string" then return false end
  local code = err:match("%[(%w+)%] %(file \"")
  return code ~= nil and pool.RETRIED[backend][code] == true
end

--- The owner name of a worker: "<owner>-<n>" when the pool was given an
-- owner, else "<host>:<pid>:<n>", unique per process (two pools in one
-- process share it only if they share a file and run at once: give one an
-- owner).
-- @tparam table cfg the checked options
-- @tparam integer index the worker's number, from 1
-- @treturn string the owner name
function pool.owner_name(cfg, index)
  if cfg.owner then return cfg.owner .. "-" .. index end
  local lease = require("lease")
  return lease.hostname() .. ":" .. lease.pid() .. ":" .. index
end

-- ===========================================================================
-- One worker thread.  Its state is one table w:
--   w.db (handle), w.owner (string), w.cfg (checked options),
--   w.handler (function), w.events (channel: progress events when
--   cfg.progress, and the job under a timeout; nil in lease.testing's
--   drain), w.stop (channel: one message asks it to stop),
--   w.st (the counters), w.claim_opts (claim_next's opts), w.now (lease.now),
--   w.monotonic (lease.monotonic), w.covered (while its handler runs, the
--   job whose lease outlast renewed to outlive its timeout),
--   w.spare (the tables handle_batch fills for complete_many),
--   w.pending (while a complete of results is under way, and after it
--   raised an error the worker waits out: `{results = complete_many's
--   list, jobs = the job of each}`, see settle), w.next and
--   w.next_at (the job handle_one's complete_claim_next took, or the batch
--   store_batch's complete_many_claim_next took, and when).
-- ===========================================================================

--- Fill st with a worker's zeroed counters and empty lists.
-- @tparam table st the table to fill (the caller keeps it, so what it
-- counted survives the worker's error)
-- @treturn table st
local function new_stats(st)
  for _, k in ipairs(pool.COUNTERS) do st[k] = 0 end
  st.max_fence = 0
  st.completed, st.errors, st.discarded_ids, st.refusals = {}, {}, {}, {}
  st.hook_messages, st.db_messages = {}, {}
  return st
end

--- Add one to a counter and, when the pool shows progress, send it as an
-- event.
-- @tparam table w the worker
-- @tparam string name one of pool.COUNTERS
-- @tparam[opt] integer k how many (default 1)
local function bump(w, name, k)
  w.st[name] = w.st[name] + (k or 1)
  if w.cfg.progress then w.events:send({ name, k or 1 }) end
end

--- The text of an error value, whatever it is (even its __tostring may raise).
-- @param err any value
-- @treturn string
local function error_text(err)
  local shown, text = pcall(tostring, err)
  if not shown or type(text) ~= "string" then text = "(an error object of type " .. type(err) .. ")" end
  return text
end

--- Call one of the worker module's hooks (pool.HOOKS), if it gave it, with
-- a new table describing the job and the event; a hook that raises is
-- counted and its message kept (up to MAX_ERRORS per worker), and the
-- caller goes on as if it had returned.
-- @tparam table w the worker (w.hooks: name -> function, or nil)
-- @tparam string name the hook, "on_start" ... "on_refusal"
-- @tparam table job the job (id, fence, queue, priority, attempt, max_attempts)
-- @tparam[opt] table extra the event's own fields, copied into the table
local function hook(w, name, job, extra)
  local fn = w.hooks and w.hooks[name]
  if not fn then return end
  local ev = { event = name:sub(4), id = job.id, queue = job.queue, priority = job.priority,
               attempt = job.attempt, max_attempts = job.max_attempts, fence = job.fence,
               owner = w.owner }
  for k, v in pairs(extra or {}) do ev[k] = v end
  local ok, err = pcall(fn, ev)
  if ok then return end
  bump(w, "hook_errors")
  local msgs = w.st.hook_messages
  if #msgs < (w.messages_kept or MAX_ERRORS) then
    msgs[#msgs + 1] = tostring(job.id) .. " " .. name .. ": " .. error_text(err)
  end
end

--- Record a write the engine refused, with its reason, and call the
-- on_refusal hook.
-- @tparam table w the worker
-- @tparam string op "complete", "fail" or "renew"
-- @tparam string why the engine's reason word ("expired", "not_owner", ...)
-- @tparam table job the job whose write was refused
local function refusal(w, op, why, job)
  local key = op .. " " .. tostring(why)
  w.st.refusals[key] = (w.st.refusals[key] or 0) + 1
  if op == "renew" then bump(w, "renew_refused") else bump(w, "refused") end
  hook(w, "on_refusal", job, { op = op, reason = why })
end

--- Whether the pool asked this worker to stop: a message on its stop
-- channel, or the channel closed.  The answer sticks.
-- @tparam table w the worker
-- @tparam[opt=0] number wait seconds to wait for the request
-- @treturn boolean
local function stop_asked(w, wait)
  if w.stopping then return true end
  local msg, why = w.stop:recv(wait or 0)
  if msg ~= nil or why == "closed" then w.stopping = true end
  return w.stopping == true
end

--- Load the worker module: cfg.handler, or what the file cfg.worker
-- returns (see pool.worker_module).
-- @tparam table cfg the checked options
-- @treturn function the handler
-- @treturn table|nil its hooks (name -> function), nil when none
-- @raise the file's load or run error, or "<file> must return a handler
-- function, returned <type>", or "<file> must return a handler function or
-- a table {handler = fn, ...}: it is a table ..."
local function load_handler(cfg)
  if not cfg.worker then return pool.worker_module(cfg.handler) end
  local mod = dofile(cfg.worker)
  local handler, hooks, why = pool.worker_module(mod)
  if not handler then
    if type(mod) ~= "table" then
      error(cfg.worker .. " must return a handler function, returned " .. type(mod), 0)
    end
    error(cfg.worker .. " must return a handler function or a table {handler = fn, ...}: it "
      .. why, 0)
  end
  return handler, hooks
end

--- The makers of a job's methods, made on first use (most handlers call
-- neither): each takes the worker and the job and returns the function.
local job_methods = {}

--- Make job.heartbeat: a function that renews the lease when a third of
-- the ttl (seconds) has passed since the claim or the last renewal, cheap
-- to call often; it returns true while the lease is held, or false and the
-- engine's reason when the renewal was refused, and raises the database
-- error of db:renew.
-- @tparam table w the worker
-- @tparam table job the job (id, fence, claimed_at)
-- @treturn function heartbeat() -> boolean[, string]
function job_methods.heartbeat(w, job)
  local lease = require("lease")
  local cfg, db, owner = w.cfg, w.db, w.owner
  local id, fence, last_renew = job.id, job.fence, job.claimed_at
  return function()
    -- a job whose lease was made to outlast its timeout's failure needs no renewal
    if w.covered == job then return true end
    local now = lease.now()
    if now - last_renew < cfg.ttl / 3 then return true end
    local ok, why = db:renew(id, owner, fence, db:server_now(), cfg.ttl)
    if ok then
      bump(w, "renewed")
      last_renew = now
    else
      refusal(w, "renew", why, job)
    end
    return ok, why
  end
end

--- Make job.with_lease: a function that runs fn(tx) inside one transaction
-- holding this job's lease (see db:with_lease), so the handler's own rows
-- commit only while it holds; it returns as db:with_lease (true and fn's
-- results, or false and a reason) and raises fn's error (rolled back) or
-- the database error of db:with_lease.
-- @tparam table w the worker
-- @tparam table job the job (id, fence)
-- @treturn function with_lease(fn)
function job_methods.with_lease(w, job)
  local db, owner, id, fence = w.db, w.owner, job.id, job.fence
  return function(fn)
    return db:with_lease(id, owner, fence, db:server_now(), fn)
  end
end

--- The metatable of a worker's jobs: owner, ttl and args are the worker's;
-- job.heartbeat and job.with_lease are made when the handler first reads
-- them, and kept in the job.
-- @tparam table w the worker
-- @treturn table the metatable
local function job_meta(w)
  local shared = { owner = w.owner, ttl = w.cfg.ttl, args = w.cfg.args }
  return { __index = function(job, k)
    local v = shared[k]
    if v ~= nil then return v end
    local make = job_methods[k]
    if not make then return nil end
    local f = make(w, job)
    rawset(job, k, f)
    return f
  end }
end

--- The job table a handler gets: the table claim_next returned, which the
-- pool keeps as its record of the job (no copy per job).
-- @tparam table w the worker (w.job_mt: its jobs' metatable)
-- @tparam table c what claim_next returned for the job: `{id=, fence=,
-- payload=, queue=, priority=, attempt=, max_attempts=}`
-- @tparam number at lease.now() (seconds) read just before the claim: the
-- lease ran from then at the latest
-- @treturn table c, with claimed_at (at) and, through its metatable,
-- owner, ttl, args, heartbeat and with_lease
local function new_job(w, c, at)
  c.claimed_at = at
  return setmetatable(c, w.job_mt)
end

--- Call a handler on a job: the frame a timeout's hook looks for on the
-- stack (it stops only code running under this call).  Not a tail call,
-- so that the frame stays while the handler runs.
-- @tparam function handler the handler
-- @tparam table job the job
-- @return the handler's first result
local function under_timeout(handler, job)
  local result = handler(job)
  return result
end

--- Run the handler on a job, protected, under a timeout: a count hook
-- (debug.sethook, every TIMEOUT_CHECK_EVERY instructions) reads the
-- monotonic clock and, once `limit` seconds have passed since the start,
-- raises the timeout's error in the handler; then again at every
-- instruction while the handler runs, so a handler's own pcall in a Lua
-- loop cannot keep it going.
-- It raises where under_timeout is on the stack, or in a coroutine (one the
-- handler made inherits the hook; the pool runs none of its own), never in
-- the pool's code around the call.  The hook set before (a Lua function)
-- is set again after, so none of this job's survives into the next job; a
-- hook the handler sets replaces this one for the rest of its job (no
-- timeout then).
-- @tparam table w the worker
-- @tparam table job the job
-- @tparam number limit seconds, > 0
-- @treturn boolean whether the handler returned (false: it raised, or ran out of time)
-- @return its result, or its error
-- @treturn boolean whether it ran out of time: it was stopped, or it returned
-- after its time (from a call into C); then the result is the timeout's text
local function run_limited(w, job, limit)
  local clock, getinfo, running = w.monotonic, debug.getinfo, coroutine.running
  local deadline = clock() + limit
  local message = string.format(TIMEOUT_MESSAGE, limit)
  local fired, late = false, false
  local check   -- the count hook
  check = function()
    if not late then
      if clock() < deadline then return end
      late = true
      debug.sethook(check, "", 1)   -- from now on at every instruction of this coroutine
    end
    local co, main = running()
    local inside = co ~= nil and not main   -- a coroutine: the handler's own
    local level = 2
    while not inside do
      local info = getinfo(level, "f")
      if not info then return end   -- the handler has returned: the pool's code runs
      inside = info.func == under_timeout
      level = level + 1
    end
    fired = true
    error(message, 0)
  end
  local luajit = rawget(_G, "jit")
  if luajit and not w.jit_off then
    -- LuaJIT runs no hook in compiled code: this worker's state runs
    -- interpreted from its first job under a timeout on
    luajit.off()
    luajit.flush()
    w.jit_off = true
  end
  local old_hook, old_mask, old_count = debug.gethook()
  debug.sethook(check, "", TIMEOUT_CHECK_EVERY)
  local ok, result = pcall(under_timeout, w.handler, job)
  if type(old_hook) == "function" then debug.sethook(old_hook, old_mask, old_count)
  else debug.sethook() end
  -- a handler that came back from C past its time ran too long all the same
  if fired or clock() >= deadline then return false, message, true end
  return ok, result, false
end

--- Make the lease of a job under a timeout outlast the failure the pool
-- writes after it.  That failure comes by the timeout plus the grace:
-- the worker writes it when its handler stops or comes back from C, and
-- the pool (supervise, fail_overdue) writes it itself at the timeout plus
-- shutdown_grace for a handler still blocked then.  A worker without a
-- pool around it (lease.testing's drain) has no such grace: its failure
-- comes when the handler stops.  When less than that time plus half the
-- ttl is left of the lease, renew it (db:renew, fenced) for that time plus
-- the ttl, so that the failure is still the holder's write and a worker
-- that dies holds the job no longer than that; job.heartbeat() then has
-- nothing to do for this job.
-- @tparam table w the worker
-- @tparam table job the job (id, fence, claimed_at)
-- @tparam number limit the job's timeout, seconds
-- @treturn boolean false when the renewal was refused (the lease is lost)
-- @raise the database error of db:renew
local function outlast(w, job, limit)
  local ttl = w.cfg.ttl
  local failed_by = limit   -- seconds from now to the timeout's failure at the latest
  if w.events then failed_by = limit + w.cfg.shutdown_grace end
  if job.claimed_at + ttl - w.now() >= failed_by + ttl / 2 then return true end
  local ok, why = w.db:renew(job.id, w.owner, job.fence, w.db:server_now(), failed_by + ttl)
  if not ok then
    refusal(w, "renew", why, job)
    return false
  end
  bump(w, "renewed")
  w.covered = job
  return true
end

--- Run the handler on a job, protected, decoding its payload first when
-- the pool was asked to, under the job's timeout (its own, else the
-- pool's; job.timeout says which applies).
-- @tparam table w the worker
-- @tparam table job the job (see new_job)
-- @treturn ?boolean true when it returned a string or nil; nil when it was
-- not run (the lease was lost before it started: nothing is stored)
-- @return its result, or the error's text
-- @treturn boolean whether it was stopped by its timeout
-- @raise the database error of db:renew (outlast)
local function call_handler(w, job)
  if w.cfg.decode == "json" then
    if job.payload == nil then
      return false, "payload is missing, and the pool decodes JSON"
    end
    -- lease.json.decode, protected: a payload nested deeper than the
    -- decoder's stack raises, and fails this job as any bad payload does
    local ok, data, err = pcall(require("lease.json").decode, job.payload)
    if not ok or err then return false, "payload is not JSON: " .. error_text(ok and err or data) end
    job.data = data
  end
  local limit = job.timeout or w.cfg.timeout
  local ok, result, timed_out
  if limit then
    job.timeout = limit
    if not outlast(w, job, limit) then return nil end
    -- the pool stops waiting for this worker once the timeout and the grace
    -- passed (a handler blocked inside C never sees the hook); a worker
    -- without a pool around it (lease.testing's drain) has no events
    local events = w.events
    if events then events:send({ "running", w.index, job.id, job.fence, w.monotonic() + limit, limit }) end
    ok, result, timed_out = run_limited(w, job, limit)
    if events then events:send({ "running", w.index, false }) end
    w.covered = nil
    if timed_out then return false, result, true end
  else
    ok, result = pcall(w.handler, job)
  end
  if not ok then return false, error_text(result) end
  if result ~= nil and type(result) ~= "string" then
    return false, "handler returned a " .. type(result) .. ", not a string or nil"
  end
  return true, result
end

--- The pool's backoff for a job that failed: the seconds cfg.backoff gives
-- for its attempt, or nil (the engine's backoff) when there is no such
-- function or it raised or returned anything but a finite number >= 0.
-- @tparam table w the worker
-- @tparam table job the job
-- @treturn number|nil seconds, or nil for the engine's backoff
-- @treturn string|nil what was wrong with the backoff function, when it was
local function pool_backoff(w, job)
  if not w.cfg.backoff then return nil end
  local ok, d = pcall(w.cfg.backoff, job.attempt)
  if ok and seconds(d) then return d end
  return nil, "backoff(" .. tostring(job.attempt) .. ") "
    .. (ok and ("returned " .. tostring(d) .. ", not a finite number of seconds >= 0")
           or ("raised " .. error_text(d)))
    .. "; the engine's backoff was used"
end

--- db:fail of a job the handler failed, retryable after d seconds (nil:
-- the engine's backoff).  A run_at now + d that the clock check refuses
-- (a delay so long it reads as another time unit) is a backoff that
-- failed: the complaint is added to text and the engine's backoff used.
-- @tparam table w the worker
-- @tparam table job the job
-- @tparam number now the time of the failure (the database's clock)
-- @tparam string text the error's text
-- @tparam[opt] number d the pool's backoff in seconds
-- @treturn string|nil db:fail's status
-- @treturn string|number db:fail's second value
-- @treturn string the text stored
-- @raise the database error of db:fail
local function fail_job(w, job, now, text, d)
  local ok, status, why = pcall(w.db.fail, w.db, job.id, w.owner, job.fence, now, text,
    d and { run_at = now + d })
  if ok then return status, why, text end
  if not d then error(status, 0) end
  if not tostring(status):find(": run_at %S+ is off by a factor") then error(status, 0) end
  text = text .. "; backoff(" .. tostring(job.attempt) .. ") returned " .. tostring(d)
    .. ", which the clock check refused; the engine's backoff was used"
  status, why = w.db:fail(job.id, w.owner, job.fence, now, text)
  return status, why, text
end

--- Record a handler error in the database with db:fail (the job comes back
-- after its backoff, or is discarded after its last attempt).  A backoff
-- function that fails is part of the same error: its complaint is added to
-- the text stored with the job and the engine's backoff is used.
-- @tparam table w the worker
-- @tparam table job the job
-- @tparam string text the error's text
-- @tparam[opt] boolean timed_out whether it was the job's timeout
-- @raise the database error of db:fail
local function handler_failed(w, job, text, timed_out)
  local st = w.st
  local d, bad_backoff = pool_backoff(w, job)
  if bad_backoff then text = text .. "; " .. bad_backoff end
  local status, why
  status, why, text = fail_job(w, job, w.db:server_now(), text, d)
  -- a timeout is counted by whoever stored it: this worker, or the pool
  -- that gave up waiting for it (fail_overdue), whose failure ended the
  -- lease and so refuses this one
  if status or not timed_out then
    bump(w, "handler_errors")
    if timed_out then bump(w, "timed_out") end
    if #st.errors < MAX_ERRORS then st.errors[#st.errors + 1] = job.id .. ": " .. text end
  end
  if status == "retryable" then
    bump(w, "retried")
    hook(w, "on_failure", job, { error = text, status = status, run_at = why })
  elseif status == "discarded" then
    st.discarded_ids[#st.discarded_ids + 1] = job.id
    bump(w, "discarded")
    hook(w, "on_failure", job, { error = text, status = status })
    hook(w, "on_discard", job, { error = text })
  else
    refusal(w, "fail", why, job)
  end
end

--- Give a job this worker holds back to the queue at shutdown: failed with
-- "shutdown", the attempt not counted, claimable at once.
-- @tparam table w the worker
-- @tparam table job the job (id, fence)
-- @raise the database error of db:fail
local function give_back(w, job)
  local status, why = w.db:fail(job.id, w.owner, job.fence, w.db:server_now(),
    SHUTDOWN_MESSAGE, { attempt = false })
  if status then bump(w, "shutdown") else refusal(w, "fail", why, job) end
end

--- Count one stored completion.
-- @tparam table w the worker
-- @tparam string id the job
local function stored(w, id)
  if w.cfg.completed then w.st.completed[#w.st.completed + 1] = id end
  bump(w, "done")
end

--- Note the highest fence seen (for the summary).
-- @tparam table w the worker
-- @tparam integer fence a fencing token this worker got
local function saw_fence(w, fence)
  if fence > w.st.max_fence then w.st.max_fence = fence end
end

--- Handle one claimed job: run the handler and store its result or its
-- error.  A result is stored with complete_claim_next, which claims the
-- worker's next job in the same transaction: that job is left in w.next
-- (and the time read just before its claim in w.next_at) for the next step.
-- @tparam table w the worker
-- @tparam table c the job as claim_next gave it
-- @tparam number at lease.now() (seconds) read just before the claim
-- @raise a database error
local function handle_one(w, c, at)
  saw_fence(w, c.fence)
  local job = new_job(w, c, at)
  hook(w, "on_start", job)
  local ok, result, timed_out = call_handler(w, job)
  if ok == nil then return end   -- its lease was lost before the handler started
  if not ok then return handler_failed(w, job, result, timed_out) end
  local next_at = w.now()
  -- kept until the complete returns: settle stores it again if it raises
  local p = w.one
  p.results[1].id, p.results[1].fence, p.results[1].result, p.jobs[1] = c.id, c.fence, result, job
  w.pending = p
  local done, why, id, _, next_job = w.db:complete_claim_next(c.id, w.owner, c.fence,
    w.db:server_now(), result, w.cfg.ttl, w.claim_opts)
  w.pending = nil
  if done then
    stored(w, c.id)
    hook(w, "on_success", job, { result = result })
  else
    refusal(w, "complete", why, job)
  end
  if id then w.next, w.next_at = next_job, next_at end
end

--- Store a batch's results with complete_many_claim_next, which claims the
-- worker's next batch in the same transaction: that batch is left in
-- w.next (and the time read just before its claim in w.next_at) for the
-- next step; once the pool asks to stop, with complete_many alone.
-- @tparam table w the worker
-- @tparam {table,...} results complete_many's list
-- @treturn boolean true when every result was stored
-- @treturn table|nil the refused positions and their reasons
-- @raise a database error
local function store_batch(w, results)
  if w.stopping then return w.db:complete_many(w.owner, w.db:server_now(), results) end
  local next_at = w.now()
  local all, refused, next_batch = w.db:complete_many_claim_next(w.owner, w.db:server_now(),
    results, w.cfg.ttl, w.claim_opts)
  if #next_batch > 0 then w.next, w.next_at = next_batch, next_at end
  return all, refused
end

--- Handle a batch of claimed jobs: run the handler on each, then store
-- every result in one complete_many_claim_next (store_batch).  Handler
-- errors go to db:fail one by one; once the pool asks to stop, the jobs not
-- started yet are given back.
-- @tparam table w the worker
-- @tparam {table,...} batch the jobs as claim_next(..., {n=}) gave them
-- @tparam number at lease.now() (seconds) read just before the claim
-- @raise a database error
local function handle_batch(w, batch, at)
  -- the entries of complete_many's list are the worker's own tables, reused
  -- from batch to batch (the handler never sees them)
  local results, spare = {}, w.spare
  local jobs = {}   -- the job of each entry of results
  for k, c in ipairs(batch) do
    saw_fence(w, c.fence)
    if k > 1 and stop_asked(w) then
      for r = k, #batch do give_back(w, batch[r]) end
      break
    end
    local job = new_job(w, c, at)
    hook(w, "on_start", job)
    local ok, result, timed_out = call_handler(w, job)
    if ok then
      local n = #results + 1
      jobs[n] = job
      local r = spare[n]
      if not r then
        r = {}
        spare[n] = r
      end
      r.id, r.fence, r.result = c.id, c.fence, result
      results[n] = r
    elseif ok == false then   -- nil: its lease was lost before the handler started
      handler_failed(w, job, result, timed_out)
    end
  end
  if #results == 0 then return end
  w.pending = { results = results, jobs = jobs }   -- until stored: see settle
  local all, refused = store_batch(w, results)
  w.pending = nil
  if all and not w.cfg.completed and not w.hooks then return bump(w, "done", #results) end
  for k, r in ipairs(results) do
    if all or not refused[k] then
      stored(w, r.id)
      hook(w, "on_success", jobs[k], { result = r.result })
    else
      refusal(w, "complete", refused[k], jobs[k])
    end
  end
end

--- Whether a draining worker is finished: nothing of its queue is
-- available or running, and no retry is due within cfg.drain_wait seconds.
-- Jobs scheduled for later (never tried yet), retries due later and
-- blocked jobs stay in the queue.  Reads only: counts, then (when retries wait) their run_at.
-- @tparam table w the worker
-- @treturn boolean
-- @raise a database error
local function drained(w)
  local now = w.db:server_now()
  local cfg = w.cfg
  local c = w.db:counts(now, cfg.queue)
  -- a blocked job (values another client stored that the engine cannot
  -- honour) counts as available or running, but no worker can take it
  if c.available + c.running > c.blocked then return false end
  if c.retryable == 0 then return true end
  local after = 0
  repeat
    local page = w.db:jobs({ status = "retryable", queue = cfg.queue, now = now, results = false,
                             limit = 1000, after = after })
    for _, j in ipairs(page) do
      if j.run_at <= now + cfg.drain_wait then return false end
      after = j.seq
    end
  until #page < 1000
  return true
end

--- In a `forever` pool, enqueue the jobs of the schedules that are due
-- (db:tick at the database's clock), before the worker claims: once per
-- poll interval, and as soon as the earliest next tick of the schedules
-- the last tick read comes (w.tick_at: that tick on the worker's clock,
-- w.now, so that the check costs no round trip to a server).
-- @tparam table w the worker
-- @raise a database error, as the claims' (the worker fails)
local function tick(w)
  local t = w.now()
  if w.ticked and t - w.ticked < w.cfg.poll and not (w.tick_at and t >= w.tick_at) then return end
  w.ticked = t
  local now = w.db:server_now()
  w.db:tick(now)
  local at
  for _, sc in ipairs(w.db:schedules()) do
    if not at or sc.next_at < at then at = sc.next_at end
  end
  w.tick_at = at and t + (at - now)
end

--- Note why the worker's claims hand out nothing but its queue has jobs
-- ("paused", "limited", or nil when it takes jobs again), sent to the
-- progress line when it changes.
-- @tparam table w the worker
-- @tparam ?string word the reason
local function holding(w, word)
  if w.held_by == word then return end
  w.held_by = word
  if w.cfg.progress then w.events:send({ "holding", w.index, word or false }) end
end

--- Wait for a job of the worker's queue (db:wait): until one is due, a
-- write wakes the worker (an enqueue, release, retry, resume... on any
-- handle of the database), the next tick of the schedules comes (a
-- forever pool's w.tick_at), or cfg.poll seconds passed, in waits of at
-- most WAIT_SLICE seconds with a look at the stop channel after each.
-- A draining worker also looks after each whether the queue is drained:
-- the writes that end its last jobs (a cancel, another worker's
-- complete) wake no waiter, and one may have taken the jobs a resume
-- woke it for between its claim and its wait.
-- @tparam table w the worker
-- @treturn boolean false when the pool asked the worker to stop
-- @raise a database error
local function wait_poll(w)
  local cfg = w.cfg
  local t0 = w.now()
  local limit = cfg.poll
  -- a forever pool wakes for the next tick of its schedules (tick)
  if w.tick_at then
    local due = w.tick_at - t0
    if due < limit then limit = due > 0 and due or 0 end
  end
  local left = limit
  while true do
    local woken = w.db:wait(cfg.queue, left < WAIT_SLICE and left or WAIT_SLICE)
    if stop_asked(w) then return false end
    if woken or not cfg.forever and drained(w) then return true end
    left = limit - (w.now() - t0)
    if left <= 0 then return true end
  end
end

--- Wait for a job of the worker's queue, as wait_poll; a draining worker
-- waits at most DRAIN_SLICE, then looks whether the queue is drained.
-- @tparam table w the worker
-- @treturn boolean false when the pool asked the worker to stop
-- @raise a database error
local function idle(w)
  local cfg = w.cfg
  if not cfg.forever then
    w.db:wait(cfg.queue, cfg.poll < DRAIN_SLICE and cfg.poll or DRAIN_SLICE)
    return not stop_asked(w)
  end
  return wait_poll(w)
end

--- Take one step: claim the next job (or batch) and handle it, or wait.
-- @tparam table w the worker
-- @treturn boolean false when the worker should stop
-- @raise a database error
local function step(w)
  local cfg = w.cfg
  local c = w.next
  w.next = nil
  if stop_asked(w) then   -- claimed with the last completion, never started
    if c and cfg.batch > 1 then
      for _, j in ipairs(c) do give_back(w, j) end
    elseif c then
      give_back(w, c)
    end
    return false
  end
  if c and cfg.batch > 1 then
    handle_batch(w, c, w.next_at)
    return true
  elseif c then
    handle_one(w, c, w.next_at)
    return true
  end
  if cfg.forever then tick(w) end
  local at = w.now()
  local why
  if cfg.batch > 1 then
    local batch
    batch, why = w.db:claim_next(w.owner, w.db:server_now(), cfg.ttl, w.claim_opts)
    if #batch > 0 then
      holding(w, nil)
      handle_batch(w, batch, at)
      return true
    end
  else
    local id, fence
    id, fence, c = w.db:claim_next(w.owner, w.db:server_now(), cfg.ttl, w.claim_opts)
    if id then
      holding(w, nil)
      handle_one(w, c or { id = id, fence = fence }, at)
      return true
    end
    why = fence
  end
  local held = (why == "paused" or why == "limited") and why or nil
  holding(w, held)
  if not cfg.forever and drained(w) then return false end
  -- a queue at its limit has no job due until a slot frees (a lease of
  -- the queue ends, a claim leaves the rate's window), and a paused queue
  -- none until its resume: db:wait ends at either, so the worker waits up
  -- to poll, draining or not (a draining one ends once the queue is
  -- drained, wait_poll)
  if held == "limited" then return wait_poll(w) end
  if held == "paused" then return wait_poll(w) end
  return idle(w)
end

--- Store again the results whose complete raised an error the worker
-- waited out (w.pending), with complete_many: that error leaves unknown
-- whether the first one committed.  Each result the engine stores now, or
-- refuses as "done" while the job holds this worker's owner and fence
-- (only this lease's complete could have ended it so: a new claim raises
-- the fence), is counted stored; any other refusal (the lease expired
-- meanwhile, the job went to another worker) is counted as one.  Nothing
-- is counted until every answer is in, so an error here leaves w.pending
-- to settle again.
-- @tparam table w the worker
-- @raise a database error
local function settle(w)
  local p = w.pending
  if not p then return end
  local db = w.db
  local all, refused = db:complete_many(w.owner, db:server_now(), p.results)
  local why = {}
  for k, r in ipairs(p.results) do
    local reason = not all and refused[k] or nil
    if reason == "done" then
      local st = db:state(r.id)
      if st and st.fence == r.fence and st.owner == w.owner then reason = nil end
    end
    why[k] = reason
  end
  w.pending = nil
  for k, r in ipairs(p.results) do
    if why[k] then refusal(w, "complete", why[k], p.jobs[k])
    else
      stored(w, r.id)
      hook(w, "on_success", p.jobs[k], { result = r.result })
    end
  end
end

--- One turn of a worker's loop: settle what an earlier error left (see
-- settle), then take a step.
-- @tparam table w the worker
-- @treturn boolean false when the worker should stop
-- @raise a database error
local function turn(w)
  if w.pending then settle(w) end
  return step(w)
end

--- How long a worker waits after its n-th database error in a row (see
-- pool.RETRY_MAX): about cfg.poll doubled n-1 times, at most
-- pool.RETRY_MAX, less a random part of up to a half, which differs from
-- worker to worker even where math.random is not seeded.
-- @tparam table w the worker (cfg.poll, index)
-- @tparam integer n the errors in a row, from 1
-- @treturn number seconds > 0
local function retry_wait(w, n)
  local d = w.cfg.poll * 2 ^ (n - 1)
  if d > pool.RETRY_MAX then d = pool.RETRY_MAX end
  local u = (math.random() + (w.index or 0) * 0.6180339887) % 1
  return d * (1 - u / 2)
end

--- Count a database error the worker waits out, keep its text (up to
-- MAX_ERRORS per worker, on one line) and tell the pool, which writes it
-- to its `out` (the worker's next try comes after `wait` seconds).
-- @tparam table w the worker
-- @param err the error
-- @tparam number wait seconds until the next try
local function db_error(w, err, wait)
  local text = error_text(err):gsub("%s*\n%s*", " ")
  bump(w, "db_errors")
  local msgs = w.st.db_messages
  if #msgs < MAX_ERRORS then msgs[#msgs + 1] = text end
  if w.events then w.events:send({ "db_error", w.index, text, wait }) end
end

-- What a worker raises for an error it does not wait out: the text with
-- the traceback of where it was raised, for spawn_workers to pass on as is.
local TRACED = {}

--- The body of one worker thread (internal: pool.run runs it through
-- lease.thread.spawn).  It takes steps until the queue is drained (or,
-- `forever`, until the pool asks it to stop).  A step that raises a
-- database error of pool.RETRIED (a lost PostgreSQL connection, a busy
-- database) does not end it: the error is counted (db_errors) and reported,
-- the worker waits (retry_wait; a request to stop ends the wait and the
-- worker) and goes on, its handle connecting again at its next call.  The
-- jobs it held are not lost: a result whose complete raised is stored again
-- (settle), and any other job's lease expires and the job is claimed again.
-- @tparam table cfg pool.run's checked options
-- @tparam integer index the worker's number (see pool.owner_name)
-- @param events a lease.thread channel: `{counter, k}` progress events when
-- cfg.progress, and `{"db_error", index, text, seconds}` for each error waited out
-- @param stop a lease.thread channel: a message asks the worker to stop
-- @tparam table st receives the counters (pool.COUNTERS, max_fence) and the
-- lists completed, errors, discarded_ids, refusals ("op reason" -> count),
-- hook_messages, db_messages
-- @treturn table st
-- @raise any other error (a database error not in pool.RETRIED, the worker
-- file's error), as a table `{text =}` holding its traceback; st keeps what
-- was counted before it.  Handler errors go to db:fail instead.
function pool._worker(cfg, index, events, stop, st)
  local lease = require("lease")
  local backend = pool.backend(cfg.db)
  local function traced(err)
    if pool.retried(err, backend) then return err end
    return setmetatable({ text = debug.traceback(error_text(err), 2) }, TRACED)
  end
  return compat.using(lease.open(cfg.db, cfg.open), function(db)
    -- the worker file's error names the file and line: the pool's own
    -- frames would add nothing to it
    local made, w = pcall(pool._new_worker, db, cfg, pool.owner_name(cfg, index), lease.now, st)
    if not made then error(setmetatable({ text = error_text(w) }, TRACED), 0) end
    w.index, w.events, w.stop = index, events, stop
    local in_row = 0   -- database errors in a row
    while true do
      local ok, more = xpcall(function() return turn(w) end, traced)
      if ok then
        if not more then break end
        in_row = 0
      elseif getmetatable(more) == TRACED then
        error(more, 0)
      else
        in_row = in_row + 1
        local wait = retry_wait(w, in_row)
        db_error(w, more, wait)
        if stop_asked(w, wait) then
          -- a last try at the results in doubt; else their leases expire
          pcall(settle, w)
          break
        end
      end
    end
    return st
  end)
end

--- A worker's state over an open handle (internal: pool._worker and
-- lease.testing's drain build theirs with it): the handler and hooks
-- loaded (load_handler), the counters zeroed in st.
-- @param db the worker's handle; every `now` the worker passes to the
-- database is db:server_now()
-- @tparam table cfg checked options (ttl, queue, batch, completed, decode,
-- backoff, args, progress, timeout, and worker or handler)
-- @tparam string owner the worker's owner name
-- @tparam function now the local clock in seconds (heartbeat spacing, claimed_at)
-- @tparam table st receives the counters (see new_stats)
-- @treturn table the worker
-- @raise the worker file's error (see load_handler)
function pool._new_worker(db, cfg, owner, now, st)
  new_stats(st)
  local w = { db = db, owner = owner, cfg = cfg, now = now, spare = {}, st = st,
              one = { results = { {} }, jobs = {} },
              monotonic = require("lease").monotonic,
              claim_opts = { queue = cfg.queue, n = cfg.batch > 1 and cfg.batch or nil } }
  w.handler, w.hooks = load_handler(cfg)
  w.job_mt = job_meta(w)
  return w
end

--- Handle one claimed job as a pool worker does (internal, for
-- lease.testing): see handle_one.
pool._handle_one = handle_one

--- Store again the results of w.pending (internal, for the specs): see settle.
pool._settle = settle

-- ===========================================================================
-- The pool
-- ===========================================================================

--- Write text to out (pool.run's option) and flush it when out has a
-- flush method.  The progress and the notices are the pool's side output:
-- an out that raises loses them, and the pool goes on.
-- @param out a file, or a value with a write method
-- @tparam string text what to write
local function say(out, text)
  pcall(function()
    out:write(text)
    if out.flush then out:flush() end
  end)
end

--- Format a progress line: done/total, rate, refused, and why the
-- workers wait when their queue holds its jobs back.
-- @tparam integer done jobs done so far
-- @tparam integer total jobs in the queue
-- @tparam integer refused completions refused so far
-- @tparam number t seconds since the pool started
-- @tparam ?string held "paused" or "limited" when a worker waits on that
-- @treturn string the line, starting with "\r"
local function progress_line(done, total, refused, t, held)
  return string.format("\r%d/%d done  %.1f jobs/s  %d refused  %s", done, total,
    t > 0 and done / t or 0, refused, held and ("queue " .. held .. "  ") or "              ")
end

--- Start the worker threads; on a failure, stop those started, close the
-- channels and db and give SIGINT and SIGTERM their actions back.
-- @tparam table cfg the checked options
-- @param events the channel workers report on
-- @param stop the channel that asks workers to stop
-- @param db pool.run's handle, closed here before an error is raised
-- @treturn {lease.thread,...} the threads
-- @raise "bad argument #1 to 'lease.pool.run' (...)" for a value that
-- cannot be copied to a thread (level: pool.run's caller)
local function spawn_workers(cfg, events, stop, db)
  local thread = require("lease").thread
  -- what the worker threads get: everything but the progress stream
  local wcfg = {}
  for k, v in pairs(cfg) do if k ~= "out" then wcfg[k] = v end end
  local workers = {}
  for i = 1, cfg.workers do
    local ok, w = pcall(thread.spawn, function(c, n, ev, sp)
      require("lease")
      local st = {}
      -- a closure: xpcall passes no arguments on 5.1; _worker's own errors
      -- come as {text = message and traceback}
      local ran, err = xpcall(function() return require("lease.pool")._worker(c, n, ev, sp, st) end,
        function(e)
          if type(e) == "table" and type(e.text) == "string" then return e.text end
          return debug.traceback(e, 2)
        end)
      ev:send({ "exit", n })   -- even a failed worker says it ended
      return st, not ran and tostring(err) or nil
    end, wcfg, i, events, stop)
    if not ok then
      stop:close()
      for _, t in ipairs(workers) do t:join() end
      events:close()
      db:close()
      if cfg.signals then require("lease").on_signal({ "INT", "TERM" }, false) end
      error("bad argument #1 to 'lease.pool.run' (" .. tostring(w):gsub("^.-%((.*)%)$", "%1") .. ")", 3)
    end
    workers[i] = w
  end
  return workers
end

--- Fail back to the queue every job a worker of this pool still holds, with
-- "shutdown" (the attempt not counted): after the grace ran out, or on a
-- second signal.  A worker that finishes meanwhile is refused by its fence.
-- @tparam table cfg the checked options
-- @tparam table s the summary (its shutdown count grows)
-- @raise a database error
local function give_back_held(cfg, s)
  local lease = require("lease")
  local mine = {}
  for i = 1, cfg.workers do mine[pool.owner_name(cfg, i)] = true end
  compat.using(lease.open(cfg.db, cfg.open), function(db)
    local held, after = {}, 0
    repeat
      local page = db:jobs({ status = "running", queue = cfg.queue, results = false,
                             limit = 1000, after = after })
      for _, j in ipairs(page) do
        if mine[j.owner] then held[#held + 1] = j end
        after = j.seq
      end
    until #page < 1000
    for _, j in ipairs(held) do
      local status, why = db:fail(j.id, j.owner, j.fence, db:server_now(), SHUTDOWN_MESSAGE, { attempt = false })
      if status then s.shutdown = s.shutdown + 1
      else
        local key = "fail " .. tostring(why)
        s.refusals[key] = (s.refusals[key] or 0) + 1
      end
    end
  end)
end

--- Add one worker's counters and lists into the summary.
-- @tparam table s the summary
-- @tparam table st the worker's counters (see pool._worker)
local function merge(s, st)
  for _, k in ipairs(pool.COUNTERS) do s[k] = s[k] + st[k] end
  if st.max_fence > s.max_fence then s.max_fence = st.max_fence end
  if s.completed then
    for _, id in ipairs(st.completed) do s.completed[id] = (s.completed[id] or 0) + 1 end
  end
  for _, e in ipairs(st.errors) do s.errors[#s.errors + 1] = e end
  for _, e in ipairs(st.hook_messages) do s.hook_messages[#s.hook_messages + 1] = e end
  for _, e in ipairs(st.db_messages or {}) do s.db_messages[#s.db_messages + 1] = e end
  for _, id in ipairs(st.discarded_ids) do s.discarded_ids[#s.discarded_ids + 1] = id end
  for k, n in pairs(st.refusals) do s.refusals[k] = (s.refusals[k] or 0) + n end
end

--- Add to the summary the jobs of the queue the engine discarded while the
-- pool ran without a handler error: a claim found their last lease expired
-- (a handler that outlived its lease every time).  They are the queue's
-- discarded jobs with finished_at at or after `since` whose ids the workers
-- did not report; s.discarded and s.discarded_ids count them too, and
-- s.lease_expired says how many they were.
-- @param db an open handle on the pool's database
-- @tparam table cfg the checked options
-- @tparam number since db:server_now() read before the workers started
-- @tparam table s the summary
-- @raise a database error
local function add_expiry_discards(db, cfg, since, s)
  local known = {}
  for _, id in ipairs(s.discarded_ids) do known[id] = true end
  local after = 0
  repeat
    local page = db:jobs({ status = "discarded", queue = cfg.queue, results = false,
                           limit = 1000, after = after })
    for _, j in ipairs(page) do
      if not known[j.id] and j.finished_at and j.finished_at >= since then
        known[j.id] = true
        s.discarded_ids[#s.discarded_ids + 1] = j.id
        s.discarded = s.discarded + 1
        s.lease_expired = s.lease_expired + 1
      end
      after = j.seq
    end
  until #page < 1000
end

--- Fail the job of a worker whose handler ran past its timeout and the
-- grace after it (blocked inside C, where the hook cannot stop it): with
-- the timeout's error, counted as an attempt, fenced by the worker's owner
-- and fence (a refusal is counted as such).  The worker is no longer
-- waited for; its late writes are refused.
-- @param db an open handle on the pool's database
-- @tparam table cfg the checked options
-- @tparam table s the summary (its counters grow)
-- @tparam integer index the worker's number
-- @tparam table r the worker's job `{id, fence, limit}`
-- @raise a database error
local function fail_overdue(db, cfg, s, index, r)
  local status, why = db:fail(r.id, pool.owner_name(cfg, index), r.fence, db:server_now(),
    string.format(TIMEOUT_MESSAGE, r.limit))
  if not status then
    local key = "fail " .. tostring(why)
    s.refusals[key] = (s.refusals[key] or 0) + 1
    s.refused = s.refused + 1
    return
  end
  s.handler_errors, s.timed_out = s.handler_errors + 1, s.timed_out + 1
  if #s.errors < MAX_ERRORS then
    s.errors[#s.errors + 1] = r.id .. ": " .. string.format(TIMEOUT_MESSAGE, r.limit)
  end
  if status == "discarded" then
    s.discarded = s.discarded + 1
    s.discarded_ids[#s.discarded_ids + 1] = r.id
  else
    s.retried = s.retried + 1
  end
end

--- Watch the workers until every one has ended (or was given up on: its
-- job's timeout and then shutdown_grace passed with its handler still
-- running, see fail_overdue; one that comes back from that handler while
-- the pool still runs is waited for again), or the shutdown's grace ran
-- out, or a second signal came: show progress, and on the first signal ask
-- every worker to stop.
-- @tparam table cfg the checked options
-- @param events the channel workers report on
-- @param stop the channel that asks workers to stop
-- @tparam table s the summary (interrupted is set here)
-- @tparam table run `{total=, done_before=, t0=, signals0=, db=}`
-- @treturn table ended: worker index -> true for the workers that ended
-- @treturn boolean whether the pool stopped without waiting for the rest
-- @raise a database error (fail_overdue)
local function supervise(cfg, events, stop, s, run)
  local lease = require("lease")
  local ended, running = {}, cfg.workers
  local done, refused, shown = 0, 0, 0
  local holds = {}   -- worker index -> "paused" or "limited" while it waits on that
  local busy = {}    -- worker index -> its job under a timeout {id, fence, due (monotonic), limit}
  local gone = {}    -- worker index -> true once given up on (no longer counted in running)
  local out = cfg.out or io.stderr
  local deadline
  while running > 0 do
    local ev = events:recv(0.1)
    if ev then
      if ev[1] == "exit" then
        ended[ev[2]] = true
        busy[ev[2]] = nil
        if not gone[ev[2]] then running = running - 1 end
      elseif ev[1] == "running" then
        busy[ev[2]] = ev[3] and { id = ev[3], fence = ev[4], due = ev[5], limit = ev[6] } or nil
        if gone[ev[2]] and not ev[3] then   -- back from its handler while the pool runs: waited for again
          gone[ev[2]] = nil
          running = running + 1
        end
      elseif ev[1] == "done" then done = done + ev[2]
      elseif ev[1] == "refused" then refused = refused + ev[2]
      elseif ev[1] == "holding" then holds[ev[2]] = ev[3] or nil
      elseif ev[1] == "db_error" then
        say(out, string.format("%slease.pool: worker %d: %s; trying again in %.2f s\n",
          cfg.progress and "\n" or "", ev[2], compat.hex_escaped(tostring(ev[3])), ev[4]))
      end
    end
    for i, r in pairs(busy) do
      if not gone[i] and lease.monotonic() >= r.due + cfg.shutdown_grace then
        gone[i], busy[i] = true, nil
        running = running - 1
        fail_overdue(run.db, cfg, s, i, r)
      end
    end
    if cfg.signals then
      local n, name = lease.signals()
      n = n - run.signals0
      if n >= 1 and not deadline then
        s.interrupted = name
        deadline = lease.now() + cfg.shutdown_grace
        for _ = 1, cfg.workers do stop:send(true) end
      end
      if running > 0 and (n >= 2 or (deadline and lease.now() >= deadline)) then
        if cfg.progress then say(out, "\n") end
        return ended, true
      end
    end
    if cfg.progress and (lease.now() - shown >= 0.1 or running == 0) then
      say(out, progress_line(run.done_before + done, run.total, refused, lease.now() - run.t0,
        holds[next(holds)]))
      shown = lease.now()
    end
  end
  if cfg.progress then say(out, "\n") end
  return ended, false
end

--- Run a pool of worker threads over a queue of a database.
-- @tparam table options
--   db (string, required): the database file.
--   worker (string) or handler (function without upvalues), exactly one:
--     the handler, or a Lua file returning it; either may instead be a
--     table {handler = fn, on_start = fn, ...} with hooks (pool.HOOKS),
--     each function without upvalues.
--   workers (integer 1..256, default 4): worker threads.
--   queue (string, default "default"): the queue the workers claim from.
--   forever (boolean, default false): keep waiting for new jobs (a
--     service) instead of stopping once the queue is drained; each worker
--     also ticks the schedules (db:tick) once per poll interval and at
--     each schedule's next tick.
--   drain_wait (number, seconds, default pool.DRAIN_WAIT = 30): without
--     forever, how far ahead retries are waited for before stopping.
--   ttl (number, seconds, default 10): lease length; renewed by job.heartbeat().
--   poll (number, seconds, default 1): the longest wait when no job is
--     ready; an idle worker waits in db:wait, which a write that makes a
--     job claimable ends at once (see docs/pool.md), and a job's due time
--     (run_at, a retry's backoff) too, and a paused queue's resume; at a
--     queue's limit, the end of a lease (or a claim leaving the rate's
--     window) does.  A forever pool's wait also ends at the schedules'
--     next tick.
--   batch (integer, default 1): jobs claimed per claim_next; their results
--     are stored with one complete_many_claim_next, which claims the next
--     batch in the same transaction.
--   backoff (function without upvalues, attempt -> seconds): when a job
--     that failed comes back; default the engine's (lease.backoff).
--   decode ("json" or nil): decode each payload with lease.json.decode
--     into job.data (`null` is lease.json.null; a payload that does not
--     decode, or that nests deeper than the decoder can follow, is a
--     handler error).
--   signals (boolean, default true): catch SIGINT and SIGTERM while the pool
--     runs and shut down on them (the previous actions come back after).
--   shutdown_grace (number, seconds, default pool.SHUTDOWN_GRACE = 10): how
--     long running handlers get after the first signal.
--   progress (boolean, default false): a live line on io.stderr.
--   out (file, default io.stderr): where the progress line goes: a file, or
--     a value with a write method that takes strings.
--   args (any value the thread facility can copy): given to handlers as job.args.
--   open (table): options for lease.open in every worker.
--   owner (string): owner names "<owner>-<n>"; default "<host>:<pid>:<n>".
--   completed (boolean, default false): record every stored id for the
--     summary's completed table (kept in memory for the whole run).
--   timeout (number, seconds > 0, default none): how long a handler may run
--     on a job that has no timeout of its own (db:enqueue's opts.timeout);
--     past it the handler is stopped at its next Lua instruction and the job
--     failed with "timeout: handler ran longer than N s", an attempt.
-- @treturn table summary: the pool.COUNTERS (done; refused: completes and
-- fails refused as stale; renewed; renew_refused; retried; discarded: the
-- jobs of the queue discarded while the pool ran, after a handler error or
-- when a claim found their last lease expired; handler_errors; shutdown;
-- timed_out: the handler errors that were timeouts; db_errors: database
-- errors the workers waited out, see pool.RETRIED), db_messages (up to 10
-- per worker, their texts on one line each; each is also written to `out`
-- when it happens),
-- lease_expired (how many of discarded were the latter), refusals
-- ("complete expired", "renew not_owner", ... -> count), discarded_ids
-- (the discarded jobs' ids), max_fence, wall (seconds),
-- rate (jobs/s), workers, queue, completed ({id = times its result was
-- stored}; only with the option completed), errors (up to 10 handler messages per worker; every one is in
-- the database), hook_messages (up to 10 per worker, "<id> <hook>: <message>",
-- of the hooks that raised; hook_errors counts them), failed (messages of workers that died, e.g. on a database
-- error, and of a count at the end that failed), interrupted (the signal's
-- name, when one stopped the pool), unfinished (workers still running a
-- handler or a hook when the pool returned; their jobs were failed back and
-- their late writes are refused; their counters are in no field of the
-- summary, which the worker holds until it ends), counts (db:counts of the queue at the end;
-- nil when that count failed), blocked (jobs left that no worker can take:
-- another client stored values the engine cannot honour; nil with counts).
-- @raise "bad argument #1 to 'lease.pool.run' (...)" for bad options,
-- including values that cannot be copied to the worker threads; a database
-- error when the file cannot be opened; everything after the workers start
-- is reported in the summary.  A database error of pool.RETRIED (a lost
-- PostgreSQL connection) ends no worker: it waits (about poll, doubling,
-- at most pool.RETRY_MAX seconds) and goes on, so a draining pool runs
-- until the queue is drained, and a forever pool until a signal, however
-- often the server restarts; a signal also ends that wait.
function pool.run(options)
  local lease = require("lease")
  local cfg = check_options(options)
  local t0 = lease.now()
  -- Every worker's connection is opened by the worker itself; this one,
  -- opened first so that a bad path fails before any thread starts, counts
  -- the jobs for the progress line and, at the end, for the summary.  It
  -- never writes, so it stays out of the workers' group commit (a value
  -- that is not a boolean is left for lease.open to refuse).
  local own = {}
  for k, v in pairs(cfg.open or {}) do own[k] = v end
  if own.group_commit == nil or type(own.group_commit) == "boolean" then own.group_commit = false end
  local opened, db = pcall(lease.open, cfg.db, own)
  if not opened then
    -- a bad open option is pool.run's argument, named as one; a database
    -- error goes up as lease.open raised it
    local why = type(db) == "string" and db:match("bad argument #2 to 'lease%.open' %((.*)%)$")
    if why then error("bad argument #1 to 'lease.pool.run' (open: " .. why .. ")", 2) end
    error(db, 0)
  end
  local since = db:server_now()
  -- the count, protected; an error of pool.RETRIED (this handle's
  -- connection was lost too) is tried again after a short wait, three
  -- tries in all
  local backend = pool.backend(cfg.db)
  local function count()
    local counted, c
    for try = 1, 3 do
      counted, c = pcall(function() return db:counts(db:server_now(), cfg.queue) end)
      if counted or try == 3 or not pool.retried(c, backend) then break end
      lease.sleep(0.2 * try)
    end
    return counted, c
  end
  local total, done_before = 0, 0
  if cfg.progress then
    local counted, c = count()
    if not counted then
      db:close()
      error(c, 0)
    end
    total, done_before = c.total, c.completed
  end
  local events, stop = lease.thread.channel(), lease.thread.channel()
  -- caught before the first worker can claim: a signal while the others
  -- start stops the pool as any other does (spawn_workers gives the
  -- actions back when it fails)
  local signals0 = lease.signals()
  if cfg.signals then lease.on_signal({ "INT", "TERM" }) end
  local workers = spawn_workers(cfg, events, stop, db)
  local s = { max_fence = 0, completed = cfg.completed and {} or nil, errors = {}, failed = {},
              discarded_ids = {}, hook_messages = {}, db_messages = {},
              refusals = {}, workers = cfg.workers, queue = cfg.queue, unfinished = 0,
              lease_expired = 0 }
  for _, k in ipairs(pool.COUNTERS) do s[k] = 0 end
  -- the signals' previous actions come back however this ends
  local ok, err = pcall(function()
    local ended, cut = supervise(cfg, events, stop, s,
      { total = total, done_before = done_before, t0 = t0, signals0 = signals0, db = db })
    if cut then
      stop:close()   -- a worker that comes back from its handler stops at once
      give_back_held(cfg, s)
    end
    for i, w in ipairs(workers) do
      if ended[i] then
        local joined, st, werr = w:join()
        if not joined then st, werr = {}, st end
        if werr then s.failed[#s.failed + 1] = string.format("worker %d: %s", i, tostring(werr)) end
        if st.max_fence then merge(s, st) end   -- kept even when the worker failed
      else
        s.unfinished = s.unfinished + 1   -- left running: detached when collected
      end
    end
  end)
  if cfg.signals then lease.on_signal({ "INT", "TERM" }, false) end
  stop:close()
  events:close()
  if ok then
    local counted, c = count()
    if counted then
      s.counts, s.blocked = c, c.blocked   -- blocked: jobs left that no worker can take
      local listed, lerr = pcall(add_expiry_discards, db, cfg, since, s)
      if not listed then s.failed[#s.failed + 1] = "discarded jobs at the end: " .. tostring(lerr) end
    else s.failed[#s.failed + 1] = "counts at the end: " .. tostring(c) end
  end
  db:close()
  if not ok then error(err, 0) end
  s.wall = lease.now() - t0
  s.rate = s.wall > 0 and s.done / s.wall or 0
  return s
end

--- How many discarded ids pool.format lists one a line; the rest are
-- counted ("and N more"), as every one is in the database.
pool.SUMMARY_IDS = 5

--- The summary's lines for the workers that failed (s.failed, each
-- "worker N: text"), appended to lines: workers in a row that failed with
-- the same text (a worker file that does not load fails every worker) on
-- one line, "workers 1, 2, 3: text"; a text of several lines (a
-- traceback) as that many lines, the next ones indented under the first,
-- each through show.
-- @tparam {string,...} failed the failures, in worker order
-- @tparam function show string -> the text to show
-- @tparam {string,...} lines where the lines go
local function failed_lines(failed, show, lines)
  local i = 1
  while i <= #failed do
    local n, text = failed[i]:match("^worker (%d+): (.*)$")
    local who = { n }
    if not text then text, who = failed[i], nil end
    while who and failed[i + 1] and select(2, failed[i + 1]:match("^worker (%d+): (.*)$")) == text do
      i = i + 1
      who[#who + 1] = failed[i]:match("^worker (%d+):")
    end
    local head = who and ((#who > 1 and "workers " or "worker ") .. table.concat(who, ", ") .. ": ") or ""
    local prefix = "worker failed      " .. head
    for line in (text .. "\n"):gmatch("([^\n]*)\n") do
      lines[#lines + 1] = prefix .. show((line:gsub("^\t+", function(t) return ("  "):rep(#t) end)))
      prefix = "                   "
    end
    i = i + 1
  end
end

--- The summary as lines a person reads: the counters, then the first
-- pool.SUMMARY_IDS discarded ids, the handler errors, the database errors
-- waited out and the workers that failed.  When the count at the end
-- failed (s.counts nil), the lines from it say "unknown", never 0.  The
-- queue's name, ids and messages pass through show, so no byte of theirs
-- reaches a terminal raw.
-- @tparam table s a summary from pool.run
-- @tparam[opt] function show string -> the text to show (default:
-- compat.hex_escaped: printable ASCII as is, every other byte as \xNN)
-- @treturn string the lines, joined by "\n" (no final newline)
function pool.format(s, show)
  show = show or compat.hex_escaped
  local c = s.counts
  local lines = {
    string.format("workers            %d (queue %s)", s.workers, show(tostring(s.queue))),
    string.format("jobs done          %d%s", s.done, (s.unfinished or 0) > 0
      and string.format(" (and those of the %d workers cut off, which this summary cannot count)",
        s.unfinished) or ""),
    string.format("handler errors     %d (retried after backoff: %d, discarded: %d)%s",
      s.handler_errors, s.retried, s.discarded - (s.lease_expired or 0),
      (s.timed_out or 0) > 0 and string.format(", %d timed out", s.timed_out) or ""),
    string.format("jobs discarded     %d (%d when their last lease expired)",
      s.discarded, s.lease_expired or 0),
    string.format("refused as stale   %d completes and fails, %d renewals", s.refused, s.renew_refused),
    string.format("renewals           %d", s.renewed),
    string.format("max fence          %d", s.max_fence),
    c and string.format("blocked jobs       %d", c.blocked or 0)
      or "blocked jobs       unknown (the count at the end failed)",
    string.format("wall time          %.3f s", s.wall),
    string.format("throughput         %.1f jobs/s", s.rate),
    c and string.format("queue now          %d available, %d scheduled, %d running, %d retryable, "
      .. "%d completed, %d discarded, %d cancelled", c.available or 0, c.scheduled or 0,
      c.running or 0, c.retryable or 0, c.completed or 0, c.discarded or 0, c.cancelled or 0)
      or "queue now          unknown (the count at the end failed)",
  }
  if (s.db_errors or 0) > 0 then
    lines[#lines + 1] = string.format("database errors    %d (waited out; the workers went on)", s.db_errors)
  end
  for _, e in ipairs(s.db_messages or {}) do lines[#lines + 1] = "database error     " .. show(e) end
  if s.interrupted then
    lines[#lines + 1] = string.format("shutdown           on SIG%s: %d jobs given back to the queue%s",
      s.interrupted, s.shutdown, s.unfinished > 0
        and string.format(", %d workers still in a handler or hook were cut off", s.unfinished) or "")
  end
  local reasons = {}
  for k, n in pairs(s.refusals or {}) do reasons[#reasons + 1] = string.format("%s %d", k, n) end
  if #reasons > 0 then
    table.sort(reasons)
    lines[#lines + 1] = "refusals           " .. table.concat(reasons, ", ")
  end
  for k, id in ipairs(s.discarded_ids) do
    if k > pool.SUMMARY_IDS then
      lines[#lines + 1] = string.format("discarded          and %d more", #s.discarded_ids - k + 1)
      break
    end
    lines[#lines + 1] = "discarded          " .. show(id)
  end
  for _, e in ipairs(s.errors) do lines[#lines + 1] = "handler error      " .. show(e) end
  if (s.hook_errors or 0) > 0 then
    lines[#lines + 1] = string.format("hook errors        %d (the jobs' results and errors were stored)",
      s.hook_errors)
  end
  for _, e in ipairs(s.hook_messages or {}) do lines[#lines + 1] = "hook error         " .. show(e) end
  failed_lines(s.failed, show, lines)
  return table.concat(lines, "\n")
end

return pool
