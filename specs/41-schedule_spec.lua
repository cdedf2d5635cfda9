-- Schedules (recurring jobs): db:schedule, db:unschedule, db:schedules and
-- db:tick, on SQLite and PostgreSQL: creation and replace, every and cron
-- ticks, missed ticks not replayed, the jobs' ids and options, a read-only
-- handle, bad input with nothing changed, and many threads and processes
-- ticking the same schedules over a moving clock; then the CLI's schedule,
-- schedules, unschedule and tick.
local H = require("helpers")
local T = require("thread_helpers")
local lease = H.lease
local json = require("dkjson")

-- A minute boundary, 2023-11-14 22:13:00 UTC.
local T0 = 1699999980

-- The schedules by name.
local function by_name(db)
  local out = {}
  for _, s in ipairs(db:schedules()) do out[s.name] = s end
  return out
end

-- The ids of every job, sorted.
local function job_ids(db)
  local out = {}
  for _, j in ipairs(db:jobs("all", 0)) do out[#out + 1] = j.id end
  table.sort(out)
  return out
end

local function sorted(t)
  table.sort(t)
  return t
end

describe("db:schedule and db:schedules", function()
  it("creates a schedule whose first tick is the first multiple of every after now", function()
    local db = H.fresh("sch")
    assert.is_true(db:schedule("report", T0 + 5, { every = 60, queue = "mail", payload = "p",
                                                  priority = -3, max_attempts = 4 }))
    local s = db:schedules()
    assert.are.equal(1, #s)
    s = s[1]
    assert.are.equal("report", s.name)
    assert.are.equal(60, s.every)
    assert.is_nil(s.cron)
    assert.are.equal("mail", s.queue)
    assert.are.equal("p", s.payload)
    assert.are.equal(-3, s.priority)
    assert.are.equal(4, s.max_attempts)
    assert.are.equal(T0 + 5, s.created_at)
    assert.are.equal(T0 + 60, s.next_at)
    assert.is_nil(s.last_at)
    db:close()
  end)

  it("a time exactly on a tick is not a tick of a schedule created then", function()
    local db = H.fresh("sch")
    db:schedule("a", T0, { every = 60 })
    db:schedule("b", T0, { cron = "* * * * *" })
    local s = by_name(db)
    assert.are.equal(T0 + 60, s.a.next_at)
    assert.are.equal(T0 + 60, s.b.next_at)
    assert.are.same({}, db:tick(T0))
    db:close()
  end)

  it("replaces a schedule of the same name: its ticks count from the new now", function()
    local db = H.fresh("sch")
    db:schedule("a", T0, { every = 60 })
    assert.are.same({ "a@" .. (T0 + 60) }, db:tick(T0 + 61))
    assert.is_true(db:schedule("a", T0 + 100, { cron = "0 * * * *", queue = "q" }))
    local s = db:schedules()
    assert.are.equal(1, #s)
    assert.are.equal("0 * * * *", s[1].cron)
    assert.is_nil(s[1].every)
    assert.is_nil(s[1].last_at)
    assert.are.equal("q", s[1].queue)
    assert.are.equal(T0 + 60 * 47, s[1].next_at)   -- 23:00 UTC
    -- the job it enqueued before stays
    assert.are.same({ "a@" .. (T0 + 60) }, job_ids(db))
    db:close()
  end)

  it("keeps the ticks of a schedule declared again as it is: one due meanwhile is not lost", function()
    local db = H.fresh("sch")
    -- declared at 02:00 for 03:00; the process restarts at 03:00:30 and
    -- declares it again, then ticks
    local two = T0 - T0 % 86400 + 86400 + 2 * 3600
    assert.is_true(db:schedule("nightly", two, { cron = "0 3 * * *", payload = "p" }))
    local before = db:schedules()[1]
    assert.is_true(db:schedule("nightly", two + 3630, { cron = "0 3 * * *", payload = "p" }))
    assert.are.same(before, db:schedules()[1])
    assert.are.same({ "nightly@" .. (two + 3600) }, db:tick(two + 3631))
    -- declared again after that tick: its last tick stays too
    local ticked = db:schedules()[1]
    assert.are.equal(two + 3600, ticked.last_at)
    assert.is_true(db:schedule("nightly", two + 3700, { cron = "0 3 * * *", payload = "p" }))
    assert.are.same(ticked, db:schedules()[1])
    -- a changed option is a new schedule: its ticks count from the new now
    assert.is_true(db:schedule("nightly", two + 3700, { cron = "0 3 * * *", payload = "q" }))
    local changed = db:schedules()[1]
    assert.are.same({ two + 3700, two + 86400 + 3600, "q" }, { changed.created_at, changed.next_at,
      changed.payload })
    assert.is_nil(changed.last_at)
    db:close()
  end)

  it("lists schedules in name order, more than a page of them", function()
    local db = H.fresh("sch")
    for i = 150, 1, -1 do db:schedule(string.format("s%03d", i), T0, { every = i }) end
    local s = db:schedules()
    assert.are.equal(150, #s)
    for i = 1, 150 do
      assert.are.equal(string.format("s%03d", i), s[i].name)
      assert.are.equal(i, s[i].every)
    end
    db:close()
  end)
end)

describe("db:tick", function()
  it("enqueues one job per due schedule, named name@tick, with the schedule's options", function()
    local db = H.fresh("tick")
    db:schedule("a", T0, { every = 10, queue = "q", payload = "x", priority = 2, max_attempts = 3 })
    db:schedule("b", T0, { every = 100 })
    assert.are.same({}, db:tick(T0 + 9))
    assert.are.same({ "a@" .. (T0 + 10) }, db:tick(T0 + 10))
    local st = db:state("a@" .. (T0 + 10), T0 + 10)
    assert.are.equal("q", st.queue)
    assert.are.equal("x", st.payload)
    assert.are.equal(2, st.priority)
    assert.are.equal(3, st.max_attempts)
    assert.are.equal("available", st.status)
    local s = by_name(db).a
    assert.are.equal(T0 + 10, s.last_at)
    assert.are.equal(T0 + 20, s.next_at)
    -- a second tick at the same now enqueues nothing
    assert.are.same({}, db:tick(T0 + 10))
    -- a@(T0 + 20) .. a@(T0 + 90) were missed: only the latest, a@(T0 + 100)
    assert.are.same(sorted({ "a@" .. (T0 + 100), "b@" .. (T0 + 20) }), sorted(db:tick(T0 + 105)))
    db:close()
  end)

  it("does not replay missed ticks: one job for the latest, next_at moved past now", function()
    local db = H.fresh("tick")
    db:schedule("a", T0, { every = 10 })
    db:schedule("c", T0, { cron = "*/15 * * * *" })   -- T0 is 22:13
    local now = T0 + 3600 + 7   -- an hour and 7 seconds later: 23:13:07
    assert.are.same(sorted({ "a@" .. (T0 + 3600), "c@" .. (T0 + 47 * 60) }), sorted(db:tick(now)))
    local s = by_name(db)
    assert.are.equal(T0 + 3600, s.a.last_at)
    assert.are.equal(T0 + 3610, s.a.next_at)
    assert.are.equal(T0 + 47 * 60, s.c.last_at)   -- 23:00
    assert.are.equal(T0 + 62 * 60, s.c.next_at)   -- 23:15
    assert.are.equal(2, #job_ids(db))
    assert.are.same({}, db:tick(now))
    assert.are.same({}, db:tick(now + 2))
    assert.are.same({ "a@" .. (T0 + 3610) }, db:tick(now + 3))
    db:close()
  end)

  it("cron: steps, lists and the day-of-month / day-of-week OR rule", function()
    local db = H.fresh("tick")
    -- 2024-01-01 00:00 UTC is a Monday
    local jan1 = 1704067200
    db:schedule("odd", jan1, { cron = "1-10/3 * * * *" })
    db:schedule("either", jan1, { cron = "0 0 13 * FRI" })   -- the 13th or a Friday
    local s = by_name(db)
    assert.are.equal(jan1 + 60, s.odd.next_at)
    assert.are.equal(jan1 + 4 * 86400, s.either.next_at)    -- Friday the 5th
    assert.are.same({ "odd@" .. (jan1 + 600) }, db:tick(jan1 + 600))
    assert.are.equal(jan1 + 3600 + 60, by_name(db).odd.next_at)
    db:unschedule("odd")
    assert.are.same({ "either@" .. (jan1 + 4 * 86400) }, db:tick(jan1 + 4 * 86400 + 1))
    assert.are.equal(jan1 + 11 * 86400, by_name(db).either.next_at)   -- Friday the 12th
    db:tick(jan1 + 11 * 86400)
    assert.are.equal(jan1 + 12 * 86400, by_name(db).either.next_at)   -- Saturday the 13th
    db:close()
  end)

  it("a job id that exists already is left as it is, and not returned", function()
    local db = H.fresh("tick")
    db:schedule("a", T0, { every = 10, payload = "new" })
    db:enqueue("a@" .. (T0 + 10), { payload = "old" })
    assert.are.same({}, db:tick(T0 + 10))
    assert.are.equal("old", db:state("a@" .. (T0 + 10), T0).payload)
    assert.are.equal(T0 + 20, by_name(db).a.next_at)
    db:close()
  end)

  it("names a job with the schedule's whole name, zero bytes included", function()
    local db = H.fresh("tick")
    db:schedule("a\0b", T0, { every = 10 })
    db:schedule("a\0c", T0, { every = 10 })
    db:schedule("a", T0, { every = 10 })
    local ids = db:tick(T0 + 10)
    table.sort(ids)
    local at = "@" .. (T0 + 10)
    assert.are.same({ "a\0b" .. at, "a\0c" .. at, "a" .. at }, ids)
    assert.are.same({ "a\0b" .. at, "a\0c" .. at, "a" .. at }, job_ids(db))
    assert.are.equal(3, db:counts(T0 + 10).available)
    db:close()
  end)

  it("ticks more due schedules than one call of the core takes", function()
    local db = H.fresh("tick")
    for i = 1, 150 do db:schedule("s" .. i, T0, { every = 10 }) end
    assert.are.equal(150, #db:tick(T0 + 10))
    assert.are.equal(150, #job_ids(db))
    assert.are.same({}, db:tick(T0 + 10))
    db:close()
  end)
end)

describe("db:unschedule", function()
  it("deletes a schedule; its jobs stay; a missing one is false, 'missing'", function()
    local db = H.fresh("uns")
    db:schedule("a", T0, { every = 10 })
    db:tick(T0 + 10)
    assert.are.same({ true }, { db:unschedule("a") })
    assert.are.same({}, db:schedules())
    assert.are.same({ false, "missing" }, { db:unschedule("a") })
    assert.are.same({}, db:tick(T0 + 100))
    assert.are.same({ "a@" .. (T0 + 10) }, job_ids(db))
    db:close()
  end)
end)

describe("a read-only handle", function()
  it("reads schedules; schedule, unschedule and tick raise readonly and change nothing", function()
    local db, p = H.fresh("ro")
    db:schedule("a", T0, { every = 10 })
    db:close()
    local ro = lease.open(p, { readonly = true })
    assert.are.equal("a", ro:schedules()[1].name)
    assert.matches("^lease%.schedule: .*%[readonly%]", H.error_of(ro.schedule, ro, "b", T0, { every = 1 }))
    assert.matches("^lease%.unschedule: .*%[readonly%]", H.error_of(ro.unschedule, ro, "a"))
    assert.matches("^lease%.tick: .*%[readonly%]", H.error_of(ro.tick, ro, T0 + 100))
    ro:close()
    db = lease.open(p)
    local s = db:schedules()
    assert.are.equal(1, #s)
    assert.are.equal(T0 + 10, s[1].next_at)
    assert.are.same({}, job_ids(db))
    db:close()
  end)
end)

describe("a database made before schedules", function()
  -- a version 3 database (specs/fixtures/<backend>_schema_v3.sql), the
  -- last layout without lease_schedules, with one job
  local function v3(name)
    local p = H.path(name)
    H.sql(p, H.read((os.getenv("LEASE_SOURCE_DIR") or ".") .. "/specs/fixtures/"
      .. H.backend .. "_schema_v3.sql") .. "\nINSERT INTO jobs(id) VALUES ('j');")
    return p
  end
  local has_table = H.backend == "pg" and "SELECT to_regclass('lease_schedules') IS NOT NULL"
    or "SELECT count(*) FROM sqlite_master WHERE name = 'lease_schedules'"
  local yes, no = H.backend == "pg" and "t\n" or "1\n", H.backend == "pg" and "f\n" or "0\n"

  it("read-only: no schedules, tick raises readonly, nothing made", function()
    local p = v3("old-ro")
    local ro = lease.open(p, { readonly = true })
    assert.are.equal(3, ro:settings().schema_version)
    assert.are.same({}, ro:schedules())
    assert.matches("%[readonly%]", H.error_of(ro.tick, ro, T0))
    ro:close()
    assert.are.equal(no, H.sql(p, has_table))
  end)

  it("a writable open runs the step SCHEDULES: the table, then schedules tick", function()
    local p = v3("old-rw")
    local db = lease.open(p)
    assert.are.equal(lease.SCHEMA_VERSION, db:settings().schema_version)
    assert.are.equal(yes, H.sql(p, has_table))
    assert.are.same({}, db:schedules())
    assert.is_true(db:schedule("a", T0, { every = 10 }))
    assert.are.same({ "a@" .. (T0 + 10) }, db:tick(T0 + 10))
    assert.are.same({ "a@" .. (T0 + 10), "j" }, job_ids(db))
    db:close()
  end)

  it("read-only on an older file sees the table a writer made since #sqlite", function()
    local p = v3("old-later")
    local ro = lease.open(p, { readonly = true })
    assert.are.same({}, ro:schedules())
    local db = lease.open(p)
    assert.is_true(db:schedule("a", T0, { every = 10 }))
    db:close()
    local got = ro:schedules()
    assert.are.same({ "a" }, { got[1] and got[1].name })
    ro:close()
  end)
end)

describe("bad input", function()
  local cases = {
    { "every 0", { "a", T0, { every = 0 } }, "bad argument #3 to 'schedule' (every must be a positive number of seconds, got 0)" },
    { "every -1", { "a", T0, { every = -1 } }, "(every must be a positive number of seconds, got -1" },
    { "every nan", { "a", T0, { every = 0 / 0 } }, "(every must be a positive number of seconds, got nan)" },
    { "every inf", { "a", T0, { every = math.huge } }, "(every must be a positive number of seconds, got inf)" },
    { "every text", { "a", T0, { every = "10" } }, "(every must be a positive number of seconds, got a string)" },
    { "every tiny", { "a", T0, { every = 1e-300 } }, "bad argument #3 to 'schedule' (every is too small for now: its ticks would not be distinct numbers)" },
    { "both", { "a", T0, { every = 1, cron = "* * * * *" } }, "bad argument #3 to 'schedule' (opts: give every or cron, not both)" },
    { "neither", { "a", T0, { queue = "q" } }, "bad argument #3 to 'schedule' (opts: give every (seconds) or cron (an expression))" },
    { "no opts", { "a", T0 }, "bad argument #3 to 'schedule' (opts must be a table, got nil)" },
    { "bad cron", { "a", T0, { cron = "61 * * * *" } }, "bad argument #3 to 'schedule' (cron: minute field: 61 is out of range 0-59)" },
    { "short cron", { "a", T0, { cron = "* * *" } }, "(cron: expected 5 fields (minute hour day-of-month month day-of-week), got 3)" },
    { "never", { "a", T0, { cron = "0 0 30 2 *" } }, "(cron: '0 0 30 2 *' matches no time within ten years)" },
    { "unknown key", { "a", T0, { every = 1, run_at = 5 } }, "bad argument #3 to 'schedule' (opts has an unknown key 'run_at')" },
    { "bad priority", { "a", T0, { every = 1, priority = 1.5 } }, "(opts.priority must be an integer" },
    { "bad attempts", { "a", T0, { every = 1, max_attempts = 0 } }, "(opts.max_attempts must be an integer" },
    { "empty queue", { "a", T0, { every = 1, queue = "" } }, "(opts.queue must be a non-empty string, got an empty string)" },
    { "empty name", { "", T0, { every = 1 } }, "bad argument #1 to 'schedule' (name must be a non-empty string, got an empty string)" },
    { "long name", { ("n"):rep(201), T0, { every = 1 } }, "bad argument #1 to 'schedule' (name must be at most 200 bytes, got 201)" },
    { "nan now", { "a", 0 / 0, { every = 1 } }, "bad argument #2 to 'schedule' (now must be a finite number, got nan)" },
    { "inf now", { "a", math.huge, { every = 1 } }, "bad argument #2 to 'schedule' (now must be a finite number, got inf)" },
    { "now past 2^53", { "a", 2 ^ 63, { every = 60 } },
      "bad argument #2 to 'schedule' (now is too far from 0 (past 2^53): the ticks of every around it would not be distinct numbers)" },
    { "now below -2^53", { "a", -2 ^ 63, { every = 60 } },
      "bad argument #2 to 'schedule' (now is too far from 0 (past 2^53): the ticks of every around it would not be distinct numbers)" },
    { "cron now past the calendar", { "a", 253402214399, { cron = "* * * * *" } },
      "bad argument #2 to 'schedule' (cron: the time 253402214399 is outside the years 1 to 9989)" },
  }
  for _, c in ipairs(cases) do
    it("schedule: " .. c[1] .. " raises, and nothing changes", function()
      local db = H.fresh("bad")
      db:schedule("a", T0, { every = 10 })
      local before = db:schedules()
      local ok, err = pcall(function() db:schedule(table.unpack(c[2], 1, 3)) end)
      assert.is_false(ok)
      assert.truthy(tostring(err):find(c[3], 1, true), tostring(err))
      assert.are.same(before, db:schedules())
      db:close()
    end)
  end

  it("lease.cron_next: the next minute, or an error naming the expression or the time", function()
    assert.are.equal(T0 - T0 % 60 + 60, lease.cron_next("* * * * *", T0))
    assert.are.equal(1704067200, lease.cron_next("0 0 1 1 *", 1700000000))
    local calls = {
      { { "61 * * * *", T0 }, "bad argument #1 to 'lease.cron_next' (cron: minute field: 61 is out of range 0-59)" },
      { { "0 0 30 2 *", T0 }, "bad argument #1 to 'lease.cron_next' (cron: '0 0 30 2 *' matches no time within ten years)" },
      { { "* * * * *", 253402214399 }, "bad argument #2 to 'lease.cron_next' (cron: the time 253402214399 is outside the years 1 to 9989)" },
      { { "* * * * *", -62135596801 }, "bad argument #2 to 'lease.cron_next' (cron: the time -62135596801 is outside the years 1 to 9989)" },
      { { "* * * * *", 0 / 0 }, "bad argument #2 to 'lease.cron_next' (t must be a finite number, got nan)" },
    }
    for _, c in ipairs(calls) do
      local ok, err = pcall(lease.cron_next, c[1][1], c[1][2])
      assert.is_false(ok)
      assert.truthy(tostring(err):find(c[2], 1, true), tostring(err))
    end
  end)

  it("tick and unschedule: a bad now or name raises, and nothing changes", function()
    local db = H.fresh("bad")
    db:schedule("a", T0, { every = 10 })
    local before = db:schedules()
    assert.matches("bad argument #1 to 'tick' %(now must be a finite number, got nan%)",
                   select(2, pcall(function() db:tick(0 / 0) end)))
    assert.matches("bad argument #1 to 'tick' %(now must be a finite number, got inf%)",
                   select(2, pcall(function() db:tick(math.huge) end)))
    assert.matches("bad argument #1 to 'unschedule' %(name must be a non%-empty string, got an empty string%)",
                   select(2, pcall(function() db:unschedule("") end)))
    assert.are.same(before, db:schedules())
    assert.are.same({}, job_ids(db))
    db:close()
  end)

  it("tick: a schedule another client stored with an every that is no positive number is mismatch, not now's fault", function()
    local p = H.path("broken")
    local db = lease.open(p)
    db:schedule("e", T0, { every = 60 })
    for _, every in ipairs({ "0", "-5" }) do
      H.sql(p, "UPDATE lease_schedules SET every = " .. every .. " WHERE name = 'e'")
      local err = H.error_of(db.tick, db, T0 + 120)
      assert.truthy(err:find("lease.tick: schedule e: its stored cron or every gives no next tick [mismatch]",
        1, true), err)
    end
    assert.are.same({}, job_ids(db))
    db:close()
  end)

  it("tick: a now out of the range a schedule's ticks are read in raises misuse naming now, and nothing changes", function()
    -- clock_check off: the mark would refuse these nows before the schedules see them
    local p = H.path("far")
    local db = lease.open(p, { clock_check = false })
    db:schedule("a", 1000, { every = 60 })
    local before = db:schedules()
    for _, now in ipairs({ 2 ^ 63, 2 ^ 62, 1e308 }) do
      local err = H.error_of(db.tick, db, now)
      assert.truthy(err:find("lease.tick: now " .. ("%.17g"):format(now)
        .. " is out of range for schedule a: its every (60) gives it no distinct next tick [misuse]", 1, true), err)
    end
    assert.are.same(before, db:schedules())
    assert.are.same({}, job_ids(db))
    assert.is_true(db:unschedule("a"))
    db:schedule("c", T0, { cron = "* * * * *" })
    before = db:schedules()
    local err = H.error_of(db.tick, db, 253402214399)
    assert.truthy(err:find("lease.tick: now 253402214399 is outside the years 1 to 9989 that the cron"
      .. " of schedule c reads [misuse]", 1, true), err)
    assert.are.same(before, db:schedules())
    assert.are.same({}, job_ids(db))
    -- a now in range ticks as before
    assert.are.equal(1, #db:tick(T0 + 60))
    db:close()
  end)
end)

-- A ticker (a thread's function: no upvalues): open path, tick at each
-- now of nows, return every id tick returned.  With a barrier, wait on it
-- before each tick (all tickers tick round r at once).  A tick that
-- raises stops its ticking, not its waits (the others would wait at the
-- barrier forever); the error is raised once every round has passed.
local function ticker(path, nows, bar)
  local l = require("lease")
  local db = l.open(path)
  local got, err = {}, nil
  for _, now in ipairs(nows) do
    if bar then bar:wait() end
    if not err then
      local ok, ids = pcall(db.tick, db, now)
      if ok then
        for _, id in ipairs(ids) do got[#got + 1] = id end
      else
        err = ids
      end
    end
  end
  db:close()
  if err then error(err, 0) end
  return got
end

describe("many tickers at once", function()
  local NAMES = { e1 = { every = 1 }, e7 = { every = 7 }, e60 = { every = 60 },
                  m = { cron = "* * * * *" }, q = { cron = "*/15 * * * *" } }

  local function setup()
    local db, p = H.fresh("many")
    for name, o in pairs(NAMES) do db:schedule(name, T0, o) end
    return db, p
  end

  -- The ticks of schedule name enqueued, from the jobs table, in enqueue order.
  local function ticks_of(db)
    local out = {}
    for _, j in ipairs(db:jobs("all", 0)) do
      local name, t = j.id:match("^(%w+)@(%d+)$")
      out[name] = out[name] or {}
      table.insert(out[name], tonumber(t))
    end
    return out
  end

  it("threads ticking round by round: exactly the latest due tick of each round, once", function()
    local N, ROUNDS = 8, H.rounds(30, 15)
    local db, p = setup()
    local nows = {}
    for r = 1, ROUNDS do nows[r] = T0 + r * 37 end
    local bar = T.thread.barrier(N)
    local ts = {}
    for i = 1, N do ts[i] = T.thread.spawn(ticker, p, nows, bar) end
    local returned = {}
    for i = 1, N do
      local ok, got = ts[i]:join()
      assert.is_true(ok, tostring(got))
      for _, id in ipairs(got) do
        assert.is_nil(returned[id], "returned twice: " .. id)
        returned[id] = true
      end
    end
    -- what one ticker alone would enqueue, round by round
    local expected, next_at = {}, {}
    local function nxt(o, t)
      if o.every then return (math.floor(t / o.every) + 1) * o.every end
      local step = o.cron == "* * * * *" and 60 or 900
      return (math.floor(t / step) + 1) * step
    end
    for name, o in pairs(NAMES) do next_at[name] = nxt(o, T0) end
    for _, now in ipairs(nows) do
      for name, o in pairs(NAMES) do
        if next_at[name] <= now then
          local latest = nxt(o, now)
          latest = latest - (o.every or (o.cron == "* * * * *" and 60 or 900))
          expected[#expected + 1] = name .. "@" .. math.floor(latest)
          next_at[name] = nxt(o, now)
        end
      end
    end
    local got = {}
    for id in pairs(returned) do got[#got + 1] = id end
    assert.are.same(sorted(expected), sorted(got))
    assert.are.same(sorted(expected), job_ids(db))
    local s = by_name(db)
    for name in pairs(NAMES) do assert.are.equal(next_at[name], s[name].next_at, name) end
    db:close()
  end)

  it("threads and processes on their own clocks: each tick once, in order, nothing left due", function()
    local N, PROCS, STEPS = 8, 3, H.rounds(40, 20)
    local db, p = setup()
    -- ticker k's clock: T0 + 20 s per step, plus its own offset of 0-18 s
    local function clock(k)
      local nows = {}
      for r = 1, STEPS do nows[r] = T0 + r * 20 + (k % 7) * 3 end
      return nows
    end
    local exe = os.getenv("LEASE_HOST")
    if not exe or exe == "" then exe = (os.getenv("LEASE_BUILD_DIR") or "build") .. "/lease" end
    local script = H.file("ticker") .. ".lua"
    H.write(script, [[
      local lease = require("lease")
      local db = lease.open(arg[1])
      for i = 2, #arg do
        for _, id in ipairs(db:tick(tonumber(arg[i]))) do io.stdout:write(id, "\n") end
      end
      db:close()
    ]])
    local cmd = {}
    for k = 1, PROCS do
      cmd[#cmd + 1] = H.sh(exe) .. " " .. H.sh(script) .. " " .. H.sh(p) .. " "
        .. table.concat(clock(N + k), " ") .. " &"
    end
    local procs = io.popen("sh -c " .. H.sh(table.concat(cmd, " ") .. " wait"))
    local ts = {}
    for i = 1, N do ts[i] = T.thread.spawn(ticker, p, clock(i)) end
    local returned, all = {}, {}
    local function take(id)
      assert.is_nil(returned[id], "returned twice: " .. id)
      returned[id] = true
      all[#all + 1] = id
    end
    for i = 1, N do
      local ok, got = ts[i]:join()
      assert.is_true(ok, tostring(got))
      for _, id in ipairs(got) do take(id) end
    end
    local out = procs:read("*a")
    assert.is_true(procs:close())
    for id in out:gmatch("[^\n]+") do take(id) end
    -- the last now of all, once more: nothing may be left due before it
    local last = T0 + STEPS * 20 + 6 * 3
    for _, id in ipairs(db:tick(last)) do take(id) end
    assert.are.same(sorted(all), job_ids(db))
    local ticks, s = ticks_of(db), by_name(db)
    for name in pairs(NAMES) do
      local list = ticks[name]
      assert.truthy(list and #list > 0, name)
      -- enqueued in tick order: no ticker moved a schedule back
      for i = 2, #list do assert.is_true(list[i] > list[i - 1], name .. ": " .. list[i - 1] .. " then " .. list[i]) end
      assert.are.equal(list[#list], s[name].last_at, name)
      assert.is_true(s[name].next_at > last, name)
      assert.is_true(s[name].last_at <= last, name)
    end
    os.remove(script)
    db:close()
  end)
end)

describe("a forever pool", function()
  it("ticks as it polls: each tick's job enqueued once and handled", function()
    local pool = require("lease.pool")
    local db, p = H.fresh("pool")
    local t0 = db:server_now()
    db:schedule("beat", t0, { every = 0.25, queue = "beats", payload = "b" })
    db:close()
    -- the first handler of a beat from t0 + 0.75 on stops the pool (SIGTERM
    -- to this process), once: the one that removes the flag file
    local flag = H.file("stop")
    H.write(flag, "")
    local s = pool.run({ db = p, workers = 2, ttl = 30, poll = 0.02, forever = true,
                         queue = "beats", shutdown_grace = 5, args = { t0 = t0, flag = flag },
                         handler = function(job)
                           local l = require("lease")
                           local tick = tonumber(job.id:match("^beat@(.+)$"))
                           assert(job.payload == "b" and tick > job.args.t0)
                           if tick >= job.args.t0 + 0.75 and os.remove(job.args.flag) then
                             os.execute("kill -TERM " .. l.pid())
                           end
                           return "ok"
                         end })
    assert.are.equal("TERM", s.interrupted)
    assert.is_true(s.done >= 3, "done " .. s.done)
    assert.are.same({}, s.failed)
    db = lease.open(p)
    local ticks = {}
    for _, j in ipairs(db:jobs("all", 0)) do ticks[#ticks + 1] = tonumber(j.id:match("^beat@(.+)$")) end
    assert.is_true(#ticks >= 3)
    for i = 2, #ticks do assert.is_true(ticks[i] > ticks[i - 1]) end
    assert.are.equal(ticks[#ticks], db:schedules()[1].last_at)
    db:close()
  end)
end)

describe("a forever pool with a poll longer than its schedule's every", function()
  it("ticks at each tick's time, not a poll later", function()
    local pool = require("lease.pool")
    local db, p = H.fresh("pool-ticks")
    local t0 = db:server_now()
    db:schedule("beat", t0, { every = 0.5, queue = "beats" })
    db:close()
    local flag = H.file("stop-ticks")
    H.write(flag, "")
    local started = os.time()
    -- poll = 30: without a wake at the tick the second tick comes 30 s on
    local s = pool.run({ db = p, workers = 1, ttl = 30, poll = 30, forever = true,
                         queue = "beats", shutdown_grace = 5, args = { t0 = t0, flag = flag },
                         handler = function(job)
                           local tick = tonumber(job.id:match("^beat@(.+)$"))
                           if tick >= job.args.t0 + 2 and os.remove(job.args.flag) then
                             os.execute("kill -TERM " .. require("lease").pid())
                           end
                           return "ok"
                         end })
    assert.are.equal("TERM", s.interrupted)
    assert.is_true(os.time() - started < 15, "ran " .. (os.time() - started) .. " s")
    db = lease.open(p)
    local ticks = 0
    for _, j in ipairs(db:jobs("all", 0)) do
      local tick = tonumber(j.id:match("^beat@(.+)$"))
      if tick > t0 and tick <= t0 + 2 then ticks = ticks + 1 end
    end
    assert.is_true(ticks >= 3, ticks .. " ticks in the first 2 s")
    db:close()
  end)
end)

-- Run cli.main(argv); returns status, stdout text, stderr text.
local run = H.cli

describe("the CLI", function()
  it("lease schedule, schedules, tick, unschedule", function()
    local p = H.path("cli")
    lease.open(p):close()
    local status, out, err = run({ "schedule", p, "nightly", "--cron", "0 3 * * *", "--queue", "q",
                                   "--payload", "x", "--priority", "2", "--max-attempts", "3" })
    assert.are.equal("", err)
    assert.are.equal(0, status)
    assert.are.equal("scheduled nightly\n", out)
    assert.are.equal(0, (run({ "schedule", p, "often", "--every", "0.001" })))
    status, out = run({ "schedules", p, "--json" })
    assert.are.equal(0, status)
    local list = json.decode(out)
    assert.are.equal(2, #list)
    assert.are.equal("nightly", list[1].name)
    assert.are.equal("0 3 * * *", list[1].cron)
    assert.are.equal("q", list[1].queue)
    assert.are.equal("x", list[1].payload)
    assert.are.equal(2, list[1].priority)
    assert.are.equal(3, list[1].max_attempts)
    assert.are.equal("often", list[2].name)
    assert.are.equal(0.001, list[2].every)
    status, out = run({ "schedules", p })
    assert.are.equal(0, status)
    assert.truthy(out:find("nightly", 1, true))
    assert.truthy(out:find("0 3 * * *", 1, true))
    lease.sleep(0.01)
    status, out = run({ "tick", p })
    assert.are.equal(0, status)
    assert.matches("^often@[%d.e+-]+\n$", out)
    local db = lease.open(p)
    assert.are.equal(1, #db:jobs("all", 0))
    db:close()
    assert.are.same({ 0, "unscheduled often\n", "" }, { run({ "unschedule", p, "often" }) })
    status, out, err = run({ "unschedule", p, "often" })
    assert.are.equal(1, status)
    assert.are.equal("", out)
    assert.truthy(err:find("no schedule often", 1, true), err)
  end)

  it("bad usage exits 2 naming the option, and changes nothing", function()
    local p = H.path("cli")
    lease.open(p):close()
    local bad = {
      { { "schedule", p, "a" }, "--every or --cron" },
      { { "schedule", p, "a", "--every", "1", "--cron", "* * * * *" }, "not both" },
      { { "schedule", p, "a", "--every", "0" }, "--every" },
      { { "schedule", p, "a", "--cron", "61 * * * *" }, "minute field: 61 is out of range 0-59" },
      { { "schedule", p, "a", "--every", "5", "--priority", "x" }, "--priority" },
      { { "schedule", p, "", "--every", "5" }, "NAME" },
      { { "unschedule", p }, "NAME" },
      { { "schedules" }, "DB" },
      { { "tick" }, "DB" },
    }
    for _, b in ipairs(bad) do
      local status, out, err = run(b[1])
      assert.are.equal(2, status, table.concat(b[1], " ") .. ": " .. err)
      assert.are.equal("", out)
      assert.truthy(err:find(b[2], 1, true), table.concat(b[1], " ") .. ": " .. err)
    end
    local db = lease.open(p)
    assert.are.same({}, db:schedules())
    db:close()
  end)

  it("each command has --help", function()
    for _, c in ipairs({ "schedule", "schedules", "unschedule", "tick" }) do
      local status, out = run({ c, "--help" })
      assert.are.equal(0, status)
      assert.truthy(out:find("lease " .. c, 1, true), out)
    end
  end)
end)
