-- lease web: the host program serving a database over HTTP, started on a
-- port the system picks with a known --token, asked with curl (pages,
-- actions, refusals) and clicked through in headless Chromium over the
-- DevTools protocol (--remote-debugging-pipe: a real mouse click on a
-- form's button).  Checks the pages' content (a job id and a payload of
-- "<script>" come out escaped), that a POST without the token or with a
-- wrong one is 403 and changes nothing in the database, that one with the
-- token cancels, retries, pauses and resumes, and that a Host other than
-- a loopback name is refused.  Backend-neutral: runs on SQLite and
-- PostgreSQL.  The Chromium cases are pending when chromium is missing
-- (scripts/setup installs it).
local H = require("helpers")
local lease = H.lease
local json = require("dkjson")

local TOKEN = "t0ken-for-the-spec"
local EVIL = "<script>alert(1)</script>"
local EVIL_PAYLOAD = "<script>alert('payload')</script>&"

--- The host program's path.
local function exe()
  local e = os.getenv("LEASE_HOST")
  if not e or e == "" then e = (os.getenv("LEASE_BUILD_DIR") or "build") .. "/lease" end
  return e
end

--- Start `lease web DB --port 0 --token TOKEN extra...` in the background
-- (under timeout, so it never outlives the spec); wait for its address.
-- @treturn table {pid=, port=, out=, err=}
local function start(db, extra)
  local base = H.file("web")
  local cmd = string.format("timeout 300 %s web %s --port 0 --token %s %s >%s 2>%s & echo $!",
    H.sh(exe()), H.sh(db), TOKEN, extra or "", H.sh(base .. ".out"), H.sh(base .. ".err"))
  local pid = H.capture(cmd):match("(%d+)")
  local srv = { pid = pid, out = base .. ".out", err = base .. ".err" }
  for _ = 1, 200 do
    local text = H.read(srv.out) or ""
    srv.port = text:match("http://[^/]*:(%d+)/")
    if srv.port then srv.banner = text; return srv end
    lease.sleep(0.05)
  end
  error("lease web did not start: " .. tostring(H.read(srv.err)))
end

--- Stop a server start() started.
local function stop(srv)
  if srv and srv.pid then os.execute("kill " .. srv.pid .. " 2>/dev/null") end
end

--- curl with the shell words args against the server; returns the HTTP
-- status (a number) and the body.
local function curl(srv, path, args)
  local out = H.capture(string.format("curl -s -m 20 -w '\\n%%{http_code}' %s %s", args or "",
    H.sh("http://127.0.0.1:" .. srv.port .. path)))
  local body, code = out:match("^(.*)\n(%d+)$")
  return tonumber(code), body
end

--- A form POST (curl --data-raw) of fields, in order.
local function post(srv, path, fields)
  local parts = {}
  for _, kv in ipairs(fields) do
    parts[#parts + 1] = kv[1] .. "=" .. kv[2]:gsub("[^%w%-%._~]", function(c)
      return string.format("%%%02X", c:byte()) end)
  end
  return curl(srv, path, "--data-raw " .. H.sh(table.concat(parts, "&")))
end

--- A database with four queues' worth of history, the ledger on: a
-- completed job, a failed one (retryable), a held one whose id and payload
-- are HTML, a paused queue.
local function history()
  local p = H.path("web")
  local db = lease.open(p, { events = true })
  local now = lease.now()
  assert.are.equal(true, db:enqueue(EVIL, { queue = "mail", payload = EVIL_PAYLOAD }))
  assert.are.equal(true, db:enqueue("report-7", { queue = "reports", payload = '{"month":11}' }))
  assert.are.equal(true, db:enqueue("report-8", { queue = "reports" }))
  assert.are.equal(true, db:enqueue("thumb-1", { queue = "images" }))
  assert.are.equal(true, db:enqueue("thumb-2", { queue = "images" }))
  local id, f = db:claim_next("w1", now - 20, 30, { queue = "reports" })
  assert.are.equal("report-7", id)
  assert.are.equal(true, db:complete(id, "w1", f, now - 12, "42 rows"))
  local id2, f2 = db:claim_next("w2", now - 10, 30, { queue = "reports" })
  assert.are.equal("retryable", db:fail(id2, "w2", f2, now - 5, "timeout <talking> to db", { run_at = now + 3600 }))
  assert.are.equal(EVIL, (db:claim_next("w3", now - 3, 300, { queue = "mail" })))
  db:pause("images")
  db:close()
  return p
end

--- Every queue's paused flag, by name.
local function paused(p)
  local db = lease.open(p)
  local out = {}
  for _, q in ipairs(db:queues(lease.now())) do out[q.name] = q.paused end
  db:close()
  return out
end

--- A job's status.
local function status_of(p, id)
  local db = lease.open(p)
  local st = db:state(id).status
  db:close()
  return st
end

describe("lease web", function()
  local p, srv
  setup(function()
    p = history()
    srv = start(p)
  end)
  teardown(function() stop(srv) end)

  it("prints where it listens, on 127.0.0.1 by default, and the token", function()
    assert.is_truthy(srv.banner:find("on http://127.0.0.1:" .. srv.port .. "/ (one request at a time)", 1, true))
    assert.is_truthy(srv.banner:find("?token=" .. TOKEN, 1, true))
  end)

  it("lists the queues with their counts, the paused one marked, without changing the database", function()
    local before = H.qsnapshot(p)
    local code, body = curl(srv, "/")
    assert.are.equal(200, code)
    assert.is_truthy(body:find('<a href="/jobs?queue=reports">reports</a></td><td>running</td>', 1, true))
    assert.is_truthy(body:find('<a href="/jobs?queue=images">images</a></td><td class="paused">paused</td>', 1, true))
    assert.is_truthy(body:find('<a href="/jobs?queue=reports&amp;status=completed">1</a>', 1, true))
    assert.is_truthy(body:find('<a href="/jobs?queue=reports&amp;status=retryable">1</a>', 1, true))
    assert.is_truthy(body:find('<a href="/jobs?queue=images&amp;status=available">2</a>', 1, true))
    -- without the token: read-only, the forms carry none
    assert.is_truthy(body:find("Read-only view", 1, true))
    assert.is_nil(body:find(TOKEN, 1, true))
    assert.are.same(before, H.qsnapshot(p))
  end)

  it("puts the token in the forms of a page asked for with it, and sets it as a cookie", function()
    local code, body = curl(srv, "/?token=" .. TOKEN, "-i")
    assert.are.equal(200, code)
    assert.is_truthy(body:find("Set-Cookie: lease_web_token_" .. srv.port .. "=" .. TOKEN
      .. "; Path=/; HttpOnly; SameSite=Strict", 1, true))
    assert.is_truthy(body:find('<input type="hidden" name="token" value="' .. TOKEN .. '">', 1, true))
    assert.is_nil(body:find("Read-only view", 1, true))
    local _, wrong = curl(srv, "/?token=" .. TOKEN .. "x", "-i")
    assert.is_nil(wrong:find("Set-Cookie", 1, true))
    assert.is_nil(wrong:find(TOKEN, 1, true))
  end)

  it("lists the jobs of a queue and status", function()
    local code, body = curl(srv, "/jobs?queue=reports&status=retryable")
    assert.are.equal(200, code)
    assert.is_truthy(body:find('<a href="/job?id=report-8">report-8</a>', 1, true))
    assert.is_nil(body:find("report-7", 1, true))
    local _, images = curl(srv, "/jobs?queue=images")
    assert.is_truthy(images:find("thumb-1", 1, true))
    assert.is_truthy(images:find("thumb-2", 1, true))
    assert.is_nil(images:find("report-", 1, true))
    local bad = curl(srv, "/jobs?status=nope")
    assert.are.equal(400, bad)
    -- an after that is no seq is the request's fault, named, with no source path
    for _, a in ipairs({ "1e400", "99999999999999999999", "-1", "1.5", "x" }) do
      local status, text = curl(srv, "/jobs?after=" .. a)
      assert.are.equal(400, status, a)
      assert.is_truthy(text:find("after is the seq of the page", 1, true), text)
      assert.is_nil(text:find("web.lua", 1, true), text)
    end
    assert.are.equal(200, (curl(srv, "/jobs?after=0")))
    assert.are.equal(200, (curl(srv, "/jobs?after=")))
  end)

  it("filters by a queue name holding a NUL byte, never dropping the filter", function()
    local _, all = curl(srv, "/jobs")
    assert.is_truthy(all:find("thumb-1", 1, true))
    for _, q in ipairs({ "%00", "images%00", "%00images" }) do
      local code, body = curl(srv, "/jobs?queue=" .. q)
      assert.are.equal(200, code)
      assert.is_nil(body:find('href="/job?id=', 1, true), q)
      assert.is_truthy(body:find("<h2>Jobs of queue ", 1, true), q)
    end
  end)

  it("shows a job's payload, result, errors, events and timeline, escaping its id and payload", function()
    local code, body = curl(srv, "/job?id=" .. EVIL:gsub("[^%w]", function(c)
      return string.format("%%%02X", c:byte()) end))
    assert.are.equal(200, code)
    assert.is_nil(body:find("<script", 1, true))
    assert.is_truthy(body:find("<h2>Job &lt;script&gt;alert(1)&lt;/script&gt;</h2>", 1, true))
    assert.is_truthy(body:find('<pre class="payload">&lt;script&gt;alert(&#39;payload&#39;)&lt;/script&gt;&amp;</pre>',
      1, true))
    assert.is_truthy(body:find('<input type="hidden" name="id" value="&lt;script&gt;alert(1)&lt;/script&gt;">', 1, true))
    assert.is_truthy(body:find("<svg ", 1, true))
    assert.is_truthy(body:find('data-owner="w3"', 1, true))
    local _, r7 = curl(srv, "/job?id=report-7")
    assert.is_truthy(r7:find('<pre class="result">42 rows</pre>', 1, true))
    assert.is_truthy(r7:find('<tr class="event"><td class="n">%d+</td><td>[^<]*</td><td>claim</td><td>ok</td><td>w1</td>'))
    local _, r8 = curl(srv, "/job?id=report-8")
    assert.is_truthy(r8:find("<pre>timeout &lt;talking&gt; to db</pre>", 1, true))
    assert.are.equal(404, (curl(srv, "/job?id=nope")))
    assert.are.equal(404, (curl(srv, "/nowhere")))
  end)

  it("refuses an action without the token or with a wrong one (403), changing nothing", function()
    local before, flags = H.qsnapshot(p), paused(p)
    for _, t in ipairs({ {}, { { "token", "" } }, { { "token", TOKEN .. "x" } },
                         { { "token", TOKEN:sub(1, -2) } }, { { "token", TOKEN:upper() } } }) do
      for _, a in ipairs({ { "/cancel", "id", "thumb-1" }, { "/retry", "id", "report-8" },
                           { "/pause", "queue", "reports" }, { "/resume", "queue", "images" } }) do
        local fields = { { a[2], a[3] } }
        for _, kv in ipairs(t) do fields[#fields + 1] = kv end
        local code, body = post(srv, a[1], fields)
        assert.are.equal(403, code)
        assert.is_truthy(body:find("needs the token", 1, true))
      end
    end
    -- the token in the query or a cookie does not stand for the form's
    assert.are.equal(403, (curl(srv, "/pause?token=" .. TOKEN, "--data-raw queue=reports")))
    assert.are.equal(403, (curl(srv, "/pause", "--data-raw queue=reports -b lease_web_token_" .. srv.port
      .. "=" .. TOKEN)))
    assert.are.same(before, H.qsnapshot(p))
    assert.are.same(flags, paused(p))
  end)

  it("refuses a request body over 64 KiB (413), changing nothing", function()
    local before = H.qsnapshot(p)
    local body = "id=thumb-2&token=" .. TOKEN .. "&pad=" .. string.rep("x", 70000)
    local file = H.file("body")
    H.write(file, body)
    assert.are.equal(413, (curl(srv, "/cancel", "--data-binary @" .. H.sh(file))))
    assert.are.equal("available", status_of(p, "thumb-2"))
    assert.are.same(before, H.qsnapshot(p))
  end)

  it("refuses a Host that is not a loopback name (403)", function()
    local code = curl(srv, "/", "-H " .. H.sh("Host: rebound.example:" .. srv.port))
    assert.are.equal(403, code)
    local before = H.qsnapshot(p)
    code = post(srv, "/cancel", { { "id", "thumb-1" }, { "token", TOKEN } })
    assert.are.equal(303, code)   -- the same POST through 127.0.0.1 is taken
    assert.are.equal("cancelled", status_of(p, "thumb-1"))
    assert.are_not.same(before, H.qsnapshot(p))
    assert.are.equal(403, (curl(srv, "/retry", "-H " .. H.sh("Host: rebound.example:" .. srv.port)
      .. " --data-raw " .. H.sh("id=thumb-1&token=" .. TOKEN))))
    assert.are.equal("cancelled", status_of(p, "thumb-1"))
  end)

  it("with the token retries and cancels jobs, pauses and resumes queues", function()
    local code, body = curl(srv, "/retry", "-i --data-raw " .. H.sh("id=report-8&token=" .. TOKEN))
    assert.are.equal(303, code)
    assert.is_truthy(body:find("Location: /job?id=report-8", 1, true))
    assert.are.equal("available", status_of(p, "report-8"))
    assert.are.equal(303, (post(srv, "/cancel", { { "id", "report-8" }, { "token", TOKEN } })))
    assert.are.equal("cancelled", status_of(p, "report-8"))
    assert.are.equal(409, (post(srv, "/cancel", { { "id", "report-7" }, { "token", TOKEN } })))
    assert.are.equal("completed", status_of(p, "report-7"))
    assert.are.equal(303, (post(srv, "/pause", { { "queue", "reports" }, { "token", TOKEN } })))
    assert.are.equal(303, (post(srv, "/resume", { { "queue", "images" }, { "token", TOKEN } })))
    assert.are.same({ mail = false, reports = true, images = false }, paused(p))
  end)
end)

describe("lease web's loopback check", function()
  it("knows a loopback address however it is spelt, and only those", function()
    local web = require("lease.web")
    -- every spelling inet_pton(3), which binds the address, reads as one
    for _, a in ipairs({ "127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "0:0:0:0:0:0:0:1", "0::1",
                         "::0:1", "0000:0000::0001", "::0.0.0.1", "::ffff:127.0.0.1", "0:0:0:0:0:ffff:127.0.0.5",
                         "::FFFF:127.0.0.1", "::ffff:7f00:1", "0:0:0:0:0:ffff:7f00:1", "0::ffff:127.0.0.1",
                         "0000:0000:0000:0000:0000:ffff:127.0.0.1" }) do
      assert.is_true(web.is_loopback(a), a)
    end
    for _, a in ipairs({ "0.0.0.0", "10.0.0.1", "128.0.0.1", "::", "::2", "1::1", "fe80::1", "::ffff:10.0.0.1",
                         "::00001", "1:0:0:0:0:0:0:1", "0:0:0:0:0:0:0:0:1", "::ffff:128.0.0.1",
                         "::ffff:127.0.0.256", "::ffff:1.2.3.4:5", "1::2::3",
                         -- what inet_pton refuses: leading zeros, an octet past 255, too few
                         "127.0.0.01", "0127.0.0.1", "127.256.0.1", "127.0.0", "::ffff:127.0.0.01" }) do
      assert.is_false(web.is_loopback(a), a)
    end
  end)

  it("answers a server bound to another loopback address under any loopback address, and refuses names", function()
    local p = H.path("web-127-2")
    lease.open(p):close()
    local srv = start(p, "--bind 127.0.0.2")
    finally(function() stop(srv) end)
    local function get(host)
      local out = H.capture(string.format("curl -s -m 20 -o /dev/null -w '%%{http_code}' -H %s %s",
        H.sh("Host: " .. host .. ":" .. srv.port), H.sh("http://127.0.0.2:" .. srv.port .. "/")))
      return tonumber(out)
    end
    assert.are.equal(200, get("127.0.0.2"))
    assert.are.equal(200, get("localhost"))
    assert.are.equal(200, get("[::ffff:7f00:2]"))
    assert.are.equal(403, get("rebound.example"))
    assert.are.equal(403, get("127.0.0.2.rebound.example"))
  end)
end)

describe("lease web's job page", function()
  it("shows the first 64 KiB of a large payload and result, and their whole size", function()
    local p = H.path("web-big")
    local db = lease.open(p)
    local big = string.rep("0123456789abcdef", 8192) .. "<tail>"   -- 128 KiB and 6 bytes
    assert.are.equal(true, db:enqueue("big", { payload = big }))
    local f = db:claim("big", "w", 1, 10)
    assert.are.equal(true, db:complete("big", "w", f, 2, big))
    assert.are.equal(true, db:enqueue("small", { payload = "<small>" }))
    db:close()
    local srv = start(p)
    local code, body = curl(srv, "/job?id=big")
    local _, small = curl(srv, "/job?id=small")
    stop(srv)
    assert.are.equal(200, code)
    assert.is_truthy(body:find('<pre class="payload">' .. big:sub(1, 65536) .. "</pre>", 1, true))
    assert.is_truthy(body:find('<pre class="result">' .. big:sub(1, 65536) .. "</pre>", 1, true))
    assert.is_nil(body:find("&lt;tail&gt;", 1, true))
    local _, notes = body:gsub("The first 65536 of its 131078 bytes: lease show prints it whole.", "")
    assert.are.equal(2, notes)
    assert.is_truthy(small:find('<pre class="payload">&lt;small&gt;</pre>', 1, true))
    assert.is_nil(small:find("The first", 1, true))
  end)

  it("shows a job's newest 2000 events, its end among them, and says how many it has", function()
    local p = H.path("web-renews")
    local db = lease.open(p, { events = true })
    assert.are.equal(true, db:enqueue("busy"))
    local f = db:claim("busy", "w", 1, 10)
    for i = 1, 2100 do assert.are.equal(true, db:renew("busy", "w", f, 1 + i / 1000, 10)) end
    assert.are.equal(true, db:complete("busy", "w", f, 4, "done"))
    db:close()
    local srv = start(p)
    local code, body = curl(srv, "/job?id=busy")
    stop(srv)
    assert.are.equal(200, code)
    assert.is_truthy(body:find("The newest 2000 of its 2103 events.", 1, true), body:sub(1, 2000))
    local _, rows = body:gsub('<tr class="event">', "")
    assert.are.equal(2000, rows)
    assert.is_truthy(body:find("<td>complete</td>", 1, true))
    assert.is_nil(body:find("<td>claim</td>", 1, true))   -- the oldest went
    assert.is_nil(body:find("(still held)", 1, true))
  end)
end)

describe("lease web usage", function()
  it("takes a port from 0 to 65535, an address literal, a non-empty token", function()
    local p = history()
    local st, _, err = H.host("web " .. H.sh(p) .. " --port 70000", nil, 20)
    assert.are.equal(2, st)
    assert.is_truthy(err:find("--port needs an integer from 0 to 65535", 1, true))
    st, _, err = H.host("web " .. H.sh(p) .. " --port 0 --token ''", nil, 20)
    assert.are.equal(2, st)
    assert.is_truthy(err:find("--token needs a non-empty token", 1, true))
    st, _, err = H.host("web " .. H.sh(p) .. " --port 0 --bind nowhere", nil, 20)
    assert.are.equal(2, st)
    assert.is_truthy(err:find("lease web: --bind needs an IPv4 or IPv6 address, got 'nowhere'\n", 1, true), err)
    st, _, err = H.host("web " .. H.sh(p) .. " --port 0 --bind localhost", nil, 20)
    assert.are.equal(2, st)
    assert.is_truthy(err:find("lease web: --bind needs an IPv4 or IPv6 address, got 'localhost'\n", 1, true), err)
  end)

  it("#sqlite shows the bytes of the database's name as \\xNN when it starts", function()
    local p = H.file("web\27[2Jname") .. ".db"
    local db = lease.open(p)
    assert.are.equal(true, db:enqueue("a"))
    db:close()
    local srv = start(p)
    stop(srv)
    assert.is_nil(srv.banner:find("\27", 1, true), srv.banner)
    assert.truthy(srv.banner:find("web\\x1b[2Jname", 1, true), srv.banner)
  end)

  it("names a port in use without a source position, exit 1", function()
    local p = history()
    local srv = start(p)
    local st, out, err = H.host("web " .. H.sh(p) .. " --port " .. srv.port, nil, 20)
    stop(srv)
    assert.are.equal(1, st)
    assert.are.equal("", out)
    assert.are.equal("lease web: cannot listen on 127.0.0.1 port " .. srv.port .. ": Address already in use\n",
      err)
  end)

  it("stops cleanly on SIGINT", function()
    local srv = start(history())
    assert.are.equal(200, (curl(srv, "/")))
    -- to the server itself: timeout would send it a second SIGINT (to its
    -- whole group), and a second Ctrl-C kills, as in lua.c
    local child = H.capture("pgrep -P " .. srv.pid):match("(%d+)")
    assert.is_truthy(child)
    os.execute("kill -INT " .. child)
    local text
    for _ = 1, 100 do
      text = H.read(srv.out) or ""
      if text:find("lease web: stopped\n", 1, true) then break end
      lease.sleep(0.05)
    end
    assert.is_truthy(text:find("lease web: stopped\n", 1, true))
    assert.are.equal("", H.read(srv.err))
    assert.are_not.equal(200, (curl(srv, "/")))
  end)

  it("says clearly that web is unavailable in a build without libmicrohttpd", function()
    local p = history()
    -- a host whose lease.httpd cannot be loaded, as in such a build
    local st, _, err = H.host("-e " .. H.sh('package.preload["lease.httpd"] = nil; package.loaded["lease.httpd"] = nil; '
      .. 'package.cpath = ""; package.path = ""; '
      .. string.format('os.exit(require("lease.cli").main({ "web", %q, "--port", "0" }))', p)), nil, 20)
    assert.are.equal(1, st)
    assert.is_truthy(err:find("lease web: this lease was built without libmicrohttpd, so web is unavailable", 1, true))
  end)
end)

--- Whether chromium is on PATH.
local function have_chromium()
  return select(2, H.capture("command -v chromium >/dev/null"))
end

--- Chromium driven over the DevTools protocol through
-- --remote-debugging-pipe (fds 3 and 4, messages ended by NUL), the two
-- ends made FIFOs.  Started by a shell whose output is /dev/null: opening
-- the FIFOs waits for this process, which must not be reading a pipe the
-- waiting shell holds meanwhile.
local function browser()
  local d = H.dir()
  os.execute("mkfifo " .. H.sh(d .. "/in") .. " " .. H.sh(d .. "/out"))
  local inner = string.format("exec timeout 120 chromium --headless --disable-gpu --no-sandbox --no-first-run "
    .. "--user-data-dir=%s --remote-debugging-pipe 3<%s 4>%s", H.sh(d .. "/profile"), H.sh(d .. "/in"),
    H.sh(d .. "/out"))
  os.execute("sh -c " .. H.sh(inner) .. " </dev/null >/dev/null 2>&1 & echo $! >" .. H.sh(d .. "/pid"))
  local pid = assert(H.read(d .. "/pid")):match("(%d+)")
  local b = { pid = pid, n = 0 }
  b.w = assert(io.open(d .. "/in", "wb"))
  b.r = assert(io.open(d .. "/out", "rb"))
  function b.send(method, params, session)
    b.n = b.n + 1
    b.w:write(json.encode({ id = b.n, method = method, params = params, sessionId = session }), "\0")
    b.w:flush()
    while true do
      local buf = {}
      while true do
        local c = b.r:read(1)
        if c == nil then error("chromium closed the pipe") end
        if c == "\0" then break end
        buf[#buf + 1] = c
      end
      local m = json.decode(table.concat(buf))
      if m.id == b.n then return m.result, m.error end
    end
  end
  function b.close()
    pcall(b.send, "Browser.close")
    b.w:close(); b.r:close()
    os.execute("kill " .. pid .. " 2>/dev/null")
  end
  return b
end

describe("lease web in headless Chromium", function()
  local p, srv
  setup(function()
    p = history()
    srv = start(p)
  end)
  teardown(function() stop(srv) end)

  it("shows the queues page and a job page (--dump-dom)", function()
    if not have_chromium() then pending("chromium is not installed (scripts/setup installs it)") return end
    local dom = H.capture("timeout 60 chromium --headless --disable-gpu --no-sandbox --dump-dom "
      .. H.sh("http://127.0.0.1:" .. srv.port .. "/") .. " 2>/dev/null")
    assert.is_truthy(dom:find('<a href="/jobs?queue=images">images</a></td><td class="paused">paused</td>', 1, true))
    assert.is_truthy(dom:find('<a href="/jobs?queue=reports&amp;status=completed">1</a>', 1, true))
    dom = H.capture("timeout 60 chromium --headless --disable-gpu --no-sandbox --dump-dom "
      .. H.sh("http://127.0.0.1:" .. srv.port .. "/job?id=%3Cscript%3Ealert(1)%3C%2Fscript%3E") .. " 2>/dev/null")
    assert.is_truthy(dom:find("<h2>Job &lt;script&gt;alert(1)&lt;/script&gt;</h2>", 1, true))
    assert.is_nil(dom:find("<script", 1, true))
    assert.is_truthy(dom:find('<pre class="payload">&lt;script&gt;alert(\'payload\')&lt;/script&gt;&amp;</pre>',
      1, true))
  end)

  it("cancels a job when its cancel button is clicked on the page opened with the token", function()
    if not have_chromium() then pending("chromium is not installed (scripts/setup installs it)") return end
    local b = browser()
    local ok, err = pcall(function()
      local t = assert(b.send("Target.createTarget", { url = "about:blank" }))
      local s = assert(b.send("Target.attachToTarget", { targetId = t.targetId, flatten = true })).sessionId
      assert(b.send("Page.navigate", { url = "http://127.0.0.1:" .. srv.port .. "/job?id=thumb-2&token=" .. TOKEN },
        s))
      local function eval(expr)
        local res, e = b.send("Runtime.evaluate", { expression = expr, awaitPromise = true, returnByValue = true }, s)
        return res and res.result and res.result.value, e
      end
      local function wait(expr)
        for _ = 1, 200 do
          local v = eval(expr)
          if v then return v end
          lease.sleep(0.05)
        end
        error("timed out waiting for " .. expr)
      end
      wait("document.readyState === 'complete' && !!document.querySelector('form[action=\"/cancel\"] button')")
      assert.are.equal("available", status_of(p, "thumb-2"))
      local xy = wait("(() => { const r = document.querySelector('form[action=\"/cancel\"] button')"
        .. ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
      for _, kind in ipairs({ "mousePressed", "mouseReleased" }) do
        assert(b.send("Input.dispatchMouseEvent", { type = kind, x = xy[1], y = xy[2], button = "left",
                                                   clickCount = 1 }, s))
      end
      -- the browser posted the form, followed the 303 and shows the job again
      local text = wait("document.readyState === 'complete' && location.pathname === '/job' && "
        .. "/status\\s+cancelled/.test(document.body.innerText) && document.body.innerText")
      assert.is_truthy(text:find("thumb-2", 1, true))
      assert.are.equal("cancelled", status_of(p, "thumb-2"))
    end)
    b.close()
    assert(ok, err)
  end)
end)
