-- bench/luasql_lease.lua: the lease contract written the way a Lua user
-- would write it without `lease`, on LuaSQL (Debian's lua-sql-sqlite3).
--
-- The benchmark's "what a Lua user would otherwise write" baseline: one
-- reused connection, the engine's pragmas (WAL, synchronous, a 10 s busy
-- timeout) and schema, and each write as BEGIN IMMEDIATE, SELECT the row,
-- check the contract in Lua, UPDATE, COMMIT, so the check and the write
-- are under one lock as the contract requires.  LuaSQL has no prepared
-- statements or parameter binding: SQL is built as text, strings quoted
-- with conn:escape, numbers with %.17g so they round-trip.
local driver = require("luasql.sqlite3")

local M = {}
local DB = {}
DB.__index = DB

-- Run sql; raise with the statement on failure.  Returns execute's result
-- (a row count or a cursor).
local function exec(conn, sql)
  local r, err = conn:execute(sql)
  if not r then error("luasql: " .. tostring(err) .. " in: " .. sql, 3) end
  return r
end

-- The one row of a SELECT as values, or nil when there is none.
local function row(conn, sql)
  local cur = exec(conn, sql)
  local a, b, c, d = cur:fetch()
  cur:close()
  return a, b, c, d
end

--- M.open(path, sync) -> db: one connection with the engine's settings.
-- sync is "full" or "normal".
function M.open(path, sync)
  local env = assert(driver.sqlite3())
  local conn = assert(env:connect(path))
  local self = setmetatable({ env = env, conn = conn }, DB)
  row(conn, "PRAGMA busy_timeout = 10000")
  row(conn, "PRAGMA journal_mode = WAL")
  exec(conn, "PRAGMA synchronous = " .. (sync == "normal" and "NORMAL" or "FULL"))
  exec(conn, "CREATE TABLE IF NOT EXISTS jobs(id TEXT PRIMARY KEY, owner TEXT, "
    .. "until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, "
    .. "result TEXT, done INTEGER NOT NULL DEFAULT 0)")
  exec(conn, "CREATE INDEX IF NOT EXISTS lease_jobs_pending ON jobs(done) WHERE done = 0")
  return self
end

-- 'text' quoted for SQL.
function DB:q(s)
  return "'" .. self.conn:escape(s) .. "'"
end

--- db:enqueue(id) -> true | false, "exists" (contract step 2).
function DB:enqueue(id)
  local n = exec(self.conn, "INSERT OR IGNORE INTO jobs(id) VALUES (" .. self:q(id) .. ")")
  if n == 1 then return true end
  return false, "exists"
end

--- db:claim(id, owner, now, ttl) -> fence | nil, reason (contract step 4).
function DB:claim(id, owner, now, ttl)
  local conn = self.conn
  exec(conn, "BEGIN IMMEDIATE")
  local ok, res, why = pcall(function()
    local done, untl, fence = row(conn, "SELECT done, until, fence FROM jobs WHERE id = "
      .. self:q(id))
    if done == nil then return nil, "missing" end
    if done ~= 0 then return nil, "done" end
    if untl > now then return nil, "held" end
    fence = fence + 1
    exec(conn, string.format("UPDATE jobs SET owner = %s, until = %.17g, fence = %d WHERE id = %s",
      self:q(owner), now + ttl, fence, self:q(id)))
    return fence
  end)
  if not ok then conn:execute("ROLLBACK") error(res, 2) end
  exec(conn, "COMMIT")
  return res, why
end

-- The shared body of renew and complete: check owner, fence, done and
-- until under the write lock, then run the update `set`.
local function guarded(self, id, owner, fence, now, set)
  local conn = self.conn
  exec(conn, "BEGIN IMMEDIATE")
  local ok, res, why = pcall(function()
    local o, f, done, untl = row(conn, "SELECT owner, fence, done, until FROM jobs WHERE id = "
      .. self:q(id))
    if f == nil then return false, "missing" end
    if done ~= 0 then return false, "done" end
    if o ~= owner then return false, "not_owner" end
    if f ~= fence then return false, "stale_fence" end
    if not (untl > now) then return false, "expired" end
    exec(conn, "UPDATE jobs SET " .. set .. " WHERE id = " .. self:q(id))
    return true
  end)
  if not ok then conn:execute("ROLLBACK") error(res, 3) end
  exec(conn, "COMMIT")
  return res, why
end

--- db:renew(id, owner, fence, now, ttl) -> true | false, reason (step 5).
function DB:renew(id, owner, fence, now, ttl)
  return guarded(self, id, owner, fence, now, string.format("until = %.17g", now + ttl))
end

--- db:complete(id, owner, fence, now, result) -> true | false, reason (step 6).
function DB:complete(id, owner, fence, now, result)
  return guarded(self, id, owner, fence, now,
    "result = " .. (result and self:q(result) or "NULL") .. ", done = 1")
end

--- db:claim_next(owner, now, ttl) -> id, fence | nil, "empty": the oldest
-- ready job, found and claimed in one transaction.
function DB:claim_next(owner, now, ttl)
  local conn = self.conn
  exec(conn, "BEGIN IMMEDIATE")
  local ok, id, fence = pcall(function()
    local rid, id, fence = row(conn, string.format(
      "SELECT rowid, id, fence FROM jobs WHERE done = 0 AND until <= %.17g ORDER BY rowid LIMIT 1",
      now))
    if rid == nil then return nil, "empty" end
    fence = fence + 1
    exec(conn, string.format("UPDATE jobs SET owner = %s, until = %.17g, fence = %d WHERE rowid = %d",
      self:q(owner), now + ttl, fence, rid))
    return id, fence
  end)
  if not ok then conn:execute("ROLLBACK") error(id, 2) end
  exec(conn, "COMMIT")
  return id, fence
end

--- db:close()
function DB:close()
  self.conn:close()
  self.env:close()
end

return M
