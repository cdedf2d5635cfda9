-- lease.compat: what lease.pool, lease.cli and lease.json use in place of
-- `<close>` and math.type, on every Lua version.
local H = require("helpers")
local compat = require("lease.compat")

-- A stand-in handle that records its closes.
local function handle()
  local h = { closed = 0 }
  function h.close(self) self.closed = self.closed + 1 end
  return h
end

describe("lease.compat.using", function()
  it("closes the handle once and gives back every result, nils included", function()
    local h = handle()
    local n, a, b, c = (function(...) return select("#", ...), ... end)(
      compat.using(h, function(got, x) assert.are.equal(h, got); return x, nil, "c" end, "a"))
    assert.are.equal(3, n)
    assert.are.same({ "a", nil, "c" }, { a, b, c })
    assert.are.equal(1, h.closed)
  end)

  it("closes the handle before an error propagates, and raises it unchanged", function()
    local h = handle()
    local err = H.error_of(compat.using, h, function() error("boom at the source") end)
    -- the position is the source's, with nothing put before it
    assert.truthy(err:find("^specs/28%-compat_spec%.lua:%d+: boom at the source$"), err)
    assert.are.equal(1, h.closed)
    -- an error value that is not a string comes through as the same value
    local obj = setmetatable({}, { __tostring = function() return "an object" end })
    local h2 = handle()
    local ok, got = pcall(compat.using, h2, function() error(obj) end)
    assert.is_false(ok)
    assert.are.equal(obj, got)
    assert.are.equal(1, h2.closed)
  end)

  it("closes a real lease handle when the body raises", function()
    local db, p = H.fresh("using")
    db:enqueue("j")
    local err = H.error_of(compat.using, db, function(d)
      assert.are.equal(1, d:claim("j", "w", 0, 10))
      error("after the claim")
    end)
    assert.truthy(err:find("after the claim", 1, true), err)
    assert.truthy(H.error_of(function() local _ = db:state("j") end):find("closed", 1, true))
    assert.are.equal(1, H.lease.state(p, "j").fence)   -- the claim was stored before the error
  end)
end)

describe("lease.compat.is_integer and tointeger", function()
  it("take integers and refuse fractions, strings and non-numbers", function()
    for _, v in ipairs({ 0, 7, -3, 2 ^ 31, 9007199254740992 }) do
      assert.is_true(compat.is_integer(math.floor(v)), tostring(v))
      assert.are.equal(math.floor(v), compat.tointeger(v))
    end
    for _, v in ipairs({ 0.5, -2.25, 1 / 0, -1 / 0, 0 / 0, "3", true, {} }) do
      assert.is_false(compat.is_integer(v), tostring(v))
      assert.is_nil(compat.tointeger(v), tostring(v))
    end
  end)

  it("follow the subtype where Lua has one, and stop at 2^53 where it has not", function()
    if H.integers then
      assert.is_false(compat.is_integer(4.0))             -- a float, however round
      assert.are.equal("integer", math.type(compat.tointeger(4.0)))
      assert.is_true(compat.is_integer(math.maxinteger))
    else
      assert.is_true(compat.is_integer(4.0))              -- 5.1 and LuaJIT: every number is a double
      assert.is_false(compat.is_integer(2 ^ 53 + 2))      -- not every integer up there is exact
      assert.is_nil(compat.tointeger(2 ^ 53 + 2))
    end
  end)
end)
