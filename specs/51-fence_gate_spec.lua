-- db:fence_gate / lease.fence_gate / tx:fence_gate: per resource, the
-- largest fence that passed.  A smaller fence returns false, "stale_fence"
-- and stores nothing; equal or larger returns true and is stored.  Raced
-- by threads and by processes, the stored fence never goes down and every
-- answer agrees with it.
local H = require("helpers")
local T = require("thread_helpers")
local lease = H.lease

-- The stored fences, read through another client: "resource|fence" lines
-- (on PostgreSQL resource is bytea, shown as its text).
local function fences(p)
  if H.backend == "pg" then
    return H.psql(p, "SELECT encode(resource, 'escape'), fence FROM lease_fences ORDER BY resource")
  end
  return H.sqlite3(p, "SELECT resource, fence FROM lease_fences ORDER BY resource")
end

describe("fence_gate", function()
  it("passes equal or larger fences, refuses smaller ones and stores nothing then", function()
    local db, p = H.fresh("gate")
    finally(function() db:close() end)
    assert.is_true(db:fence_gate("invoice-store", 5))
    assert.are.equal("invoice-store|5\n", fences(p))
    assert.are.same({ false, "stale_fence" }, { db:fence_gate("invoice-store", 4) })
    assert.are.same({ false, "stale_fence" }, { db:fence_gate("invoice-store", 0) })
    assert.are.equal("invoice-store|5\n", fences(p))
    assert.is_true(db:fence_gate("invoice-store", 5))
    assert.are.equal("invoice-store|5\n", fences(p))
    assert.is_true(db:fence_gate("invoice-store", 9))
    assert.are.equal("invoice-store|9\n", fences(p))
    -- resources are independent; names are bytes
    assert.is_true(db:fence_gate("a\0b", 1))
    assert.are.same({ false, "stale_fence" }, { db:fence_gate("invoice-store", 8) })
    local zero = H.backend == "pg" and "'\\x610062'::bytea" or "CAST(X'610062' AS TEXT)"
    assert.are.equal("1\n", H.sql(p, "SELECT fence FROM lease_fences WHERE resource = " .. zero))
    assert.are.equal("9\n", H.sql(p, "SELECT fence FROM lease_fences WHERE resource = 'invoice-store'"))
    -- the contract's jobs table is untouched
    assert.are.same({}, H.snapshot(p))
  end)

  it("works as a path function on a file that only gates", function()
    local p = H.path("gate-only")
    assert.is_true(lease.fence_gate(p, "r", 3))
    assert.are.same({ false, "stale_fence" }, { lease.fence_gate(p, "r", 2) })
    assert.is_true(lease.fence_gate(p, "r", 3))
    assert.are.equal("r|3\n", fences(p))
    assert.are.equal("0\n", H.sql(p, "SELECT count(*) FROM jobs"))
  end)

  it("checks its arguments before touching the database", function()
    local db, p = H.fresh("gate-args")
    finally(function() db:close() end)
    assert.is_true(db:fence_gate("r", 2))
    assert.matches("bad argument #1 to 'fence_gate' (resource must be a non-empty string, got an empty string)",
      H.error_of(function() local _ = db:fence_gate("", 1) end), 1, true)
    assert.matches("bad argument #2 to 'fence_gate' (fence must be an integer >= 0, got -1)",
      H.error_of(function() local _ = db:fence_gate("r", -1) end), 1, true)
    assert.matches("bad argument #2 to 'fence_gate' (fence must be an integer >= 0, got 2.5)",
      H.error_of(function() local _ = db:fence_gate("r", 2.5) end), 1, true)
    assert.matches("bad argument #3 to 'lease.fence_gate' (fence must be an integer >= 0, got a string)",
      H.error_of(lease.fence_gate, p, "r", "3"), 1, true)
    assert.are.equal("r|2\n", fences(p))
  end)

  it("raises the database's error on a read-only handle and stores nothing", function()
    local db, p = H.fresh("gate-ro")
    assert.is_true(db:fence_gate("r", 2))
    db:close()
    local ro = lease.open(p, { readonly = true })
    finally(function() ro:close() end)
    assert.matches("^lease%.fence_gate: .*%[readonly%]", H.error_of(ro.fence_gate, ro, "r", 3))
    assert.are.equal("r|2\n", fences(p))
  end)

  it("inside with_lease commits with the transaction and rolls back with it", function()
    local db, p = H.fresh("gate-tx")
    finally(function() db:close() end)
    db:enqueue("job")
    local f = db:claim("job", "A", 100, 30)
    assert.is_true(db:fence_gate("store", 1))
    H.error_of(db.with_lease, db, "job", "A", f, 110, function(tx)
      assert.is_true(tx:fence_gate("store", 7))
      error("rolled back")
    end)
    assert.are.equal("store|1\n", fences(p))
    assert.is_true(db:with_lease("job", "A", f, 110, function(tx)
      assert.is_true(tx:fence_gate("store", 7))
      assert.are.same({ false, "stale_fence" }, { tx:fence_gate("store", 6) })
      assert.is_true(tx:fence_gate("fresh", 1))   -- a new resource in the same transaction
    end))
    assert.are.equal("fresh|1\nstore|7\n", fences(p))
  end)
end)

-- One racer: `n` gate calls on `path` with fences drawn from 1..max
-- (seeded by k), from the moment `start` on.  Returns its log, one
-- "fence ok reason" line per call, in the order it made them.
-- Self-contained: it runs in threads and in other processes.
local function gate_racer(path, k, n, max, start)
  local lease_ = require("lease")
  local db = lease_.open(path)
  local seed = k * 7919 + 17
  local lines = {}
  while lease_.now() < start do lease_.sleep(0.0005) end
  for _ = 1, n do
    seed = (seed * 1103515245 + 12345) % 2147483648
    local f = seed % max + 1
    local ok, why = db:fence_gate("shared", f)
    lines[#lines + 1] = string.format("%d %s %s", f, tostring(ok), tostring(why))
  end
  db:close()
  return table.concat(lines, "\n")
end

-- Check the logs of racers against the gate's rule, in the order each
-- racer made its calls: per racer, a refused fence is below one that had
-- passed (in any racer) and never above the largest fence it saw pass;
-- every fence that passed is >= every fence this racer saw pass earlier;
-- the stored fence is the largest that passed, and the largest drawn.
local function check_logs(p, logs)
  local max_passed, max_drawn = 0, 0
  local passed_any = {}
  for _, log in ipairs(logs) do
    for f, ok in log:gmatch("(%d+) (%a+)") do
      f = tonumber(f)
      if ok == "true" then
        passed_any[f] = true
        if f > max_passed then max_passed = f end
      end
      if f > max_drawn then max_drawn = f end
    end
  end
  for r, log in ipairs(logs) do
    local own_max = 0
    for f, ok, why in log:gmatch("(%d+) (%a+) ([%w_]+)") do
      f = tonumber(f)
      if ok == "true" then
        -- never down: what this racer saw pass before stays at or below
        assert(f >= own_max, ("racer %d: fence %d passed after %d had passed"):format(r, f, own_max))
        own_max = f
      else
        assert(why == "stale_fence", ("racer %d: reason %s"):format(r, why))
        -- refused: a larger fence had passed somewhere
        local larger = false
        for g in pairs(passed_any) do if g > f then larger = true break end end
        assert(larger, ("racer %d: fence %d refused, but no larger fence passed"):format(r, f))
        -- and a fence this racer saw pass is no larger than what it is refused against
        assert(f < max_passed)
      end
    end
  end
  assert.are.equal(max_drawn, max_passed)
  assert.are.equal("shared|" .. max_passed .. "\n", fences(p))
end

describe("fence_gate raced", function()
  it("by many lease.threads: the stored fence never goes down", function()
    local p = H.path("gate-threads")
    assert.is_true(lease.fence_gate(p, "shared", 0))
    local start = lease.now() + 0.2
    local ts = {}
    for k = 1, 8 do ts[k] = T.thread.spawn(gate_racer, p, k, 150, 400, start) end
    local logs = {}
    for k = 1, 8 do
      local ok, log = ts[k]:join()
      assert.is_true(ok, log)
      logs[k] = log
    end
    check_logs(p, logs)
  end)

  it("by several processes: the stored fence never goes down", function()
    local p = H.path("gate-procs")
    assert.is_true(lease.fence_gate(p, "shared", 0))
    local build = os.getenv("LEASE_BUILD_DIR") or "build"
    local start = lease.now() + 0.5
    local pipes = {}
    for k = 1, 4 do
      local script = H.file("gate-proc") .. ".lua"
      H.write(script, ([[
        package.cpath = %q .. package.cpath
        local racer = (loadstring or load)(%q, "racer", "b")
        io.write(racer(%q, %d, 150, 400, %.6f))
      ]]):format(build .. "/?.so;", string.dump(gate_racer), p, 100 + k, start))
      pipes[k] = { script = script, p = assert(io.popen(T.lua() .. " " .. H.sh(script) .. " 2>&1")) }
    end
    local logs = {}
    for k = 1, 4 do
      logs[k] = pipes[k].p:read("*a")
      pipes[k].p:close()
      os.remove(pipes[k].script)
      assert.matches("^%d+ %a+ [%w_]+", logs[k])
    end
    check_logs(p, logs)
  end)

  it("one winner per fence among workers gating through with_lease", function()
    -- Workers claim one job again and again and, inside with_lease, pass
    -- the gate with their fence and write a row, then release the job for
    -- the next claim (a lease long enough that a loaded machine does not
    -- end it first): each fence is held by one worker at a time, so each
    -- fence has at most one row, and the gate's fence is the largest.
    local db, p = H.fresh("gate-wl")
    db:enqueue("job")
    db:close()
    H.sql(p, "CREATE TABLE out(fence INTEGER, owner TEXT)")
    local start = lease.now() + 0.2
    local ts = {}
    for k = 1, 6 do
      ts[k] = T.thread.spawn(function(path, owner, t0)
        local lease_ = require("lease")
        local h = lease_.open(path)
        while lease_.now() < t0 do lease_.sleep(0.0005) end
        local wrote = 0
        for _ = 1, 60 do
          local f = h:claim("job", owner, lease_.now(), 5)
          if f then
            local ok = h:with_lease("job", owner, f, lease_.now(), function(tx)
              local passed = tx:fence_gate("store", f)
              assert(passed, "a fence just claimed is the largest")
              tx:exec("INSERT INTO out VALUES (?, ?)", f, owner)
            end)
            if ok then wrote = wrote + 1 end
            h:release("job", owner, f)
          else
            lease_.sleep(0.001)
          end
        end
        h:close()
        return wrote
      end, p, "w" .. k, start)
    end
    local total = 0
    for k = 1, 6 do
      local ok, wrote = ts[k]:join()
      assert.is_true(ok, wrote)
      total = total + wrote
    end
    assert.is_true(total > 0)
    assert.are.equal("0\n", H.sql(p, "SELECT count(*) FROM (SELECT fence FROM out GROUP BY fence HAVING count(*) > 1) AS t"))
    assert.are.equal(H.sql(p, "SELECT max(fence) FROM out"),
      H.sql(p, "SELECT fence FROM lease_fences WHERE resource = 'store'"))
    assert.are.equal(tostring(total) .. "\n", H.sql(p, "SELECT count(*) FROM out"))
  end)
end)
