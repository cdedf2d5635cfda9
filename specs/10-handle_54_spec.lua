-- The handle's __close under Lua 5.4's `local x <close>` syntax, which
-- other Lua versions cannot parse: this file runs only on 5.4 (the
-- _54_spec suffix).  The same close is what db:close() does everywhere.
local H = require("helpers")
local lease = H.lease

describe("lease.db on Lua 5.4", function()
  it("closes at the end of a <close> scope", function()
    local p = H.path()
    local kept
    do
      local db <close> = lease.open(p)
      db:enqueue("a")
      kept = db
    end
    assert.are.equal("lease.db (closed)", tostring(kept))
    -- the last connection closed: SQLite checkpointed and removed the WAL file
    assert.is_false(H.exists(p .. "-wal"))
    assert.is_true(lease.state(p, "a") ~= nil)
  end)
end)
