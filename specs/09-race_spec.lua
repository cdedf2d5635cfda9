-- Contract steps 4-8 under real concurrency: claims, renews, completes and
-- releases racing on the same jobs from many native threads, each with its
-- own connection (CONTRACT.md: "a handle never crosses threads"), with the
-- invariants checked after every round:
--   - a fencing token is handed out once per job, and the stored fence is
--     the last one handed out (so it never decreases);
--   - at most one owner at a time: within a round (one `now`) a job is
--     granted again only after a release; the stored owner is the owner of
--     the stored fence;
--   - a write succeeds only with a token that was really granted to that
--     owner;
--   - a done job's result never changes, and it is completed once.
-- Catches "a separate read, then a write in claim": two threads read the
-- job free and both are granted the same fence.
local H = require("helpers")
local T = require("thread_helpers")
local thread = T.thread

-- One worker thread.  It runs in a fresh state: everything it needs comes
-- in as arguments (no upvalues), and it opens its own handle.  Each round:
-- wait for the round's orders, start with the others at the barrier, run
-- `ops` random operations, report what succeeded, wait at the barrier.
local function worker(path, me, seed, ops, b, orders, reports)
  local lease = require("lease")
  local db = lease.open(path)   -- closed by __gc when the thread's state closes
  local mine = {}   -- job id -> the last fence granted to me
  math.randomseed(seed)
  while true do
    local round = orders:recv()
    if round.stop then return true end
    b:wait()
    local ev = {}
    -- a call that raises ends the round's work, not its waits (the others
    -- would wait at the barrier forever): the report carries the error
    local ok, err = pcall(function()
      for _ = 1, ops do
        local id = round.jobs[math.random(#round.jobs)]
        local op = math.random(4)
        local f = mine[id] or 1
        if math.random(4) == 1 then f = f - 1 end   -- sometimes a stale token
        local now = round.now
        if op == 1 then
          local got = db:claim(id, me, now, math.random(1, 3))
          if got then
            mine[id] = got
            ev[#ev + 1] = { op = "claim", id = id, fence = got }
          end
        elseif op == 2 then
          if db:renew(id, me, f, now, math.random(1, 3)) then
            ev[#ev + 1] = { op = "renew", id = id, fence = f }
          end
        elseif op == 3 then
          local result = ("%s fence %d at %d"):format(me, f, now)
          if db:complete(id, me, f, now, result) then
            ev[#ev + 1] = { op = "complete", id = id, fence = f, result = result }
          end
        else
          if db:release(id, me, f) then
            ev[#ev + 1] = { op = "release", id = id, fence = f }
          end
        end
      end
    end)
    reports:send({ me = me, ev = ev, err = not ok and tostring(err) or nil })
    b:wait()
  end
end

describe("racing claims, renews, completes and releases", function()
  it("keeps the invariants after every round", function()
    local W, OPS, ROUNDS, JOBS = 6, 4, 300, 4
    local db, p = H.fresh("race")
    local b = thread.barrier(W + 1)
    local orders, reports = thread.channel(), thread.channel()
    local workers = {}
    for i = 1, W do
      workers[i] = thread.spawn(worker, p, "w" .. i, 1000 + i, OPS, b, orders, reports)
    end

    local jobs, next_job = {}, 0
    local function add_job()
      next_job = next_job + 1
      local id = "job" .. next_job
      assert.is_true(db:enqueue(id))
      jobs[#jobs + 1] = id
    end
    for _ = 1, JOBS do add_job() end

    local granted = {}    -- id -> fence -> owner
    local last = {}       -- id -> the last fence granted
    local done_at = {}    -- id -> round it was first seen done
    local result_of = {}  -- id -> the result of its one successful complete
    local stats = { claim = 0, renew = 0, complete = 0, release = 0 }
    local function fail(r, fmt, ...) error(("round %d: " .. fmt):format(r, ...), 2) end

    for r = 1, ROUNDS do
      for _ = 1, W do assert.is_true(orders:send({ now = r, jobs = jobs })) end
      b:wait()   -- go
      b:wait()   -- everyone finished the round
      local grants, releases = {}, {}
      for _ = 1, W do
        local rep = assert(reports:recv(5))
        assert.is_nil(rep.err, rep.err)
        for _, e in ipairs(rep.ev) do
          local id = e.id
          stats[e.op] = stats[e.op] + 1
          granted[id] = granted[id] or {}
          if done_at[id] then fail(r, "%s succeeded on %s, done since round %d", e.op, id, done_at[id]) end
          if e.op == "claim" then
            if granted[id][e.fence] then
              fail(r, "fence %d of %s handed out twice (%s and %s)", e.fence, id,
                granted[id][e.fence], rep.me)
            end
            granted[id][e.fence] = rep.me
            if e.fence > (last[id] or 0) then last[id] = e.fence end
            grants[id] = (grants[id] or 0) + 1
          else
            if granted[id][e.fence] ~= rep.me then
              fail(r, "%s by %s with fence %d of %s, which was granted to %s", e.op, rep.me,
                e.fence, id, tostring(granted[id][e.fence]))
            end
            if e.op == "release" then releases[id] = (releases[id] or 0) + 1 end
            if e.op == "complete" then
              if result_of[id] then fail(r, "%s completed twice", id) end
              result_of[id] = e.result
            end
          end
        end
      end
      -- at most one owner at a time: in one round (one `now`, every ttl >= 1)
      -- a job can be granted again only after a release
      for id, n in pairs(grants) do
        if n > 1 + (releases[id] or 0) then
          fail(r, "%s granted %d times with %d releases in one round", id, n, releases[id] or 0)
        end
      end
      -- the stored state agrees with what the threads were told
      for _, id in ipairs(jobs) do
        local s = db:state(id)
        if s.fence ~= (last[id] or 0) then
          fail(r, "%s stores fence %d, the last granted was %d", id, s.fence, last[id] or 0)
        end
        if s.owner ~= nil and granted[id][s.fence] ~= s.owner then
          fail(r, "%s is held by %s, but fence %d went to %s", id, s.owner, s.fence,
            tostring(granted[id][s.fence]))
        end
        if s.owner == nil and s["until"] ~= 0 then fail(r, "%s has no owner but until %s", id, s["until"]) end
        if s.done then
          if s.result ~= result_of[id] then
            fail(r, "%s is done with result %q, the one complete stored %q", id,
              tostring(s.result), tostring(result_of[id]))
          end
          done_at[id] = done_at[id] or r
        elseif result_of[id] then
          fail(r, "%s was completed but is not done", id)
        end
      end
      -- done jobs stay in play for three rounds (every write on them must
      -- fail), then make room for fresh ones
      for i = #jobs, 1, -1 do
        local id = jobs[i]
        if done_at[id] and r - done_at[id] >= 3 then
          table.remove(jobs, i)
          add_job()
        end
      end
    end

    for _ = 1, W do orders:send({ stop = true }) end
    for i = 1, W do assert.are.same({ true, true }, { workers[i]:join() }) end
    -- the run really raced: every kind of write succeeded many times
    for op, n in pairs(stats) do assert(n >= 10, op .. " succeeded only " .. n .. " times") end
    assert(next_job > JOBS + 5, "only " .. (next_job - JOBS) .. " jobs were completed")
    db:close()
  end)
end)
