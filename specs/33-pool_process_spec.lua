-- `lease pool` as a real process (the host program build/lease): SIGTERM
-- during a run exits 0 with every job done or back in the queue; two
-- processes on one file never share an owner name; the pool gives the
-- signals' actions back when it returns.
local H = require("helpers")
local lease = H.lease

-- The host program, as H.host finds it.
local function exe()
  local e = os.getenv("LEASE_HOST")
  if not e or e == "" then e = (os.getenv("LEASE_BUILD_DIR") or "build") .. "/lease" end
  return e
end

-- Start `lease <args>` in the background.  Returns a table with pid() (the
-- lease process's id, once it started) and wait(deadline) -> exit status,
-- stdout, stderr (nil when it did not end in time).
local function start(args)
  local base = H.file("bg")
  local cmd = H.sh(exe()) .. " " .. args .. " >" .. H.sh(base .. ".out") .. " 2>" .. H.sh(base .. ".err")
  -- the shell waits for lease and writes its exit status
  os.execute("sh -c " .. H.sh(cmd .. " & echo $! >" .. H.sh(base .. ".pid") .. "; wait $!; echo $? >"
    .. H.sh(base .. ".status")) .. " >/dev/null 2>&1 &")
  local p = {}
  function p.pid()
    for _ = 1, 200 do
      local s = H.read(base .. ".pid")
      if s and s:match("%d+") then return tonumber(s:match("%d+")) end
      lease.sleep(0.02)
    end
    error("the lease process did not start")
  end
  function p.wait(deadline)
    local t0 = lease.now()
    while lease.now() - t0 < deadline do
      local s = H.read(base .. ".status")
      if s and s:match("%d+\n") then
        return tonumber(s:match("%d+")), H.read(base .. ".out"), H.read(base .. ".err")
      end
      lease.sleep(0.05)
    end
    return nil, H.read(base .. ".out"), H.read(base .. ".err")
  end
  return p
end

-- A worker file: each job takes `work` seconds and returns its owner.
local function worker(work)
  local f = H.file("worker") .. ".lua"
  H.write(f, "local lease = require('lease')\nreturn function(job)\n  lease.sleep(" .. work
    .. ")\n  return job.owner\nend\n")
  return f
end

-- Wait until at least n jobs are completed (or fail after 20 s).
local function wait_completed(path, n)
  for _ = 1, 400 do
    local db = lease.open(path, { readonly = true })
    local c = db:counts(lease.now()).completed
    db:close()
    if c >= n then return c end
    lease.sleep(0.05)
  end
  error("fewer than " .. n .. " jobs completed in 20 s")
end

describe("lease pool as a service process", function()
  it("exits 0 on SIGTERM with every job completed or back in the queue, and prints the summary", function()
    local db, p = H.fresh("svc")
    local list = {}
    for i = 1, 60 do list[i] = "j" .. i end
    db:enqueue_many(list, { max_attempts = 1 })
    db:close()
    local proc = start("pool --forever -j 3 --ttl 30 --grace 5 --poll 0.02 " .. H.sh(worker(0.1)) .. " " .. H.sh(p))
    local pid = proc.pid()
    wait_completed(p, 5)
    assert.are.equal(0, H.execute("kill -TERM " .. pid))
    local status, out, err = proc.wait(15)
    assert.are.equal(0, status, tostring(out) .. tostring(err))
    assert.are.equal("", err)
    -- each of the 3 workers gives back the job it claimed with its last result
    assert.truthy(out:find("shutdown           on SIGTERM: 3 jobs given back", 1, true), out)
    local done = tonumber(out:match("jobs done%s+(%d+)"))
    local d = lease.open(p)
    finally(function() d:close() end)
    local c = d:counts(lease.now())
    assert.are.equal(done, c.completed)
    assert.are.equal(60 - done, c.available)
    assert.are.equal(0, c.running)
    assert.are.equal(0, c.discarded)
    assert.is_true(done >= 5 and done < 60, out)
    for _, id in ipairs(list) do
      local st = d:state(id)
      if st.status == "completed" then
        assert.are.equal(lease.hostname() .. ":" .. pid, st.result:match("^(.*):%d+$"))
      else
        assert.are.equal("available", st.status)
        assert.is_nil(st.owner)
      end
    end
  end)

  it("on SIGTERM fails back a job still held after the grace, not counting the attempt", function()
    local db, p = H.fresh("svc")
    db:enqueue("slow", { max_attempts = 1 })
    db:close()
    local proc = start("pool --forever -j 1 --ttl 30 --grace 0.2 " .. H.sh(worker(30)) .. " " .. H.sh(p))
    local pid = proc.pid()
    for _ = 1, 200 do
      if lease.state(p, "slow").status == "running" then break end
      lease.sleep(0.05)
    end
    assert.are.equal("running", lease.state(p, "slow").status)
    H.execute("kill -TERM " .. pid)
    local status, out = proc.wait(10)
    assert.are.equal(0, status, out)
    assert.truthy(out:find("on SIGTERM: 1 jobs given back", 1, true), out)
    local st = lease.state(p, "slow")
    assert.are.equal("available", st.status)
    assert.are.equal("shutdown", st.errors[#st.errors].message)
  end)

  it("drains and exits without --forever; --forever waits for jobs enqueued later", function()
    local db, p = H.fresh("svc")
    db:enqueue("first")
    db:close()
    local status, out = H.host("pool -j 1 --ttl 30 " .. H.sh(worker(0)) .. " " .. H.sh(p), nil, 20)
    assert.are.equal(0, status, out)
    assert.truthy(out:find("jobs done          1\n", 1, true), out)
    local proc = start("pool --forever -j 1 --ttl 30 --poll 0.02 " .. H.sh(worker(0)) .. " " .. H.sh(p))
    local pid = proc.pid()
    lease.sleep(0.3)
    assert.is_nil((proc.wait(0.1)))   -- still running with nothing to do
    assert.is_true(lease.enqueue(p, "later"))
    wait_completed(p, 2)
    H.execute("kill -INT " .. pid)
    status, out = proc.wait(10)
    assert.are.equal(0, status, out)
    assert.truthy(out:find("on SIGINT", 1, true), out)
    assert.are.equal("completed", lease.state(p, "later").status)
  end)

  it("--forever outlives its connections terminated on PostgreSQL, then exits 0 on SIGTERM", function()
    if H.backend ~= "pg" then return end
    local db, p = H.fresh("svc")
    db:enqueue_many({ "a1", "a2", "a3" })
    db:close()
    local proc = start("pool --forever -j 3 --ttl 2 --poll 0.05 " .. H.sh(worker(0)) .. " " .. H.sh(p))
    local pid = proc.pid()
    wait_completed(p, 3)
    H.psql(p, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
      .. " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
    assert.is_true(lease.enqueue(p, "b1"))
    wait_completed(p, 4)
    assert.is_nil((proc.wait(0.1)))   -- still running
    H.execute("kill -TERM " .. pid)
    local status, out, err = proc.wait(10)
    assert.are.equal(0, status, tostring(out) .. tostring(err))
    assert.truthy(out:find("jobs done          4\n", 1, true), out)
    assert.truthy(out:find("database errors    [1-9]"), out)
    assert.truthy(err:find("trying again in", 1, true), err)
  end)

  it("two processes on one file never share an owner name", function()
    local db, p = H.fresh("two")
    local list = {}
    for i = 1, 80 do list[i] = "j" .. i end
    db:enqueue_many(list)
    db:close()
    local w = worker(0.01)
    local a = start("pool -j 3 --ttl 30 " .. H.sh(w) .. " " .. H.sh(p))
    local b = start("pool -j 3 --ttl 30 " .. H.sh(w) .. " " .. H.sh(p))
    local pa, pb = a.pid(), b.pid()
    local sa, oa = a.wait(30)
    local sb, ob = b.wait(30)
    assert.are.equal(0, sa, oa)
    assert.are.equal(0, sb, ob)
    local by_pid = { [pa] = {}, [pb] = {} }
    local d = lease.open(p)
    finally(function() d:close() end)
    for _, id in ipairs(list) do
      local st = d:state(id)
      assert.are.equal("completed", st.status)
      -- the handler returned its owner; the row keeps the owner that completed it
      assert.are.equal(st.owner, st.result)
      local host, pid, n = st.result:match("^(.*):(%d+):(%d+)$")
      assert.are.equal(lease.hostname(), host)
      pid = tonumber(pid)
      assert.truthy(by_pid[pid], st.result)
      assert.truthy(tonumber(n) >= 1 and tonumber(n) <= 3, st.result)
      by_pid[pid][st.result] = true
    end
    for name in pairs(by_pid[pa]) do assert.is_nil(by_pid[pb][name], name) end
  end)

  it("gives the signals' actions back when pool.run returns", function()
    local db, p = H.fresh("restore")
    db:enqueue("a")
    db:close()
    local script = H.file("restore") .. ".lua"
    H.write(script, [[
      local lease = require("lease")
      local pool = require("lease.pool")
      local s = pool.run({ db = arg[1], workers = 1, ttl = 30, handler = function() return "x" end })
      io.stdout:write("ran ", s.done, "\n")
      io.stdout:flush()
      os.execute("kill -TERM " .. lease.pid())
      lease.sleep(2)
      io.stdout:write("still alive\n")
    ]])
    local status, out = H.host(H.sh(script) .. " " .. H.sh(p), nil, 20)
    assert.are.equal("ran 1\n", out)
    -- SIGTERM's default action ended it (the shell reports 128 + 15)
    assert.truthy(status == 15 or status == 143, tostring(status))
  end)

  it("gives the signals' actions back when pool.run cannot start its workers", function()
    local db, p = H.fresh("restore-refused")
    db:enqueue("a")
    db:close()
    local script = H.file("restore_refused") .. ".lua"
    H.write(script, [[
      local lease = require("lease")
      local pool = require("lease.pool")
      -- args the threads cannot copy: the first spawn fails
      local ok, err = pcall(pool.run, { db = arg[1], workers = 1, ttl = 30, handler = function() return 1 end,
                                        args = { f = io.stdout } })
      io.stdout:write(tostring(ok), " ", tostring(err):find(" at t.args.f)", 1, true) and "args refused"
        or tostring(err), "\n")
      io.stdout:flush()
      os.execute("kill -TERM " .. lease.pid())
      lease.sleep(2)
      io.stdout:write("still alive\n")
    ]])
    local status, out = H.host(H.sh(script) .. " " .. H.sh(p), nil, 20)
    assert.are.equal("false args refused\n", out)
    assert.truthy(status == 15 or status == 143, tostring(status))
    assert.are.equal(0, lease.state(p, "a").fence)
  end)

  it("stops on a signal that comes while its workers start, giving back what they claimed", function()
    local db, p = H.fresh("early-signal")
    local ids = {}
    for i = 1, 300 do ids[i] = "j" .. i end
    db:enqueue_many(ids)
    db:close()
    local mark = H.file("early_mark")
    H.write(mark, "")
    -- the first worker to load the file sends SIGTERM to its process
    local w = H.file("early_worker") .. ".lua"
    H.write(w, "local lease = require('lease')\n"
      .. "if os.rename(" .. string.format("%q", mark) .. ", " .. string.format("%q", mark .. ".sent")
      .. ") then os.execute('kill -TERM ' .. lease.pid()) end\n"
      .. "return function() lease.sleep(0.05) return 'ok' end\n")
    local script = H.file("early") .. ".lua"
    H.write(script, [[
      local lease = require("lease")
      local pool = require("lease.pool")
      -- a large args: each worker's copy of it takes a while, so the signal
      -- the first worker sends comes while the others start
      local big = {}
      for i = 1, 300000 do big[i] = i end
      local s = pool.run({ db = arg[1], worker = arg[2], workers = 4, ttl = 30, poll = 0.05, args = big })
      io.stdout:write("interrupted ", tostring(s.interrupted), "\n")
    ]])
    local status, out, err = H.host(H.sh(script) .. " " .. H.sh(p) .. " " .. H.sh(w), nil, 60)
    assert.are.equal(0, status, tostring(out) .. tostring(err))
    assert.are.equal("interrupted TERM\n", out)
    local d = lease.open(p)
    local c = d:counts(lease.now())
    d:close()
    assert.are.same({ 0, 300 }, { c.running, c.available + c.completed })
    assert.is_true(c.available > 0, "every job ran: the signal came too late to test anything")
  end)

  it("runs examples/mail_service.lua: payloads, a retry after backoff, a discard, a clean stop", function()
    local p, outbox = H.path("mail"), H.file("outbox") .. ".txt"
    local db = lease.open(p)
    db:enqueue("m1", { queue = "mail", payload = '{"to":"ann@example.com","subject":"hi"}' })
    db:enqueue("m2", { queue = "mail", payload = '{"to":"flaky@example.com","subject":"again"}' })
    db:enqueue("m3", { queue = "mail", payload = '{"to":"bob@nowhere.invalid"}', max_attempts = 2 })
    db:enqueue("other", { payload = "not for this service" })
    db:close()
    local proc = start("examples/mail_service.lua " .. H.sh(p) .. " " .. H.sh(outbox))
    local pid = proc.pid()
    -- m2 comes back after 1 s, m3 is discarded after its second attempt (1 s later)
    for _ = 1, 200 do
      local c = lease.open(p, { readonly = true })
      local n = c:counts(lease.now(), "mail")
      c:close()
      if n.completed == 2 and n.discarded == 1 then break end
      lease.sleep(0.05)
    end
    H.execute("kill -TERM " .. pid)
    local status, out = proc.wait(15)
    assert.are.equal(0, status, out)
    assert.truthy(out:find("on SIGTERM", 1, true), out)
    local sent = H.read(outbox)
    assert.truthy(sent:find("to=ann@example.com subject=hi job=m1 attempt=1\n", 1, true), sent)
    assert.truthy(sent:find("to=flaky@example.com subject=again job=m2 attempt=2\n", 1, true), sent)
    local m2, m3 = lease.state(p, "m2"), lease.state(p, "m3")
    assert.are.equal("completed", m2.status)
    assert.truthy(m2.errors[1].message:find("connection reset", 1, true))
    assert.are.equal("discarded", m3.status)
    assert.are.equal(2, #m3.errors)
    assert.truthy(m3.errors[2].message:find("no such domain", 1, true))
    assert.are.equal("available", lease.state(p, "other").status)
  end)
end)
