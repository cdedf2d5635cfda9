-- lease.cli: the subcommands of the `lease` host program.
--
--   lease pool [-j N] [--ttl S] [--quiet] WORKER.lua DB
--   lease jobs DB [--ready|--held|--done|--blocked] [--json] [--now T]
--   lease show DB ID [--json] [--now T]
--
-- Inspection reads `until` as wall-clock seconds (lease.now(), what the pool
-- stores); a database kept on another clock passes its own --now.
local cli = {}

-- A usage error: caught by cli.main, which prints it and returns 2.
local Usage = {}

local function usage(msg) error(setmetatable({ msg = msg }, Usage), 0) end

local USAGE = [==[
usage: lease pool [-j N] [--ttl S] [--quiet] WORKER.lua DB
       lease jobs DB [--ready|--held|--done|--blocked] [--json] [--now T]
       lease show DB ID [--json] [--now T]]==]

-- Split argv into flags (with their values) and positional arguments.
-- spec maps a flag to true (takes a value) or false (a switch).
local function parse(argv, first, spec)
  local flags, pos, i = {}, {}, first
  while argv[i] ~= nil do
    local a = argv[i]
    if a:sub(1, 1) == "-" and #a > 1 then
      if spec[a] == nil then usage("unknown option " .. a) end
      if spec[a] then
        i = i + 1
        if argv[i] == nil then usage(a .. " needs a value") end
        flags[a] = argv[i]
      else
        flags[a] = true
      end
    else
      pos[#pos + 1] = a
    end
    i = i + 1
  end
  return flags, pos
end

-- A byte string shown to a person: printable ASCII as is, the rest escaped.
local function show_bytes(s)
  return (s:gsub("[^\32-\126]", function(c) return string.format("\\x%02x", c:byte()) end))
end

-- Time left on a lease, for a person.
local function left(job, now)
  if job.blocked then return "blocked" end
  if job.done or not job.owner then return "-" end
  local d = job["until"] - now
  if d > 0 then return string.format("%.1fs", d) end
  return string.format("expired %.1fs ago", -d)
end

-- A byte string as valid UTF-8 for JSON: unchanged when it is UTF-8, else
-- each byte that is not part of a valid sequence becomes the character of
-- the same number (Latin-1), so the JSON stays valid; JSON cannot carry
-- raw bytes.
local function utf8_safe(s)
  if s == nil or utf8.len(s) then return s end
  local out, i = {}, 1
  while i <= #s do
    local ok = false
    for n = 4, 1, -1 do   -- the longest valid sequence starting here
      local piece = s:sub(i, i + n - 1)
      if #piece == n and utf8.len(piece) == 1 then
        out[#out + 1] = piece
        i = i + n
        ok = true
        break
      end
    end
    if not ok then
      out[#out + 1] = utf8.char(s:byte(i))
      i = i + 1
    end
  end
  return table.concat(out)
end

--- The JSON text of a job, one object (lease.json: numbers read back exactly).
-- `until` is null when the stored value is not a finite number (the job
-- is then blocked, and `blocked` says why).
-- @tparam table job a job as db:state or db:jobs returns it
-- @tparam boolean with_result whether to include the result text
-- @treturn string the JSON object
local function job_json(job, with_result)
  local json = require("lease.json")
  local u = job["until"]
  local finite = u == u and u ~= math.huge and u ~= -math.huge
  local t = { id = utf8_safe(job.id), owner = utf8_safe(job.owner) or json.null,
              ["until"] = finite and u or json.null, fence = job.fence, done = job.done,
              result_bytes = job.result and #job.result or 0, blocked = job.blocked }
  if with_result then t.result = utf8_safe(job.result) or json.null end
  return json.encode(t, { keyorder = { "id", "owner", "until", "fence", "done", "result_bytes",
                                       "blocked", "result" } })
end

local function now_from(flags)
  if flags["--now"] then
    local t = tonumber(flags["--now"])
    if not t or t ~= t or t == math.huge or t == -math.huge then usage("--now needs a finite number") end
    return t
  end
  return require("lease").now()
end

-- Open an existing database read-only (inspection never writes).
local function open_ro(path)
  return require("lease").open(path, { readonly = true, create = false })
end

--- lease jobs DB [--ready|--held|--done] [--json] [--now T]
-- Lists jobs in enqueue order: a table a person reads (id, owner, time left
-- on the lease, fence, done, result size) with a count line, or one JSON
-- array.  Returns 0.
local function cmd_jobs(argv, out)
  local flags, pos = parse(argv, 2, { ["--ready"] = false, ["--held"] = false, ["--done"] = false,
                                     ["--blocked"] = false, ["--json"] = false, ["--now"] = true })
  if #pos ~= 1 then usage("jobs takes one database path") end
  local which = "all"
  for _, w in ipairs({ "ready", "held", "done", "blocked" }) do
    if flags["--" .. w] then
      if which ~= "all" then usage("give at most one of --ready, --held, --done, --blocked") end
      which = w
    end
  end
  local now = now_from(flags)
  local db <close> = open_ro(pos[1])
  local rows, after = {}, 0
  repeat
    local page = db:jobs(which, now, 1000, after)
    for _, j in ipairs(page) do rows[#rows + 1] = j end
    if #page > 0 then after = page[#page].seq end
  until #page < 1000
  if flags["--json"] then
    local parts = {}
    for k, j in ipairs(rows) do parts[k] = job_json(j, false) end
    out:write("[", table.concat(parts, ",\n "), "]\n")
    return 0
  end
  local w = 2
  for _, j in ipairs(rows) do w = math.max(w, #show_bytes(j.id)) end
  w = math.min(w, 60)
  local fmt = "%-" .. w .. "s  %-12s  %-18s  %6s  %-4s  %s\n"
  out:write(string.format(fmt, "ID", "OWNER", "LEASE LEFT", "FENCE", "DONE", "RESULT"))
  for _, j in ipairs(rows) do
    out:write(string.format(fmt, show_bytes(j.id), j.owner and show_bytes(j.owner) or "-",
      left(j, now), j.fence, j.done and "yes" or "no", j.result and (#j.result .. " B") or "-"))
  end
  local c = db:counts(now)
  out:write(string.format("%d jobs: %d ready, %d held, %d done%s%s\n", c.total, c.ready, c.held,
    c.done, c.blocked > 0 and string.format(", %d blocked", c.blocked) or "",
    which ~= "all" and string.format(" (%d shown)", #rows) or ""))
  return 0
end

--- lease show DB ID [--json] [--now T]
-- Prints one job with its whole result.  Returns 0, or 1 when the job is
-- missing.
local function cmd_show(argv, out, err)
  local flags, pos = parse(argv, 2, { ["--json"] = false, ["--now"] = true })
  if #pos ~= 2 then usage("show takes a database path and a job id") end
  local now = now_from(flags)
  local db <close> = open_ro(pos[1])
  local j = db:state(pos[2])
  if not j then
    err:write(string.format("lease show: no job %q in %s\n", pos[2], pos[1]))
    return 1
  end
  if flags["--json"] then
    out:write(job_json(j, true), "\n")
    return 0
  end
  out:write(string.format("id          %s\nowner       %s\nuntil       %.3f\nlease left  %s\n"
    .. "fence       %d\ndone        %s\nresult      %s\n", show_bytes(j.id),
    j.owner and show_bytes(j.owner) or "-", j["until"], left(j, now), j.fence,
    j.done and "yes" or "no", j.result and (#j.result .. " bytes") or "-"))
  if j.blocked then out:write("blocked     ", j.blocked, "\n") end
  if j.result then out:write(j.result, j.result:sub(-1) == "\n" and "" or "\n") end
  return 0
end

--- lease pool [-j N] [--ttl S] [--quiet] WORKER.lua DB
-- Runs lease.pool over the jobs already in DB with the handler WORKER.lua
-- returns; prints the summary.  A live progress line goes to stderr when
-- it is a terminal (never with --quiet).  Returns 0, or 1 when a worker
-- failed or a handler raised.
local function cmd_pool(argv, out)
  local flags, pos = parse(argv, 2, { ["-j"] = true, ["--ttl"] = true, ["--quiet"] = false })
  if #pos ~= 2 then usage("pool takes a worker script and a database path") end
  local j = math.tointeger(tonumber(flags["-j"] or "4"))
  if not j or j < 1 or j > 256 then usage("-j needs an integer from 1 to 256") end
  local ttl = tonumber(flags["--ttl"] or "10")
  local now = require("lease").now()
  if not ttl or not (ttl > 0) or ttl == math.huge or not (now + ttl > now) then
    usage("--ttl needs a finite number of seconds > 0, large enough to change the clock")
  end
  local f = io.open(pos[1], "rb")
  if not f then usage("cannot read worker script " .. pos[1]) end
  f:close()
  local pool = require("lease.pool")
  local progress = not flags["--quiet"] and os.execute("[ -t 2 ]") == true
  local s = pool.run({ db = pos[2], worker = pos[1], workers = j, ttl = ttl, progress = progress,
                       open = { create = false } })
  out:write(pool.format(s), "\n")
  return (#s.failed == 0 and s.handler_errors == 0) and 0 or 1
end

local COMMANDS = { jobs = cmd_jobs, show = cmd_show, pool = cmd_pool }

--- cli.is_command(name) -> boolean: whether `lease NAME ...` is a subcommand.
function cli.is_command(name)
  return COMMANDS[name] ~= nil
end

--- cli.main(argv [, out [, err]]) -> exit status
--   argv (table): argv[1] the subcommand, then its arguments.
--   out, err (files, default io.stdout, io.stderr).
-- Runs the subcommand; usage errors print the usage and return 2; a
-- database or other error prints "lease <cmd>: <message>" and returns 1.
function cli.main(argv, out, err)
  out, err = out or io.stdout, err or io.stderr
  local name = argv[1]
  local cmd = COMMANDS[name]
  if not cmd then
    err:write("lease: unknown command ", tostring(name), "\n", USAGE, "\n")
    return 2
  end
  local ok, res = pcall(cmd, argv, out, err)
  if ok then return res end
  if getmetatable(res) == Usage then
    err:write("lease ", name, ": ", res.msg, "\n", USAGE, "\n")
    return 2
  end
  err:write("lease ", name, ": ", tostring(res), "\n")
  return 1
end

return cli
