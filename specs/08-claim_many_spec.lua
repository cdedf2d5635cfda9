-- Contract step 8: claim_many(path, id, owners, now, ttl) claims for every
-- owner at the same time on native threads (one connection each, released
-- together by a barrier) and returns the results in input order: on a
-- fresh job exactly one slot holds a fence, every other slot false.
--
-- Catches the seed's broken change "claim_many calls claim once for the
-- first owner only": the trigger spec below frees the job after every
-- claim, so every owner's claim that runs is granted; with the broken
-- change only slot 1 holds a fence.  Catches "a separate read, then a write
-- in claim" (no lock around both): the 8 x 500 rounds race gives two
-- winners of the same fence.
local H = require("helpers")

-- The owners "w1".."wn".
local function owners_of(n)
  local out = {}
  for i = 1, n do out[i] = "w" .. i end
  return out
end

-- Check one claim_many result on a fresh job: as long as owners, exactly
-- one slot an integer fence `want`, every other slot false.  Returns the
-- winner's index.
local function one_winner(res, owners, want)
  local winner
  assert.are.equal(#owners, #res)
  for i = 1, #owners do
    local v = res[i]
    if v ~= false then
      assert(winner == nil, "two winners: slots " .. tostring(winner) .. " and " .. i)
      assert(H.is_integer(v), "slot " .. i .. " is " .. tostring(v))
      assert.are.equal(want, v)
      winner = i
    end
  end
  assert(winner, "no winner")
  return winner
end

describe("step 8: claim_many", function()
  local db, p
  before_each(function() db, p = H.fresh() end)
  after_each(function() db:close() end)

  it("8 threads x 500 rounds on fresh jobs: exactly one winner, its fence stored", function()
    local owners = owners_of(8)
    local wins = {}
    local rounds = H.rounds(500, 60)
    for r = 1, rounds do
      local id = "job" .. r
      db:enqueue(id)
      local res = db:claim_many(id, owners, r, 10)
      local w = one_winner(res, owners, 1)
      local s = db:state(id)
      if s.owner ~= owners[w] or s.fence ~= res[w] or s["until"] ~= r + 10 then
        error(string.format("round %d: stored %s/%d/%s, winner %s/%d", r, tostring(s.owner),
          s.fence, tostring(s["until"]), owners[w], res[w]))
      end
      wins[w] = (wins[w] or 0) + 1
    end
    local total = 0
    for _, n in pairs(wins) do total = total + n end
    assert.are.equal(rounds, total)
  end)

  it("runs every owner's claim and keeps input order (a trigger frees the job after each claim) #sqlite", function()
    -- Another client's trigger: after every claim, log (owner, fence) and
    -- set until = 0, so the next claim finds the job free again.  Then every
    -- claim that runs is granted, one fence each, and the log says whose.
    H.sqlite3(p, "CREATE TABLE claim_log(owner TEXT, fence INTEGER);"
      .. " CREATE TRIGGER free_again AFTER UPDATE OF fence ON jobs BEGIN"
      .. " INSERT INTO claim_log VALUES (NEW.owner, NEW.fence);"
      .. " UPDATE jobs SET until = 0 WHERE id = NEW.id; END")
    for _, n in ipairs({ 8, 100 }) do
      local id = "every" .. n
      -- each freed claim is an expired lease to the job queue: room for all
      db:enqueue(id, { max_attempts = 1000 })
      H.sqlite3(p, "DELETE FROM claim_log")
      local owners = owners_of(n)
      local res = db:claim_many(id, owners, 50, 10)
      assert.are.equal(n, #res)
      local log = {}
      for line in H.sqlite3(p, "SELECT owner, fence FROM claim_log"):gmatch("[^\n]+") do
        local owner, fence = line:match("^(.-)|(%d+)$")
        log[owner] = tonumber(fence)
      end
      local seen = {}
      for i = 1, n do
        assert(res[i] ~= false, "owner " .. i .. " of " .. n .. " got no fence: its claim never ran")
        assert.are.equal(log[owners[i]], res[i])   -- slot i is owner i's own fence
        assert.is_nil(seen[res[i]])
        seen[res[i]] = true
      end
      assert.are.equal(n, db:state(id).fence)
    end
  end)

  it("queues owners beyond 64 threads and still has one winner, then the next fence", function()
    local owners = owners_of(150)
    db:enqueue("q")
    one_winner(db:claim_many("q", owners, 0, 10), owners, 1)
    -- at now == until the lease has ended: the next round gets fence 2
    local w = one_winner(db:claim_many("q", owners, 10, 10), owners, 2)
    assert.are.equal(owners[w], db:state("q").owner)
    assert.are.equal(2, db:state("q").fence)
  end)

  it("gives all false for a held, a done and a missing job, and changes nothing", function()
    local owners = owners_of(6)
    db:enqueue("held")
    db:enqueue("done")
    assert.are.equal(1, db:claim("held", "x", 0, 100))
    local f = db:claim("done", "x", 0, 100)
    assert.is_true(db:complete("done", "x", f, 1, "result"))
    local before = H.snapshot(p)
    local all_false = { false, false, false, false, false, false }
    assert.are.same(all_false, db:claim_many("held", owners, 50, 10))
    assert.are.same(all_false, db:claim_many("done", owners, 500, 10))
    assert.are.same(all_false, db:claim_many("ghost", owners, 50, 10))
    assert.are.same(before, H.snapshot(p))
    assert.is_nil(db:state("ghost"))
  end)

  it("is the same through the path function", function()
    local owners = owners_of(8)
    db:enqueue("pf")
    local res = H.lease.claim_many(p, "pf", owners, 7, 3)
    local w = one_winner(res, owners, 1)
    local s = H.lease.state(p, "pf")
    assert.are.equal(owners[w], s.owner)
    assert.are.equal(10, s["until"])
    assert.are.same({ false }, H.lease.claim_many(p, "pf", { "late" }, 9.5, 3))
  end)

  it("takes owners with zero bytes and a single owner", function()
    db:enqueue("z\0id")
    local res = db:claim_many("z\0id", { "a\0b", "a\0c" }, 0, 5)
    local w = one_winner(res, { "a\0b", "a\0c" }, 1)
    assert.are.equal(({ "a\0b", "a\0c" })[w], db:state("z\0id").owner)
    db:enqueue("solo")
    assert.are.same({ 1 }, db:claim_many("solo", { "only" }, 0, 5))
  end)

  it("refuses bad arguments before anything touches the database", function()
    db:enqueue("j")
    local before = H.snapshot(p)
    -- called as a method, so positions count from id (#1), as users see them
    local function err(...)
      local a = table.pack(...)
      return H.error_of(function() local _ = db:claim_many(table.unpack(a, 1, a.n)) end)
    end
    assert.matches("bad argument #2 to 'claim_many' (owners must be a table of strings, got nil)",
      err("j", nil, 0, 10), 1, true)
    assert.matches("owners must be a non-empty sequence of strings, got an empty one",
      err("j", {}, 0, 10), 1, true)
    assert.matches("bad argument #2 to 'claim_many' (owners[3] must be a non-empty string, got 7)",
      err("j", { "a", "b", 7 }, 0, 10), 1, true)
    assert.matches("owners[2] must be a non-empty string, got an empty string",
      err("j", { "a", "" }, 0, 10), 1, true)
    assert.matches("owners[1] must be a non-empty string, got table",
      err("j", { {} }, 0, 10), 1, true)
    assert.matches("owners must be a sequence, but has key name beside 1..2",
      err("j", { "a", "b", name = "c" }, 0, 10), 1, true)
    -- a table with a hole: its length is 2 or 4 (both are borders; LuaJIT
    -- says 4), and either way the owner past the hole is refused
    local holed = err("j", { "a", "b", [4] = "d" }, 0, 10)
    assert.truthy(holed:find("owners must be a sequence, but has key 4 beside 1..2", 1, true)
      or holed:find("owners[3] must be a non-empty string, got nil", 1, true), holed)
    assert.matches("bad argument #4 to 'claim_many' (ttl must be a number > 0, got 0)",
      err("j", { "a" }, 0, 0), 1, true)
    assert.matches("bad argument #3 to 'claim_many' (now must be a finite number",
      err("j", { "a" }, 0 / 0, 1), 1, true)
    assert.matches("bad argument #1 to 'claim_many' (id must be a non-empty string, got an empty string)",
      err("", { "a" }, 0, 1), 1, true)
    assert.matches("bad argument #3 to 'lease.claim_many' (owners[1] must be a non-empty string",
      H.error_of(H.lease.claim_many, p, "j", { false }, 0, 1), 1, true)
    assert.matches("bad argument #1 to 'lease.claim_many' (path must be a non-empty string",
      H.error_of(H.lease.claim_many, nil, "j", { "a" }, 0, 1), 1, true)
    assert.are.same(before, H.snapshot(p))
    db:close()
    assert.matches("attempt to use a closed lease database", err("j", { "a" }, 0, 1), 1, true)
  end)

  it("refuses an in-memory or temporary database, which other connections cannot see", function()
    for _, name in ipairs({ ":memory:", "file::memory:", "file:x?mode=memory" }) do
      local mem = H.lease.open(name)
      mem:enqueue("j")
      local e = H.error_of(function() return mem:claim_many("j", { "a", "b" }, 0, 1) end)
      assert.truthy(e:find("lease.claim_many: claim_many needs a database file", 1, true), name .. ": " .. e)
      assert.truthy(e:find("[misuse]", 1, true), e)
      -- nothing was claimed on the handle's own database
      assert.are.equal(0, mem:state("j").fence)
      mem:close()
    end
    -- the path function refuses ":memory:" as an argument, before opening anything
    assert.matches("bad argument #1 to 'lease.claim_many' (claim_many needs a database file, "
      .. "not a private in-memory one)",
      H.error_of(H.lease.claim_many, ":memory:", "j", { "a" }, 0, 1), 1, true)
    local e = H.error_of(H.lease.claim_many, "file::memory:", "j", { "a" }, 0, 1)
    assert.truthy(e:find("needs a database file", 1, true), e)
  end)

  it("uses the handle's options: a read-only handle raises [readonly], never false", function()
    db:enqueue("ro")
    local ro = H.lease.open(p, { readonly = true })
    local e = H.error_of(ro.claim_many, ro, "ro", owners_of(4), 0, 10)
    -- the database named as db:name() names it: the path on SQLite
    assert.matches("^lease%.claim_many: .*%[readonly%] %(file \"" .. ro:name():gsub("%p", "%%%0") .. "\"%)", e)
    ro:close()
    assert.is_nil(db:state("ro").owner)
  end)

  it("raises [busy] when the lock stays taken past the busy timeout, never false #sqlite", function()
    db:enqueue("b")
    -- another client holds the write lock for a while
    local lockfile = p .. ".locked"
    local cli = os.getenv("LEASE_SQLITE3")
    if not cli or cli == "" then cli = "sqlite3" end
    os.execute("(echo 'BEGIN IMMEDIATE; UPDATE jobs SET until = until;'; echo '.shell touch "
      .. lockfile .. "'; sleep 1.5; echo 'COMMIT;') | " .. H.sh(cli) .. " " .. H.sh(p)
      .. " >/dev/null 2>&1 &")
    local T = require("thread_helpers")
    local t0 = T.now()
    while not H.exists(lockfile) and T.now() - t0 < 10 do T.thread.channel():recv(0.01) end
    assert(H.exists(lockfile), "the sqlite3 client did not take the lock")
    local short = H.lease.open(p, { busy_timeout = 0.05 })
    local e = H.error_of(short.claim_many, short, "b", owners_of(4), 0, 10)
    assert.matches("^lease%.claim_many: database is locked %[busy%]", e)
    short:close()
    -- the default timeout (10 s) outlasts the lock: the claim goes through
    one_winner(db:claim_many("b", owners_of(4), 0, 10), owners_of(4), 1)
    os.remove(lockfile)
  end)

  it("never lets SQLITE_BUSY escape under the default timeout: 64 owners x 30 rounds", function()
    local owners = owners_of(64)
    for r = 1, H.rounds(30, 4) do
      db:enqueue("hot" .. r)
      one_winner(db:claim_many("hot" .. r, owners, 0, 10), owners, 1)
    end
  end)
end)
