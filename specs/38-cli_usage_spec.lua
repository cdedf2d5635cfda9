-- The CLI as people and scripts meet it: --help, the nearest command, one
-- command's usage, readable times and the forms a time takes, UTF-8 ids,
-- --limit, --payload-file, lease pool's argument order, its summary and a
-- worker's syntax error, errors that say why a file cannot be opened, a
-- database the user may only read, and lease.json.decode for workers.
local H = require("helpers")
local lease = H.lease
local json = require("lease.json")

-- Run cli.main(argv); returns status, stdout text, stderr text.
local run = H.cli

-- The host program's path.
local function exe()
  local e = os.getenv("LEASE_HOST")
  if not e or e == "" then e = (os.getenv("LEASE_BUILD_DIR") or "build") .. "/lease" end
  return e
end

-- Run the host as `prefix exe args` (prefix: environment settings or a
-- command such as setpriv); returns status, stdout, stderr.
local function host_with(prefix, args, stdin)
  local base = H.file("hw")
  local cmd = prefix .. " " .. H.sh(exe()) .. " " .. args .. " >" .. H.sh(base .. ".out") .. " 2>"
    .. H.sh(base .. ".err") .. " <" .. (stdin and H.sh(base .. ".in") or "/dev/null")
  if stdin then H.write(base .. ".in", stdin) end
  local status = H.execute(cmd)
  local o, e = H.read(base .. ".out"), H.read(base .. ".err")
  os.remove(base .. ".out"); os.remove(base .. ".err"); os.remove(base .. ".in")
  return status, o, e
end

-- The number of times needle occurs in s (plain).
local function count(s, needle)
  local n, at = 0, 1
  while true do
    local a, b = s:find(needle, at, true)
    if not a then return n end
    n, at = n + 1, b + 1
  end
end

describe("lease COMMAND --help, unknown commands, usage errors", function()
  it("prints each command's own usage with exit 0, for --help and -h anywhere a flag may stand", function()
    for _, name in ipairs({ "pool", "enqueue", "jobs", "show", "retry", "cancel", "prune" }) do
      for _, flag in ipairs({ "--help", "-h" }) do
        local status, out, err = H.host(name .. " " .. flag)
        assert.are.equal(0, status, name)
        assert.are.equal("", err)
        assert.truthy(out:find("^usage: lease " .. name .. " "), out)
        assert.are.equal(1, count(out, "usage:"), out)   -- that command's, not all of them
      end
    end
    -- after other arguments, even a bad option: help wins
    local status, out = run({ "jobs", "x.db", "--bogus", "--help" })
    assert.are.equal(0, status)
    assert.truthy(out:find("  --limit N ", 1, true), out)
  end)

  it("takes --help as the value of an option that takes one", function()
    local p = H.path("helpval")
    local status = run({ "enqueue", p, "a", "--payload", "--help" })
    assert.are.equal(0, status)
    assert.are.equal("--help", lease.state(p, "a").payload)
  end)

  it("suggests the nearest command for an unknown one, and none when nothing is near", function()
    for word, near in pairs({ job = "jobs", shwo = "show", prnue = "prune", enqeue = "enqueue",
                              pol = "pool", canel = "cancel", retyr = "retry", JOBS = "jobs",
                              status = "stats", metric = "metrics" }) do
      local status, out, err = run({ word })
      assert.are.equal(2, status)
      assert.are.equal("", out)
      assert.truthy(err:find("unknown command '" .. word .. "' (did you mean " .. near .. "?)\n", 1, true), err)
    end
    for _, word in ipairs({ "xyzzy", "frobnicate", "j" }) do
      local status, _, err = run({ word })
      assert.are.equal(2, status)
      assert.truthy(err:find("unknown command '" .. word .. "'\n", 1, true), err)
      assert.is_nil(err:find("did you mean", 1, true), err)
    end
  end)

  it("prints only the one command's usage on a usage error", function()
    local status, out, err = run({ "show", "x.db" })
    assert.are.equal(2, status)
    assert.are.equal("", out)
    assert.are.equal("lease show: show takes a database path and a job id\n"
      .. "usage: lease show DB ID [--json] [--now T]\nTry 'lease show --help'.\n", err)
  end)
end)

describe("times in the CLI", function()
  local p
  before_each(function()
    local db
    db, p = H.fresh("times")
    assert(db:enqueue("a", { run_at = 1764583199.9996 }))
    assert(db:enqueue("b"))
    local f = assert(db:claim("b", "w", 1764583200.25, 30))
    assert.are.equal("retryable", (db:fail("b", "w", f, 1764583201.5, "boom")))
    db:close()
  end)

  it("shows times as UTC ISO 8601 to the millisecond, and --json keeps the stored numbers", function()
    local status, out = run({ "show", p, "a", "--now", "0" })
    assert.are.equal(0, status)
    assert.truthy(out:find("run at      2025-12-01T10:00:00.000Z\n", 1, true), out)
    assert.truthy(out:find("until       -\n", 1, true), out)   -- never held
    status, out = run({ "show", p, "b", "--now", "0" })
    assert.are.equal(0, status)
    assert.truthy(out:find("error       attempt 1 at 2025-12-01T10:00:01.500Z by w (fence 1): boom\n", 1, true), out)
    status, out = run({ "jobs", p, "--errors", "--now", "0" })
    assert.are.equal(0, status)
    assert.truthy(out:find("    error attempt 1 at 2025-12-01T10:00:01.500Z by w: boom\n", 1, true), out)
    status, out = run({ "show", p, "a", "--json" })
    assert.are.equal(0, status)
    assert.are.equal(1764583199.9996, json.decode(out).run_at)
  end)

  it("takes dates (UTC unless an offset is given) where a time goes", function()
    local q = H.path("dates")
    for id, c in pairs({ d1 = { "2026-12-01", 1796083200 }, d2 = { "2026-12-01T10:00", 1796083200 + 36000 },
                         d3 = { "2026-12-01T10:00:30.5Z", 1796083200 + 36030.5 },
                         d4 = { "2026-12-01T10:00:00+02:00", 1796083200 + 28800 },
                         d5 = { "2026-12-01 10:00:00-0130", 1796083200 + 41400 },
                         d6 = { "2024-02-29", 1709164800 }, d7 = { "1796083200", 1796083200 } }) do
      local status, _, err = run({ "enqueue", q, id, "--run-at", c[1] })
      assert.are.equal(0, status, err)
      assert.are.equal(c[2], lease.state(q, id).run_at, c[1])
    end
    -- --now takes a date as well
    local status, out = run({ "jobs", q, "--now", "2026-12-01T10:00:00Z", "--status", "available" })
    assert.are.equal(0, status)
    assert.truthy(out:find("(5 shown)", 1, true), out)   -- all but d3 and d5 are due by then
    assert.is_nil(out:find("\nd3 ", 1, true))
  end)

  it("takes durations: --run-at from now, --before ago", function()
    local q = H.path("durations")
    local t0 = lease.now()
    assert.are.equal(0, (run({ "enqueue", q, "h", "--run-at", "2h" })))
    assert.are.equal(0, (run({ "enqueue", q, "hm", "--run-at", "1h30m" })))
    assert.are.equal(0, (run({ "enqueue", q, "w", "--run-at", "1.5w" })))
    local t1 = lease.now()
    for id, d in pairs({ h = 7200, hm = 5400, w = 907200 }) do
      local r = lease.state(q, id).run_at
      assert.is_true(r >= t0 + d and r <= t1 + d, id)
    end
    -- one job finished 3 days ago, one an hour ago: --before 2d prunes the first
    local db = lease.open(q)
    assert(db:enqueue("old"))
    assert(db:enqueue("new"))
    local now = lease.now()
    assert(db:complete("old", "w", assert(db:claim("old", "w", now - 3 * 86400, 10)), now - 3 * 86400))
    assert(db:complete("new", "w", assert(db:claim("new", "w", now - 3600, 10)), now - 3600))
    db:close()
    local status, out = run({ "prune", q, "--before", "2d" })
    assert.are.equal(0, status)
    assert.are.equal("pruned 1 jobs\n", out)
    assert.is_nil(lease.state(q, "old"))
    assert.truthy(lease.state(q, "new"))
  end)

  it("refuses a time that is none of these, naming the option and the forms, and writes nothing", function()
    local q = H.path("badtimes")
    for _, text in ipairs({ "2026-02-29", "2026-13-01", "2026-12-01T24:00", "2026-12-01T10:60",
                            "2026-12-01X", "2026-12-01T10:00+25:00", "2x", "h", "1e999", "nan", "" }) do
      local status, out, err = run({ "enqueue", q, "a", "--run-at", text })
      assert.are.equal(2, status, text)
      assert.are.equal("", out)
      assert.truthy(err:find("--run-at needs seconds since the epoch, a date", 1, true), err)
    end
    assert.is_false(H.backend == "sqlite" and H.exists(q))
    local status, _, err = run({ "jobs", q, "--now", "2d" })   -- no durations for --now
    assert.are.equal(2, status)
    assert.truthy(err:find("--now needs seconds since the epoch, a date (2026-12-01, "
      .. "2026-12-01T10:00:00Z), got '2d'", 1, true), err)
  end)
end)

describe("lease jobs --limit", function()
  it("lists the first N jobs in enqueue order and says how many it showed", function()
    local db, p = H.fresh("limit")
    local ids = {}
    for i = 1, 1205 do ids[i] = string.format("j%04d", i) end
    db:enqueue_many(ids)
    db:close()
    local status, out = run({ "jobs", p, "--limit", "2" })
    assert.are.equal(0, status)
    assert.truthy(out:find("\nj0001 ", 1, true) and out:find("\nj0002 ", 1, true), out)
    assert.is_nil(out:find("\nj0003 ", 1, true))
    assert.are.equal("\n1205 jobs: 1205 available (2 shown)\n", out:sub(-37))
    status, out = run({ "jobs", p, "--limit", "1100", "--json" })   -- across the pages of 1000
    assert.are.equal(0, status)
    local list = json.decode(out)
    assert.are.equal(1100, #list)
    assert.are.equal("j1100", list[1100].id)
    for _, bad in ipairs({ "0", "-1", "x", "1.5" }) do
      local st, _, err = run({ "jobs", p, "--limit", bad })
      assert.are.equal(2, st)
      assert.truthy(err:find("--limit needs an integer >= 1, got '" .. bad .. "'", 1, true), err)
    end
  end)
end)

describe("lease enqueue --payload-file", function()
  it("reads the payload's exact bytes from a file, or from standard input for -", function()
    local p = H.path("pf")
    local f = H.file("payload")
    local bytes = "line one\n\0two\255\n"
    H.write(f, bytes)
    local status, _, err = H.host("enqueue " .. H.sh(p) .. " a --payload-file " .. H.sh(f))
    assert.are.equal(0, status, err)
    assert.are.equal(bytes, lease.state(p, "a").payload)
    status, _, err = H.host("enqueue " .. H.sh(p) .. " b --payload-file -", bytes)
    assert.are.equal(0, status, err)
    assert.are.equal(bytes, lease.state(p, "b").payload)
  end)

  it("refuses a file it cannot read, or --payload beside it, and writes nothing", function()
    local p = H.path("pf2")
    local status, out, err = run({ "enqueue", p, "a", "--payload-file", H.file("none") })
    assert.are.equal(2, status)
    assert.are.equal("", out)
    assert.truthy(err:find("--payload-file cannot read ", 1, true), err)
    local _
    status, _, err = run({ "enqueue", p, "a", "--payload-file", "-", "--payload", "x" })
    assert.are.equal(2, status)
    assert.truthy(err:find("give at most one of --payload and --payload-file", 1, true), err)
    assert.is_false(H.backend == "sqlite" and H.exists(p))
  end)
end)

describe("UTF-8 ids", function()
  local p
  before_each(function()
    local db
    db, p = H.fresh("utf8")
    db:enqueue_many({ "café", "ab", "x\194\133y", "a\226\128\174b", "bad\255" })
    db:close()
  end)

  it("are shown as they are in a UTF-8 locale, aligned by characters; controls and bad bytes escaped", function()
    local status, out = host_with("env LC_ALL=C.UTF-8", "jobs " .. H.sh(p))
    assert.are.equal(0, status)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.truthy(lines[2]:find("^café%s"), lines[2])
    -- the STATUS column starts at the same character on every line
    local function col(l) local a = l:find("available") or l:find("STATUS"); return select(2, l:sub(1, a - 1):gsub("[^\128-\191]", "")) end
    for k = 3, 6 do assert.are.equal(col(lines[2]), col(lines[k]), lines[k]) end
    assert.are.equal(col(lines[1]), col(lines[2]))
    assert.truthy(lines[4]:find("^x\\xc2\\x85y%s"), lines[4])            -- U+0085, a C1 control
    assert.truthy(lines[5]:find("^a\\xe2\\x80\\xaeb%s"), lines[5])        -- U+202E, an override
    assert.truthy(lines[6]:find("^bad\\xff%s"), lines[6])
    status, out = host_with("env LANG=en_US.utf8 LC_ALL=", "show " .. H.sh(p) .. " café")
    assert.are.equal(0, status)
    assert.truthy(out:find("^id          café\n"), out)
  end)

  it("are escaped byte by byte in any other locale", function()
    local status, out = host_with("env LC_ALL=C", "jobs " .. H.sh(p))
    assert.are.equal(0, status)
    assert.truthy(out:find("\ncaf\\xc3\\xa9 ", 1, true), out)
  end)
end)

describe("lease pool", function()
  local p
  before_each(function()
    local db
    db, p = H.fresh("poolcli")
    db:enqueue_many({ "a", "b", "c" })
    db:close()
  end)

  it("takes DB first, and still reads the old order WORKER.lua DB", function()
    local w = H.file("w") .. ".lua"
    H.write(w, "return function(job) return job.id:upper() end\n")
    local status, out, err = H.host("pool " .. H.sh(p) .. " " .. H.sh(w) .. " -j 1")
    assert.are.equal(0, status, err)
    assert.truthy(out:find("jobs done          3\n", 1, true), out)
    assert.are.equal("A", lease.state(p, "a").result)
    local db = lease.open(p)
    assert(db:enqueue("d"))
    db:close()
    status, out, err = H.host("pool -j 1 " .. H.sh(w) .. " " .. H.sh(p))
    assert.are.equal(0, status, err)
    assert.truthy(out:find("jobs done          1\n", 1, true), out)
    assert.are.equal("D", lease.state(p, "d").result)
  end)

  it("reports a worker script's syntax error once, not once per thread, and runs no job", function()
    local w = H.file("syntax") .. ".lua"
    H.write(w, "return function(job)\n  return job.id ..\nend\n")
    local before = H.qsnapshot(p)
    local status, out, err = H.host("pool " .. H.sh(p) .. " " .. H.sh(w) .. " -j 4")
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.are.equal(1, count(err, "unexpected symbol near 'end'"), err)
    assert.truthy(err:find("lease pool: worker script does not compile: ", 1, true), err)
    assert.are.same(before, H.qsnapshot(p))
  end)

  it("lists at most 5 discarded ids in its summary, then how many more", function()
    local db, q = H.fresh("manyfail")
    for i = 1, 8 do assert(db:enqueue("f" .. i, { max_attempts = 1 })) end
    db:close()
    local w = H.file("fails") .. ".lua"
    H.write(w, "return function(job) error('nope') end\n")
    local status, out = H.host("pool " .. H.sh(q) .. " " .. H.sh(w) .. " -j 1")
    assert.are.equal(1, status)
    assert.are.equal(5, count(out, "\ndiscarded          f"), out)
    assert.truthy(out:find("\ndiscarded          and 3 more\n", 1, true), out)
  end)

  it("decodes JSON payloads into job.data with --decode json, and refuses another --decode", function()
    local db, q = H.fresh("decode")
    assert(db:enqueue("j", { payload = '{"n": 41, "tags": ["x", null]}' }))
    db:close()
    local w = H.file("dec") .. ".lua"
    H.write(w, "return function(job) return tostring(job.data.n + 1) .. ' ' .. #job.data.tags end\n")
    local status, _, err = H.host("pool " .. H.sh(q) .. " " .. H.sh(w) .. " --decode json")
    assert.are.equal(0, status, err)
    -- decoded as lease.json.decode does: null is lease.json.null, the array keeps its length
    assert.are.equal("42 2", lease.state(q, "j").result)
    status, _, err = H.host("pool " .. H.sh(q) .. " " .. H.sh(w) .. " --decode yaml")
    assert.are.equal(2, status)
    assert.truthy(err:find("--decode takes json, got 'yaml'", 1, true), err)
  end)
end)

describe("lease.json.decode", function()
  it("decodes objects, arrays and numbers, null as lease.json.null", function()
    local v = json.decode('{"a": [1, null, 2.5], "s": "é\\u00e9", "t": true}')
    assert.are.same({ a = { 1, json.null, 2.5 }, s = "éé", t = true }, v)
    assert.are.equal(json.null, json.decode("null"))
    assert.are.equal(1764583199.9996, json.decode(json.encode(1764583199.9996)))
  end)

  it("returns nil and the reason for text that is not JSON, and raises for a value not a string", function()
    for _, text in ipairs({ "[1,", "{a: 1}", "1 2", "", "[1] x" }) do
      local v, why = json.decode(text)
      assert.is_nil(v, text)
      assert.truthy(why:find("^lease%.json%.decode: "), why)
    end
    assert.are.equal("lease.json.decode: text after the value at 3", select(2, json.decode("1 2")))
    local ok, e = pcall(json.decode, 5)
    assert.is_false(ok)
    assert.truthy(e:find("bad argument #1 to 'lease.json.decode' (string expected, got number)", 1, true), e)
  end)

  it("is what a worker run by lease pool reads its payload with, no other library needed", function()
    local db, q = H.fresh("jsonworker")
    assert(db:enqueue("j", { payload = '{"words": ["a", "b", "c"]}' }))
    db:close()
    local w = H.file("jw") .. ".lua"
    H.write(w, "local json = require('lease.json')\n"
      .. "return function(job)\n"
      .. "  local data = assert(json.decode(job.payload))\n"
      .. "  return json.encode({ count = #data.words })\n"
      .. "end\n")
    local status, _, err = H.host("pool " .. H.sh(q) .. " " .. H.sh(w) .. " -j 1")
    assert.are.equal(0, status, err)
    assert.are.equal('{"count":3}', lease.state(q, "j").result)
  end)
end)

describe("why a database cannot be opened #sqlite", function()
  it("names a missing directory, a missing file, and a directory it may not write", function()
    local d = H.dir()
    local status, _, err = run({ "enqueue", d .. "/no/such/dir/x.db", "a" })
    assert.are.equal(1, status)
    assert.truthy(err:find("[cantopen] (file \"" .. d .. "/no/such/dir/x.db\"): the directory "
      .. d .. "/no/such/dir does not exist\n", 1, true), err)
    status, _, err = run({ "jobs", d .. "/none.db" })
    assert.are.equal(1, status)
    assert.truthy(err:find(": there is no file " .. d .. "/none.db (lease enqueue creates one)\n", 1, true), err)
    assert.is_false(H.exists(d .. "/none.db"))
  end)
end)

-- How to run a command as a user who may not write what root made: as
-- nobody through setpriv when this is root, else as this user (file
-- permissions stop it).  nil when root has no setpriv.
local function unprivileged()
  if not H.is_root() then return "" end
  if H.execute("command -v setpriv >/dev/null 2>&1") ~= 0 then return nil end
  return "setpriv --reuid=65534 --regid=65534 --clear-groups"
end

describe("a database this user may only read #sqlite", function()
  local as, d, p
  before_each(function()
    as = unprivileged()
    d = H.dir()
    p = d .. "/jobs.db"
    local db = lease.open(p)
    db:enqueue_many({ "a", "b" })
    db:close()
    assert.is_false(H.exists(p .. "-wal"))
  end)
  after_each(function() os.execute("chmod -R u+w " .. H.sh(d)) end)

  it("is inspected: jobs and show read a WAL file (0444) in a directory it may not write (0555)", function()
    if not as then pending("running as root without setpriv") return end
    os.execute("chmod 0444 " .. H.sh(p) .. " && chmod 0555 " .. H.sh(d))
    local before = H.read(p)
    local status, out, err = host_with(as, "jobs " .. H.sh(p))
    assert.are.equal(0, status, err)
    assert.truthy(out:find("\n2 jobs: 2 available\n", 1, true), out)
    assert.are.equal("note: " .. d .. " is not writable: " .. p .. " is read without locks "
      .. "(a writer that starts meanwhile is not seen)\n", err)
    status, out = host_with(as, "show " .. H.sh(p) .. " b --json")
    assert.are.equal(0, status)
    assert.are.equal("b", json.decode(out).id)
    -- and a write says why it cannot
    local _
    status, _, err = host_with(as, "cancel " .. H.sh(p) .. " a")
    assert.are.equal(1, status)
    assert.truthy(err:find(": this user may not write " .. p .. " or the directory " .. d .. "\n", 1, true), err)
    -- nor can a new file be made there
    status, _, err = host_with(as, "enqueue " .. H.sh(d .. "/new.db") .. " a")
    assert.are.equal(1, status)
    assert.truthy(err:find("[cantopen] (file \"" .. d .. "/new.db\"): the directory " .. d
      .. " is not writable, and SQLite creates the file there\n", 1, true), err)
    assert.are.equal(before, H.read(p))
    assert.is_false(H.exists(p .. "-wal") or H.exists(p .. "-shm") or H.exists(d .. "/new.db"))
  end)

  it("is refused with what to do when a -wal holds commits it cannot read without a -shm", function()
    if not as then pending("running as root without setpriv") return end
    -- a -wal holding a commit, and no -shm: copied while a writer had it open
    local copy = H.dir()
    local db = lease.open(p)
    assert(db:enqueue("c"))
    os.execute("cp " .. H.sh(p) .. " " .. H.sh(p .. "-wal") .. " " .. H.sh(copy))
    db:close()
    local q = copy .. "/jobs.db"
    assert.truthy(#H.read(q .. "-wal") > 0)
    os.execute("chmod 0444 " .. H.sh(q) .. " " .. H.sh(q .. "-wal") .. " && chmod 0555 " .. H.sh(copy))
    local status, out, err = host_with(as, "jobs " .. H.sh(q))
    os.execute("chmod u+w " .. H.sh(copy))
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.truthy(err:find(q .. "-wal holds commits not yet in the file, and SQLite needs to create or "
      .. "write " .. q .. "-shm to read them", 1, true), err)
    assert.truthy(err:find("copy the file with its -wal to a directory you can write", 1, true), err)
    -- as the owner it reads all three
    status, out = H.host("jobs " .. H.sh(q))
    assert.are.equal(0, status)
    assert.truthy(out:find("\n3 jobs: 3 available\n", 1, true), out)
  end)
end)
