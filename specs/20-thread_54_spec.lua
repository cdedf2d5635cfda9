-- lease.thread's __close under Lua 5.4's `local x <close>` syntax, which
-- other Lua versions cannot parse: this file runs only on 5.4 (the
-- _54_spec suffix).
local T = require("thread_helpers")
local thread = T.thread

describe("lease.thread on Lua 5.4", function()
  it("joins at scope exit with <close>", function()
    local ch = thread.channel()
    do
      local t <close> = thread.spawn(function(out)   -- luacheck: ignore 211 (closed at the end of the block)
        require("lease.thread").channel():recv(0.2)
        out:send("finished")
      end, ch)
    end
    -- no wait here: __close waited for the thread
    assert.are.equal("finished", ch:recv(0))
  end)
end)
