-- The host program build/lease (src/host.c): a Lua 5.4 host with lease and
-- lease.thread preloaded, shaped like lua.c.  Sanitizer trees run every
-- spec through it; these check its own command line.
local H = require("helpers")

local host = H.host

-- How many times `needle` occurs in s.
local function count(s, needle)
  local n, at = 0, 1
  while true do
    local i = s:find(needle, at, true)
    if not i then return n end
    n, at = n + 1, i + 1
  end
end

describe("the lease host program", function()
  it("prints its version and its usage", function()
    local status, out, err = host("-v")
    assert.are.equal(0, status)
    assert.matches("^lease " .. H.lease.version:gsub("%.", "%%.") .. " %(Lua 5%.4%.%d+, SQLite 3%.[%d.]+%)\n$", out)
    assert.are.equal("", err)
    status, out = host("--help")
    assert.are.equal(0, status)
    assert.matches("^usage: .*%-e stat", out)
  end)

  it("runs -e code with lease and lease.thread preloaded, and Debian's C modules reachable", function()
    local status, out, err = host("-e " .. H.sh("local l = require('lease'); print(l.version, "
      .. "l.thread == require('lease.thread'), type(require('system').monotime))"))
    assert.are.equal("", err)
    assert.are.equal(0, status)
    assert.are.equal(H.lease.version .. "\ttrue\tfunction\n", out)
  end)

  it("runs a script with arg and ... set as lua.c does", function()
    local script = H.path("args") .. ".lua"
    H.write(script, "print(arg[0], arg[1], arg[2], #arg, select('#', ...), ...)\n")
    local status, out = host("-e 'x=1' " .. H.sh(script) .. " one 'two 2'")
    assert.are.equal(0, status)
    assert.are.equal(script .. "\tone\ttwo 2\t2\t2\tone\ttwo 2\n", out)
    status, out = host("-", "print(1 + 1)")
    assert.are.equal(0, status)
    assert.are.equal("2\n", out)
    os.remove(script)
  end)

  it("prints an error once, with a traceback, and exits non-zero", function()
    local script = H.path("fails") .. ".lua"
    H.write(script, "local x = 1\nerror('oops')\n")
    local status, out, err = host(H.sh(script))
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.are.equal(1, count(err, "oops"))
    assert.are.equal(1, count(err, "stack traceback:"))
    -- Lua shortens long chunk names to "...<tail>", so match the file name
    local base = script:match("[^/]+$")
    assert.matches(base:gsub("%p", "%%%0") .. ":2: oops", err)
    status, out, err = host("-e " .. H.sh("error('from -e')"))
    assert.are.equal("", out)
    assert.are.equal(1, status)
    assert.are.equal(1, count(err, "from -e"))
    status = host("-e " .. H.sh("os.exit(3)"))
    assert.are.equal(3, status)
    os.remove(script)
  end)

  it("refuses an unknown option or a missing script with the usage", function()
    local status, out, err = host("-z")
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.matches("unrecognized option '%-z'", err)
    assert.matches("usage:", err)
    status, out, err = host("")
    assert.are.equal("", out)
    assert.are.equal(1, status)
    assert.matches("no script given", err)
    status, out, err = host("-e")
    assert.are.equal("", out)
    assert.are.equal(1, status)
    assert.matches("'%-e' needs an argument", err)
    status, out, err = host(H.sh(H.path("missing") .. ".lua"))
    assert.are.equal("", out)
    assert.are.equal(1, status)
    assert.matches("cannot open", err)
  end)
end)
