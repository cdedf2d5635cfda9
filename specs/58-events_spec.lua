-- The events ledger: every operation on a job is recorded, in the same
-- transaction, with what the engine saw (db:events): its op, the caller's
-- owner, fence and now, and its outcome, "ok" or "refused" with the reason.
-- Refused writes are recorded too, and leave the job's row as the contract
-- says.  Paging by since_seq and limit; retention by count and age; a
-- handle opened without events (the default) or with events = false records
-- nothing; bad arguments raise.
-- Backend-neutral: runs on SQLite and PostgreSQL.
local H = require("helpers")
local lease = H.lease

-- The events as compact rows "op id owner fence outcome reason" (nil as -).
local function rows(list)
  local out = {}
  for i, e in ipairs(list) do
    out[i] = table.concat({ e.op, tostring(e.id or ("queue:" .. tostring(e.queue))),
                            tostring(e.owner or "-"), tostring(e.fence or "-"), e.outcome,
                            tostring(e.reason or "-") }, " ")
  end
  return out
end

-- Every event, paged through with the largest limit.
local function all(db, id)
  local out, since = {}, 0
  repeat
    local page = db:events({ id = id, since_seq = since, limit = 10000 })
    for _, e in ipairs(page) do out[#out + 1] = e end
    if #page > 0 then since = page[#page].seq end
  until #page < 10000
  return out
end

describe("the events ledger", function()
  local db, p
  before_each(function() db, p = H.fresh("events", { events = true }) end)
  after_each(function() if db then db:close() end end)

  it("records a cancel for each job waiting below a discarded or cancelled one, only with events on",
    function()
      db:enqueue("p", { max_attempts = 1 })
      db:enqueue("c", { after = { "p" } })
      db:enqueue("g", { after = { "c" } })
      db:enqueue("x")
      db:enqueue("y", { after = { "x" } })
      local f = db:claim("p", "A", 100, 10)
      local seq = db:events({ limit = 10000 })
      seq = seq[#seq].seq
      assert.are.equal("discarded", db:fail("p", "A", f, 101, "boom"))
      local got = {}
      for _, e in ipairs(db:events({ since_seq = seq, limit = 100 })) do
        got[#got + 1] = table.concat({ e.op, e.id, tostring(e.owner or "-"), tostring(e.fence or "-"),
                                       e.outcome, string.format("%g", e.at) }, " ")
      end
      table.sort(got)
      assert.are.same({ "cancel c - - ok 101", "cancel g - - ok 101", "discard p - - ok 101",
                        "fail p A 1 ok 101" }, got)
      assert.are.equal("cancelled", db:state("g").status)
      -- a handle without events records none of them
      local quiet = lease.open(p)
      local before = #all(db)
      assert.is_true(quiet:cancel("x", 102))
      quiet:close()
      assert.are.equal("cancelled", db:state("y").status)
      assert.are.equal(before, #all(db))
    end)

  it("records a sequence of operations in order, with the caller's now", function()
    assert.are.equal(true, db:enqueue("a"))
    db:enqueue("a")                                            -- exists
    local f = db:claim("a", "A", 100, 10)
    assert.are.equal(1, f)
    assert.are.equal(true, db:renew("a", "A", f, 101, 10))
    db:renew("a", "A", f + 1, 102, 10)                         -- stale_fence
    assert.are.equal(true, db:complete("a", "A", f, 103, "r"))
    db:complete("a", "A", f, 104, "r2")                        -- done
    db:release("a", "A", f)                                    -- done
    assert.are.equal(true, db:retry("a", 105))
    db:cancel("a", 106)
    db:cancel("a", 107)                                         -- cancelled
    db:pause("q")
    db:resume("q")
    db:limit("q", { concurrency = 2 })
    local got = all(db)
    assert.are.same({
      "enqueue a - - ok -",
      "enqueue a - - refused exists",
      "claim a A 1 ok -",
      "renew a A 1 ok -",
      "renew a A 2 refused stale_fence",
      "complete a A 1 ok -",
      "complete a A 1 refused done",
      "release a A 1 refused done",
      "retry a - - ok -",
      "cancel a - - ok -",
      "cancel a - - refused cancelled",
      "pause queue:q - - ok -",
      "resume queue:q - - ok -",
      "limit queue:q - - ok -",
    }, rows(got))
    -- seq grows; at is the caller's now where the call has one
    for i = 2, #got do assert.is_true(got[i].seq > got[i - 1].seq) end
    assert.are.same({ 100, 101, 102, 103, 104, 105, 106, 107 },
      { got[3].at, got[4].at, got[5].at, got[6].at, got[7].at, got[9].at, got[10].at, got[11].at })
    -- calls without a now: the engine's clock, seconds since the epoch
    local t = lease.now()
    assert.is_true(math.abs(got[1].at - t) < 600)
    assert.is_true(math.abs(got[8].at - t) < 600)
  end)

  it("records one event per job of a batch: enqueue_many, claim_next(n), complete_many", function()
    db:enqueue_many({ "b1", "b2", "b3" })
    db:enqueue_many({ "b3", "b4" })
    local l = db:claim_next("W", 10, 5, 3)
    assert.are.same({ "b1", "b2", "b3" }, H.ids(l))
    local items = {}
    for i, j in ipairs(l) do items[i] = { id = j.id, fence = j.fence, result = "r" } end
    items[#items + 1] = { id = "b4", fence = 1, result = "x" }   -- not held: not_owner
    db:complete_many("W", 11, items)
    -- b9 is missing (refused), then b4 is claimed
    local ok, why, id, fence = db:complete_claim_next("b9", "W", 1, 12, nil, 5)
    assert.are.same({ false, "missing", "b4" }, { ok, why, id })
    assert.are.same({
      "enqueue b1 - - ok -", "enqueue b2 - - ok -", "enqueue b3 - - ok -",
      "enqueue b3 - - refused exists", "enqueue b4 - - ok -",
      "claim b1 W 1 ok -", "claim b2 W 1 ok -", "claim b3 W 1 ok -",
      "complete b1 W 1 ok -", "complete b2 W 1 ok -", "complete b3 W 1 ok -",
      "complete b4 W 1 refused not_owner",
      "complete b9 W 1 refused missing",
      "claim b4 W " .. fence .. " ok -",
    }, rows(all(db)))
  end)

  it("records one event per entry of an enqueue_many with data, in the order given", function()
    db:enqueue("d0")
    assert.are.equal(2, db:enqueue_many({ { id = "d1", payload = "p" }, { id = "d0", payload = "p" },
      { id = "d1", priority = 3 }, { id = "d2", queue = "q", run_at = 5 } }))
    assert.are.same({
      "enqueue d0 - - ok -", "enqueue d1 - - ok -", "enqueue d0 - - refused exists",
      "enqueue d1 - - refused exists", "enqueue d2 - - ok -",
    }, rows(all(db)))
  end)

  it("records fail, the discard of a last attempt, and prune", function()
    db:enqueue("f", { max_attempts = 1 })
    local f = db:claim("f", "A", 10, 5)
    assert.are.equal("discarded", (db:fail("f", "A", f, 11, "boom")))
    db:fail("f", "A", f, 12, "again")
    assert.are.equal(1, db:prune(1e12))
    assert.are.same({
      "enqueue f - - ok -", "claim f A 1 ok -", "fail f A 1 ok -", "discard f - - ok -",
      "fail f A 1 refused discarded", "prune f - - ok -",
    }, rows(all(db)))
  end)

  it("records a stale complete as refused, and the job's row stays the new holder's", function()
    db:enqueue("s")
    local fa = db:claim("s", "A", 100, 10)             -- A's lease ends at 110
    local id, fb = db:claim_next("B", 120, 10)         -- B takes it over
    assert.are.equal("s", id)
    local before = H.qsnapshot(p)
    local ok, why = db:complete("s", "A", fa, 121, "late")
    assert.are.equal(false, ok)
    assert.is_true(why == "not_owner" or why == "stale_fence")
    -- the refused write changed nothing in jobs and the queue's tables
    assert.are.same(before, H.qsnapshot(p))
    local st = db:state("s", 121)
    assert.are.same({ "B", fb, false }, { st.owner, st.fence, st.done })
    local got = rows(all(db, "s"))
    assert.are.same({
      "enqueue s - - ok -",
      "claim s A " .. fa .. " ok -",
      "expire s A " .. fa .. " ok -",
      "claim s B " .. fb .. " ok -",
      "complete s A " .. fa .. " refused " .. why,
    }, got)
  end)

  it("records the expiry a claim finds, and the discard when it was the last attempt", function()
    db:enqueue("e", { max_attempts = 2 })
    db:claim("e", "A", 10, 5)                        -- attempt 1, ends at 15
    assert.are.equal(2, db:claim("e", "B", 20, 5))   -- takes over: attempt 2, ends at 25
    local ok, why = db:claim("e", "C", 30, 5)        -- B's expiry was the last attempt
    assert.are.same({ nil, "discarded" }, { ok, why })
    assert.are.same({
      "enqueue e - - ok -", "claim e A 1 ok -",
      "expire e A 1 ok -", "claim e B 2 ok -",
      "expire e B 2 ok -", "discard e - - ok -", "claim e C - refused discarded",
    }, rows(all(db)))
    -- the same through claim_next
    db:enqueue("n", { max_attempts = 1, queue = "one" })
    db:claim_next("A", 10, 5, { queue = "one" })
    assert.are.same({ nil, "empty" }, { H.two(db:claim_next("B", 20, 5, { queue = "one" })) })
    assert.are.same({ "enqueue n - - ok -", "claim n A 1 ok -", "expire n A 1 ok -",
                      "discard n - - ok -", "claim n B - refused discarded" }, rows(all(db, "n")))
  end)

  it("pages by since_seq and limit, and reads one job's events by id", function()
    for i = 1, 7 do db:enqueue("p" .. i) end
    db:enqueue("p1")
    local first = db:events({ limit = 3 })
    assert.are.same({ "p1", "p2", "p3" }, H.ids(first))
    local second = db:events({ since_seq = first[3].seq, limit = 3 })
    assert.are.same({ "p4", "p5", "p6" }, H.ids(second))
    local rest = db:events({ since_seq = second[3].seq, limit = 3 })
    assert.are.same({ "p7", "p1" }, H.ids(rest))
    assert.are.same({}, db:events({ since_seq = rest[2].seq }))
    assert.are.same({ "enqueue p1 - - ok -", "enqueue p1 - - refused exists" },
      rows(db:events({ id = "p1" })))
    assert.are.same({}, db:events({ id = "nope" }))
    -- the default limit is 100
    for i = 1, 120 do db:enqueue("m" .. i) end
    assert.are.equal(100, #db:events())
  end)

  it("keeps at most events.keep, the newest", function()
    db:close()
    db = lease.open(p, { events = { keep = 5 } })
    for i = 1, 23 do db:enqueue("k" .. i) end
    local got = all(db)
    assert.are.equal(5, #got)
    assert.are.same({ "k19", "k20", "k21", "k22", "k23" }, H.ids(got))
    -- a larger keep prunes in steps of a tenth, never above keep
    db:close()
    db = lease.open(p, { events = { keep = 40 } })
    for i = 1, 100 do
      db:enqueue("l" .. i)
      if i % 7 == 0 then assert.is_true(#all(db) <= 40) end
    end
    local kept = all(db)
    assert.is_true(#kept <= 40 and #kept >= 36)
    assert.are.equal("l100", kept[#kept].id)
  end)

  it("drops events older than events.max_age at a prune", function()
    db:close()
    db = lease.open(p, { events = { keep = 10, max_age = 50 } })
    db:enqueue("o")
    for t = 1, 30 do db:claim("o", "w" .. t, t * 10, 5) end
    local got = all(db)
    assert.is_true(#got <= 10)
    -- every event kept is within max_age of the last prune's now (300)
    for _, e in ipairs(got) do assert.is_true(e.at >= 300 - 50 - 10) end
  end)

  it("records nothing on a handle opened without events or with events = false", function()
    db:close()
    db = lease.open(p, { events = false })
    db:enqueue("n")
    local f = db:claim("n", "A", 1, 10)
    db:complete("n", "B", f, 2, "r")
    assert.are.same({}, db:events())
    local d = lease.open(p)
    d:renew("n", "A", f, 3, 10)
    d:release("n", "A", f + 1)
    assert.are.same({}, d:events())
    d:close()
    -- another handle with events on records its own writes
    local h = lease.open(p, { events = { max_age = 1e9 } })
    assert.are.equal(true, h:complete("n", "A", f, 3, "r"))
    assert.are.same({ "complete n A 1 ok -" }, rows(h:events()))
    h:close()
  end)

  it("fails a write whose event cannot be stored, and the write changes nothing", function()
    db:enqueue("x")
    H.sql(p, "ALTER TABLE lease_events RENAME TO lease_events_gone")
    local before = H.qsnapshot(p)
    local err = H.error_of(function() db:claim("x", "A", 1, 10) end)
    assert.matches("lease_events", err)
    assert.are.same(before, H.qsnapshot(p))
    H.sql(p, "ALTER TABLE lease_events_gone RENAME TO lease_events")
  end)

  it("rolls the events of a failed batch back with it", function()
    db:enqueue_many({ "r1", "r2" })
    local l = db:claim_next("W", 1, 10, 2)
    local n = #all(db)
    -- r2's fence is made unable to grow by another client: a blocked job
    H.sql(p, "UPDATE jobs SET fence = 9223372036854775807 WHERE id = 'r2'")
    local err = H.error_of(function()
      db:complete_many("W", 2, { { id = "r1", fence = l[1].fence }, { id = "r2", fence = 9223372036854775807 } })
    end)
    -- a Lua without integers (5.1, LuaJIT) refuses that fence before any
    -- write; either way nothing of the batch stays
    assert.matches(math.type and "range" or "2^53", err, 1, true)
    assert.are.equal(n, #all(db))
    assert.are.equal(false, db:state("r1", 2).done)
  end)

  it("raises on bad arguments naming the function and the argument", function()
    local function bad(pattern, fn) assert.matches(pattern, H.error_of(fn)) end
    bad("bad argument #1 to 'events' %(filter must be a table or nil", function() db:events("x") end)
    bad("bad argument #1 to 'events' %(filter has an unknown key 'since'", function()
      db:events({ since = 1 })
    end)
    bad("bad argument #1 to 'events' %(filter.limit must be an integer from 1 to 10000",
      function() db:events({ limit = 0 }) end)
    bad("bad argument #1 to 'events' %(filter.limit must be an integer from 1 to 10000",
      function() db:events({ limit = 10001 }) end)
    bad("bad argument #1 to 'events' %(filter.since_seq must be an integer", function()
      db:events({ since_seq = -1 })
    end)
    bad("bad argument #1 to 'events' %(filter.id must be a string or nil, got an empty string", function()
      db:events({ id = "" })
    end)
    bad("bad argument #2 to 'lease.open' %(events must be a boolean or a table", function()
      lease.open(p, { events = 5 })
    end)
    bad("bad argument #2 to 'lease.open' %(events.keep must be an integer >= 1", function()
      lease.open(p, { events = { keep = 0 } })
    end)
    bad("bad argument #2 to 'lease.open' %(events.max_age must be a finite number > 0", function()
      lease.open(p, { events = { max_age = -1 } })
    end)
    bad("bad argument #2 to 'lease.open' %(events has an unknown key 'size'", function()
      lease.open(p, { events = { size = 1 } })
    end)
    -- nothing was recorded by the refused calls
    assert.are.same({}, db:events())
  end)
end)

describe("lease events (the CLI)", function()
  it("lists the ledger with UTC times, one job's, paged, and as JSON", function()
    local db, p = H.fresh("events-cli", { events = true })
    db:enqueue("c1")
    local f = db:claim("c1", "A", 1700000000, 10)
    db:complete("c1", "B", f, 1700000001, "r")
    db:enqueue("c2")
    db:close()
    if H.backend == "pg" then return end   -- the CLI opens files
    local status, out = H.host("events " .. H.sh(p))
    assert.are.equal(0, status)
    assert.matches("2023%-11%-14T22:13:20%.000Z%s+claim%s+ok%s+c1%s+A%s+1", out)
    assert.matches("complete%s+refused not_owner%s+c1%s+B", out)
    assert.matches("4 events\n$", out)
    status, out = H.host("events " .. H.sh(p) .. " --job c1 --since 1 --limit 1")
    assert.are.equal(0, status)
    assert.matches("claim", out)
    assert.matches("1 events\n$", out)
    status, out = H.host("events " .. H.sh(p) .. " --job c2 --json")
    assert.are.equal(0, status)
    assert.matches('^%[{"seq":4,"at":[%d.]+,"op":"enqueue","id":"c2","queue":null,"owner":null,'
      .. '"fence":null,"outcome":"ok","reason":null}%]\n$', out)
    local st, _, err = H.host("events " .. H.sh(p) .. " --limit 0")
    assert.are.equal(2, st)
    assert.matches("%-%-limit needs an integer >= 1", err)
  end)
end)

describe("the CLI's writes in the events ledger", function()
  it("are recorded with lease pool --events or LEASE_EVENTS=1, and not without", function()
    local db, p = H.fresh("events-cli")
    assert.is_true(db:enqueue("a"))
    assert.is_true(db:enqueue("b"))
    assert.is_true(db:enqueue("c"))
    db:close()
    local worker = H.file("worker") .. ".lua"
    H.write(worker, 'return function(job) if job.id == "c" then error("no") end return "ok" end\n')
    local exe = os.getenv("LEASE_HOST") or ((os.getenv("LEASE_BUILD_DIR") or "build") .. "/lease")
    local function lease_cmd(env, args)
      local out, ok = H.capture(env .. " " .. H.sh(exe) .. " " .. args .. " 2>&1")
      assert.is_true(ok, out)
    end
    local function ops(id)
      local h = lease.open(p)
      local got = {}
      for _, e in ipairs(h:events({ id = id, limit = 100 })) do got[#got + 1] = e.op end
      h:close()
      return got
    end
    -- without the flag or the variable, nothing
    lease_cmd("LEASE_EVENTS=", "cancel " .. H.sh(p) .. " a")
    assert.are.same({}, ops("a"))
    lease_cmd("LEASE_EVENTS=0", "retry " .. H.sh(p) .. " a")
    assert.are.same({}, ops("a"))
    -- lease pool --events: the workers' claims and completions
    local st, out = H.cli({ "pool", p, worker, "-j", "1", "--events", "--quiet", "--drain-wait", "0" })
    assert.are.equal(0, st, out)                                 -- c is retryable
    assert.are.same({ "claim", "complete" }, ops("b"))
    -- LEASE_EVENTS=1: any command that writes
    lease_cmd("LEASE_EVENTS=1", "cancel " .. H.sh(p) .. " c")
    local got = ops("c")
    assert.are.equal("cancel", got[#got])
  end)
end)
