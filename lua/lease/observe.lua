--- What `lease stats`, `lease metrics` and `lease timeline` show: a
-- queue's numbers from the jobs (db:queues, db:jobs) and from the events
-- ledger (db:events), as a table, as JSON, as Prometheus text, and the
-- ledger's leases drawn as an SVG timeline.
--
-- Completions and refusals come from the ledger, so they are there only
-- for the writes of handles opened with `events = true`.  Job events carry
-- no queue: a job's queue is read from the jobs, so the completions of a
-- job since pruned count in no queue.  Times are the ledger's `at` (the
-- caller's clock).
-- @module lease.observe
local compat = require("lease.compat")

local observe = {}

--- The statuses a job's state has (db:state, db:jobs' status filter,
-- db:queues' counts), in the order they are shown.
observe.STATUSES = { "available", "scheduled", "running", "retryable", "completed", "discarded",
                     "cancelled", "waiting" }
local STATUSES = observe.STATUSES
-- The windows completions are counted over, in minutes.
local WINDOWS = { 1, 5, 15 }

--- Every event of the ledger, paged through.
-- @param db a lease handle
-- @tparam[opt] string id only this job's
-- @treturn table the events in seq order
local function all_events(db, id)
  local out, since = {}, 0
  repeat
    local page = db:events({ id = id, since_seq = since, limit = 10000 })
    for _, e in ipairs(page) do out[#out + 1] = e end
    if #page > 0 then since = page[#page].seq end
  until #page < 10000
  return out
end

--- Every job (no results, no errors), paged through.
-- @param db a lease handle
-- @tparam number now the time statuses are read at
-- @treturn table the jobs in enqueue order
local function all_jobs(db, now)
  local out, after = {}, 0
  repeat
    local page = db:jobs({ now = now, limit = 1000, after = after, results = false })
    for _, j in ipairs(page) do out[#out + 1] = j end
    if #page > 0 then after = page[#page].seq end
  until #page < 1000
  return out
end

--- The numbers of every queue, and the ledger's refusals.
-- A job's age as available is measured from the latest of its `run_at`,
-- the end of its last lease (`until`, when it had one: a fence above 0 and
-- an `until` above 0; a job made available again by retry keeps its fence
-- with `until` 0, which ends no lease) and its last event
-- in the ledger, each counted only when it is not after now; a job with
-- none of these has no age (nil), and neither does a queue whose
-- available jobs all have none.
-- @param db a lease handle
-- @tparam number now seconds, the clock of the jobs' leases and the ledger
-- @treturn table `{now=, events=N, queues={...}, refusals={...}}`: queues in
-- db:queues order, each `{name=, paused=, concurrency=, rate=, per=,
-- counts={status=N...}, completions=N, completions_per_minute={["1m"]=,
-- ["5m"]=, ["15m"]=}, oldest_available_age=?, refusals={...}}`; refusals
-- (all, and per queue) a list of `{op=, reason=, count=}` sorted by op then
-- reason; completions are the ledger's accepted completes (of a job whose
-- queue is known)
function observe.collect(db, now)
  local events = all_events(db)
  local jobs = all_jobs(db, now)
  local queue_of, last_at = {}, {}
  for _, j in ipairs(jobs) do queue_of[j.id] = j.queue end
  for _, e in ipairs(events) do
    if e.id and e.at <= now then last_at[e.id] = e.at end
  end
  local res = { now = now, events = #events, queues = {}, refusals = {} }
  local by_name = {}
  for _, q in ipairs(db:queues(now)) do
    local s = { name = q.name, paused = q.paused, concurrency = q.concurrency, rate = q.rate,
                per = q.per, counts = {}, completions = 0, completions_per_minute = {},
                refusals = {}, windows = {} }
    for _, st in ipairs(STATUSES) do s.counts[st] = q[st] or 0 end
    for _, m in ipairs(WINDOWS) do s.windows[m] = 0 end
    res.queues[#res.queues + 1] = s
    by_name[q.name] = s
  end
  for _, j in ipairs(jobs) do
    local s = by_name[j.queue]
    if s and j.status == "available" then
      local since
      local u = j["until"]
      local lease_end = (j.fence or 0) > 0 and type(u) == "number" and u > 0 and u
      for _, t in ipairs({ j.run_at or false, lease_end or false, last_at[j.id] or false }) do
        if t and t <= now and (not since or t > since) then since = t end
      end
      if since and (not s.oldest_available_age or now - since > s.oldest_available_age) then
        s.oldest_available_age = now - since
      end
    end
  end
  local refusals, per_queue = {}, {}
  for _, e in ipairs(events) do
    local s = by_name[e.id and queue_of[e.id] or e.queue]
    if e.outcome == "refused" then
      local key = e.op .. "\0" .. tostring(e.reason)
      refusals[key] = (refusals[key] or 0) + 1
      if s then
        per_queue[s] = per_queue[s] or {}
        per_queue[s][key] = (per_queue[s][key] or 0) + 1
      end
    elseif e.op == "complete" and s then
      s.completions = s.completions + 1
      for _, m in ipairs(WINDOWS) do
        if e.at > now - 60 * m and e.at <= now then s.windows[m] = s.windows[m] + 1 end
      end
    end
  end
  local function list(counts)
    local out = {}
    for key, n in pairs(counts) do
      local op, reason = key:match("^(.-)%z(.*)$")
      out[#out + 1] = { op = op, reason = reason, count = n }
    end
    table.sort(out, function(a, b)
      if a.op ~= b.op then return a.op < b.op end
      return a.reason < b.reason
    end)
    return out
  end
  res.refusals = list(refusals)
  for _, s in ipairs(res.queues) do
    s.refusals = list(per_queue[s] or {})
    for _, m in ipairs(WINDOWS) do s.completions_per_minute[m .. "m"] = s.windows[m] / m end
    s.windows = nil
  end
  return res
end

--- The numbers of observe.collect as JSON (one object, exact numbers, the
-- keys of every object sorted).  A number that is not finite (an age from
-- a run_at of -inf another client wrote) is null.
-- @tparam table st observe.collect's table
-- @tparam function safe makes a byte string valid UTF-8 (lease.cli's utf8_safe)
-- @treturn string one line of JSON
function observe.json(st, safe)
  local json = require("lease.json")
  local qs = {}
  for i, s in ipairs(st.queues) do
    local rs = {}
    for k, r in ipairs(s.refusals) do rs[k] = { op = r.op, reason = r.reason, count = r.count } end
    qs[i] = { name = safe(s.name), paused = s.paused, concurrency = s.concurrency or json.null,
              rate = s.rate or json.null, per = s.per or json.null, counts = s.counts,
              completions = s.completions, completions_per_minute = s.completions_per_minute,
              oldest_available_age = s.oldest_available_age or json.null,
              refusals = rs }
  end
  return json.encode({ now = st.now, events = st.events, queues = qs, refusals = st.refusals },
    { sorted = true, null_nonfinite = true })
end

--- The numbers of observe.collect as a table a person reads.
-- @tparam table st observe.collect's table
-- @tparam table fmt `{show=, time=}`: lease.cli's show_bytes and iso_time
-- @treturn string the lines
function observe.text(st, fmt)
  local lines = { "at " .. fmt.time(st.now) }
  if st.events == 0 then lines[#lines + 1] = "(no events recorded: open with events = true)" end
  for _, s in ipairs(st.queues) do
    local lim = {}
    if s.concurrency then lim[#lim + 1] = "concurrency " .. s.concurrency end
    if s.rate then lim[#lim + 1] = string.format("rate %d/%gs", s.rate, s.per) end
    lines[#lines + 1] = string.format("queue %s  %s  limits: %s", fmt.show(s.name),
      s.paused and "paused" or "running", #lim > 0 and table.concat(lim, ", ") or "-")
    local parts = {}
    for _, stt in ipairs(STATUSES) do parts[#parts + 1] = s.counts[stt] .. " " .. stt end
    lines[#lines + 1] = "  jobs: " .. table.concat(parts, ", ")
    local cpm = s.completions_per_minute
    lines[#lines + 1] = string.format("  completions/min: %.2f (1m)  %.2f (5m)  %.2f (15m)",
      cpm["1m"], cpm["5m"], cpm["15m"])
    lines[#lines + 1] = "  oldest available: " .. (s.oldest_available_age
      and string.format("%.1fs", s.oldest_available_age) or "-")
    for _, r in ipairs(s.refusals) do
      lines[#lines + 1] = string.format("  refused %s %s: %d", r.op, r.reason, r.count)
    end
  end
  if #st.refusals > 0 then
    lines[#lines + 1] = "refusals (all queues):"
    for _, r in ipairs(st.refusals) do
      lines[#lines + 1] = string.format("  %s %s: %d", r.op, r.reason, r.count)
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

--- A label value for the Prometheus text format, which is UTF-8: each
-- backslash as two, each byte that is not part of a valid UTF-8 sequence as
-- the text \xNN (so that no two names give one value: the name \xff, four
-- characters, reads back as \\xff, the byte 255 as \xff), then backslash,
-- double quote and newline escaped as the format writes them.
-- @tparam string s any bytes
-- @treturn string valid UTF-8
function observe.label(s)
  s = s:gsub("\\", "\\\\")
  if s:find("[\128-\255]") then
    local out, i = {}, 1
    while i <= #s do
      local n = compat.utf8_sequence(s, i)
      if n then
        out[#out + 1] = s:sub(i, i + n - 1)
        i = i + n
      else
        out[#out + 1] = compat.hex_escaped(s:sub(i, i))
        i = i + 1
      end
    end
    s = table.concat(out)
  end
  return (s:gsub("[\\\"\n]", { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n" }))
end

--- A number as Prometheus text writes it.
-- @tparam number x
-- @treturn string
local function prom_number(x)
  if x ~= x then return "NaN" end
  if x == math.huge then return "+Inf" end
  if x == -math.huge then return "-Inf" end
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return string.format("%d", x) end
  return string.format("%.17g", x)
end

--- The numbers of observe.collect in the Prometheus text exposition format
-- (version 0.0.4): each family's # HELP and # TYPE, then its samples.
-- @tparam table st observe.collect's table
-- @treturn string the text, ending with a newline
function observe.metrics(st)
  local out = {}
  local function family(name, kind, help, samples)
    out[#out + 1] = "# HELP " .. name .. " " .. help
    out[#out + 1] = "# TYPE " .. name .. " " .. kind
    for _, s in ipairs(samples) do
      local labels = {}
      for _, kv in ipairs(s[1]) do
        labels[#labels + 1] = kv[1] .. '="' .. observe.label(kv[2]) .. '"'
      end
      out[#out + 1] = name .. (#labels > 0 and ("{" .. table.concat(labels, ",") .. "}") or "")
        .. " " .. prom_number(s[2])
    end
  end
  local jobs, paused, done, oldest = {}, {}, {}, {}
  for _, s in ipairs(st.queues) do
    for _, stt in ipairs(STATUSES) do
      jobs[#jobs + 1] = { { { "queue", s.name }, { "status", stt } }, s.counts[stt] }
    end
    paused[#paused + 1] = { { { "queue", s.name } }, s.paused and 1 or 0 }
    done[#done + 1] = { { { "queue", s.name } }, s.completions }
    if s.oldest_available_age then
      oldest[#oldest + 1] = { { { "queue", s.name } }, s.oldest_available_age }
    end
  end
  local refused = {}
  for _, r in ipairs(st.refusals) do
    refused[#refused + 1] = { { { "op", r.op }, { "reason", r.reason } }, r.count }
  end
  family("lease_jobs", "gauge", "Jobs by queue and status.", jobs)
  family("lease_queue_paused", "gauge", "1 when the queue is paused, else 0.", paused)
  family("lease_completions_total", "counter",
    "Accepted completes in the events ledger, by the job's queue.", done)
  family("lease_refusals_total", "counter", "Refused operations in the events ledger.", refused)
  family("lease_oldest_available_age_seconds", "gauge",
    "Seconds the oldest available job of the queue has waited.", oldest)
  family("lease_events", "gauge", "Events held in the ledger.", { { {}, st.events } })
  return table.concat(out, "\n") .. "\n"
end

--- Text for XML: valid UTF-8 (safe), the characters XML 1.0 does not
-- allow (C0 controls other than tab, newline and return; U+FFFE, U+FFFF)
-- as U+FFFD, and & < > " ' as entities.
-- @tparam string s any bytes
-- @tparam function safe makes a byte string valid UTF-8 (lease.cli's utf8_safe)
-- @treturn string
function observe.xml(s, safe)
  s = safe(s):gsub("[%z\1-\8\11\12\14-\31]", "\239\191\189")
    :gsub("\239\191[\190\191]", "\239\191\189")
  return (s:gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;",
                               ["'"] = "&#39;" }))
end

--- A stable colour for an owner: a hue from a hash of its bytes
-- (h = h * 31 + byte, modulo 2^32, exact in a double), spread by 137
-- degrees a step so that owners whose names differ in one byte differ
-- in hue.
-- @tparam string owner
-- @treturn string "hsl(H,65%,45%)"
function observe.colour(owner)
  local h = 7
  for i = 1, #owner do h = (h * 31 + owner:byte(i)) % 4294967296 end
  return string.format("hsl(%d,65%%,45%%)", (h % 360) * 137 % 360)
end

-- The ops that end the lease a claim began (accepted), besides a new claim.
local ENDS = { complete = true, fail = true, release = true, expire = true, cancel = true,
               discard = true, prune = true }

--- The ledger's events as rows of leases and marks, one row per job in the
-- order of its first event.  A lease runs from its claim to the next
-- accepted event of the job that ends it (complete, fail, release, expire,
-- cancel, discard, prune, or another claim); one with none is open and
-- runs to the last event's time.  Every renew, complete, fail and release
-- is a mark (accepted or refused), and so is every other refused operation
-- and every expire.
-- @tparam table events db:events' rows, in seq order
-- @treturn table rows `{id=, leases={{from=, to=, owner=, fence=, open=}},
-- marks={{at=, op=, owner=, fence=, outcome=, reason=}}}`
-- @treturn number the first event's time
-- @treturn number the last event's time
function observe.leases(events)
  local rows, by_id, t0, t1 = {}, {}, nil, nil
  for _, e in ipairs(events) do
    if e.id then
      t0 = t0 and math.min(t0, e.at) or e.at
      t1 = t1 and math.max(t1, e.at) or e.at
      local r = by_id[e.id]
      if not r then
        r = { id = e.id, leases = {}, marks = {} }
        by_id[e.id] = r
        rows[#rows + 1] = r
      end
      local cur = r.leases[#r.leases]
      local ok = e.outcome == "ok"
      if ok and (e.op == "claim" or ENDS[e.op]) and cur and cur.to == nil then cur.to = e.at end
      if ok and e.op == "claim" then
        r.leases[#r.leases + 1] = { from = e.at, owner = e.owner or "", fence = e.fence }
      end
      if not ok or e.op == "renew" or e.op == "complete" or e.op == "fail" or e.op == "release"
          or e.op == "expire" then
        r.marks[#r.marks + 1] = { at = e.at, op = e.op, owner = e.owner, fence = e.fence,
                                  outcome = e.outcome, reason = e.reason }
      end
    end
  end
  for _, r in ipairs(rows) do
    for _, l in ipairs(r.leases) do
      if l.to == nil then l.to, l.open = t1, true end
    end
  end
  return rows, t0, t1
end

-- Tick steps of the time axis, in seconds.
local STEPS = { 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120,
                300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800 }

--- The ledger's leases as an SVG timeline (observe.leases): one row per
-- job, each lease a bar coloured by owner (observe.colour) and labelled
-- with its fence, accepted writes as circles, refused ones as red crosses,
-- each mark with a <title> naming op, owner, fence and outcome; a UTC time
-- axis on top.
-- @tparam table events db:events' rows, in seq order
-- @tparam table fmt `{safe=, time=}`: lease.cli's utf8_safe and iso_time
-- @treturn string the SVG document
-- @treturn table counts `{jobs=, leases=, refused=}`
function observe.svg(events, fmt)
  local rows, t0, t1 = observe.leases(events)
  local function x(s) return observe.xml(s, fmt.safe) end
  t0, t1 = t0 or 0, t1 or 1
  -- at least a second wide, and wide enough to be a span at all where t0
  -- is so large that t0 + 1 is t0 (a clock in microseconds, or a bogus now)
  if not (t1 - t0 >= 1) then t1 = t0 + math.max(1, math.abs(t0) * 2 ^ -40) end
  local left, plot, top, rh = 200, 800, 50, 26
  local w, h = left + plot + 20, top + rh * #rows + 20
  local function px(t) return string.format("%.2f", left + (t - t0) / (t1 - t0) * plot) end
  local out = {
    '<?xml version="1.0" encoding="UTF-8"?>',
    string.format('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
      .. 'font-family="sans-serif" font-size="11">', w, h, w, h),
    "<title>lease timeline " .. x(fmt.time(t0)) .. " to " .. x(fmt.time(t1)) .. "</title>",
    '<rect width="100%" height="100%" fill="white"/>',
  }
  local step = nil
  for _, s in ipairs(STEPS) do
    if (t1 - t0) / s <= 8 then step = s; break end
  end
  -- wider than 8 weeks (times in milliseconds or smaller units read as
  -- seconds): the week times a power of ten, still at most 8 ticks
  step = step or STEPS[#STEPS] * 10 ^ math.ceil(math.log((t1 - t0) / (8 * STEPS[#STEPS])) / math.log(10))
  out[#out + 1] = string.format('<text class="axis-title" x="%d" y="14">time (UTC) from %s</text>',
    left, x(fmt.time(t0)))
  local first = math.ceil(t0 / step) * step
  for i = 0, math.floor((t1 - first) / step) do
    local tick = first + i * step
    local iso = fmt.time(tick)
    -- a time past the calendar is the number itself, whole
    local label = not iso:find("^%d%d%d%d%-") and iso
      or (step < 1 and iso:sub(12, 23) or (step < 86400 and iso:sub(12, 19) or iso:sub(1, 10)))
    out[#out + 1] = string.format('<g class="tick"><line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#ccc"/>'
      .. '<text x="%s" y="%d" text-anchor="middle">%s</text></g>', px(tick), top - 6, px(tick), h - 20,
      px(tick), top - 10, x(label))
  end
  local counts = { jobs = #rows, leases = 0, refused = 0 }
  for i, r in ipairs(rows) do
    local y = top + (i - 1) * rh
    out[#out + 1] = string.format('<g class="job"><text class="id" x="4" y="%d">%s</text>', y + 16,
      x(r.id))
    for _, l in ipairs(r.leases) do
      counts.leases = counts.leases + 1
      local x0, x1 = tonumber(px(l.from)), tonumber(px(l.to))
      out[#out + 1] = string.format('<g class="lease%s"><title>%s</title><rect x="%.2f" y="%d" '
        .. 'width="%.2f" height="%d" fill="%s" data-owner="%s" data-fence="%s"/>'
        .. '<text class="fence" x="%.2f" y="%d" fill="white">%s</text></g>',
        l.open and " open" or "", x(string.format("owner %s, fence %s, %s to %s%s", l.owner,
          tostring(l.fence), fmt.time(l.from), fmt.time(l.to), l.open and " (still held)" or "")),
        x0, y + 4, math.max(x1 - x0, 1), rh - 8, observe.colour(l.owner), x(l.owner),
        tostring(l.fence), x0 + 2, y + 16, x(tostring(l.fence)))
    end
    for _, m in ipairs(r.marks) do
      local title = x(string.format("%s %s: owner %s, fence %s%s at %s", m.op,
        m.outcome == "refused" and "refused" or "accepted", m.owner or "-", tostring(m.fence or "-"),
        m.reason and (", " .. m.reason) or "", fmt.time(m.at)))
      local cx, cy = tonumber(px(m.at)), y + rh / 2
      if m.outcome == "refused" then
        counts.refused = counts.refused + 1
        out[#out + 1] = string.format('<g class="refused"><title>%s</title><path d="M%.2f %.2f L%.2f %.2f '
          .. 'M%.2f %.2f L%.2f %.2f" stroke="red" stroke-width="3"/></g>', title, cx - 6, cy - 6,
          cx + 6, cy + 6, cx - 6, cy + 6, cx + 6, cy - 6)
      else
        out[#out + 1] = string.format('<g class="accepted"><title>%s</title><circle cx="%.2f" cy="%.2f" '
          .. 'r="4" fill="%s" stroke="black"/></g>', title, cx, cy,
          m.op == "expire" and "white" or "black")
      end
    end
    out[#out + 1] = "</g>"
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n") .. "\n", counts
end

--- An SVG in a minimal HTML page.
-- @tparam string svg observe.svg's document
-- @treturn string the page
function observe.html(svg)
  return '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>lease timeline</title></head>\n'
    .. "<body>\n" .. svg:gsub("^<%?xml[^\n]*\n", "") .. "</body></html>\n"
end

return observe
