-- specs/faults/chaos_worker.lua: one worker process of the fault tests
--, run by the host program:
--
--   build/lease specs/faults/chaos_worker.lua DB LOGDIR NAME SEED THREADS TTL STOPFILE DEADLINE
--
-- Runs THREADS worker loops (native threads when more than one, else in
-- the main state) on the database DB until STOPFILE exists, the wall clock
-- passes DEADLINE, or the driver that started it is gone.  Each loop claims
-- (claim_next or claim of a ready job), renews, completes, releases, and
-- sometimes stalls past its lease and then tries a late complete, as a
-- stuck worker would.  Leases are real: now is lease.now(), ttl is short.
--
-- Every outcome the driver checks is logged to the loop's own append-only
-- file LOGDIR/NAME.t<k>.log, one line each, written and flushed right after
-- the call returned, before the loop does anything else, so a SIGKILL can
-- lose only the line of the call in flight:
--   C id fence owner now t0 t1  claim granted with that now (wall clock, as
--                             passed); t0, t1 monotonic seconds before the
--                             call and after it returned (the commit
--                             happened in between)
--   R id fence owner now      renew with that now returned true
--   D id fence owner result now  complete with that now returned true
--                             (result = owner/fence)
--   L id fence owner          release returned true
--   F id fence owner op why   renew, complete or release refused (the lease
--                             was lost)
--   S id fence owner ok why   a late complete after stalling past the lease:
--                             ok must be false
--   E - 0 owner call          (PostgreSQL) a call failed with ioerr,
--                             cantopen or busy while the server restarted;
--   E id fence owner held     then one line for each lease the loop held: it
--                             is in doubt (a renew or release may have
--                             committed unreported), and the loop forgets it
--   W id fence owner op variant ok  a write with a wrong token on a job
--                             this loop holds with fence: an older fence
--                             ("stale") or another owner's name ("other");
--                             or a claim of a job this loop completed with
--                             fence (op "claim", variant "done"); ok must
--                             be false
-- Prints "ready <pid>" on stdout once the loops run.  Any error (a database
-- error included) ends the process with the message on stderr: the driver
-- counts a non-empty stderr as a failure.
local W = {}

--- W.loop(cfg) -> counts
-- One worker loop (runs in its own Lua state when threaded: everything it
-- needs is in cfg).  cfg: db, log, owner, seed, ttl, stopfile, deadline,
-- ppid (stop when the parent process is no longer this one; 0: do not check).
-- Returns a table of counts by log kind.
function W.loop(cfg)
  local lease = require("lease")
  local system = require("system")
  -- On PostgreSQL (cfg.tolerate) a server restart makes calls fail with
  -- ioerr, cantopen or busy: the open is retried, and such a failure of a
  -- call puts the loop's leases in doubt (E lines) instead of ending it.
  local function open()
    local t0 = lease.now()
    while true do
      local ok, d = pcall(lease.open, cfg.db)
      if ok then return d end
      if not cfg.tolerate or lease.now() - t0 > 60 then error(d, 0) end
      lease.sleep(0.1)
    end
  end
  local db <close> = open()
  local function down(err)
    local e = tostring(err)
    return cfg.tolerate and (e:find("[ioerr]", 1, true) or e:find("[cantopen]", 1, true)
      or e:find("[busy]", 1, true))
  end
  local log = assert(io.open(cfg.log, "a"))
  log:setvbuf("full")
  local counts = { C = 0, R = 0, D = 0, L = 0, S = 0, F = 0, W = 0, E = 0 }
  -- a number as text that reads back as the same double
  local function num(x) return ("%.17g"):format(x) end
  -- write one log line and flush it before going on
  local function put(kind, ...)
    log:write(kind, " ", table.concat({ ... }, " "), "\n")
    log:flush()
    counts[kind] = counts[kind] + 1
  end
  -- true when this loop should stop
  local function should_stop()
    if lease.now() > cfg.deadline then return true end
    local f = io.open(cfg.stopfile)
    if f then f:close() return true end
    if cfg.ppid ~= 0 then
      local st = io.open("/proc/self/stat")
      local ppid = st and tonumber(st:read("l"):match("^%d+ %b() %S+ (%d+)"))
      if st then st:close() end
      if ppid ~= cfg.ppid then return true end
    end
    return false
  end
  math.randomseed(cfg.seed)
  local ttl, owner = cfg.ttl, cfg.owner
  local held = {}   -- leases this loop holds: { id =, fence = }
  local last_done   -- the last job this loop completed: { id =, fence = }
  local n = 0
  -- one step of the loop: a claim, or a write on a held lease.  inflight:
  -- the lease a write in flight was taken off `held` for
  local inflight
  local function step()
    inflight = nil
    local r = math.random(100)
    if #held == 0 or (r <= 35 and #held < 3) then
      -- claim: the oldest ready job, or one of the first few ready ones
      local t0, now, id, fence = system.monotime(), lease.now(), nil, nil
      if math.random(2) == 1 then
        local got, f = db:claim_next(owner, now, ttl)
        if got then id, fence = got, f end
      else
        local ready = db:jobs("ready", now, 6)
        if #ready > 0 then
          id = ready[math.random(#ready)].id
          fence = db:claim(id, owner, now, ttl)
        end
      end
      local t1 = system.monotime()
      if fence then
        put("C", id, fence, owner, num(now), num(t0), num(t1))
        held[#held + 1] = { id = id, fence = fence }
      else
        lease.sleep(0.002)   -- nothing ready: let the others run
      end
    else
      local k = math.random(#held)
      local h = held[k]
      local what = math.random(100)
      if what <= 2 and last_done then
        -- claim a job this loop completed: refused, it is done
        local got = db:claim(last_done.id, owner, lease.now(), ttl)
        put("W", last_done.id, last_done.fence, owner, "claim", "done", tostring(got ~= nil))
      elseif what <= 6 then
        -- a wrong token: an older fence, or another owner's name; refused
        local op = ({ "renew", "complete", "release" })[math.random(3)]
        local o, f, variant = owner, h.fence - 1, "stale"
        if f < 1 or math.random(2) == 1 then o, f, variant = owner .. "x", h.fence, "other" end
        local ok
        if op == "renew" then ok = db:renew(h.id, o, f, lease.now(), ttl)
        elseif op == "complete" then ok = db:complete(h.id, o, f, lease.now(), o .. "/" .. f)
        else ok = db:release(h.id, o, f) end
        put("W", h.id, h.fence, owner, op, variant, tostring(ok))
      elseif what <= 32 then
        local now = lease.now()
        local ok, why = db:renew(h.id, owner, h.fence, now, ttl)
        if ok then
          put("R", h.id, h.fence, owner, num(now))
        else
          put("F", h.id, h.fence, owner, "renew", why)
          table.remove(held, k)   -- lost: expired, or taken over
        end
      elseif what <= 75 then
        table.remove(held, k)
        inflight = h
        local result = owner .. "/" .. h.fence
        local now = lease.now()
        local ok, why = db:complete(h.id, owner, h.fence, now, result)
        if ok then
          put("D", h.id, h.fence, owner, result, num(now))
          last_done = h
        else
          put("F", h.id, h.fence, owner, "complete", why)
        end
      elseif what <= 99 then
        table.remove(held, k)
        inflight = h
        local ok, why = db:release(h.id, owner, h.fence)
        if ok then put("L", h.id, h.fence, owner)
        else put("F", h.id, h.fence, owner, "release", why) end
      else
        -- stall past the lease without renewing, then write late: refused
        table.remove(held, k)
        inflight = h
        lease.sleep(ttl * 1.3)
        local ok, why = db:complete(h.id, owner, h.fence, lease.now(), owner .. "/" .. h.fence)
        put("S", h.id, h.fence, owner, tostring(ok), tostring(why))
      end
    end
  end
  while true do
    n = n + 1
    if n % 8 == 0 and should_stop() then break end
    local ok, err = pcall(step)
    if not ok then
      if not down(err) then error(err, 0) end
      put("E", "-", 0, owner, "call")
      if inflight then held[#held + 1] = inflight end
      for _, h in ipairs(held) do put("E", h.id, h.fence, owner, "held") end
      held = {}
      lease.sleep(0.05)
    end
  end
  log:close()
  return counts
end

--- W.main(args) -> exit status
-- The process: parse the command line, run the loops, print "ready".
function W.main(args)
  local lease = require("lease")
  local db, logdir, name = args[1], args[2], args[3]
  local seed, threads, ttl = tonumber(args[4]), tonumber(args[5]), tonumber(args[6])
  local stopfile, deadline = args[7], tonumber(args[8])
  local f = assert(io.open("/proc/self/stat"))
  local stat = f:read("l")
  f:close()
  local pid = tonumber(stat:match("^(%d+)"))
  local ppid = tonumber(stat:match("^%d+ %b() %S+ (%d+)"))
  local function cfg(k)
    return { db = db, log = ("%s/%s.t%d.log"):format(logdir, name, k),
             owner = ("%st%d"):format(name, k), seed = seed * 100 + k, ttl = ttl,
             stopfile = stopfile, deadline = deadline, ppid = ppid,
             tolerate = db:find("=", 1, true) ~= nil }   -- a PostgreSQL connection string
  end
  io.stdout:setvbuf("no")
  if threads == 1 then
    io.stdout:write("ready ", pid, "\n")
    W.loop(cfg(1))
    return 0
  end
  local file = debug.getinfo(1, "S").source:sub(2)
  local ts = {}
  for k = 1, threads do
    ts[k] = lease.thread.spawn(function(path, c)
      return dofile(path).loop(c)
    end, file, cfg(k))
  end
  io.stdout:write("ready ", pid, "\n")
  local status = 0
  for k = 1, threads do
    local ok, err = ts[k]:join()
    if not ok then
      io.stderr:write("thread ", k, ": ", tostring(err), "\n")
      status = 1
    end
  end
  return status
end

if select("#", ...) > 0 then os.exit(W.main({ ... })) end
return W
