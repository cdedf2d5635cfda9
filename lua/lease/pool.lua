-- lease.pool: a pool of native worker threads over one database file.
--
-- Each worker is an OS thread (lease.thread) with its own Lua state and its
-- own connection.  It loops: claim_next -> handler(job) -> complete with the
-- fence it got.  A handler keeps its lease alive by calling
-- job.heartbeat(), which renews it (at most every ttl/3 seconds, so it can
-- be called often).  A handler error releases the job so another worker
-- can take it at once; a complete or renew the engine refuses (the lease
-- was lost: the job expired and someone else took it) is counted and the
-- work is dropped, never stored.  A job is tried on at most `attempts`
-- claims (its fence counts them): when its handler fails on the last one,
-- or it comes up once more after every attempt lost its lease, it is given
-- up: completed with a nil result and listed in the summary, so one bad
-- input cannot keep the pool busy forever.  Workers stop when no job is
-- ready and none is held.
--
--   local pool = require("lease.pool")
--   local summary = pool.run{ db = "jobs.db", worker = "worker.lua", workers = 4 }
--
-- worker.lua returns the handler: function(job) ... return result end,
-- where job = { id =, fence =, owner =, ttl =, args =, heartbeat = fn }.
-- It is loaded once in each worker thread, so it may keep its own locals.
local pool = {}

local DEFAULTS = { workers = 4, ttl = 10, poll = 0.05, attempts = 3 }
local KNOWN = {
  db = "string", worker = "string", handler = "function", workers = "number",
  ttl = "number", poll = "number", progress = "boolean", args = true,
  open = "table", owner = "string", out = true, attempts = "number",
}

-- Raise "bad argument #1 to 'lease.pool.run' (...)", positioned at the
-- caller of pool.run (level 4: bad, check_options, pool.run, its caller).
local function bad(msg)
  error("bad argument #1 to 'lease.pool.run' (" .. msg .. ")", 4)
end

-- Check the options table and fill in defaults; returns a new table.
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
  if math.type(c.workers) ~= "integer" or c.workers < 1 or c.workers > 256 then
    bad("workers must be an integer from 1 to 256")
  end
  local now = require("lease").now()
  if not (c.ttl > 0 and c.ttl < math.huge and now + c.ttl > now) then
    bad("ttl must be a finite number of seconds > 0, large enough to change lease.now()")
  end
  if not (c.poll > 0 and c.poll < math.huge) then bad("poll must be a finite number of seconds > 0") end
  if math.type(c.attempts) ~= "integer" or c.attempts < 1 then bad("attempts must be an integer >= 1") end
  return c
end

--- pool._worker(cfg, index, events, st) -> st
-- The body of one worker thread (internal; run by pool.run through
-- lease.thread.spawn).  cfg is pool.run's checked options; index (integer)
-- names the worker; events (lease.thread channel or nil) receives
-- {kind, id} for the progress line; st (table) receives the worker's
-- counters and the ids it completed, and is returned.  Database failures
-- propagate as errors (the pool reports the worker as failed, keeping what
-- st counted so far); handler errors release the job.
function pool._worker(cfg, index, events, st)
  local lease = require("lease")
  local db <close> = lease.open(cfg.db, cfg.open)
  local owner = (cfg.owner or "pool") .. "-" .. index
  local handler = cfg.handler
  if cfg.worker then
    handler = dofile(cfg.worker)
    if type(handler) ~= "function" then
      error(cfg.worker .. " must return a handler function, returned " .. type(handler), 0)
    end
  end
  -- counters live in the caller's table, so they survive this function's error
  for k, v in pairs({ done = 0, refused = 0, renewed = 0, renew_refused = 0, released = 0,
                      handler_errors = 0, max_fence = 0 }) do st[k] = v end
  st.completed, st.errors, st.gave_up = {}, {}, {}
  local function event(kind, id)
    if events then events:send({ kind, id }) end
  end
  -- Give job id up: done, with no result, under this worker's lease.
  local function give_up(id, fence)
    if db:complete(id, owner, fence, lease.now(), nil) then
      st.gave_up[#st.gave_up + 1] = id
      event("gave_up", id)
    else
      st.refused = st.refused + 1
    end
  end
  while true do
    local id, fence = db:claim_next(owner, lease.now(), cfg.ttl)
    if not id then
      local c = db:counts(lease.now())
      if c.ready == 0 and c.held == 0 then break end
      lease.sleep(cfg.poll)
    elseif fence > cfg.attempts then
      -- every earlier claim failed or lost its lease: give the job up
      if fence > st.max_fence then st.max_fence = fence end
      give_up(id, fence)
    else
      if fence > st.max_fence then st.max_fence = fence end
      local last_renew = lease.now()
      local job = { id = id, fence = fence, owner = owner, ttl = cfg.ttl, args = cfg.args }
      -- job.heartbeat() -> true | false, reason: renew the lease when a
      -- third of the ttl has passed since the last renewal.
      function job.heartbeat()
        local now = lease.now()
        if now - last_renew < cfg.ttl / 3 then return true end
        local ok, why = db:renew(id, owner, fence, now, cfg.ttl)
        if ok then
          st.renewed = st.renewed + 1
          last_renew = now
        else
          st.renew_refused = st.renew_refused + 1
          event("renew_refused", id)
        end
        return ok, why
      end
      local ok, result = pcall(handler, job)
      if ok and result ~= nil and type(result) ~= "string" then
        ok, result = false, "handler returned a " .. type(result) .. ", not a string or nil"
      end
      if not ok then
        st.handler_errors = st.handler_errors + 1
        if #st.errors < 10 then
          -- the error value is the handler's: even its __tostring may raise
          local shown, text = pcall(tostring, result)
          if not shown or type(text) ~= "string" then text = "(an error object of type " .. type(result) .. ")" end
          st.errors[#st.errors + 1] = id .. ": " .. text
        end
        if fence >= cfg.attempts then
          give_up(id, fence)   -- that was its last attempt
        elseif db:release(id, owner, fence) then
          st.released = st.released + 1
          event("released", id)
        end
      else
        local stored, why = db:complete(id, owner, fence, lease.now(), result)
        if stored then
          st.done = st.done + 1
          st.completed[#st.completed + 1] = id
          event("done", id)
        else
          st.refused = st.refused + 1
          event("refused", id, why)
        end
      end
    end
  end
  return st
end

-- Format a progress line: done/total, rate, refused.
local function progress_line(done, total, refused, t)
  return string.format("\r%d/%d done  %.1f jobs/s  %d refused  ", done, total,
    t > 0 and done / t or 0, refused)
end

--- pool.run(options) -> summary
-- options (table):
--   db (string, required): the database file (jobs already enqueued).
--   worker (string) or handler (function without upvalues), exactly one:
--     the handler, or a Lua file returning it.
--   workers (integer 1..256, default 4): worker threads.
--   ttl (seconds, default 10): lease length; renewed by job.heartbeat().
--   poll (seconds, default 0.05): wait when no job is ready but some are held.
--   progress (boolean, default false): a live line on io.stderr.
--   args (any value the thread facility can copy): given to handlers as job.args.
--   open (table): options for lease.open in every worker.
--   owner (string, default "pool"): owner names are "<owner>-<n>".
--   attempts (integer >= 1, default 3): how many claims a job gets; one
--     whose handler fails on the last, or that comes up again after all of
--     them lost their leases, is given up (completed with a nil result).
-- Returns summary: done (completions stored, handler results only),
-- refused (completions refused as stale), renewed, renew_refused,
-- released, handler_errors, gave_up (ids), max_fence, wall (seconds),
-- rate (jobs/s), workers, completed ({id = times its result was stored}),
-- errors (up to 10 handler messages per worker), failed (messages of
-- workers that died, e.g. on a database error), blocked (jobs left that no
-- worker can take: another client stored values the engine cannot honour).
-- Raises a bad-argument error for bad options, including values that
-- cannot be copied to the worker threads; everything else is reported in
-- the summary.
function pool.run(options)
  local lease = require("lease")
  local thread = lease.thread
  local cfg = check_options(options)
  local t0 = lease.now()
  -- Every worker's connection is opened by the worker itself; open once
  -- here so that a bad path fails before any thread starts, and count the
  -- jobs for the progress line.
  local total, done_before
  do
    local db <close> = lease.open(cfg.db, cfg.open)
    local c = db:counts(lease.now())
    total, done_before = c.total, c.done   -- before any worker runs
  end
  local events = cfg.progress and thread.channel() or nil
  -- what the worker threads get: everything but the progress stream
  local wcfg = {}
  for k, v in pairs(cfg) do if k ~= "out" then wcfg[k] = v end end
  local workers = {}
  for i = 1, cfg.workers do
    local ok, w = pcall(thread.spawn, function(c, n, ev)
      require("lease")
      local st = {}
      local ok, err = xpcall(require("lease.pool")._worker, debug.traceback, c, n, ev, st)
      if ev then ev:send({ "exit" }) end   -- even a failed worker says it ended
      return st, not ok and tostring(err) or nil
    end, wcfg, i, events)
    if not ok then
      -- a value in the options that cannot move to a thread (args, handler)
      for _, t in ipairs(workers) do t:join() end
      if events then events:close() end
      error("bad argument #1 to 'lease.pool.run' (" .. tostring(w):gsub("^.-%((.*)%)$", "%1") .. ")", 2)
    end
    workers[i] = w
  end
  if events then
    local done, refused, running = done_before, 0, cfg.workers
    local out = cfg.out or io.stderr
    local shown = 0
    while running > 0 do
      local ev = events:recv(0.2)
      if ev then
        if ev[1] == "done" then done = done + 1
        elseif ev[1] == "refused" then refused = refused + 1
        elseif ev[1] == "exit" then running = running - 1 end
      end
      if lease.now() - shown >= 0.1 or running == 0 then
        out:write(progress_line(done, total, refused, lease.now() - t0))
        out:flush()
        shown = lease.now()
      end
    end
    out:write("\n")
  end
  local s = { done = 0, refused = 0, renewed = 0, renew_refused = 0, released = 0,
              handler_errors = 0, max_fence = 0, completed = {}, errors = {}, failed = {},
              gave_up = {}, workers = cfg.workers }
  for i, w in ipairs(workers) do
    local ok, st, err = w:join()
    if not ok then st, err = {}, st end
    if err then s.failed[#s.failed + 1] = string.format("worker %d: %s", i, tostring(err)) end
    if st.done then   -- the counters, kept even when the worker failed
      for _, k in ipairs({ "done", "refused", "renewed", "renew_refused", "released", "handler_errors" }) do
        s[k] = s[k] + st[k]
      end
      if st.max_fence > s.max_fence then s.max_fence = st.max_fence end
      for _, id in ipairs(st.completed) do s.completed[id] = (s.completed[id] or 0) + 1 end
      for _, e in ipairs(st.errors) do s.errors[#s.errors + 1] = e end
      for _, id in ipairs(st.gave_up) do s.gave_up[#s.gave_up + 1] = id end
    end
  end
  if events then events:close() end
  do   -- jobs left that no worker could ever take (see db:jobs("blocked"))
    local db <close> = lease.open(cfg.db, cfg.open)
    s.blocked = db:counts(lease.now()).blocked
  end
  s.wall = lease.now() - t0
  s.rate = s.wall > 0 and s.done / s.wall or 0
  return s
end

--- pool.format(summary) -> string: the summary as lines a person reads.
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
  for _, e in ipairs(s.errors) do lines[#lines + 1] = "handler error      " .. e end
  for _, f in ipairs(s.failed) do lines[#lines + 1] = "worker failed      " .. f end
  return table.concat(lines, "\n")
end

return pool
