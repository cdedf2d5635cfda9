-- Bad input: every invalid argument raises an error naming the function and
-- the argument, before anything touches the database.  After each refused
-- call the database is checked unchanged (every column of every row, read by
-- another SQLite client), and a path function given a new path must not
-- even create the file.
local H = require("helpers")
local lease = H.lease

local nan, inf = 0 / 0, math.huge

-- Each case: operation, its arguments after the handle (or path), the
-- 1-based position of the bad one among them, and the name the message uses.
local cases = {
  -- claim(id, owner, now, ttl)
  { "claim", { "job", "B", 200, 0 }, 4, "ttl" },
  { "claim", { "job", "B", 200, -1 }, 4, "ttl" },
  { "claim", { "job", "B", 200, nan }, 4, "ttl" },
  { "claim", { "job", "B", 200, inf }, 4, "ttl" },
  { "claim", { "job", "B", 200, -inf }, 4, "ttl" },
  { "claim", { "job", "B", 200, "5" }, 4, "ttl" },
  { "claim", { "job", "B", 200, nil }, 4, "ttl" },
  { "claim", { "job", "B", 200, {} }, 4, "ttl" },
  { "claim", { "job", "B", nan, 10 }, 3, "now" },
  { "claim", { "job", "B", inf, 10 }, 3, "now" },
  { "claim", { "job", "B", -inf, 10 }, 3, "now" },
  { "claim", { "job", "B", "200", 10 }, 3, "now" },
  { "claim", { "job", "B", nil, 10 }, 3, "now" },
  { "claim", { "job", "B", 1e300, 1e-300 }, 4, "now + ttl" },
  { "claim", { "job", "B", 2 ^ 60, 1 }, 4, "now + ttl" },
  { "claim", { "job", "B", 1e308, 1e308 }, 4, "now + ttl" },
  { "claim", { nil, "B", 200, 10 }, 1, "id" },
  { "claim", { {}, "B", 200, 10 }, 1, "id" },
  { "claim", { "", "B", 200, 10 }, 1, "id" },
  { "claim", { 7, "B", 200, 10 }, 1, "id" },
  { "claim", { "job", nil, 200, 10 }, 2, "owner" },
  { "claim", { "job", {}, 200, 10 }, 2, "owner" },
  { "claim", { "job", "", 200, 10 }, 2, "owner" },
  { "claim", { "job", true, 200, 10 }, 2, "owner" },
  -- renew(id, owner, fence, now, ttl)
  { "renew", { "job", "A", 1, 110, 0 }, 5, "ttl" },
  { "renew", { "job", "A", 1, 110, -1 }, 5, "ttl" },
  { "renew", { "job", "A", 1, 110, nan }, 5, "ttl" },
  { "renew", { "job", "A", 1, 110, inf }, 5, "ttl" },
  { "renew", { "job", "A", 1, 110, "5" }, 5, "ttl" },
  { "renew", { "job", "A", 1, 110, nil }, 5, "ttl" },
  { "renew", { "job", "A", 1, nan, 10 }, 4, "now" },
  { "renew", { "job", "A", 1, -inf, 10 }, 4, "now" },
  { "renew", { "job", "A", 1, 1e300, 1e-300 }, 5, "now + ttl" },
  { "renew", { "job", "A", 1.5, 110, 10 }, 3, "fence" },
  { "renew", { "job", "A", "1", 110, 10 }, 3, "fence" },
  { "renew", { "job", "A", nil, 110, 10 }, 3, "fence" },
  { "renew", { "job", "A", nan, 110, 10 }, 3, "fence" },
  { "renew", { "job", "", 1, 110, 10 }, 2, "owner" },
  { "renew", { "", "A", 1, 110, 10 }, 1, "id" },
  -- complete(id, owner, fence, now [, result])
  { "complete", { "job", "A", 1, 110, {} }, 5, "result" },
  { "complete", { "job", "A", 1, 110, 5 }, 5, "result" },
  { "complete", { "job", "A", 1, 110, true }, 5, "result" },
  { "complete", { "job", "A", 1, nan, "r" }, 4, "now" },
  { "complete", { "job", "A", 1, inf, "r" }, 4, "now" },
  { "complete", { "job", "A", 1, "110", "r" }, 4, "now" },
  { "complete", { "job", "A", 1.5, 110, "r" }, 3, "fence" },
  { "complete", { "job", "A", "1", 110, "r" }, 3, "fence" },
  { "complete", { "job", nil, 1, 110, "r" }, 2, "owner" },
  { "complete", { {}, "A", 1, 110, "r" }, 1, "id" },
  -- release(id, owner, fence)
  { "release", { "job", "A", 1.5 }, 3, "fence" },
  { "release", { "job", "A", "1" }, 3, "fence" },
  { "release", { "job", "A", nil }, 3, "fence" },
  { "release", { "job", "", 1 }, 2, "owner" },
  { "release", { "job", {}, 1 }, 2, "owner" },
  { "release", { nil, "A", 1 }, 1, "id" },
  -- enqueue(id), state(id)
  { "enqueue", { nil }, 1, "id" },
  { "enqueue", { {} }, 1, "id" },
  { "enqueue", { "" }, 1, "id" },
  { "enqueue", { 42 }, 1, "id" },
  { "state", { nil }, 1, "id" },
  { "state", { "" }, 1, "id" },
  { "state", { {} }, 1, "id" },
}

-- A database with a held job and a done job, to be left untouched.
local function populated()
  local db, p = H.fresh("bad")
  db:enqueue("job")
  assert.are.equal(1, db:claim("job", "A", 100, 30))
  db:enqueue("finished")
  local f = db:claim("finished", "A", 0, 10)
  assert.is_true(db:complete("finished", "A", f, 1, "kept"))
  return db, p
end

-- A function calling db:<op>(...) with method syntax, as users write it
-- (argument numbers in the message then leave out self, as in luaL_argerror).
-- Not a tail call: LuaJIT keeps no caller information for one, so there a
-- method called as `return db:claim(...)` counts self, as LuaJIT's own
-- library functions do.
local function method(db, op)
  local compile = loadstring or load   -- luacheck: ignore (5.1 names it loadstring)
  return assert(compile("local db = ...; return function(...) local _ = db:" .. op .. "(...) end"))(db)
end

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

describe("bad input", function()
  for _, c in ipairs(cases) do
    local op, args, pos, name = c[1], c[2], c[3], c[4]
    local argtext = {}
    for i = 1, 5 do if i <= #args or args[i] ~= nil then argtext[#argtext + 1] = show(args[i]) end end
    local label = string.format("%s(%s) names argument %s", op, table.concat(argtext, ", "), name)

    it("db:" .. label .. ", database unchanged", function()
      local db, p = populated()
      local before = H.snapshot(p)
      local n = math.max(#args, pos)
      local err = H.error_of(method(db, op), table.unpack(args, 1, n))
      assert.truthy(err:find(string.format("bad argument #%d to '%s'", pos, op), 1, true), err)
      assert.truthy(err:find("(" .. name .. " must", 1, true) or err:find("(" .. name .. ",", 1, true), err)
      assert.are.same(before, H.snapshot(p))
      -- the handle still works afterwards
      assert.are.equal(1, db:state("job").fence)
      db:close()
    end)

    it("lease." .. label .. ", database unchanged", function()
      local _, p = populated()
      local before = H.snapshot(p)
      local n = math.max(#args, pos)
      local err = H.error_of(lease[op], p, table.unpack(args, 1, n))
      assert.truthy(err:find(string.format("bad argument #%d to 'lease.%s'", pos + 1, op), 1, true), err)
      assert.are.same(before, H.snapshot(p))
    end)

    it("lease." .. label .. " before creating the file", function()
      local p = H.path("never")
      local n = math.max(#args, pos)
      H.error_of(lease[op], p, table.unpack(args, 1, n))
      assert.is_false(H.exists(p))
    end)
  end

  it("option tables with a metatable are refused, whichever call takes them, and nothing changes", function()
    local db, p = populated()
    local before = H.snapshot(p)
    -- the idiom of defaults through __index: some calls would read them, others not
    -- (each call is not a tail call: LuaJIT keeps no caller for one, and the
    -- argument numbers of a method call would count self)
    local function mt(t) return setmetatable(t or {}, { __index = { queue = "mail", concurrency = 2,
      readonly = true, n = 5, every = 60 } }) end
    for _, c in ipairs({
      { "enqueue", function() local r = db:enqueue("new", mt()); return r end,
        "#2 to 'enqueue' (opts must be a plain table" },
      { "enqueue_many", function() local r = db:enqueue_many({ mt({ id = "new" }) }); return r end,
        "#1 to 'enqueue_many' (ids[1] must be a plain table" },
      { "limit", function() local r = db:limit("mail", mt()); return r end,
        "#2 to 'limit' (limits must be a plain table" },
      { "claim_next", function() local r = db:claim_next("w", 1, 10, mt()); return r end,
        "#4 to 'claim_next' (opts must be a plain table" },
      { "jobs", function() local r = db:jobs(mt()); return r end, "#1 to 'jobs' (filter must be a plain table" },
      { "schedule", function() local r = db:schedule("s", 1e9, mt()); return r end,
        "#3 to 'schedule' (opts must be a plain table" },
      { "open", function() local r = lease.open(p, mt()); return r end,
        "#2 to 'lease.open' (options must be a plain table" },
      { "open events", function() local r = lease.open(p, { events = mt() }); return r end,
        "#2 to 'lease.open' (events must be a plain table" },
      { "pool.run", function()
          local r = require("lease.pool").run(mt({ db = p, handler = function() end }))
          return r
        end,
        "#1 to 'lease.pool.run' (options must be a plain table" },
    }) do
      local err = H.error_of(c[2])
      assert.truthy(err:find("bad argument " .. c[3], 1, true), c[1] .. ": " .. err)
    end
    assert.are.same(before, H.snapshot(p))
    -- a key that is no string is named, with its type
    local err = H.error_of(lease.open, p, { [true] = 1 })
    assert.truthy(err:find("(unknown option true (a boolean key))", 1, true), err)
    db:close()
  end)

  it("path arguments must be non-empty strings", function()
    for _, bad in ipairs({ "", 5 }) do
      local err = H.error_of(lease.open, bad)
      assert.truthy(err:find("bad argument #1 to 'lease.open' (path must be a non-empty string", 1, true), err)
      err = H.error_of(lease.claim, bad, "a", "b", 0, 1)
      assert.truthy(err:find("bad argument #1 to 'lease.claim' (path", 1, true), err)
    end
    local err = H.error_of(lease.state, nil, "a")
    assert.truthy(err:find("bad argument #1 to 'lease.state' (path", 1, true), err)
  end)
end)

describe("byte strings", function()
  it("keeps ids with zero bytes apart: 'a\\0b' and 'a\\0c' are two jobs", function()
    local db = H.fresh()
    assert.is_true(db:enqueue("a\0b"))
    assert.is_true(db:enqueue("a\0c"))
    assert.is_false((db:enqueue("a\0b")))
    assert.is_nil(db:state("a"))
    assert.are.equal(1, db:claim("a\0b", "w", 0, 10))
    assert.are.equal(0, db:state("a\0c").fence)
    assert.are.equal("a\0b", db:state("a\0b").id)
    assert.are.equal("a\0c", db:state("a\0c").id)
  end)

  it("round-trips owners and results with zero bytes exactly", function()
    local db = H.fresh()
    db:enqueue("j\0")
    local owner, result = "own\0er", "\0res\0ult\0"
    local f = db:claim("j\0", owner, 0, 10)
    assert.are.equal(owner, db:state("j\0").owner)
    -- an owner that differs only after the zero byte is another owner
    assert.are.same({ false, "not_owner" }, { db:complete("j\0", "own\0xx", f, 1, "x") })
    assert.are.same({ false, "not_owner" }, { db:complete("j\0", "own", f, 1, "x") })
    assert.is_true(db:complete("j\0", owner, f, 1, result))
    local s = db:state("j\0")
    assert.are.equal(result, s.result)
    assert.are.equal(#result, #s.result)
  end)

  it("round-trips a megabyte result and arbitrary bytes", function()
    local db = H.fresh()
    local bytes = {}
    for i = 0, 255 do bytes[#bytes + 1] = string.char(i) end
    local all = table.concat(bytes)
    local big = all:rep(4096)
    db:enqueue(all)
    local f = db:claim(all, all, 0, 10)
    assert.is_true(db:complete(all, all, f, 1, big))
    local s = db:state(all)
    assert.are.equal(all, s.id)
    assert.are.equal(all, s.owner)
    assert.are.equal(big, s.result)
  end)

  it("goes through the path functions the same way", function()
    local p = H.path()
    assert.is_true(lease.enqueue(p, "x\0y"))
    assert.is_true(lease.enqueue(p, "x\0z"))
    local f = lease.claim(p, "x\0y", "o\0", 0, 10)
    assert.is_true(lease.complete(p, "x\0y", "o\0", f, 1, "r\0"))
    assert.are.equal("r\0", lease.state(p, "x\0y").result)
    assert.is_nil(lease.state(p, "x\0z").result)
  end)
end)
