-- The handle API: lease.open, close, __close, __gc, __tostring, options.
local H = require("helpers")
local lease = H.lease

describe("lease.open and the lease.db handle", function()
  it("opens, prints its name, and closes", function()
    local p = H.path()
    local db = lease.open(p)
    -- the name: the path on SQLite, host, port, database and user on PostgreSQL
    if H.backend == "sqlite" then assert.are.equal(p, db:name()) end
    assert.are.equal("lease.db (" .. db:name() .. ")", tostring(db))
    assert.is_true(db:close())
    assert.are.equal("lease.db (closed)", tostring(db))
    assert.is_true(db:close())   -- closing twice is harmless
  end)

  it("raises 'attempt to use a closed lease database' for every method on a closed handle", function()
    local db = H.fresh()
    db:enqueue("a")
    db:close()
    for _, call in ipairs({
      { "enqueue", "a" }, { "state", "a" }, { "claim", "a", "o", 0, 1 },
      { "renew", "a", "o", 1, 0, 1 }, { "complete", "a", "o", 1, 0, "r" },
      { "release", "a", "o", 1 }, { "init_db" }, { "settings" }, { "name" },
    }) do
      local err = H.error_of(db[call[1]], db, table.unpack(call, 2))
      assert.truthy(err:find("attempt to use a closed lease database", 1, true), err)
    end
  end)

  it("closes when garbage collected #sqlite", function()
    local p = H.path()
    local db = lease.open(p)
    db:enqueue("a")
    assert.is_true(H.exists(p .. "-wal"))
    db = nil   -- luacheck: ignore
    collectgarbage()
    collectgarbage()
    assert.is_false(H.exists(p .. "-wal"))
  end)

  it("survives many handles left to the garbage collector", function()
    local p = H.path()
    lease.init_db(p)
    local n = H.rounds(3000, 150)   -- below the test server's max_connections
    for i = 1, n do
      local db = lease.open(p)
      if i % math.floor(n / 6) == 0 then db:enqueue("j" .. i) end
    end
    collectgarbage()
    assert.are.equal(0, lease.state(p, "j" .. n).fence)
  end)

  it("path functions keep their connection between calls and close it with the Lua state #sqlite", function()
    local p = H.path()
    local t = lease.thread.spawn(function(path)
      local l = require("lease")
      local function wal() local f = io.open(path .. "-wal") if f then f:close() end return f ~= nil end
      local seen = {}
      l.enqueue(path, "a")
      seen[1] = wal()
      seen[2] = l.claim(path, "a", "o", 0, 10)
      seen[3] = wal()
      seen[4] = pcall(l.claim, path, "a", "o", 0, 0)
      return seen
    end, p)
    assert.are.same({ true, { true, 1, true, false } }, { t:join() })
    -- the thread's state closed its connection, the last one: the WAL file is gone
    assert.is_false(H.exists(p .. "-wal"))
    assert.are.equal("o", lease.open(p):state("a").owner)
  end)

  it("keeps a call's connection alive when a finalizer closes the handle during it", function()
    -- Any allocation inside a call may run finalizers; one may close the
    -- handle the call is using.  The call must finish on a live connection
    -- (the sanitizer builds catch a use after free here) and the handle must
    -- end up closed.
    local db, p = H.fresh()
    db:enqueue_many({ "a", "b", "c" })
    db:close()
    -- collect at (nearly) every allocation (5.4 names the mode; 5.1-5.3 set the multiplier)
    if not pcall(collectgarbage, "incremental", 0, 1000) then
      collectgarbage("setpause", 0); collectgarbage("setstepmul", 1000)
    end
    local finished, refused = 0, 0
    local rounds = H.rounds(300, 20)
    local ok, err = pcall(function()
      for _ = 1, rounds do
        local d = lease.open(p)
        for _, call in ipairs({
          function() return d:state("a") end,
          function() return d:jobs("all", 0, 10) end,
          function() return d:claim_next("w", 0, 10, 2) end,
          function() return d:counts(0) end,
          function() return d:claim_many("b", { "x", "y" }, 0, 10) end,
        }) do
          setmetatable({}, { __gc = function() d:close() end })
          local done, res = pcall(call)
          if done then
            finished = finished + 1
            assert(type(res) == "table", "a call returned " .. type(res))
            if res.id then assert(res.id == "a" and res.fence >= 0, "a row read wrong") end
          else
            assert(tostring(res):find("attempt to use a closed lease database", 1, true), res)
            refused = refused + 1
          end
          d:close()
          d = lease.open(p)
        end
        d:close()
      end
    end)
    if not pcall(collectgarbage, "incremental", 200, 100) then
      collectgarbage("setpause", 200); collectgarbage("setstepmul", 100)
    end
    collectgarbage()
    assert.is_true(ok, err)
    assert.is_true(finished > 0)
    assert.are.equal(5 * rounds, finished + refused)
  end)

  it("names its type in argument errors", function()
    local db = H.fresh()
    local err = H.error_of(db.claim, 42, "a", "o", 0, 1)
    assert.truthy(err:find("lease.db expected, got number", 1, true), err)
    err = H.error_of(db.state, {}, "a")
    assert.truthy(err:find("lease.db expected, got table", 1, true), err)
  end)

  it("refuses unknown and malformed options", function()
    local p = H.path()
    for _, case in ipairs({
      { { busy = 1 }, "unknown option 'busy'" },
      { { busy_timeout = -1 }, "busy_timeout must be" },
      { { busy_timeout = 0 / 0 }, "busy_timeout must be" },
      { { busy_timeout = "1" }, "busy_timeout must be" },
      { { synchronous = "off" }, 'synchronous must be "full" or "normal"' },
      { { synchronous = "FULL" }, 'synchronous must be "full" or "normal"' },
      { { readonly = "yes" }, "readonly must be a boolean" },
      { { create = 1 }, "create must be a boolean" },
      { { [1] = true }, "unknown option" },
    }) do
      local err = H.error_of(lease.open, p, case[1])
      assert.truthy(err:find("bad argument #2 to 'lease.open'", 1, true), err)
      assert.truthy(err:find(case[2], 1, true), err)
    end
    assert.truthy(H.error_of(lease.open, p, 5):find("options must be a table or nil, got 5", 1, true))
    assert.is_false(H.exists(p))
  end)

  it("accepts busy_timeout = 0 (fail at once) and reports it", function()
    local db = H.fresh(nil, { busy_timeout = 0 })
    assert.are.equal(0, db:settings().busy_timeout)
    db:close()
  end)

  it("keeps handles on one file independent", function()
    local p = H.path()
    local a, b = lease.open(p), lease.open(p)
    a:enqueue("j")
    assert.are.equal(1, b:claim("j", "B", 0, 10))
    assert.are.same({ nil, "held" }, { a:claim("j", "A", 5, 10) })
    a:close()
    assert.are.equal("B", b:state("j").owner)
    b:close()
  end)

  it("works on an in-memory database within one handle", function()
    local db = lease.open(":memory:")
    db:enqueue("m")
    assert.are.equal(1, db:claim("m", "o", 0, 1))
    assert.are.equal("memory", db:settings().journal_mode)
    db:close()
  end)

  it("has a version string", function()
    assert.matches("^%d+%.%d+%.%d+$", lease.version)
  end)
end)
