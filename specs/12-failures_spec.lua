-- Database failures raise errors carrying the operation, SQLite's message, a
-- stable code word and the file's name: "lease.<op>: <message> [<code>]
-- (file "<path>")".  They never come back as nil or false: "the database was
-- busy" must never look like "another worker won".
local H = require("helpers")
local lease = H.lease

-- The parts of a database error message.
local function parts(err)
  local op, msg, code, file = err:match('^lease%.([%w_]+): (.-) %[(%w+)%] %(file "(.*)"%)$')
  return { op = op, msg = msg, code = code, file = file }
end

describe("database failures #sqlite", function()
  it("a directory that does not exist: cantopen, for open and every path function", function()
    local p = H.dir() .. "/no/such/dir/jobs.db"
    local e = parts(H.error_of(lease.open, p))
    assert.are.same({ op = "open", msg = "unable to open database file", code = "cantopen", file = p }, e)
    local calls = {
      { "init_db" }, { "enqueue", "a" }, { "state", "a" }, { "claim", "a", "o", 0, 1 },
      { "renew", "a", "o", 1, 0, 1 }, { "complete", "a", "o", 1, 0, "r" }, { "release", "a", "o", 1 },
    }
    for _, c in ipairs(calls) do
      e = parts(H.error_of(lease[c[1]], p, table.unpack(c, 2)))
      assert.are.equal(c[1], e.op)
      assert.are.equal("cantopen", e.code)
      assert.are.equal(p, e.file)
    end
  end)

  it("create = false refuses a missing file and does not create it", function()
    local p = H.path()
    local e = parts(H.error_of(lease.open, p, { create = false }))
    assert.are.equal("cantopen", e.code)
    assert.is_false(H.exists(p))
  end)

  it("a file that is not a database: notadb, and the file is byte-for-byte unchanged", function()
    local p = H.path("notadb")
    local bytes = {}
    for i = 1, 8192 do bytes[i] = string.char((i * 7919) % 256) end
    local content = table.concat(bytes)
    H.write(p, content)
    local e = parts(H.error_of(lease.open, p))
    assert.are.same({ op = "open", msg = "file is not a database", code = "notadb", file = p }, e)
    e = parts(H.error_of(lease.claim, p, "a", "o", 0, 1))
    assert.are.same({ op = "claim", msg = "file is not a database", code = "notadb", file = p }, e)
    e = parts(H.error_of(lease.state, p, "a"))
    assert.are.equal("notadb", e.code)
    H.assert_bytes(content, p)
    assert.is_false(H.exists(p .. "-wal"))
    assert.is_false(H.exists(p .. "-journal"))
  end)

  it("a text file is not a database either, and stays as it was", function()
    local p = H.path("text")
    local content = ("not a database, just a line of text\n"):rep(200)
    H.write(p, content)
    assert.are.equal("notadb", parts(H.error_of(lease.open, p)).code)
    H.assert_bytes(content, p)
  end)

  it("a jobs table with other columns: schema, naming the difference, file unchanged", function()
    local p = H.path("schema")
    H.sqlite3(p, "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0,"
      .. " result TEXT, done INTEGER NOT NULL DEFAULT 0)")
    local content = H.read(p)
    local e = parts(H.error_of(lease.open, p))
    assert.are.equal("schema", e.code)
    assert.truthy(e.msg:find("fence", 1, true), e.msg)
    H.assert_bytes(content, p)
    assert.are.equal("schema", parts(H.error_of(lease.enqueue, p, "a")).code)
    H.assert_bytes(content, p)
  end)

  for _, ddl in ipairs({
    { "fence TEXT", "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0, fence TEXT NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0)", "jobs.fence is TEXT, expected INTEGER" },
    { "owner INTEGER", "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner INTEGER, until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0)", "jobs.owner is INTEGER, expected TEXT" },
    { "untyped result", "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result, done INTEGER NOT NULL DEFAULT 0)", "jobs.result is untyped, expected TEXT" },
    { "fence without default", "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL, result TEXT, done INTEGER NOT NULL DEFAULT 0)", "jobs.fence must be NOT NULL DEFAULT 0" },
    { "done default 1", "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 1)", "jobs.done must be NOT NULL DEFAULT 0" },
    { "WITHOUT ROWID", "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID", "jobs has no rowid" },
    { "a column named rowid", "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0, rowid TEXT)", "column named rowid" },
    { "id COLLATE RTRIM", "CREATE TABLE jobs(id TEXT PRIMARY KEY COLLATE RTRIM, owner TEXT, until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0)", "jobs.id has collation RTRIM" },
    { "owner COLLATE NOCASE", "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT COLLATE NOCASE, until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0)", "jobs.owner has collation NOCASE" },
    { "another unique index", "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0); CREATE UNIQUE INDEX one_per_owner ON jobs(id COLLATE NOCASE)", "unique index one_per_owner" },
    { "composite primary key", "CREATE TABLE jobs(id TEXT, owner TEXT, until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (id, owner))", "primary key" },
    { "no primary key", "CREATE TABLE jobs(id TEXT, owner TEXT, until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0)", "primary key" },
    { "nullable until", "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL, fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0)", "until" },
    { "a view", "CREATE TABLE t(x); CREATE VIEW jobs AS SELECT x AS id FROM t", "view" },
    { "NOT NULL extra column", "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0, tenant TEXT NOT NULL)", "tenant" },
  }) do
    it("refuses a jobs table with " .. ddl[1], function()
      local p = H.path("schema")
      H.sqlite3(p, ddl[2])
      local content = H.read(p)
      local e = parts(H.error_of(lease.open, p))
      assert.are.equal("schema", e.code)
      assert.truthy(e.msg:find(ddl[3], 1, true), e.msg)
      H.assert_bytes(content, p)
    end)
  end

  it("a read-only handle: reads work, every write raises readonly and changes nothing", function()
    local db, p = H.fresh()
    db:enqueue("a")
    local f = db:claim("a", "w", 0, 100)
    db:close()
    local before = H.snapshot(p)
    local ro = lease.open(p, { readonly = true })
    assert.are.equal(f, ro:state("a").fence)
    local writes = {
      { "enqueue", "b" }, { "claim", "a", "x", 200, 10 }, { "renew", "a", "w", f, 1, 10 },
      { "complete", "a", "w", f, 1, "r" }, { "release", "a", "w", f },
    }
    for _, w in ipairs(writes) do
      local e = parts(H.error_of(ro[w[1]], ro, table.unpack(w, 2)))
      assert.are.equal(w[1], e.op)
      assert.are.equal("readonly", e.code)
      assert.are.equal(p, e.file)
      assert.truthy(e.msg:find("readonly", 1, true), e.msg)
    end
    -- init_db has nothing to write when the table exists
    assert.is_true(ro:init_db())
    assert.are.same(before, H.snapshot(p))
    -- the handle still reads after the refusals
    assert.are.equal("w", ro:state("a").owner)
    ro:close()
  end)

  it("a read-only handle on a file without the table is a schema error", function()
    local p = H.path()
    H.sqlite3(p, "CREATE TABLE other(x)")
    assert.are.equal("schema", parts(H.error_of(lease.open, p, { readonly = true })).code)
  end)

  it("a file the process may not write: reads work, writes raise readonly", function()
    -- Root ignores file permissions, so as root the check runs in a child
    -- process with nobody's uid (setpriv, from util-linux).
    local dir = H.dir()
    local p = dir .. "/ro.db"
    local db = H.lease.open(p)
    db:enqueue("a")
    db:close()
    os.execute("chmod 0777 " .. H.sh(dir) .. " && chmod 0444 " .. H.sh(p))
    local before = H.snapshot(p)
    local script = [[
      package.cpath = arg[1]
      local lease = require("lease")
      local p = arg[2]
      local s = lease.state(p, "a")
      io.write("state ", tostring(s and s.fence), "\n")
      local ok, err = pcall(lease.claim, p, "a", "w", 0, 10)
      io.write("claim ", tostring(ok), " ", tostring(err), "\n")
      ok, err = pcall(lease.enqueue, p, "b")
      io.write("enqueue ", tostring(ok), " ", tostring(err), "\n")
    ]]
    local sf = dir .. "/ro.lua"
    H.write(sf, script)
    local prefix = ""
    if H.is_root() then prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups " end
    local cpath = (os.getenv("LEASE_BUILD_DIR") or "build") .. "/?.so"
    if cpath:sub(1, 1) ~= "/" then cpath = os.getenv("PWD") .. "/" .. cpath end
    local pipe = assert(io.popen(prefix .. H.lua() .. " " .. H.sh(sf) .. " " .. H.sh(cpath) .. " "
      .. H.sh(p) .. " 2>&1"))
    local out = pipe:read("*a")
    pipe:close()
    assert.truthy(out:find("state 0\n", 1, true), out)
    assert.truthy(out:find('claim false lease.claim: attempt to write a readonly database [readonly] (file "'
      .. p .. '")', 1, true), out)
    assert.truthy(out:find('enqueue false lease.enqueue: attempt to write a readonly database [readonly]', 1, true), out)
    assert.are.same(before, H.snapshot(p))
  end)

  describe("a write lock held by another connection", function()
    -- Start the sqlite3 tool holding BEGIN IMMEDIATE until `release` is
    -- written to its stdin; returns the pipe once the lock is taken.
    local function hold_lock(p, then_sleep)
      local marker = p .. ".locked"
      os.remove(marker)
      local cli = os.getenv("LEASE_SQLITE3") or "sqlite3"
      if cli == "" then cli = "sqlite3" end
      local pipe = assert(io.popen(cli .. " -batch " .. H.sh(p) .. " >/dev/null 2>&1", "w"))
      pipe:write("BEGIN IMMEDIATE;\nUPDATE jobs SET owner = owner;\n.shell touch " .. H.sh(marker) .. "\n")
      if then_sleep then pipe:write(".shell sleep " .. then_sleep .. "\nCOMMIT;\n") end
      pipe:flush()
      for _ = 1, 500 do
        if H.exists(marker) then return pipe end
        os.execute("sleep 0.01")
      end
      error("sqlite3 did not take the lock")
    end

    it("past the busy timeout: every write raises busy, never nil or false", function()
      local db, p = H.fresh(nil, { busy_timeout = 0.1 })
      db:enqueue("a")
      local f = db:claim("a", "w", 0, 100)
      local before = H.snapshot(p)
      local pipe = hold_lock(p)
      local writes = {
        { "claim", "a", "x", 500, 10 }, { "renew", "a", "w", f, 1, 10 },
        { "complete", "a", "w", f, 1, "r" }, { "release", "a", "w", f }, { "enqueue", "b" },
      }
      for _, w in ipairs(writes) do
        local ok, err = pcall(db[w[1]], db, table.unpack(w, 2))
        assert.is_false(ok)
        local e = parts(err)
        assert.are.same({ op = w[1], msg = "database is locked", code = "busy", file = p }, e)
      end
      -- claim_next (both forms), enqueue_many and claim_many raise busy too
      local more = {
        { "claim_next", { "x", 500, 10 } }, { "claim_next", { "x", 500, 10, 3 } },
        { "enqueue_many", { { "b", "c" } } }, { "claim_many", { "a", { "x", "y", "z" }, 500, 10 } },
      }
      for _, w in ipairs(more) do
        local ok, err = pcall(db[w[1]], db, table.unpack(w[2]))
        assert.is_false(ok, w[1] .. " returned instead of raising")
        assert.are.same({ op = w[1], msg = "database is locked", code = "busy", file = p }, parts(err))
      end
      -- readers are not blocked in WAL mode
      assert.are.equal("w", db:state("a").owner)
      pipe:write("COMMIT;\n.quit\n")
      pipe:close()
      assert.are.same(before, H.snapshot(p))
      -- the same handle works once the lock is gone
      assert.are.equal(f + 1, db:claim("a", "x", 500, 10))
      db:close()
    end)

    it("shorter than the busy timeout: claim waits and succeeds", function()
      local db, p = H.fresh(nil, { busy_timeout = 10 })
      db:enqueue("a")
      local pipe = hold_lock(p, 0.3)
      assert.are.equal(1, db:claim("a", "x", 0, 10))
      pipe:close()
      assert.are.equal("x", db:state("a").owner)
      db:close()
    end)

    it("shorter than the busy timeout: claim_next, claim_many and the path functions wait and succeed", function()
      local db, p = H.fresh(nil, { busy_timeout = 10 })
      db:enqueue_many({ "a", "b", "c", "d", "e", "f" })
      local pipe = hold_lock(p, 0.2)
      assert.are.same({ "a", 1 }, { H.two(db:claim_next("x", 0, 10)) })
      pipe:close()
      pipe = hold_lock(p, 0.2)
      assert.are.same({ { id = "b", fence = 1 }, { id = "c", fence = 1 } }, H.idfence(db:claim_next("x", 0, 10, 2)))
      pipe:close()
      pipe = hold_lock(p, 0.2)
      local got = db:claim_many("d", { "m1", "m2", "m3" }, 0, 10)
      pipe:close()
      table.sort(got, function(x, y) return tostring(x) < tostring(y) end)
      assert.are.same({ 1, false, false }, got)
      -- the path functions use the default options (busy timeout 10 s)
      pipe = hold_lock(p, 0.2)
      assert.are.equal(1, lease.claim(p, "e", "y", 0, 10))
      pipe:close()
      pipe = hold_lock(p, 0.2)
      assert.is_true(lease.complete(p, "e", "y", 1, 1, "r"))
      pipe:close()
      pipe = hold_lock(p, 0.2)
      assert.are.same({ "f", 1 }, { H.two(lease.claim_next(p, "z", 0, 10)) })
      pipe:close()
      pipe = hold_lock(p, 0.2)
      assert.is_true(lease.release(p, "f", "z", 1))
      pipe:close()
      assert.are.same({ total = 6, done = 1, held = 4, ready = 1, blocked = 0 }, H.counts(db:counts(1)))
      db:close()
    end)
  end)
end)
