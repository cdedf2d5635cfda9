-- The PostgreSQL backend's own cases: what differs from SQLite underneath
-- (bytea columns, row locks, the server's errors and clock) while the
-- contract's outcomes stay the same.  The first block runs on both backends;
-- the rest only on the PostgreSQL run ($LEASE_TEST_PG, see helpers.lua).
local H = require("helpers")
local lease = H.lease

describe("PostgreSQL connection strings", function()
  it("are never taken for an SQLite file: unreachable is cantopen naming PostgreSQL, no file made", function()
    local dir = H.dir()
    local strings = {
      "postgresql:///x?host=" .. dir, "postgres:///x?host=" .. dir, "host=" .. dir .. " dbname=x",
    }
    for _, ci in ipairs(strings) do
      local err = H.error_of(lease.open, ci)
      assert.truthy(err:find("[cantopen]", 1, true), err)
      assert.truthy(err:find("PostgreSQL", 1, true), err)
    end
    assert.is_false(H.exists("host=" .. dir .. " dbname=x"))
    assert.are.equal("", H.capture("ls -A " .. H.sh(dir)))
  end)
end)

if H.backend ~= "pg" then return end

-- Run sql in a psql session in the background, on the spec's schema; the
-- returned function waits for it to end.  `\! touch marker` inside sql lets
-- the spec wait until the session reached that point (wait_marker).
local function psql_background(path, sql)
  local done = H.file("psql-done")
  local psql = os.getenv("LEASE_PSQL")
  if not psql or psql == "" then psql = "psql" end
  os.execute("(" .. H.sh(psql) .. " -X -q -v ON_ERROR_STOP=1 -d " .. H.sh(path) .. " >/dev/null 2>&1 <<'EOF'\n"
    .. sql .. "\nEOF\n touch " .. H.sh(done) .. ") &")
  return function()
    for _ = 1, 3000 do
      if H.exists(done) then return end
      os.execute("sleep 0.01")
    end
    error("the psql session did not end")
  end
end

local function wait_marker(marker)
  for _ = 1, 3000 do
    if H.exists(marker) then return end
    os.execute("sleep 0.01")
  end
  error("the psql session did not reach " .. marker)
end

-- Run fn(path) in a thread while another session holds the row lock of
-- job b for 2 s.  Once fn's statement waits for b, look which of jobs a
-- and c it holds; returns { a held, c held } and the thread, after the
-- other session let go.
local function held_while_waiting_for_b(p, fn)
  local marker = H.file("locked")
  local wait = psql_background(p, "BEGIN;\nSELECT 1 FROM jobs WHERE id = 'b' FOR UPDATE;\n\\! touch "
    .. marker .. "\nSELECT pg_sleep(2);\nCOMMIT;")
  wait_marker(marker)
  local t = require("lease.thread").spawn(fn, p)
  for _ = 1, 500 do
    if H.psql(p, "SELECT count(*) FROM pg_locks WHERE NOT granted"):match("%d+") ~= "0" then break end
    lease.sleep(0.01)
  end
  local function held(id)
    return not (pcall(H.psql, p, "SELECT 1 FROM jobs WHERE id = '" .. id .. "' FOR UPDATE NOWAIT"))
  end
  local a, c = held("a"), held("c")
  wait()
  return { a, c }, t
end

-- The sequential scans of jobs that fn makes inside tx's transaction
-- (pg_stat_xact_user_tables: this transaction's counts so far).
local function xact_scans(tx, fn)
  local function count()
    return tonumber(tx:rows("SELECT seq_scan AS n FROM pg_stat_xact_user_tables"
      .. " WHERE relid = 'jobs'::regclass")().n)
  end
  local before = count()
  fn()
  return count() - before
end

-- Another client locks job `second` FOR UPDATE; once a session of the
-- engine waits for a lock, it locks `first` FOR UPDATE too, which that
-- session holds: a deadlock.  Its own deadlock_timeout is long, so the
-- server ends the engine's transaction, the one that waited first; then
-- it commits.  The returned function waits for it to end.
local function deadlock_with(path, first, second)
  local marker = H.file("locked")
  local wait = psql_background(path, "BEGIN;\nSET LOCAL deadlock_timeout = '60s';\n"
    .. "SELECT 1 FROM jobs WHERE id = '" .. second .. "' FOR UPDATE;\n\\! touch " .. marker .. "\n"
    .. "DO $$ BEGIN FOR i IN 1..3000 LOOP EXIT WHEN EXISTS (SELECT 1 FROM pg_locks"
    .. " WHERE NOT granted AND pid <> pg_backend_pid()); PERFORM pg_sleep(0.01); END LOOP; END $$;\n"
    .. "SELECT 1 FROM jobs WHERE id = '" .. first .. "' FOR UPDATE;\nCOMMIT;")
  wait_marker(marker)
  return wait
end

describe("PostgreSQL backend", function()
  local db, p
  before_each(function() db, p = H.fresh() end)
  after_each(function() db:close() end)

  -- Each way an enqueue reaches the server: one job (ENQUEUE), many ids
  -- (ENQUEUE_MANY), many with data (ENQUEUE_DATA); each enqueues id (a
  -- batch also id .. "-new") and returns how many it inserted.
  local function enqueue_ways()
    return {
      function(id) return db:enqueue(id) and 1 or 0 end,
      function(id) return db:enqueue_many({ id, id .. "-new" }) end,
      function(id) return db:enqueue_many({ { id = id, queue = "q" }, { id = id .. "-new", queue = "q" } }) end,
    }
  end

  it("creates the jobs table with bytea ids, owners and results", function()
    local cols = H.psql(p, "SELECT column_name, data_type, is_nullable FROM information_schema.columns"
      .. " WHERE table_schema = current_schema() AND table_name = 'jobs' ORDER BY ordinal_position")
    assert.are.equal("id|bytea|NO\nowner|bytea|YES\nuntil|double precision|NO\nfence|bigint|NO\n"
      .. "result|bytea|YES\ndone|integer|NO\nseq|bigint|NO\nlease_completions|bigint|NO\n", cols)
    assert.is_true(db:init_db())
    assert.are.equal("1\n", H.psql(p, "SELECT count(*) FROM pg_tables"
      .. " WHERE schemaname = current_schema() AND tablename = 'jobs'"))
  end)

  it("refuses a jobs table with other column types, naming the column", function()
    local q = H.path()
    H.psql(q, "CREATE TABLE jobs(id text PRIMARY KEY, owner text, until float8 NOT NULL DEFAULT 0,"
      .. " fence int8 NOT NULL DEFAULT 0, result text, done int NOT NULL DEFAULT 0,"
      .. " seq int8 GENERATED ALWAYS AS IDENTITY)")
    local err = H.error_of(lease.open, q)
    assert.truthy(err:find("jobs.id is text, not bytea [schema]", 1, true), err)
  end)

  it("a read-only handle on a schema without the table is a schema error, and creates none", function()
    local q = H.path()
    local err = H.error_of(lease.open, q, { readonly = true })
    assert.truthy(err:find("[schema]", 1, true), err)
    assert.are.equal("0\n", H.psql(q, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"))
  end)

  it("create = false on a schema without the table is cantopen, and creates none", function()
    local q = H.path()
    local err = H.error_of(lease.open, q, { create = false })
    assert.truthy(err:find("no jobs table (create = false) [cantopen]", 1, true), err)
    assert.are.equal("0\n", H.psql(q, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"))
    assert.is_true(lease.open(p, { create = false }):init_db())
  end)

  it("keeps zero bytes in ids, owners and results, and tells a\\0b from a\\0c", function()
    assert.is_true(db:enqueue("a\0b"))
    assert.is_true(db:enqueue("a\0c"))
    local f = db:claim("a\0b", "o\0x", 0, 10)
    assert.are.equal(1, f)
    assert.are.same({ false, "not_owner" }, { db:complete("a\0b", "o\0y", f, 1, "r") })
    assert.is_true(db:complete("a\0b", "o\0x", f, 1, "r\0s"))
    local s = db:state("a\0b")
    assert.are.same({ "a\0b", "o\0x", "r\0s", true }, { s.id, s.owner, s.result, s.done })
    assert.are.equal(0, db:state("a\0c").fence)
  end)

  it("refuses an id over a B-tree entry's size as full, naming the server, with nothing stored", function()
    -- bytes that do not compress: the entry keeps its size
    local t, x = {}, 7
    for i = 1, 3000 do
      x = (x * 1103515245 + 12345) % 2147483648
      t[i] = string.char(x % 251)
    end
    local long = table.concat(t)
    assert.is_true(db:enqueue(long:sub(1, 2000)))
    local before = H.qsnapshot(p)
    for _, way in ipairs(enqueue_ways()) do
      local err = H.error_of(way, long)
      assert.truthy(err:find("[full] (file \"", 1, true), err)
      assert.truthy(err:find("SQLSTATE 54000", 1, true), err)
    end
    assert.are.same(before, H.qsnapshot(p))
  end)

  it("a fence at its maximum: claim raises range, claim_next skips it, state and counts say blocked", function()
    db:enqueue("maxed")
    H.psql(p, "UPDATE jobs SET fence = 9223372036854775807 WHERE id = 'maxed'")
    local before = H.snapshot(p)
    local err = H.error_of(db.claim, db, "maxed", "A", 0, 10)
    assert.truthy(err:find("its fence is at its maximum", 1, true), err)
    assert.truthy(err:find("[range]", 1, true), err)
    assert.are.same({ nil, "empty" }, { db:claim_next("A", 0, 10) })
    assert.are.same(before, H.snapshot(p))
    assert.truthy(db:state("maxed").blocked)
    local c = db:counts(0)
    assert.are.same({ 1, 0, 0 }, { c.blocked, c.ready, c.held })
    assert.are.same({ "maxed" }, H.ids(db:jobs("blocked", 0)))
  end)

  it("reports the reason from the row as the lock holder left it, not from an older snapshot", function()
    db:enqueue("a")
    local marker = H.file("locked")
    -- another client claims the job and holds its row lock for a while
    local wait = psql_background(p, "BEGIN;\nUPDATE jobs SET owner = 'B', until = 1000, fence = fence + 1"
      .. " WHERE id = 'a';\n\\! touch " .. marker .. "\nSELECT pg_sleep(1);\nCOMMIT;")
    wait_marker(marker)
    -- this claim waits for the lock, then finds B's lease: held, with B's fence
    assert.are.same({ nil, "held" }, { db:claim("a", "A", 10, 5) })
    wait()
    local s = db:state("a")
    assert.are.same({ "B", 1, 1000 }, { s.owner, s.fence, s["until"] })
  end)

  it("reads the queue's state as the lock holder left it: a cancel committed during the wait refuses", function()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 100)
    local marker = H.file("locked")
    -- an operator's client cancels the job as cancel does: the job's row
    -- locked first, then its queue row; it commits a moment later
    local wait = psql_background(p, "BEGIN;\nSELECT 1 FROM jobs WHERE id = 'a' FOR UPDATE;\n"
      .. "UPDATE lease_queue SET state = 3, finished_at = 5 WHERE id = 'a';\n\\! touch " .. marker
      .. "\nSELECT pg_sleep(1);\nCOMMIT;")
    wait_marker(marker)
    -- this complete waits for the lock, then finds the job cancelled
    assert.are.same({ false, "cancelled" }, { db:complete("a", "w", f, 6, "r") })
    wait()
    local s = db:state("a", 6)
    assert.are.same({ false, "cancelled", 5 }, { s.done, s.status, s.finished_at })
  end)

  -- Job id as another client's write during a completion's wait left it:
  -- cancelled at 5, with no result stored.
  local function still_cancelled(id)
    local s = db:state(id, 6)
    assert.are.same({ false, "cancelled", 5 }, { s.done, s.status, s.finished_at })
    assert.is_nil(s.result)
  end

  it("complete waits for a queue row another client holds without the job's lock: a cancel it commits refuses", function()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 100)
    local marker = H.file("locked")
    local wait = psql_background(p, "BEGIN;\nUPDATE lease_queue SET state = 3, finished_at = 5 WHERE id = 'a';\n"
      .. "\\! touch " .. marker .. "\nSELECT pg_sleep(1);\nCOMMIT;")
    wait_marker(marker)
    assert.are.same({ false, "cancelled" }, { db:complete("a", "w", f, 6, "r") })
    wait()
    still_cancelled("a")
  end)

  it("complete_many reads the queue's states as the lock holders left them: a cancel committed during the wait refuses", function()
    db:enqueue_many({ "a", "b" })
    local jobs = db:claim_next("w", 0, 100, 2)
    local marker = H.file("locked")
    local wait = psql_background(p, "BEGIN;\nSELECT 1 FROM jobs WHERE id = 'b' FOR UPDATE;\n"
      .. "UPDATE lease_queue SET state = 3, finished_at = 5 WHERE id = 'b';\n\\! touch " .. marker
      .. "\nSELECT pg_sleep(1);\nCOMMIT;")
    wait_marker(marker)
    -- a is stored; b's lock is waited for, then b is found cancelled (at
    -- 0.5 the clock mark the claim left needs no move, so the statement
    -- runs once, its wait inside it)
    local all, reasons = db:complete_many("w", 0.5, jobs)
    assert.are.same({ false, { [2] = "cancelled" } }, { all, reasons })
    wait()
    assert.are.same({ true, "completed" }, { db:state("a", 6).done, db:state("a", 6).status })
    local s = db:state("b", 6)
    assert.are.same({ false, "cancelled", 5 }, { s.done, s.status, s.finished_at })
  end)

  it("complete and complete_many leave to the trigger a queue row another client adds during their wait", function()
    db:enqueue_many({ "a", "b" })
    local jobs = db:claim_next("w", 0, 100, 2)
    local fa = jobs[1].fence
    -- the queue rows gone; another client puts each back under the job's
    -- row lock while the engine's write waits for it, so the row is not in
    -- the snapshot of the write's statement: lease_jobs_changed, which
    -- reads its own, completes it
    H.psql(p, "DELETE FROM lease_queue WHERE id IN ('a', 'b')")
    local function put_back(id)
      local marker = H.file("locked")
      local wait = psql_background(p, "BEGIN;\nSELECT 1 FROM jobs WHERE id = '" .. id .. "' FOR UPDATE;\n"
        .. "INSERT INTO lease_queue(id, seq, base_fence) SELECT id, seq, 0 FROM jobs WHERE id = '" .. id
        .. "';\n\\! touch " .. marker .. "\nSELECT pg_sleep(1);\nCOMMIT;")
      wait_marker(marker)
      return wait
    end
    local wait = put_back("a")
    assert.is_true(db:complete("a", "w", fa, 1, "r"))
    wait()
    wait = put_back("b")
    assert.are.equal(true, db:complete_many("w", 1, { jobs[2] }))
    wait()
    -- completed at the lease's end, as the trigger completes a row
    assert.are.equal("a|1|100\nb|1|100", (H.psql(p, "SELECT convert_from(id, 'UTF8'), state, finished_at"
      .. " FROM lease_queue WHERE id IN ('a', 'b') ORDER BY id"):gsub("\n$", "")))
    assert.are.same({ true, true }, { db:state("a", 2).done, db:state("b", 2).done })
  end)

  it("enqueue_many whose queue row another client's rule skips raises mismatch and stores nothing", function()
    -- a rule, like a trigger, can skip the queue row the trigger
    -- lease_jobs_added inserts for a batch of ids
    H.psql(p, "CREATE RULE side AS ON INSERT TO lease_queue WHERE new.id = 'b'::bytea DO INSTEAD NOTHING")
    local before = H.qsnapshot(p)
    local err = H.error_of(db.enqueue_many, db, { "a", "b", "c" })
    assert.truthy(err:find("enqueue's queue row of b changed no row", 1, true), err)
    assert.truthy(err:find("[mismatch]", 1, true), err)
    assert.are.same(before, H.qsnapshot(p))
    assert.are.equal(2, db:enqueue_many({ "a", "c" }))
    H.psql(p, "DROP RULE side ON lease_queue")
  end)

  -- Another client deletes the job's queue row (gone once it commits: no
  -- skipped write), or, holding the job's row, deletes it and adds it
  -- again (the new row is not in the write's snapshot: the trigger
  -- lease_jobs_changed completes it), while the engine's write waits.
  for _, case in ipairs({
    { "deletes", "DELETE FROM lease_queue WHERE id = 'ID';\n", "0" },
    { "replaces", "SELECT 1 FROM jobs WHERE id = 'ID' FOR UPDATE;\nDELETE FROM lease_queue WHERE id = 'ID';\n"
        .. "INSERT INTO lease_queue(id, seq, base_fence) SELECT id, seq, 0 FROM jobs WHERE id = 'ID';\n", "1" },
  }) do
    it("complete and complete_many complete a job whose queue row another client " .. case[1]
       .. " during their wait", function()
      db:enqueue_many({ "a", "b" })
      local jobs = db:claim_next("w", 0, 100, 2)
      local function change(id)
        local marker = H.file("locked")
        local wait = psql_background(p, "BEGIN;\n" .. case[2]:gsub("ID", id)
          .. "\\! touch " .. marker .. "\nSELECT pg_sleep(1);\nCOMMIT;")
        wait_marker(marker)
        return wait
      end
      local wait = change("a")
      assert.is_true(db:complete("a", "w", jobs[1].fence, 1, "r"))
      wait()
      wait = change("b")
      assert.are.equal(true, db:complete_many("w", 1, { jobs[2] }))
      wait()
      for _, id in ipairs({ "a", "b" }) do
        assert.is_true(db:state(id, 2).done)
        assert.are.equal(case[3], (H.psql(p, "SELECT count(*) FROM lease_queue WHERE id = '" .. id .. "'")
          :gsub("\n$", "")))
        if case[3] == "1" then assert.are.equal("completed", db:state(id, 2).status) end
      end
    end)
  end

  it("wakes for a queue name another program stored past the engine's limit without failing its writes", function()
    db:enqueue("r", { queue = "q" })
    local f = assert(db:claim("r", "w", 1, 100))
    local long = "convert_to(repeat('q', 5000), 'UTF8')"
    -- the hex of the name would pass PostgreSQL's 8000-byte payload limit:
    -- a shortened lease, then a reopen, wake any queue instead
    H.psql(p, "UPDATE lease_queue SET queue = " .. long .. " WHERE id = 'r'")
    H.psql(p, "UPDATE jobs SET until = 50 WHERE id = 'r'")
    assert.is_true(db:complete("r", "w", f, 2, "x"))
    H.psql(p, "UPDATE jobs SET done = 0 WHERE id = 'r'")
    assert.are.equal("0|50|5000|0", (H.psql(p, "SELECT j.done, j.until, octet_length(q.queue), q.state"
      .. " FROM jobs j JOIN lease_queue q ON q.id = j.id WHERE j.id = 'r'"):gsub("\n$", "")))
  end)

  it("completes without calling a trigger unless a job waits for the one completed", function()
    -- the engine's own session counts its function calls
    local tracked = p:gsub("options='", "options='-ctrack_functions=pl ")
    local t = lease.open(tracked)
    t:enqueue_many({ "a", "b", "d", "e", "flush" })
    assert.is_true(t:enqueue("c", { after = { "b" } }))
    local fa = t:claim("a", "w", 1, 100)
    assert.is_true(t:complete("a", "w", fa, 2, "r"))
    local fb = t:claim("b", "w", 2, 100)
    assert.are.equal(true, t:complete_many("w", 3, { { id = "b", fence = fb } }))
    assert.are.equal("available", t:state("c", 4).status)
    -- the workers' loop moves no lease end earlier; a renew that extends
    -- neither: lease_jobs_sooner only for the renew that shortens
    local id, fd = t:claim_next("w", 3, 100)
    assert.are.equal("d", id)
    local stored, _, next_id, fe = t:complete_claim_next("d", "w", fd, 3, "r", 100)
    assert.are.same({ true, "e" }, { stored, next_id })
    assert.is_true(t:renew("e", "w", fe, 3, 200))
    assert.is_true(t:renew("e", "w", fe, 3, 1))
    -- the counts flushed by the session that made the calls
    local ff = t:claim("flush", "F", 4, 100)
    assert.is_true((t:with_lease("flush", "F", ff, 4, function(tx)
      tx:rows("SELECT pg_stat_force_next_flush()")()
    end)))
    t:close()
    local schema = p:match("search_path=([%w_]+)")
    -- lease_deps_follow once, for b, which c waits for; lease_jobs_changed
    -- never: each completion wrote its queue row itself
    -- never, lease_queue_reopened once, for c, which b's end opened
    assert.are.equal("lease_deps_follow|1\nlease_jobs_sooner|1\nlease_queue_reopened|1", (H.psql(p,
      "SELECT funcname, calls FROM pg_stat_user_functions WHERE schemaname = '" .. schema .. "'"
      .. " AND funcname IN ('lease_jobs_changed', 'lease_deps_follow', 'lease_jobs_sooner',"
      .. " 'lease_queue_reopened') ORDER BY funcname"):gsub("\n$", "")))
  end)

  it("a parent another client deletes while the other parent completes: the child is released", function()
    db:enqueue_many({ "a", "b" })
    db:enqueue("c", { after = { "a", "b" } })
    local fb = db:claim("b", "w", 0, 100)
    local marker = H.file("locked")
    -- another client deletes a and holds its transaction open a moment:
    -- the complete of b waits for it at c's row, then finds a gone
    local wait = psql_background(p, "BEGIN;\nDELETE FROM jobs WHERE id = 'a';\n\\! touch " .. marker
      .. "\nSELECT pg_sleep(1);\nCOMMIT;")
    wait_marker(marker)
    assert.is_true(db:complete("b", "w", fb, 0.5, "r"))
    wait()
    assert.are.equal("available", db:state("c", 1).status)
    assert.are.equal(1, db:claim("c", "w", 1, 10))
  end)

  -- The queue row of id gone (a client writing jobs alone), then another
  -- client adds one, cancelled, holding the job's row lock a moment; the
  -- wait for it is returned.
  local function cancelled_row_added(id)
    H.psql(p, "DELETE FROM lease_queue WHERE id = '" .. id .. "'")
    local marker = H.file("locked")
    local wait = psql_background(p, "BEGIN;\nSELECT 1 FROM jobs WHERE id = '" .. id .. "' FOR UPDATE;\n"
      .. "INSERT INTO lease_queue(id, seq, state, finished_at) SELECT id, seq, 3, 5 FROM jobs"
      .. " WHERE id = '" .. id .. "';\n\\! touch " .. marker .. "\nSELECT pg_sleep(1);\nCOMMIT;")
    wait_marker(marker)
    return wait
  end

  it("complete_many reads a queue row another client adds during the wait: a cancelled one refuses", function()
    db:enqueue_many({ "a", "b" })
    local jobs = db:claim_next("w", 0, 100, 2)
    local wait = cancelled_row_added("b")
    -- at 0.5 the clock mark needs no move: the statement runs once
    local all, reasons = db:complete_many("w", 0.5, jobs)
    wait()
    assert.are.same({ false, { [2] = "cancelled" } }, { all, reasons })
    still_cancelled("b")
    assert.are.equal("completed", db:state("a", 6).status)
  end)

  it("complete reads a queue row another client adds during the wait: a cancelled one refuses", function()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 100)
    local wait = cancelled_row_added("a")
    assert.are.same({ false, "cancelled" }, { db:complete("a", "w", f, 0.5, "r") })
    wait()
    still_cancelled("a")
  end)

  it("complete_many reads each job's row as the lock holder left it: a takeover committed during the wait refuses", function()
    db:enqueue_many({ "a", "b" })
    local jobs = db:claim_next("w", 0, 100, 2)
    local marker = H.file("locked")
    -- another client takes b over (a new owner and fence) and holds its
    -- row lock a moment before it commits
    local wait = psql_background(p, "BEGIN;\nUPDATE jobs SET owner = 'B', until = 1000, fence = fence + 1"
      .. " WHERE id = 'b';\n\\! touch " .. marker .. "\nSELECT pg_sleep(1);\nCOMMIT;")
    wait_marker(marker)
    -- a is stored; b's lock is waited for, then b is found B's
    local all, reasons = db:complete_many("w", 0.5, {
      { id = jobs[1].id, fence = jobs[1].fence, result = "ra" },
      { id = jobs[2].id, fence = jobs[2].fence, result = "rb" } })
    wait()
    assert.are.same({ false, { [2] = "not_owner" } }, { all, reasons })
    local a, b = db:state("a", 6), db:state("b", 6)
    assert.are.same({ true, "completed", "ra" }, { a.done, a.status, a.result })
    assert.are.same({ false, "running", "B", 2, 1000 }, { b.done, b.status, b.owner, b.fence, b["until"] })
    assert.is_nil(b.result)
  end)

  it("prune locks the jobs it deletes in id order, as complete_many does", function()
    -- a, b, c ended in the opposite order (c first), among many open jobs:
    -- a plan without an order of its own reads them by their end
    db:enqueue_many({ "a", "b", "c" })
    for at, id in ipairs({ "c", "b", "a" }) do
      local f = db:claim(id, "w", 0, 100)
      assert.is_true(db:complete(id, "w", f, at, "r"))
    end
    local open = {}
    for i = 1, 3000 do open[i] = ("open-%04d"):format(i) end
    db:enqueue_many(open)
    H.psql(p, "ANALYZE jobs, lease_queue")
    -- prune waits for b, holding a, not c
    local held, t = held_while_waiting_for_b(p, function(path)
      local d = require("lease").open(path)
      local n = d:prune(10)
      d:close()
      return n
    end)
    assert.are.same({ true, false }, held)
    assert.are.same({ true, 3 }, { t:join() })
    assert.are.equal(3000, db:counts(20).total)
  end)

  it("complete_many locks its jobs in id order, whatever order they are given in", function()
    db:enqueue_many({ "a", "b", "c" })
    for _, id in ipairs({ "a", "b", "c" }) do assert.are.equal(1, db:claim(id, "w", 0, 100)) end
    -- complete_many waits for b, holding a, not c
    local held, t = held_while_waiting_for_b(p, function(path)
      local d = require("lease").open(path)
      local all = d:complete_many("w", 1, { { id = "c", fence = 1, result = "rc" },
        { id = "b", fence = 1, result = "rb" }, { id = "a", fence = 1, result = "ra" } })
      d:close()
      return all
    end)
    assert.are.same({ true, false }, held)
    assert.is_true(t:join())
    for _, id in ipairs({ "a", "b", "c" }) do assert.are.equal("r" .. id, db:state(id).result) end
  end)

  it("raises busy with the SQLSTATE when a row lock outlasts the busy timeout, and changes nothing", function()
    db:enqueue("a")
    local f = db:claim("a", "A", 0, 100)
    local before = H.snapshot(p)
    local marker = H.file("locked")
    local wait = psql_background(p, "BEGIN;\nSELECT 1 FROM jobs WHERE id = 'a' FOR UPDATE;\n\\! touch "
      .. marker .. "\nSELECT pg_sleep(1.5);\nCOMMIT;")
    wait_marker(marker)
    local short = lease.open(p, { busy_timeout = 0.1 })
    for _, call in ipairs({
      { "claim", "a", "B", 200, 10 }, { "renew", "a", "A", f, 1, 10 },
      { "complete", "a", "A", f, 1, "r" }, { "release", "a", "A", f },
    }) do
      local err = H.error_of(short[call[1]], short, table.unpack(call, 2))
      assert.truthy(err:find("(SQLSTATE 55P03) [busy]", 1, true), err)
    end
    -- claim_next skips a locked row instead of waiting for it
    assert.are.same({ nil, "empty" }, { short:claim_next("C", 500, 10) })
    short:close()
    wait()
    assert.are.same(before, H.snapshot(p))
    -- the default timeout outlasts such a lock
    assert.is_true(db:renew("a", "A", f, 1, 10))
  end)

  it("maps the options onto the session: synchronous_commit, lock_timeout, read-only, no JIT", function()
    local normal = lease.open(p, { synchronous = "normal", busy_timeout = 2.5 })
    assert.are.same({ journal_mode = "wal", synchronous = "normal", busy_timeout = 2.5,
      schema_version = lease.SCHEMA_VERSION }, normal:settings())
    normal:close()
    assert.are.equal("full", db:settings().synchronous)
    -- no JIT compiling of the engine's statements
    db:enqueue("jit")
    local f = db:claim("jit", "A", 0, 10)
    assert.is_true((db:with_lease("jit", "A", f, 1, function(tx)
      assert.are.equal("off", tx:rows("SELECT current_setting('jit') AS jit")().jit)
    end)))
    local ro = lease.open(p, { readonly = true })
    local err = H.error_of(ro.enqueue, ro, "x")
    assert.truthy(err:find("(SQLSTATE 25006) [readonly]", 1, true), err)
    assert.is_nil(db:state("x"))
    ro:close()
  end)

  it("runs the caller's statements in with_lease with sequential scans as the server prices them, its own without", function()
    db:enqueue_many({ "a", "b", "c" })
    db:enqueue("f")
    local ff = db:claim("f", "F", 0, 1e6)
    -- analyzed tiny, the tables cost a scan less than a lookup by key
    H.psql(p, "ANALYZE jobs, lease_queue")
    assert.is_true((db:with_lease("f", "F", ff, 0, function(tx)
      assert.are.equal("on", tx:rows("SELECT current_setting('enable_seqscan') AS s")().s)
      -- a read of the whole (tiny) table scans it
      assert.is_true(xact_scans(tx, function()
        assert.are.equal(4, tonumber(tx:rows("SELECT count(*) AS n FROM jobs WHERE owner IS NULL OR true")().n))
      end) > 0)
      -- the engine's renew after it finds its rows by key, as before it
      assert.are.equal(0, xact_scans(tx, function() assert.is_true(tx:renew(1e6)) end))
      -- a failed statement of the caller's leaves the engine's setting too
      assert.is_false((pcall(tx.rows, tx, "SELECT 1 / 0")))
      assert.are.equal(0, xact_scans(tx, function() assert.is_true(tx:renew(1e6)) end))
    end)))
    assert.are.equal(ff, db:state("f").fence)
  end)

  it("sets its session's settings again after each statement of the caller's in with_lease", function()
    db:enqueue("f")
    local ff = db:claim("f", "F", 0, 1e6)
    H.psql(p, "ANALYZE jobs, lease_queue")
    local SHOW = "SELECT current_setting('search_path') AS p, current_setting('synchronous_commit') AS c,"
      .. " current_setting('default_transaction_isolation') AS i, current_setting('lock_timeout') AS l,"
      .. " current_setting('default_transaction_read_only') AS r, current_setting('jit') AS j,"
      .. " current_setting('client_min_messages') AS m, current_setting('lease.events', true) AS e"
    local function show(tx)
      local r = tx:rows(SHOW)()
      return { r.p, r.c, r.i, r.l, r.r, r.j, r.m, r.e }
    end
    local before
    assert.is_true((db:with_lease("f", "F", ff, 0, function(tx)
      before = show(tx)
      assert.are.same({ "on", "read committed", "off", "off", "warning", "off" },
        { before[2], before[3], before[5], before[6], before[7], before[8] })
      -- the session's, then the transaction's, with set_config()
      tx:rows("SELECT set_config('search_path', 'pg_catalog', false),"
        .. " set_config('synchronous_commit', 'off', false),"
        .. " set_config('default_transaction_isolation', 'serializable', false),"
        .. " set_config('lock_timeout', '0', false), set_config('enable_seqscan', 'on', false),"
        .. " set_config('default_transaction_read_only', 'on', false), set_config('jit', 'on', false),"
        .. " set_config('client_min_messages', 'debug1', false), set_config('lease.events', 'on', false)")()
      assert.are.same(before, show(tx))
      tx:rows("SELECT set_config('search_path', 'pg_catalog', true),"
        .. " set_config('synchronous_commit', 'off', true), set_config('enable_seqscan', 'on', true)")()
      assert.are.same(before, show(tx))
      -- the engine's renew finds jobs by key, in the schema it started in
      assert.are.equal(0, xact_scans(tx, function() assert.is_true(tx:renew(1e6)) end))
    end)))
    -- and after the commit
    db:enqueue("g")
    assert.is_true((db:with_lease("f", "F", ff, 0, function(tx)
      assert.are.same(before, show(tx))
      assert.are.equal(0, xact_scans(tx, function() assert.is_true(tx:renew(1e6)) end))
    end)))
    assert.are.equal("available", db:state("g").status)
  end)

  it("refuses a statement of the caller's that libpq cannot send, and goes on", function()
    db:enqueue("f")
    local ff = db:claim("f", "F", 0, 1e6)
    local n = 70000
    local args = {}
    for i = 1, n do args[i] = i end
    local sql = "SELECT " .. string.rep("?::int + ", n - 1) .. "?::int AS x"
    H.psql(p, "ANALYZE jobs, lease_queue")
    assert.is_true((db:with_lease("f", "F", ff, 0, function(tx)
      -- the transaction goes on: the engine's renew right after scans
      -- nothing (the statement's savepoint and settings are gone), and a
      -- statement of the caller's runs
      assert.are.equal(0, xact_scans(tx, function()
        local ok, err = pcall(tx.rows, tx, sql, table.unpack(args))
        assert.is_false(ok)
        assert.truthy(tostring(err):find("65535", 1, true), err)
        assert.is_true(tx:renew(1e6))
      end))
      assert.are.equal(1, tonumber(tx:rows("SELECT 1 AS one")().one))
    end)))
    -- the handle goes on, and the job's row is not held by a transaction left open
    assert.is_true(db:enqueue("g"))
    assert.are.equal("available", db:state("g").status)
    assert.are.equal("1", H.psql(p, "SELECT count(*) FROM (SELECT id FROM jobs WHERE id = 'f'"
      .. " FOR UPDATE NOWAIT) x"):match("%d+"))
  end)

  it("lists and counts with sequential scans, keeping them priced out for its other statements", function()
    db:enqueue_many({ "a", "b", "c" })
    db:enqueue("f")
    local ff = db:claim("f", "F", 0, 1e6)
    -- a queue with settings: claim_next reads its row by key
    assert.is_true(db:limit("probe", { rate = 1000, per = 1 }))
    -- analyzed tiny, the tables cost a scan less than a lookup by key
    H.psql(p, "ANALYZE jobs, lease_queue, lease_queues")
    local function seq(t)
      return tonumber(H.psql(p, "SELECT seq_scan FROM pg_stat_user_tables WHERE relid = '"
        .. t .. "'::regclass"):match("%d+"))
    end
    -- an engine statement by key (claim_next's read of the queue's
    -- settings), then the session's counts flushed: the sequential scans
    -- of lease_queue and of lease_queues so far
    local function scans()
      assert.are.same({ nil, "empty" }, { db:claim_next("P", 1, 10, { queue = "probe" }) })
      assert.is_true((db:with_lease("f", "F", ff, 0, function(tx)
        tx:rows("SELECT pg_stat_force_next_flush()")()
      end)))
      return seq("lease_queue"), seq("lease_queues")
    end
    local n0, k0 = scans()
    assert.are.equal(4, db:counts(1).total)
    local n1, k1 = scans()
    assert.is_true(n1 > n0, ("counts: %d sequential scans before, %d after"):format(n0, n1))
    assert.are.equal(k0, k1, "claim_next after the counts scanned lease_queues")
    assert.are.equal(4, #db:jobs("all", 1))
    local n2, k2 = scans()
    assert.is_true(n2 > n1, ("jobs: %d sequential scans before, %d after"):format(n1, n2))
    assert.are.equal(k1, k2, "claim_next after the list scanned lease_queues")
  end)

  -- "true" or "false" (lease_jobs_live on the schema's jobs valid or
  -- not), or "none"
  local function live_index(path)
    return H.psql(path, "SELECT coalesce((SELECT i.indisvalid::text FROM pg_index i"
      .. " JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'jobs'::regclass"
      .. " AND c.relname = 'lease_jobs_live'), 'none')"):match("%a+")
  end

  it("keeps the index of live leases while some queue has a concurrency limit, and remakes one left invalid", function()
    assert.are.equal("none", live_index(p))
    assert.is_true(db:limit("a", { rate = 5, per = 1 }))
    assert.are.equal("none", live_index(p))
    assert.is_true(db:limit("a", { concurrency = 2 }))
    assert.is_true(db:limit("b", { concurrency = 3 }))
    assert.are.equal("true", live_index(p))
    assert.is_true(db:limit("a", {}))
    assert.are.equal("true", live_index(p))
    assert.is_true(db:limit("b", {}))
    assert.are.equal("none", live_index(p))
    -- a build that failed leaves the index invalid: unread by the count,
    -- which still counts right, and made anew by the next limit
    assert.is_true(db:limit("b", { concurrency = 1 }))
    H.psql(p, "UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'lease_jobs_live'::regclass")
    db:enqueue_many({ { id = "b1", queue = "b" }, { id = "b2", queue = "b" } })
    assert.are.equal("b1", db:claim_next("w", 1, 10, { queue = "b" }))
    assert.are.same({ nil, "limited" }, { db:claim_next("w", 1, 10, { queue = "b" }) })
    assert.is_true(db:pause("c"))
    assert.are.equal("false", live_index(p))
    assert.is_true(db:limit("b", { concurrency = 1 }))
    assert.are.equal("true", live_index(p))
    assert.are.same({ nil, "limited" }, { db:claim_next("w", 2, 10, { queue = "b" }) })
    -- b1's lease ended at 11: its slot is free, and b1 comes first again
    assert.are.equal("b1", db:claim_next("w", 11, 10, { queue = "b" }))
  end)

  it("counts live leases through lease_jobs_live alone: no other index of jobs can stand in", function()
    -- on tables tiny when its plan is made, the index of jobs not done
    -- costs the same as lease_jobs_live and reads every job not done
    assert.is_true(db:limit("q", { concurrency = 5 }))
    db:enqueue_many({ { id = "a", queue = "q" }, "h" })
    assert.are.equal("a", db:claim_next("w", 1, 10, { queue = "q" }))
    local f = assert(db:claim("h", "W", 1, 10))
    local sql
    assert.is_true((db:with_lease("h", "W", f, 1, function(tx)
      for row in tx:rows("SELECT statement FROM pg_prepared_statements"
        .. " WHERE statement LIKE 'SELECT CASE WHEN coalesce(%lease_jobs_live%'") do
        sql = row.statement
      end
    end)))
    assert.truthy(sql)
    -- the generic plan of the count's statement without lease_jobs_live,
    -- under the settings `set` ("" or "SET LOCAL ...;")
    local function plan_without_index(set)
      return H.psql(p, "BEGIN; DROP INDEX lease_jobs_live; " .. set
        .. " SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL jit = off;"
        .. " PREPARE live(bytea, float8) AS " .. sql .. ";"
        .. " EXPLAIN EXECUTE live('q', 1); ROLLBACK")
    end
    local plan = plan_without_index("SET LOCAL enable_seqscan = off;")
    assert.falsy(plan:find("lease_jobs_pending", 1, true), plan)
    assert.truthy(plan:find("Seq Scan on jobs", 1, true), plan)
    -- the count without it reads the queue's rows neither open nor
    -- completed by the queue's name, never the ended rows of every queue
    -- (lease_queue_ended, whose predicate theirs implies)
    local without = plan_without_index("")
    assert.truthy(without:find("lease_queue_aside", 1, true), without)
    assert.falsy(without:find("lease_queue_ended", 1, true), without)
    assert.are.equal("true", live_index(p))
  end)

  it("a role that may not index jobs sets a concurrency limit all the same, counted from the queue", function()
    local role = ("lease_user_%d"):format(H.pid())
    local schema = p:match("search_path=([%w_]+)")
    db:enqueue_many({ { id = "a1", queue = "q" }, { id = "a2", queue = "q" } })
    H.psql(p, "DROP ROLE IF EXISTS " .. role .. "; CREATE ROLE " .. role .. " LOGIN;"
      .. " GRANT USAGE ON SCHEMA " .. schema .. " TO " .. role .. ";"
      .. " GRANT ALL ON ALL TABLES IN SCHEMA " .. schema .. " TO " .. role .. ";"
      .. " GRANT ALL ON ALL SEQUENCES IN SCHEMA " .. schema .. " TO " .. role)
    local other
    local ok, err = pcall(function()
      other = assert(lease.open(p .. " user=" .. role))
      assert.is_true(other:limit("q", { concurrency = 1 }))
      assert.are.equal("none", live_index(p))
      assert.are.same({ concurrency = 1 }, (function()
        local q = other:queues(1)[1]
        return { concurrency = q.concurrency }
      end)())
      assert.are.equal("a1", other:claim_next("w", 1, 10, { queue = "q" }))
      assert.are.same({ nil, "limited" }, { other:claim_next("w", 1, 10, { queue = "q" }) })
    end)
    if other then other:close() end
    H.psql(p, "DROP OWNED BY " .. role .. "; DROP ROLE " .. role)
    assert(ok, err)
  end)

  it("many processes setting a concurrency limit at once all store it, and the index ends valid", function()
    db:enqueue_many({ "a", "b", "c" })
    local script = H.file("limit") .. ".lua"
    H.write(script, "package.cpath = " .. string.format("%q", package.cpath) .. "\n"
      .. "local d = require('lease').open(" .. string.format("%q", p) .. ")\n"
      .. "io.write(tostring(d:limit(arg[1], { concurrency = 5 })), ' ')\n")
    for round = 1, 3 do
      local cmds = {}
      for i = 1, 6 do cmds[i] = H.lua() .. " " .. H.sh(script) .. " q" .. (i % 2) .. " &" end
      local out, ok = H.capture(table.concat(cmds, " ") .. " wait")
      assert.is_true(ok, out)
      assert.are.equal(("true "):rep(6), out, "round " .. round)
      assert.are.equal("true", live_index(p), "round " .. round)
      assert.is_true(db:limit("q0", {}))
      assert.is_true(db:limit("q1", {}))
      assert.are.equal("none", live_index(p))
    end
  end)

  it("leaves the index to another session at it, storing the limits all the same", function()
    -- another session holds the advisory lock of the index of this jobs
    local marker = H.file("holding")
    local wait = psql_background(p, "SELECT pg_advisory_lock(hashtextextended('lease_jobs_live ' ||"
      .. " 'jobs'::regclass::oid::text, 0));\n\\! touch " .. marker .. "\nSELECT pg_sleep(2);")
    wait_marker(marker)
    assert.is_true(db:limit("q", { concurrency = 1 }))
    assert.are.equal(1, db:queues(1)[1].concurrency)
    assert.are.equal("none", live_index(p))
    wait()
    assert.is_true(db:limit("q", { concurrency = 1 }))
    assert.are.equal("true", live_index(p))
  end)

  it("a limit cleared while another session builds the index: that session drops it after", function()
    local marker = H.file("locking")
    local wait = psql_background(p, "BEGIN; SELECT 1 FROM jobs FOR UPDATE;\n\\! touch "
      .. marker .. "\nSELECT pg_sleep(3); COMMIT;")
    wait_marker(marker)
    -- another process sets the first limit: its build waits for that
    -- transaction, holding the index's advisory lock
    local script = H.file("limit") .. ".lua"
    H.write(script, "package.cpath = " .. string.format("%q", package.cpath) .. "\n"
      .. "local d = require('lease').open(" .. string.format("%q", p) .. ")\n"
      .. "io.write(tostring(d:limit('q', { concurrency = 5 })))\n")
    local out_file = H.file("limit-out")
    os.execute(H.lua() .. " " .. H.sh(script) .. " >" .. H.sh(out_file) .. " 2>&1 &")
    -- the build has begun (its index is there, not yet valid)
    for _ = 1, 1000 do
      if live_index(p) == "false" then break end
      os.execute("sleep 0.01")
    end
    assert.are.equal("false", live_index(p))
    -- cleared meanwhile: this handle finds the lock taken and leaves the
    -- index to that process
    assert.is_true(db:limit("q", {}))
    assert.are.equal("false", live_index(p))
    wait()
    local out
    for _ = 1, 1000 do
      out = H.read(out_file) or ""
      if out ~= "" then break end
      os.execute("sleep 0.01")
    end
    assert.are.equal("true", out)
    assert.are.same({}, db:queues(1))
    assert.are.equal("none", live_index(p))
  end)

  it("builds and drops the index of its own jobs table, whatever else search_path lists", function()
    -- pub: a schema with its own limit and index; app's handle lists pub
    -- after app in search_path
    assert.is_true(db:limit("q", { concurrency = 1 }))
    assert.are.equal("true", live_index(p))
    local pub = p:match("search_path=([%w_]+)")
    local app_path = H.path()
    local app = app_path:match("search_path=([%w_]+)")
    local both = app_path:gsub("search_path=[%w_]+", "search_path=" .. app .. "," .. pub)
    lease.open(app_path):close()
    local other = lease.open(both)
    assert.is_true(other:limit("q", { concurrency = 1 }))
    assert.are.equal("true", live_index(app_path))
    assert.is_true(other:limit("q", {}))
    assert.are.equal("none", live_index(app_path))
    assert.are.equal("true", live_index(p))
    other:close()
  end)

  it("stores a limit though a transaction in progress outlasts the index's build", function()
    db:enqueue_many({ { id = "a", queue = "q" }, { id = "b", queue = "q" } })
    local quick = lease.open(p, { busy_timeout = 0.2 })
    local marker = H.file("locking")
    local wait = psql_background(p, "BEGIN; SELECT 1 FROM jobs WHERE id = 'a' FOR UPDATE;\n\\! touch "
      .. marker .. "\nSELECT pg_sleep(4); COMMIT;")
    wait_marker(marker)
    local t0 = lease.now()
    assert.is_true(quick:limit("q", { concurrency = 1 }))
    -- well before the lock's end: the build gave up after its busy timeout
    assert.is_true(lease.now() - t0 < 3, "took " .. (lease.now() - t0))
    assert.are.equal(1, quick:queues(1)[1].concurrency)
    -- the build gave up: no index, or one left invalid, never read
    assert.are_not.equal("true", live_index(p))
    assert.are.equal("b", quick:claim_next("w", 1, 10, { queue = "q" }))
    assert.are.same({ nil, "limited" }, { quick:claim_next("w", 1, 10, { queue = "q" }) })
    wait()
    -- the next limit builds it
    assert.is_true(quick:limit("q", { concurrency = 1 }))
    assert.are.equal("true", live_index(p))
    quick:close()
  end)

  it("a concurrency limit set and cleared while batch workers run makes or drops its index without a deadlock", function()
    local n = 3000
    local ids = {}
    for i = 1, n do ids[i] = { id = ("j%05d"):format(i), queue = "q" } end
    db:enqueue_many(ids)
    -- three processes complete each batch and claim the next in one
    -- transaction (the jobs rows locked, then the queue's settings row)
    local script = H.file("worker") .. ".lua"
    H.write(script, "package.cpath = " .. string.format("%q", package.cpath) .. "\n"
      .. "local l = require('lease')\n"
      .. "local d = l.open(" .. string.format("%q", p) .. ")\n"
      .. "local held, done, now = {}, 0, 1\n"
      .. "for _ = 1, 100000 do\n"
      .. "  local items = {}\n"
      .. "  for i, j in ipairs(held) do items[i] = { id = j.id, fence = j.fence, result = arg[1] } end\n"
      .. "  local ok, reasons, got = d:complete_many_claim_next(arg[1], now, items, 1000, { n = 20, queue = 'q' })\n"
      .. "  assert(ok, 'a complete was refused')\n"
      .. "  done = done + #items\n"
      .. "  held = type(got) == 'table' and got or {}\n"
      .. "  if #held == 0 and d:counts(now).done + d:counts(now).held >= " .. n .. " then break end\n"
      .. "end\n"
      .. "io.write(done, ' ')\n")
    local workers = {}
    for w = 1, 3 do workers[w] = H.lua() .. " " .. H.sh(script) .. " w" .. w .. " &" end
    local out_file = H.file("workers-out")
    os.execute("(" .. table.concat(workers, " ") .. " wait) >" .. H.sh(out_file) .. " 2>&1 &")
    -- meanwhile the index comes and goes with q's concurrency limit
    local rounds = 0
    for _ = 1, 200 do
      assert.is_true(db:limit("q", { concurrency = 40 }))
      assert.is_true(db:limit("q", { rate = 1e6, per = 1 }))
      rounds = rounds + 1
      if db:counts(1).done >= n then break end
    end
    -- the three workers end once every job is done or held
    local out
    for _ = 1, 6000 do
      out = H.read(out_file) or ""
      if out:match("^%d+ %d+ %d+ $") or out:find("[^%d ]") then break end
      os.execute("sleep 0.01")
    end
    local a, b, c = out:match("^(%d+) (%d+) (%d+) $")
    assert.truthy(a, out)
    assert.are.equal(n, tonumber(a) + tonumber(b) + tonumber(c), out)
    assert.are.equal(n, db:counts(1).done)
    assert.is_true(rounds > 1)
  end)

  it("server_now is the server's clock in seconds and moves forward", function()
    local a = db:server_now()
    local b = db:server_now()
    assert.is_true(b >= a)
    assert.is_true(math.abs(a - lease.now()) < 60, "same host: the clocks agree")
    assert.is_true(lease.open(p):server_now() > 1.7e9)
  end)

  it("a connection the server ends raises ioerr once, then is reset; no write is reported wrong", function()
    db:enqueue("a")
    local app = ("lease_spec_%d"):format(H.pid())
    local h = lease.open(p .. " application_name=" .. app)
    H.psql(p, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '"
      .. app .. "'")
    local ok, err = pcall(h.claim, h, "a", "A", 0, 10)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("[ioerr]", 1, true), err)
    assert.is_nil(db:state("a").owner)
    assert.are.equal(1, h:claim("a", "A", 0, 10))
    h:close()
  end)

  it("a server that crashes is ioerr at each handle's next call, and the call after its restart runs", function()
    -- a server of its own, stopped in immediate mode (as a crash stops it:
    -- each backend warns its client, then closes), then started again
    local cluster = H.sh((os.getenv("LEASE_SOURCE_DIR") or ".") .. "/scripts/pg-cluster")
    local dir = H.dir() .. "/pg"
    finally(function() os.execute(cluster .. " stop " .. H.sh(dir) .. " >/dev/null 2>&1") end)
    local out, ok = H.capture(cluster .. " start " .. H.sh(dir))
    assert.is_true(ok, out)
    local ci = out:match("([^\n]+)\n?$")
    local a, b = lease.open(ci), lease.open(ci)
    a:enqueue("a")
    assert.are.equal("available", b:state("a").status)
    out, ok = H.capture(cluster .. " crash " .. H.sh(dir))
    assert.is_true(ok, out)
    -- a read and a write, each its handle's first call since the crash
    local err = H.error_of(a.state, a, "a")
    assert.truthy(err:find("[ioerr]", 1, true), err)
    err = H.error_of(b.claim, b, "a", "B", 0, 10)
    assert.truthy(err:find("[ioerr]", 1, true), err)
    out, ok = H.capture(cluster .. " start " .. H.sh(dir))
    assert.is_true(ok, out)
    -- each handle's next call runs on a new session at once
    assert.are.equal(1, b:claim("a", "B", 0, 10))
    local row = a:state("a", 1)
    assert.are.same({ "running", "B", 1 }, { row.status, row.owner, row.fence })
    a:close()
    b:close()
  end)

  it("creates the table once when many processes open a fresh schema at the same moment", function()
    local q = H.path()
    local procs = 8
    local cmd = ""
    for i = 1, procs do
      cmd = cmd .. H.lua() .. " -e " .. H.sh("package.cpath = " .. string.format("%q", package.cpath)
        .. "; local l = require('lease'); local d = l.open(" .. string.format("%q", q)
        .. "); assert(d:enqueue('p" .. i .. "'))") .. " & "
    end
    local out, ok = H.capture(cmd .. "wait")
    assert.is_true(ok, out)
    local c = lease.open(q):counts(0)
    assert.are.equal(procs, c.total)
  end)

  it("complete_many batches over the same jobs in opposite orders do not deadlock", function()
    local n = 1000
    local ids = {}
    for i = 1, n do ids[i] = ("j%04d"):format(i) end
    db:enqueue_many(ids)
    local jobs = db:claim_next("W", 0, 100, n)
    assert.are.equal(n, #jobs)
    -- two processes complete the whole batch at once, one forwards and one
    -- backwards: each job is stored once, the other gets "done", and
    -- neither fails with a deadlock (both lock in id order)
    local script = H.file("batch") .. ".lua"
    H.write(script, "package.cpath = " .. string.format("%q", package.cpath) .. "\n"
      .. "local l = require('lease')\n"
      .. "local d = l.open(" .. string.format("%q", p) .. ")\n"
      .. "local items = {}\n"
      .. "for i = 1, " .. n .. " do local k = arg[1] == 'rev' and " .. (n + 1) .. " - i or i\n"
      .. "  items[i] = { id = ('j%04d'):format(k), fence = 1, result = arg[1] } end\n"
      .. "local all, reasons = d:complete_many('W', 1, items)\n"
      .. "local stored = all and #items or 0\n"
      .. "for _, r in ipairs(reasons or {}) do if r == 'ok' then stored = stored + 1 end end\n"
      .. "io.write(stored, ' ')\n")
    local out, ok = H.capture(H.lua() .. " " .. H.sh(script) .. " fwd & " .. H.lua() .. " "
      .. H.sh(script) .. " rev & wait")
    assert.is_true(ok, out)
    local a, b = out:match("^(%d+) (%d+) $")
    assert.are.equal(n, tonumber(a) + tonumber(b), out)
    assert.are.equal(n, db:counts(1).done)
  end)

  it("complete_many chosen as a deadlock's victim runs again, and stores every job", function()
    db:enqueue_many({ "a", "b" })
    local jobs = db:claim_next("w", 0, 100, 2)
    -- complete_many locks a, then waits for b, which the other client
    -- holds until it has a too
    local wait = deadlock_with(p, "a", "b")
    local all, reasons = db:complete_many("w", 0.5, {
      { id = jobs[1].id, fence = jobs[1].fence, result = "ra" },
      { id = jobs[2].id, fence = jobs[2].fence, result = "rb" } })
    wait()
    assert.are.same({ true }, { all, reasons })
    local a, b = db:state("a", 6), db:state("b", 6)
    assert.are.same({ "completed", "ra", "completed", "rb" }, { a.status, a.result, b.status, b.result })
  end)

  it("an enqueue after other jobs chosen as a deadlock's victim runs again, and waits for them", function()
    db:enqueue_many({ "a", "b" })
    -- the enqueue locks a, then waits for b
    local wait = deadlock_with(p, "a", "b")
    assert.is_true(db:enqueue("c", { after = { "a", "b" } }))
    wait()
    local c = db:state("c", 0)
    assert.are.same({ "waiting", { "a", "b" } }, { c.status, c.after })
    assert.are.same({ "a", "b" }, H.ids(db:claim_next("w", 0, 100, 3)))
  end)

  it("runs a write again only for a deadlock or a serialization failure, at most 8 times, and stores nothing", function()
    -- a trigger of the caller's ends every write to jobs with the given
    -- SQLSTATE, and counts the runs in a sequence (nextval outlives the
    -- rollback)
    -- the handle's deadlock_timeout is short: its pauses before each run
    -- are half to all of it
    db:close()
    db = lease.open((p:gsub("options='", "options='-cdeadlock_timeout=10 ")))
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 100)
    H.psql(p, "CREATE SEQUENCE runs; CREATE TABLE fail_with(state text);"
      .. " CREATE FUNCTION fail_write() RETURNS trigger LANGUAGE plpgsql AS $$ DECLARE s text;"
      .. " BEGIN SELECT state INTO s FROM fail_with; PERFORM nextval('runs');"
      .. " RAISE EXCEPTION 'ended by the spec' USING ERRCODE = s; END $$;"
      .. " CREATE TRIGGER fail_write BEFORE UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION fail_write()")
    local before = H.snapshot(p)
    for _, case in ipairs({ { "40P01", 8 }, { "40001", 8 }, { "55P03", 1 } }) do
      H.psql(p, "DELETE FROM fail_with; INSERT INTO fail_with VALUES ('" .. case[1] .. "');"
        .. " SELECT setval('runs', 1, false)")
      local err = H.error_of(db.complete, db, "a", "w", f, 1, "r")
      assert.truthy(err:find("ended by the spec (SQLSTATE " .. case[1] .. ") [busy]", 1, true), err)
      assert.are.equal(case[2] .. "\n", H.psql(p, "SELECT last_value FROM runs"), case[1])
      assert.are.same(before, H.snapshot(p))
    end
    H.psql(p, "DROP TRIGGER fail_write ON jobs")
    assert.is_true(db:complete("a", "w", f, 1, "r"))
  end)

  it("cancel and retry with events on are one transaction each: an event that fails stores nothing", function()
    db:close()
    db = lease.open(p, { events = true })
    db:enqueue("a")
    db:enqueue("b")
    local f = db:claim("b", "w", 0, 100)
    assert.is_true(db:complete("b", "w", f, 1, "r"))
    -- a trigger of the caller's refuses the next event written
    H.psql(p, "CREATE FUNCTION no_event() RETURNS trigger LANGUAGE plpgsql AS $$"
      .. " BEGIN RAISE EXCEPTION 'no event' USING ERRCODE = 'P0001'; END $$;"
      .. " CREATE TRIGGER no_event BEFORE INSERT ON lease_events FOR EACH ROW EXECUTE FUNCTION no_event()")
    local err = H.error_of(db.cancel, db, "a", 10)
    assert.truthy(err:find("no event", 1, true), err)
    assert.are.equal("available", db:state("a", 10).status)
    err = H.error_of(db.retry, db, "b", 10)
    assert.truthy(err:find("no event", 1, true), err)
    local b = db:state("b", 10)
    assert.are.same({ "completed", "r" }, { b.status, b.result })
    H.psql(p, "DROP TRIGGER no_event ON lease_events")
    assert.are.same({ true }, { db:cancel("a", 10) })
    assert.are.equal("cancelled", db:state("a", 10).status)
  end)

  it("claim_next's rounds are one transaction: a deadlock's victim in the second rolls back the first, and the call runs again", function()
    -- x's lease ran out on its last attempt: the first round discards it
    -- and claims a; the second round, for b, is ended once as a
    -- deadlock's victim, which rolls back the first round with it
    db:enqueue("x", { max_attempts = 1 })
    db:enqueue_many({ "a", "b", "c" })
    assert.are.equal(1, db:claim("x", "old", 0, 1))
    H.psql(p, "CREATE SEQUENCE runs; CREATE FUNCTION once() RETURNS trigger LANGUAGE plpgsql AS $$"
      .. " BEGIN IF new.owner = 'w'::bytea AND nextval('runs') = 2 THEN"
      .. " RAISE EXCEPTION 'ended by the spec' USING ERRCODE = '40P01'; END IF; RETURN new; END $$;"
      .. " CREATE TRIGGER once BEFORE UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION once()")
    local got = db:claim_next("w", 10, 100, 2)
    H.psql(p, "DROP TRIGGER once ON jobs")
    assert.are.same({ "a", "b" }, { got[1].id, got[2].id })
    -- the second run claimed a and b once each (fence 1), x discarded once
    local s = {}
    for _, id in ipairs({ "x", "a", "b", "c" }) do s[id] = db:state(id, 11) end
    assert.are.same({ "discarded", "running", "running", "available" },
      { s.x.status, s.a.status, s.b.status, s.c.status })
    assert.are.same({ 1, 1, 0 }, { s.a.fence, s.b.fence, s.c.fence })
    assert.are.equal(4, tonumber(H.psql(p, "SELECT last_value FROM runs"):match("%d+")))
  end)

  it("an enqueue of a job a prune is deleting finds the job, never inserts it below the floor the prune raises", function()
    for i, enqueue in ipairs(enqueue_ways()) do
      local id = "job" .. i
      assert.is_true(db:enqueue(id))
      local f = db:claim(id, "w", 0, 10)
      assert.is_true(db:complete(id, "w", f, 1, "r"))
      local top = f
      -- another client deletes the job and raises the floor as prune does,
      -- and commits a moment later
      local marker = H.file("pruning")
      local wait = psql_background(p, "BEGIN;\nSELECT 1 FROM jobs WHERE id = '" .. id .. "' FOR UPDATE;\n"
        .. "DELETE FROM jobs WHERE id = '" .. id .. "';\n"
        .. "INSERT INTO lease_meta(key, value) VALUES ('fence_floor', '" .. top .. "')"
        .. " ON CONFLICT (key) DO UPDATE SET value = excluded.value;\n\\! touch " .. marker
        .. "\nSELECT pg_sleep(1);\nCOMMIT;")
      wait_marker(marker)
      -- the job is still there in this enqueue's snapshot: it exists (a
      -- batch adds its other, new id)
      assert.are.same({ id, i > 1 and 1 or 0 }, { id, enqueue(id) })
      wait()
      assert.is_nil(db:state(id))
      assert.are.equal(top .. "\n", H.psql(p, "SELECT value FROM lease_meta WHERE key = 'fence_floor'"))
      -- enqueued again once the prune committed: above every fence before
      assert.are.same({ id, 1 }, { id, enqueue(id) })
      assert.are.same({ id, top + 1, 1 }, { id, db:claim(id, "w", 2, 10), db:state(id, 2).attempt })
    end
  end)

  it("inserts each job at the floor, written once: the trigger that reads the floor again raises none", function()
    db:enqueue("old")
    for _ = 1, 3 do assert.is_true(db:release("old", "w", db:claim("old", "w", 0, 10))) end
    assert.is_true(db:complete("old", "w", db:claim("old", "w", 0, 10), 1, "r"))
    assert.are.equal(1, db:prune(100))
    H.psql(p, "CREATE TABLE jwrites(id bytea);"
      .. " CREATE FUNCTION jwrites_add() RETURNS trigger LANGUAGE plpgsql AS $$"
      .. " BEGIN INSERT INTO jwrites VALUES (new.id); RETURN NULL; END $$;"
      .. " CREATE TRIGGER jwrites_add AFTER UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION jwrites_add()")
    assert.is_true(db:enqueue("one"))
    assert.are.equal(2, db:enqueue_many({ "m1", "m2" }))
    assert.are.equal(2, db:enqueue_many({ { id = "d1", payload = "x" }, { id = "d2", queue = "q" } }))
    for _, id in ipairs({ "one", "m1", "m2", "d1", "d2" }) do
      local st = db:state(id, 2)
      assert.are.same({ id, 4, 0 }, { id, st.fence, st.attempt })
    end
    assert.are.equal("0\n", H.psql(p, "SELECT count(*) FROM jwrites"))
  end)

  it("an enqueue that waited for another client's insert of the id, gone and pruned when it commits, starts at the floor raised", function()
    for i, enqueue in ipairs(enqueue_ways()) do
      local id, top = "again" .. i, 40 + i
      -- another client inserts the id, then (a claim, a complete and a
      -- prune later) deletes it and raises the floor, and commits: the
      -- enqueue, which read the floor before, waits for it at its insert
      local marker = H.file("inserting")
      local wait = psql_background(p, "BEGIN;\nINSERT INTO jobs(id) VALUES ('" .. id .. "');\n\\! touch "
        .. marker .. "\nSELECT pg_sleep(1);\nDELETE FROM jobs WHERE id = '" .. id .. "';\n"
        .. "INSERT INTO lease_meta(key, value) VALUES ('fence_floor', '" .. top .. "')"
        .. " ON CONFLICT (key) DO UPDATE SET value = excluded.value;\nCOMMIT;")
      wait_marker(marker)
      assert.are.same({ id, i > 1 and 2 or 1 }, { id, enqueue(id) })
      wait()
      local ids = i > 1 and { id, id .. "-new" } or { id }
      for _, j in ipairs(ids) do
        local s = db:state(j, 2)
        assert.are.same({ j, top, 0 }, { j, s.fence, s.attempt })
        assert.are.same({ j, top + 1, 1 }, { j, db:claim(j, "w", 2, 10), db:state(j, 2).attempt })
      end
    end
    -- rows another client inserts: one below the floor is raised, one
    -- above it keeps its fence
    H.psql(p, "INSERT INTO jobs(id, fence) VALUES ('raw', 0), ('high', 90)")
    assert.are.same({ 43, 0 }, { db:state("raw", 2).fence, db:state("raw", 2).attempt })
    assert.are.same({ 90, 0 }, { db:state("high", 2).fence, db:state("high", 2).attempt })
  end)
end)

describe("PostgreSQL completions", function()
  local db, p
  before_each(function()
    db, p = H.fresh("once")
    -- every new version of a lease_queue row, with the state it has
    H.psql(p, "CREATE TABLE qwrites(id bytea, state int);"
      .. " CREATE FUNCTION qwrites_add() RETURNS trigger LANGUAGE plpgsql AS $$"
      .. " BEGIN INSERT INTO qwrites VALUES (new.id, new.state); RETURN NULL; END $$;"
      .. " CREATE TRIGGER qwrites_add AFTER UPDATE ON lease_queue FOR EACH ROW EXECUTE FUNCTION qwrites_add()")
  end)
  after_each(function() db:close() end)

  local function writes()
    return H.psql(p, "SELECT convert_from(id, 'UTF8') || ':' || state FROM qwrites ORDER BY 1")
  end

  it("write the job's queue row once: complete, complete_many, complete_claim_next", function()
    db:enqueue_many({ "a", "b", "c", "d", "e" })
    local jobs = db:claim_next("w", 0, 10, 4)
    assert.are.equal(4, #jobs)
    H.psql(p, "TRUNCATE qwrites")
    assert.is_true(db:complete("a", "w", jobs[1].fence, 1, "ra"))
    assert.are.same({ true }, { db:complete_many("w", 1, { jobs[2], jobs[3] }) })
    local ok, why, nid = db:complete_claim_next("d", "w", jobs[4].fence, 1, "rd", 10)
    assert.are.same({ true, nil, "e" }, { ok, why, nid })
    assert.are.equal("a:1\nb:1\nc:1\nd:1\n", writes())
    for _, id in ipairs({ "a", "b", "c", "d" }) do
      local s = db:state(id, 2)
      assert.are.same({ "completed", 1 }, { s.status, s.finished_at })
    end
  end)

  it("still complete the queue row of a job another client marks done, and reopen it when it clears done", function()
    db:enqueue("x")
    H.psql(p, "TRUNCATE qwrites; UPDATE jobs SET done = 1, until = 7 WHERE id = 'x'::bytea")
    assert.are.equal("x:1\n", writes())
    local s = db:state("x", 8)
    assert.are.same({ "completed", 7 }, { s.status, s.finished_at })
    H.psql(p, "TRUNCATE qwrites; UPDATE jobs SET done = 0, until = 0 WHERE id = 'x'::bytea")
    assert.are.equal("x:0\n", writes())
    s = db:state("x", 9)
    assert.are.same({ "available", nil }, { s.status, s.finished_at })
  end)

  it("read a job's queue row after its lock through a VOLATILE PL/pgSQL function, its plan kept", function()
    -- PL/pgSQL keeps its query's plan for the connection (SQL would parse
    -- and plan it at each call); VOLATILE gives the query a fresh snapshot
    assert.are.equal("plpgsql v\n", H.psql(p, "SELECT l.lanname || ' ' || f.provolatile::text"
      .. " FROM pg_proc f JOIN pg_language l ON l.oid = f.prolang WHERE f.oid = 'lease_queue_now(bytea)'::regprocedure"))
    db:enqueue("n")
    local f = db:claim("n", "w", 0, 10)
    assert.are.equal("n 0\n", H.psql(p, "SELECT convert_from(id, 'UTF8') || ' ' || state"
      .. " FROM lease_queue_now('n'::bytea)"))
    assert.is_true(db:complete("n", "w", f, 1, "r"))
    assert.are.equal("n 1\n", H.psql(p, "SELECT convert_from(id, 'UTF8') || ' ' || state"
      .. " FROM lease_queue_now('n'::bytea)"))
    assert.are.equal("", H.psql(p, "SELECT id FROM lease_queue_now('none'::bytea)"))
  end)

  it("refused: a stale complete writes no queue row", function()
    db:enqueue("s")
    local f = db:claim("s", "w", 0, 1)
    assert.is_truthy(f)
    local f2 = db:claim("s", "v", 2, 10)
    assert.is_truthy(f2)
    H.psql(p, "TRUNCATE qwrites")
    assert.are.same({ false, "not_owner" }, { db:complete("s", "w", f, 3, "late") })
    assert.are.equal("", writes())
    assert.are.equal("running", db:state("s", 3).status)
  end)

  -- How many scans of lease_deps the statement `sql` (ending a job) makes,
  -- read in its own transaction.
  local function deps_scans(sql)
    local out = H.psql(p, "BEGIN; " .. sql .. "; SELECT seq_scan + coalesce(idx_scan, 0)"
      .. " FROM pg_stat_xact_user_tables WHERE relid = 'lease_deps'::regclass; COMMIT")
    return tonumber(out:match("(%d+)"))
  end

  it("follow the end of a job no job runs after without a look at lease_deps", function()
    db:enqueue_many({ "lone", "gone", "parent", "was" })
    assert.is_true(db:enqueue("child", { after = { "parent" } }))
    -- no job is enqueued after them: lease_deps_follow does not fire
    assert.are.equal(0, deps_scans("UPDATE jobs SET done = 1, until = 7 WHERE id = 'lone'::bytea"))
    assert.are.equal(0, deps_scans("UPDATE lease_queue SET state = 3 WHERE id = 'gone'::bytea"))
    -- a job the only job enqueued after it no longer waits for (deleted):
    -- the trigger fires, and returns after one look
    assert.is_true(db:enqueue("gone-child", { after = { "was" } }))
    H.psql(p, "DELETE FROM jobs WHERE id = 'gone-child'")
    assert.are.equal(1, deps_scans("UPDATE jobs SET done = 1, until = 7 WHERE id = 'was'::bytea"))
    assert.are.same({ "completed", "cancelled" }, { db:state("lone", 8).status, db:state("gone", 8).status })
    -- a parent's end reads its children and opens them
    assert.is_true(deps_scans("UPDATE jobs SET done = 1, until = 7 WHERE id = 'parent'::bytea") > 1)
    assert.are.equal("available", db:state("child", 8).status)
  end)
end)

-- complete_claim_next sends its COMMIT with its statements when the
-- handle records no events and its clock mark needs no move, behind a
-- check that aborts the transaction (and the call runs the longer way)
-- unless the mark is the one it judged, the queue has no settings and the
-- complete left the job done.
describe("PostgreSQL complete_claim_next in one round trip", function()
  local T = 1.7e9
  local db, p
  before_each(function()
    db, p = H.fresh("ccn")
    db:enqueue_many({ "a", "b", "c", "d", "e" })
  end)
  after_each(function() db:close() end)

  local function mark()
    return tonumber(H.psql(p, "SELECT value FROM lease_meta WHERE key = 'clock_mark'"))
  end

  -- a through b with the mark read and settled: the next call may commit
  -- in one round trip
  local function warm()
    local f = db:claim("a", "w", T, 10)
    local ok, why, nid, nf = db:complete_claim_next("a", "w", f, T + 1, "ra", 5000)
    assert.are.same({ true, nil, "b" }, { ok, why, nid })
    return nf
  end

  -- complete_claim_next(id, "w", fence, at, result, 10) raises an error
  -- holding text, and the database is as it was
  local function fails_unchanged(id, fence, at, result, text)
    local before = H.snapshot(p)
    local err = H.error_of(db.complete_claim_next, db, id, "w", fence, at, result, 10)
    assert.truthy(err:find(text, 1, true), err)
    assert.are.same(before, H.snapshot(p))
  end

  it("refuses a now off from a mark another client moved since it last read it, storing nothing", function()
    local f = warm()
    H.psql(p, "UPDATE lease_meta SET value = '" .. string.format("%.0f", T * 1e6) .. "' WHERE key = 'clock_mark'")
    fails_unchanged("b", f, T + 2, "rb", "off by a factor")
    assert.are.equal("0\n", H.psql(p, "SELECT done FROM jobs WHERE id = 'b'::bytea"))
  end)

  it("refuses such a now with no job left to claim: the check runs without a candidate", function()
    local f = warm()
    for _, id in ipairs({ "c", "d", "e" }) do assert.is_true(db:cancel(id, T + 1)) end
    H.psql(p, "UPDATE lease_meta SET value = '" .. string.format("%.0f", T * 1e6) .. "' WHERE key = 'clock_mark'")
    fails_unchanged("b", f, T + 2, "rb", "off by a factor")
    assert.are.equal("0\n", H.psql(p, "SELECT done FROM jobs WHERE id = 'b'::bytea"))
  end)

  it("moves the mark when now is past it by more than a step", function()
    local f = warm()
    local at = T + 1000
    local ok, why, nid = db:complete_claim_next("b", "w", f, at, "rb", 10)
    assert.are.same({ true, nil, "c" }, { ok, why, nid })
    assert.are.equal(at, mark())
  end)

  it("claims nothing from a queue another client paused since", function()
    local f = warm()
    H.psql(p, "INSERT INTO lease_queues(name, paused) VALUES ('default'::bytea, 1)")
    local ok, why, nid, nwhy = db:complete_claim_next("b", "w", f, T + 2, "rb", 10)
    assert.are.same({ true, nil, nil, "paused" }, { ok, why, nid, nwhy })
    assert.are.same({ "completed", "available" }, { db:state("b", T + 3).status, db:state("c", T + 3).status })
  end)

  it("rolls the claim back when the complete fails", function()
    warm()
    -- b's fence one below its maximum: its claim takes the maximum, which
    -- complete refuses with range
    H.psql(p, "UPDATE jobs SET fence = 9223372036854775806 WHERE id = 'b'::bytea; UPDATE jobs SET owner = NULL, until = 0 WHERE id = 'b'::bytea")
    local f = db:claim("b", "w", T + 2, 10)
    fails_unchanged("b", f, T + 3, "rb", "[range]")
    assert.are.equal("available", db:state("c", T + 3).status)
  end)

  it("discards a job in the complete's transaction: a failure of the claim after it stores neither", function()
    warm()
    -- b's lease lapsed on its last attempt (discarded when next seen); a
    -- trigger refuses c's claim
    H.psql(p, "UPDATE lease_queue SET max_attempts = 1 WHERE id = 'b'::bytea;"
      .. " UPDATE jobs SET owner = 'gone', until = " .. (T + 1) .. ", fence = fence + 1 WHERE id = 'b'::bytea;"
      .. " CREATE FUNCTION no_c() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
      .. " IF new.id = 'c'::bytea AND new.owner IS NOT NULL THEN RAISE EXCEPTION 'no c'; END IF;"
      .. " RETURN new; END $$; CREATE TRIGGER no_c BEFORE UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION no_c()")
    local f = db:claim("d", "w", T + 2, 10)
    fails_unchanged("d", f, T + 3, "rd", "no c")
    assert.are.equal("running", db:state("d", T + 3).status)
    assert.are.equal("0\n", H.psql(p, "SELECT state FROM lease_queue WHERE id = 'b'::bytea"))
  end)
end)

describe("PostgreSQL complete_claim_next with events", function()
  it("records the complete's event in the transaction that stores it", function()
    local db, p = H.fresh("ccnev", { events = true })
    db:enqueue_many({ "a", "b", "c" })
    local T = 1.7e9
    local f = db:claim("a", "w", T, 10)
    local _, _, _, nf = db:complete_claim_next("a", "w", f, T + 1, "ra", 10)
    assert.is_true((db:complete_claim_next("b", "w", nf, T + 2, "rb", 10)))
    -- one transaction wrote the job's row and its complete event
    assert.are.equal("t\n", H.psql(p, "SELECT e.xmin = j.xmin FROM lease_events e JOIN jobs j ON j.id = e.id"
      .. " WHERE j.id = 'b'::bytea AND e.at = " .. (T + 2)))
    db:close()
  end)
end)

describe("PostgreSQL complete_claim_next without a clock mark", function()
  -- complete_claim_next commits in its one round trip when the clock mark
  -- needs no move, its check finding the mark the handle judged now
  -- against.  A database whose writes all ran at a now below the mark's
  -- first step (1) has no mark at all: the check must take that for the
  -- same, or every call rolls its round back and does it all again.
  it("runs complete_claim_next in one transaction, no rollback, on a database that has no clock mark", function()
    local db, p = H.fresh()
    local ids = {}
    for i = 1, 20 do ids[i] = "m" .. i end
    db:enqueue_many(ids)
    db:enqueue("flush", { queue = "aside" })
    local ff = assert(db:claim("flush", "F", 1, 1e6))
    -- the transactions the server rolled back, after the engine's session
    -- flushed its counts
    local function rollbacks()
      assert.is_true((db:with_lease("flush", "F", ff, 1, function(tx)
        tx:rows("SELECT pg_stat_force_next_flush()")()
      end)))
      return tonumber((H.psql(p, "SELECT xact_rollback FROM pg_stat_database"
        .. " WHERE datname = current_database()"):match("%d+")))
    end
    local before = rollbacks()
    local id, f = db:claim_next("w", 1, 100)
    for _ = 1, 19 do
      local ok, why
      ok, why, id, f = db:complete_claim_next(id, "w", f, 1, "r", 100)
      assert.is_true(ok, why)
      assert.is_string(id)
    end
    assert.are.equal(0, rollbacks() - before)
    -- nineteen stored, the twentieth held, and still no mark
    local c = db:counts(1)
    assert.are.equal(19, c.done)
    assert.are.equal(2, c.held)   -- the twentieth and "flush"
    assert.are.equal("", H.psql(p, "SELECT value FROM lease_meta WHERE key = 'clock_mark'"))
    db:close()
  end)
end)

-- Each statement is prepared once per session and may keep, from its sixth
-- run, a generic plan made from the statistics of that moment.  These
-- cases make those plans while the tables are tiny (analyzed so, or never
-- analyzed), grow the tables to thousands of rows, and count what each call
-- then reads of jobs, lease_queue and lease_deps: rows of whole-table scans and index
-- entries, from the statistics views, which the engine's session flushes
-- at the end of a with_lease that asks it to.  A call that finds its rows
-- by their keys reads a few dozen; one plan that scans a table, or an
-- index over every pending job, reads thousands.
describe("PostgreSQL plans as the tables grow", function()
  local T, GROWN = 1.7e9, 4000

  -- The round r of calls, each named, on jobs of their own (ids "r<r>-...").
  local function calls(db, r)
    local P, now = "r" .. r .. "-", T + r
    local function id(s) return P .. s end
    local list = {}
    local function call(name, fn) list[#list + 1] = { name = name, fn = fn } end
    local f, jobs
    call("enqueue", function() assert.is_true(db:enqueue(id("a"))) end)
    call("enqueue_many", function()
      db:enqueue_many({ id("b1"), id("b2"), id("b3"), id("b4"), id("b5"), id("b6") })
    end)
    call("enqueue with a key", function() assert.is_true(db:enqueue(id("k"), { key = "key" .. r })) end)
    call("enqueue after a parent", function() assert.is_true(db:enqueue(id("c"), { after = { id("k") } })) end)
    call("state", function() assert.are.equal("available", db:state(id("a"), now).status) end)
    call("claim", function() f = assert(db:claim(id("a"), "w", now, 100)) end)
    call("renew", function() assert.is_true(db:renew(id("a"), "w", f, now, 100)) end)
    call("release", function() assert.is_true(db:release(id("a"), "w", f)) end)
    call("claim_next", function()
      local got
      got, f = db:claim_next("w", now, 100)
      assert.are.equal(id("a"), got)
    end)
    call("fail", function() assert.are.equal("retryable", db:fail(id("a"), "w", f, now, "boom")) end)
    call("claim_next(n)", function()
      jobs = db:claim_next("w", now, 100, 3)
      assert.are.equal(3, #jobs)
    end)
    call("complete", function() assert.is_true(db:complete(jobs[1].id, "w", jobs[1].fence, now, "r")) end)
    call("complete_claim_next", function()
      local ok, _, got, nf = db:complete_claim_next(jobs[2].id, "w", jobs[2].fence, now, "r", 100)
      assert.is_true(ok)
      jobs[2] = { id = got, fence = nf }
    end)
    call("complete_many", function()
      assert.is_true(db:complete_many("w", now, { { id = jobs[2].id, fence = jobs[2].fence, result = "r" } }))
    end)
    call("complete_many_claim_next", function()
      local ok, _, got = db:complete_many_claim_next("w", now,
        { { id = jobs[3].id, fence = jobs[3].fence, result = "r" } }, 100, 2)
      assert.is_true(ok)
      assert.are.equal(2, #got)
      assert.is_true(db:complete_many("w", now, {
        { id = got[1].id, fence = got[1].fence }, { id = got[2].id, fence = got[2].fence } }))
    end)
    call("enqueue on a queue with a concurrency limit", function()
      assert.is_true(db:enqueue(id("x"), { queue = "limited" }))
    end)
    call("claim_next on a queue with a concurrency limit", function()
      local got = db:claim_next("w", now, 100, { queue = "limited" })
      assert.are.equal(id("x"), got)
    end)
    call("cancel", function() assert.is_true(db:cancel(id("k"), now)) end)
    call("retry", function() assert.is_true(db:retry(id("k"), now)) end)
    return list
  end

  local function grown(analyzed, indexed)
    local db, p = H.fresh()
    -- no autovacuum: its ANALYZE would make the plans anew mid-case
    H.psql(p, "ALTER TABLE jobs SET (autovacuum_enabled = off);"
      .. " ALTER TABLE lease_queue SET (autovacuum_enabled = off);"
      .. " ALTER TABLE lease_deps SET (autovacuum_enabled = off)")
    db:enqueue("flush")
    local ff = assert(db:claim("flush", "F", T, 1e6))
    -- tuples read of jobs, lease_queue and lease_deps, after the session
    -- flushed its counts
    local function reads()
      assert.is_true((db:with_lease("flush", "F", ff, T, function(tx)
        tx:rows("SELECT pg_stat_force_next_flush()")()
      end)))
      local tables = "('jobs'::regclass, 'lease_queue'::regclass, 'lease_deps'::regclass)"
      return tonumber((H.psql(p, "SELECT (SELECT sum(seq_tup_read) FROM pg_stat_user_tables"
        .. " WHERE relid IN " .. tables .. ") + (SELECT sum(idx_tup_read) FROM pg_stat_user_indexes"
        .. " WHERE relid IN " .. tables .. ")"):match("%d+")))
    end
    -- a queue whose claims count its live leases (among its open jobs)
    assert.is_true(db:limit("limited", { concurrency = 1000 }))
    -- without lease_jobs_live (a role that may not make it) the count
    -- reads the queue's open jobs
    if not indexed then H.psql(p, "DROP INDEX lease_jobs_live") end
    if analyzed then H.psql(p, "ANALYZE jobs; ANALYZE lease_queue; ANALYZE lease_deps") end
    -- seven rounds while tiny: the sixth run of each statement makes its
    -- generic plan
    for r = 1, 7 do
      for _, c in ipairs(calls(db, r)) do c.fn() end
    end
    -- grown, each row written once (no index entry left behind to skip):
    -- done jobs, then jobs scheduled later in the same queue, each with a
    -- key, ready ones in another, and a backlog of the limited queue
    H.psql(p, "INSERT INTO jobs(id, done, until) SELECT ('g' || g)::bytea, 1, " .. T
      .. " FROM generate_series(1, " .. GROWN .. ") g")
    -- the done jobs each listed a job since pruned (an edge left, counted done)
    H.psql(p, "INSERT INTO lease_deps(child, parent) SELECT ('g' || g)::bytea, ('gone' || g)::bytea"
      .. " FROM generate_series(1, " .. GROWN .. ") g")
    local later = {}
    for i = 1, math.floor(GROWN / 8) do
      later[#later + 1] = { id = "l" .. i, run_at = T + 1e5, key = "l" .. i }
      later[#later + 1] = { id = "o" .. i, queue = "other" }
    end
    for i = 1, 400 do later[#later + 1] = { id = "w" .. i, queue = "limited", run_at = T + 1e5 } end
    db:enqueue_many(later)
    -- and cancelled jobs of another queue, each row written once (the
    -- queue row before the trigger's, which then finds it there)
    H.psql(p, "WITH j AS (INSERT INTO jobs(id) SELECT ('x' || g)::bytea FROM generate_series(1, "
      .. math.floor(GROWN / 4) .. ") g RETURNING id, seq) INSERT INTO lease_queue(id, seq, queue, state,"
      .. " finished_at) SELECT id, seq, 'other', 3, " .. T .. " FROM j")
    return db, reads
  end

  -- A claim of n jobs writes them by the array of their ids alone: an
  -- UPDATE joined to the candidates ran, under each of them, an index scan
  -- keyed by that whole array too, which sorts the array again for each:
  -- n² comparisons (a claim_next of 1000 jobs took a quarter of a second).
  -- Each of the session's claim statements, as its plan cache plans it
  -- (EXPLAIN EXECUTE: planned, not run), has its UPDATEs of jobs and
  -- lease_queue read their table by the array's keys, with no join.
  it("writes the jobs a claim_next(n) takes by their ids alone, with no join under its UPDATEs", function()
    local db, p = H.fresh()
    local many = {}
    for i = 1, 300 do many[i] = "j" .. i end
    db:enqueue_many(many)
    db:enqueue("flush", { queue = "aside" })
    local ff = assert(db:claim("flush", "F", T, 1e6))
    H.psql(p, "ANALYZE jobs; ANALYZE lease_queue")
    -- seven rounds, so the sixth run of each statement makes its generic plan
    for _ = 1, 7 do assert.are.equal(20, #db:claim_next("w", T, 100, 20)) end
    local json = require("dkjson")
    local checked, under = 0, {}
    -- the plan's UPDATE nodes: each its table and the node it reads from
    local function updates(node, out)
      if node["Node Type"] == "ModifyTable" and node.Operation == "Update" then
        for _, child in ipairs(node.Plans or {}) do
          if child["Parent Relationship"] == "Outer" then
            out[#out + 1] = node["Relation Name"] .. " from " .. child["Node Type"]
          end
        end
      end
      for _, child in ipairs(node.Plans or {}) do updates(child, out) end
      return out
    end
    local values = { bytea = "'\\x64656661756c74'::bytea", ["double precision"] = "1.7e9",
      integer = "20", bigint = "20", text = "'w'" }
    assert.is_true((db:with_lease("flush", "F", ff, T, function(tx)
      local stmts = {}
      for r in tx:rows("SELECT name, parameter_types::text[] AS types FROM pg_prepared_statements"
        .. " WHERE statement LIKE '%FOR UPDATE SKIP LOCKED) j%'") do
        stmts[#stmts + 1] = r
      end
      for _, s in ipairs(stmts) do
        local args = {}
        for t in tostring(s.types):gmatch('[^{},"]+') do args[#args + 1] = assert(values[t], t) end
        local plan = tx:rows("EXPLAIN (FORMAT JSON, COSTS OFF) EXECUTE " .. s.name
          .. "(" .. table.concat(args, ", ") .. ")")()
        local text = plan["QUERY PLAN"] or plan[next(plan)]
        local tree = assert(json.decode(text))[1].Plan
        for _, u in ipairs(updates(tree, {})) do
          checked = checked + 1
          if u:find("Loop$") or u:find("Join$") then under[#under + 1] = s.name .. ": " .. u end
        end
      end
    end)))
    -- every claim statement prepared has its two UPDATEs (jobs and lease_queue)
    assert.is_true(checked >= 2, "UPDATE nodes checked: " .. checked)
    assert.are.equal("", table.concat(under, ", "))
    db:close()
  end)

  it("keeps one plan for the one-job claims of a worker's loop once the tables are analyzed grown", function()
    local db, p = H.fresh()
    H.psql(p, "ALTER TABLE jobs SET (autovacuum_enabled = off);"
      .. " ALTER TABLE lease_queue SET (autovacuum_enabled = off)")
    db:enqueue("flush", { queue = "aside" })
    local ff = assert(db:claim("flush", "F", T, 1e6))
    local many = {}
    for i = 1, GROWN do many[i] = "j" .. i end
    db:enqueue_many(many)
    H.psql(p, "ANALYZE jobs; ANALYZE lease_queue")
    -- the loop of a worker: claim_next, then complete_claim_next
    local id, f = db:claim_next("w", T, 100)
    for _ = 1, 30 do
      local ok, _, nid, nf = db:complete_claim_next(id, "w", f, T, "r", 100)
      assert.is_true(ok)
      id, f = nid, nf
    end
    -- the session's prepared claims: planned anew at each run (custom
    -- plans) only for their first five, as PostgreSQL's plan cache does
    -- before it compares, then their generic plan kept
    local custom
    assert.is_true((db:with_lease("flush", "F", ff, T, function(tx)
      custom = tx:rows("SELECT coalesce(max(custom_plans), -1) AS n FROM pg_prepared_statements"
        .. " WHERE statement LIKE '%FOR UPDATE SKIP LOCKED) j%'")().n
    end)))
    custom = tonumber(custom)
    assert.is_true(custom >= 0 and custom <= 8, "custom plans: " .. tostring(custom))
    db:close()
  end)

  for _, case in ipairs({ { true, true }, { false, true }, { false, false } }) do
    local analyzed, indexed = case[1], case[2]
    it(("reads a few rows a call with plans made on tables %s%s"):format(
      analyzed and "analyzed while tiny" or "never analyzed",
      indexed and "" or ", a concurrency limit's count without its index"), function()
      local db, reads = grown(analyzed, indexed)
      local over = {}
      for _, c in ipairs(calls(db, 8)) do
        local before = reads()
        c.fn()
        local n = reads() - before
        -- without the index, a limited claim reads the limited queue's
        -- backlog of 400 once (about two rows and index entries each)
        local bound = (not indexed and c.name:find("concurrency limit", 1, true)) and 1200 or 200
        if n >= bound then over[#over + 1] = ("%s %d"):format(c.name, n) end
      end
      -- every call over the bound, with what it read
      assert.are.equal("", table.concat(over, ", "))
      db:close()
    end)
  end
end)
