-- specs/27-wal_bound_spec.lua: the -wal file under steady readers, and
-- read-only handles leaving no -wal or -shm behind.  SQLite-file specific.
--
-- While some reader always holds a snapshot (two overlapping readers here,
-- each a sqlite3 command-line client inside BEGIN ... SELECT), a checkpoint
-- can copy the WAL back but never restart it from its start, so it grows
-- with every commit.  Once the readers are gone, the next checkpoint copies
-- it all back and the next commit truncates it to the documented bound
-- (4 MiB, docs/guarantees.md, "The WAL and long readers").
local H = require("helpers")

local LIMIT = 4 * 1024 * 1024

local function size(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local n = f:seek("end")
  f:close()
  return n
end

-- A reader: a sqlite3 client holding a read transaction open.
local function reader(path)
  local cli = os.getenv("LEASE_SQLITE3")
  if not cli or cli == "" then cli = "sqlite3" end
  local p = assert(io.popen(cli .. " " .. H.sh(path) .. " >/dev/null 2>&1", "w"))
  p:write("BEGIN; SELECT count(*) FROM jobs;\n")
  p:flush()
  return p
end

-- Start a new snapshot on reader r (the other one keeps the older one).
local function renew_snapshot(r)
  r:write("COMMIT; BEGIN; SELECT count(*) FROM jobs;\n")
  r:flush()
end

local function cycle(db, id)
  db:enqueue(id)
  local fence = assert(db:claim(id, "w", 0, 100))
  assert(db:complete(id, "w", fence, 1, string.rep("r", 200)))
end

describe("the -wal file #sqlite", function()
  it("grows under steady readers and shrinks to the bound after they are gone", function()
    local path = H.path("wal")
    local db = H.lease.open(path, { synchronous = "normal" })
    db:enqueue("first")
    local readers = { reader(path), reader(path) }
    local most = 0
    for i = 1, 600 do
      cycle(db, "job" .. i)
      if i % 20 == 0 then renew_snapshot(readers[math.floor(i / 20) % 2 + 1]) end
      most = math.max(most, size(path .. "-wal") or 0)
    end
    -- The readers did hold the WAL: it outgrew the bound.
    assert.is_true(most > LIMIT, ("the -wal reached only %d bytes"):format(most))
    for _, r in ipairs(readers) do
      r:write("COMMIT;\n")
      r:close()
    end
    -- The next commit checkpoints everything back; the one after restarts
    -- the WAL and truncates it to the bound.
    for i = 1, 3 do cycle(db, "after" .. i) end
    local now = size(path .. "-wal")
    assert.is_true(now <= LIMIT, ("the -wal stayed %d bytes"):format(now))
    assert.are.equal(604, db:counts(0).total)
    db:close()
    assert.is_nil(size(path .. "-wal"))
  end)

  it("is not left beside an idle database by a read-only handle", function()
    local path = H.path("ro")
    local db = H.lease.open(path)
    db:enqueue("a")
    db:close()
    assert.is_nil(size(path .. "-wal"))
    local ro = H.lease.open(path, { readonly = true })
    assert.are.equal("a", ro:state("a").id)
    assert.are.equal(1, ro:counts(0).total)
    local ok, err = pcall(ro.enqueue, ro, "b")
    assert.is_false(ok)
    assert.matches("%[readonly%]", err)
    ro:close()
    assert.is_nil(size(path .. "-wal"))
    assert.is_nil(size(path .. "-shm"))
  end)

  it("and a read-only handle beside a writer still sees the writer's commits", function()
    local path = H.path("ro2")
    local db = H.lease.open(path)
    db:enqueue("a")
    local ro = H.lease.open(path, { readonly = true })
    db:enqueue("b")
    assert.are.equal(2, ro:counts(0).total)
    ro:close()
    db:enqueue("c")
    db:close()
    assert.is_nil(size(path .. "-wal"))
    local again = H.lease.open(path, { readonly = true })
    assert.are.equal(3, again:counts(0).total)
    again:close()
  end)
end)
