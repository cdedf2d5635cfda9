-- specs/helpers.lua: shared fixtures for the busted specs.
--
-- Every spec gets fresh database files under one scratch directory
-- ($LEASE_TEST_TMP, set by ctest, or the system's temporary directory).
local H = {}

-- The specs run on Lua 5.4, 5.3, 5.1 and LuaJIT: what 5.1 names otherwise.
table.unpack = table.unpack or unpack   -- luacheck: ignore
table.pack = table.pack or function(...) return { n = select("#", ...), ... } end   -- luacheck: ignore

--- H.integers: true when Lua numbers have an integer subtype (5.3, 5.4), so
-- fencing tokens come back as integers up to 2^63-1; false on 5.1 and
-- LuaJIT, where the binding refuses a fence above 2^53 instead of rounding.
H.integers = math.type ~= nil

--- H.is_integer(v) -> boolean: v is an integer (of subtype integer where
-- Lua has one; an integral number elsewhere).
function H.is_integer(v)
  if math.type then return math.type(v) == "integer" end
  return type(v) == "number" and v == math.floor(v)
end

H.lease = require("lease")

local tmp_root = os.getenv("LEASE_TEST_TMP")
if not tmp_root or tmp_root == "" then tmp_root = os.getenv("TMPDIR") or "/tmp" end
os.execute("mkdir -p '" .. tmp_root .. "'")

local counter = 0

--- H.sh(s) -> string: s quoted for the shell.
function H.sh(s)
  return "'" .. tostring(s):gsub("'", [['\'']]) .. "'"
end

--- H.file([name]) -> string: a scratch file path that does not exist yet
-- (with no -wal or -shm beside it), whatever the backend.
function H.file(name)
  counter = counter + 1
  local p = string.format("%s/spec-%d-%d-%s.db", tmp_root, H.pid(), counter, name or "db")
  os.remove(p); os.remove(p .. "-wal"); os.remove(p .. "-shm")
  return p
end

--- The backend the specs run on: "sqlite", or "pg" when $LEASE_TEST_PG holds
-- a libpq connection string (scripts/pg-cluster run sets it).  Specs about
-- SQLite files carry the busted tag #sqlite and are left out of the
-- PostgreSQL run (--exclude-tags=sqlite).
H.pg_conninfo = os.getenv("LEASE_TEST_PG")
if H.pg_conninfo == "" then H.pg_conninfo = nil end
H.backend = H.pg_conninfo and "pg" or "sqlite"

--- H.psql(conninfo, sql) -> string: run sql with psql (another PostgreSQL
-- client; $LEASE_PSQL, else psql on PATH), unaligned, '|' between columns, no
-- headers.  Raises when it fails.
function H.psql(conninfo, sql)
  local psql = os.getenv("LEASE_PSQL")
  if not psql or psql == "" then psql = "psql" end
  local out, ok, code = H.capture(H.sh(psql) .. " -X -q -A -t -F '|' -v ON_ERROR_STOP=1 -d "
    .. H.sh(conninfo) .. " 2>&1 <<'LEASE_SQL_EOF'\n" .. sql .. ";\nLEASE_SQL_EOF\n")
  if not ok then error("psql failed (" .. tostring(code) .. "): " .. out, 2) end
  return out
end

--- H.rounds(n, pg_n) -> integer: how many rounds a spec runs: n on SQLite,
-- pg_n on PostgreSQL, for loops that open connections (a server connection
-- costs a process on the server: milliseconds, not microseconds).
function H.rounds(n, pg_n)
  return H.backend == "pg" and pg_n or n
end

--- H.path([name]) -> string: a database that does not exist yet.  On
-- SQLite a file path (H.file); on PostgreSQL a connection string whose
-- search_path is a new, empty schema of its own, so every spec starts from
-- no jobs table.
function H.path(name)
  if H.backend ~= "pg" then return H.file(name) end
  counter = counter + 1
  local schema = string.format("s%d_%d", H.pid(), counter)
  -- the name repeats across spec files (each loads this file afresh), as
  -- H.file's do: what a finished file left there goes first
  H.psql(H.pg_conninfo, "DROP SCHEMA IF EXISTS " .. schema .. " CASCADE; CREATE SCHEMA " .. schema)
  return H.pg_conninfo .. " options='-csearch_path=" .. schema .. "'"
end

--- H.pid() -> integer: this process's id (read once from /proc).
function H.pid()
  if not H._pid then
    local f = io.open("/proc/self/stat")
    H._pid = f and tonumber(f:read("*l"):match("^(%d+)")) or os.time()
    if f then f:close() end
  end
  return H._pid
end

--- H.dir() -> string: a fresh empty directory.
function H.dir()
  counter = counter + 1
  local d = string.format("%s/dir-%d-%d", tmp_root, H.pid(), counter)
  os.execute("rm -rf " .. H.sh(d) .. " && mkdir -p " .. H.sh(d))
  return d
end

--- H.exists(path) -> boolean
function H.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

--- H.read(path) -> string|nil: the file's bytes.
function H.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

--- H.write(path, bytes)
function H.write(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

--- H.fresh(name) -> db, path: an open handle on a new database.
function H.fresh(name, options)
  local p = H.path(name)
  return H.lease.open(p, options), p
end

--- H.snapshot(path) -> table: every job, read through a new connection,
-- keyed by id, for comparing the database before and after a call.
function H.snapshot(path)
  local out = {}
  if H.backend == "pg" then
    local rows = H.psql(path, "SELECT encode(id, 'hex'), coalesce(encode(owner, 'hex'), 'NULL'),"
      .. " until, fence, coalesce(encode(result, 'hex'), 'NULL'), done FROM jobs ORDER BY seq")
    for line in rows:gmatch("[^\n]+") do out[#out + 1] = line end
    return out
  end
  local rows = H.sqlite3(path, "SELECT quote(id), quote(owner), quote(until), quote(fence),"
    .. " quote(result), quote(done) FROM jobs ORDER BY rowid")
  for line in rows:gmatch("[^\n]+") do out[#out + 1] = line end
  return out
end

--- H.capture(cmd) -> output, ok, code: run the shell command `cmd` and
-- return its standard output, whether it exited 0, and its exit status.
-- The same on every Lua version (5.1's pipe:close() reports no status).
function H.capture(cmd)
  local p = assert(io.popen("{ " .. cmd .. "\n}; printf '\\n__LEASE_STATUS=%d' $?"))
  local all = p:read("*a")
  p:close()
  local out, code = all:match("^(.*)\n__LEASE_STATUS=(%d+)$")
  code = tonumber(code)
  return out or all, code == 0, code
end

--- H.cli(argv) -> status, out, err: run the CLI in this process
-- (lease.cli's main with argv, a list of strings), its stdout and stderr
-- into temporary files; returns its exit status and both texts.
function H.cli(argv)
  local out, err = io.tmpfile(), io.tmpfile()
  local status = require("lease.cli").main(argv, out, err)
  out:seek("set"); err:seek("set")
  local o, e = out:read("*a"), err:read("*a")
  out:close(); err:close()
  return status, o, e
end

--- H.execute(cmd) -> status: run `cmd` with os.execute and return its exit
-- status (the signal number when a signal ended it), on every Lua version.
function H.execute(cmd)
  local a, _, code = os.execute(cmd)
  if type(a) ~= "number" then return code end
  -- Lua 5.1 and LuaJIT: the raw wait status
  if a % 256 ~= 0 then return a % 128 end
  return math.floor(a / 256)
end

--- H.sqlite3(path, sql) -> string: run sql with the sqlite3 command-line
-- tool (another SQLite client) and return what it printed.  Raises when it fails.
function H.sqlite3(path, sql)
  if H.backend == "pg" then
    error("H.sqlite3 on the PostgreSQL run: tag this spec #sqlite, or use H.psql", 2)
  end
  local cli = os.getenv("LEASE_SQLITE3")
  if not cli or cli == "" then cli = "sqlite3" end
  local out, ok, code = H.capture(cli .. " -batch -bail -separator '|' " .. H.sh(path)
    .. " 2>&1 <<'LEASE_SQL_EOF'\n" .. sql .. ";\nLEASE_SQL_EOF\n")
  if not ok then error("sqlite3 failed (" .. tostring(code) .. "): " .. out, 2) end
  return out
end

--- H.sql(path, sql) -> string: run sql that both engines understand through
-- another client of the spec's database: the sqlite3 tool on SQLite, psql on
-- PostgreSQL (ids are bytea there: a literal 'job' compares as its bytes).
-- Output: one line per row, '|' between columns, NULL as nothing.
function H.sql(path, sql)
  if H.backend == "pg" then return H.psql(path, sql) end
  return H.sqlite3(path, sql)
end

--- H.text(col) -> string: SQL for the byte-string column `col` read as
-- text, for H.sql on either engine (ids, owners and messages are bytea on
-- PostgreSQL, which psql would print as hex).
function H.text(col)
  if H.backend == "pg" then return "convert_from(" .. col .. ", 'UTF8')" end
  return "CAST(" .. col .. " AS TEXT)"
end

--- H.assert_bytes(expected, path): the file holds exactly these bytes
-- (reported by size and first difference, not by dumping both).
function H.assert_bytes(expected, path)
  local got = H.read(path)
  if got == expected then return end
  local at = 1
  while got and at <= #expected and got:byte(at) == expected:byte(at) do at = at + 1 end
  error(string.format("%s changed: %s bytes, expected %d, first difference at byte %d",
    path, got and #got or "no", #expected, at), 2)
end

--- H.error_of(fn, ...) -> string: the error fn raises (fails when it does not).
function H.error_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected an error, got a return")
  return tostring(err)
end

--- H.lua() -> string: the interpreter the specs run in, for subprocesses
-- ($LEASE_LUA, set by ctest: lua5.4 in the normal tree, the instrumented
-- host build/lease in sanitizer trees; unset, the stock interpreter of the
-- Lua running the specs: luajit, lua5.1, lua5.3 or lua5.4), quoted for the
-- shell.
function H.lua()
  local lua = os.getenv("LEASE_LUA")
  if not lua or lua == "" then
    lua = rawget(_G, "jit") and "luajit" or ("lua" .. _VERSION:match("%d+%.%d+"))
  end
  return H.sh(lua)
end

--- H.host(args [, stdin [, deadline]]) -> status, stdout, stderr: run the
-- host program build/lease ($LEASE_HOST) with the shell words `args`,
-- feeding `stdin`; with `deadline` (seconds) it is killed then (status 124).
function H.host(args, stdin, deadline)
  local exe = os.getenv("LEASE_HOST")
  if not exe or exe == "" then exe = (os.getenv("LEASE_BUILD_DIR") or "build") .. "/lease" end
  local base = H.file("host")
  local cmd = (deadline and ("timeout " .. deadline .. " ") or "") .. H.sh(exe) .. " " .. args
    .. " >" .. H.sh(base .. ".out") .. " 2>" .. H.sh(base .. ".err")
  if stdin then
    H.write(base .. ".in", stdin)
    cmd = cmd .. " <" .. H.sh(base .. ".in")
  end
  local status = H.execute(cmd)
  local out, err = H.read(base .. ".out"), H.read(base .. ".err")
  os.remove(base .. ".out"); os.remove(base .. ".err"); os.remove(base .. ".in")
  return status, out, err
end

--- H.ids(list) -> table: the `id` field of each job in a list of jobs
-- (what claim_next(..., n) and db:jobs return), in order.
function H.ids(list)
  local out = {}
  for i, j in ipairs(list) do out[i] = j.id end
  return out
end

--- H.is_root() -> boolean: file permissions do not stop root.
function H.is_root()
  local p = io.popen("id -u")
  local uid = p:read("*l")
  p:close()
  return uid == "0"
end

--- H.row(t) -> table: the contract's fields of a row db:state or db:jobs
-- returned (id, owner, until, fence, result, done, blocked), without the
-- job queue's fields beside them.
function H.row(t)
  if t == nil then return nil end
  local out = {}
  for _, k in ipairs({ "id", "owner", "until", "fence", "result", "done", "blocked" }) do
    out[k] = t[k]
  end
  return out
end

--- H.two(a, b) -> a, b: the first two values (claim_next's id and fence,
-- without the job table beside them).
function H.two(a, b) return a, b end

--- H.counts(t) -> table: the counts by state of db:counts (total, ready,
-- held, done, blocked), without the counts by status.
function H.counts(t)
  return { total = t.total, ready = t.ready, held = t.held, done = t.done, blocked = t.blocked }
end

--- H.qsnapshot(path) -> table: H.snapshot plus every row of the job
-- queue's tables (lease_queue, lease_errors), for "nothing changed" checks.
function H.qsnapshot(path)
  local out = H.snapshot(path)
  if H.backend == "pg" then
    for _, sql in ipairs({
      "SELECT encode(id, 'hex'), seq, encode(queue, 'hex'), priority, coalesce(run_at::text, 'NULL'),"
        .. " attempt, max_attempts, coalesce(encode(payload, 'hex'), 'NULL'), state,"
        .. " coalesce(finished_at::text, 'NULL') FROM lease_queue ORDER BY id",
      "SELECT encode(id, 'hex'), attempt, at, coalesce(encode(owner, 'hex'), 'NULL'), fence,"
        .. " coalesce(encode(message, 'hex'), 'NULL') FROM lease_errors ORDER BY n" }) do
      for line in H.psql(path, sql):gmatch("[^\n]+") do out[#out + 1] = line end
    end
    return out
  end
  for _, sql in ipairs({
    "SELECT quote(id), seq, quote(queue), priority, quote(run_at), base_fence, max_attempts,"
      .. " quote(payload), state, quote(finished_at) FROM lease_queue ORDER BY id",
    "SELECT quote(id), attempt, quote(at), quote(owner), fence, quote(message)"
      .. " FROM lease_errors ORDER BY rowid" }) do
    for line in H.sqlite3(path, sql):gmatch("[^\n]+") do out[#out + 1] = line end
  end
  return out
end

--- H.idfence(list) -> table: {id=, fence=} of each job of a list.
function H.idfence(list)
  local out = {}
  for i, j in ipairs(list) do out[i] = { id = j.id, fence = j.fence } end
  return out
end

return H
