-- Disk full: a write that does not fit raises an error
-- with the code word `full`, never a nil or false; nothing stored before
-- is lost; and once space returns, the same handle and new ones go on.
--
-- How the disk fills: a child process runs under a file-size limit
-- (RLIMIT_FSIZE, set by `prlimit`) with SIGXFSZ ignored, so a write past
-- the limit fails with EFBIG, as one on a full disk fails with ENOSPC.
-- SQLite reports EFBIG as SQLITE_IOERR_WRITE; the engine maps an I/O error
-- whose errno is ENOSPC, EDQUOT or EFBIG to `full` (src/core/lease.c,
-- map_sqlite_rc), and the message names the cause.  The limit is soft: the
-- child raises it again (prlimit on its own pid) to let space return.
local H = require("helpers")
local lease = H.lease

-- The parts of a database error message.
local function parts(err)
  local op, msg, code, file = err:match('^lease%.([%w_]+): (.-) %[(%w+)%] %(file "(.*)"%)$')
  return { op = op, msg = msg, code = code, file = file }
end

-- Run the Lua chunk `code` in a child process of the interpreter the specs
-- run in, under a soft file-size limit of `limit` bytes (hard limit
-- unlimited) with SIGXFSZ ignored, passing `...` as arguments.  The build
-- tree comes first on package.cpath.  Returns the child's stdout (a pipe,
-- so the limit does not apply to it) and stderr.
local function run_limited(limit, code, ...)
  local build = os.getenv("LEASE_BUILD_DIR") or "build"
  local script = H.path("full") .. ".lua"
  local errfile = script .. ".err"
  H.write(script, "package.cpath = " .. string.format("%q", build .. "/?.so;")
    .. " .. package.cpath\n" .. code)
  local args = {}
  for i, a in ipairs({ ... }) do args[i] = H.sh(a) end
  local cmd = "trap '' XFSZ; exec prlimit --fsize=" .. limit .. ":unlimited " .. H.lua() .. " "
    .. H.sh(script) .. " " .. table.concat(args, " ") .. " 2>" .. H.sh(errfile)
  local p = assert(io.popen("sh -c " .. H.sh(cmd)))
  local out = p:read("*a")
  p:close()
  local err = H.read(errfile) or ""
  os.remove(script); os.remove(errfile)
  return out, err
end

-- The child's side: fill the database through one handle until a write
-- fails, then check what it can, let space return and go on with the same
-- handle.  Prints one line per event; the spec reads them.
local CHILD = [==[
local lease = require("lease")
local path = arg[1]
io.stdout:setvbuf("line")
-- this process's id, for prlimit (the first field of /proc/self/stat)
local f = assert(io.open("/proc/self/stat"))
local pid = f:read("*l"):match("^(%d+)")
f:close()
local db = lease.open(path)
local big = ("x"):rep(3000)
local stored, failed = {}, nil
for i = 1, 100000 do
  local id = ("job-%05d"):format(i)
  local step, fence = "enqueue", nil
  local ok, err = pcall(function()
    assert(db:enqueue(id))
    step = "claim"
    fence = assert(db:claim(id, "w", 0, 1e9))
    step = "complete"
    assert(db:complete(id, "w", fence, 1, id .. big))
  end)
  if not ok then
    failed = { id = id, step = step, fence = fence }
    print("failed", id, step, err)
    break
  end
  stored[#stored + 1] = id
  print("stored", id)
end
if not failed then print("never failed") os.exit(1) end
-- the same handle still reads every stored result while the disk is full
local good = 0
for _, id in ipairs(stored) do
  local s = db:state(id)
  if s and s.done and s.result == id .. big then good = good + 1 end
end
print("read back", good, #stored)
-- space returns: raise the soft limit to the hard one (unlimited)
assert(os.execute("prlimit --pid " .. pid .. " --fsize=unlimited:unlimited"))
-- the same handle finishes the failed job, from the step that failed
local id = failed.id
if failed.step == "enqueue" then assert(db:enqueue(id)) end
if failed.step ~= "complete" then failed.fence = assert(db:claim(id, "w", 0, 1e9)) end
print("finished", id, tostring(db:complete(id, "w", failed.fence, 1, id .. big)), failed.fence)
-- and goes on with new jobs
for i = 1, 20 do
  local nid = ("more-%02d"):format(i)
  assert(db:enqueue(nid))
  local fence = assert(db:claim(nid, "w", 0, 1e9))
  assert(db:complete(nid, "w", fence, 1, nid .. big))
end
print("more", 20)
db:close()
]==]

describe("disk full #sqlite", function()
  it("a write past the limit raises full, earlier results stay, and the same handle goes on", function()
    local p = H.path("full")
    local out, err = run_limited(512 * 1024, CHILD, p)
    assert.are.equal("", err)
    local stored = {}
    for id in out:gmatch("stored\t(%S+)\n") do stored[#stored + 1] = id end
    local id, step, msg = out:match("failed\t(%S+)\t(%S+)\t([^\n]*)\n")
    assert(id, "the child never failed:\n" .. out)
    assert(#stored >= 5, "only " .. #stored .. " jobs fitted before the limit:\n" .. out)
    -- the error: the operation that failed, the cause, the code word, the file
    local e = parts(msg)
    assert.are.same({ op = step, code = "full", file = p, msg = "disk I/O error (file too large)" }, e)
    -- nothing stored before was lost: the handle read every result back
    assert.truthy(out:find(("read back\t%d\t%d\n"):format(#stored, #stored), 1, true), out)
    -- after space returned, the same handle finished the failed job and went on
    local fin_id, fin_ok = out:match("finished\t(%S+)\t(%S+)\t%d+\n")
    assert.are.same({ id, "true" }, { fin_id, fin_ok })
    assert.truthy(out:find("more\t20\n", 1, true), out)
    -- and a new handle, in this process, sees all of it, in a sound file
    local db = lease.open(p)
    local big = ("x"):rep(3000)
    for _, sid in ipairs(stored) do
      local s = db:state(sid)
      assert.are.same({ sid, true, 1, sid .. big }, { s.id, s.done, s.fence, s.result })
    end
    local s = db:state(id)
    assert.are.same({ true, id .. big }, { s.done, s.result })
    assert.are.same({ total = #stored + 21, done = #stored + 21, ready = 0, held = 0, blocked = 0 }, H.counts(db:counts(2)))
    assert.is_true(db:enqueue("after"))
    assert.are.equal(1, db:claim("after", "w", 0, 10))
    db:close()
    assert.are.equal("ok\n", H.sqlite3(p, "PRAGMA integrity_check"))
  end)

  it("a refused write changes nothing: the job is as it was before the call", function()
    -- The child claims a job with room to spare, fills the disk with other
    -- jobs until a write fails, then tries to complete the first one.
    local p = H.path("full")
    local out, err = run_limited(256 * 1024, [==[
      local lease = require("lease")
      local db = lease.open(arg[1])
      io.stdout:setvbuf("line")
      assert(db:enqueue("first"))
      local fence = assert(db:claim("first", "w", 0, 1e9))
      local pad = ("p"):rep(3000)
      local i = 0
      while pcall(db.enqueue_many, db, { ("pad-%05d-"):format(i) .. pad }) do i = i + 1 end
      -- the disk is full now: the complete of the first job must raise
      local ok, e = pcall(db.complete, db, "first", "w", fence, 1, ("r"):rep(20000))
      print("complete", tostring(ok), e)
      local s = db:state("first")
      print("state", tostring(s.done), tostring(s.result), s.fence, s.owner)
      -- a renew that does not fit raises too, and leaves the lease as it was
      ok, e = pcall(db.renew, db, "first", "w", fence, 1, 2e9)
      local word = ok and tostring(e) or (tostring(e):match("%[(%w+)%]") or tostring(e))
      print("renew", tostring(ok), word, db:state("first")["until"])
    ]==], p)
    assert.are.equal("", err)
    local ok, msg = out:match("complete\t(%S+)\t([^\n]*)\n")
    assert.are.equal("false", ok, out)
    assert.are.same({ op = "complete", code = "full", file = p, msg = "disk I/O error (file too large)" },
      parts(msg))
    assert.truthy(out:find("state\tfalse\tnil\t1\tw\n", 1, true), out)
    -- the renew may fit in what is left (it is small) or not: either way
    -- it never comes back false, and a refused one changes nothing
    local rok, rcode, runtil = out:match("renew\t(%S+)\t(%S+)\t(%S+)\n")
    if rok == "false" then
      assert.are.same({ "full", 1000000000 }, { rcode, tonumber(runtil) })
    else
      assert.are.same({ "true", 2000000001 }, { rok, tonumber(runtil) })
    end
    -- with space back, the first worker's lease still holds and its complete is stored
    assert.is_true(lease.complete(p, "first", "w", 1, 1, "late but valid"))
    assert.are.equal("late but valid", lease.state(p, "first").result)
  end)

  it("opening a new database that does not fit raises full; with room it opens and works", function()
    local p = H.path("full")
    local out, err = run_limited(10000, [==[
      local lease = require("lease")
      local ok, e = pcall(lease.open, arg[1])
      print(tostring(ok), e)
      ok, e = pcall(lease.enqueue, arg[1], "a")
      print(tostring(ok), e)
    ]==], p)
    assert.are.equal("", err)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(2, #lines, out)
    for i, op in ipairs({ "open", "enqueue" }) do
      local ok, msg = lines[i]:match("^(%S+)\t(.*)$")
      assert.are.equal("false", ok)
      local e = parts(msg)
      assert.are.same({ op, "full", p }, { e.op, e.code, e.file }, msg)
    end
    assert.is_true(lease.enqueue(p, "a"))
    assert.are.equal(1, lease.claim(p, "a", "w", 0, 10))
    assert.are.equal("ok\n", H.sqlite3(p, "PRAGMA integrity_check"))
  end)
end)
