--- What lease's Lua modules need that differs between Lua 5.4, 5.3, 5.1
-- and LuaJIT 2.1, in one place: integer checks without `math.type`, and a
-- handle closed when a function ends, however it ends, without `<close>`.
-- Internal to lease.pool, lease.cli and lease.json.
-- @module lease.compat
local compat = {}

-- 2^53: every integer up to it (in magnitude) is exact in a double.
local EXACT = 9007199254740992

--- Whether x is an integer number.  On 5.3 and 5.4: a number of integer
-- subtype (`math.type(x) == "integer"`; 4.0 is not).  On 5.1 and LuaJIT,
-- where every number is a double: a number with no fraction and at most
-- 2^53 in magnitude, so that it is exact.
-- @param x any value
-- @treturn boolean
function compat.is_integer(x)
  if math.type then return math.type(x) == "integer" end
  return type(x) == "number" and x == math.floor(x) and x >= -EXACT and x <= EXACT
end

--- The integer x stands for, or nil: `math.tointeger` on 5.3 and 5.4 (a
-- float with no fraction gives its integer); on 5.1 and LuaJIT x itself
-- when it has no fraction and is at most 2^53 in magnitude.
-- @param x any value
-- @treturn ?integer the integer, or nil
function compat.tointeger(x)
  if math.tointeger then
    return type(x) == "number" and math.tointeger(x) or nil
  end
  if compat.is_integer(x) then return x end
  return nil
end

--- Close h, then hand back what pcall returned: the results, or the error
-- raised again unchanged (its value and message, no position added).
-- @param h a handle with a close method
-- @tparam boolean ok pcall's status
-- @param ... the results, or the error value
-- @return the results
-- @raise the error value when ok is false; h:close()'s error
local function finish(h, ok, ...)
  h:close()
  if not ok then error((...), 0) end
  return ...
end

--- Call fn(h, ...) and close h when it returns or raises, as a `<close>`
-- variable does on 5.4: h:close() runs before the results come back or
-- the error propagates.
-- @param h a handle with a close method (a lease handle)
-- @tparam function fn the body
-- @param ... more arguments for fn
-- @return what fn returns
-- @raise what fn raises, unchanged, after h is closed; h:close()'s error
function compat.using(h, fn, ...)
  return finish(h, pcall(fn, h, ...))
end

return compat
