-- Hostile files: files that are not what they claim to
-- be.  Each must be refused by `lease.open` (read-write and read-only) and
-- by every path function with a clear error: the operation, a message
-- saying what is wrong, the code word and the file's name.  And the file
-- must be byte-for-byte as it was afterwards, with no -wal, -shm or
-- -journal file left beside it.  (Not a database and a foreign jobs table
-- in rollback mode are in 12-failures_spec.lua; this file adds random
-- bytes, databases cut short at many points, WAL-mode files, zero-length
-- files, directories and FIFOs.)
--
-- Found and fixed in the engine by these specs (src/core/lease.c, check_path,
-- check_file, check_schema_immutable): a WAL-mode file that was corrupt,
-- truncated or someone else's was refused but left -wal and -shm behind;
-- a database cut short inside its last page opened and took writes; a
-- read-only open of a directory said "disk I/O error"; a read-only open of
-- a FIFO blocked for ever; /dev/null was "opened", and SQLite created
-- /dev/null-journal.
local H = require("helpers")
local lease = H.lease

-- The parts of a database error message.
local function parts(err)
  local op, msg, code, file = err:match('^lease%.([%w_]+): (.-) %[(%w+)%] %(file "(.*)"%)$')
  return { op = op, msg = msg, code = code, file = file }
end

-- Every way into a file: open (read-write and read-only) and each path
-- function, with arguments that would write when the file were healthy.
local CALLS = {
  { "open" }, { "open", { readonly = true } }, { "open", { create = false } },
  { "init_db" }, { "enqueue", "a" }, { "state", "a" }, { "claim", "a", "o", 0, 1 },
  { "renew", "a", "o", 1, 0, 1 }, { "complete", "a", "o", 1, 0, "r" }, { "release", "a", "o", 1 },
  { "claim_next", "o", 0, 1 }, { "claim_next", "o", 0, 1, 5 }, { "enqueue_many", { "a", "b" } },
  { "claim_many", "a", { "o1", "o2" }, 0, 1 },
}

-- The files SQLite may create beside a database.
local SIDECARS = { "-wal", "-shm", "-journal" }

-- Assert that every call on p raises a database error with a code in
-- `codes` (a set) and a message matching `msg` (a plain substring, or
-- nil), naming p; that the file still holds `content`; and that no
-- sidecar file exists.  `what` names the case in failure messages.
local function assert_refused(p, content, codes, msg, what)
  for _, c in ipairs(CALLS) do
    local ok, err = pcall(lease[c[1]], p, table.unpack(c, 2))
    local label = what .. ": " .. c[1] .. (c[2] and type(c[2]) == "table" and c[2].readonly and " (readonly)" or "")
    assert(not ok, label .. " did not raise (returned " .. tostring(err) .. ")")
    local e = parts(tostring(err))
    assert(e.op, label .. ": not a database error: " .. tostring(err))
    assert.are.equal(c[1], e.op, label)
    assert(codes[e.code], label .. ": code " .. tostring(e.code) .. " in " .. tostring(err))
    assert.are.equal(p, e.file, label)
    if msg then assert(e.msg:find(msg, 1, true), label .. ": message " .. e.msg) end
    if content then H.assert_bytes(content, p) end
    for _, s in ipairs(SIDECARS) do
      assert(not H.exists(p .. s), label .. " left " .. p .. s .. " behind")
    end
  end
end

-- Seeded random bytes (math.random, so a failure replays).
local function random_bytes(n, seed)
  math.randomseed(seed)
  local t = {}
  for i = 1, n do t[i] = string.char(math.random(0, 255)) end
  return table.concat(t)
end

-- A real multi-page lease database, checkpointed and closed, so the main
-- file holds every page: 300 jobs, half of them done with a result.
-- Returns its bytes.
local function real_database(mode)
  local p = H.path("real")
  local db = lease.open(p)
  local ids = {}
  for i = 1, 300 do ids[i] = ("job-%03d"):format(i) end
  db:enqueue_many(ids)
  for i = 1, 300, 2 do
    local f = db:claim(ids[i], "w", 0, 100)
    assert(db:complete(ids[i], "w", f, 1, ("result of %d "):format(i):rep(12)))
  end
  db:close()
  if mode == "delete" then H.sqlite3(p, "PRAGMA journal_mode=DELETE") end
  local bytes = H.read(p)
  assert(not H.exists(p .. "-wal"), "the -wal should be gone once the handle closed")
  return bytes
end

describe("hostile files #sqlite", function()
  local WAL_DB, DELETE_DB

  setup(function()
    WAL_DB = real_database("wal")
    DELETE_DB = real_database("delete")
  end)

  it("the test databases are what they should be: multi-page, WAL or rollback mode", function()
    assert.are.equal(0, #WAL_DB % 4096)
    assert.is_true(#WAL_DB >= 8 * 4096, "only " .. #WAL_DB .. " bytes")
    assert.are.equal("\2\2", WAL_DB:sub(19, 20))
    assert.are.equal("\1\1", DELETE_DB:sub(19, 20))
  end)

  describe("random bytes", function()
    for _, n in ipairs({ 1, 15, 16, 99, 100, 512, 4096, 3 * 4096 + 17, 65536 }) do
      it(n .. " random bytes: notadb everywhere, the file unchanged, nothing beside it", function()
        local p = H.path("random")
        local content = random_bytes(n, 7000 + n)
        H.write(p, content)
        assert_refused(p, content, { notadb = true }, "file is not a database", n .. " random bytes")
      end)
    end

    for _, base in ipairs({ "wal", "delete" }) do
      it("random bytes behind a real " .. base .. "-mode header: corrupt, nothing left beside it", function()
        -- the 100-byte header of a real database, then 15 pages of noise
        local p = H.path("noise")
        local header = (base == "wal" and WAL_DB or DELETE_DB):sub(1, 100)
        local content = header .. random_bytes(16 * 4096 - 100, 4242)
        H.write(p, content)
        assert_refused(p, content, { corrupt = true, notadb = true }, nil, base .. " header + noise")
      end)
    end
  end)

  describe("a database cut short", function()
    -- Where to cut: below the 16-byte magic, inside the 100-byte header, at
    -- the header's end, inside page 1, at page boundaries, inside later
    -- pages, one byte short.
    local function cuts(size)
      return { 10, 20, 50, 99, 100, 2000, 4096, 4096 + 1000, 8192, math.floor(size / 2) - 100,
               math.floor(size / 2 / 4096) * 4096, size - 4096, size - 4096 + 1, size - 1 }
    end

    for _, mode in ipairs({ "wal", "delete" }) do
      it("a " .. mode .. "-mode database cut at every kind of point: corrupt, unchanged, nothing beside it", function()
        local full = mode == "wal" and WAL_DB or DELETE_DB
        for _, at in ipairs(cuts(#full)) do
          local p = H.path("cut")
          local content = full:sub(1, at)
          H.write(p, content)
          local codes = at < 16 and { notadb = true } or { corrupt = true }
          assert_refused(p, content, codes, nil, ("%s database cut to %d of %d bytes"):format(mode, at, #full))
          os.remove(p)
        end
      end)
    end

    it("cut inside a page, the message says the file was truncated and by how much", function()
      local p = H.path("cut")
      local content = WAL_DB:sub(1, #WAL_DB - 1)
      H.write(p, content)
      local e = parts(H.error_of(lease.open, p))
      assert.are.same({ op = "open", code = "corrupt", file = p,
        msg = ("database disk image is malformed: the file is %d bytes, not a whole number of its"
          .. " 4096-byte pages (truncated)"):format(#content) }, e)
      H.write(p, WAL_DB:sub(1, 50))
      e = parts(H.error_of(lease.state, p, "job-001"))
      assert.are.same({ op = "state", code = "corrupt", file = p,
        msg = "database disk image is malformed: the file is 50 bytes, shorter than the 100-byte"
          .. " header (truncated)" }, e)
    end)

    it("the same database whole still opens, and its rows are all there", function()
      local p = H.path("whole")
      H.write(p, WAL_DB)
      local db = lease.open(p)
      assert.are.same({ total = 300, done = 150, ready = 150, held = 0, blocked = 0 }, H.counts(db:counts(0)))
      assert.are.equal(("result of 1 "):rep(12), db:state("job-001").result)
      db:close()
    end)
  end)

  describe("a jobs table with other columns, in WAL mode", function()
    -- 12-failures_spec.lua covers rollback-mode files; a WAL-mode file made
    -- by another program is the one where SQLite used to leave -wal and
    -- -shm behind on the refusal.
    for _, ddl in ipairs({
      { "missing columns", "CREATE TABLE jobs(id TEXT PRIMARY KEY, x)", "jobs has no column owner TEXT" },
      { "fence TEXT", "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0, fence TEXT NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0)", "jobs.fence is TEXT, expected INTEGER" },
      { "a view named jobs", "CREATE TABLE t(x); CREATE VIEW jobs AS SELECT x AS id FROM t", "jobs is a view, not a table" },
    }) do
      it(ddl[1] .. ": schema everywhere, naming the difference; unchanged, nothing beside it", function()
        local p = H.path("foreign")
        H.sqlite3(p, "PRAGMA journal_mode=WAL; " .. ddl[2] .. "; INSERT INTO "
          .. (ddl[1]:find("view") and "t" or "jobs(id)") .. " VALUES ('other program''s row')")
        assert.is_false(H.exists(p .. "-wal"))
        local content = H.read(p)
        assert.are.equal("\2\2", content:sub(19, 20))
        assert_refused(p, content, { schema = true }, ddl[3], ddl[1])
        -- the other program still reads its row
        assert.truthy(H.sqlite3(p, "SELECT count(*) FROM " .. (ddl[1]:find("view") and "t" or "jobs")):find("1", 1, true))
      end)
    end
  end)

  describe("a file torn inside its first transaction, beside a hot -journal", function()
    -- A power loss while the first transaction of a new file commits (the
    -- one that creates its table) leaves the file cut inside a page beside
    -- a -journal whose header says the file was empty.  SQLite rolls that
    -- journal back at the first read; open must leave it to SQLite rather
    -- than refuse the cut file.
    it("is rolled back by SQLite and initialised by open, not refused as truncated", function()
      local p = H.path("torn")
      local fresh = H.path("fresh")
      -- the journal of a transaction that began on an empty file, copied
      -- while that transaction is open
      H.sqlite3(fresh, "PRAGMA journal_mode=DELETE; PRAGMA cache_size=2; BEGIN; CREATE TABLE t(x);"
        .. " WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)"
        .. " INSERT INTO t SELECT randomblob(2000) FROM c;\n"
        .. ".shell cp " .. H.sh(fresh .. "-journal") .. " " .. H.sh(p .. "-journal") .. "\n"
        .. "ROLLBACK")
      assert.is_true(H.exists(p .. "-journal"))
      H.write(p, DELETE_DB:sub(1, 5000))    -- pages written, the last one torn
      local db = lease.open(p)
      assert.are.same({ total = 0, done = 0, ready = 0, held = 0, blocked = 0 }, H.counts(db:counts(0)))
      assert.is_true(db:enqueue("a"))
      assert.are.equal(1, db:claim("a", "w", 0, 10))
      db:close()
      assert.is_false(H.exists(p .. "-journal"))
      assert.are.equal("ok\n", H.sqlite3(p, "PRAGMA integrity_check"))
    end)
  end)

  describe("inputs the fuzzer found (specs/fuzz/regress/fuzz_open), through the Lua API", function()
    -- fuzz_open's input: a flags byte (1 read-only, 2 a -wal follows, its
    -- length from the next 4 bytes, little-endian, modulo what is left).
    local function decode(input)
      local flags = input:byte(1)
      if flags % 4 >= 2 then
        local n = input:byte(2) + input:byte(3) * 256 + input:byte(4) * 65536 + input:byte(5) * 16777216
        local rest = input:sub(6)
        local len = n % (#rest + 1)
        return flags, rest:sub(1, len), rest:sub(len + 1)
      end
      return flags, input:sub(2), nil
    end
    for _, name in ipairs({ "rollback-file-refused-at-index-creation-unchanged",
                            "wal-mode-refused-at-index-creation-leaves-no-wal",
                            "wal-foreign-table-checkpointed-on-refusal",
                            "not-a-database-readonly-given-wal-kept",
                            "wal-old-index-dropped-then-refused-corrupt-unchanged" }) do
      it(name .. ": refused, the file and any -wal it came with as they were", function()
        local src = (os.getenv("LEASE_SOURCE_DIR") or ".") .. "/specs/fuzz/regress/fuzz_open/" .. name
        local flags, file, wal = decode(assert(H.read(src), src))
        local p = H.path("fuzzed")
        H.write(p, file)
        if wal then H.write(p .. "-wal", wal) end
        local ok, e = pcall(lease.open, p, { readonly = flags % 2 == 1, busy_timeout = 0 })
        if ok then e:close() end
        assert.is_false(ok, "open accepted it")
        assert.truthy(tostring(e):match("%[(%w+)%]"), tostring(e))
        H.assert_bytes(file, p)
        if wal then
          H.assert_bytes(wal, p .. "-wal")
        else
          for _, sc in ipairs(SIDECARS) do assert.is_false(H.exists(p .. sc), p .. sc) end
        end
      end)
    end
  end)

  describe("a file whose schema an open brings up to date, corrupt where that reads", function()
    -- A jobs table as the seed makes it, with the index of earlier versions
    -- (which a writable open drops) and rows, whose table page is then
    -- broken.  An open drops the index and makes the queue's tables, which
    -- read every job: that read finds the broken page.  Every change is in
    -- one transaction, so the refused file is as it was.
    local function broken(mode)
      local p = H.path("schema-" .. mode)
      local rows = {}
      for i = 1, 200 do rows[i] = ("('job-%03d')"):format(i) end
      H.sqlite3(p, "PRAGMA journal_mode=" .. mode .. "; CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT,"
        .. " until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT,"
        .. " done INTEGER NOT NULL DEFAULT 0); CREATE INDEX lease_jobs_pending ON jobs(done) WHERE done = 0;"
        .. " INSERT INTO jobs(id) VALUES " .. table.concat(rows, ", "))
      local root = tonumber(H.sqlite3(p, "SELECT rootpage FROM sqlite_master WHERE name = 'jobs'"))
      local bytes = H.read(p)
      local at = (root - 1) * 4096 + 1   -- the page's type byte: 0 is no kind of page
      bytes = bytes:sub(1, at - 1) .. "\0" .. bytes:sub(at + 1)
      H.write(p, bytes)
      return p, bytes
    end
    for _, mode in ipairs({ "wal", "delete" }) do
      it(mode .. " mode: corrupt, the index still there, the file unchanged, nothing beside it", function()
        for _, call in ipairs({ { "open" }, { "init_db" }, { "enqueue", "new" }, { "claim_next", "w", 0, 10 } }) do
          local p, bytes = broken(mode)
          local e = parts(H.error_of(lease[call[1]], p, table.unpack(call, 2)))
          assert.are.same({ call[1], "corrupt", p }, { e.op, e.code, e.file })
          H.assert_bytes(bytes, p)
          for _, sc in ipairs(SIDECARS) do assert.is_false(H.exists(p .. sc), p .. sc) end
          os.remove(p)
        end
      end)
    end
  end)

  describe("a zero-length file", function()
    it("is initialised by open: the table is created and works", function()
      local p = H.path("empty")
      H.write(p, "")
      local db = lease.open(p)
      assert.is_true(db:enqueue("a"))
      assert.are.equal(1, db:claim("a", "w", 0, 10))
      db:close()
      assert.are.equal(1, lease.state(p, "a").fence)
      assert.are.equal("ok\n", H.sqlite3(p, "PRAGMA integrity_check"))
    end)

    it("is initialised by a path function too", function()
      local p = H.path("empty")
      H.write(p, "")
      assert.is_true(lease.enqueue(p, "a"))
      assert.are.equal(0, lease.state(p, "a").fence)
    end)

    it("a read-only open refuses it (no jobs table) and leaves it empty, with nothing beside it", function()
      local p = H.path("empty")
      H.write(p, "")
      local e = parts(H.error_of(lease.open, p, { readonly = true }))
      assert.are.same({ op = "open", code = "schema", file = p,
        msg = "the database has no jobs table (opened read-only)" }, e)
      H.assert_bytes("", p)
      for _, s in ipairs(SIDECARS) do assert.is_false(H.exists(p .. s)) end
    end)
  end)

  describe("a path that is not a regular file", function()
    it("a directory: cantopen everywhere, saying so; the directory stays empty, nothing beside it", function()
      local d = H.dir()
      assert_refused(d, nil, { cantopen = true }, "unable to open database file: it is a directory", "a directory")
      local p = io.popen("ls -A " .. H.sh(d))
      assert.are.equal("", p:read("*a"))
      p:close()
    end)

    it("a file with a second hard link: cantopen everywhere, saying so; the file stays as it was", function()
      -- each name would get its own -wal: two processes using the two
      -- names would both hand out fence 1
      local p = H.path("linked")
      local db = lease.open(p)
      db:enqueue("a")
      db:close()
      local bytes = H.read(p)
      local other = p .. ".link"
      assert(os.execute("ln " .. H.sh(p) .. " " .. H.sh(other)))
      assert_refused(p, bytes, { cantopen = true }, "unable to open database file: it has 2 hard links", "linked")
      assert_refused(other, bytes, { cantopen = true }, "it has 2 hard links", "the link")
      os.remove(other)
      assert.are.equal(1, lease.claim(p, "a", "w", 0, 10))
    end)

    it("a FIFO: cantopen at once (a read-only open used to block for ever), nothing created", function()
      -- In a child process under `timeout`, so a regression fails instead
      -- of hanging the suite; the child stops at the first wrong answer,
      -- before the read-only open that would block.
      local d = H.dir()
      local fifo = d .. "/jobs.db"
      assert(os.execute("mkfifo " .. H.sh(fifo)))
      local script = d .. "/fifo.lua"
      H.write(script, [[
        package.cpath = arg[1] .. "/?.so;" .. package.cpath
        local lease = require("lease")
        local calls = { { "open", {} }, { "claim", "a", "o", 0, 1 }, { "open", { readonly = true } } }
        for _, c in ipairs(calls) do
          local ok, err = pcall(lease[c[1] ], arg[2], (table.unpack or unpack)(c, 2))
          print(ok, err)
          if ok or not tostring(err):find("[cantopen]", 1, true) then os.exit(1) end
        end
      ]])
      local build = os.getenv("LEASE_BUILD_DIR") or "build"
      local p = io.popen("timeout 20 " .. H.lua() .. " " .. H.sh(script) .. " " .. H.sh(build) .. " "
        .. H.sh(fifo) .. " 2>&1")
      local out = p:read("*a")
      p:close()
      local want = 'lease.%s: unable to open database file: not a regular file [cantopen] (file "' .. fifo .. '")'
      assert.are.equal(("false\t%s\nfalse\t%s\nfalse\t%s\n"):format(want:format("open"), want:format("claim"),
        want:format("open")), out)
      local ls = io.popen("ls -A " .. H.sh(d))
      assert.are.equal("fifo.lua\njobs.db\n", ls:read("*a"))
      ls:close()
    end)
  end)
end)
