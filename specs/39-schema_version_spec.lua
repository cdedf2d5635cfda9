-- The schema version a database carries (lease_meta, key schema_version):
-- a fresh database says the engine's; every earlier layout, built here from
-- the SQL of that layout (specs/fixtures/<backend>_schema_v<N>.sql), opens,
-- is brought to the current version with every job, fence, payload and
-- error kept, and still serves seed-style clients; a database of a newer
-- version is refused with nothing changed.
local H = require("helpers")
local lease = H.lease

local CURRENT = lease.SCHEMA_VERSION

-- The SQL text of a fixture.
local function fixture(name)
  return H.read((os.getenv("LEASE_SOURCE_DIR") or ".") .. "/specs/fixtures/" .. name)
end

-- The version row as another client reads it (nothing when there is none).
local function version_row(p)
  return H.sql(p, "SELECT value FROM lease_meta WHERE key = 'schema_version'")
end

-- A database of layout `v` (SQLite: 0 to 3; PostgreSQL: 0 and 3) with
-- jobs written by another client: a claimed twice (fence 2) with a payload,
-- max_attempts, priority and one error; b open; c done with a result.
local function older(v, name)
  local p = H.path(name)
  local jobs = "INSERT INTO jobs(id) VALUES ('a'), ('b'), ('c');"
    .. " UPDATE jobs SET fence = 2, owner = 'w', until = 1 WHERE id = 'a';"
    .. " UPDATE jobs SET fence = 1, done = 1, result = 'ra', until = 7 WHERE id = 'c';"
  local queue = v > 0 and (" UPDATE lease_queue SET payload = 'pa', max_attempts = 9, priority = 3"
    .. " WHERE id = 'a'; INSERT INTO lease_errors(id, attempt, at, owner, fence, message)"
    .. " VALUES ('a', 1, 5, 'w', 1, 'boom')") or ""
  H.sql(p, fixture(("%s_schema_v%d.sql"):format(H.backend, v)) .. "\n" .. jobs .. queue)
  return p
end

-- The schema objects of a database as the engine made them, one line each
-- (SQLite: every object's name and SQL, and lease_queue's columns;
-- PostgreSQL, in the database's schema: the columns of jobs and the lease_
-- tables, the indexes, the functions' bodies and the triggers), so that an
-- upgraded database can be compared with a fresh one.
local function layout(p)
  if H.backend == "pg" then
    return H.psql(p, "SELECT table_name, column_name, data_type, is_nullable,"
      .. " coalesce(column_default, '') FROM information_schema.columns"
      .. " WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position")
      .. H.psql(p, "SELECT indexname, regexp_replace(indexdef, ' ON [^ ]+\\.', ' ON ')"
      .. " FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname")
      .. H.psql(p, "SELECT proname, prosrc FROM pg_proc"
      .. " WHERE pronamespace = current_schema()::regnamespace ORDER BY proname")
      .. H.psql(p, "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
      .. " WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal"
      .. " ORDER BY 1, 2")
  end
  return H.sqlite3(p, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
    .. H.sqlite3(p, "SELECT cid, name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('lease_queue')")
end

-- PostgreSQL's step QUIET_COMPLETE undone: its two columns and the
-- triggers whose WHEN reads them (the step makes both triggers again),
-- and step WAITED_ON_ANY_CLIENT's trigger, which writes one of them.
local PG_UNDO_QUIET_COMPLETE = "DROP TRIGGER IF EXISTS lease_deps_added ON lease_deps;"
  .. " DROP FUNCTION IF EXISTS lease_deps_added();"
  .. " DROP TRIGGER IF EXISTS lease_deps_follow ON lease_queue;"
  .. " DROP TRIGGER lease_jobs_changed ON jobs; ALTER TABLE jobs DROP COLUMN lease_completions;"
  .. " ALTER TABLE lease_queue DROP COLUMN waited_on;"

-- The SQL that undoes step DEPS and the triggers of later steps that read
-- lease_deps (DEPS_ANY_CLIENT), before lease_deps is dropped; on
-- PostgreSQL also step QUIET_COMPLETE, whose columns, added again after
-- UNIQUE's and TIMEOUT's, would otherwise come before them.
local function undo_deps()
  if H.backend == "pg" then
    return "DROP TRIGGER lease_deps_follow ON lease_queue; DROP FUNCTION lease_deps_follow();"
      .. " DROP TRIGGER lease_deps_parent_gone ON lease_queue; DROP FUNCTION lease_deps_parent_gone();"
      .. " " .. PG_UNDO_QUIET_COMPLETE
  end
  return "DROP TRIGGER lease_deps_gone; DROP TRIGGER lease_deps_parent_gone; DROP TRIGGER lease_jobs_done;"
end

describe("a database's schema version", function()
  it("is the engine's in a fresh database: db:settings() and the version row say it", function()
    assert.is_true(H.is_integer(CURRENT) and CURRENT >= 3, tostring(CURRENT))
    local db, p = H.fresh("schema-fresh")
    assert.are.equal(CURRENT, db:settings().schema_version)
    assert.are.equal(CURRENT .. "\n", version_row(p))
    db:close()
    -- a read-only handle says the same
    local ro = lease.open(p, { readonly = true })
    assert.are.equal(CURRENT, ro:settings().schema_version)
    ro:close()
  end)

  local versions = H.backend == "pg" and { 0, 3 } or { 0, 1, 2, 3 }
  for _, v in ipairs(versions) do
    it(("version %d opens, is brought to the current version, and keeps every job"):format(v), function()
      local p = older(v, "schema-v" .. v)
      local before = H.snapshot(p)
      -- no version row: no lease_meta at all
      assert.are.equal("0\n", H.sql(p, H.backend == "pg" and "SELECT count(*) FROM pg_class"
        .. " WHERE oid = to_regclass('lease_meta')" or "SELECT count(*) FROM sqlite_master WHERE name = 'lease_meta'"))
      local db = lease.open(p)
      assert.are.equal(CURRENT, db:settings().schema_version)
      assert.are.equal(CURRENT .. "\n", version_row(p))
      assert.are.same(before, H.snapshot(p))
      -- every step ran: the last ones' tables are there (lease_schedules)
      assert.are.same({}, db:schedules())
      -- the same tables, columns, indexes and triggers as a fresh database's
      local fresh, fp = H.fresh("schema-v" .. v .. "-fresh")
      fresh:close()
      assert.are.equal(layout(fp), layout(p))
      local a, c = db:state("a", 0), db:state("c", 10)
      assert.are.same({ 2, "w", 1 }, { a.fence, a.owner, a["until"] })
      assert.are.same({ "completed", "ra", 1 }, { c.status, c.result, c.fence })
      if v > 0 then
        assert.are.same({ "pa", 9, 3 }, { a.payload, a.max_attempts, a.priority })
        -- the attempts as the layout counted them: one claim counted by v1's
        -- trigger, the fence's growth since enqueue in later layouts
        local attempt = (v == 1 or H.backend == "pg") and 1 or 2
        assert.are.equal(attempt, a.attempt)
        local errs = db:state("a", 0).errors
        assert.are.same({ 1, "boom" }, { #errs, errs[1].message })
      end
      -- the queue works on what was there: a's lease has expired; its
      -- priority 3, where the layout has one, puts b first
      local order = v > 0 and { { "b", 1 }, { "a", 3 } } or { { "a", 3 }, { "b", 1 } }
      assert.are.same(order[1], { H.two(db:claim_next("w2", 2, 10)) })
      assert.are.same(order[2], { H.two(db:claim_next("w2", 2, 10)) })
      db:close()
      -- a seed-style client still writes jobs; the engine sees them
      H.sql(p, "INSERT INTO jobs(id) VALUES ('d'); UPDATE jobs SET done = 1 WHERE id = 'b'")
      db = lease.open(p)
      assert.are.equal("completed", db:state("b", 3).status)
      assert.are.same({ "d", 1 }, { H.two(db:claim_next("w3", 3, 10)) })
      db:close()
      -- a second open finds the current version and changes nothing
      local again = H.qsnapshot(p)
      lease.open(p):close()
      assert.are.same(again, H.qsnapshot(p))
    end)
  end

  it("is reached by the steps lease.SCHEMA_STEPS names, numbered 1 to SCHEMA_VERSION in order", function()
    local seen = {}
    for name, v in pairs(lease.SCHEMA_STEPS) do
      assert.are.equal("string", type(name))
      assert.is_nil(seen[v], "two steps make version " .. tostring(v))
      seen[v] = name
    end
    for v = 1, lease.SCHEMA_VERSION do assert.truthy(seen[v], "no step makes version " .. v) end
    assert.are.same({ 1, 4, 5, lease.SCHEMA_VERSION },
      { lease.SCHEMA_STEPS.QUEUE, lease.SCHEMA_STEPS.SCHEDULES, lease.SCHEMA_STEPS.CONTROL,
        #seen })
  end)

  it("of an older database is read, not written, by a read-only handle #sqlite", function()
    local p = older(1, "schema-ro-v1")
    local bytes = H.read(p)
    local ro = lease.open(p, { readonly = true })
    assert.are.equal(1, ro:settings().schema_version)
    assert.are.same({ 2, "w" }, { ro:state("a").fence, ro:state("a").owner })
    ro:close()
    H.assert_bytes(bytes, p)
  end)

  it("newer than this build knows is refused at open, with nothing changed", function()
    local db, p = H.fresh("schema-newer")
    assert.is_true(db:enqueue("j", { payload = "pj" }))
    db:close()
    local newer = CURRENT + 1
    H.sql(p, "UPDATE lease_meta SET value = " .. (H.backend == "pg" and ("'%d'"):format(newer)
      or tostring(newer)) .. " WHERE key = 'schema_version'")
    local before = H.qsnapshot(p)
    local bytes = H.backend == "sqlite" and H.read(p)
    for _, opts in ipairs({ {}, { readonly = true } }) do
      local err = H.error_of(lease.open, p, opts)
      assert.truthy(err:find("[schema]", 1, true), err)
      assert.truthy(err:find(("the database's schema is version %d, newer than this build of lease"
        .. " knows (%d): upgrade lease"):format(newer, CURRENT), 1, true), err)
      -- the path functions open the same way
      assert.truthy(H.error_of(lease.state, p, "j"):find("newer than this build", 1, true))
    end
    assert.are.same(before, H.qsnapshot(p))
    assert.are.equal(newer .. "\n", version_row(p))
    if bytes then
      H.assert_bytes(bytes, p)
      for _, sc in ipairs({ "-wal", "-shm", "-journal" }) do assert.is_false(H.exists(p .. sc), sc) end
    end
  end)

  it("that is not a version number is refused at open, with nothing changed", function()
    local db, p = H.fresh("schema-garbled")
    db:close()
    H.sql(p, "UPDATE lease_meta SET value = 'x' WHERE key = 'schema_version'")
    local err = H.error_of(lease.open, p)
    assert.truthy(err:find("[schema]", 1, true), err)
    assert.truthy(err:find("is not a version number", 1, true), err)
    assert.are.equal("x\n", version_row(p))
  end)

  it("is read from the row alone once written: an earlier layout's marks are not looked at #sqlite", function()
    -- a current file whose rename trigger another client dropped keeps
    -- version CURRENT: no step runs again
    local db, p = H.fresh("schema-row-only")
    db:close()
    H.sqlite3(p, "DROP TRIGGER lease_jobs_renamed")
    lease.open(p):close()
    assert.are.equal("", H.sqlite3(p, "SELECT name FROM sqlite_master WHERE name = 'lease_jobs_renamed'"))
    -- without the row, the file is classified by its layout: lease_queue's
    -- column timeout (step 8, TIMEOUT) says 8, due_at (step 6, CLOCK) 6,
    -- whatever else it lacks, and it gets its row again with no step run twice
    H.sqlite3(p, "DELETE FROM lease_meta WHERE key = 'schema_version'")
    db = lease.open(p)
    assert.are.equal(CURRENT, db:settings().schema_version)
    db:close()
    assert.are.equal(CURRENT .. "\n", version_row(p))
    assert.are.equal("", H.sqlite3(p, "SELECT name FROM sqlite_master WHERE name = 'lease_jobs_renamed'"))
    -- a file of layout 2 without the trigger is version 2, and brought up
    local p2 = older(2, "schema-row-only-v2")
    lease.open(p2):close()
    assert.are.equal("lease_jobs_renamed\n",
      H.sqlite3(p2, "SELECT name FROM sqlite_master WHERE name = 'lease_jobs_renamed'"))
    assert.are.equal(CURRENT .. "\n", version_row(p2))
  end)

  it("of a database of the newest layout without its row is the newest on PostgreSQL too: no step runs twice", function()
    local db, p = H.fresh("schema-row-lost")
    assert.is_true(db:enqueue("j"))
    db:close()
    -- lease_queue's column key (step UNIQUE) marks the layout: the index of
    -- lease_deps, which another client dropped, is not made again
    local index = H.backend == "pg" and "SELECT count(to_regclass('lease_deps_parent'))"
      or "SELECT count(*) FROM sqlite_master WHERE name = 'lease_deps_parent'"
    H.sql(p, "DROP INDEX lease_deps_parent")
    H.sql(p, "DELETE FROM lease_meta WHERE key = 'schema_version'")
    db = lease.open(p)
    assert.are.equal(CURRENT, db:settings().schema_version)
    assert.are.same({ "j", 1 }, { H.two(db:claim_next("w", 1, 10)) })
    db:close()
    assert.are.equal(CURRENT .. "\n", version_row(p))
    assert.are.equal("0", (H.sql(p, index):match("%d+")))
  end)

  it("of a database of the ATTEMPTS layout without its row gets only the steps after it", function()
    local db, p = H.fresh("schema-row-lost-attempts")
    assert.is_true(db:enqueue("j"))
    db:close()
    -- undo the steps after ATTEMPTS (UNIQUE, DEPS, TIMEOUT, EVENTS), then
    -- lose the row: PostgreSQL knows the layout by base_fence, SQLite by
    -- due_at (its step 7 changes nothing); no step may run twice
    local deps = undo_deps()
    H.sql(p, "DROP INDEX lease_queue_key; ALTER TABLE lease_queue DROP COLUMN key; " .. deps
      .. " DROP TABLE lease_deps; ALTER TABLE lease_queue DROP COLUMN timeout;"
      .. " DROP TABLE lease_events; DELETE FROM lease_meta WHERE key = 'schema_version'")
    db = lease.open(p)
    assert.are.equal(CURRENT, db:settings().schema_version)
    assert.are.same({ "j", 1 }, { H.two(db:claim_next("w", 1, 10)) })
    db:close()
    assert.are.equal(CURRENT .. "\n", version_row(p))
    local fresh, fp = H.fresh("schema-row-lost-attempts-fresh")
    fresh:close()
    assert.are.equal(layout(fp), layout(p))
  end)

  it("of a database of the TIMEOUT layout without its row gets only the steps after it", function()
    local db, p = H.fresh("schema-row-lost-timeout")
    assert.is_true(db:enqueue("j", { timeout = 5 }))
    db:close()
    -- undo the steps after TIMEOUT (UNIQUE, DEPS), then lose the row: the
    -- timeout column tells the layout; no step may run twice
    local deps = undo_deps()
    H.sql(p, "DROP INDEX lease_queue_key; ALTER TABLE lease_queue DROP COLUMN key; " .. deps
      .. " DROP TABLE lease_deps; DELETE FROM lease_meta WHERE key = 'schema_version'")
    db = lease.open(p)
    assert.are.equal(CURRENT, db:settings().schema_version)
    assert.are.equal(5, db:state("j").timeout)
    db:close()
    assert.are.equal(CURRENT .. "\n", version_row(p))
    local fresh, fp = H.fresh("schema-row-lost-timeout-fresh")
    fresh:close()
    assert.are.equal(layout(fp), layout(p))
  end)

  -- PostgreSQL's layout before the step ATTEMPTS counted a job's attempts
  -- in lease_queue.attempt, a trigger adding one at each claim; since, as
  -- SQLite does, the fence's growth since lease_queue.base_fence.
  if H.backend == "pg" then
    -- A database where p is listed by c, taken back to version v by the SQL
    -- undo: opening it brings it to the current version, p flagged and q
    -- (listed by nothing) not, and p's end releases c; its layout is a fresh
    -- database's.
    local function flagged_at_upgrade(v, undo)
      local db, p = H.fresh("schema-v" .. v .. "-waited-on")
      db:enqueue_many({ "p", "q" })
      assert.is_true(db:enqueue("c", { after = { "p" } }))
      db:close()
      H.sql(p, undo .. " UPDATE lease_meta SET value = '" .. v .. "' WHERE key = 'schema_version'")
      db = lease.open(p)
      assert.are.equal(CURRENT, db:settings().schema_version)
      assert.are.equal("t|p\nf|q", (H.sql(p, "SELECT waited_on, convert_from(id, 'UTF8') FROM lease_queue"
        .. " WHERE id IN ('p', 'q') ORDER BY id"):gsub("\n$", "")))
      local f = db:claim("p", "w", 1, 10)
      assert.is_true(db:complete("p", "w", f, 2, nil))
      assert.are.equal("available", db:state("c", 3).status)
      db:close()
      local fresh, fp = H.fresh("schema-v" .. v .. "-waited-on-fresh")
      fresh:close()
      assert.are.equal(layout(fp), layout(p))
    end

    -- Before QUIET_COMPLETE, lease_deps_follow fired at every job's end;
    -- since, only at the end of a job flagged waited_on.  The step flags
    -- every job lease_deps names as a parent, waiting children included.
    it("of a PostgreSQL database at version 20 flags the jobs others wait for, and their ends release them", function()
      -- neither column, no job flagged
      flagged_at_upgrade(20, PG_UNDO_QUIET_COMPLETE)
    end)

    -- Before WAITED_ON_ANY_CLIENT, the engine's enqueue flagged a listed
    -- job itself, so an edge that a handle of an earlier build wrote left
    -- its parent unflagged; the step flags every job listed.
    it("of a PostgreSQL database at version 21 flags a job listed without its flag, and its end releases the waiting job", function()
      flagged_at_upgrade(21, "DROP TRIGGER lease_deps_added ON lease_deps; DROP FUNCTION lease_deps_added();"
        .. " DROP TRIGGER lease_queue_renamed ON lease_queue; DROP FUNCTION lease_queue_renamed();"
        .. " UPDATE lease_queue SET waited_on = false;")
    end)

    it("of a PostgreSQL database of the CLOCK layout without its row gets only the steps after it", function()
      local p = H.path("schema-v6-row-lost")
      H.sql(p, fixture("pg_schema_v6.sql") .. "\n"
        .. "INSERT INTO jobs(id) VALUES ('j'); DELETE FROM lease_meta WHERE key = 'schema_version'")
      local db = lease.open(p)
      assert.are.equal(CURRENT, db:settings().schema_version)
      assert.are.same({ "j", 1 }, { H.two(db:claim_next("w", 1, 10)) })
      db:close()
      local fresh, fp = H.fresh("schema-v6-row-lost-fresh")
      fresh:close()
      assert.are.equal(layout(fp), layout(p))
    end)

    it("of a PostgreSQL database at version 6 keeps every job's attempts, mid-retry too", function()
      local p = H.path("schema-v6-attempts")
      H.sql(p, fixture("pg_schema_v6.sql") .. "\n"
        .. "INSERT INTO jobs(id) VALUES ('a'), ('b'), ('c'), ('d');"
        -- a: three attempts failed, the next due at 100 (the trigger counts
        -- one for the fence's growth; the row then set as fail sets it)
        .. " UPDATE jobs SET fence = 3 WHERE id = 'a';"
        .. " UPDATE lease_queue SET attempt = 3, max_attempts = 5, run_at = 100 WHERE id = 'a';"
        -- b: retried after five claims, claimed once since and held
        .. " UPDATE jobs SET fence = 6, owner = 'w', until = 1000 WHERE id = 'b';"
        .. " UPDATE lease_queue SET attempt = 1 WHERE id = 'b';"
        -- c: discarded at its second attempt; d: never claimed
        .. " UPDATE jobs SET fence = 2 WHERE id = 'c';"
        .. " UPDATE lease_queue SET attempt = 2, max_attempts = 2, state = 2, finished_at = 5"
        .. " WHERE id = 'c'")
      local function attempts(db)
        local t = {}
        for _, id in ipairs({ "a", "b", "c", "d" }) do
          local s = db:state(id, 10)
          t[#t + 1] = { id, s.attempt, s.status }
        end
        local c = db:counts(10)
        t[#t + 1] = { c.retryable, c.running, c.discarded, c.available }
        return t
      end
      local want = { { "a", 3, "retryable" }, { "b", 1, "running" }, { "c", 2, "discarded" },
        { "d", 0, "available" }, { 1, 1, 1, 1 } }
      -- a read-only handle reads them where that layout keeps them
      local ro = lease.open(p, { readonly = true })
      assert.are.equal(6, ro:settings().schema_version)
      assert.are.same(want, attempts(ro))
      assert.are.same({ "a", 3 }, { ro:jobs({ status = "retryable", now = 10 })[1].id,
        ro:jobs({ status = "retryable", now = 10 })[1].attempt })
      ro:close()
      -- a writable open runs the step: the same counts, a fresh database's layout
      local db = lease.open(p)
      assert.are.equal(CURRENT, db:settings().schema_version)
      assert.are.same(want, attempts(db))
      assert.are.same({ "a", 3 }, { db:jobs({ status = "retryable", now = 10 })[1].id,
        db:jobs({ status = "retryable", now = 10 })[1].attempt })
      local fresh, fp = H.fresh("schema-v6-attempts-fresh")
      fresh:close()
      assert.are.equal(layout(fp), layout(p))
      -- the count goes on from there: a's claim is its fourth attempt, and
      -- its failure is counted as the fourth
      assert.are.same({ "a", 4 }, { H.two(db:claim_next("w2", 100, 10)) })
      assert.are.equal(4, db:state("a", 100).attempt)
      assert.are.equal("retryable", (db:fail("a", "w2", 4, 101, "four")))
      assert.are.equal(4, db:state("a", 101).attempt)
      assert.are.equal(4, db:state("a").errors[1].attempt)
      -- a retry starts the count again, and another client's claim counts
      assert.is_true(db:retry("c", 102))
      assert.are.same({ 0, "available" }, { db:state("c", 102).attempt, db:state("c", 102).status })
      H.sql(p, "UPDATE jobs SET fence = fence + 1 WHERE id IN ('c', 'd')")
      assert.are.same({ 1, 1 }, { db:state("c", 102).attempt, db:state("d", 102).attempt })
      db:close()
    end)
  end
end)
