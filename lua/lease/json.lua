--- JSON text for machine-readable output, with numbers that read back
-- exactly, and the JSON a worker reads (`decode`).
--
-- Strings, tables, booleans and `null` are written by dkjson (Debian's
-- lua-dkjson), which writes numbers with 14 significant digits; every
-- number goes through @{number} instead, so a reader gets back the exact
-- value that was stored: integers as integers, floats as the shortest
-- decimal that reads back as the same double.
-- @module lease.json
local dkjson = require("dkjson")
local compat = require("lease.compat")

local json = {}

--- The JSON `null` value (dkjson's).
json.null = dkjson.null

--- The decimal text of a number, shortest that reads back exactly.
-- An integer (lease.compat.is_integer: on 5.1 and LuaJIT a number with no
-- fraction up to 2^53) is written with all its digits; a float with the fewest
-- significant digits (15, 16 or 17) for which `tonumber` gives back the
-- same double, and with ".0" when it would otherwise read as an integer.
-- The decimal point is "." whatever the C locale says.
-- @tparam number x an integer, or a finite float
-- @treturn string the JSON number text
-- @raise "lease.json.number: cannot write nan as JSON" (or inf, -inf):
-- JSON has no text for them.
function json.number(x)
  if compat.is_integer(x) then return string.format("%d", x) end
  if x ~= x or x == math.huge or x == -math.huge then
    error(string.format("lease.json.number: cannot write %s as JSON",
      x ~= x and "nan" or (x > 0 and "inf" or "-inf")), 2)
  end
  local s
  for digits = 15, 17 do
    s = string.format("%." .. digits .. "g", x):gsub(",", ".")
    if tonumber(s) == x then break end
  end
  if not s:find("[.e]") then s = s .. ".0" end
  return s
end

--- A copy of v in which every number is a dkjson custom value holding its
-- text from json.number.
-- @param v the value to encode
-- @tparam table seen the tables being copied (guards against a cycle)
-- @tparam table how `{null_nonfinite=, keys=}`: write nan and inf as null;
-- when keys is a table, every string key met is set in it
-- @return the copy
-- @raise json.number's error, or "lease.json.encode: a table holds itself"
local function prepare(v, seen, how)
  if type(v) == "number" then
    if how.null_nonfinite and (v ~= v or v == math.huge or v == -math.huge) then return json.null end
    local text = json.number(v)
    return setmetatable({}, { __tojson = function() return text end })
  end
  if type(v) ~= "table" or getmetatable(v) ~= nil then return v end
  if seen[v] then error("lease.json.encode: a table holds itself", 3) end
  seen[v] = true
  local c = {}
  for k, x in pairs(v) do
    if how.keys and type(k) == "string" then how.keys[k] = true end
    c[k] = prepare(x, seen, how)
  end
  seen[v] = nil
  return c
end

--- Encode a value as JSON text.
-- @param value a string, number, boolean, @{null}, or a table of them (an
-- array or a table with string keys)
-- @tparam[opt] table options dkjson's encode options, e.g. `keyorder`, and
-- two of this module's: `sorted = true` writes every object's keys in
-- sorted order (the same text for the same content on every run; a
-- keyorder given first), `null_nonfinite = true` writes nan, inf and -inf
-- as null instead of raising
-- @treturn string the JSON text
-- @raise "lease.json.number: cannot write nan as JSON" (or inf) for a
-- number JSON cannot carry, "lease.json.encode: a table holds itself" for
-- a cycle, or dkjson's error for a value it cannot write (a function).
function json.encode(value, options)
  local how = { null_nonfinite = options and options.null_nonfinite,
                keys = options and options.sorted and {} or nil }
  local prepared = prepare(value, {}, how)
  if how.keys or how.null_nonfinite then
    local o = {}
    for k, x in pairs(options) do o[k] = x end
    o.sorted, o.null_nonfinite = nil, nil
    if how.keys then
      local order, given = {}, {}
      for _, k in ipairs(options.keyorder or {}) do order[#order + 1] = k; given[k] = true end
      local rest = {}
      for k in pairs(how.keys) do if not given[k] then rest[#rest + 1] = k end end
      table.sort(rest)
      for _, k in ipairs(rest) do order[#order + 1] = k end
      o.keyorder = order
    end
    options = o
  end
  local text, err = dkjson.encode(prepared, options)
  if not text then error("lease.json.encode: " .. tostring(err), 2) end
  return text
end

--- Decode JSON text, as a worker run by `lease pool` reads its payload.
-- Objects and arrays become tables, `null` becomes @{null} (so an array
-- keeps its length and an object its key), numbers become Lua numbers.
-- @tparam string text the JSON text
-- @return the value, or nil when text is not JSON
-- @treturn ?string nil, or the reason with where it was found
-- ("lease.json.decode: unterminated array at line 1, column 1")
-- @raise "bad argument #1 to 'lease.json.decode' (string expected, got T)"
function json.decode(text)
  if type(text) ~= "string" then
    error("bad argument #1 to 'lease.json.decode' (string expected, got " .. type(text) .. ")", 2)
  end
  local value, at, err = dkjson.decode(text, 1, json.null)
  if err then return nil, "lease.json.decode: " .. err end
  local rest = text:find("%S", at)
  if rest then
    return nil, string.format("lease.json.decode: text after the value at %d", rest)
  end
  return value
end

return json
