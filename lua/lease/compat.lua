--- What lease's Lua modules need that differs between Lua 5.4, 5.3, 5.1
-- and LuaJIT 2.1, in one place: integer checks without `math.type`, a
-- handle closed when a function ends, however it ends, without `<close>`,
-- and UTF-8 validation without the utf8 library; and the one escaping of
-- bytes for a person (hex_escaped).  Internal to lease.pool,
-- lease.cli, lease.json and lease.observe.
-- @module lease.compat
local compat = {}

-- 2^53: every integer up to it (in magnitude) is exact in a double.
local EXACT = 9007199254740992

--- The length of the UTF-8 sequence that starts at byte i of s, or nil
-- when none starts there.  Valid means what Lua 5.4's utf8.len accepts
-- (RFC 3629): the shortest form, no surrogate (U+D800..U+DFFF), nothing
-- above U+10FFFF.  Written out because 5.1 and LuaJIT have no utf8
-- library and 5.3's accepts surrogates.
-- @tparam string s any bytes
-- @tparam integer i a byte index in s
-- @treturn ?integer 1 to 4, or nil
function compat.utf8_sequence(s, i)
  local c = s:byte(i)
  if c < 0x80 then return 1 end
  local n, cp
  if c >= 0xC2 and c <= 0xDF then n, cp = 2, c - 0xC0
  elseif c >= 0xE0 and c <= 0xEF then n, cp = 3, c - 0xE0
  elseif c >= 0xF0 and c <= 0xF4 then n, cp = 4, c - 0xF0
  else return nil end
  for k = 1, n - 1 do
    local b = s:byte(i + k)
    if not b or b < 0x80 or b > 0xBF then return nil end
    cp = cp * 64 + (b - 0x80)
  end
  if n == 3 and (cp < 0x800 or (cp >= 0xD800 and cp <= 0xDFFF)) then return nil end
  if n == 4 and (cp < 0x10000 or cp > 0x10FFFF) then return nil end
  return n
end

--- s with every byte outside printable ASCII (32 to 126) written as the
-- four characters \xNN (two lowercase hex digits): bytes shown to a
-- person, whatever the terminal makes of the others.
-- @tparam string s any bytes
-- @treturn string printable ASCII
function compat.hex_escaped(s)
  return (s:gsub("[^\32-\126]", function(c) return string.format("\\x%02x", c:byte()) end))
end

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
