--- `lease web`: a local dashboard of a lease database over HTTP.
--
-- Pages (GET, read-only): `/` the queues with their jobs by status, paused
-- or not, and pause/resume buttons; `/jobs?queue=Q&status=S` the jobs of a
-- queue and status, a page at a time; `/job?id=ID` one job with its
-- payload, result, errors, its events (db:events) and its timeline
-- (lease.observe.svg).  Actions (POST): `/pause`, `/resume` (form field
-- `queue`), `/retry`, `/cancel` (form field `id`); each needs the form field
-- `token` equal to the server's token (compared in constant time), else it
-- is refused with 403 and nothing changes.  A page asked for with the token
-- (`?token=T`, or the cookie that request sets) carries it in its forms.
--
-- Every request opens the database, does its reads or its one write, and
-- closes it: the server holds no transaction and no lock between requests.
-- Requests are served one at a time, in the thread that calls web.serve.
-- Every value put into a page goes through lease.observe.xml.
-- @module lease.web
local web = {}
local observe = require("lease.observe")
local compat = require("lease.compat")

-- The statuses shown, in order (db:queues' counts, db:jobs' status filter).
local STATUSES = observe.STATUSES
local IS_STATUS = {}
for _, s in ipairs(STATUSES) do IS_STATUS[s] = true end
-- Jobs listed on one page of /jobs.
local PAGE = 100
-- Events of one job shown (and drawn) on its page at most.
local MAX_EVENTS = 2000

-- Headers of every answer: no caching, no framing, no scripts at all (the
-- pages need none), forms posted only to this server, no Referer sent.
local HEADERS = {
  ["Cache-Control"] = "no-store",
  ["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
    .. "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  ["X-Frame-Options"] = "DENY",
  ["Referrer-Policy"] = "no-referrer",
}

local CSS = [[
body{font-family:sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h1 a{color:#222;text-decoration:none}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.n{text-align:right}
pre{background:#f6f6f6;border:1px solid #ddd;padding:.5em;max-width:70em;overflow:auto;white-space:pre-wrap}
form{display:inline}button{cursor:pointer}td pre{margin:0}
.paused{color:#b00;font-weight:bold}.note{color:#666}
nav a{margin-right:1em}
]]

--- Text made safe for HTML, as element content and as a quoted attribute.
-- @tparam table ctx the server's context (its fmt.safe)
-- @param s any value (tostring'd)
-- @treturn string
local function h(ctx, s)
  return observe.xml(tostring(s), ctx.fmt.safe)
end

--- A string percent-encoded for a URL's query.
-- @tparam string s any bytes
-- @treturn string
function web.urlencode(s)
  return (tostring(s):gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end))
end

--- An application/x-www-form-urlencoded body decoded.
-- @tparam string body
-- @treturn table name -> value (the last one given)
function web.form(body)
  local out = {}
  for pair in tostring(body):gmatch("[^&]+") do
    local k, v = pair:match("^([^=]*)=?(.*)$")
    local function dec(s)
      return (s:gsub("%+", " "):gsub("%%(%x%x)", function(x) return string.char(tonumber(x, 16)) end))
    end
    out[dec(k)] = dec(v)
  end
  return out
end

--- Whether given equals want, in time that depends on want's length only
-- (every byte is compared; no early exit on the first difference).
-- @param given what the request carried (any value; nil never matches)
-- @tparam string want the server's token
-- @treturn boolean
function web.token_equal(given, want)
  if type(given) ~= "string" then return false end
  local diff = #given == #want and 0 or 1
  for i = 1, #want do diff = diff + math.abs((given:byte(i) or 256) - want:byte(i)) end
  return diff == 0
end

--- A fresh token: 16 bytes of /dev/urandom as 32 hex digits.
-- @treturn string
-- @raise when /dev/urandom cannot be read
function web.new_token()
  local f = assert(io.open("/dev/urandom", "rb"))
  local bytes = f:read(16)
  f:close()
  assert(bytes and #bytes == 16, "cannot read 16 bytes from /dev/urandom")
  return (bytes:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

--- The name of the cookie that carries the token (one per port: cookies
-- are not kept apart by port).
-- @tparam table ctx
-- @treturn string
local function cookie_name(ctx)
  return "lease_web_token_" .. tostring(ctx.port)
end

--- Whether the request carries the token in its query or cookie (its
-- pages then carry it in their forms).
-- @tparam table ctx
-- @tparam table req
-- @treturn boolean
local function authorized(ctx, req)
  return web.token_equal(req.query.token, ctx.token)
    or web.token_equal(req.cookies[cookie_name(ctx)], ctx.token)
end

--- Whether the Host header names this server, with its port, as
-- localhost or as a loopback address however spelt (a page asked for
-- through another name is refused: a DNS-rebinding site reaches the server
-- under its own name, never an address).  A server bound to an address
-- that is not a loopback one takes any Host.
-- @tparam table ctx
-- @tparam table req
-- @treturn boolean
local function host_allowed(ctx, req)
  if not ctx.loopback then return true end
  local host = (req.headers.host or ""):lower()
  local name, port = host:match("^%[([%x:.]+)%]:(%d+)$")
  if not name then name, port = host:match("^([^:]+):(%d+)$") end
  if port ~= tostring(ctx.port) then return false end
  return name == "localhost" or web.is_loopback(name)
end

--- A whole page.
-- @tparam table ctx
-- @tparam string title plain text
-- @tparam string body HTML, its values already escaped
-- @treturn string
local function page(ctx, title, body)
  return table.concat({
    '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>', h(ctx, title), ' - lease web</title>',
    "<style>", CSS, "</style></head>\n<body>\n",
    '<h1><a href="/">lease web</a>: ', h(ctx, ctx.name), "</h1>\n",
    '<nav><a href="/">queues</a><a href="/jobs">all jobs</a></nav>\n', body, "\n</body></html>\n" })
end

--- A POST form of one button, with the token when the viewer has it.
-- @tparam table ctx
-- @tparam boolean authed whether the page was asked for with the token
-- @tparam string action the path ("/pause")
-- @tparam table fields name -> value
-- @tparam string label the button's text
-- @treturn string
local function button(ctx, authed, action, fields, label)
  local out = { '<form method="post" action="', action, '">' }
  for k, v in pairs(fields) do
    out[#out + 1] = string.format('<input type="hidden" name="%s" value="%s">', h(ctx, k), h(ctx, v))
  end
  if authed then
    out[#out + 1] = '<input type="hidden" name="token" value="' .. h(ctx, ctx.token) .. '">'
  end
  out[#out + 1] = '<button type="submit" name="do" value="' .. h(ctx, label) .. '">' .. h(ctx, label)
    .. "</button></form>"
  return table.concat(out)
end

--- The note shown to a viewer without the token.
-- @tparam boolean authed
-- @treturn string HTML
local function token_note(authed)
  if authed then return "" end
  return '<p class="note">Read-only view: the buttons need the token printed when the server '
    .. "started (open the URL it printed, with ?token=).</p>\n"
end

--- GET /: the queues, their jobs by status, pause and resume.
-- @tparam table ctx
-- @param _ the request (unused)
-- @tparam boolean authed
-- @treturn integer status
-- @treturn string the page
local function queues_page(ctx, _, authed)
  return compat.using(ctx.open_ro(ctx.db), function(db)
    local out = { token_note(authed), "<h2>Queues</h2>\n<table><tr><th>queue</th><th>state</th>" }
    for _, s in ipairs(STATUSES) do out[#out + 1] = "<th>" .. s .. "</th>" end
    out[#out + 1] = "<th></th></tr>\n"
    local qs = db:queues(ctx.now())
    for _, q in ipairs(qs) do
      local qn = web.urlencode(q.name)
      out[#out + 1] = string.format('<tr class="queue"><td><a href="/jobs?queue=%s">%s</a></td><td%s>%s</td>',
        h(ctx, qn), h(ctx, q.name), q.paused and ' class="paused"' or "", q.paused and "paused" or "running")
      for _, s in ipairs(STATUSES) do
        out[#out + 1] = string.format('<td class="n"><a href="/jobs?queue=%s&amp;status=%s">%d</a></td>',
          h(ctx, qn), s, q[s] or 0)
      end
      out[#out + 1] = "<td>" .. button(ctx, authed, q.paused and "/resume" or "/pause", { queue = q.name },
        q.paused and "resume" or "pause") .. "</td></tr>\n"
    end
    out[#out + 1] = "</table>\n"
    if #qs == 0 then out[#out + 1] = '<p class="note">No queues: the database has no jobs.</p>\n' end
    return 200, page(ctx, "queues", table.concat(out))
  end)
end

--- The time of a job field for a page ("-" when there is none).
-- @tparam table ctx
-- @param t seconds, or nil
-- @treturn string escaped
local function when(ctx, t)
  if not t then return "-" end
  return h(ctx, ctx.fmt.time(t))
end

--- GET /jobs?queue=Q&status=S&after=SEQ: the jobs, PAGE at a time.
-- @tparam table ctx
-- @tparam table req
-- @treturn integer status
-- @treturn string the page
local function jobs_page(ctx, req)
  local q = req.query
  local queue = (q.queue ~= nil and q.queue ~= "") and q.queue or nil
  local status = (q.status ~= nil and q.status ~= "") and q.status or nil
  if status and not IS_STATUS[status] then
    return 400, page(ctx, "bad status", "<p>No status " .. h(ctx, status) .. ": it is one of "
      .. table.concat(STATUSES, ", ") .. ".</p>")
  end
  local after = tonumber((q.after ~= nil and q.after ~= "") and q.after or "0")
  if not (after and after >= 0 and after <= 2 ^ 53 and after == math.floor(after)) then
    return 400, page(ctx, "bad after", "<p>after is the seq of the page's last job: an integer"
      .. " from 0 to 2^53, not " .. h(ctx, q.after) .. ".</p>")
  end
  return compat.using(ctx.open_ro(ctx.db), function(db)
    local rows = db:jobs({ queue = queue, status = status, now = ctx.now(), limit = PAGE, after = after,
                           results = false })
    local out = { string.format("<h2>Jobs%s%s</h2>\n", queue and (" of queue " .. h(ctx, queue)) or "",
      status and (", " .. status) or ""),
      "<table><tr><th>id</th><th>queue</th><th>status</th><th>attempt</th><th>priority</th>"
      .. "<th>run at</th><th>owner</th></tr>\n" }
    for _, j in ipairs(rows) do
      out[#out + 1] = string.format('<tr class="job"><td><a href="/job?id=%s">%s</a></td><td>%s</td>'
        .. '<td>%s</td><td class="n">%s/%s</td><td class="n">%s</td><td>%s</td><td>%s</td></tr>\n',
        h(ctx, web.urlencode(j.id)), h(ctx, j.id), h(ctx, j.queue or "-"), h(ctx, j.status or "-"),
        h(ctx, j.attempt or "-"), h(ctx, j.max_attempts or "-"), h(ctx, j.priority or 0),
        when(ctx, j.run_at), h(ctx, j.owner or "-"))
    end
    out[#out + 1] = "</table>\n"
    if #rows == 0 then out[#out + 1] = '<p class="note">No jobs.</p>\n' end
    if #rows == PAGE then
      out[#out + 1] = string.format('<p><a href="/jobs?queue=%s&amp;status=%s&amp;after=%s">next page</a></p>\n',
        h(ctx, web.urlencode(queue or "")), h(ctx, status or ""), h(ctx, rows[#rows].seq))
    end
    return 200, page(ctx, "jobs", table.concat(out))
  end)
end

--- The job's fields as a table of rows.
-- @tparam table ctx
-- @tparam table j db:state's job
-- @treturn string HTML
local function job_fields(ctx, j)
  local rows = {
    { "id", h(ctx, j.id) }, { "status", h(ctx, j.status) },
    { "queue", string.format('<a href="/jobs?queue=%s">%s</a>', h(ctx, web.urlencode(j.queue or "")),
      h(ctx, j.queue or "-")) },
    { "priority", h(ctx, j.priority) }, { "run at", when(ctx, j.run_at) },
    { "attempt", h(ctx, tostring(j.attempt) .. " of " .. tostring(j.max_attempts)) },
    { "owner", h(ctx, j.owner or "-") }, { "until", (j.owner or j["until"] ~= 0) and when(ctx, j["until"]) or "-" },
    { "fence", h(ctx, j.fence) }, { "key", h(ctx, j.key or "-") },
    { "after", h(ctx, j.after and table.concat(j.after, ", ") or "-") },
  }
  local out = { '<table class="fields">' }
  for _, r in ipairs(rows) do out[#out + 1] = "<tr><th>" .. r[1] .. "</th><td>" .. r[2] .. "</td></tr>" end
  out[#out + 1] = "</table>\n"
  return table.concat(out)
end

--- The job's errors, oldest first.
-- @tparam table ctx
-- @tparam table j db:state's job
-- @treturn string HTML
local function job_errors(ctx, j)
  if not j.errors or #j.errors == 0 then return '<h3>Errors</h3><p class="note">None.</p>\n' end
  local out = { "<h3>Errors</h3><table><tr><th>attempt</th><th>at</th><th>owner</th><th>fence</th><th>message</th></tr>" }
  for _, e in ipairs(j.errors) do
    out[#out + 1] = string.format('<tr class="error"><td class="n">%s</td><td>%s</td><td>%s</td>'
      .. '<td class="n">%s</td><td><pre>%s</pre></td></tr>', h(ctx, e.attempt), when(ctx, e.at),
      h(ctx, e.owner or "-"), h(ctx, e.fence or "-"), h(ctx, e.message or ""))
  end
  out[#out + 1] = "</table>\n"
  return table.concat(out)
end

--- A job's newest events, at most MAX_EVENTS, in seq order, read a page
-- at a time, and how many it has in all.
-- @param db the handle
-- @tparam string id the job
-- @treturn table the events
-- @treturn integer how many the ledger holds for the job
local function newest_events(db, id)
  local kept, total = {}, 0
  local batch = db:events({ id = id, limit = MAX_EVENTS })
  while #batch > 0 do
    total = total + #batch
    for _, e in ipairs(batch) do kept[#kept + 1] = e end
    if #kept > MAX_EVENTS then   -- the oldest go
      local newest = {}
      for k = #kept - MAX_EVENTS + 1, #kept do newest[#newest + 1] = kept[k] end
      kept = newest
    end
    if #batch < MAX_EVENTS then break end
    batch = db:events({ id = id, since_seq = batch[#batch].seq, limit = MAX_EVENTS })
  end
  return kept, total
end

--- The job's events (db:events) and their timeline (lease.observe.svg).
-- @tparam table ctx
-- @param db a lease handle
-- @tparam string id the job
-- @treturn string HTML
local function job_events(ctx, db, id)
  local events, total = newest_events(db, id)
  if #events == 0 then
    return '<h3>Events</h3><p class="note">None recorded (the events ledger keeps them for handles '
      .. "opened with events = true).</p>\n"
  end
  local out = { "<h3>Timeline</h3>\n", (observe.svg(events, ctx.fmt):gsub("^<%?xml[^\n]*\n", "")),
    total > #events and string.format('<p class="note">The newest %d of its %d events.</p>\n',
      #events, total) or "",
    "<h3>Events</h3><table><tr><th>seq</th><th>at</th><th>op</th><th>outcome</th><th>owner</th>"
    .. "<th>fence</th></tr>" }
  for _, e in ipairs(events) do
    out[#out + 1] = string.format('<tr class="event"><td class="n">%s</td><td>%s</td><td>%s</td>'
      .. "<td>%s</td><td>%s</td><td class=\"n\">%s</td></tr>", h(ctx, e.seq), when(ctx, e.at),
      h(ctx, e.op), h(ctx, e.outcome .. (e.reason and (": " .. e.reason) or "")), h(ctx, e.owner or "-"),
      h(ctx, e.fence or "-"))
  end
  out[#out + 1] = "</table>\n"
  return table.concat(out)
end

--- The most bytes of a payload or result the job page shows.
web.MAX_SHOWN = 64 * 1024

--- A payload or result as the job page shows it: its first web.MAX_SHOWN
-- bytes, escaped, and a note of its whole size when it is longer.
-- @tparam table ctx
-- @tparam string class the pre element's class
-- @tparam ?string bytes the value (nil: none)
-- @treturn string HTML
local function shown(ctx, class, bytes)
  if not bytes then return '<p class="note">None.</p>' end
  local out = '<pre class="' .. class .. '">' .. h(ctx, bytes:sub(1, web.MAX_SHOWN)) .. "</pre>"
  if #bytes <= web.MAX_SHOWN then return out end
  return out .. string.format('<p class="note">The first %d of its %d bytes: lease show prints it whole.</p>',
    web.MAX_SHOWN, #bytes)
end

--- GET /job?id=ID: one job.
-- @tparam table ctx
-- @tparam table req
-- @tparam boolean authed
-- @treturn integer status
-- @treturn string the page
local function job_page(ctx, req, authed)
  local id = req.query.id
  if not id or id == "" then return 400, page(ctx, "no job", "<p>Give a job: /job?id=ID.</p>") end
  return compat.using(ctx.open_ro(ctx.db), function(db)
    local j = db:state(id, ctx.now())
    if not j then return 404, page(ctx, "no job", "<p>No job " .. h(ctx, id) .. ".</p>") end
    local out = { "<h2>Job ", h(ctx, id), "</h2>\n", token_note(authed), "<p>",
      button(ctx, authed, "/retry", { id = id }, "retry"), " ",
      button(ctx, authed, "/cancel", { id = id }, "cancel"), "</p>\n", job_fields(ctx, j),
      "<h3>Payload</h3>", shown(ctx, "payload", j.payload), "\n<h3>Result</h3>",
      shown(ctx, "result", j.result), "\n", job_errors(ctx, j), job_events(ctx, db, id) }
    return 200, page(ctx, "job " .. id, table.concat(out))
  end)
end

-- The actions: the form field they take and what they do to the handle.
local ACTIONS = {
  ["/pause"] = { field = "queue", run = function(db, v) db:pause(v); return true end },
  ["/resume"] = { field = "queue", run = function(db, v) db:resume(v); return true end },
  ["/retry"] = { field = "id", run = function(db, v, now) return db:retry(v, now) end },
  ["/cancel"] = { field = "id", run = function(db, v, now) return db:cancel(v, now) end },
}

--- POST /pause, /resume, /retry, /cancel: the form's token must be the
-- server's (else 403, nothing done); then the one write, and a redirect
-- (303) to the queues or to the job, or 409 when the job was refused.
-- @tparam table ctx
-- @tparam table req
-- @treturn integer status
-- @treturn string the page
-- @treturn ?table headers (Location)
local function action(ctx, req)
  local act = ACTIONS[req.path]
  if not act then return 404, page(ctx, "not found", "<p>No such action.</p>") end
  local form = web.form(req.body)
  if not web.token_equal(form.token, ctx.token) then
    return 403, page(ctx, "forbidden", "<p>Refused: this action needs the token the server printed "
      .. "when it started.</p>")
  end
  local v = form[act.field]
  if not v or v == "" then return 400, page(ctx, "bad request", "<p>Give " .. act.field .. ".</p>") end
  return compat.using(ctx.open_rw(ctx.db), function(db)
    local ok, why = act.run(db, v, ctx.now())
    if not ok then
      return 409, page(ctx, "refused", string.format('<p>Refused: %s for %s.</p><p><a href="/job?id=%s">'
        .. "back to the job</a></p>", h(ctx, why), h(ctx, v), h(ctx, web.urlencode(v))))
    end
    local back = act.field == "id" and ("/job?id=" .. web.urlencode(v)) or "/"
    return 303, page(ctx, "done", '<p><a href="' .. h(ctx, back) .. '">done</a></p>'), { Location = back }
  end)
end

-- The pages, by path.
local PAGES = { ["/"] = queues_page, ["/jobs"] = jobs_page, ["/job"] = job_page }

--- Route one request (no error handling).
-- @tparam table ctx
-- @tparam table req
-- @treturn integer status
-- @treturn string the page
-- @treturn ?table extra headers
local function route(ctx, req)
  if not host_allowed(ctx, req) then
    return 403, page(ctx, "forbidden", "<p>Refused: ask for this server as 127.0.0.1, localhost or [::1] "
      .. "with its port.</p>")
  end
  if req.method == "POST" then return action(ctx, req) end
  if req.method ~= "GET" and req.method ~= "HEAD" then
    return 405, page(ctx, "method not allowed", "<p>Only GET and POST.</p>"), { Allow = "GET, HEAD, POST" }
  end
  local fn = PAGES[req.path]
  if not fn then return 404, page(ctx, "not found", "<p>No page " .. h(ctx, req.path) .. ".</p>") end
  local authed = authorized(ctx, req)
  local status, body = fn(ctx, req, authed)
  if authed and web.token_equal(req.query.token, ctx.token) then
    return status, body, { ["Set-Cookie"] = cookie_name(ctx) .. "=" .. ctx.token
      .. "; Path=/; HttpOnly; SameSite=Strict" }
  end
  return status, body
end

--- Answer one HTTP request (lease.httpd's handler).
-- @tparam table ctx the server's context: `{db=, name=, token=, port=,
-- loopback=, fmt={show=, safe=, time=}, now=function, open_ro=function(db),
-- open_rw=function(db)}`
-- @tparam table req lease.httpd's request `{method=, path=, query=,
-- headers=, cookies=, body=}`
-- @treturn integer status
-- @treturn string content type
-- @treturn string body
-- @treturn table headers
function web.handle(ctx, req)
  local ok, status, body, extra = pcall(route, ctx, req)
  if not ok then
    io.stderr:write("lease web: ", ctx.fmt.show(tostring(status)), "\n")
    status, body, extra = 500, page(ctx, "error", "<p>Error: " .. h(ctx, status) .. "</p>"), nil
  end
  local headers = {}
  for k, v in pairs(HEADERS) do headers[k] = v end
  for k, v in pairs(extra or {}) do headers[k] = v end
  return status, "text/html; charset=utf-8", body, headers
end

--- The four numbers of a dotted IPv4 literal as inet_pton(3) reads it:
-- each 0 to 255, in decimal without a leading zero.
-- @tparam string a the literal
-- @treturn ?table the four numbers, or nil when a is none
local function ipv4_octets(a)
  local b = {}
  for part in (a .. "."):gmatch("([^.]*)%.") do
    if not (part == "0" or part:find("^[1-9]%d?%d?$")) or tonumber(part) > 255 then return nil end
    b[#b + 1] = tonumber(part)
  end
  return #b == 4 and b or nil
end

--- The 16-bit groups of an IPv6 literal as inet_pton(3) reads it: hex
-- groups of 1 to 4 digits, one "::" for a run of zeros, and a dotted IPv4
-- tail standing for the last two groups.
-- @tparam string a the literal, lower case
-- @treturn ?table the 8 groups, or nil when a is no IPv6 literal
local function ipv6_groups(a)
  local v4 = a:match(":([%d.]+)$")
  if v4 and v4:find(".", 1, true) then
    local b = ipv4_octets(v4)
    if not b then return nil end
    a = a:sub(1, #a - #v4) .. string.format("%x:%x", b[1] * 256 + b[2], b[3] * 256 + b[4])
  end
  local function groups(s)
    local t = {}
    if s == "" then return t end
    for g in (s .. ":"):gmatch("([^:]*):") do
      if not g:find("^%x%x?%x?%x?$") then return nil end
      t[#t + 1] = tonumber(g, 16)
    end
    return t
  end
  local left, right = a:match("^(.-)::(.*)$")
  if not left then
    local g = groups(a)
    return g and #g == 8 and g or nil
  end
  local l, r = groups(left), groups(right)
  if not l or not r or #l + #r > 7 then return nil end
  for _ = 1, 8 - #l - #r do l[#l + 1] = 0 end
  for _, x in ipairs(r) do l[#l + 1] = x end
  return l
end

--- Whether an address literal is a loopback one, however it is spelt, as
-- the server binds it (inet_pton): IPv4 127.0.0.0/8, IPv6 ::1, and IPv4
-- 127.0.0.0/8 mapped into IPv6 (::ffff:127.0.0.1, ::ffff:7f00:1).
-- @tparam string bind an address literal
-- @treturn boolean
function web.is_loopback(bind)
  bind = bind:lower()
  if not bind:find(":", 1, true) then
    local b = ipv4_octets(bind)
    return b ~= nil and b[1] == 127
  end
  local g = ipv6_groups(bind)
  if not g then return false end
  for i = 1, 5 do
    if g[i] ~= 0 then return false end
  end
  if g[6] == 0xffff then return math.floor(g[7] / 256) == 127 end
  return g[6] == 0 and g[7] == 0 and g[8] == 1
end

--- Listen and serve until the process is stopped; SIGINT (Ctrl-C) stops
-- it cleanly.
-- @tparam table ctx as web.handle's, without port (set here)
-- @tparam string bind the address to listen on (an IPv4 or IPv6 literal)
-- @tparam integer port 0: one the system picks
-- @tparam file out where the address and token go, once listening
-- @raise when lease.httpd is missing (a build without libmicrohttpd), or
-- the address cannot be bound
function web.serve(ctx, bind, port, out)
  local has, httpd = pcall(require, "lease.httpd")
  if not has then
    error("this lease was built without libmicrohttpd, so web is unavailable (install "
      .. "libmicrohttpd-dev and build again)", 0)
  end
  -- called through pcall, so that its message (a bad address, a port in
  -- use) carries no source position
  local listening, srv = pcall(httpd.listen, bind, port, function(req) return web.handle(ctx, req) end)
  if not listening then error(srv, 0) end
  ctx.port = srv:port()
  ctx.loopback = web.is_loopback(bind)
  local host = bind:find(":") and ("[" .. bind .. "]") or bind
  out:write(string.format("lease web: serving %s on http://%s:%d/ (one request at a time)\n", ctx.fmt.show(ctx.name),
    host, ctx.port))
  out:write(string.format("token %s: open http://%s:%d/?token=%s to pause, resume, retry and cancel\n",
    ctx.token, host, ctx.port, ctx.token))
  out:flush()
  local ok, why = pcall(function() while true do srv:run(1) end end)
  srv:close()
  if not ok and not tostring(why):find("interrupted!$") then error(why, 0) end
  out:write("lease web: stopped\n")
end

return web
