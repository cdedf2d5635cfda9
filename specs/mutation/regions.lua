-- specs/mutation/regions.lua: the named definitions of a source file, so
-- that a mutant can name the function (or macro, or table) it mutates and
-- be looked up there (run.lua), and so that a refactor that moves or
-- renames that definition is reported as such.
--
-- R.definitions(text, path) -> list of {name =, first =, last =}, byte
-- offsets of each definition's first character and of the newline that
-- ends its last line, for:
--   C (.c, .h): a function or a braced initializer (`static const char
--     *const sql[] = {`), from its line at column 0 to the next line that
--     starts with `}`; a macro, from `#define NAME` to the first line that
--     does not end with a backslash;
--   Lua (.lua): `function a.b.name(`, `local function name(`,
--     `[local] name = function(`, from that line to the next `end` at the
--     same indentation (or the line itself when it ends the function).
-- R.find(text, path, name) -> list of the definitions called name.
local R = {}

-- Lines of text with their byte offsets: list of {s =, e =, text =}, e the
-- offset of the newline that ends the line.
local function lines_of(text)
  local out, at = {}, 1
  while at <= #text do
    local nl = text:find("\n", at, true) or (#text + 1)
    out[#out + 1] = { s = at, e = nl, text = text:sub(at, nl - 1) }
    at = nl + 1
  end
  return out
end

-- C: the name a line at column 0 defines, or nil.
local function c_head(line)
  local first = line:sub(1, 1)
  if first == "" or first:match("[%s#/%*}{]") then return nil end
  if line:match(";%s*$") then return nil end
  -- a function: the last identifier before the first "("
  local name = line:match("([%a_][%w_]*)%s*%(")
  if name and not line:match("=") then return name end
  -- a braced initializer: the identifier before "[" or "=" of `... = {`
  if line:match("=%s*{%s*$") or line:match("=%s*$") then
    return line:match("([%a_][%w_]*)%s*%[[^%]]*%]%s*=") or line:match("([%a_][%w_]*)%s*=")
  end
  return nil
end

local function c_definitions(text)
  local ls, defs = lines_of(text), {}
  local k = 1
  while k <= #ls do
    local line = ls[k].text
    local macro = line:match("^#%s*define%s+([%a_][%w_]*)")
    local opens = line:find("/*", 1, true)
    if opens and not line:find("*/", opens + 2, true) then
      -- a block comment's lines (an LDoc text's lines start at column 0)
      -- define nothing
      while ls[k + 1] and not ls[k].text:find("*/", 1, true) do k = k + 1 end
      k = k + 1
    elseif macro then
      local j = k
      while ls[j].text:match("\\%s*$") and ls[j + 1] do j = j + 1 end
      defs[#defs + 1] = { name = macro, first = ls[k].s, last = ls[j].e }
      k = j + 1
    else
      local name = c_head(line)
      local j = k
      if name then
        -- the body: up to the next line starting with "}", unless a ";"
        -- ends the declaration before any "{"
        local opened = line:find("{", 1, true) ~= nil
        while not opened and ls[j + 1] do
          j = j + 1
          if ls[j].text:find("{", 1, true) then opened = true
          elseif ls[j].text:match(";%s*$") then break end
        end
        if opened then
          while ls[j + 1] and not ls[j].text:match("^}") do j = j + 1 end
          defs[#defs + 1] = { name = name, first = ls[k].s, last = ls[j].e }
        end
      end
      k = (name and j or k) + 1
    end
  end
  return defs
end

local function lua_definitions(text)
  local ls, defs = lines_of(text), {}
  for k, l in ipairs(ls) do
    local line = l.text
    local indent, name = line:match("^(%s*)local%s+function%s+([%a_][%w_]*)%s*%(")
    if not name then
      indent, name = line:match("^(%s*)function%s+[%w_.:]-([%a_][%w_]*)%s*%(")
    end
    if not name then
      indent, name = line:match("^(%s*)local%s+([%a_][%w_]*)%s*=%s*function%s*%(")
    end
    if not name then
      indent, name = line:match("^(%s*)[%w_.]-([%a_][%w_]*)%s*=%s*function%s*%(")
    end
    if name then
      local last = nil
      if line:match("%f[%w]end%s*%)?,?%s*$") and not line:match("%f[%w]function%s*%b()%s*$") then
        last = l.e
      else
        for j = k + 1, #ls do
          if ls[j].text:match("^" .. indent .. "end%f[^%w]") then last = ls[j].e; break end
        end
      end
      if last then defs[#defs + 1] = { name = name, first = l.s, last = last } end
    end
  end
  return defs
end

function R.definitions(text, path)
  if path:match("%.lua$") then return lua_definitions(text) end
  return c_definitions(text)
end

function R.find(text, path, name)
  local out = {}
  for _, d in ipairs(R.definitions(text, path)) do
    if d.name == name then out[#out + 1] = d end
  end
  return out
end

-- R.smallest(text, path, s, e) -> the name of the smallest definition that
-- holds the bytes s..e, or nil.
function R.smallest(text, path, s, e)
  local best
  for _, d in ipairs(R.definitions(text, path)) do
    if d.first <= s and d.last >= e and (not best or d.last - d.first < best.last - best.first) then
      best = d
    end
  end
  return best and best.name
end

return R
