-- The inspection subcommands, through lease.cli.main (the host program
-- `lease jobs|show` calls the same function; the host's own spec checks the
-- process side: exit status and streams).
local H = require("helpers")
local lease = H.lease

-- Run cli.main(argv); returns status, stdout text, stderr text.
local run = H.cli

describe("lease jobs and lease show", function()
  local p
  before_each(function()
    local db
    db, p = H.fresh("cli")
    db:enqueue_many({ "ready", "held", "done", "zero\0byte" })
    db:claim("held", "w1", 100, 50)
    local f = db:claim("done", "w2", 0, 10)
    assert.is_true(db:complete("done", "w2", f, 1, "line one\nline two"))
    db:close()
  end)

  it("lists every job with status, queue, attempts, owner, lease left, fence and result size", function()
    local status, out, err = run({ "jobs", p, "--now", "120" })
    assert.are.equal(0, status)
    assert.are.equal("", err)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(6, #lines)
    assert.truthy(lines[1]:find("^ID%s+STATUS%s+QUEUE%s+ATTEMPT%s+OWNER%s+LEASE LEFT%s+FENCE%s+RESULT$"), lines[1])
    assert.truthy(lines[2]:find("^ready%s+available%s+default%s+0/25%s+%-%s+%-%s+0%s+%-$"), lines[2])
    assert.truthy(lines[3]:find("^held%s+running%s+default%s+1/25%s+w1%s+30%.0s%s+1%s+%-$"), lines[3])
    assert.truthy(lines[4]:find("^done%s+completed%s+default%s+1/25%s+w2%s+%-%s+1%s+17 B$"), lines[4])
    assert.truthy(lines[5]:find("^zero\\x00byte%s"), lines[5])
    assert.are.equal("4 jobs: 2 available, 1 running, 1 completed", lines[6])
  end)

  it("filters by status (--ready, --held, --done name three of them), and shows expired leases", function()
    local _, out = run({ "jobs", p, "--ready", "--now", "120" })
    assert.truthy(out:find("\nready ", 1, true))
    assert.is_nil(out:find("\nheld ", 1, true))
    assert.truthy(out:find("(2 shown)", 1, true))
    _, out = run({ "jobs", p, "--held", "--now", "120" })
    assert.truthy(out:find("\nheld ", 1, true))
    assert.truthy(out:find("(1 shown)", 1, true))
    _, out = run({ "jobs", p, "--status", "running", "--now", "120" })
    assert.truthy(out:find("(1 shown)", 1, true))
    _, out = run({ "jobs", p, "--done", "--now", "120" })
    assert.truthy(out:find("\ndone ", 1, true))
    -- a lease that ran out: the job is available again, its last owner shown
    _, out = run({ "jobs", p, "--ready", "--now", "200" })
    assert.truthy(out:find("held%s+available%s+default%s+1/25%s+w1%s+expired 50%.0s ago"), out)
  end)

  it("prints JSON for scripts", function()
    local json = require("dkjson")
    local status, out = run({ "jobs", p, "--json", "--now", "120" })
    assert.are.equal(0, status)
    local list = json.decode(out, 1, json.null)
    assert.are.equal(4, #list)
    assert.are.same({ id = "held", status = "running", queue = "default", priority = 0, attempt = 1,
                      max_attempts = 25, owner = "w1", ["until"] = 150, fence = 1, done = false,
                      payload_bytes = 0, result_bytes = 0 }, list[2])
    assert.are.equal("zero\0byte", list[4].id)
    assert.are.equal(json.null, list[1].owner)
    status, out = run({ "show", p, "done", "--json" })
    assert.are.equal(0, status)
    local j = json.decode(out)
    assert.are.equal("line one\nline two", j.result)
    assert.are.equal(17, j.result_bytes)
  end)

  it("writes every number in JSON so that it reads back to the stored value", function()
    local json = require("dkjson")
    -- until = 0 + ttl, so each value is stored exactly as written here
    local untils = { 1700000030.123456, 0.1 + 0.2, 1 / 3, 2 ^ 53 + 2.0, 1700000030.0, 5e-324,
                     1.7976931348623157e308, 123456789.98765432 }
    local db, path = H.fresh("digits")
    for i, u in ipairs(untils) do
      db:enqueue("u" .. i)
      assert.is_truthy(db:claim("u" .. i, "w", 0, u))
    end
    db:close()
    -- a fence above 2^53, where a float would round it: written exactly on a
    -- Lua with integers; on one without (5.1, LuaJIT) the command fails and
    -- says why, never writing a rounded fence
    H.sql(path, "UPDATE jobs SET fence = 9007199254740993 WHERE id = 'u1'")
    if not H.integers then
      local status, out, err = run({ "jobs", path, "--json", "--now", "0" })
      assert.are.equal(1, status)
      assert.are.equal("", out)
      assert.truthy(err:find("fence 9007199254740993 is above 2^53", 1, true), err)
      H.sql(path, "UPDATE jobs SET fence = 1 WHERE id = 'u1'")
    end
    local function check(j)
      local i = tonumber(j.id:sub(2))
      local stored = lease.state(path, j.id)
      assert.are.equal(untils[i], stored["until"])
      if H.integers then assert.are.equal(math.type(stored["until"]), math.type(j["until"]), j.id) end
      assert.is_true(stored["until"] == j["until"], string.format("%s: %.17g read back as %.17g",
        j.id, stored["until"], j["until"]))
      assert.is_true(H.is_integer(j.fence), tostring(j.fence))
      assert.are.equal(stored.fence, j.fence)
    end
    local status, out = run({ "jobs", path, "--json", "--now", "0" })
    assert.are.equal(0, status)
    local list = json.decode(out)
    assert.are.equal(#untils, #list)
    for _, j in ipairs(list) do check(j) end
    assert.are.equal(H.integers and 9007199254740993 or 1, list[1].fence)
    for i = 1, #untils do
      status, out = run({ "show", path, "u" .. i, "--json" })
      assert.are.equal(0, status)
      check(json.decode(out))
    end
    -- the shortest text that reads back exactly, and a float stays a float
    -- (a Lua without integers has no float subtype to keep: its integral
    -- numbers are written as integers)
    assert.truthy(out:find('"until":123456789.98765431,', 1, true), out)
    status, out = run({ "show", path, "u5", "--json" })
    assert.are.equal(0, status)
    assert.truthy(out:find(H.integers and '"until":1700000030.0,' or '"until":1700000030,', 1, true), out)
  end)

  it("never writes NaN or inf as a JSON number #sqlite", function()
    local json = require("lease.json")
    for _, x in ipairs({ 0 / 0, math.huge, -math.huge }) do
      local ok, err = pcall(json.number, x)
      assert.is_false(ok)
      assert.truthy(err:find("lease.json.number: cannot write [-]?[%a]+ as JSON"), err)
      ok, err = pcall(json.encode, { 1, { x } })
      assert.is_false(ok)
      assert.truthy(err:find("cannot write", 1, true), err)
    end
    assert.are.equal("[1,-2.5,1e+300,0.1]", json.encode({ 1, -2.5, 1e300, 0.1 }))
    -- a stored until of inf (a lease that never runs out) is null, not a number
    local db, path = H.fresh("inf")
    db:enqueue("a")
    db:claim("a", "w", 0, 10)
    db:close()
    H.sqlite3(path, "UPDATE jobs SET until = 9e999")
    assert.are.equal(math.huge, lease.state(path, "a")["until"])
    local status, out, err = run({ "show", path, "a", "--json" })
    assert.are.equal("", err)
    assert.are.equal(0, status)
    assert.truthy(out:find('"until":null,"fence":1,', 1, true), out)
  end)

  it("shows one job with its whole result", function()
    local status, out = run({ "show", p, "done", "--now", "5" })
    assert.are.equal(0, status)
    assert.truthy(out:find("id          done\n", 1, true), out)
    assert.truthy(out:find("owner       w2\n", 1, true), out)
    assert.truthy(out:find("fence       1\n", 1, true), out)
    assert.truthy(out:find("done        yes\n", 1, true), out)
    assert.truthy(out:find("result      17 bytes\nline one\nline two\n", 1, true), out)
  end)

  it("returns 1 with a message for a missing job or a bad file, 2 for bad usage", function()
    local status, out, err = run({ "show", p, "nope" })
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.truthy(err:find('lease show: no job "nope" in', 1, true), err)
    status, out, err = run({ "jobs", H.dir() .. "/missing.db" })
    assert.are.equal("", out)
    assert.are.equal(1, status)
    assert.truthy(err:find("lease jobs: lease.open: unable to open database file [cantopen]", 1, true), err)
    for _, argv in ipairs({ { "jobs" }, { "jobs", p, "--bogus" }, { "jobs", p, "--ready", "--done" },
                            { "show", p }, { "jobs", p, "--now", "x" }, { "nope" } }) do
      status, out, err = run(argv)
      assert.are.equal(2, status)
      assert.are.equal("", out)
      assert.truthy(err:find("usage: lease", 1, true), err)
    end
  end)

  it("never writes: the file is unchanged and no job is created", function()
    local before = H.read(p)
    run({ "jobs", p })
    run({ "show", p, "nope" })
    H.assert_bytes(before, p)
    assert.is_nil(lease.state(p, "nope"))
  end)
end)
