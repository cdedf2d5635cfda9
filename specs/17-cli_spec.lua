-- The inspection subcommands, through lease.cli.main (the host program
-- `lease jobs|show` calls the same function; the host's own spec checks the
-- process side: exit status and streams).
local H = require("helpers")
local lease = H.lease
local cli = require("lease.cli")

-- Run cli.main(argv); returns status, stdout text, stderr text.
local function run(argv)
  local out, err = io.tmpfile(), io.tmpfile()
  local status = cli.main(argv, out, err)
  out:seek("set"); err:seek("set")
  local o, e = out:read("*a"), err:read("*a")
  out:close(); err:close()
  return status, o, e
end

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

  it("lists every job with owner, lease left, fence, done and result size", function()
    local status, out, err = run({ "jobs", p, "--now", "120" })
    assert.are.equal(0, status)
    assert.are.equal("", err)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(6, #lines)
    assert.truthy(lines[1]:find("^ID%s+OWNER%s+LEASE LEFT%s+FENCE%s+DONE%s+RESULT$"), lines[1])
    assert.truthy(lines[2]:find("^ready%s+%-%s+%-%s+0%s+no%s+%-$"), lines[2])
    assert.truthy(lines[3]:find("^held%s+w1%s+30%.0s%s+1%s+no%s+%-$"), lines[3])
    assert.truthy(lines[4]:find("^done%s+w2%s+%-%s+1%s+yes%s+17 B$"), lines[4])
    assert.truthy(lines[5]:find("^zero\\x00byte%s"), lines[5])
    assert.are.equal("4 jobs: 2 ready, 1 held, 1 done", lines[6])
  end)

  it("filters ready, held and done, and shows expired leases", function()
    local _, out = run({ "jobs", p, "--ready", "--now", "120" })
    assert.truthy(out:find("\nready ", 1, true))
    assert.is_nil(out:find("\nheld ", 1, true))
    assert.truthy(out:find("(2 shown)", 1, true))
    _, out = run({ "jobs", p, "--held", "--now", "120" })
    assert.truthy(out:find("\nheld ", 1, true))
    assert.truthy(out:find("(1 shown)", 1, true))
    _, out = run({ "jobs", p, "--done", "--now", "120" })
    assert.truthy(out:find("\ndone ", 1, true))
    _, out = run({ "jobs", p, "--ready", "--now", "200" })
    assert.truthy(out:find("held%s+w1%s+expired 50%.0s ago"), out)
  end)

  it("prints JSON for scripts", function()
    local json = require("dkjson")
    local status, out = run({ "jobs", p, "--json", "--now", "120" })
    assert.are.equal(0, status)
    local list = json.decode(out, 1, json.null)
    assert.are.equal(4, #list)
    assert.are.same({ id = "held", owner = "w1", ["until"] = 150, fence = 1, done = false, result_bytes = 0 }, list[2])
    assert.are.equal("zero\0byte", list[4].id)
    assert.are.equal(json.null, list[1].owner)
    status, out = run({ "show", p, "done", "--json" })
    assert.are.equal(0, status)
    local j = json.decode(out)
    assert.are.equal("line one\nline two", j.result)
    assert.are.equal(17, j.result_bytes)
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
    status, _, err = run({ "jobs", H.dir() .. "/missing.db" })
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
