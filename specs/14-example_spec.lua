-- The main job until the worker pool lands: examples/stale_worker.lua plays
-- the seed's scenario on a real file and checks itself.
local H = require("helpers")

describe("examples/stale_worker.lua", function()
  it("shows the stale worker's renew and complete refused and B's result stored", function()
    local p = H.path("story")
    local build = os.getenv("LEASE_BUILD_DIR") or "build"
    local cmd = "LUA_CPATH=" .. H.sh(build .. "/?.so;;") .. " " .. H.lua() .. " examples/stale_worker.lua "
      .. H.sh(p) .. " 2>&1"
    local out, ok, code = H.capture(cmd)
    assert.is_true(ok, out)
    assert.are.equal(0, code)
    assert.truthy(out:find("A  wakes up, renews with fence 1%s+%-> false, not_owner"), out)
    assert.truthy(out:find("A  completes with fence 1%s+%-> false, not_owner"), out)
    assert.truthy(out:find("B  completes with fence 2%s+%-> true\n"), out)
    assert.truthy(out:find("ok: the stale worker's writes were refused", 1, true), out)
    -- and the file holds what it printed
    local s = H.lease.state(p, "invoice-42")
    assert.are.same({ "B", 2, true, "B's total: 120" }, { s.owner, s.fence, s.done, s.result })
  end)
end)
