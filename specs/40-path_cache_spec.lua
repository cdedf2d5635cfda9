-- The path functions' connections: one per file per Lua state, reused
-- from call to call, used only while the path still names the file it
-- holds, closed with the state.
--
-- Which connections are open is read from /proc/<pid>/fd: the descriptors
-- of this process open on the database file itself (not its -wal or -shm).
local H = require("helpers")
local T = require("thread_helpers")
local lease = H.lease
local thread = T.thread

-- How many descriptors this process holds on the file at p (one per
-- connection; a deleted file's links read "p (deleted)" and do not count).
local function fds(p)
  local out = H.capture("find /proc/" .. H.pid() .. "/fd -lname " .. H.sh(p) .. " | wc -l")
  return tonumber(out)
end

-- Start the sqlite3 tool holding a write lock (BEGIN IMMEDIATE) on p until
-- `COMMIT;` is written to the returned pipe.
local function hold_lock(p)
  local marker = p .. ".locked"
  os.remove(marker)
  local cli = os.getenv("LEASE_SQLITE3")
  if not cli or cli == "" then cli = "sqlite3" end
  local pipe = assert(io.popen(cli .. " -batch " .. H.sh(p) .. " >/dev/null 2>&1", "w"))
  pipe:write("BEGIN IMMEDIATE;\nUPDATE jobs SET owner = owner;\n.shell touch " .. H.sh(marker) .. "\n")
  pipe:flush()
  for _ = 1, 500 do
    if H.exists(marker) then return pipe end
    os.execute("sleep 0.01")
  end
  error("sqlite3 did not take the lock")
end

describe("path functions' connections #sqlite", function()
  it("keep one connection per file across calls", function()
    local p = H.path()
    assert.is_true(lease.enqueue(p, "a"))
    assert.are.equal(1, fds(p))
    for i = 1, 20 do
      assert.are.equal(i, lease.claim(p, "a", "o" .. i, i * 10, 5))
    end
    assert.are.equal(1, fds(p))
    -- the connection stays open between calls, so its -wal stays beside the file
    assert.is_true(H.exists(p .. "-wal"))
    assert.are.equal(20, lease.state(p, "a").fence)
  end)

  it("close with the Lua state that holds them (a lease.thread's own)", function()
    local p = H.path()
    lease.open(p):close()
    local go, claimed = thread.channel(), thread.channel()
    local t = thread.spawn(function(path, gate, up)
      local l = require("lease")
      l.enqueue(path, "a")
      local f = l.claim(path, "a", "w", 0, 10)
      up:send(f)
      gate:recv(10)
      return f, l.complete(path, "a", "w", f, 1, "r")
    end, p, go, claimed)
    -- counted once the thread's calls are over, not while one runs
    assert.are.equal(1, claimed:recv(10))
    assert.are.equal(1, fds(p))   -- the thread's, while it waits
    go:send("go")
    assert.are.same({ true, 1, true }, { t:join() })
    assert.are.equal(0, fds(p))
    assert.is_false(H.exists(p .. "-wal"))
    assert.are.equal("r", lease.open(p):state("a").result)
  end)

  it("are one per Lua state: two states on one file each use their own", function()
    local p = H.path()
    lease.enqueue_many(p, { "a", "b" })
    assert.are.equal(1, fds(p))
    local go, claimed = thread.channel(), thread.channel()
    local t = thread.spawn(function(path, gate, up)
      local l = require("lease")
      local f = l.claim(path, "b", "t", 0, 10)
      up:send(f)
      gate:recv(10)
      return f, l.complete(path, "b", "t", f, 1, "from thread")
    end, p, go, claimed)
    assert.are.equal(1, claimed:recv(10))
    assert.are.equal(2, fds(p))
    assert.are.equal(1, lease.claim(p, "a", "m", 0, 10))
    assert.is_true(lease.complete(p, "a", "m", 1, 1, "from main"))
    go:send("go")
    assert.are.same({ true, 1, true }, { t:join() })
    assert.are.equal("from thread", lease.state(p, "b").result)
    assert.are.equal("from main", lease.state(p, "a").result)
  end)

  it("act on the new file when another database is renamed over the path", function()
    local p, old = H.path(), H.path("old")
    local q = H.path("other")
    assert.is_true(lease.enqueue(p, "a"))
    assert.are.equal(1, lease.claim(p, "a", "w", 0, 100))
    local other = lease.open(q)
    other:enqueue("b")
    other:close()
    assert.is_true(os.rename(p, old))
    assert.is_true(os.rename(q, p))
    -- the call reads and writes the file now at p, not the one it had open
    assert.is_nil(lease.state(p, "a"))
    assert.are.equal(1, lease.claim(p, "b", "x", 0, 100))
    assert.is_true(lease.enqueue(p, "c"))
    assert.are.same({ "b", "c" }, H.ids(lease.open(p):jobs("all", 0)))
    -- nothing reached the old file through the connection it had before
    local snap = H.snapshot(old)
    assert.are.equal(1, #snap)
    assert.matches("^'a'|'w'|100%.0|1|NULL|0$", snap[1])
    -- the connection to the old file is closed
    assert.are.equal(0, fds(old))
  end)

  it("recreate a deleted file, as a call with no connection does", function()
    local p = H.path()
    assert.is_true(lease.enqueue(p, "a"))
    assert.is_true(os.remove(p))
    assert.is_nil(lease.state(p, "a"))
    assert.is_true(H.exists(p))
    assert.is_true(lease.enqueue(p, "b"))
    assert.are.same({ "b" }, H.ids(lease.open(p):jobs("all", 0)))
    -- removed with its -wal and -shm too
    os.remove(p); os.remove(p .. "-wal"); os.remove(p .. "-shm")
    assert.is_true(lease.enqueue(p, "c"))
    assert.is_nil(lease.state(p, "b"))
    assert.are.equal(0, lease.state(p, "c").fence)
    assert.are.equal(1, fds(p))
  end)

  it("leave the -wal of a database opened since at the path of a deleted one", function()
    -- Closing the connection to the deleted file must not remove the -wal
    -- and -shm now at its names: they hold the new database's commits.
    local p = H.path()
    assert.is_true(lease.enqueue(p, "a"))
    os.remove(p); os.remove(p .. "-wal"); os.remove(p .. "-shm")
    local db = lease.open(p)
    assert.is_true(db:enqueue("new"))
    assert.is_true(H.exists(p .. "-wal"))
    assert.are.equal(0, lease.state(p, "new").fence)
    assert.is_nil(lease.state(p, "a"))
    assert.is_true(H.exists(p .. "-wal"))
    assert.is_true(lease.enqueue(p, "newer"))
    assert.are.same({ "new", "newer" }, H.ids(db:jobs("all", 0)))
    db:close()
    assert.are.equal(0, lease.state(p, "newer").fence)
    assert.are.same({ "new", "newer" }, H.ids(lease.open(p):jobs("all", 0)))
  end)

  it("give the results a handle gives, refusals and errors included", function()
    local ph, pp = H.path("h"), H.path("p")
    local db = lease.open(ph)
    local calls = {
      { "init_db" }, { "enqueue", "a" }, { "enqueue", "a" }, { "state", "a" }, { "state", "zz" },
      { "claim", "a", "w", 0, 10 }, { "claim", "a", "x", 5, 10 }, { "renew", "a", "w", 1, 5, 10 },
      { "renew", "a", "x", 1, 5, 10 }, { "complete", "a", "w", 2, 6, "r" }, { "complete", "a", "w", 1, 6, "r" },
      { "complete", "a", "w", 1, 7, "again" }, { "release", "a", "w", 1 },
      { "enqueue_many", { "b", "c", "d", "a" } }, { "claim_next", "n", 0, 10 }, { "claim_next", "n", 0, 10, 5 },
      { "release", "c", "n", 1 }, { "complete_many", "n", 1, { { id = "b", fence = 1, result = "x" },
        { id = "c", fence = 1 }, { id = "d", fence = 1 } } },
      { "claim_many", "c", { "m", "m" }, 2, 10 }, { "claim", "a", "w", 0, 0 }, { "state", "" },
    }
    for _, c in ipairs(calls) do
      local name = c[1]
      local h = table.pack(pcall(db[name], db, table.unpack(c, 2)))
      local p = table.pack(pcall(lease[name], pp, table.unpack(c, 2)))
      if name == "claim_many" and h[1] then table.sort(h[2], function(x, y) return tostring(x) < tostring(y) end) end
      if name == "claim_many" and p[1] then table.sort(p[2], function(x, y) return tostring(x) < tostring(y) end) end
      if not h[1] then
        -- the same error, naming the path function as "lease.<name>"
        -- (called through pcall, the method counts self as the path function counts the path)
        h[2] = tostring(h[2]):gsub("'" .. name .. "'", "'lease." .. name .. "'")
      end
      assert.are.same(h, p, name)
    end
    assert.are.same(H.snapshot(ph), H.snapshot(pp))
    assert.are.same(db:jobs("all", 0), lease.open(pp):jobs("all", 0))
    db:close()
  end)

  it("check every argument before opening or creating the file", function()
    local p, fresh = H.path(), H.path("never")
    assert.is_true(lease.enqueue(p, "a"))
    assert.are.equal(1, lease.claim(p, "a", "w", 0, 10))
    local before = H.snapshot(p)
    local bad = {
      { "claim", "a", "x", 0, 0 }, { "claim", "a", "x", 0 / 0, 1 }, { "renew", "a", "w", 1.5, 0, 1 },
      { "complete", "a", "w", "1", 0, "r" }, { "release", "a", "", 1 }, { "enqueue", "" },
      { "enqueue_many", { "b", 2 } }, { "claim_next", "x", 0, 10, 0 }, { "claim_many", "a", {}, 0, 10 },
    }
    for _, c in ipairs(bad) do
      assert.matches("^bad argument #%d to 'lease%." .. c[1] .. "'", H.error_of(lease[c[1]], p, table.unpack(c, 2)))
      assert.matches("^bad argument #%d to 'lease%." .. c[1] .. "'",
        H.error_of(lease[c[1]], fresh, table.unpack(c, 2)))
      assert.is_false(H.exists(fresh), c[1] .. " created the file")
    end
    assert.are.same(before, H.snapshot(p))
    assert.are.equal(1, fds(p))
    assert.are.equal(0, fds(fresh))
  end)

  it("close a connection whose call failed (busy), and the next call opens a new one", function()
    local p = H.path()
    assert.is_true(lease.enqueue(p, "a"))
    assert.are.equal(1, fds(p))
    local before = H.snapshot(p)
    local pipe = hold_lock(p)
    -- the path functions' busy timeout is the default, 10 s
    local ok, err = pcall(lease.claim, p, "a", "w", 0, 10)
    assert.is_false(ok)
    assert.are.equal('lease.claim: database is locked [busy] (file "' .. p .. '")', err)
    assert.are.equal(0, fds(p))
    pipe:write("COMMIT;\n.quit\n")
    pipe:close()
    assert.are.same(before, H.snapshot(p))
    assert.are.equal(1, lease.claim(p, "a", "w", 0, 10))
    assert.are.equal(1, fds(p))
    assert.are.equal("w", lease.state(p, "a").owner)
  end)

  it("are at most 16 per state, the least recently used closed first", function()
    local paths = {}
    for i = 1, 20 do
      paths[i] = H.path("cap" .. i)
      assert.is_true(lease.enqueue(paths[i], "j" .. i))
    end
    local open = 0
    for i = 1, 20 do open = open + fds(paths[i]) end
    assert.are.equal(16, open)
    for i = 1, 4 do assert.are.equal(0, fds(paths[i])) end
    for i = 5, 20 do assert.are.equal(1, fds(paths[i])) end
    -- using one makes it the most recent: the next new file evicts paths[6], not it
    assert.are.equal(0, lease.state(paths[5], "j5").fence)
    local p = H.path("cap21")
    assert.is_true(lease.enqueue(p, "x"))
    assert.are.equal(1, fds(paths[5]))
    assert.are.equal(0, fds(paths[6]))
    for i = 1, 20 do assert.are.equal(0, lease.state(paths[i], "j" .. i).fence) end
  end)

  it("are fewer when the process may open few descriptors: one per 64", function()
    local dir = H.dir()
    local script = dir .. "/cap.lua"
    H.write(script, [[
      package.cpath = arg[1] .. "/?.so;" .. package.cpath
      local lease = require("lease")
      local f = io.open("/proc/self/stat")
      local pid = f:read("*l"):match("^(%d+)")
      f:close()
      for i = 1, 6 do assert(lease.enqueue(arg[2] .. "/" .. i .. ".db", "j")) end
      local p = io.popen("find /proc/" .. pid .. "/fd -lname '" .. arg[2] .. "/*.db' | wc -l")
      io.write(p:read("*a"))
      p:close()
      for i = 1, 6 do assert(lease.state(arg[2] .. "/" .. i .. ".db", "j")) end
    ]])
    local build = os.getenv("LEASE_BUILD_DIR") or "build"
    if build:sub(1, 1) ~= "/" then build = os.getenv("PWD") .. "/" .. build end
    local out, ok = H.capture("ulimit -n 256 && " .. H.lua() .. " " .. H.sh(script) .. " " .. H.sh(build)
      .. " " .. H.sh(dir))
    assert.is_true(ok, out)
    assert.are.equal(4, tonumber(out))
  end)

  it("give a call run from a finalizer during a call on the same path its own connection #lua53", function()
    -- Any allocation inside a call may run finalizers; one may call a path
    -- function on the same file while the outer call still reads its
    -- results from its connection.  Both must get their own results (the
    -- sanitizer builds catch a use after free here).
    local p = H.path()
    lease.enqueue_many(p, { "a", "b" })
    assert.are.equal(1, lease.claim(p, "b", "w", 0, 10))
    -- collect at (nearly) every allocation (5.4 names the mode; 5.1-5.3 set the multiplier)
    if not pcall(collectgarbage, "incremental", 0, 1000) then
      collectgarbage("setpause", 0); collectgarbage("setstepmul", 1000)
    end
    local inner, bad = 0, 0
    local ok, err = pcall(function()
      for _ = 1, 500 do
        setmetatable({}, { __gc = function()
          local s = lease.state(p, "b")
          if s and s.owner == "w" then inner = inner + 1 else bad = bad + 1 end
        end })
        local s = lease.state(p, "a")
        assert(s.id == "a" and s.fence == 0 and s.owner == nil, "a row read wrong")
      end
    end)
    if not pcall(collectgarbage, "incremental", 200, 100) then
      collectgarbage("setpause", 200); collectgarbage("setstepmul", 100)
    end
    collectgarbage()
    assert.is_true(ok, err)
    assert.is_true(inner > 0)
    assert.are.equal(0, bad)
    assert.is_true(lease.complete(p, "b", "w", 1, 1, "r"))
    assert.are.equal("r", lease.state(p, "b").result)
  end)

  it("are not kept for a file: URI: each call opens and closes its own", function()
    local p = H.path()
    assert.is_true(lease.enqueue("file:" .. p, "a"))
    assert.are.equal(0, fds(p))
    assert.is_false(H.exists(p .. "-wal"))
    assert.are.equal(1, lease.claim("file:" .. p, "a", "w", 0, 10))
    assert.are.equal(0, fds(p))
    assert.are.equal("w", lease.state(p, "a").owner)
  end)

  it("are not kept for a private in-memory database: each call has a new one", function()
    assert.is_true(lease.enqueue(":memory:", "a"))
    assert.is_nil(lease.state(":memory:", "a"))
    assert.is_true(lease.enqueue(":memory:", "a"))
  end)
end)
