-- The host program build/lease (src/host/host.c): a Lua host (the version the
-- tree is built for) with lease and lease.thread preloaded, shaped like
-- lua.c.  Sanitizer trees run every
-- spec through it; these check its own command line.
local H = require("helpers")

-- The Lua version the specs (and so the host, built for the same Lua) run:
-- "5.4", "5.3" or "5.1" (LuaJIT too).
local VERSION = _VERSION:match("%d+%.%d+")
-- The versioned init variable lua.c reads first (5.3 on): LUA_INIT_5_4, ...
local INIT_VERSIONED = VERSION ~= "5.1" and "LUA_INIT_" .. VERSION:gsub("%.", "_") or nil

-- The host program's path, absolute (specs below run it in other directories).
local function exe()
  local e = os.getenv("LEASE_HOST")
  if not e or e == "" then e = (os.getenv("LEASE_BUILD_DIR") or "build") .. "/lease" end
  if e:sub(1, 1) ~= "/" then
    local p = io.popen("pwd")
    e = p:read("*l") .. "/" .. e
    p:close()
  end
  return e
end

--- Run the host program with the shell words `args`, feeding `stdin`.
-- @tparam string args the shell words after the program
-- @tparam[opt] string stdin what standard input holds (else it is /dev/null)
-- @tparam[opt] number deadline seconds before it is killed (status 124)
-- @tparam[opt] string dir the directory to run it in
-- @tparam[opt] table env variables to set (name -> value)
-- @treturn integer the exit status
-- @treturn string stdout
-- @treturn string stderr
local function host(args, stdin, deadline, dir, env)
  local base = H.file("host")
  H.write(base .. ".in", stdin or "")
  local vars = {}
  for k, v in pairs(env or {}) do vars[#vars + 1] = k .. "=" .. H.sh(v) end
  local cmd = (dir and ("cd " .. H.sh(dir) .. " && ") or "")
    .. (#vars > 0 and ("env -u LUA_INIT -u LUA_INIT_5_4 -u LUA_INIT_5_3 " .. table.concat(vars, " ") .. " ") or "")
    .. "timeout " .. (deadline or 60) .. " " .. H.sh(exe()) .. " " .. args
    .. " <" .. H.sh(base .. ".in") .. " >" .. H.sh(base .. ".out") .. " 2>" .. H.sh(base .. ".err")
  local status = H.execute(cmd)
  local out, err = H.read(base .. ".out"), H.read(base .. ".err")
  os.remove(base .. ".out"); os.remove(base .. ".err"); os.remove(base .. ".in")
  return status, out, err
end

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
    assert.matches("^lease " .. H.lease.version:gsub("%.", "%%.") .. " %(Lua " .. VERSION:gsub("%.", "%%.")
      .. "%.%d+, SQLite 3%.[%d.]+%)\n$", out)
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
    local script = H.file("args") .. ".lua"
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
    local script = H.file("fails") .. ".lua"
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

  it("refuses an unknown option or an option without its argument, with the usage", function()
    local status, out, err = host("-z")
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.matches("unrecognized option '%-z'", err)
    assert.matches("usage:", err)
    for _, bad in ipairs({ "-e", "-l", "-e -x", "-vx", "-Ex", "-Wx", "-ix", "---" }) do
      status, out, err = host(bad)
      assert.are.equal("", out, bad)
      assert.are.equal(1, status, bad)
      assert.matches("usage: ", err, bad)
    end
    status, out, err = host("-e")
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.matches("'%-e' needs an argument", err)
    status, out, err = host("-l")
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.matches("'%-l' needs an argument", err)
    status, out, err = host(H.sh(H.file("missing") .. ".lua"))
    assert.are.equal("", out)
    assert.are.equal(1, status)
    assert.matches("cannot open", err)
  end)

  it("takes the usage text from lease.cli, the one place it is written", function()
    local status, out, err = host("--help")
    assert.are.equal(0, status)
    assert.are.equal("", err)
    assert.are.equal(require("lease.cli").usage(exe()), out)
    for _, word in ipairs({ "-e stat", "-l mod", "-l g=mod", "-i ", "-v ", "-E ", "-W ", "-- ",
                            "lease pool", "lease jobs", "lease show" }) do
      assert.truthy(out:find(word, 1, true), word)
    end
  end)

  it("prints its version with --version as with -v: lease and LEASE_VERSION", function()
    local status, out, err = host("--version")
    assert.are.equal(0, status)
    assert.are.equal("", err)
    -- LEASE_VERSION (lease.h) is what lease.version gives
    assert.are.equal("lease " .. H.lease.version .. " (", out:sub(1, #H.lease.version + 8))
    assert.matches("^%d+%.%d+%.%d+$", H.lease.version)
    local _, v = host("-v")
    assert.are.equal(out, v)
  end)

  it("names an unknown command with the list of commands, and never opens it as a file", function()
    local dir = H.dir()
    H.write(dir .. "/jbos", "print('ran the file')\n")
    local status, out, err = host("jbos a b", nil, nil, dir)
    assert.are.equal(2, status)
    assert.are.equal("", out)
    assert.truthy(err:find("unknown command 'jbos' (did you mean jobs?)\n", 1, true), err)
    for _, c in ipairs({ "lease pool ", "lease jobs ", "lease show " }) do
      assert.truthy(err:find(c, 1, true), err)
    end
    -- the file is run when named as a path
    status, out = host("./jbos", nil, nil, dir)
    assert.are.equal(0, status)
    assert.are.equal("ran the file\n", out)
  end)

  it("runs -l mod and -l g=mod, in order with -e", function()
    local status, out, err = host("-l lease -e " .. H.sh("print(lease.version)") .. " -l L=lease.json"
      .. " -e " .. H.sh("print(L.number(0.1), json)") .. " -ldkjson -e " .. H.sh("print(type(dkjson))"))
    assert.are.equal("", err)
    assert.are.equal(0, status)
    assert.are.equal(H.lease.version .. "\n0.1\tnil\ntable\n", out)
    status, out, err = host("-l no_such_module_here -e " .. H.sh("print('not reached')"))
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.truthy(err:find("module 'no_such_module_here' not found", 1, true), err)
  end)

  it("builds arg as lua.c does: options negative, script 0, its arguments 1..n", function()
    local script = H.file("argt") .. ".lua"
    H.write(script, "local t = {} for i = -3, #arg do t[#t + 1] = i .. '=' .. tostring(arg[i]) end "
      .. "print(table.concat(t, ' '))\n")
    local status, out = host("-W -e 'x=1' " .. H.sh(script) .. " a -e")
    assert.are.equal(0, status)
    assert.are.equal("-3=-W -2=-e -1=x=1 0=" .. script .. " 1=a 2=-e\n", out)
    -- with no script, arg[0] is the program and the options are 1..n
    status, out = host("-e " .. H.sh("print(arg[0] == arg[-0], arg[1], #arg)"))
    assert.are.equal(0, status)
    assert.are.equal("true\t-e\t2\n", out)
    -- after "--" a script called "-e" is a file
    local dir = H.dir()
    H.write(dir .. "/-e", "print('file -e', ...)\n")
    status, out = host("-- -e 1", nil, nil, dir)
    assert.are.equal(0, status)
    assert.are.equal("file -e\t1\n", out)
    os.remove(script)
  end)

  it("runs a script from standard input: with -, after --, or piped with no script", function()
    local code = "print('from stdin', ...)"
    local status, out, err = host("- x y", code)
    assert.are.equal("", err)
    assert.are.equal(0, status)
    assert.are.equal("from stdin\tx\ty\n", out)
    status, out = host("", code)
    assert.are.equal(0, status)
    assert.are.equal("from stdin\n", out)
    status, out = host("--", code)
    assert.are.equal(0, status)
    assert.are.equal("from stdin\n", out)
    -- with -e or -v and no script, stdin is not read
    status, out = host("-e " .. H.sh("print(1)"), code)
    assert.are.equal(0, status)
    assert.are.equal("1\n", out)
    status, out, err = host("", "error('piped failure')")
    assert.are.equal("", out)
    assert.are.equal(1, status)
    assert.truthy(err:find("piped failure", 1, true), err)
  end)

  it("runs LUA_INIT_5_4 (LUA_INIT_5_3 on 5.3; none on 5.1), else LUA_INIT (code or @file), unless -E", function()
    local init = H.file("init") .. ".lua"
    H.write(init, "print('init file')\n")
    local e = " -e " .. H.sh("print('main')")
    local status, out, err = host(e, nil, nil, nil, { LUA_INIT = "print('init')" })
    assert.are.equal("", err)
    assert.are.equal(0, status)
    assert.are.equal("init\nmain\n", out)
    if INIT_VERSIONED then
      status, out = host(e, nil, nil, nil, { LUA_INIT = "print('init')", [INIT_VERSIONED] = "print('init versioned')" })
      assert.are.equal(0, status)
      assert.are.equal("init versioned\nmain\n", out)
    end
    -- another version's variable is not this one's
    status, out = host(e, nil, nil, nil, { LUA_INIT = "print('init')",
      [VERSION == "5.4" and "LUA_INIT_5_3" or "LUA_INIT_5_4"] = "print('other version')" })
    assert.are.equal(0, status)
    assert.are.equal("init\nmain\n", out)
    status, out = host(e, nil, nil, nil, { LUA_INIT = "@" .. init })
    assert.are.equal(0, status)
    assert.are.equal("init file\nmain\n", out)
    status, out = host("-E" .. e, nil, nil, nil, { LUA_INIT = "print('init')" })
    assert.are.equal(0, status)
    assert.are.equal("main\n", out)
    -- -E also makes require ignore LUA_PATH
    status, out = host("-E -e " .. H.sh("print(package.path:find('/nowhere/', 1, true))"), nil, nil, nil,
      { LUA_PATH = "/nowhere/?.lua" })
    assert.are.equal(0, status)
    assert.are.equal("nil\n", out)
    status, out = host("-e " .. H.sh("print(package.path:find('/nowhere/', 1, true) ~= nil)"), nil, nil, nil,
      { LUA_PATH = "/nowhere/?.lua" })
    assert.are.equal(0, status)
    assert.are.equal("true\n", out)
    status, out, err = host(e, nil, nil, nil, { LUA_INIT = "error('bad init')" })
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.truthy(err:find("bad init", 1, true), err)
    os.remove(init)
  end)

  it("turns warnings on with -W (5.4; accepted and without effect before, which has no warnings)", function()
    if VERSION ~= "5.4" then
      local status, out, err = host("-W -e " .. H.sh("print(warn)"))
      assert.are.equal(0, status)
      assert.are.equal("nil\n", out)
      assert.are.equal("", err)
      return
    end
    local status, _, err = host("-e " .. H.sh("warn('quiet')"))
    assert.are.equal(0, status)
    assert.are.equal("", err)
    status, _, err = host("-W -e " .. H.sh("warn('loud')"))
    assert.are.equal(0, status)
    assert.are.equal("Lua warning: loud\n", err)
  end)

  it("reads, evaluates and prints with -i, continuing incomplete lines", function()
    local status, out, err = host("-i -e " .. H.sh("x = 20"),
      "x + 1\n=x * 2\nfor i = 1, 2 do\nprint('line', i)\nend\nerror('oops')\n_PROMPT = 'P: '\n'after'\n")
    assert.are.equal(0, status)
    assert.matches("^lease %S+ %(Lua", out)
    assert.truthy(out:find("\n> 21\n> 40\n> >> >> line\t1\nline\t2\n> > P: after\nP: \n$"), out)
    assert.truthy(err:find("oops", 1, true), err)
    -- an error at the prompt is not fatal, and is printed once
    local n = 0
    for _ in err:gmatch("oops") do n = n + 1 end
    assert.are.equal(1, n)
  end)

  it("gives a prompt with no arguments on a terminal", function()
    if H.execute("command -v script >/dev/null 2>&1") ~= 0 then
      pending("no script(1) to make a terminal")
      return
    end
    local input = H.file("tty") .. ".in"
    H.write(input, "print(40 + 2)\n")
    local p = io.popen("timeout 20 script -qc " .. H.sh(exe()) .. " /dev/null < " .. H.sh(input) .. " 2>&1")
    local out = p:read("*a")
    p:close()
    os.remove(input)
    assert.truthy(out:find("lease %S+ %(Lua"), out)
    -- the prompt, then the value printed (the terminal may echo the input
    -- line between them, depending on when script(1) writes it)
    assert.truthy(out:find(">[^\n]*\n?[^\n]*42\r?\n"), out)
  end)
end)
