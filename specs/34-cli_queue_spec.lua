-- The job-queue subcommands through lease.cli.main: enqueue, jobs
-- --status/--queue, show, retry, cancel, prune, each with --json and with
-- bad usage (exit 2, the message naming the option, nothing changed).
local H = require("helpers")
local lease = H.lease
local json = require("dkjson")

-- Run cli.main(argv); returns status, stdout text, stderr text.
local run = H.cli

describe("lease enqueue", function()
  it("adds a job with payload, queue, priority, run_at and max_attempts", function()
    local p = H.path("enq")
    local status, out, err = run({ "enqueue", p, "a", "--payload", '{"n":1}', "--queue", "mail",
                                   "--priority", "-2", "--run-at", "100.5", "--max-attempts", "4" })
    assert.are.equal("", err)
    assert.are.equal(0, status)
    assert.are.equal("enqueued a\n", out)
    local st = lease.state(p, "a", 200)
    assert.are.equal('{"n":1}', st.payload)
    assert.are.equal("mail", st.queue)
    assert.are.equal(-2, st.priority)
    assert.are.equal(100.5, st.run_at)
    assert.are.equal(4, st.max_attempts)
    assert.are.equal("available", st.status)
  end)

  it("schedules with --in seconds from now", function()
    local p = H.path("enq")
    local t0 = lease.now()
    assert.are.equal(0, (run({ "enqueue", p, "later", "--in", "60" })))
    local st = lease.state(p, "later")
    assert.is_true(st.run_at >= t0 + 60 and st.run_at <= lease.now() + 60)
    assert.are.equal("scheduled", st.status)
  end)

  it("says so, exit 1, when the job exists; --json either way", function()
    local p = H.path("enq")
    local status, out = run({ "enqueue", p, "a", "--json" })
    assert.are.equal(0, status)
    assert.are.same({ id = "a", enqueued = true }, json.decode(out))
    local err
    status, out, err = run({ "enqueue", p, "a", "--payload", "other" })
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.truthy(err:find('lease enqueue: job "a" exists in', 1, true), err)
    status, out = run({ "enqueue", p, "a", "--json" })
    assert.are.equal(1, status)
    assert.are.same({ id = "a", enqueued = false, reason = "exists" }, json.decode(out))
    assert.is_nil(lease.state(p, "a").payload)
  end)

  it("exits 2 naming the option for bad usage, and writes nothing", function()
    local p = H.path("enq")
    for _, c in ipairs({
      { { "enqueue", p }, "enqueue takes a database path and a job id" },
      { { "enqueue", p, "a", "--priority", "x" }, "--priority needs an integer from -2147483648 to 2147483647, got 'x'" },
      { { "enqueue", p, "a", "--priority", "1.5" }, "--priority needs an integer from -2147483648 to 2147483647, got '1.5'" },
      { { "enqueue", p, "a", "--max-attempts", "0" }, "--max-attempts needs an integer from 1 to 2147483647, got '0'" },
      { { "enqueue", p, "a", "--run-at", "nan" }, "--run-at needs seconds since the epoch, a date (2026-12-01, 2026-12-01T10:00:00Z) or a duration (90s, 15m, 2h, 2d, 1w: that long from now), got 'nan'" },
      { { "enqueue", p, "a", "--in", "-1" }, "--in needs a finite number of seconds >= 0, got '-1'" },
      { { "enqueue", p, "a", "--in", "1", "--run-at", "5" }, "give at most one of --run-at and --in" },
      { { "enqueue", p, "a", "--queue", "" }, "--queue needs a non-empty name" },
      { { "enqueue", p, "a", "--payload" }, "--payload needs a value" },
      { { "enqueue", p, "a", "--bogus" }, "unknown option --bogus" },
    }) do
      local status, out, err = run(c[1])
      assert.are.equal(2, status, c[2])
      assert.are.equal("", out)
      assert.truthy(err:find("lease enqueue: " .. c[2], 1, true), err)
      assert.truthy(err:find("\nusage: lease enqueue DB ID ", 1, true), err)
      assert.is_nil(err:find("lease jobs", 1, true), err)   -- the one command's usage only
    end
    assert.is_false(H.exists(p))
  end)
end)

describe("lease jobs, retry, cancel, prune", function()
  local p
  before_each(function()
    local db
    db, p = H.fresh("ops")
    assert(db:enqueue("ok"))
    assert(db:enqueue("bad", { max_attempts = 1, payload = "p" }))
    assert(db:enqueue("mail1", { queue = "mail" }))
    local id, f = db:claim_next("w", 10, 5)
    assert.are.equal("ok", id)
    assert(db:complete("ok", "w", f, 11, string.rep("r", 5000)))
    id, f = db:claim_next("w", 12, 5)
    assert.are.equal("bad", id)
    assert.are.equal("discarded", (db:fail("bad", "w", f, 13, "boom")))
    db:close()
  end)

  it("lists by status and queue, with result sizes, never loading the results", function()
    -- every db:jobs call the command makes asks for no results
    local db = lease.open(p)
    local methods = getmetatable(db).__index
    db:close()
    local real, calls = methods.jobs, {}
    methods.jobs = function(self, q, ...)
      calls[#calls + 1] = q
      return real(self, q, ...)
    end
    local status, out, err = run({ "jobs", p, "--now", "20" })
    methods.jobs = real
    assert.are.equal("", err)
    assert.are.equal(0, status)
    assert.is_true(#calls >= 1)
    for _, q in ipairs(calls) do
      assert.are.equal("table", type(q))
      assert.is_false(q.results)
    end
    assert.truthy(out:find("\nok%s+completed%s+default%s+1/25%s+w%s+%-%s+1%s+5000 B\n"), out)
    assert.truthy(out:find("\nbad%s+discarded%s+default%s+1/1%s+%-%s+%-%s+1%s+%-\n"), out)
    assert.truthy(out:find("\nmail1%s+available%s+mail%s+0/25%s+%-%s+%-%s+0%s+%-\n"), out)
    assert.truthy(out:find("3 jobs: 1 available, 1 completed, 1 discarded\n", 1, true), out)
    assert.is_nil(out:find("    error", 1, true))
    -- a list of discarded jobs shows why each failed
    status, out = run({ "jobs", p, "--status", "discarded", "--now", "20" })
    assert.are.equal(0, status)
    assert.truthy(out:find("\nbad ", 1, true), out)
    assert.truthy(out:find("\n    error attempt 1 at 1970-01-01T00:00:13.000Z by w: boom\n", 1, true), out)
    assert.is_nil(out:find("\nok ", 1, true))
    assert.truthy(out:find("(1 shown)", 1, true), out)
    status, out = run({ "jobs", p, "--errors", "--now", "20" })
    assert.are.equal(0, status)
    assert.truthy(out:find("\n    error attempt 1 at 1970-01-01T00:00:13.000Z by w: boom\n", 1, true), out)
    status, out = run({ "jobs", p, "--queue", "mail", "--json", "--now", "20" })
    assert.are.equal(0, status)
    local list = json.decode(out)
    assert.are.equal(1, #list)
    assert.are.equal("mail1", list[1].id)
    assert.are.equal("available", list[1].status)
    assert.are.equal("mail", list[1].queue)
    status, out = run({ "jobs", p, "--status", "completed", "--json", "--now", "20" })
    assert.are.equal(0, status)
    list = json.decode(out)
    assert.are.equal(5000, list[1].result_bytes)
    assert.is_nil(list[1].result)
    status, out = run({ "jobs", p, "--status", "discarded", "--json", "--now", "20" })
    assert.are.equal(0, status)
    list = json.decode(out)
    assert.are.equal("boom", list[1].errors[1].message)
    assert.are.equal(1, list[1].payload_bytes)
  end)

  it("shows one job with its status, payload and errors", function()
    local status, out = run({ "show", p, "bad", "--now", "20" })
    assert.are.equal(0, status)
    assert.truthy(out:find("status      discarded\n", 1, true), out)
    assert.truthy(out:find("payload     p\n", 1, true), out)
    assert.truthy(out:find("attempt     1 of 1\n", 1, true), out)
    assert.truthy(out:find("error       attempt 1 at 1970-01-01T00:00:13.000Z by w (fence 1): boom\n", 1, true), out)
    status, out = run({ "show", p, "bad", "--json", "--now", "20" })
    assert.are.equal(0, status)
    local j = json.decode(out)
    assert.are.equal("discarded", j.status)
    assert.are.equal("p", j.payload)
    assert.are.equal("boom", j.errors[1].message)
  end)

  it("retries discarded jobs with a fresh budget; says which were refused", function()
    local status, out = run({ "retry", p, "--discarded", "--json" })
    assert.are.equal(0, status)
    assert.are.same({ { id = "bad", ok = true } }, json.decode(out))
    local st = lease.state(p, "bad")
    assert.are.equal("available", st.status)
    assert.are.equal(0, st.attempt)
    assert.are.equal(1, st.fence)   -- the fence never goes down
    -- a held job is refused; so is a missing one
    assert.are.equal("mail1", (lease.claim_next(p, "w", lease.now(), 60, { queue = "mail" })))
    status, out = run({ "retry", p, "mail1", "nope" })
    assert.are.equal(1, status)
    assert.truthy(out:find("refused mail1: held\n", 1, true), out)
    assert.are.equal("running", lease.state(p, "mail1").status)
    assert.truthy(out:find("refused nope: missing\n", 1, true), out)
    status, out = run({ "retry", p, "ok" })
    assert.are.equal(0, status)
    assert.are.equal("retried ok\n", out)
    assert.are.equal("available", lease.state(p, "ok").status)
  end)

  it("cancels jobs: never claimed again", function()
    local status, out = run({ "cancel", p, "mail1", "--json" })
    assert.are.equal(0, status)
    assert.are.same({ { id = "mail1", ok = true } }, json.decode(out))
    assert.are.equal("cancelled", lease.state(p, "mail1").status)
    assert.are.same({ nil, "empty" }, { lease.claim_next(p, "w", 100, 5, { queue = "mail" }) })
    status, out = run({ "cancel", p, "nope" })
    assert.are.equal(1, status)
    assert.truthy(out:find("refused nope: ", 1, true), out)
  end)

  it("prunes finished jobs before a time, never the others", function()
    local status, out = run({ "prune", p, "--before", "12", "--json" })
    assert.are.equal(0, status)
    assert.are.same({ pruned = 1 }, json.decode(out))   -- "ok", finished at 11
    assert.is_nil(lease.state(p, "ok"))
    assert.truthy(lease.state(p, "bad"))
    status, out = run({ "prune", p, "--before", "1e12" })
    assert.are.equal(0, status)
    assert.are.equal("pruned 1 jobs\n", out)
    assert.is_nil(lease.state(p, "bad"))
    assert.are.equal("available", lease.state(p, "mail1").status)
  end)

  it("exits 2 naming the option for bad usage, and changes nothing", function()
    local before = H.qsnapshot(p)
    for _, c in ipairs({
      { { "jobs", p, "--status", "done" }, "--status needs one of available, scheduled" },
      { { "jobs", p, "--status", "running", "--ready" }, "give at most one of --status, --ready" },
      { { "retry", p }, "give job ids or --discarded, not both, not neither" },
      { { "retry", p, "a", "--discarded" }, "give job ids or --discarded, not both, not neither" },
      { { "retry", p, "a", "--queue", "mail" }, "--queue goes with --discarded" },
      { { "cancel", p }, "cancel takes a database path and job ids" },
      { { "prune", p }, "prune needs --before T" },
      { { "prune", p, "--before", "x" }, "--before needs seconds since the epoch, a date (2026-12-01, 2026-12-01T10:00:00Z) or a duration (90s, 15m, 2h, 2d, 1w: that long ago), got 'x'" },
      { { "prune", p, "--before", "5", "--status", "running" }, "--status for prune needs completed, discarded or cancelled" },
      { { "pool", "--forever", "-j", "2", "--grace", "-1", "w.lua", p }, "--grace needs a finite number of seconds >= 0, got '-1'" },
      { { "pool", "--poll", "0", "w.lua", p }, "--poll needs a finite number of seconds > 0, got '0'" },
      { { "pool", "--poll", "inf", "w.lua", p }, "--poll needs a finite number of seconds > 0, got 'inf'" },
      { { "pool", "--batch", "0", "w.lua", p }, "--batch needs an integer >= 1, got '0'" },
      { { "pool", "--queue", "", "w.lua", p }, "--queue needs a non-empty name" },
    }) do
      local status, out, err = run(c[1])
      assert.are.equal(2, status, c[2])
      assert.are.equal("", out)
      assert.truthy(err:find("lease " .. c[1][1] .. ": " .. c[2], 1, true), err)
    end
    assert.are.same(before, H.qsnapshot(p))
  end)
end)

describe("lease pool, pause, resume, limit and messages", function()
  it("show the bytes of ids, queue names and messages as \\xNN, never raw", function()
    local p = H.path("esc")
    local id, q = "id\27[41mX\27[0m\nY", "Q\27[1m\r"
    assert.are.equal(0, (run({ "enqueue", p, id, "--max-attempts", "1", "--queue", q })))
    local worker = H.file("esc_worker") .. ".lua"
    H.write(worker, "return function(j) error(j.id, 0) end")
    local status, out, err = run({ "pool", p, worker, "--quiet", "--queue", q, "-j", "1" })
    assert.are.equal(1, status, err)
    local eid, eq = "id\\x1b[41mX\\x1b[0m\\x0aY", "Q\\x1b[1m\\x0d"
    assert.truthy(out:find("workers            1 (queue " .. eq .. ")\n", 1, true), out)
    assert.truthy(out:find("\ndiscarded          " .. eid .. "\n", 1, true), out)
    assert.truthy(out:find("\nhandler error      " .. eid .. ": " .. eid .. "\n", 1, true), out)
    for _, c in ipairs({
      { { "pause", p, q }, "paused " .. eq .. "\n" },
      { { "resume", p, q }, "resumed " .. eq .. "\n" },
      { { "limit", p, q, "--concurrency", "2" }, "limited " .. eq .. ": concurrency 2\n" },
      { { "limit", p, q, "--clear" }, "cleared the limits of " .. eq .. "\n" },
    }) do
      status, out, err = run(c[1])
      assert.are.equal(0, status, err)
      assert.are.equal(c[2], out)
    end
    -- a result's lines keep their breaks, each line's bytes escaped
    local h = lease.open(p)
    assert.are.equal(true, h:enqueue("r", { queue = "plain" }))
    local jid, fence = h:claim_next("w", lease.now(), 10, { queue = "plain" })
    assert.are.equal("r", jid)
    assert.is_true(h:complete("r", "w", fence, lease.now(), "ok\27[2J\nline\0two\r\n\n"))
    h:close()
    status, out, err = run({ "show", p, "r" })
    assert.are.equal(0, status, err)
    local shown = "\nresult      18 bytes\nok\\x1b[2J\nline\\x00two\\x0d\n\n"
    assert.are.equal(shown, out:sub(-#shown))
    status, out, err = run({ "show", p, "no\27]0;x\7" })
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.truthy(err:find('lease show: no job "no\\x1b]0;x\\x07" in', 1, true), err)
    status, out, err = run({ "enqueue", p, id })
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.truthy(err:find('lease enqueue: job "' .. eid .. '" exists in', 1, true), err)
    status, out, err = run({ "jobs", p, "--status", "x\27[2J" })
    assert.are.equal(2, status)
    assert.are.equal("", out)
    assert.truthy(err:find("got 'x\\x1b[2J'", 1, true), err)
    status, out, err = run({ "jobs\27" })
    assert.are.equal(2, status)
    assert.are.equal("", out)
    assert.truthy(err:find("lease: unknown command 'jobs\\x1b'", 1, true), err)
  end)

  it("pool.format escapes with a plain \\xNN escaper by default", function()
    local text = require("lease.pool").format({ workers = 1, queue = "q\27", done = 0,
      handler_errors = 1, retried = 0, discarded = 1, refused = 0, renew_refused = 0, renewed = 0,
      max_fence = 1, wall = 1, rate = 0, discarded_ids = { "a\0b" }, errors = { "a\0b: e\n" },
      failed = { "worker 1: \27x" }, db_messages = { "d\27" }, hook_messages = { "h\27" } })
    assert.is_nil(text:find("\0", 1, true), text)
    assert.is_nil(text:find("\27", 1, true), text)
    for _, line in ipairs({ "workers            1 (queue q\\x1b)", "discarded          a\\x00b",
                            "handler error      a\\x00b: e\\x0a", "worker failed      worker 1: \\x1bx",
                            "database error     d\\x1b", "hook error         h\\x1b" }) do
      assert.truthy(text:find(line, 1, true), line .. "\n" .. text)
    end
  end)
end)

describe("arguments the engine refuses", function()
  it("#sqlite are bad usage before the file is created: exit 2, the option named, no file", function()
    local p = H.file("refused") .. ".db"
    for _, c in ipairs({
      { { "enqueue", p, "x", "--priority", "3000000000" },
        "--priority needs an integer from -2147483648 to 2147483647, got '3000000000'" },
      { { "enqueue", p, "x", "--priority", "-2147483649" },
        "--priority needs an integer from -2147483648 to 2147483647, got '-2147483649'" },
      { { "enqueue", p, "x", "--max-attempts", "3000000000" },
        "--max-attempts needs an integer from 1 to 2147483647, got '3000000000'" },
      { { "enqueue", p, "x", "--queue", string.rep("q", 256) },
        "--queue needs a name of at most 255 bytes, got 256" },
      { { "enqueue", p, "x", "--key", string.rep("k", 1025) },
        "enqueue: key must be at most 1024 bytes, got 1025" },
      { { "schedule", p, "s", "--every", "5", "--priority", "3000000000" },
        "--priority needs an integer from -2147483648 to 2147483647, got '3000000000'" },
      { { "schedule", p, "s", "--every", "5", "--max-attempts", "3000000000" },
        "--max-attempts needs an integer from 1 to 2147483647, got '3000000000'" },
      { { "schedule", p, string.rep("s", 201), "--every", "5" },
        "schedule needs a NAME of at most 200 bytes, got 201" },
      { { "schedule", p, "s", "--every", "1e-300" },
        "--every needs a finite number of seconds > 0, large enough to change the clock, got '1e-300'" },
      { { "schedule", p, "s", "--every", "nan" }, "--every needs a finite number of seconds > 0, got 'nan'" },
      { { "jobs", "" }, "the database path is empty" },
      { { "enqueue", "", "x" }, "the database path is empty" },
    }) do
      local status, out, err = run(c[1])
      assert.are.equal(2, status, err)
      assert.are.equal("", out)
      assert.are.equal("lease " .. c[1][1] .. ": " .. c[2] .. "\n", err:match("^[^\n]*\n"))
      assert.is_false(H.exists(p), c[2])
    end
    -- the bounds themselves are taken
    assert.are.equal(0, (run({ "enqueue", p, "x", "--priority", "-2147483648", "--max-attempts", "2147483647",
                               "--queue", string.rep("q", 255) })))
    assert.are.equal(0, (run({ "schedule", p, string.rep("s", 200), "--every", "5", "--priority", "2147483647" })))
  end)

  it("are bad usage on an existing database too, with no source position, and change nothing", function()
    local p = H.path("refused-existing")
    assert.are.equal(0, (run({ "enqueue", p, "a" })))
    local before = H.qsnapshot(p)
    local status, out, err = run({ "enqueue", p, "x", "--key", string.rep("k", 1025) })
    assert.are.equal(2, status)
    assert.are.equal("", out)
    assert.are.equal("lease enqueue: enqueue: key must be at most 1024 bytes, got 1025\n", err:match("^[^\n]*\n"))
    assert.truthy(err:find("\nusage: lease enqueue ", 1, true), err)
    assert.are.same(before, H.qsnapshot(p))
  end)
end)
