--- A pool of native worker threads over one database file.
--
-- Each worker is an OS thread (`lease.thread`) with its own Lua state and
-- its own connection.  It loops: `claim_next` -> `handler(job)` ->
-- `complete` with the fence it got.  A handler keeps its lease alive by
-- calling `job.heartbeat()`, which renews it (at most every ttl/3 seconds,
-- so it can be called often).  A handler error releases the job so another
-- worker can take it at once; a complete, renew or release the engine
-- refuses (the lease was lost: the job expired and someone else took it) is
-- counted with its reason and the work is dropped, never stored.  A job is
-- tried on at most `attempts` claims (its fence counts them): when its
-- handler fails on the last one, or it comes up once more after every
-- attempt lost its lease, it is given up: completed with a nil result and
-- listed in the summary, so one bad input cannot keep the pool busy
-- forever.  Workers stop when no job is ready and none is held.
--
--   local pool = require("lease.pool")
--   local summary = pool.run{ db = "jobs.db", worker = "worker.lua", workers = 4 }
--
-- worker.lua returns the handler: `function(job) ... return result end`,
-- where job = `{ id =, fence =, owner =, ttl =, args =, heartbeat = fn,
-- with_lease = fn }`.
-- It is loaded once in each worker thread, so it may keep its own locals.
-- @module lease.pool
local pool = {}
local compat = require("lease.compat")

local DEFAULTS = { workers = 4, ttl = 10, poll = 0.05, attempts = 3 }
local KNOWN = {
  db = "string", worker = "string", handler = "function", workers = "number",
  ttl = "number", poll = "number", progress = "boolean", args = true,
  open = "table", owner = "string", out = true, attempts = "number",
}

--- The counters every worker keeps, summed over the workers into the
-- summary.  A worker bumps them through one function, which also sends an
-- event of the same name for the progress line.
-- @table COUNTERS
-- @field done completions stored (handler results)
-- @field refused completions the engine refused (the lease was lost)
-- @field renewed renewals stored by job.heartbeat()
-- @field renew_refused renewals the engine refused
-- @field released jobs released after a handler error
-- @field handler_errors handler errors (raised, or a result of the wrong type)
pool.COUNTERS = { "done", "refused", "renewed", "renew_refused", "released", "handler_errors" }

-- How many handler error messages each worker keeps for the summary.
local MAX_ERRORS = 10

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

--- Check pool.run's options and fill in the defaults.
-- @tparam table o the options as pool.run documents them
-- @treturn table a new table: the options with defaults filled in
-- @raise "bad argument #1 to 'lease.pool.run' (...)" naming the option
local function check_options(o)
  if type(o) ~= "table" then bad("options must be a table, got " .. type(o)) end
  for k, v in pairs(o) do
    local want = KNOWN[k]
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
    -- it moves to other threads as code: only _ENV may be an upvalue
    for i = 1, math.huge do
      local name = debug.getupvalue(c.handler, i)
      if name == nil then break end
      if name ~= "_ENV" then
        bad("handler must have no upvalue but _ENV (it runs in other threads), has '" .. name
          .. "': pass values through args, or use a worker file")
      end
    end
  end
  if not compat.is_integer(c.workers) or c.workers < 1 or c.workers > 256 then
    bad("workers must be an integer from 1 to 256")
  end
  local now = require("lease").now()
  if not (c.ttl > 0 and c.ttl < math.huge and now + c.ttl > now) then
    bad("ttl must be a finite number of seconds > 0, large enough to change lease.now()")
  end
  if not (c.poll > 0 and c.poll < math.huge) then bad("poll must be a finite number of seconds > 0") end
  if not compat.is_integer(c.attempts) or c.attempts < 1 then bad("attempts must be an integer >= 1") end
  return c
end

-- ===========================================================================
-- One worker thread.  Its state is one table w:
--   w.db (handle), w.owner (string), w.cfg (checked options),
--   w.handler (function), w.events (channel or nil), w.st (the counters).
-- ===========================================================================

--- Fill st with a worker's zeroed counters and empty lists.
-- @tparam table st the table to fill (the caller keeps it, so what it
-- counted survives the worker's error)
-- @treturn table st
local function new_stats(st)
  for _, k in ipairs(pool.COUNTERS) do st[k] = 0 end
  st.max_fence = 0
  st.completed, st.errors, st.gave_up, st.refusals = {}, {}, {}, {}
  return st
end

--- Send a progress event, when the pool asked for progress.
-- @tparam table w the worker
-- @tparam string kind a counter name, "gave_up" or "exit"
-- @tparam[opt] string id the job
-- @tparam[opt] string why the engine's reason, for a refusal
local function event(w, kind, id, why)
  if w.events then w.events:send({ kind, id, why }) end
end

--- Add one to a counter and report it as a progress event.
-- @tparam table w the worker
-- @tparam string name one of pool.COUNTERS
-- @tparam string id the job
-- @tparam[opt] string why the engine's reason, for a refusal
local function bump(w, name, id, why)
  w.st[name] = w.st[name] + 1
  event(w, name, id, why)
end

--- Record a write the engine refused, with its reason.
-- @tparam table w the worker
-- @tparam string op "complete", "renew" or "release"
-- @tparam string id the job
-- @tparam string why the engine's reason word ("expired", "not_owner", ...)
local function refusal(w, op, id, why)
  local key = op .. " " .. tostring(why)
  w.st.refusals[key] = (w.st.refusals[key] or 0) + 1
  if op == "complete" then bump(w, "refused", id, why)
  elseif op == "renew" then bump(w, "renew_refused", id, why) end
end

--- Load the handler: cfg.handler, or what the file cfg.worker returns.
-- @tparam table cfg the checked options
-- @treturn function the handler
-- @raise the file's load or run error, or "<file> must return a handler
-- function, returned <type>"
local function load_handler(cfg)
  if not cfg.worker then return cfg.handler end
  local handler = dofile(cfg.worker)
  if type(handler) ~= "function" then
    error(cfg.worker .. " must return a handler function, returned " .. type(handler), 0)
  end
  return handler
end

--- Give a job up: done, with no result, under this worker's lease.
-- @tparam table w the worker
-- @tparam string id the job
-- @tparam integer fence the fencing token this worker holds
-- @raise the database error of db:complete
local function give_up(w, id, fence)
  local lease = require("lease")
  local stored, why = w.db:complete(id, w.owner, fence, lease.now(), nil)
  if stored then
    w.st.gave_up[#w.st.gave_up + 1] = id
    event(w, "gave_up", id)
  else
    refusal(w, "complete", id, why)
  end
end

--- The job table a handler gets, with its heartbeat.
-- @tparam table w the worker
-- @tparam string id the job
-- @tparam integer fence the fencing token of this claim
-- @treturn table `{ id, fence, owner, ttl, args, heartbeat, with_lease }`
local function new_job(w, id, fence)
  local lease = require("lease")
  local cfg, db, owner = w.cfg, w.db, w.owner
  local last_renew = lease.now()
  local job = { id = id, fence = fence, owner = owner, ttl = cfg.ttl, args = cfg.args }
  --- Renew the lease when a third of the ttl (seconds) has passed since
  -- the last renewal; cheap to call often.
  -- @treturn boolean true while the lease is held
  -- @treturn[opt] string the engine's reason when it was refused
  -- @raise the database error of db:renew
  function job.heartbeat()
    local now = lease.now()
    if now - last_renew < cfg.ttl / 3 then return true end
    local ok, why = db:renew(id, owner, fence, now, cfg.ttl)
    if ok then
      bump(w, "renewed", id)
      last_renew = now
    else
      refusal(w, "renew", id, why)
    end
    return ok, why
  end
  --- Run fn(tx) inside one transaction that holds this job's lease (see
  -- db:with_lease): the handler's own rows commit only while it holds.
  -- @tparam function fn called as fn(tx)
  -- @return as db:with_lease: true and fn's results, or false and a reason
  -- @raise fn's error (rolled back), or the database error of db:with_lease
  function job.with_lease(fn)
    return db:with_lease(id, owner, fence, lease.now(), fn)
  end
  return job
end

--- Run the handler on a job, protected.
-- @tparam function handler the handler
-- @tparam table job the job (see new_job)
-- @treturn boolean true when it returned a string or nil
-- @return its result, or the error value (or a message for a result of
-- another type)
local function call_handler(handler, job)
  local ok, result = pcall(handler, job)
  if ok and result ~= nil and type(result) ~= "string" then
    return false, "handler returned a " .. type(result) .. ", not a string or nil"
  end
  return ok, result
end

--- Count a handler error, keep its message, and release the job (or give
-- it up when that claim was its last attempt).
-- @tparam table w the worker
-- @tparam string id the job
-- @tparam integer fence the fencing token of this claim
-- @param err the handler's error value (any type)
-- @raise the database error of db:release or db:complete
local function handler_failed(w, id, fence, err)
  local st = w.st
  bump(w, "handler_errors", id)
  if #st.errors < MAX_ERRORS then
    -- the error value is the handler's: even its __tostring may raise
    local shown, text = pcall(tostring, err)
    if not shown or type(text) ~= "string" then text = "(an error object of type " .. type(err) .. ")" end
    st.errors[#st.errors + 1] = id .. ": " .. text
  end
  if fence >= w.cfg.attempts then
    give_up(w, id, fence)   -- that was its last attempt
    return
  end
  local released, why = w.db:release(id, w.owner, fence)
  if released then bump(w, "released", id)
  else refusal(w, "release", id, why) end
end

--- Store a handler's result under the lease this worker holds.
-- @tparam table w the worker
-- @tparam string id the job
-- @tparam integer fence the fencing token of this claim
-- @tparam ?string result the handler's result
-- @raise the database error of db:complete
local function store_result(w, id, fence, result)
  local stored, why = w.db:complete(id, w.owner, fence, require("lease").now(), result)
  if stored then
    w.st.completed[#w.st.completed + 1] = id
    bump(w, "done", id)
  else
    refusal(w, "complete", id, why)
  end
end

--- Take one step: claim the next job and handle it, or wait.
-- @tparam table w the worker
-- @treturn boolean false when the worker should stop (no job ready, none held)
-- @raise a database error
local function step(w)
  local lease = require("lease")
  local cfg = w.cfg
  local id, fence = w.db:claim_next(w.owner, lease.now(), cfg.ttl)
  if not id then
    local c = w.db:counts(lease.now())
    if c.ready == 0 and c.held == 0 then return false end
    lease.sleep(cfg.poll)
    return true
  end
  if fence > w.st.max_fence then w.st.max_fence = fence end
  if fence > cfg.attempts then
    give_up(w, id, fence)   -- every earlier claim failed or lost its lease
    return true
  end
  local ok, result = call_handler(w.handler, new_job(w, id, fence))
  if ok then store_result(w, id, fence, result)
  else handler_failed(w, id, fence, result) end
  return true
end

--- The body of one worker thread (internal: pool.run runs it through
-- lease.thread.spawn).
-- @tparam table cfg pool.run's checked options
-- @tparam integer index the worker's number (its owner is "<owner>-<index>")
-- @param events a lease.thread channel that receives `{kind, id, why}` for
-- the progress line, or nil
-- @tparam table st receives the counters (pool.COUNTERS, max_fence) and the
-- lists completed, errors, gave_up, refusals ("op reason" -> count)
-- @treturn table st
-- @raise a database error, or the worker file's error; st keeps what was
-- counted before it.  Handler errors release the job instead.
function pool._worker(cfg, index, events, st)
  local lease = require("lease")
  new_stats(st)
  return compat.using(lease.open(cfg.db, cfg.open), function(db)
    local w = { db = db, owner = (cfg.owner or "pool") .. "-" .. index, cfg = cfg,
                handler = load_handler(cfg), events = events, st = st }
    while step(w) do end
    return st
  end)
end

-- ===========================================================================
-- The pool
-- ===========================================================================

--- Format a progress line: done/total, rate, refused.
-- @tparam integer done jobs done so far
-- @tparam integer total jobs in the file
-- @tparam integer refused completions refused so far
-- @tparam number t seconds since the pool started
-- @treturn string the line, starting with "\r"
local function progress_line(done, total, refused, t)
  return string.format("\r%d/%d done  %.1f jobs/s  %d refused  ", done, total,
    t > 0 and done / t or 0, refused)
end

--- Start the worker threads.
-- @tparam table cfg the checked options
-- @param events the progress channel, or nil
-- @treturn {lease.thread,...} the threads
-- @raise "bad argument #1 to 'lease.pool.run' (...)" for a value that
-- cannot be copied to a thread (level: pool.run's caller)
local function spawn_workers(cfg, events)
  local thread = require("lease").thread
  -- what the worker threads get: everything but the progress stream
  local wcfg = {}
  for k, v in pairs(cfg) do if k ~= "out" then wcfg[k] = v end end
  local workers = {}
  for i = 1, cfg.workers do
    local ok, w = pcall(thread.spawn, function(c, n, ev)
      require("lease")
      local st = {}
      -- a closure: xpcall passes no arguments on 5.1
      local ran, err = xpcall(function() return require("lease.pool")._worker(c, n, ev, st) end,
        debug.traceback)
      if ev then ev:send({ "exit" }) end   -- even a failed worker says it ended
      return st, not ran and tostring(err) or nil
    end, wcfg, i, events)
    if not ok then
      for _, t in ipairs(workers) do t:join() end
      if events then events:close() end
      error("bad argument #1 to 'lease.pool.run' (" .. tostring(w):gsub("^.-%((.*)%)$", "%1") .. ")", 3)
    end
    workers[i] = w
  end
  return workers
end

--- Show the progress line until every worker has ended.
-- @tparam table cfg the checked options (cfg.out, cfg.workers)
-- @param events the progress channel
-- @tparam integer total jobs in the file
-- @tparam integer done_before jobs already done when the pool started
-- @tparam number t0 lease.now() when the pool started (seconds)
local function show_progress(cfg, events, total, done_before, t0)
  local lease = require("lease")
  local seen = {}
  for _, k in ipairs(pool.COUNTERS) do seen[k] = 0 end
  local running = cfg.workers
  local out = cfg.out or io.stderr
  local shown = 0
  while running > 0 do
    local ev = events:recv(0.2)
    if ev then
      if ev[1] == "exit" then running = running - 1
      elseif seen[ev[1]] then seen[ev[1]] = seen[ev[1]] + 1 end
    end
    if lease.now() - shown >= 0.1 or running == 0 then
      out:write(progress_line(done_before + seen.done, total, seen.refused, lease.now() - t0))
      out:flush()
      shown = lease.now()
    end
  end
  out:write("\n")
end

--- Add one worker's counters and lists into the summary.
-- @tparam table s the summary
-- @tparam table st the worker's counters (see pool._worker)
local function merge(s, st)
  for _, k in ipairs(pool.COUNTERS) do s[k] = s[k] + st[k] end
  if st.max_fence > s.max_fence then s.max_fence = st.max_fence end
  for _, id in ipairs(st.completed) do s.completed[id] = (s.completed[id] or 0) + 1 end
  for _, e in ipairs(st.errors) do s.errors[#s.errors + 1] = e end
  for _, id in ipairs(st.gave_up) do s.gave_up[#s.gave_up + 1] = id end
  for k, n in pairs(st.refusals) do s.refusals[k] = (s.refusals[k] or 0) + n end
end

--- Run a pool of worker threads over the jobs already in a database.
-- @tparam table options
--   db (string, required): the database file (jobs already enqueued).
--   worker (string) or handler (function without upvalues), exactly one:
--     the handler, or a Lua file returning it.
--   workers (integer 1..256, default 4): worker threads.
--   ttl (number, seconds, default 10): lease length; renewed by job.heartbeat().
--   poll (number, seconds, default 0.05): wait when no job is ready but some are held.
--   progress (boolean, default false): a live line on io.stderr.
--   out (file, default io.stderr): where the progress line goes.
--   args (any value the thread facility can copy): given to handlers as job.args.
--   open (table): options for lease.open in every worker.
--   owner (string, default "pool"): owner names are "<owner>-<n>".
--   attempts (integer >= 1, default 3): how many claims a job gets; one
--     whose handler fails on the last, or that comes up again after all of
--     them lost their leases, is given up (completed with a nil result).
-- @treturn table summary: the pool.COUNTERS (done: completions stored;
-- refused: completions refused as stale; renewed; renew_refused; released;
-- handler_errors), refusals ("complete expired", "renew not_owner", ... ->
-- count: every refused write by operation and the engine's reason),
-- gave_up (ids), max_fence, wall (seconds), rate (jobs/s), workers,
-- completed ({id = times its result was stored}), errors (up to 10
-- handler messages per worker), failed (messages of workers that died,
-- e.g. on a database error), blocked (jobs left that no worker can take:
-- another client stored values the engine cannot honour).
-- @raise "bad argument #1 to 'lease.pool.run' (...)" for bad options,
-- including values that cannot be copied to the worker threads; a database
-- error when the file cannot be opened; everything after the workers start
-- is reported in the summary.
function pool.run(options)
  local lease = require("lease")
  local cfg = check_options(options)
  local t0 = lease.now()
  -- Every worker's connection is opened by the worker itself; open once
  -- here so that a bad path fails before any thread starts, and count the
  -- jobs for the progress line.
  local total, done_before = compat.using(lease.open(cfg.db, cfg.open), function(db)
    local c = db:counts(lease.now())
    return c.total, c.done   -- before any worker runs
  end)
  local events = cfg.progress and lease.thread.channel() or nil
  local workers = spawn_workers(cfg, events)
  if events then show_progress(cfg, events, total, done_before, t0) end
  local s = { max_fence = 0, completed = {}, errors = {}, failed = {}, gave_up = {},
              refusals = {}, workers = cfg.workers }
  for _, k in ipairs(pool.COUNTERS) do s[k] = 0 end
  for i, w in ipairs(workers) do
    local ok, st, err = w:join()
    if not ok then st, err = {}, st end
    if err then s.failed[#s.failed + 1] = string.format("worker %d: %s", i, tostring(err)) end
    if st.max_fence then merge(s, st) end   -- kept even when the worker failed
  end
  if events then events:close() end
  -- jobs left that no worker could ever take (see db:jobs("blocked"))
  s.blocked = compat.using(lease.open(cfg.db, cfg.open), function(db)
    return db:counts(lease.now()).blocked
  end)
  s.wall = lease.now() - t0
  s.rate = s.wall > 0 and s.done / s.wall or 0
  return s
end

--- The summary as lines a person reads.
-- @tparam table s a summary from pool.run
-- @treturn string the lines, joined by "\n" (no final newline)
function pool.format(s)
  local lines = {
    string.format("workers            %d", s.workers),
    string.format("jobs done          %d", s.done),
    string.format("refused as stale   %d completions, %d renewals", s.refused, s.renew_refused),
    string.format("renewals           %d", s.renewed),
    string.format("released           %d (handler errors: %d, given up: %d)", s.released,
      s.handler_errors, #s.gave_up),
    string.format("max fence          %d", s.max_fence),
    string.format("blocked jobs       %d", s.blocked or 0),
    string.format("wall time          %.3f s", s.wall),
    string.format("throughput         %.1f jobs/s", s.rate),
  }
  local reasons = {}
  for k, n in pairs(s.refusals or {}) do reasons[#reasons + 1] = string.format("%s %d", k, n) end
  if #reasons > 0 then
    table.sort(reasons)
    lines[#lines + 1] = "refusals           " .. table.concat(reasons, ", ")
  end
  for _, e in ipairs(s.errors) do lines[#lines + 1] = "handler error      " .. e end
  for _, f in ipairs(s.failed) do lines[#lines + 1] = "worker failed      " .. f end
  return table.concat(lines, "\n")
end

return pool
