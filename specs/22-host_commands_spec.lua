-- The host's subcommands as a process: `lease pool`, `lease jobs`,
-- `lease show` (exit status, stdout, stderr), and the main job.
local H = require("helpers")
local lease = H.lease

describe("lease pool|jobs|show", function()
  local p
  before_each(function()
    local db
    db, p = H.fresh("cmd")
    db:enqueue_many({ "a", "b", "c" })
    db:close()
  end)

  it("lease pool runs a worker file over the jobs and prints the summary", function()
    local w = H.file("w") .. ".lua"
    H.write(w, "return function(job) return job.id:upper() end\n")
    local status, out, err = H.host("pool " .. H.sh(p) .. " " .. H.sh(w) .. " -j 2 --ttl 30")
    assert.are.equal("", err)   -- piped: no progress line
    assert.are.equal(0, status)
    assert.truthy(out:find("workers            2 (queue default)\n", 1, true), out)
    assert.truthy(out:find("jobs done          3\n", 1, true), out)
    assert.truthy(out:find("refused as stale   0 completes and fails", 1, true), out)
    assert.are.equal("B", lease.state(p, "b").result)
  end)

  it("lease pool exits 1 when a job was discarded, 2 on bad usage", function()
    local w = H.file("w") .. ".lua"
    H.write(w, "return function(job) error('nope') end\n")
    local db1, p1 = H.fresh("cmd1")
    db1:enqueue("a", { max_attempts = 1 })
    db1:close()
    local status, out = H.host("pool -j 1 " .. H.sh(p1) .. " " .. H.sh(w))
    assert.are.equal(1, status)
    assert.truthy(out:find("handler error      a: ", 1, true), out)
    assert.truthy(out:find("discarded          a\n", 1, true), out)
    assert.are.equal("discarded", lease.state(p1, "a").status)
    for _, args in ipairs({ "pool", "pool -j 0 " .. H.sh(w) .. " " .. H.sh(p),
                            "pool --ttl x " .. H.sh(w) .. " " .. H.sh(p),
                            "pool /no/such/worker.lua " .. H.sh(p) }) do
      local st, o, e = H.host(args)
      assert.are.equal(2, st, args)
      assert.are.equal("", o)
      assert.truthy(e:find("usage: lease pool", 1, true), e)
    end
    -- a missing database is not created
    local missing = H.path("missing")
    local st, _, e = H.host("pool " .. H.sh(w) .. " " .. H.sh(missing))
    assert.are.equal(1, st)
    assert.truthy(e:find("[cantopen]", 1, true), e)
    assert.is_false(H.exists(missing))
  end)

  it("lease jobs and lease show print tables, JSON and exit statuses", function()
    local status, out, err = H.host("jobs " .. H.sh(p))
    assert.are.equal(0, status)
    assert.are.equal("", err)
    assert.truthy(out:find("3 jobs: 3 available\n", 1, true), out)
    status, out = H.host("jobs " .. H.sh(p) .. " --json")
    assert.are.equal(0, status)
    assert.are.equal(3, #require("dkjson").decode(out))
    status, out = H.host("show " .. H.sh(p) .. " b")
    assert.are.equal(0, status)
    assert.truthy(out:find("id          b\n", 1, true), out)
    status, out, err = H.host("show " .. H.sh(p) .. " zz")
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.truthy(err:find('no job "zz"', 1, true), err)
    status, out, err = H.host("jobs")
    assert.are.equal("", out)
    assert.are.equal(2, status)
    assert.truthy(err:find("usage: lease", 1, true), err)
  end)
end)

describe("the main job (examples/wordcount.lua)", function()
  it("stalls some workers, retries and discards failing files, and passes its self-check", function()
    local dir = H.dir()
    for i = 1, 8 do
      H.write(dir .. "/f" .. i .. ".txt", ("alpha beta gamma delta "):rep(i) .. ("word" .. i .. " "):rep(10))
    end
    os.execute("mkdir -p " .. H.sh(dir .. "/sub"))
    H.write(dir .. "/sub/deep.txt", "zeta zeta zeta eta")
    local db = H.path("wc")
    local status, out, err = H.host("examples/wordcount.lua -j 3 --ttl 0.3 --stall 0.3 --fail-once 2 "
      .. "--always-fail 1 --db "
      .. H.sh(db) .. " " .. H.sh(dir))
    assert.are.equal("", err)
    assert.are.equal(0, status, out)
    assert.truthy(out:find("wordcount: 9 files from", 1, true), out)
    assert.truthy(out:find("jobs done          8\n", 1, true), out)
    local refused = tonumber(out:match("refused as stale%s+(%d+) completes"))
    assert.is_true(refused > 0, out)
    assert.truthy(out:find("self-check: 8/8 jobs done exactly once, 8/8 results equal a fresh count, "
      .. "1/1 discarded with an error per attempt", 1, true), out)
    -- lease jobs --status discarded lists the discarded file with its errors
    for a = 1, 3 do
      assert.truthy(out:find("\n    error attempt " .. a .. " at %d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d%.%d%d%dZ by [^\n]+: simulated failure on every "
        .. "attempt %(attempt " .. a .. "%)\n"), out)
    end
    assert.truthy(out:find(": ok\n", 1, true), out)
    -- and the file says so too
    assert.are.equal("word 10\nalpha 1\nbeta 1\ndelta 1\ngamma 1", lease.state(db, dir .. "/f1.txt").result)
    -- the last file is the one that always fails: discarded, an error per attempt
    local deep = lease.state(db, dir .. "/sub/deep.txt")
    assert.are.equal("discarded", deep.status)
    assert.are.equal(3, #deep.errors)
    local c = lease.open(db):counts(lease.now())
    assert.are.same({ 9, 8, 1, 0, 0 }, { c.total, c.completed, c.discarded, c.available, c.running })
  end)

  it("exits 2 on bad usage", function()
    local status, _, err = H.host("examples/wordcount.lua --stall 2")
    assert.are.equal(2, status)
    assert.truthy(err:find("--stall must be from 0 to 1", 1, true), err)
  end)
end)
