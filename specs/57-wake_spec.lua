-- Waiting for jobs: db:wait(queue, timeout) returns true as soon as a job of
-- the queue may be ready (one is due, or a write that makes one claimable
-- woke it), false once the timeout passed.  A write of another thread of
-- this process, or of another process (SQLite: the files' stamp;
-- PostgreSQL: LISTEN/NOTIFY), wakes a waiter long before its timeout; a job
-- scheduled for later wakes it at its run_at; many producers and waiters
-- lose no wake-up; the pool waits the same way (a retry starts at its time,
-- not a poll later).  Timings are loose (the machine is shared): the specs
-- check that a wait ended early and in the right order, not how fast.
local H = require("helpers")
local T = require("thread_helpers")
local thread = T.thread
local lease = H.lease

-- A wait's timeout no wake-up in these specs comes near: a wait that ran
-- into it was not woken.
local LONG = 5

-- Start the Lua chunk `code` in a new process in the background, with the
-- build tree on package.cpath; arg[1] is path; env, when given, is put
-- before the command ("NAME=value ...").  Returns the name of a file the
-- process writes its output to once it has finished (H.read it).
local function spawn_process(code, path, env)
  local build = os.getenv("LEASE_BUILD_DIR") or "build"
  local script = H.file("wake") .. ".lua"
  local out = script .. ".out"
  H.write(script, "package.cpath = " .. string.format("%q", build .. "/?.so;")
    .. " .. package.cpath\n" .. code)
  os.execute("{ " .. (env or "") .. " " .. T.lua() .. " " .. H.sh(script) .. " " .. H.sh(path) .. " >" .. H.sh(out .. ".tmp")
    .. " 2>&1; mv " .. H.sh(out .. ".tmp") .. " " .. H.sh(out) .. "; } &")
  return out
end

-- Wait (up to 30 s) for the file a spawned process writes at its end.
local function finished(out)
  local deadline = T.now() + 30
  while not H.exists(out) and T.now() < deadline do lease.sleep(0.02) end
  return H.read(out)
end

-- Write a waiter's process to a script with the build tree on
-- package.cpath: the Lua chunk `code`, which opens the handle `h` and
-- starts the thread `t` that writes and returns the time it wrote, then
-- h:wait(queue, 5), which it prints as "<woken> <seconds from the write to
-- the wait's end>".  Returns a function that runs it with its arguments
-- (each quoted for the shell) in a process whose files' look is rare and
-- whose inotify watch is off, so that on SQLite only a signal of that
-- process wakes its waiter soon, and returns the woken word and the
-- seconds (raising with the output when the process failed); and the
-- script's name.
local function signalled_waiter(code, queue)
  local build = os.getenv("LEASE_BUILD_DIR") or "build"
  local script = H.file("signal") .. ".lua"
  H.write(script, "package.cpath = " .. string.format("%q", build .. "/?.so;")
    .. " .. package.cpath\n" .. code .. string.format("local woken = h:wait(%q, 5)\n", queue) .. [[
local back = L.now()
local ok, at = t:join()
assert(ok, at)
io.write(tostring(woken), " ", string.format("%.6f", back - at), "\n")
h:close()
]])
  return function(...)
    local args = {}
    for i, a in ipairs({ ... }) do args[i] = H.sh(a) end
    local out, ok = H.capture("LEASE_WAKE_NOTIFY=0 LEASE_WAKE_CHECK_MS=600000 " .. T.lua() .. " "
      .. H.sh(script) .. " " .. table.concat(args, " ") .. " 2>&1")
    assert(ok, out)
    local woken, after = out:match("^(%a+) (%-?[%d.]+)\n$")
    assert(woken, out)
    return woken, tonumber(after)
  end, script
end

-- Wait on queue (db:wait, up to LONG) while another thread opens the
-- database at p, sleeps 0.3 s and calls h[method](h, ...) once; the wait
-- must end true, after that call and well before LONG.
local function woken_by_thread(db, p, queue, method, ...)
  local t = thread.spawn(function(path, m, ...)
    local L = require("lease")
    local h = L.open(path)
    L.sleep(0.3)
    local at = L.now()
    h[m](h, ...)
    h:close()
    return at
  end, p, method, ...)
  local woken = db:wait(queue, LONG)
  local back = lease.now()
  local ok, at = t:join()
  assert(ok, at)
  assert.are.equal(true, woken)
  -- in order: the write, then the wait's end, well before the timeout
  assert.is_true(at <= back, "woke before the " .. method)
  assert.is_true(back - at < LONG / 2, "woke " .. (back - at) .. " s after the " .. method)
end

-- Wait on queue (db:wait of db, up to LONG) while another client of the
-- database at p (psql on PostgreSQL, the sqlite3 tool on SQLite), started in the
-- background, sleeps 0.3 s and runs sql; the wait must end true after that
-- write (a wait returns true only once a job of its queue is due) and well
-- before LONG.
local function woken_by_client(db, p, queue, sql)
  local client = H.backend == "pg"
    and ((os.getenv("LEASE_PSQL") or "psql") .. " -X -q -v ON_ERROR_STOP=1 -d " .. H.sh(p) .. " -c " .. H.sh(sql))
    or ((os.getenv("LEASE_SQLITE3") or "sqlite3") .. " -cmd '.timeout 5000' " .. H.sh(p) .. " " .. H.sh(sql))
  os.execute("{ sleep 0.3; " .. client .. "; } >/dev/null 2>&1 &")
  local t0 = T.now()
  local woken = db:wait(queue, LONG)
  local took = T.now() - t0
  assert.are.equal(true, woken)
  assert.is_true(took >= 0.25 and took < LONG / 2, "woke after " .. took .. " s")
end

describe("db:wait", function()
  local db, p
  before_each(function() db, p = H.fresh("wake") end)
  after_each(function() db:close() end)

  it("returns false after about the timeout when nothing happens", function()
    local t0 = T.now()
    assert.are.equal(false, db:wait("default", 0.3))
    local took = T.now() - t0
    assert.is_true(took >= 0.25, "returned after " .. took .. " s")
    assert.is_true(took < LONG, "returned after " .. took .. " s")
    -- a timeout of 0 only looks
    assert.are.equal(false, db:wait("default", 0))
  end)

  it("returns true at once when a job of the queue is due, and claims nothing", function()
    db:enqueue("a", { queue = "mail" })
    db:enqueue("b", { queue = "other", run_at = db:server_now() + 3600 })
    local t0 = T.now()
    assert.are.equal(true, db:wait("mail", LONG))
    assert.is_true(T.now() - t0 < LONG / 2)
    assert.are.equal(0, db:counts(db:server_now(), "mail").running)
    -- a queue whose only job is due in an hour, or a queue without jobs
    assert.are.equal(false, db:wait("other", 0.05))
    assert.are.equal(false, db:wait("none", 0.05))
    -- a held job is not due until its lease expires; a released one is
    local id, fence = db:claim_next("w", db:server_now(), 3600, { queue = "mail" })
    assert.are.equal("a", id)
    assert.are.equal(false, db:wait("mail", 0.05))
    db:release("a", "w", fence)
    assert.are.equal(true, db:wait("mail", 0))
  end)

  it("waits on a paused queue's due jobs until its resume, which another thread sends", function()
    db:enqueue("a", { queue = "mail" })
    assert.is_true(db:pause("mail"))
    local t0 = T.now()
    assert.are.equal(false, db:wait("mail", 0.3))
    assert.is_true(T.now() - t0 >= 0.25, "returned after " .. (T.now() - t0) .. " s")
    woken_by_thread(db, p, "mail", "resume", "mail")
    assert.are.equal("a", (db:claim_next("w", db:server_now(), 30, { queue = "mail" })))
  end)

  it("wakes when another thread of this process enqueues, long before its timeout", function()
    woken_by_thread(db, p, "q", "enqueue", "late", { queue = "q" })
    assert.are.equal("late", (db:claim_next("w", db:server_now(), 30, { queue = "q" })))
  end)

  it("wakes on a release of another thread with the events ledger on, which records it", function()
    local led = lease.open(p, { events = true })
    led:enqueue("job", { queue = "q" })
    local _, fence = led:claim_next("w", led:server_now(), 3600, { queue = "q" })
    assert.are.equal(false, led:wait("q", 0.05))
    local t = thread.spawn(function(path, f)
      local L = require("lease")
      local h = L.open(path, { events = true })
      L.sleep(0.3)
      local at = L.now()
      local ok = h:release("job", "w", f)
      h:close()
      return at, ok
    end, p, fence)
    local woken = led:wait("q", LONG)
    local back = lease.now()
    local ok, released_at, released = t:join()
    assert(ok, released_at)
    assert.are.equal(true, released)
    assert.are.equal(true, woken)
    assert.is_true(released_at <= back, "woke before the release")
    assert.is_true(back - released_at < LONG / 2, "woke " .. (back - released_at) .. " s after")
    local ops = {}
    for _, e in ipairs(led:events({ id = "job" })) do ops[#ops + 1] = e.op .. " " .. e.outcome end
    assert.are.same({ "enqueue ok", "claim ok", "release ok" }, ops)
    led:close()
  end)

  it("is woken by the signal of an enqueue, a release and a fail, not by a look at the files", function()
    -- each write by a thread of a process of its own that waits, whose
    -- files' look (SQLite's way to see other processes) is made rare and
    -- its inotify watch off: it has seen no change of the files before
    -- (the job is set up from here), so only the write's signal wakes it soon
    local run, script = signalled_waiter([[
local L = require("lease")
local h = L.open(arg[1])
local t = L.thread.spawn(function(path, what, f)
  local lease = require("lease")
  local other = lease.open(path)
  lease.sleep(0.3)
  local at = lease.now()
  if what == "enqueue" then other:enqueue("signalled", { queue = "sig" })
  elseif what == "release" then other:release("signalled", "w", f)
  else other:fail("signalled", "w", f, other:server_now(), "boom", { run_at = other:server_now() }) end
  other:close()
  return at
end, arg[1], arg[2], tonumber(arg[3]))
]], "sig")
    local fence = 0
    for _, step in ipairs({ "enqueue", "release", "fail" }) do
      local woken, after = run(p, step, string.format("%d", fence))
      assert.are.equal("true", woken, step)
      assert.is_true(after >= 0 and after < LONG / 2, step .. " woke " .. after .. " s after")
      -- the write stored: the job is claimable again, by the next fence
      local id, f = db:claim_next("w", db:server_now(), 3600, { queue = "sig" })
      assert.are.equal("signalled", id, step)
      assert.is_true(f > fence, step)
      fence = f
    end
    os.remove(script)
  end)

  it("is woken by the signal of a fail that discards a job of a queue at its limit, not by a look at the files #sqlite",
    function()
      -- the waiter's own process: a thread claims the queue's one slot
      -- (its claim_next finds the limit), then its fail discards that job
      -- (its last attempt); the waiter starts once the slot is taken, so
      -- only the signal of that fail wakes it soon
      assert.is_true(db:limit("lim", { concurrency = 1 }))
      db:enqueue_many({ { id = "held", queue = "lim", max_attempts = 1 }, { id = "next", queue = "lim" } })
      local run, script = signalled_waiter([[
local L = require("lease")
local h = L.open(arg[1])
local t = L.thread.spawn(function(path)
  local lease = require("lease")
  local other = lease.open(path)
  local id, f = other:claim_next("w", other:server_now(), 3600, { queue = "lim" })
  assert(id == "held", id)
  -- past the half second the waiter's watcher keeps looking after the
  -- claim's change of the files
  lease.sleep(1.5)
  local at = lease.now()
  assert(other:fail("held", "w", f, other:server_now(), "boom") == "discarded")
  -- kept open a while: a handle's close wakes the file's waiters too
  lease.sleep(1.5)
  other:close()
  return at
end, arg[1])
L.sleep(0.15)
]], "lim")
      local woken, after = run(p)
      assert.are.equal("true", woken)
      assert.is_true(after >= 0 and after < 1, "woke " .. after .. " s after the fail")
      assert.are.equal("next", (db:claim_next("w2", db:server_now(), 30, { queue = "lim" })))
      os.remove(script)
    end)

  it("wakes on a release, and on a fail whose retry is due now, by another thread", function()
    db:enqueue("r", { queue = "q" })
    local id, fence = db:claim_next("w", db:server_now(), 3600, { queue = "q" })
    assert.are.equal("r", id)
    for round = 1, 2 do
      local t = thread.spawn(function(path, which, fen)
        local L = require("lease")
        local h = L.open(path)
        L.sleep(0.2)
        local at = L.now()
        if which == 1 then h:release("r", "w", fen)
        else h:fail("r", "w", fen, h:server_now(), "boom", { run_at = h:server_now() }) end
        h:close()
        return at
      end, p, round, fence)
      assert.are.equal(false, db:wait("q", 0))   -- held: not due
      local woken = db:wait("q", LONG)
      local back = lease.now()
      local ok, at = t:join()
      assert(ok, at)
      assert.are.equal(true, woken)
      assert.is_true(at <= back and back - at < LONG / 2)
      if round == 1 then
        id, fence = db:claim_next("w", db:server_now(), 3600, { queue = "q" })
        assert.are.equal("r", id)
      end
    end
  end)

  it("wakes when another process enqueues", function()
    local out = spawn_process([[
local L = require("lease")
local h = L.open(arg[1])
L.sleep(0.4)
io.write(string.format("%.6f", L.now()))
h:enqueue("from-afar", { queue = "far" })
h:close()
]], p)
    local t0 = T.now()
    local woken = db:wait("far", LONG)
    local back, took = lease.now(), T.now() - t0
    local enqueued_at = tonumber(finished(out))
    assert.is_not_nil(enqueued_at, "the other process failed")
    assert.are.equal(true, woken)
    assert.is_true(took < LONG / 2, "woke after " .. took .. " s")
    assert.is_true(enqueued_at <= back + 0.05, "woke before the enqueue")
    assert.are.equal("from-afar", (db:claim_next("w", db:server_now(), 30, { queue = "far" })))
  end)

  it("wakes a waiter of another process on the write itself, not at its next look at the files #sqlite",
    function()
      -- the other process's looks at the files come further and further
      -- apart (up to once a minute): 3 s in, the next is over a second
      -- away, so only the write's own notice (inotify on Linux) wakes it soon
      if not H.exists("/proc/self") then return end   -- not Linux
      local out = spawn_process([[
local L = require("lease")
local h = L.open(arg[1])
local f = io.open(arg[1] .. ".ready", "w") f:close()
local t0 = L.monotonic()
local woken = h:wait("near", 10)
io.write(tostring(woken), " ", string.format("%.6f", L.now()), " ", string.format("%.3f", L.monotonic() - t0))
h:close()
]], p, "LEASE_WAKE_CHECK_MS=60000")
      local deadline = T.now() + 20
      while not H.exists(p .. ".ready") and T.now() < deadline do lease.sleep(0.02) end
      lease.sleep(3.2)                                   -- the other is asleep in its wait
      local at = lease.now()
      assert.is_true(db:enqueue("close-by", { queue = "near" }))
      local woken, back, took = finished(out):match("^(%S+) (%S+) (%S+)$")
      assert.are.equal("true", woken, out)
      assert.is_true(tonumber(took) < 8, "woke after " .. took .. " s")
      assert.is_true(tonumber(back) >= at, "woke before the enqueue")
      assert.is_true(tonumber(back) - at < 1, "woke " .. (tonumber(back) - at) .. " s after the enqueue")
      os.remove(p .. ".ready")
    end)

  it("wakes a read-only waiter of a file in rollback-journal mode on another client's write #sqlite",
    function()
      -- no -wal: the write goes to the database file, whose own watch must
      -- wake the waiter (its looks at the files are a minute apart)
      if not H.exists("/proc/self") then return end   -- not Linux
      local rb = H.path("rollback")
      lease.open(rb):close()
      assert.are.equal("delete\n", H.sqlite3(rb, "PRAGMA journal_mode=DELETE"))
      local out = spawn_process([[
local L = require("lease")
local h = L.open(arg[1], { readonly = true })
local f = io.open(arg[1] .. ".ready", "w") f:close()
local woken = h:wait("default", 10)
io.write(tostring(woken), " ", string.format("%.6f", L.now()))
h:close()
]], rb, "LEASE_WAKE_CHECK_MS=60000")
      local deadline = T.now() + 20
      while not H.exists(rb .. ".ready") and T.now() < deadline do lease.sleep(0.02) end
      lease.sleep(3.2)                                   -- the other is asleep in its wait
      assert.is_false(H.exists(rb .. "-wal"))
      local at = lease.now()
      H.sqlite3(rb, "INSERT INTO jobs(id) VALUES ('by-hand')")
      local woken, back = finished(out):match("^(%S+) (%S+)$")
      assert.are.equal("true", woken, out)
      assert.is_true(tonumber(back) >= at, "woke before the write")
      assert.is_true(tonumber(back) - at < 1, "woke " .. (tonumber(back) - at) .. " s after the write")
      assert.are.equal("delete\n", H.sqlite3(rb, "PRAGMA journal_mode"))
      os.remove(rb .. ".ready")
    end)

  it("wakes a waiter on a write of another thread by the signal alone, the files unwatched #sqlite",
    function()
      -- a process without an inotify watch whose looks at the files come
      -- further and further apart (up to once a minute): 3 s in, the next
      -- is over a second away, so only the signal of its own thread's
      -- write can wake it soon
      local out = spawn_process([[
local L = require("lease")
local T = require("lease.thread")
local h = L.open(arg[1])
local t = T.spawn(function(path)
  local L2 = require("lease")
  local p = L2.open(path)
  L2.sleep(3.2)
  local at = L2.now()
  p:enqueue("by-a-thread", { queue = "here" })
  p:close()
  return at
end, arg[1])
local woken = h:wait("here", 10)
local back = L.now()
local _, at = t:join()
io.write(tostring(woken), " ", string.format("%.3f", back - at))
h:close()
]], p, "LEASE_WAKE_NOTIFY=0 LEASE_WAKE_CHECK_MS=60000")
      local woken, late = finished(out):match("^(%S+) (%S+)$")
      assert.are.equal("true", woken, out)
      assert.is_true(tonumber(late) < 1, "woke " .. late .. " s after the enqueue")
    end)

  it("wakes on another process's commit that becomes visible well after its frames are written #sqlite",
    function()
      -- the writer's syncs each take 40 ms longer (strace delays them): its
      -- commit's frames are in the -wal, and the files change no more, long
      -- before the commit is visible; the looks after the change see it
      local version = H.capture("strace -V")
      if not version:find("strace") then return end   -- no strace: nothing to delay the sync with
      local out = spawn_process([[
local L = require("lease")
local h = L.open(arg[1])
L.sleep(0.5)
io.write(string.format("%.6f", L.now()))
h:enqueue("slow-sync", { queue = "slow" })
h:close()
]], p, -- LeakSanitizer cannot run under ptrace: off in a sanitizer tree
        'ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"'
        .. " strace -f -qq -o /dev/null -e trace=fsync,fdatasync"
        .. " -e inject=fsync,fdatasync:delay_exit=40000")
      local woken = db:wait("slow", 10)
      local back = lease.now()
      local at = tonumber(finished(out))
      assert.is_not_nil(at, "the writer failed: " .. tostring(H.read(out)))
      assert.are.equal(true, woken)
      assert.is_true(back - at < 1, "woke " .. (back - at) .. " s after the enqueue began")
    end)

  it("wakes every one of many waiters of a process on another process's commit that waits for its sync #sqlite",
    function()
      -- as above, with 8 threads waiting: each woken by a look that came
      -- before the commit was visible comes back, and its own first look
      -- must not use up the looks still to come
      local version = H.capture("strace -V")
      if not version:find("strace") then return end   -- no strace: nothing to delay the sync with
      local n, ts = 8, {}
      local start = thread.barrier(n + 1)
      for i = 1, n do
        ts[i] = thread.spawn(function(path, b)
          local L = require("lease")
          local h = L.open(path)
          b:wait()
          local woken = h:wait("slow-many", 10)
          local back = L.now()
          h:close()
          return woken, back
        end, p, start)
      end
      start:wait()
      local out = spawn_process([[
local L = require("lease")
local h = L.open(arg[1])
L.sleep(0.5)
io.write(string.format("%.6f", L.now()))
h:enqueue("slow-many", { queue = "slow-many" })
h:close()
]], p, 'ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"'
        .. " strace -f -qq -o /dev/null -e trace=fsync,fdatasync"
        .. " -e inject=fsync,fdatasync:delay_exit=40000")
      local at = tonumber(finished(out))
      assert.is_not_nil(at, "the writer failed: " .. tostring(H.read(out)))
      for i = 1, n do
        local ok, woken, back = ts[i]:join()
        assert.is_true(ok, woken)
        assert.are.equal(true, woken, "waiter " .. i)
        assert.is_true(back - at < 2, "waiter " .. i .. " woke " .. (back - at) .. " s after the enqueue began")
      end
    end)

  it("keeps this process's SQLite locks on the -shm while it looks at the files #sqlite", function()
    -- closing any descriptor of a file drops every POSIX lock the process
    -- holds on it: a look that opened the -shm would leave it unlocked for
    -- another process to truncate under this one's mapping
    local f = io.open("/proc/locks")
    if not f then return end   -- not Linux: nothing to read the locks from
    f:close()
    assert.is_true(db:enqueue("x"))
    local ino = tonumber((H.capture("stat -c %i " .. H.sh(p .. "-shm"))))
    -- the most locks any of five reads shows: the kernel writes /proc/locks
    -- a page at a time from a list other processes keep changing, so one
    -- read may skip a line; a lock dropped stays dropped in every read
    local function held()
      local most = 0
      for _ = 1, 5 do
        local n = 0
        for line in io.lines("/proc/locks") do
          local pid, i = line:match("POSIX%s+%S+%s+%S+%s+(%d+)%s+%x+:%x+:(%d+)%s")
          if tonumber(pid) == lease.pid() and tonumber(i) == ino then n = n + 1 end
        end
        if n > most then most = n end
      end
      return most
    end
    assert.is_true(held() > 0, "no lock on the -shm before the wait")
    assert.is_false(db:wait("nothing-here", 0.05))
    assert.is_true(held() > 0, "the wait dropped this process's locks on the -shm")
  end)

  it("keeps inotify watches of the file and its -wal only while a handle of this process waits #sqlite", function()
    -- while a watch is open the kernel queues a notice for every write to
    -- the file watched, which each commit of this process would pay; the
    -- files, not their directory, whose first watch makes the kernel walk
    -- every name cached in it, at each wait; the inotify instance stays,
    -- one for the file (closing one waits in the kernel, and each wait
    -- would pay that)
    if not H.exists("/proc/self/fd") then return end   -- not Linux
    local function watches()   -- the inotify watches this process holds
      return tonumber((H.capture("cat /proc/" .. lease.pid() .. "/fdinfo/* 2>/dev/null | grep -c '^inotify wd:'")))
    end
    local function watching_fds()   -- the descriptors holding a watch, as a set
      local set = {}
      for f in H.capture("grep -l '^inotify wd:' /proc/" .. lease.pid() .. "/fdinfo/* 2>/dev/null"):gmatch("%d+\n") do
        set[tonumber(f)] = true
      end
      return set
    end
    local function watched_inodes(fd)   -- the inodes fd's watches are on, sorted
      local list = {}
      for hex in H.capture("cat /proc/" .. lease.pid() .. "/fdinfo/" .. fd):gmatch("inotify wd:%x+ ino:(%x+)") do
        list[#list + 1] = tonumber(hex, 16)
      end
      table.sort(list)
      return list
    end
    local function inode(path) return tonumber((H.capture("stat -c %i " .. H.sh(path)))) end
    local function is_inotify(fd)
      return H.capture("readlink /proc/" .. lease.pid() .. "/fd/" .. fd):find("anon_inode:inotify", 1, true) ~= nil
    end
    local function wait_in_thread()
      return T.thread.spawn(function(path)
        local h = require("lease").open(path)
        local woken = h:wait("nothing-here", 1.5)
        h:close()
        return woken
      end, p)
    end
    local before, watched_before = watches(), watching_fds()
    assert.is_true(db:enqueue("x"))
    assert.is_true(db:complete("x", "w", db:claim("x", "w", 1, 10), 2, "r"))
    assert.are.equal(before, watches())
    local t = wait_in_thread()
    lease.sleep(0.5)
    local during, fd, on = watches(), nil, nil
    for f in pairs(watching_fds()) do
      if not watched_before[f] then fd = f end
    end
    if fd then on = watched_inodes(fd) end
    assert.are.same({ true, false }, { t:join() })
    assert.are.equal(before + 2, during)
    assert.are.equal(before, watches())
    assert.is_not_nil(fd, "no descriptor held the wait's watch")
    local files = { inode(p), inode(p .. "-wal") }
    table.sort(files)
    assert.are.same(files, on)
    -- the instance stays; a second wait watches again on it
    assert.is_true(is_inotify(fd), "the inotify instance was closed after the wait")
    t = wait_in_thread()
    lease.sleep(0.5)
    during = watching_fds()[fd]
    assert.are.same({ true, false }, { t:join() })
    assert.is_true(during, "the second wait watched on another descriptor")
    assert.are.same({ before, true }, { watches(), is_inotify(fd) })
  end)

  it("wakes at the run_at of a job scheduled for later, not at its timeout", function()
    local run_at = db:server_now() + 0.6
    db:enqueue("s", { queue = "sched", run_at = run_at })
    local t0 = T.now()
    assert.are.equal(true, db:wait("sched", LONG))
    local took = T.now() - t0
    assert.is_true(db:server_now() >= run_at - 0.01, "woke before the job's run_at")
    assert.is_true(took < LONG / 2, "woke after " .. took .. " s")
    assert.are.equal("s", (db:claim_next("w", db:server_now(), 30, { queue = "sched" })))
  end)

  it("looks again when woken by a job scheduled for later, and wakes at its time", function()
    local t = thread.spawn(function(path)
      local L = require("lease")
      local h = L.open(path)
      L.sleep(0.2)
      local run_at = h:server_now() + 0.5
      h:enqueue("later", { queue = "q2", run_at = run_at })
      h:close()
      return run_at
    end, p)
    local woken = db:wait("q2", LONG)
    local now = db:server_now()
    local ok, run_at = t:join()
    assert(ok, run_at)
    assert.are.equal(true, woken)
    assert.is_true(now >= run_at - 0.01, "woke before the job's run_at")
    assert.is_true(now - run_at < LONG / 2)
  end)

  it("loses no wake-up: many producers and waiting consumers, every job taken", function()
    local producers, consumers, per = 3, 4, H.rounds(20, 10)
    for round = 1, H.rounds(4, 2) do
      local q = "r" .. round
      local consumer = function(path, queue, me, timeout)
        local L = require("lease")
        local h = L.open(path)
        local took, timeouts = {}, 0
        while true do
          local woken = h:wait(queue, timeout)
          if not woken then timeouts = timeouts + 1 end
          local id, fence = h:claim_next(me, h:server_now(), 60, { queue = queue })
          if id and id:match("^stop%-") then break end
          if id then
            took[#took + 1] = id
            h:complete(id, me, fence, h:server_now(), "ok")
          end
          if timeouts > 0 then break end
        end
        h:close()
        return took, timeouts
      end
      local producer = function(path, queue, me, n)
        local L = require("lease")
        local h = L.open(path)
        for i = 1, n do
          h:enqueue(queue .. me .. "-" .. i, { queue = queue })
          if i % 3 == 0 then L.sleep(0.002) end
        end
        h:close()
        return true
      end
      local cs, ps = {}, {}
      for i = 1, consumers do cs[i] = thread.spawn(consumer, p, q, "c" .. i, LONG) end
      lease.sleep(0.05)
      for i = 1, producers do ps[i] = thread.spawn(producer, p, q, "p" .. i, per) end
      for i = 1, producers do
        local ok, err = ps[i]:join()
        assert(ok, err)
      end
      -- every job done before the consumers are told to stop
      local deadline = T.now() + LONG
      while db:counts(db:server_now(), q).completed < producers * per and T.now() < deadline do
        lease.sleep(0.01)
      end
      local done_at = T.now() - (deadline - LONG)
      for i = 1, consumers do
        db:enqueue("stop-" .. round .. "-" .. i, { queue = q })
      end
      -- each stop job is taken once, by a consumer the enqueue woke: its id is "stop-i"
      local seen, timeouts = {}, 0
      for i = 1, consumers do
        local ok, took, t = cs[i]:join()
        assert(ok, took)
        timeouts = timeouts + t
        for _, id in ipairs(took) do
          assert.is_nil(seen[id], "taken twice: " .. id)
          seen[id] = true
        end
      end
      assert.are.equal(0, timeouts, "round " .. round .. ": a consumer waited until its timeout")
      assert.is_true(done_at < LONG, "round " .. round .. " took " .. done_at .. " s")
      for i = 1, producers do
        for k = 1, per do
          local id = q .. "p" .. i .. "-" .. k
          assert.is_true(seen[id], "not taken: " .. id)
        end
      end
    end
  end)

  -- A parent "a" of queue "up" held by "w" (ttl 3600), its child "b" of
  -- queue "down" waiting for it, and one more job of "up"; returns a's
  -- fence.  Nothing of "down" is due until a write opens "b".
  local function held_parent()
    db:enqueue_many({ { id = "a", queue = "up" }, { id = "b", queue = "down", after = { "a" } },
      { id = "next", queue = "up" } })
    local id, fence = db:claim_next("w", db:server_now(), 3600, { queue = "up" })
    assert.are.equal("a", id)
    assert.are.equal(false, db:wait("down", 0))
    return fence
  end

  it("wakes when a complete, complete_many or complete_claim_next opens a job waiting for it", function()
    local calls = {
      function(f) return "complete", "a", "w", f, db:server_now(), "r" end,
      function(f) return "complete_many", "w", db:server_now(), { { id = "a", fence = f, result = "r" } } end,
      function(f) return "complete_claim_next", "a", "w", f, db:server_now(), "r", 30, { queue = "up" } end,
    }
    for round, call in ipairs(calls) do
      db:close()
      db, p = H.fresh("wake-dep")
      local args = { call(held_parent()) }
      woken_by_thread(db, p, "down", table.unpack(args))
      assert.are.equal("b", (db:claim_next("w2", db:server_now(), 30, { queue = "down" })), round)
    end
  end)

  it("wakes when a prune deletes a cancelled job that a retried job waits for", function()
    db:enqueue_many({ { id = "a", queue = "up" }, { id = "b", queue = "down", after = { "a" } } })
    assert.is_true(db:cancel("a", db:server_now()))
    assert.is_true(db:retry("b", db:server_now()))
    assert.are.equal(false, db:wait("down", 0))
    woken_by_thread(db, p, "down", "prune", db:server_now() + 1, { status = "cancelled" })
    assert.are.equal("b", (db:claim_next("w2", db:server_now(), 30, { queue = "down" })))
  end)

  it("wakes when another client's done = 1 on the parent opens a job waiting for it", function()
    held_parent()
    woken_by_client(db, p, "down", "UPDATE jobs SET done = 1, result = 'r' WHERE id = 'a'")
    assert.are.equal("b", (db:claim_next("w2", db:server_now(), 30, { queue = "down" })))
  end)

  it("wakes when another program inserts a job with its own INSERT INTO jobs", function()
    woken_by_client(db, p, "default", "INSERT INTO jobs(id) VALUES ('raw')")
    assert.are.equal("raw", (db:claim_next("w", db:server_now(), 30)))
  end)

  it("wakes when another program reopens a completed job with done = 0", function()
    db:enqueue("r", { queue = "q" })
    local id, fence = db:claim_next("w", db:server_now(), 1, { queue = "q" })
    assert.are.equal("r", id)
    assert.is_true(db:complete("r", "w", fence, db:server_now(), "x"))
    -- reopened, r is due at the end of its last lease, a second later: the
    -- waiter, which had nothing due, must look again
    woken_by_client(db, p, "q", "UPDATE jobs SET done = 0 WHERE id = 'r'")
    assert.are.equal("r", (db:claim_next("w2", db:server_now(), 30, { queue = "q" })))
  end)

  it("wakes when another thread's renew moves the lease end earlier, and returns at the new end", function()
    db:enqueue("r", { queue = "q" })
    local id, fence = db:claim_next("w", db:server_now(), 3600, { queue = "q" })
    assert.are.equal("r", id)
    -- the renew leaves 0.3 s: the waiter, sleeping until the old end an
    -- hour away, must look again and wake at the new one
    woken_by_thread(db, p, "q", "renew", "r", "w", fence, db:server_now() + 0.3, 0.3)
    assert.are.equal("r", (db:claim_next("w2", db:server_now(), 30, { queue = "q" })))
  end)

  it("wakes when another client ends a lease by a write of its own", function()
    db:enqueue("r", { queue = "q" })
    assert.are.equal("r", (db:claim_next("w", db:server_now(), 3600, { queue = "q" })))
    woken_by_client(db, p, "q", "UPDATE jobs SET owner = NULL, until = 0 WHERE id = 'r'")
    assert.are.equal("r", (db:claim_next("w2", db:server_now(), 30, { queue = "q" })))
  end)

  it("raises on bad arguments naming the function and the argument, and writes nothing", function()
    db:enqueue("x")
    local before = H.snapshot(p)
    assert.matches("bad argument #2 to 'wait' %(queue must be a non%-empty string, got nil%)",
      H.error_of(db.wait, db, nil, 1))
    assert.matches("bad argument #2 to 'wait' %(queue must be a non%-empty string, got an empty string%)",
      H.error_of(db.wait, db, "", 1))
    assert.matches("bad argument #2 to 'wait' %(queue must be at most 255 bytes, got 256%)",
      H.error_of(db.wait, db, string.rep("q", 256), 1))
    assert.matches("bad argument #3 to 'wait' %(timeout must be a number of seconds, got no value%)",
      H.error_of(db.wait, db, "default"))
    assert.matches("bad argument #3 to 'wait' %(timeout must be a finite number of seconds >= 0, got %-1%)",
      H.error_of(db.wait, db, "default", -1))
    assert.matches("bad argument #3 to 'wait' %(timeout must be a finite number of seconds >= 0, got inf%)",
      H.error_of(db.wait, db, "default", math.huge))
    assert.matches("bad argument #3 to 'wait' %(timeout must be a number of seconds, got a string%)",
      H.error_of(db.wait, db, "default", "1"))
    assert.same(before, H.snapshot(p))
    db:close()
    assert.matches("closed", H.error_of(db.wait, db, "default", 1))
    db = lease.open(p)
  end)
end)

describe("db:wait on a queue at its limit", function()
  local db, p
  before_each(function() db, p = H.fresh("wake-limit") end)
  after_each(function() db:close() end)

  -- Enqueue ids into queue "lim" under limits, and hold the first one
  -- with claim_next on db for ttl seconds.  Returns the claim's fence and
  -- its now (the database's clock).
  local function full(limits, ttl, ids)
    assert.is_true(db:limit("lim", limits))
    for _, id in ipairs(ids) do db:enqueue(id, { queue = "lim" }) end
    local at = db:server_now()
    local id, fence = db:claim_next("w", at, ttl, { queue = "lim" })
    assert.are.equal(ids[1], id)
    return fence, at
  end

  it("has no job due while its concurrency limit is reached, until a lease ends", function()
    local _, at = full({ concurrency = 1 }, 3, { "a", "b" })
    local t0 = T.now()
    -- "b" is due, but no claim may take it while "a" is held
    assert.are.equal(false, db:wait("lim", 0.3))
    assert.is_true(T.now() - t0 >= 0.25, "returned after " .. (T.now() - t0) .. " s")
    assert.are.same({ nil, "limited" }, { db:claim_next("x", db:server_now(), 30, { queue = "lim" }) })
    -- the end of "a"'s lease frees the slot: the wait ends then, not at its
    -- timeout (LONG, longer than the lease)
    assert.are.equal(true, db:wait("lim", LONG))
    local took = db:server_now() - at
    assert.is_true(took >= 2.9, "woke " .. took .. " s after the claim, before the lease ended")
    -- what woke it is what the claim sees: room for one, the first due job
    assert.are.equal("a", (db:claim_next("x", db:server_now(), 30, { queue = "lim" })))
    assert.are.equal(false, db:wait("lim", 0))
  end)

  it("has no job due while its rate is used up, until the earliest claim leaves the window", function()
    local fence, at = full({ rate = 1, per = 3 }, 3600, { "a", "b" })
    assert.is_true(db:complete("a", "w", fence, db:server_now(), "ok"))
    assert.are.equal(false, db:wait("lim", 0.2))
    -- the window ends before the timeout (LONG)
    assert.are.equal(true, db:wait("lim", LONG))
    local took = db:server_now() - at
    assert.is_true(took >= 2.9, "woke " .. took .. " s after the claim, inside the window")
    assert.are.equal("b", (db:claim_next("x", db:server_now(), 30, { queue = "lim" })))
  end)

  it("wakes when the handle that claimed from it completes, fails or releases, long before the lease ends",
    function()
    -- each end by a thread of a process of its own that waits, its files'
    -- look made rare and its inotify watch off, as in "is woken by the
    -- signal of an enqueue...": on PostgreSQL only the end's signal wakes
    -- it (on SQLite the claim's own write keeps the files looked at often);
    -- the thread's handle claimed the job with claim_next
    local run, script = signalled_waiter([[
local L = require("lease")
local h = L.open(arg[1])
local flag = arg[3]
local t = L.thread.spawn(function(path, how, f)
  local lease = require("lease")
  local other = lease.open(path)
  local id, fence = other:claim_next("other", other:server_now(), 3600, { queue = "lim" })
  assert(id == how .. "-held", tostring(id))
  io.open(f, "w"):close()
  lease.sleep(0.3)
  local at = lease.now()
  local now = other:server_now()
  if how == "complete" then other:complete(id, "other", fence, now, "ok")
  elseif how == "fail" then other:fail(id, "other", fence, now, "boom", { run_at = now + 3600 })
  elseif how == "discard" then assert(other:fail(id, "other", fence, now, "boom") == "discarded")
  elseif how == "release" then other:release(id, "other", fence)
  elseif how == "complete_many" then
    other:complete_many("other", now, { { id = id, fence = fence, result = "ok" } })
  elseif how == "complete_claim_next" then
    -- its claim, of another queue, takes nothing: the slot stays free
    local stored, _, next_id = other:complete_claim_next(id, "other", fence, now, "ok", 30,
      { queue = "none" })
    assert(stored == true and next_id == nil, tostring(next_id))
  elseif how == "complete_claim_next-other" then
    -- its claim takes a job of another queue: the slot stays free
    local stored, _, next_id = other:complete_claim_next(id, "other", fence, now, "ok", 30,
      { queue = "plain" })
    assert(stored == true and next_id ~= nil, "no job of plain")
  elseif how == "complete_many_claim_next" then
    local stored, _, jobs = other:complete_many_claim_next("other", now,
      { { id = id, fence = fence, result = "ok" } }, 30, { queue = "none", n = 2 })
    assert(stored == true and #jobs == 0, tostring(#jobs))
  elseif how == "complete_many_claim_next-other" then
    local stored, _, jobs = other:complete_many_claim_next("other", now,
      { { id = id, fence = fence, result = "ok" } }, 30, { queue = "plain", n = 1 })
    assert(stored == true and #jobs == 1, "no job of plain")
  elseif how == "with_lease" then
    assert(other:with_lease(id, "other", fence, now, function(tx) assert(tx:complete("ok")) end))
  else
    -- after a claim from a second limited queue the handle wakes them all
    assert(other:claim_next("other", now, 3600, { queue = "lim2" }) ~= nil, "no job of lim2")
    assert(other:complete(id, "other", fence, now, "ok"))
  end
  other:close()
  return at
end, arg[1], arg[2], flag)
while not os.rename(flag, flag) do L.sleep(0.01) end
]], "lim")
    assert.is_true(db:limit("lim", { concurrency = 1 }))
    assert.is_true(db:limit("lim2", { concurrency = 1 }))
    for _, how in ipairs({ "complete", "fail", "discard", "release", "complete_many",
                           "complete_claim_next", "complete_claim_next-other",
                           "complete_many_claim_next", "complete_many_claim_next-other", "with_lease",
                           "several" }) do
      db:enqueue(how .. "-held", { queue = "lim", max_attempts = how == "discard" and 1 or nil })
      db:enqueue(how .. "-next", { queue = "lim" })
      db:enqueue(how .. "-plain", { queue = "plain" })
      db:enqueue(how .. "-lim2", { queue = "lim2" })
      local woken, after = run(p, how, H.file("held"))
      assert.are.equal("true", woken, how)
      assert.is_true(after >= 0 and after < LONG / 2, how .. " woke " .. after .. " s after")
      -- the slot is free: the next job, or the released one, is claimed
      local want = how == "release" and how .. "-held" or how .. "-next"
      for _, id_wanted in ipairs(how == "release" and { want, how .. "-next" } or { want }) do
        local id, fence = db:claim_next("w", db:server_now(), 3600, { queue = "lim" })
        assert.are.equal(id_wanted, id, how)
        assert.is_true(db:complete(id, "w", fence, db:server_now(), "ok"))
      end
    end
    os.remove(script)
  end)
end)

describe("the pool at a queue's limit", function()
  it("takes the slot another handle frees at once, not a poll later", function()
    local pool = require("lease.pool")
    local db, p = H.fresh("wake-limit-pool")
    assert.is_true(db:limit("lim", { concurrency = 1 }))
    db:enqueue("held", { queue = "lim" })
    db:enqueue("next", { queue = "lim" })
    local flag = H.file("held")
    local t = thread.spawn(function(path, f)
      local L = require("lease")
      local h = L.open(path)
      local id, fence = h:claim_next("other", h:server_now(), 3600, { queue = "lim" })
      local out = io.open(f, "w")
      out:close()
      L.sleep(1)
      local at = L.now()
      h:complete(id, "other", fence, h:server_now(), "ok")
      h:close()
      return id, at
    end, p, flag)
    while not H.exists(flag) do lease.sleep(0.01) end
    -- a service: the handler of "next" records when it started, then stops the pool
    local s = pool.run({ db = p, queue = "lim", workers = 2, ttl = 30, poll = 30, forever = true,
                         shutdown_grace = 5,
                         handler = function()
                           local l = require("lease")
                           local at = l.now()
                           os.execute("kill -TERM " .. l.pid())
                           return string.format("%.6f", at)
                         end })
    local ok, held, completed_at = t:join()
    assert(ok, held)
    assert.are.same({ "held", "TERM", 1 }, { held, s.interrupted, s.done })
    local started = tonumber(db:state("next").result)
    assert.is_true(started >= completed_at, "started before the slot was free")
    assert.is_true(started - completed_at < 10, "started " .. (started - completed_at) .. " s after the slot was freed")
    db:close()
  end)
end)

describe("the pool waits with db:wait", function()
  it("starts a retry at its time, not a poll later", function()
    local pool = require("lease.pool")
    local db, p = H.fresh("wakepool")
    db:enqueue("once")
    db:close()
    local t0 = T.now()
    local s = pool.run({
      db = p, workers = 2, ttl = 30, poll = LONG, signals = false,
      backoff = function() return 0.5 end,
      handler = function(job)
        if job.attempt == 1 then error("first attempt fails") end
        return "ok"
      end,
    })
    local took = T.now() - t0
    assert.are.equal(1, s.done)
    assert.are.equal(1, s.retried)
    assert.is_true(took >= 0.45, "the retry ran before its backoff: " .. took .. " s")
    assert.is_true(took < LONG, "the retry waited for the poll: " .. took .. " s")
  end)
end)
