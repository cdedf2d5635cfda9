-- The clock mark: each database keeps the highest `now` it has seen
-- (coarsely), refuses a call whose now is off from it by a time unit's
-- factor, and orders the claims of a queue by how long each job has been
-- due on that clock.  Backend-neutral.
local H = require("helpers")
local lease = H.lease

local T = 1.7e9         -- seconds since the epoch
local MS = 1.7e12       -- the same instant in milliseconds

-- The job row fields a refused call must leave as they were.
local function row(db, id, now)
  local s = db:state(id, now)
  return { s.owner, s["until"], s.fence, s.done, s.status }
end

describe("the clock check", function()
  it("refuses milliseconds after seconds, naming both values, and changes nothing", function()
    local db = H.fresh("ms")
    finally(function() db:close() end)
    assert.is_true(db:enqueue("a"))
    assert.is_true(db:enqueue("b"))
    assert.are.equal(1, db:claim("a", "w", T, 30))
    local before = { row(db, "a", T), row(db, "b", T) }
    local err = H.error_of(db.claim_next, db, "w", MS, 30)
    assert.truthy(err:find("lease.claim_next: now 1700000000000 is off by a factor of 100", 1, true), err)
    assert.truthy(err:find("clock mark 1700000000 ", 1, true), err)
    assert.truthy(err:find("clock_factor", 1, true) and err:find("[misuse]", 1, true), err)
    -- the lease on a, live in seconds, was not taken over; b not claimed
    err = H.error_of(db.claim, db, "a", "x", MS, 30)
    assert.truthy(err:find("lease.claim: now 1700000000000", 1, true), err)
    assert.are.same(before, { row(db, "a", T), row(db, "b", T) })
    assert.are.same({ "b", 1 }, { H.two(db:claim_next("w", T + 1, 30)) })
  end)

  it("refuses seconds after milliseconds, on every write that takes a now", function()
    local db = H.fresh("s")
    finally(function() db:close() end)
    assert.truthy(db:enqueue_many({ "a", "b", "c" }))
    assert.are.equal(1, db:claim("a", "w", MS, 30000))
    local before = row(db, "a", MS)
    for name, call in pairs({
      claim = function() return db:claim("b", "w", T, 30) end,
      renew = function() return db:renew("a", "w", 1, T, 30) end,
      complete = function() return db:complete("a", "w", 1, T, "r") end,
      fail = function() return db:fail("a", "w", 1, T, "m") end,
      claim_next = function() return db:claim_next("w", T, 30) end,
      complete_many = function() return db:complete_many("w", T, { { id = "a", fence = 1 } }) end,
      retry = function() return db:retry("c", T) end,
      cancel = function() return db:cancel("c", T) end,
    }) do
      local err = H.error_of(call)
      assert.truthy(err:find("lease." .. name .. ": now 1700000000 is off", 1, true), err)
      assert.truthy(err:find("clock mark 1700000000000", 1, true), err)
    end
    assert.are.same(before, row(db, "a", MS))
    assert.are.equal("available", db:state("c", MS).status)
    -- reads on this handle are checked against the mark it last read
    local err = H.error_of(db.counts, db, T)
    assert.truthy(err:find("lease.counts: now 1700000000 is off", 1, true), err)
  end)

  it("refuses it on a handle that never read the mark, in with_lease and tick too", function()
    -- each call on a handle of its own, opened after another stored the
    -- mark: the check reads the mark inside the call, not a copy
    local db, p = H.fresh("fresh")
    assert.truthy(db:enqueue_many({ "a", "b", "c" }))
    assert.are.equal(1, db:claim("a", "w", MS, 30000))
    assert.is_true(db:schedule("s", MS, { every = 60000 }))
    db:close()
    local ran = false
    for name, call in pairs({
      with_lease = function(d)
        return d:with_lease("a", "w", 1, T, function(tx)
          ran = true
          return tx:complete("r")
        end)
      end,
      tick = function(d) return d:tick(T) end,
      claim_many = function(d) return d:claim_many("b", { "x", "y" }, T, 30) end,
      complete_claim_next = function(d) return d:complete_claim_next("a", "w", 1, T, "r", 30) end,
      complete = function(d) return d:complete("a", "w", 1, T, "r") end,
    }) do
      local d = lease.open(p)
      local err = H.error_of(call, d)
      d:close()
      assert.truthy(err:find("lease." .. name .. ": now 1700000000 is off", 1, true), err)
      assert.truthy(err:find("clock mark 1700000000000", 1, true), err)
    end
    assert.is_false(ran)
    db = lease.open(p)
    finally(function() db:close() end)
    assert.are.same({ "w", 1, "running" }, { db:state("a", MS).owner, db:state("a", MS).fence,
                                             db:state("a", MS).status })
    assert.are.same({ "available", "available" }, { db:state("b", MS).status, db:state("c", MS).status })
    assert.are.equal(MS, tonumber(H.sql(p, "SELECT value FROM lease_meta WHERE key = 'clock_mark'")))
  end)

  it("refuses a tx:renew whose now is of another unit, and stores nothing", function()
    local db = H.fresh("txrenew")
    finally(function() db:close() end)
    assert.truthy(db:enqueue_many({ "a" }))
    assert.are.equal(1, db:claim("a", "w", MS, 30000))
    local err = H.error_of(db.with_lease, db, "a", "w", 1, MS + 1, function(tx)
      return tx:renew(30, T)
    end)
    assert.truthy(err:find("lease.tx:renew: now 1700000000 is off", 1, true), err)
    assert.are.equal(MS + 30000, db:state("a", MS)["until"])
    assert.is_nil(db:claim("a", "x", MS + 2, 30000))
    -- within the factor of the mark with_lease's now left, it renews
    assert.is_true(db:with_lease("a", "w", 1, MS + 1, function(tx) return tx:renew(60000, MS + 5) end))
    assert.are.equal(MS + 60005, db:state("a", MS)["until"])
  end)

  it("refuses a tx:renew of another unit than the mark its with_lease made", function()
    -- a lease another client stored by hand: the database has no mark
    -- until with_lease's now becomes it
    local db, p = H.fresh("txrenew0")
    finally(function() db:close() end)
    H.sql(p, "INSERT INTO jobs(id, owner, until, fence) VALUES ('h', 'w', " .. (T + 30) .. ", 1)")
    assert.are.equal("", H.sql(p, "SELECT value FROM lease_meta WHERE key = 'clock_mark'"))
    local err = H.error_of(db.with_lease, db, "h", "w", 1, T, function(tx) return tx:renew(30, MS) end)
    assert.truthy(err:find("lease.tx:renew: now 1700000000000 is off", 1, true), err)
    assert.truthy(err:find("clock mark 1700000000 ", 1, true), err)
    assert.are.equal(T + 30, db:state("h", T)["until"])
  end)

  it("is moved up by with_lease's now", function()
    local db, p = H.fresh("txmark")
    finally(function() db:close() end)
    assert.truthy(db:enqueue_many({ "a", "b" }))
    assert.are.equal(1, db:claim("a", "w", T, 30000))
    assert.is_true(db:with_lease("a", "w", 1, T + 5000, function(tx) return tx:complete("r") end))
    assert.are.equal(T + 5000, tonumber(H.sql(p, "SELECT value FROM lease_meta WHERE key = 'clock_mark'")))
    assert.are.equal("completed", db:state("a", T + 5000).status)
    -- the next write is checked against it
    local err = H.error_of(db.claim, db, "b", "w", T / 1000, 30)
    assert.truthy(err:find("clock mark 1700005000", 1, true), err)
  end)

  it("refuses a run_at or a before in another unit, and never moves the mark to one", function()
    local db, p = H.fresh("also")
    assert.truthy(db:enqueue_many({ "a", "b" }))
    assert.are.equal(1, db:claim("a", "w", T, 30))
    assert.is_true(db:complete("a", "w", 1, T + 1, "r"))
    assert.are.equal(1, db:claim("b", "w", T, 30))
    db:close()
    for _, c in ipairs({
      { "enqueue", "run_at 1700000000000", function(d) return d:enqueue("x", { run_at = MS }) end },
      { "enqueue_many", "run_at 1700000000000", function(d)
        return d:enqueue_many({ "y", { id = "z", run_at = T + 10 }, { id = "z2", run_at = MS } })
      end },
      -- the least time of a batch above the floor of clocks
      { "enqueue_many", "run_at 1700000", function(d)
        return d:enqueue_many({ { id = "y", run_at = 5 }, { id = "z", run_at = T / 1000 },
                                { id = "z2", run_at = T } })
      end },
      { "fail", "run_at 1700000000000", function(d) return d:fail("b", "w", 1, T + 2, "m", { run_at = MS }) end },
      { "fail", "run_at 1700000", function(d) return d:fail("b", "w", 1, T + 2, "m", { run_at = T / 1000 }) end },
      { "prune", "before 1700000000000", function(d) return d:prune(MS) end },
    }) do
      -- a handle of its own for each, that never read the mark
      local d = lease.open(p)
      local err = H.error_of(c[3], d)
      d:close()
      assert.truthy(err:find("lease." .. c[1] .. ": " .. c[2] .. " is off by a factor of 500 ", 1, true), err)
      assert.truthy(err:find("clock mark 1700000000 ", 1, true) and err:find("[misuse]", 1, true), err)
    end
    -- a now and a run_at both of the other unit: the error names the now
    local d = lease.open(p)
    local err = H.error_of(d.fail, d, "b", "w", 1, MS, "m", { run_at = MS + 5 })
    d:close()
    assert.truthy(err:find("lease.fail: now 1700000000000 is off by a factor of 100 ", 1, true), err)
    db = lease.open(p)
    finally(function() db:close() end)
    assert.are.same({ "completed", "running", 1 }, { db:state("a", T + 2).status,
      db:state("b", T + 2).status, db:state("b", T + 2).fence })
    for _, id in ipairs({ "x", "y", "z", "z2" }) do assert.is_nil(db:state(id, T + 2)) end
    -- a handle that read the mark (its claim of a done job did) checks by it
    assert.is_nil(db:claim("a", "w", T + 3, 30))
    err = H.error_of(db.enqueue, db, "x", { run_at = MS })
    assert.truthy(err:find("lease.enqueue: run_at 1700000000000 is off", 1, true), err)
    assert.is_nil(db:state("x", T + 3))
    -- a time within the factor (a date as far as 9999-12-31), a small one
    -- and one that is no clock pass, and the mark stays the highest now
    assert.is_true(db:enqueue("later", { run_at = 253402300799 }))
    assert.is_true(db:enqueue("small", { run_at = 5 }))
    assert.are.equal("retryable", (db:fail("b", "w", 1, T + 2, "m", { run_at = T / 50 })))
    assert.are.equal(1, db:prune(math.huge))
    assert.is_nil(db:state("a", T + 2))
    assert.are.equal(T, tonumber(H.sql(p, "SELECT value FROM lease_meta WHERE key = 'clock_mark'")))
  end)

  it("never refuses small clocks (below 1e6), whatever they are mixed with", function()
    local db = H.fresh("small")
    finally(function() db:close() end)
    assert.truthy(db:enqueue_many({ "a", "b", "c", "d" }))
    assert.are.equal(1, db:claim("a", "w", 0, 10))
    assert.are.equal(1, db:claim("b", "w", 100, 10))
    assert.are.equal(1, db:claim("c", "w", T, 10))
    assert.are.equal(1, db:claim("d", "w", 5, 10))
    assert.are.equal(2, db:claim("a", "w", 999999, 10))
  end)

  it("takes a wider factor, or none, as an option", function()
    local p
    do
      local db
      db, p = H.fresh("opt")
      assert.truthy(db:enqueue_many({ "a", "b", "c" }))
      assert.are.equal(1, db:claim("a", "w", T, 30))
      db:close()
    end
    local wide = lease.open(p, { clock_factor = 1e4 })
    assert.are.equal(1, wide:claim("b", "w", MS, 30))
    wide:close()
    local off = lease.open(p, { clock_check = false })
    assert.are.equal(1, off:claim("c", "w", 1e15, 30))
    off:close()
    for _, o in ipairs({ { clock_factor = 1 }, { clock_factor = 0 }, { clock_factor = "x" },
                         { clock_factor = math.huge }, { clock_check = 1 } }) do
      local err = H.error_of(lease.open, p, o)
      assert.truthy(err:find("bad argument #2 to 'lease.open' (clock_", 1, true), err)
    end
  end)

  it("keeps a pool from waiting on leases it cannot read: it exits with the error", function()
    local db, p = H.fresh("pool")
    assert.truthy(db:enqueue_many({ "a", "b" }))
    -- a lease in milliseconds, which a pool counting seconds would wait on
    assert.are.equal(1, db:claim("a", "other", MS, 60000))
    db:close()
    local w = H.file("w") .. ".lua"
    H.write(w, "return function(job) return 'done' end\n")
    local status, out, err = H.host("pool -j 2 --ttl 5 " .. H.sh(w) .. " " .. H.sh(p), nil, 60)
    assert.are_not.equal(0, status, out)
    assert.truthy((out .. err):find("clock mark 1700000000000", 1, true), out .. err)
  end)
end)

describe("the claim order", function()
  it("gives a job due longer first, however many jobs keep arriving after it", function()
    local db = H.fresh("fair")
    finally(function() db:close() end)
    assert.truthy(db:enqueue_many({ "b1", "b2", "b3" }))   -- a backlog
    assert.is_true(db:enqueue("r"))
    -- r fails at T and is due again at T + 10
    local got = db:claim_next("w", T, 30, 4)
    assert.are.equal(4, #got)
    for _, j in ipairs(got) do
      if j.id ~= "r" then assert.is_true(db:release(j.id, "w", j.fence)) end
    end
    assert.are.equal("retryable", (db:fail("r", "w", 1, T, "boom", { run_at = T + 10 })))
    local order = {}
    for k = 1, 8 do
      -- each round two new jobs arrive (one with data, one plain) and one
      -- is taken: the backlog grows
      assert.is_true(db:enqueue("n" .. k .. "a", { payload = "p" }))
      assert.truthy(db:enqueue_many({ "n" .. k .. "b" }))
      local j = db:claim_next("w", T + 1000 * k, 30, 1)[1]
      order[#order + 1] = j.id
      assert.is_true(db:complete(j.id, "w", j.fence, T + 1000 * k, "ok"))
    end
    -- the backlog released at T and the jobs enqueued while the clock was at
    -- T, before r was due, go first; r before every job enqueued after
    assert.are.same({ "b1", "b2", "b3", "n1a", "n1b", "r", "n2a", "n2b" }, order)
  end)

  it("keeps enqueue order when the first now the database sees is below 0", function()
    -- a job made before the database has a mark is due from 0; a refused
    -- complete at a negative now stores no mark, so a job enqueued after
    -- it is not due earlier than they are
    local db = H.fresh("negative", { clock_check = false })
    finally(function() db:close() end)
    assert.are.equal(3, db:enqueue_many({ "r", "w1", "a" }))
    assert.are.same({ false, "missing" }, { db:complete("zz", "o", 1, -1e6, nil) })
    assert.is_true(db:enqueue("late"))
    local ids = {}
    for _, j in ipairs((db:claim_next("w", 100, 10, { n = 4 }))) do ids[#ids + 1] = j.id end
    assert.are.same({ "r", "w1", "a", "late" }, ids)
  end)

  it("is priority, then the time a job became due, then enqueue order", function()
    local db = H.fresh("order")
    finally(function() db:close() end)
    assert.is_true(db:enqueue("early", { run_at = T + 5 }))
    assert.are.equal(0, #db:claim_next("w", T + 1000, 30, { n = 1, queue = "other" }))  -- the clock passes T + 5
    assert.is_true(db:enqueue("plain"))
    assert.is_true(db:enqueue("late", { run_at = T + 2000 }))
    assert.is_true(db:enqueue("urgent", { priority = -1 }))
    -- a job without run_at shows none, and is available to a caller a little
    -- behind the database's clock
    local s = db:state("plain", T + 500)
    assert.is_nil(s.run_at)
    assert.are.equal("available", s.status)
    local ids = {}
    for _, j in ipairs(db:claim_next("w", T + 3000, 30, 10)) do ids[#ids + 1] = j.id end
    assert.are.same({ "urgent", "early", "plain", "late" }, ids)
  end)

  it("of a database made before due_at: a job due at its run_at, else 0, before every later one", function()
    -- schema version 3 (specs/fixtures), with a scheduled job s enqueued
    -- before an unscheduled u
    local p = H.path("clock-older")
    H.sql(p, H.read((os.getenv("LEASE_SOURCE_DIR") or ".") .. "/specs/fixtures/"
      .. H.backend .. "_schema_v3.sql") .. "\nINSERT INTO jobs(id) VALUES ('s'); INSERT INTO jobs(id)"
      .. " VALUES ('u'); UPDATE lease_queue SET run_at = 5 WHERE id = " .. (H.backend == "pg"
      and "'s'::bytea" or "'s'"))
    local db = lease.open(p)
    finally(function() db:close() end)
    assert.are.equal("s|5\nu|0\n", H.sql(p, "SELECT " .. H.text("id")
      .. ", CAST(due_at AS INTEGER) FROM lease_queue ORDER BY id"))
    -- the clock at T, then a job enqueued: due at T
    assert.are.equal(0, #db:claim_next("w", T, 30, { n = 1, queue = "other" }))
    assert.is_true(db:enqueue("n"))
    local ids = {}
    for _, j in ipairs(db:claim_next("w", T, 30, 10)) do ids[#ids + 1] = j.id end
    assert.are.same({ "u", "s", "n" }, ids)
  end)
end)
