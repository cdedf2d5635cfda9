-- Unique keys: db:enqueue(id, {key = k}) stores nothing while a job of the
-- same queue with key k is unfinished (not completed, discarded or
-- cancelled), and says which job holds it; the key is free again once that
-- job is finished; retry takes the key back, or is refused when another job
-- holds it by then.  The database enforces it (a unique index over the
-- unfinished jobs' (queue, key)), so of enqueues of one key racing from
-- threads and processes exactly one is inserted.  Backend-neutral.
local H = require("helpers")
local T = require("thread_helpers")
local thread = T.thread
local lease = H.lease

-- The schema version before step UNIQUE (lease_schema.h), whose layout has
-- no column key.
local BEFORE_KEYS = lease.SCHEMA_STEPS.UNIQUE - 1

-- The ids of the jobs of queue q (nil: all) holding key k, through a new
-- connection.
local function holders(p, k, q)
  local h = lease.open(p)
  local out = {}
  for _, j in ipairs(h:jobs{ now = 0, queue = q, limit = 100000 }) do
    if j.key == k then out[#out + 1] = j.id end
  end
  h:close()
  table.sort(out)
  return out
end

describe("a unique key", function()
  it("refuses a second unfinished job with the key, naming the holder; nothing stored", function()
    local db, p = H.fresh("key-dup")
    assert.is_true(db:enqueue("a", { key = "k", payload = "pa" }))
    assert.are.equal("k", db:state("a").key)
    local before = H.qsnapshot(p)
    assert.are.same({ false, "duplicate", "a" },
      { db:enqueue("b", { key = "k", payload = "pb", priority = 3 }) })
    assert.is_nil(db:state("b"))
    assert.are.same(before, H.qsnapshot(p))
    -- the holder's own id again is "exists", as without a key
    assert.are.same({ false, "exists" }, { db:enqueue("a", { key = "k" }) })
    -- no key, or another key, is no conflict
    assert.is_true(db:enqueue("c"))
    assert.is_nil(db:state("c").key)
    assert.is_true(db:enqueue("d", { key = "k2" }))
    -- the path function answers the same
    db:close()
    assert.are.same({ false, "duplicate", "a" }, { lease.enqueue(p, "e", { key = "k" }) })
    assert.are.same({ "a" }, holders(p, "k"))
  end)

  it("is held by a job while it is available, scheduled, running or retryable", function()
    local db = H.fresh("key-held")
    assert.is_true(db:enqueue("s", { key = "sched", run_at = 100 }))
    assert.are.equal("scheduled", db:state("s", 1).status)
    assert.are.same({ false, "duplicate", "s" }, { db:enqueue("s2", { key = "sched" }) })
    assert.is_true(db:enqueue("r", { key = "run" }))
    local id, fence = db:claim_next("w", 1, 10)
    assert.are.equal("r", id)
    assert.are.same({ false, "duplicate", "r" }, { db:enqueue("r2", { key = "run" }) })
    assert.are.equal("retryable", (db:fail("r", "w", fence, 2, "boom")))
    assert.are.equal("retryable", db:state("r", 2).status)
    assert.are.same({ false, "duplicate", "r" }, { db:enqueue("r3", { key = "run" }) })
  end)

  it("is free again once its job is completed, discarded or cancelled", function()
    local db, p = H.fresh("key-freed")
    -- completed
    assert.is_true(db:enqueue("c1", { key = "kc" }))
    local id, fence = db:claim_next("w", 1, 10)
    assert.are.equal("c1", id)
    assert.is_true(db:complete("c1", "w", fence, 2, "done"))
    assert.is_true(db:enqueue("c2", { key = "kc" }))
    -- discarded (its one attempt failed)
    assert.is_true(db:enqueue("d1", { key = "kd", max_attempts = 1 }))
    id, fence = db:claim_next("w", 3, 10)
    assert.are.equal("c2", id)   -- enqueue order
    assert.is_true(db:complete("c2", "w", fence, 3, "done"))
    id, fence = db:claim_next("w", 3, 10)
    assert.are.equal("d1", id)
    assert.are.equal("discarded", (db:fail("d1", "w", fence, 4, "boom")))
    assert.are.equal("discarded", db:state("d1", 4).status)
    assert.is_true(db:enqueue("d2", { key = "kd" }))
    -- cancelled
    assert.is_true(db:enqueue("x1", { key = "kx" }))
    assert.is_true(db:cancel("x1", 5))
    assert.is_true(db:enqueue("x2", { key = "kx" }))
    -- a raw client's done = 1 finishes the job too
    assert.is_true(db:enqueue("q1", { key = "kq" }))
    H.sql(p, "UPDATE jobs SET done = 1 WHERE id = " .. (H.backend == "pg" and "'q1'::bytea" or "'q1'"))
    assert.is_true(db:enqueue("q2", { key = "kq" }))
    -- the finished jobs keep their key
    for _, j in ipairs({ "c1", "d1", "x1", "q1" }) do assert.is_string(db:state(j).key) end
  end)

  it("is taken back by a retry, which is refused while another job holds it", function()
    local db, p = H.fresh("key-retry")
    assert.is_true(db:enqueue("a", { key = "k" }))
    assert.is_true(db:cancel("a", 1))
    assert.is_true(db:enqueue("b", { key = "k" }))
    local before = H.qsnapshot(p)
    assert.are.same({ false, "duplicate", "b" }, { db:retry("a", 2) })
    assert.are.same(before, H.qsnapshot(p))
    assert.are.equal("cancelled", db:state("a", 2).status)
    assert.is_true(db:cancel("b", 3))
    assert.is_true(db:retry("a", 4))
    assert.are.equal("available", db:state("a", 4).status)
    assert.are.same({ false, "duplicate", "a" }, { db:enqueue("c", { key = "k" }) })
  end)

  it("is looked at after the dependencies; a refused enqueue or retry is in the events ledger",
    function()
      local db, p = H.fresh("key-deps-events", { events = true })
      assert.is_true(db:enqueue("a", { key = "k" }))
      local before = H.qsnapshot(p)
      -- a missing dependency refuses the enqueue before its held key does
      assert.are.same({ false, "missing", "nope" },
        { db:enqueue("b", { key = "k", after = { "nope" } }) })
      assert.are.same(before, H.qsnapshot(p))
      -- with its dependencies there, the held key refuses it; nothing stored
      assert.are.same({ false, "duplicate", "a" }, { db:enqueue("b", { key = "k", after = { "a" } }) })
      assert.are.same(before, H.qsnapshot(p))
      assert.is_nil(db:state("b"))
      assert.is_true(db:cancel("a", 1))
      -- a dependency's refusal stores nothing, and records nothing either
      assert.are.same({ false, "missing", "a2" }, { db:enqueue("c", { key = "k", after = { "a2" } }) })
      assert.is_true(db:enqueue("c", { key = "k" }))
      assert.are.same({ false, "duplicate", "c" }, { db:retry("a", 2) })
      local got = {}
      for _, e in ipairs(db:events({ limit = 100 })) do
        got[#got + 1] = table.concat({ e.op, e.id, e.outcome, tostring(e.reason or "-") }, " ")
      end
      assert.are.same({ "enqueue a ok -", "enqueue b refused duplicate", "cancel a ok -",
                        "enqueue c ok -", "retry a refused duplicate" }, got)
      db:close()
    end)

  it("is per queue: other queues are independent", function()
    local db, p = H.fresh("key-queues")
    assert.is_true(db:enqueue("a", { key = "k" }))
    assert.is_true(db:enqueue("b", { key = "k", queue = "mail" }))
    assert.is_true(db:enqueue("c", { key = "k", queue = "sms" }))
    assert.are.same({ false, "duplicate", "b" }, { db:enqueue("d", { key = "k", queue = "mail" }) })
    assert.are.same({ "a", "b", "c" }, holders(p, "k"))
    assert.are.same({ "b" }, holders(p, "k", "mail"))
  end)

  it("in enqueue_many: a held key skips that entry as an existing id is; the rest go in", function()
    local db, p = H.fresh("key-many")
    assert.is_true(db:enqueue("a", { key = "k1" }))
    assert.are.equal(2, db:enqueue_many({
      { id = "b", key = "k1" },   -- held by a
      { id = "c", key = "k2" },
      { id = "d", key = "k2" },   -- taken by c, earlier in the batch
      "e",
    }))
    assert.is_nil(db:state("b"))
    assert.is_nil(db:state("d"))
    assert.are.same({ "k2" }, { db:state("c").key })
    assert.are.same({ "c" }, holders(p, "k2"))
    -- a key in the defaults applies to every entry: only the first gets it
    assert.are.equal(1, db:enqueue_many({ "f", "g" }, { key = "k3" }))
    assert.is_nil(db:state("g"))
  end)

  it("refuses bad keys naming the function and argument, storing nothing", function()
    local db, p = H.fresh("key-bad")
    assert.is_true(db:enqueue("a"))
    local before = H.qsnapshot(p)
    local function err(...)
      local e = H.error_of(...)
      return e
    end
    local e = err(db.enqueue, db, "b", { key = 7 })
    assert.truthy(e:find("bad argument #3 to 'enqueue' (opts.key must be a non-empty string, got 7)",
      1, true), e)
    e = err(db.enqueue, db, "b", { key = "" })
    assert.truthy(e:find("bad argument #3 to 'enqueue' (opts.key must be a non-empty string", 1, true), e)
    e = err(db.enqueue, db, "b", { key = ("x"):rep(1025) })
    assert.truthy(e:find("bad argument #3 to 'enqueue' (key must be at most 1024 bytes, got 1025)",
      1, true), e)
    e = err(db.enqueue_many, db, { "c", { id = "b", key = false } })
    assert.truthy(e:find("bad argument #2 to 'enqueue_many' (ids[2].key must be a non-empty string",
      1, true), e)
    e = err(lease.enqueue, p, "b", { key = {} })
    assert.truthy(e:find("opts.key must be a non-empty string", 1, true), e)
    assert.are.same(before, H.qsnapshot(p))
    -- the longest key is taken
    assert.is_true(db:enqueue("long", { key = ("x"):rep(1024) }))
    assert.are.equal(1024, #db:state("long").key)
  end)

  it("of a database made before keys: its jobs have none, and a read-only handle reads them",
    function()
      local db, p = H.fresh("key-old")
      assert.is_true(db:enqueue("a", { payload = "pa" }))
      db:close()
      -- the layout of the version before step UNIQUE: no column key, no index
      H.sql(p, "DROP INDEX lease_queue_key; ALTER TABLE lease_queue DROP COLUMN key;"
        .. " UPDATE lease_meta SET value = " .. (H.backend == "pg" and ("'%d'"):format(BEFORE_KEYS)
        or tostring(BEFORE_KEYS)) .. " WHERE key = 'schema_version'")
      local ro = lease.open(p, { readonly = true })
      assert.are.equal(BEFORE_KEYS, ro:settings().schema_version)
      local s = ro:state("a")
      assert.are.same({ "pa", nil }, { s.payload, s.key })
      assert.is_nil(ro:jobs{ now = 0 }[1].key)
      ro:close()
      db = lease.open(p)
      assert.are.equal(lease.SCHEMA_VERSION, db:settings().schema_version)
      assert.is_nil(db:state("a").key)
      assert.is_true(db:enqueue("b", { key = "k" }))
      assert.are.same({ false, "duplicate", "b" }, { db:enqueue("c", { key = "k" }) })
      db:close()
      -- a database of this layout whose version row another client deleted
      -- is known by its column key: step UNIQUE does not run again
      H.sql(p, "DELETE FROM lease_meta WHERE key = 'schema_version'")
      db = lease.open(p)
      assert.are.equal(lease.SCHEMA_VERSION, db:settings().schema_version)
      assert.are.same({ false, "duplicate", "b" }, { db:enqueue("c", { key = "k" }) })
      db:close()
      -- one of the layout before keys whose version row was deleted is known
      -- by what that layout holds (the table lease_deps of step DEPS, the
      -- one before): only step UNIQUE runs (the index of lease_deps another
      -- client dropped is not made again), and keys work
      H.sql(p, "DROP INDEX lease_queue_key; ALTER TABLE lease_queue DROP COLUMN key;"
        .. " DROP INDEX lease_deps_parent; DELETE FROM lease_meta WHERE key = 'schema_version'")
      db = lease.open(p)
      assert.are.equal(lease.SCHEMA_VERSION, db:settings().schema_version)
      assert.is_true(db:enqueue("d", { key = "k" }))
      assert.are.same({ false, "duplicate", "d" }, { db:enqueue("e", { key = "k" }) })
      local index = H.backend == "pg" and "SELECT count(to_regclass('lease_deps_parent'))"
        or "SELECT count(*) FROM sqlite_master WHERE name = 'lease_deps_parent'"
      assert.are.equal("0", (H.sql(p, index):match("%d+")))
    end)
end)

-- One racing thread: open its own handle, then for each round wait at the
-- barrier and enqueue its id of the round with the round's key; report
-- "round id ok why other" lines.
local function racer(path, me, rounds, b)
  local db = require("lease").open(path)
  local out = {}
  for r = 1, rounds do
    b:wait()
    local id = ("%s-%d"):format(me, r)
    local ok, why, other = db:enqueue(id, { key = "k" .. r, queue = "race" })
    out[#out + 1] = { r = r, id = id, ok = ok, why = why, other = other }
  end
  db:close()
  return out
end

-- The same from a process: enqueue with keys k<r> for every round, started
-- together by a go file; prints one line per round.
local PROCESS = [[
local lease = require("lease")
local path, me, rounds, go = %q, %q, %d, %q
local db = lease.open(path)
while not io.open(go) do end
for r = 1, rounds do
  local id = ("%%s-%%d"):format(me, r)
  local ok, why, other = db:enqueue(id, { key = "k" .. r, queue = "race" })
  io.write(r, " ", id, " ", tostring(ok), " ", tostring(why), " ", tostring(other), "\n")
end
db:close()
]]

-- Start another client that, in one transaction, enqueues the job `id`
-- with key k by raw SQL, touches the file `ready`, waits a second, then
-- ends the transaction with `finish` ("COMMIT" or "ROLLBACK").  Returns the
-- popen handle (read it to wait for the client).
local function raw_holder(p, id, k, ready, finish)
  local lit = H.backend == "pg" and function(v) return "'" .. v .. "'::bytea" end
    or function(v) return "'" .. v .. "'" end
  local sql = table.concat({
    H.backend == "pg" and "BEGIN;" or "BEGIN IMMEDIATE;",
    "INSERT INTO jobs(id) VALUES (" .. lit(id) .. ");",
    "UPDATE lease_queue SET key = " .. lit(k) .. " WHERE id = " .. lit(id) .. ";",
    (H.backend == "pg" and "\\! touch " or ".shell touch ") .. ready,
    H.backend == "pg" and "SELECT pg_sleep(1);" or ".shell sleep 1",
    finish .. ";",
  }, "\n")
  local cmd
  if H.backend == "pg" then
    local psql = os.getenv("LEASE_PSQL")
    if not psql or psql == "" then psql = "psql" end
    cmd = H.sh(psql) .. " -X -q -A -t -v ON_ERROR_STOP=1 -d " .. H.sh(p)
  else
    local cli = os.getenv("LEASE_SQLITE3")
    if not cli or cli == "" then cli = "sqlite3" end
    cmd = cli .. " -batch -bail " .. H.sh(p)
  end
  local h = assert(io.popen(cmd .. " 2>&1 <<'LEASE_SQL_EOF'\n" .. sql .. "\nLEASE_SQL_EOF\necho status=$?"))
  local t0 = os.time()
  while not io.open(ready) do
    assert(os.time() - t0 < 20, "the other client never got its key in")
  end
  return h
end

describe("unique keys under concurrency", function()
  it("wait for a holder not yet committed: duplicate once it commits, inserted once it rolls back",
    function()
      local db, p = H.fresh("key-pending")
      assert.is_true(db:enqueue("a"))   -- the tables exist
      local ready = H.file("ready")
      local h = raw_holder(p, "raw", "k", ready, "COMMIT")
      assert.are.same({ false, "duplicate", "raw" }, { db:enqueue("b", { key = "k" }) })
      local out = h:read("*a")
      h:close()
      assert.truthy(out:find("status=0", 1, true), out)
      assert.is_nil(db:state("b"))
      assert.are.same({ "raw" }, holders(p, "k"))
      ready = H.file("ready2")
      h = raw_holder(p, "raw2", "k2", ready, "ROLLBACK")
      assert.is_true(db:enqueue("c", { key = "k2" }))
      out = h:read("*a")
      h:close()
      assert.truthy(out:find("status=0", 1, true), out)
      assert.is_nil(db:state("raw2"))
      assert.are.same({ "c" }, holders(p, "k2"))
    end)

  it("let exactly one of racing threads and processes win each key", function()
    local ROUNDS, W, P = 25, 4, 3
    local db, p = H.fresh("key-race")
    db:close()
    local b = thread.barrier(W)
    local ts = {}
    for i = 1, W do ts[i] = thread.spawn(racer, p, "t" .. i, ROUNDS, b) end
    -- the processes, started at once with the threads running
    local build = os.getenv("LEASE_BUILD_DIR") or "build"
    local go = H.file("go")
    local cmd = {}
    for i = 1, P do
      local script = H.file("racer" .. i) .. ".lua"
      H.write(script, "package.cpath = " .. string.format("%q", build .. "/?.so;")
        .. " .. package.cpath\n" .. PROCESS:format(p, "p" .. i, ROUNDS, go))
      cmd[#cmd + 1] = T.lua() .. " " .. H.sh(script) .. " &"
    end
    local out, ok = H.capture(table.concat(cmd, "\n") .. "\nsleep 0.2; : > " .. H.sh(go) .. "; wait")
    assert.is_true(ok, out)
    local byround = {}
    for r = 1, ROUNDS do byround[r] = {} end
    for line in out:gmatch("[^\n]+") do
      local r, id, got, why, other = line:match("^(%d+) (%S+) (%S+) (%S+) (%S+)$")
      assert.truthy(r, line)
      local e = byround[tonumber(r)]
      e[#e + 1] = { id = id, ok = got == "true", why = why, other = other }
    end
    for i = 1, W do
      local done, res = ts[i]:join()
      assert.is_true(done, res)
      for _, x in ipairs(res) do
        local e = byround[x.r]
        e[#e + 1] = { id = x.id, ok = x.ok == true, why = tostring(x.why), other = tostring(x.other) }
      end
    end
    for r = 1, ROUNDS do
      local e, winners = byround[r], {}
      assert.are.equal(W + P, #e)
      for _, x in ipairs(e) do if x.ok then winners[#winners + 1] = x.id end end
      assert.are.equal(1, #winners, "round " .. r)
      for _, x in ipairs(e) do
        if not x.ok then assert.are.same({ "duplicate", winners[1] }, { x.why, x.other }) end
      end
      assert.are.same(winners, holders(p, "k" .. r, "race"))
    end
    local h = lease.open(p)
    assert.are.equal(ROUNDS, h:counts(0, "race").total)
    h:close()
  end)
end)

describe("unique keys in the CLI", function()
  local json = require("dkjson")
  local run = H.cli

  it("lease enqueue --key refuses a held key naming the holder; show and jobs print the key",
    function()
      local p = H.path("key-cli")
      assert.are.same({ 0, "enqueued a\n", "" }, { run({ "enqueue", p, "a", "--key", "k" }) })
      local status, out, err = run({ "enqueue", p, "b", "--key", "k" })
      assert.are.same({ 1, "" }, { status, out })
      assert.truthy(err:find('job "b" duplicate in', 1, true), err)
      assert.truthy(err:find('(key "k" is held by job "a")', 1, true), err)
      assert.is_nil(lease.state(p, "b"))
      status, out = run({ "enqueue", p, "b", "--key", "k", "--json" })
      assert.are.equal(1, status)
      assert.are.same({ id = "b", enqueued = false, reason = "duplicate", held_by = "a" },
        json.decode(out))
      -- another queue is another key space
      assert.are.equal(0, (run({ "enqueue", p, "c", "--key", "k", "--queue", "q2" })))
      status, out = run({ "show", p, "a" })
      assert.are.equal(0, status)
      assert.truthy(out:find("\nkey         k\n", 1, true), out)
      local _, shown = run({ "show", p, "a", "--json" })
      assert.are.equal("k", json.decode(shown).key)
      status, out = run({ "jobs", p })
      assert.are.equal(0, status)
      assert.truthy(out:find("\na .-\n    key k\n"), out)
      -- retry of a job whose key was taken meanwhile
      assert.are.equal(0, (run({ "cancel", p, "a" })))
      assert.are.equal(0, (run({ "enqueue", p, "b", "--key", "k" })))
      status, out = run({ "retry", p, "a" })
      assert.are.same({ 1, "refused a: duplicate (its key is held by b)\n" }, { status, out })
      -- bad usage: nothing written
      status, out, err = run({ "enqueue", p, "d", "--key", "" })
      assert.are.same({ 2, "" }, { status, out })
      assert.truthy(err:find("--key needs a non-empty key", 1, true), err)
      assert.is_nil(lease.state(p, "d"))
    end)
end)
