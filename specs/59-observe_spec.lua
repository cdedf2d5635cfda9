-- lease stats, lease metrics and lease timeline through lease.cli.main,
-- over a known history recorded with the events ledger on: A claims a job,
-- its lease expires, B claims it, A's stale complete is refused, B
-- completes, C's job fails its last attempt.  stats --json's numbers, the
-- metrics text parsed line by line (label values escaped), the timeline's
-- SVG parsed (well-formed, bars, fence labels, owner colours, the refused
-- mark), and bad usage (exit 2, the message naming the option).
-- Backend-neutral: runs on SQLite and PostgreSQL.
local H = require("helpers")
local lease = H.lease
local observe = require("lease.observe")
local json = require("dkjson")

-- Run cli.main(argv); returns status, stdout text, stderr text.
local run = H.cli

-- A queue name with every byte the Prometheus format escapes.
local WEIRD = 'we"ird\\q\nx'
-- A job id with bytes XML must escape, and one that is not UTF-8.
local HOSTILE = "<&\"'>\255\1id"

-- The blank-separated words of a line, in order.
local function words(line)
  local out = {}
  for w in line:gmatch("%S+") do out[#out + 1] = w end
  return out
end

-- The history; returns the path and the time every command measures at
-- (an integer, after every event).
local function history()
  local p = H.path("observe")
  local db = lease.open(p, { events = true })
  local now = math.floor(lease.now()) + 2
  assert.are.equal(true, db:enqueue("j", { queue = "q" }))
  assert.are.equal(true, db:enqueue("k", { queue = "q", max_attempts = 1 }))
  assert.are.equal(true, db:enqueue(HOSTILE, { queue = "h" }))
  local id, fa = db:claim_next("A", now - 100, 10, { queue = "q" })
  assert.are.same({ "j", 1 }, { id, fa })
  local id2, fb = db:claim_next("B", now - 80, 10, { queue = "q" })   -- A's lease expired
  assert.are.same({ "j", 2 }, { id2, fb })
  local id3, fc = db:claim_next("C", now - 79, 10, { queue = "q" })
  assert.are.same({ "k", 1 }, { id3, fc })
  local ok, why = db:complete("j", "A", 1, now - 78, "late")          -- refused
  assert.are.same({ false, "not_owner" }, { ok, why })
  assert.are.equal(true, db:complete("j", "B", 2, now - 77, "r"))
  assert.are.equal("discarded", db:fail("k", "C", 1, now - 76, "boom"))
  assert.is_truthy(db:claim(HOSTILE, "B", now - 75, 1000))
  db:pause("q")
  db:close()
  -- a job enqueued by a handle without events: its age comes from run_at
  local plain = lease.open(p)
  assert.are.equal(true, plain:enqueue("old", { queue = WEIRD, run_at = now - 30 }))
  plain:close()
  return p, now
end

describe("lease stats", function()
  it("gives each queue's numbers as exact JSON", function()
    local p, now = history()
    local status, out, err = run({ "stats", p, "--json", "--now", tostring(now) })
    assert.are.equal("", err)
    assert.are.equal(0, status)
    local st = json.decode(out)
    assert.are.equal(now, st.now)
    assert.are.same({ { op = "complete", reason = "not_owner", count = 1 } }, st.refusals)
    local by = {}
    for _, q in ipairs(st.queues) do by[q.name] = q end
    local q = by.q
    assert.are.equal(true, q.paused)
    assert.are.same({ available = 0, scheduled = 0, running = 0, retryable = 0, completed = 1,
                      discarded = 1, cancelled = 0, waiting = 0 }, q.counts)
    assert.are.equal(1, q.completions)
    -- B's complete at now - 77: not in the last minute, in the last 5 and 15
    assert.are.same({ ["1m"] = 0, ["5m"] = 1 / 5, ["15m"] = 1 / 15 }, q.completions_per_minute)
    assert.are.same({ { op = "complete", reason = "not_owner", count = 1 } }, q.refusals)
    assert.is_nil(q.oldest_available_age)   -- null: no available job
    local w = by[WEIRD]
    assert.are.equal(false, w.paused)
    assert.are.equal(1, w.counts.available)
    assert.are.equal(30, w.oldest_available_age)
    assert.are.same({}, w.refusals)
    assert.are.equal(1, by.h.counts.running)
  end)

  it("prints a table a person reads", function()
    local p, now = history()
    local status, out = run({ "stats", p, "--now", tostring(now) })
    assert.are.equal(0, status)
    assert.truthy(out:find("queue q  paused", 1, true), out)
    assert.truthy(out:find("completions/min: 0.00 (1m)  0.20 (5m)  0.07 (15m)", 1, true), out)
    assert.truthy(out:find("  refused complete not_owner: 1", 1, true), out)
    assert.truthy(out:find("oldest available: 30.0s", 1, true), out)
    assert.falsy(out:find("no events recorded", 1, true))
  end)

  it("says when the ledger is empty", function()
    local p = H.path("observe-empty")
    local db = lease.open(p)
    db:enqueue("x")
    db:close()
    local status, out = run({ "stats", p })
    assert.are.equal(0, status)
    assert.truthy(out:find("(no events recorded: open with events = true)", 1, true), out)
    assert.truthy(out:find("1 available", 1, true), out)
  end)

  it("prints again every S seconds with --watch, N times with --count", function()
    local p, now = history()
    local status, out = run({ "stats", p, "--json", "--watch", "0.01", "--count", "3",
                              "--now", tostring(now) })
    assert.are.equal(0, status)
    local n = 0
    for line in out:gmatch("[^\n]+") do
      n = n + 1
      assert.are.equal(now, json.decode(line).now)
    end
    assert.are.equal(3, n)
  end)

  it("runs until interrupted with --watch alone", function()
    local p = history()
    -- the host, stopped by timeout after it printed at least twice
    local status, out = H.host("stats " .. H.sh(p) .. " --watch 0.2", nil, 1)
    assert.are_not.equal(0, status)
    local _, prints = out:gsub("queue q  paused", "")
    assert.is_true(prints >= 2, out)
  end)

  it("gives a job made available again by retry no age from its until of 0", function()
    -- no events: the job's age could only come from run_at or a lease end
    local p = H.path("observe-retried")
    local db = lease.open(p)
    local now = math.floor(lease.now())
    assert.are.equal(true, db:enqueue("x", { max_attempts = 1 }))
    local id, fence = db:claim_next("A", now - 20, 5)
    assert.are.same({ "x", 1 }, { id, fence })
    assert.are.equal("discarded", db:fail("x", "A", 1, now - 19, "boom"))
    assert.is_truthy(db:retry("x", now - 10))
    local st = db:state("x", now)
    db:close()
    assert.are.same({ "available", 0, 1 }, { st.status, st["until"], st.fence })
    local status, out = run({ "stats", p, "--json", "--now", tostring(now) })
    assert.are.equal(0, status)
    local q = json.decode(out).queues[1]
    assert.are.equal(1, q.counts.available)
    assert.is_nil(q.oldest_available_age)
    status, out = run({ "stats", p, "--now", tostring(now) })
    assert.are.equal(0, status)
    assert.truthy(out:find("oldest available: -\n", 1, true), out)
    status, out = run({ "metrics", p, "--now", tostring(now) })
    assert.are.equal(0, status)
    assert.falsy(out:find("\nlease_oldest_available_age_seconds{", 1, true), out)
  end)

  it("counts the jobs waiting for the jobs they name, in stats, metrics and queues", function()
    local p = H.path("observe-waiting")
    local db = lease.open(p)
    assert.are.equal(true, db:enqueue("parent"))
    assert.are.equal(true, db:enqueue("child", { after = { "parent" } }))
    assert.are.equal(true, db:enqueue("grandchild", { after = { "child" } }))
    db:close()
    local status, out = run({ "stats", p, "--json" })
    assert.are.equal(0, status)
    assert.are.same({ available = 1, scheduled = 0, running = 0, retryable = 0, completed = 0,
                      discarded = 0, cancelled = 0, waiting = 2 }, json.decode(out).queues[1].counts)
    status, out = run({ "stats", p })
    assert.are.equal(0, status)
    assert.truthy(out:find("  jobs: 1 available, 0 scheduled, 0 running, 0 retryable, 0 completed, "
      .. "0 discarded, 0 cancelled, 2 waiting\n", 1, true), out)
    status, out = run({ "metrics", p })
    assert.are.equal(0, status)
    assert.truthy(out:find('\nlease_jobs{queue="default",status="waiting"} 2\n', 1, true), out)
    status, out = run({ "queues", p })
    assert.are.equal(0, status)
    local head, row = out:match("^([^\n]*)\n([^\n]*)\n$")
    assert.truthy(head, out)
    assert.are.same({ "QUEUE", "STATE", "LIMITS", "AVAILABLE", "SCHEDULED", "RUNNING", "RETRYABLE",
                      "COMPLETED", "DISCARDED", "CANCELLED", "WAITING" }, words(head))
    assert.are.same({ "default", "running", "-", "1", "0", "0", "0", "0", "0", "0", "2" }, words(row))
  end)

  it("writes a number another client left infinite as null, never failing", function()
    local p = H.path("observe-inf")
    local db = lease.open(p)
    assert.are.equal(true, db:enqueue("a", { run_at = 5 }))
    db:close()
    H.sql(p, "UPDATE lease_queue SET run_at = " .. (H.backend == "pg" and "'-Infinity'::float8" or "-9e999")
      .. " WHERE id = 'a'")
    local status, out, err = run({ "stats", p, "--json" })
    assert.are.equal("", err)
    assert.are.equal(0, status)
    local q = json.decode(out).queues[1]
    assert.are.equal(1, q.counts.available)
    assert.truthy(out:find('"oldest_available_age":null', 1, true), out)
    status, out = run({ "stats", p })
    assert.are.equal(0, status)
    assert.truthy(out:find("oldest available: infs\n", 1, true), out)
    status, out = run({ "metrics", p })
    assert.are.equal(0, status)
    assert.truthy(out:find('\nlease_oldest_available_age_seconds{queue="default"} +Inf\n', 1, true), out)
  end)

  it("writes the keys of every object of stats --json and queues --json sorted", function()
    local p = H.path("observe-sorted")
    local db = lease.open(p)
    assert.are.equal(true, db:enqueue("a"))
    db:close()
    local status, out = run({ "queues", p, "--json" })
    assert.are.equal(0, status)
    assert.are.equal('[{"available":1,"cancelled":0,"completed":0,"discarded":0,"name":"default",'
      .. '"paused":false,"retryable":0,"running":0,"scheduled":0,"total":1,"waiting":0}]\n', out)
    status, out = run({ "stats", p, "--json", "--now", "100" })
    assert.are.equal(0, status)
    -- a float zero is 0.0 under Lua 5.3 and later, 0 under 5.1 and LuaJIT
    assert.are.equal('{"events":0,"now":100,"queues":[{"completions":0,"completions_per_minute":'
      .. '{"15m":0,"1m":0,"5m":0},"concurrency":null,"counts":{"available":1,"cancelled":0,'
      .. '"completed":0,"discarded":0,"retryable":0,"running":0,"scheduled":0,"waiting":0},'
      .. '"name":"default","oldest_available_age":null,"paused":false,"per":null,"rate":null,'
      .. '"refusals":[]}],"refusals":[]}\n', (out:gsub("(%d)%.0([,}%]])", "%1%2")))
  end)

  it("writes a queue name that is not UTF-8 in queues --json as every --json string", function()
    local p = H.path("observe-latin1")
    local db = lease.open(p)
    assert.are.equal(true, db:enqueue("a", { queue = "bad\255\1" }))
    db:close()
    local status, out = run({ "queues", p, "--json" })
    assert.are.equal(0, status)
    assert.truthy(out:find('"name":"bad\195\191\\u0001"', 1, true), out)
    assert.are.equal("bad\195\191\1", json.decode(out)[1].name)
  end)

  it("exits 0 with nothing on stderr when --watch is interrupted by SIGINT", function()
    local p = history()
    local base = H.file("watch")
    local exe = os.getenv("LEASE_HOST")
    if not exe or exe == "" then exe = (os.getenv("LEASE_BUILD_DIR") or "build") .. "/lease" end
    -- the host in a shell that waits for it and writes its exit status
    local inner = string.format("%s stats %s --watch 0.1 >%s 2>%s; echo $? >%s", H.sh(exe), H.sh(p),
      H.sh(base .. ".out"), H.sh(base .. ".err"), H.sh(base .. ".rc"))
    local pid = H.capture("sh -c " .. H.sh(inner) .. " >/dev/null 2>&1 & echo $!"):match("(%d+)")
    assert.is_truthy(pid)
    local child
    for _ = 1, 100 do
      local out = H.read(base .. ".out") or ""
      child = H.capture("pgrep -P " .. pid):match("(%d+)")
      if child and select(2, out:gsub("queue q  paused", "")) >= 2 then break end
      lease.sleep(0.05)
    end
    assert.is_truthy(child)
    os.execute("kill -INT " .. child)
    local rc
    for _ = 1, 100 do
      rc = H.read(base .. ".rc")
      if rc and rc ~= "" then break end
      lease.sleep(0.05)
    end
    assert.are.equal("0\n", rc)
    assert.are.equal("", H.read(base .. ".err"))
  end)

  it("refuses bad options, naming them", function()
    local p = history()
    for _, case in ipairs({
      { { "stats", p, "--watch", "0", "--count", "1" }, "--watch needs a finite number of seconds > 0, got '0'" },
      -- the same words whatever is wrong with the value
      { { "stats", p, "--watch", "x" }, "--watch needs a finite number of seconds > 0, got 'x'" },
      { { "stats", p, "--watch", "nan" }, "--watch needs a finite number of seconds > 0, got 'nan'" },
      { { "stats", p, "--count", "2" }, "--count needs --watch" },
      { { "stats", p, "--watch", "1", "--count", "0" }, "--count needs an integer >= 1, got '0'" },
      { { "stats", p, "--now", "soon" }, "--now needs seconds since the epoch" },
      { { "stats" }, "stats takes one database path" },
      { { "metrics", p, p }, "metrics takes one database path" },
      { { "metrics", p, "--json" }, "unknown option --json" },
    }) do
      local status, out, err = run(case[1])
      assert.are.equal(2, status)
      assert.are.equal("", out)
      assert.truthy(err:find(case[2], 1, true), err)
    end
  end)
end)

-- The metrics text parsed: every sample as name, labels and value, and
-- each family's HELP and TYPE seen before its samples.
local function parse_metrics(text)
  local samples, typed, helped = {}, {}, {}
  for line in text:gmatch("([^\n]*)\n") do
    local kind, name, rest = line:match("^# (%u+) ([%w_]+) (.*)$")
    if kind == "HELP" then helped[name] = rest
    elseif kind == "TYPE" then
      assert.truthy(rest == "gauge" or rest == "counter", line)
      typed[name] = rest
    else
      local metric, at = line:match("^([%w_]+)()")
      assert.truthy(metric, line)
      assert.truthy(typed[metric] and helped[metric], "HELP and TYPE before " .. line)
      local labels = {}
      if line:sub(at, at) == "{" then
        at = at + 1
        while line:sub(at, at) ~= "}" do
          local key, nxt = line:match('^([%w_]+)="()', at)
          assert.truthy(key, line)
          local value, i = {}, nxt
          while line:sub(i, i) ~= '"' do
            local c = line:sub(i, i)
            if c == "\\" then
              local e = line:sub(i + 1, i + 1)
              value[#value + 1] = ({ ["\\"] = "\\", ['"'] = '"', n = "\n" })[e]
              assert.truthy(value[#value], "bad escape in " .. line)
              i = i + 2
            else
              assert.truthy(c ~= "" and c ~= "\n", line)
              value[#value + 1] = c
              i = i + 1
            end
          end
          labels[key] = table.concat(value)
          at = i + 1
          if line:sub(at, at) == "," then at = at + 1 end
        end
        at = at + 1
      end
      local value = line:match("^ (%S+)$", at)
      assert.truthy(value, line)
      samples[#samples + 1] = { name = metric, labels = labels, value = tonumber(value) }
    end
  end
  return samples
end

-- The value of the one sample with that name and labels.
local function sample(samples, name, labels)
  local found
  for _, s in ipairs(samples) do
    if s.name == name then
      local same = true
      for k, v in pairs(labels) do if s.labels[k] ~= v then same = false end end
      for k in pairs(s.labels) do if labels[k] == nil then same = false end end
      if same then
        assert.is_nil(found, "two samples " .. name)
        found = s.value
      end
    end
  end
  return found
end

describe("lease metrics", function()
  it("gives the numbers in the Prometheus text format, label values escaped", function()
    local p, now = history()
    local status, out, err = run({ "metrics", p, "--now", tostring(now) })
    assert.are.equal("", err)
    assert.are.equal(0, status)
    local s = parse_metrics(out)
    assert.are.equal(1, sample(s, "lease_jobs", { queue = "q", status = "completed" }))
    assert.are.equal(1, sample(s, "lease_jobs", { queue = "q", status = "discarded" }))
    assert.are.equal(0, sample(s, "lease_jobs", { queue = "q", status = "available" }))
    -- a backslash of the name reads back as two (observe.label)
    local weird = WEIRD:gsub("\\", "\\\\")
    assert.are.equal(1, sample(s, "lease_jobs", { queue = weird, status = "available" }))
    assert.are.equal(1, sample(s, "lease_queue_paused", { queue = "q" }))
    assert.are.equal(0, sample(s, "lease_queue_paused", { queue = weird }))
    assert.are.equal(1, sample(s, "lease_completions_total", { queue = "q" }))
    assert.are.equal(1, sample(s, "lease_refusals_total", { op = "complete", reason = "not_owner" }))
    assert.are.equal(30, sample(s, "lease_oldest_available_age_seconds", { queue = weird }))
    assert.is_nil(sample(s, "lease_oldest_available_age_seconds", { queue = "q" }))
    -- the escaped line as the format writes it
    assert.truthy(out:find('\nlease_queue_paused{queue="we\\"ird\\\\\\\\q\\nx"} 0\n', 1, true), out)
  end)

  it("writes a label value that is not UTF-8 as UTF-8, each stray byte as the text \\xNN", function()
    local p = H.path("observe-bytes")
    local db = lease.open(p)
    assert.are.equal(true, db:enqueue("a", { queue = "bad\255\1" }))
    assert.are.equal(true, db:enqueue("b", { queue = "caf\195\169\226\130" }))   -- a cut-off sequence
    -- the name of four characters \xff and the byte 255: two series
    assert.are.equal(true, db:enqueue("c", { queue = "\\xff" }))
    assert.are.equal(true, db:enqueue("d", { queue = "\255" }))
    db:close()
    local status, out = run({ "metrics", p })
    assert.are.equal(0, status)
    assert.truthy(out:find('\nlease_queue_paused{queue="\\\\\\\\xff"} 0\n', 1, true), out)
    assert.truthy(out:find('\nlease_queue_paused{queue="\\\\xff"} 0\n', 1, true), out)
    local seen = {}
    for line in out:gmatch("[^\n]+") do
      if not line:find("^#") then
        local series = line:match("^(.*) [^ ]+$")
        assert.is_nil(seen[series], "series twice: " .. series)
        seen[series] = true
      end
    end
    assert.truthy(out:find('\nlease_queue_paused{queue="bad\\\\xff\1"} 0\n', 1, true), out)
    assert.truthy(out:find('\nlease_queue_paused{queue="caf\195\169\\\\xe2\\\\x82"} 0\n', 1, true), out)
    local u8 = rawget(_G, "utf8")   -- Lua 5.3 and later
    if u8 then assert.is_truthy(u8.len(out), "valid UTF-8") end
  end)
end)

-- A small XML well-formedness check: tags balance, attributes are quoted,
-- every & starts an entity, no raw < in text; returns the elements as
-- {name=, attrs=, text=} in document order (text: up to the next tag).
local function parse_xml(doc)
  local elements, stack, at = {}, {}, 1
  doc = doc:gsub("^<%?xml[^>]*%?>", "")
  while true do
    local s, e, close, name, attrs = doc:find("<(/?)([%w:_-]+)([^<>]*)>", at)
    local text = doc:sub(at, (s or #doc + 1) - 1)
    assert.is_nil(text:find("<", 1, true), "raw < in text")
    for amp in text:gmatch("&[^;]*;?") do
      assert.truthy(amp:match("^&[%w#]+;$"), "bad entity " .. amp)
    end
    if #elements > 0 and not elements[#elements].text then elements[#elements].text = text end
    if not s then break end
    local selfclose = attrs:sub(-1) == "/"
    if close == "/" then
      assert.are.equal(stack[#stack], name)
      stack[#stack] = nil
    else
      local a = {}
      local rest = attrs:gsub('([%w:_-]+)="([^"<]*)"', function(k, v) a[k] = v; return "" end)
      assert.truthy(rest:match("^%s*/?$"), "bad attributes: " .. attrs)
      elements[#elements + 1] = { name = name, attrs = a }
      if not selfclose then stack[#stack + 1] = name else elements[#elements].text = "" end
    end
    at = e + 1
  end
  assert.are.same({}, stack)
  return elements
end

describe("lease timeline", function()
  local function xmllint(path)
    if H.execute("command -v xmllint >/dev/null 2>&1") ~= 0 then return end
    assert.are.equal(0, H.execute("xmllint --noout '" .. path .. "'"))
  end

  it("draws each lease as a bar coloured by owner, with its fence, and the refused write", function()
    local p = history()
    local svg = H.dir() .. "/observe.svg"
    local status, out, err = run({ "timeline", p, "-o", svg })
    assert.are.equal("", err)
    assert.are.equal(0, status)
    assert.are.equal("wrote " .. svg .. ": 3 jobs, 4 leases, 1 refused writes\n", out)
    xmllint(svg)
    local doc = H.read(svg)
    os.remove(svg)
    local els = parse_xml(doc)
    local bars, refused, accepted, ids, open = {}, {}, {}, {}, 0
    for i, el in ipairs(els) do
      if el.name == "g" and el.attrs.class == "lease open" then open = open + 1 end
      if el.name == "rect" and el.attrs["data-fence"] then bars[#bars + 1] = el.attrs end
      if el.name == "g" and el.attrs.class == "refused" then refused[#refused + 1] = els[i + 1].text end
      if el.name == "g" and el.attrs.class == "accepted" then accepted[#accepted + 1] = els[i + 1].text end
      if el.name == "text" and el.attrs.class == "id" then ids[#ids + 1] = el.text end
      if el.name == "text" and el.attrs.class == "fence" then
        assert.are.equal(els[i - 1].attrs["data-fence"], el.text)
      end
    end
    local got = {}
    for k, b in ipairs(bars) do got[k] = b["data-owner"] .. " " .. b["data-fence"] end
    assert.are.same({ "A 1", "B 2", "C 1", "B 1" }, got)
    -- A's lease ends where its expiry is, B's claim; only B's lease of the
    -- hostile id is still held
    assert.is_true(math.abs(tonumber(bars[1].x) + tonumber(bars[1].width) - tonumber(bars[2].x)) < 0.02)
    assert.are.equal(1, open)
    -- one colour per owner, each owner's its own
    assert.are.equal(bars[2].fill, bars[4].fill)
    assert.are_not.equal(bars[1].fill, bars[2].fill)
    assert.are_not.equal(bars[1].fill, bars[3].fill)
    assert.are.equal(observe.colour("A"), bars[1].fill)
    -- the refused stale complete stands out, named
    assert.are.equal(1, #refused)
    assert.truthy(refused[1]:find("^complete refused: owner A, fence 1, not_owner at "), refused[1])
    assert.truthy(doc:find('<g class="refused"><title>[^<]*</title><path [^>]*stroke="red"'))
    local names = table.concat(accepted, "\n")
    assert.truthy(names:find("complete accepted: owner B, fence 2", 1, true), names)
    assert.truthy(names:find("expire accepted: owner A, fence 1", 1, true), names)
    assert.truthy(names:find("fail accepted: owner C, fence 1", 1, true), names)
    assert.falsy(names:find("refused", 1, true))
    -- the hostile id, escaped and made UTF-8
    assert.are.same({ "j", "k", "&lt;&amp;&quot;&#39;&gt;\195\191\239\191\189id" }, ids)
    -- the time axis in UTC
    assert.truthy(doc:find("time %(UTC%) from %d%d%d%d%-%d%d%-%d%dT"))
  end)

  it("draws a time axis of a few ticks however wide the times are, or however far from 0", function()
    -- a caller's clock in milliseconds beside the engine's enqueue in
    -- seconds (a span of 1.7e12 s), and one job's events all at 1e17
    -- (where t + 1 is t)
    local wide, far = H.path("wide"), H.path("far")
    local db = lease.open(wide, { events = true, clock_check = false })
    assert.is_true(db:enqueue("ms"))
    local now = lease.now() * 1000
    assert.is_true(db:complete("ms", "w", db:claim("ms", "w", now, 30000), now + 5, "ok"))
    db:close()
    db = lease.open(far)
    assert.is_true(db:enqueue("big"))
    db:close()
    db = lease.open(far, { events = true, clock_check = false })
    assert.are.equal(1, db:claim("big", "w", 1e17, 1000))
    db:close()
    for _, p in ipairs({ wide, far }) do
      local svg = H.dir() .. "/axis.svg"
      local status, out = run({ "timeline", p, "-o", svg })
      assert.are.equal(0, status, out)
      local doc = H.read(svg)
      local _, ticks = doc:gsub('<g class="tick">', "")
      assert.is_true(ticks >= 1 and ticks <= 9, ticks .. " ticks")
      assert.is_true(#doc < 20000, #doc .. " bytes")
      assert.falsy(doc:lower():find("nan") or doc:lower():find("inf"), doc)
      xmllint(svg)
    end
  end)

  it("keeps one job, one queue, or the events since T; .html wraps the SVG", function()
    local p, now = history()
    local dir = H.dir()
    local file = dir .. "/observe-" .. H.pid() .. ".html"
    local status, out = run({ "timeline", p, "--job", "j", "-o", file })
    assert.are.equal(0, status)
    assert.are.equal("wrote " .. file .. ": 1 jobs, 2 leases, 1 refused writes\n", out)
    local page = H.read(file)
    assert.truthy(page:find("^<!DOCTYPE html>\n<html>"))
    assert.truthy(page:find("<svg ", 1, true))
    assert.truthy(page:find("</svg>\n</body></html>\n$"))
    status, out = run({ "timeline", p, "--queue", "h", "-o", file })
    assert.are.equal(0, status)
    assert.are.equal("wrote " .. file .. ": 1 jobs, 1 leases, 0 refused writes\n", out)
    status, out = run({ "timeline", p, "--since", tostring(now - 78), "-o", file })
    assert.are.equal(0, status)
    assert.are.equal("wrote " .. file .. ": 3 jobs, 1 leases, 1 refused writes\n", out)
    os.remove(file)
  end)

  it("refuses bad options, naming them, and writes nothing", function()
    local p = history()
    local file = H.dir() .. "/observe-bad-" .. H.pid() .. ".svg"
    for _, case in ipairs({
      { { "timeline", p }, "-o FILE is required" },
      { { "timeline", p, "-o", H.dir() .. "/x.png" }, "-o needs a file ending in .svg or .html" },
      { { "timeline", p, "--since", "whenever", "-o", file }, "--since needs seconds since the epoch" },
      { { "timeline", p, "--job", "", "-o", file }, "--job needs a job id, got ''" },
      { { "timeline", p, "--queue", "", "-o", file }, "--queue needs a non-empty name" },
      { { "timeline", p, "-o" }, "-o needs a value" },
    }) do
      local status, out, err = run(case[1])
      assert.are.equal(2, status)
      assert.are.equal("", out)
      assert.truthy(err:find(case[2], 1, true), err)
      assert.is_false(H.exists(file))
    end
  end)
end)
