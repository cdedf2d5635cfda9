-- specs/faults/busy_paths.lua: the path functions past the busy timeout.
-- A busted file, run by its own ctest test
-- (faults_busy_paths) in the normal tree only, not with the default
-- suite: the path functions use the default busy timeout, 10 s, so this
-- waits that long once (every function at the same time, one native
-- thread each).  The handle methods past a short timeout, and everything
-- shorter than the timeout, are in specs/12-failures_spec.lua.
local H = require("helpers")
local thread = require("lease.thread")

-- The parts of a database error message.
local function parts(err)
  local op, msg, code, file = err:match('^lease%.([%w_]+): (.-) %[(%w+)%] %(file "(.*)"%)$')
  return { op = op, msg = msg, code = code, file = file }
end

describe("the path functions, while another connection holds the write lock past 10 s", function()
  it("every writing path function raises busy, never nil or false, and changes nothing", function()
    local p = H.path("busy")
    local db = H.lease.open(p)
    db:enqueue_many({ "a", "b" })
    local f = db:claim("a", "w", 0, 100)
    db:close()
    local before = H.snapshot(p)

    -- the sqlite3 tool takes the write lock and keeps it until told
    local marker = p .. ".locked"
    local cli = os.getenv("LEASE_SQLITE3")
    if not cli or cli == "" then cli = "sqlite3" end
    local holder = assert(io.popen(cli .. " -batch " .. H.sh(p) .. " >/dev/null 2>&1", "w"))
    holder:write("BEGIN IMMEDIATE;\nUPDATE jobs SET owner = owner;\n.shell touch " .. H.sh(marker) .. "\n")
    holder:flush()
    for _ = 1, 500 do
      if H.exists(marker) then break end
      os.execute("sleep 0.01")
    end
    assert(H.exists(marker), "sqlite3 did not take the lock")

    local calls = {
      { "enqueue", "c" }, { "claim", "b", "x", 0, 10 }, { "renew", "a", "w", f, 1, 10 },
      { "complete", "a", "w", f, 1, "r" }, { "release", "a", "w", f }, { "claim_next", "x", 500, 10 },
      { "claim_next", "x", 500, 10, 2 }, { "enqueue_many", { "c", "d" } },
      { "claim_many", "b", { "x", "y" }, 0, 10 },
    }
    local threads = {}
    for i, c in ipairs(calls) do
      threads[i] = thread.spawn(function(path, call)
        local lease = require("lease")
        local ok, err = pcall(lease[call[1]], path, table.unpack(call, 2))
        return ok, tostring(err)
      end, p, c)
    end
    local results = {}
    for i, t in ipairs(threads) do results[i] = { t:join() } end
    holder:write("COMMIT;\n.quit\n")
    holder:close()

    for i, c in ipairs(calls) do
      local joined, ok, err = table.unpack(results[i])
      assert.is_true(joined, tostring(ok))
      assert.is_false(ok, c[1] .. " returned " .. err .. " instead of raising")
      assert.are.same({ op = c[1], msg = "database is locked", code = "busy", file = p }, parts(err))
    end
    assert.are.same(before, H.snapshot(p))
    -- and with the lock gone they work
    assert.are.equal(1, H.lease.claim(p, "b", "x", 0, 10))
  end)
end)
