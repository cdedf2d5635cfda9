-- lease.thread: native threads from Lua.  spawn runs fn(...) in
-- a fresh lua_State on an OS thread; values cross as deep copies; join is
-- shaped like pcall; barriers and channels are shared C objects.
--
-- Functions handed to spawn may have no upvalue but _ENV, so every one
-- below takes what it needs as arguments and requires modules itself.
local H = require("helpers")
local T = require("thread_helpers")
local thread = T.thread

-- A thread that waits `s` seconds (on a channel nobody sends to).
local function nap(s) require("lease.thread").channel():recv(s) end

describe("lease.thread", function()
  describe("module", function()
    it("is the same table through require 'lease.thread' and require('lease').thread", function()
      assert.are.equal(require("lease.thread"), require("lease").thread)
      assert.are.equal("function", type(thread.spawn))
      assert.are.equal("function", type(thread.barrier))
      assert.are.equal("function", type(thread.channel))
    end)
  end)

  describe("spawn and join", function()
    it("runs fn(...) and returns true and its results", function()
      local t = thread.spawn(function(a, b) return a + b, a .. b, nil end, 20, 22)
      assert.are.same({ true, 42, "2022", nil, n = 4 }, table.pack(t:join()))
    end)

    it("keeps the number of arguments and results, nils included", function()
      local t = thread.spawn(function(...) return select("#", ...), ... end, nil, 2, nil)
      assert.are.same({ true, 3, nil, 2, nil, n = 5 }, table.pack(t:join()))
      t = thread.spawn(function() end)
      assert.are.same({ true, n = 1 }, table.pack(t:join()))
    end)

    it("gives a fresh state with the standard libraries, lease preloaded and the parent's paths", function()
      rawset(_G, "LEASE_SPEC_GLOBAL", "parent only")
      local t = thread.spawn(function()
        local libs = {}
        for _, name in ipairs({ "string", "table", "math", "io", "os", "coroutine",
                                utf8 and "utf8" or "string", "debug", "package" }) do   -- utf8: 5.3+
          libs[#libs + 1] = type(_G[name])
        end
        local lease = require("lease")
        return table.concat(libs, " "), package.path, package.cpath, lease.version,
          lease.thread == require("lease.thread"), type(package.preload.lease),
          rawget(_G, "LEASE_SPEC_GLOBAL")
      end)
      local ok, libs, path, cpath, version, same, preload, global = t:join()
      rawset(_G, "LEASE_SPEC_GLOBAL", nil)
      assert.is_true(ok)
      assert.are.equal(("table "):rep(9):sub(1, -2), libs)
      assert.are.equal(package.path, path)
      assert.are.equal(package.cpath, cpath)
      assert.are.equal(H.lease.version, version)
      assert.is_true(same)
      assert.are.equal("function", preload)
      assert.is_nil(global)
    end)

    it("lets a thread spawn and join threads of its own", function()
      local t = thread.spawn(function(n)
        local th = require("lease.thread")
        local kids = {}
        for i = 1, n do kids[i] = th.spawn(function(x) return x * x end, i) end
        local sum = 0
        for i = 1, n do
          local ok, v = kids[i]:join()
          assert(ok, v)
          sum = sum + v
        end
        return sum
      end, 4)
      assert.are.same({ true, 30 }, { t:join() })
    end)

    it("raises on a second join", function()
      local t = thread.spawn(function() return 1 end)
      assert.are.same({ true, 1 }, { t:join() })
      assert.matches("thread already joined", H.error_of(t.join, t), 1, true)
    end)

    it("has __name and __tostring saying running, finished or joined", function()
      local gate = thread.channel()
      local t = thread.spawn(function(g) return g:recv(5) end, gate)
      assert.are.equal("lease.thread", getmetatable(t).__name)
      assert.matches("^lease%.thread: 0x%x+ %(running%)$", tostring(t))
      gate:send("go")
      local t0 = T.now()
      while not tostring(t):match("finished") and T.now() - t0 < 5 do nap(0.01) end
      assert.matches("^lease%.thread: 0x%x+ %(finished%)$", tostring(t))
      assert.are.same({ true, "go" }, { t:join() })
      assert.matches("^lease%.thread: 0x%x+ %(joined%)$", tostring(t))
      assert.matches("lease.thread expected", H.error_of(t.join, {}), 1, true)
    end)
  end)

  describe("errors", function()
    it("come back from join as false and the message with a traceback (file:line of fn)", function()
      local function boom(x) error("boom " .. x) end
      local line = debug.getinfo(boom, "S").linedefined
      local ok, msg = thread.spawn(boom, "in thread"):join()
      assert.is_false(ok)
      assert.matches("20%-thread_spec%.lua:" .. line .. ": boom in thread", msg)
      assert.matches("stack traceback:", msg, 1, true)
      assert.matches("in function <[^>]*20%-thread_spec%.lua:" .. line .. ">", msg)
    end)

    it("report runtime errors with their line, and error objects that are not strings", function()
      local function bad() local t = nil; return t.field end
      local line = debug.getinfo(bad, "S").linedefined
      local ok, msg = thread.spawn(bad):join()
      assert.is_false(ok)
      assert.matches("20%-thread_spec%.lua:" .. line .. ": attempt to index .*nil value", msg)   -- 5.1 names the local first
      assert.matches("^%(error object is a table value%)",
        select(2, thread.spawn(function() error({ code = 1 }) end):join()))
      assert.matches("^%(error object is a nil value%)",
        select(2, thread.spawn(function() error() end):join()))
      assert.are.equal("custom", select(2, thread.spawn(function()
        error(setmetatable({}, { __tostring = function() return "custom" end }))
      end):join()))
    end)

    it("refuse a function with upvalues at spawn, naming the upvalue", function()
      local x = 1
      local e = H.error_of(thread.spawn, function() return x end)
      assert.matches("bad argument #1 to 'lease.thread.spawn' (cannot copy a function with upvalue 'x'", e, 1, true)
      assert.matches("fn must be a Lua function, got a C function", H.error_of(thread.spawn, print), 1, true)
      assert.matches("bad argument #1 to 'lease.thread.spawn' (fn must be a function, got 42)",
        H.error_of(thread.spawn, 42), 1, true)
    end)
  end)

  describe("copying values", function()
    -- Send values through a thread and back: returns what came back.
    local function roundtrip(...)
      local r = table.pack(thread.spawn(function(...) return ... end, ...):join())
      assert.is_true(r[1])
      return table.unpack(r, 2, r.n)
    end

    it("keeps nil, booleans, integer and float subtypes, and strings with zero bytes #lua53", function()
      local vals = table.pack(nil, true, false, 3, 3.0, -0.0, math.maxinteger, math.mininteger,
        1 / 0, -1 / 0, 0.1, "a\0b\0", "", ("x"):rep(100000) .. "\0")
      local back = table.pack(roundtrip(table.unpack(vals, 1, vals.n)))
      assert.are.equal(vals.n, back.n)
      for i = 1, vals.n do
        assert.are.equal(vals[i], back[i])
        assert.are.equal(math.type(vals[i]), math.type(back[i]))
      end
      assert.are.equal("-0.0", tostring(back[6]))
      local nan = roundtrip(0 / 0)
      assert.is_true(nan ~= nan)
      -- and inside the thread, too
      local ok, kinds = thread.spawn(function(a, b, s)
        return math.type(a) .. " " .. math.type(b) .. " " .. #s .. " " .. s:byte(2)
      end, 3, 3.0, "a\0b"):join()
      assert.is_true(ok)
      assert.are.equal("integer float 3 0", kinds)
    end)

    it("keeps cycles, shared subtables and tables used as keys", function()
      local shared = { 1, 2 }
      local root = { a = shared, b = shared, list = { shared } }
      root.self = root
      shared.up = root
      root[shared] = "table key"
      local ok, facts, back = thread.spawn(function(t)
        return { t.a == t.b, t.list[1] == t.a, t.self == t, t.a.up == t, t[t.a] }, t
      end, root):join()
      assert.is_true(ok)
      assert.are.same({ true, true, true, true, "table key" }, facts)
      assert.are_not.equal(root, back)
      assert.are.equal(back, back.self)
      assert.are.equal(back.a, back.b)
      assert.are.equal(back.a, back.list[1])
      assert.are.equal(back, back.a.up)
      assert.are.equal("table key", back[back.a])
      assert.are.same({ 1, 2 }, { back.a[1], back.a[2] })
    end)

    it("copies functions without upvalues, with their debug information", function()
      local function double(x) return x * 2 end
      local ok, v, src, f = thread.spawn(function(fn, x)
        return fn(x), debug.getinfo(fn, "S").short_src, function(y) return y + 1 end
      end, double, 21):join()
      assert.is_true(ok)
      assert.are.equal(42, v)
      assert.matches("20%-thread_spec%.lua$", src)
      assert.are.equal(8, f(7))
    end)

    it("copies tables 200 levels deep and refuses deeper ones", function()
      local function nest(n)
        local t = { leaf = true }
        for _ = 2, n do t = { x = t } end
        return t
      end
      local ok, depth = thread.spawn(function(t)
        local d = 1
        while t.x do t, d = t.x, d + 1 end
        return d
      end, nest(200)):join()
      assert.is_true(ok)
      assert.are.equal(200, depth)
      assert.matches("bad argument #2 to 'lease.thread.spawn' (cannot copy tables nested deeper than 200 levels at t.x.x.x",
        H.error_of(thread.spawn, function() end, nest(201)), 1, true)
      local ok2, msg = thread.spawn(function()
        local t = {}
        for _ = 1, 300 do t = { t } end
        return t
      end):join()
      assert.is_false(ok2)
      assert.matches("^result #1: cannot copy tables nested deeper than 200 levels at t%[1%]%[1%]", msg)
    end)

    it("refuses what cannot be copied at spawn, naming its type, position and path", function()
      local f = function() end
      local co = coroutine.create(function() end)
      local db = H.fresh()
      local x = 1
      local cases = {
        { { 1, { a = { 1, 2, co } } }, "bad argument #3 to 'lease.thread.spawn' (cannot copy a coroutine at t.a[3])" },
        { { co }, "bad argument #2 to 'lease.thread.spawn' (cannot copy a coroutine)" },
        { { db }, "bad argument #2 to 'lease.thread.spawn' (cannot copy a lease.db (userdata))" },
        -- Lua 5.1 metatables carry no __name to say which userdata
        { { io.stdout }, _VERSION == "Lua 5.1" and "(cannot copy a userdata)" or "(cannot copy a FILE* (userdata))" },
        { { { cb = print } }, "(cannot copy a C function at t.cb)" },
        { { setmetatable({}, {}) }, "(cannot copy a table with a metatable)" },
        { { { deep = { setmetatable({}, {}) } } }, "(cannot copy a table with a metatable at t.deep[1])" },
        { { { f = function() return x end } }, "(cannot copy a function with upvalue 'x' (only _ENV can cross to another thread; pass 'x' as an argument) at t.f)" },
        { { { [co] = 1 } }, "(cannot copy a coroutine used as a table key)" },
        { { { a = { [co] = 1 } } }, "(cannot copy a coroutine used as a table key in t.a)" },
        { { { ["a key"] = { [2.5] = co } } }, "(cannot copy a coroutine at t[\"a key\"][2.5])" },
        { { thread.spawn(f) }, "(cannot copy a lease.thread (userdata))" },
      }
      for _, c in ipairs(cases) do
        local args = c[1]
        assert.matches(c[2], H.error_of(thread.spawn, f, table.unpack(args)), 1, true)
      end
      db:close()
    end)

    it("refuses what cannot be copied back at join, naming the result and path", function()
      local ok, msg = thread.spawn(function()
        return 1, { co = coroutine.create(function() end) }
      end):join()
      assert.is_false(ok)
      assert.are.equal("result #2: cannot copy a coroutine at t.co", msg)
      ok, msg = thread.spawn(function() return require("lease").open(":memory:") end):join()
      assert.is_false(ok)
      assert.are.equal("result #1: cannot copy a lease.db (userdata)", msg)
    end)
  end)

  describe("barrier", function()
    it("blocks until n threads arrived, then releases them all", function()
      local b, passed = thread.barrier(2), thread.channel()
      local t = thread.spawn(function(bar, out) out:send(bar:wait()) end, b, passed)
      assert.are.same({ nil, "timeout" }, { passed:recv(0.2) })   -- still waiting for us
      local mine = b:wait()
      local theirs = passed:recv(5)
      assert.are.equal("boolean", type(theirs))
      assert.is_true(mine ~= theirs)   -- exactly one of the two got true
      assert.is_true((t:join()))
    end)

    it("returns true to exactly one thread per round, round after round", function()
      local N, ROUNDS = 4, 50
      local b, out = thread.barrier(N), thread.channel()
      local ts = {}
      for i = 1, N do
        ts[i] = thread.spawn(function(bar, o, rounds)
          for r = 1, rounds do o:send({ r, bar:wait() }) end
        end, b, out, ROUNDS)
      end
      local trues = {}
      for _ = 1, N * ROUNDS do
        local m = out:recv(10)
        trues[m[1]] = (trues[m[1]] or 0) + (m[2] and 1 or 0)
      end
      for r = 1, ROUNDS do assert.are.equal(1, trues[r]) end
      for i = 1, N do assert.is_true((ts[i]:join())) end
    end)

    it("with n = 1 never blocks", function()
      local b = thread.barrier(1)
      for _ = 1, 3 do assert.is_true(b:wait()) end
    end)

    it("refuses a bad n, and has __name and __tostring", function()
      assert.matches("bad argument #1 to 'lease.thread.barrier' (n must be an integer from 1 to 2^31-1, got 0)",
        H.error_of(thread.barrier, 0), 1, true)
      assert.matches("got 1.5", H.error_of(thread.barrier, 1.5), 1, true)
      assert.matches("got a string", H.error_of(thread.barrier, "2"), 1, true)
      local b = thread.barrier(3)
      assert.are.equal("lease.barrier", getmetatable(b).__name)
      assert.matches("^lease%.barrier: 0x%x+ %(n = 3%)$", tostring(b))
    end)
  end)

  describe("channel", function()
    it("delivers copies first in, first out", function()
      local ch = thread.channel()
      local msg = { list = { 1, 2 } }
      assert.is_true(ch:send(msg))
      msg.list[1] = "changed after send"
      assert.is_true(ch:send("second"))
      assert.are.same({ list = { 1, 2 } }, ch:recv())
      assert.are.equal("second", ch:recv())
    end)

    it("gives nil, 'timeout' when nothing comes in time", function()
      local ch = thread.channel()
      local t0 = T.now()
      assert.are.same({ nil, "timeout" }, { ch:recv(0.2) })
      local waited = T.now() - t0
      assert.is_true(waited >= 0.19, "returned after " .. waited .. " s")
      assert.are.same({ nil, "timeout" }, { ch:recv(0) })
    end)

    it("passes values between threads, and a sender blocks while the channel is full", function()
      local ch, done = thread.channel(2), thread.channel()
      assert.is_true(ch:send("a"))
      assert.is_true(ch:send("b"))
      local t = thread.spawn(function(c, d)
        c:send("c")          -- blocks: capacity 2
        d:send("sent")
      end, ch, done)
      assert.are.same({ nil, "timeout" }, { done:recv(0.2) })
      assert.matches("(0x%x+ %(running%))", tostring(t))
      assert.are.equal("a", ch:recv())          -- makes room
      assert.are.equal("sent", done:recv(5))
      assert.are.equal("b", ch:recv())
      assert.are.equal("c", ch:recv())
      assert.is_true((t:join()))
      assert.matches("^lease%.channel: 0x%x+ %(0 queued, capacity 2%)$", tostring(ch))
    end)

    it("after close delivers what is queued, then nil, 'closed'; send gives false, 'closed'", function()
      local ch = thread.channel()
      ch:send(1)
      ch:send(2)
      assert.is_true(ch:close())
      assert.is_true(ch:close())   -- again: nothing happens
      assert.are.same({ false, "closed" }, { ch:send(3) })
      assert.are.equal(1, ch:recv())
      assert.are.equal(2, ch:recv(0))
      assert.are.same({ nil, "closed" }, { ch:recv() })
      assert.matches("closed%)$", tostring(ch))
    end)

    it("wakes blocked receivers and senders when another thread closes it", function()
      local empty, full = thread.channel(), thread.channel(1)
      full:send("x")
      local r = thread.spawn(function(c) return c:recv() end, empty)
      local s = thread.spawn(function(c) return c:send("y") end, full)
      nap(0.1)
      empty:close()
      full:close()
      assert.are.same({ true, nil, "closed" }, { r:join() })
      assert.are.same({ true, false, "closed" }, { s:join() })
      assert.are.equal("x", full:recv())
    end)

    it("lives as long as any state holds it, and travels inside values", function()
      local t = thread.spawn(function()
        local th = require("lease.thread")
        local ch, inner = th.channel(), th.channel()
        inner:send("from a thread that is gone")
        ch:send({ inner = inner, b = th.barrier(1) })
        return ch
      end)
      local ok, ch = t:join()
      assert.is_true(ok)
      collectgarbage()
      local m = ch:recv(0)
      assert.are.equal("from a thread that is gone", m.inner:recv(0))
      assert.is_true(m.b:wait())
    end)

    it("refuses nil, values that cannot be copied, and bad arguments", function()
      local ch = thread.channel()
      assert.matches("bad argument #1 to 'send' (value must not be nil", H.error_of(function() ch:send(nil) end), 1, true)
      assert.matches("bad argument #1 to 'send' (cannot copy a coroutine at t.list[2])",
        H.error_of(function() ch:send({ list = { 1, coroutine.create(function() end) } }) end), 1, true)
      assert.matches("bad argument #1 to 'recv' (timeout must be a finite number of seconds >= 0 or nil, got -1)",
        H.error_of(function() ch:recv(-1) end), 1, true)
      assert.matches("got %-?nan", H.error_of(function() ch:recv(0 / 0) end))
      assert.matches("got a string", H.error_of(function() ch:recv("1") end), 1, true)
      for _, bad in ipairs({ 0, -1, 1.5, "3" }) do
        assert.matches("bad argument #1 to 'lease.thread.channel' (capacity must be an integer >= 1 or nil",
          H.error_of(thread.channel, bad), 1, true)
      end
      assert.are.equal("lease.channel", getmetatable(ch).__name)
      assert.are.same({ nil, "timeout" }, { ch:recv(0) })   -- nothing was queued by the refusals
    end)
  end)

  describe("garbage collection", function()
    -- The module pins itself (RTLD_NODELETE): without that, lua.c's final
    -- lua_close unloads lease.so under the threads still running its code,
    -- and this script dies of SIGSEGV now and then.
    it("never blocks or kills: threads left running are detached and the process exits cleanly", function()
      local ok, status, out, err = T.run([[
        local thread = require("lease.thread")
        local monotime = require("system").monotime
        local never = thread.channel()
        for i = 1, 4 do
          thread.spawn(function(ch) return ch:recv() end, never)   -- blocked for good
        end
        thread.spawn(function() local x = 0 while true do x = x + 1 end end)   -- busy for good
        for _ = 1, 2 do   -- forever waking up inside the module's code, also while Lua
          thread.spawn(function()   -- closes the main state and unloads C libraries
            local ch = require("lease.thread").channel()
            while true do ch:recv(0.0005) end
          end)
        end
        thread.spawn(function() error("must never be printed") end)
        local slow = thread.spawn(function()
          require("lease.thread").channel():recv(0.3)
          return "late"
        end)
        local t0 = monotime()
        slow = nil
        collectgarbage(); collectgarbage()
        local took = monotime() - t0
        io.write(took < 0.25 and "collected without waiting\n" or ("gc took " .. took .. " s\n"))
      ]])
      assert.are.equal("", err)
      assert.are.equal("collected without waiting\n", out)
      assert.is_true(ok)
      assert.are.equal(0, status)
    end)
  end)
end)
