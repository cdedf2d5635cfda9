-- The pool's clock: every `now` a pool passes to the database is
-- db:server_now() (the server's clock on PostgreSQL; on SQLite the same as
-- lease.now()), never the worker's local clock.  A worker file sets its
-- thread's lease.now an hour ahead, as a host whose clock is off would: the
-- leases are still stored relative to the database's clock, with_lease and
-- complete are granted, nothing is refused.
local H = require("helpers")
local lease = H.lease
local pool = require("lease.pool")

describe("lease.pool's clock", function()
  it("is the database's (db:server_now), not the worker's lease.now", function()
    local db, p = H.fresh("pool-clock")
    db:enqueue_many({ "a", "b", "c" })
    db:close()
    local worker = H.file("skewed") .. ".lua"
    H.write(worker, [[
      local lease = require("lease")
      local real = lease.now
      lease.now = function() return real() + 3600 end   -- this host's clock is an hour ahead
      return function(job)
        local own = lease.open(job.args.path)
        local until_, now = own:state(job.id)["until"], own:server_now()
        own:close()
        local ok, why = job.with_lease(function(tx) return tx:exec("SELECT 1") end)
        return string.format("%.6f %.6f %s %s", until_, now, tostring(ok), tostring(why))
      end
    ]])
    finally(function() os.remove(worker) end)
    local s = pool.run({ db = p, worker = worker, workers = 2, ttl = 10, poll = 0.01,
                         args = { path = p } })
    assert.are.same({}, s.failed)
    assert.are.equal(3, s.done)
    assert.are.equal(0, s.refused)
    for _, id in ipairs({ "a", "b", "c" }) do
      local r = lease.state(p, id)
      assert.is_true(r.done)
      local until_, now, ok = r.result:match("^(%S+) (%S+) (%S+)")
      until_, now = tonumber(until_), tonumber(now)
      -- claimed at the database's now (until - ttl), read back just after it
      assert.is_true(until_ - 10 <= now and until_ - 10 > now - 60, r.result)
      assert.are.equal("true", ok, r.result)
    end
  end)
end)
