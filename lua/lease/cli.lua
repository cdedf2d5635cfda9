--- The subcommands of the `lease` host program, and its usage text.
--
--   lease pool [-j N] [--ttl S] [--quiet] WORKER.lua DB
--   lease jobs DB [--ready|--held|--done|--blocked] [--json] [--now T]
--   lease show DB ID [--json] [--now T]
--
-- Inspection reads `until` as wall-clock seconds (lease.now(), what the pool
-- stores); a database kept on another clock passes its own --now.  The
-- host program (src/host.c) asks this module for its whole usage text
-- (@{usage}) and runs a first argument that is a word through @{main}.
-- @module lease.cli
local cli = {}
local compat = require("lease.compat")

-- The metatable of a usage error: cli.main prints it and returns 2.
local Usage = {}

--- Raise a usage error.
-- @tparam string msg what is wrong with the command line
-- @raise always: a table with metatable Usage, caught by cli.main
local function usage(msg) error(setmetatable({ msg = msg }, Usage), 0) end

-- The host program's own options, as lua.c's, one line each.
local OPTIONS = [==[
  -e stat   execute string 'stat'
  -i        enter interactive mode after executing 'script'
  -l mod    require library 'mod' into global 'mod'
  -l g=mod  require library 'mod' into global 'g'
  -v        show version information
  -E        ignore environment variables (LUA_INIT, LUA_PATH, ...)
  -W        turn warnings on
  --        stop handling options
  -         stop handling options and execute stdin
  -h, --help     show this help
  --version      show version information]==]

--- Split argv into flags (with their values) and positional arguments.
-- @tparam table argv the arguments (strings)
-- @tparam integer first the index of the first one to read
-- @tparam table spec maps each flag to true (takes a value) or false (a switch)
-- @treturn table flags: flag -> its value, or true for a switch
-- @treturn table the positional arguments, in order
-- @raise a usage error for an unknown flag or a missing value
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

--- A byte string shown to a person: printable ASCII as is, the rest as \xNN.
-- @tparam string s any bytes
-- @treturn string the text to show
local function show_bytes(s)
  return (s:gsub("[^\32-\126]", function(c) return string.format("\\x%02x", c:byte()) end))
end

--- Time left on a lease, for a person: "12.5s", "expired 3.0s ago",
-- "blocked", or "-" for a job that is done or not held.
-- @tparam table job a job as db:state returns it
-- @tparam number now the time to measure from (seconds, the lease's clock)
-- @treturn string
local function left(job, now)
  if job.blocked then return "blocked" end
  if job.done or not job.owner then return "-" end
  local d = job["until"] - now
  if d > 0 then return string.format("%.1fs", d) end
  return string.format("expired %.1fs ago", -d)
end

--- The length of the UTF-8 sequence that starts at byte i of s, or nil
-- when none starts there.  Valid means what Lua 5.4's utf8.len accepts
-- (RFC 3629): the shortest form, no surrogate (U+D800..U+DFFF), nothing
-- above U+10FFFF.  Written out because 5.1 and LuaJIT have no utf8
-- library and 5.3's accepts surrogates.
-- @tparam string s any bytes
-- @tparam integer i a byte index in s
-- @treturn ?integer 1 to 4, or nil
local function utf8_sequence(s, i)
  local c = s:byte(i)
  if c < 0x80 then return 1 end
  local n, cp
  if c >= 0xC2 and c <= 0xDF then n, cp = 2, c - 0xC0
  elseif c >= 0xE0 and c <= 0xEF then n, cp = 3, c - 0xE0
  elseif c >= 0xF0 and c <= 0xF4 then n, cp = 4, c - 0xF0
  else return nil end
  for k = 1, n - 1 do
    local b = s:byte(i + k)
    if not b or b < 0x80 or b > 0xBF then return nil end
    cp = cp * 64 + (b - 0x80)
  end
  if n == 3 and (cp < 0x800 or (cp >= 0xD800 and cp <= 0xDFFF)) then return nil end
  if n == 4 and (cp < 0x10000 or cp > 0x10FFFF) then return nil end
  return n
end

--- A byte string as valid UTF-8 for JSON: unchanged when it is UTF-8, else
-- each byte that is not part of a valid sequence becomes the character of
-- the same number (Latin-1), so the JSON stays valid; JSON cannot carry
-- raw bytes.
-- @tparam ?string s any bytes, or nil
-- @treturn ?string valid UTF-8 (nil for nil)
local function utf8_safe(s)
  if s == nil or not s:find("[\128-\255]") then return s end
  local out, i, changed = {}, 1, false
  while i <= #s do
    local n = utf8_sequence(s, i)
    if n then
      out[#out + 1] = s:sub(i, i + n - 1)
      i = i + n
    else
      local b = s:byte(i)   -- 0x80..0xFF: two bytes in UTF-8
      out[#out + 1] = string.char(0xC0 + math.floor(b / 64), 0x80 + b % 64)
      i = i + 1
      changed = true
    end
  end
  if not changed then return s end
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

--- The time inspection measures leases from: --now T, or lease.now().
-- @tparam table flags the parsed flags
-- @treturn number seconds
-- @raise a usage error when --now is not a finite number
local function now_from(flags)
  if flags["--now"] then
    local t = tonumber(flags["--now"])
    if not t or t ~= t or t == math.huge or t == -math.huge then usage("--now needs a finite number") end
    return t
  end
  return require("lease").now()
end

--- Open an existing database read-only (inspection never writes).
-- @tparam string path the database file
-- @return a lease handle
-- @raise lease.open's error, e.g. [cantopen] for a missing file
local function open_ro(path)
  return require("lease").open(path, { readonly = true, create = false })
end

--- lease jobs DB [--ready|--held|--done|--blocked] [--json] [--now T]:
-- lists jobs in enqueue order, as a table a person reads (id, owner, time
-- left on the lease, fence, done, result size) with a count line, or one
-- JSON array.
-- @tparam table argv {"jobs", args...}
-- @tparam file out where the list goes
-- @treturn integer 0
-- @raise a usage error, or a database error
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
  return compat.using(open_ro(pos[1]), function(db)
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
  end)
end

--- lease show DB ID [--json] [--now T]: prints one job with its whole
-- result.
-- @tparam table argv {"show", args...}
-- @tparam file out where the job goes
-- @tparam file err where "no job" goes
-- @treturn integer 0, or 1 when the job is missing
-- @raise a usage error, or a database error
local function cmd_show(argv, out, err)
  local flags, pos = parse(argv, 2, { ["--json"] = false, ["--now"] = true })
  if #pos ~= 2 then usage("show takes a database path and a job id") end
  local now = now_from(flags)
  return compat.using(open_ro(pos[1]), function(db)
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
  end)
end

--- lease pool [-j N] [--ttl S] [--quiet] WORKER.lua DB: runs lease.pool
-- over the jobs already in DB with the handler WORKER.lua returns, and
-- prints the summary.  A live progress line goes to stderr when it is a
-- terminal (never with --quiet).
-- @tparam table argv {"pool", args...}
-- @tparam file out where the summary goes
-- @treturn integer 0, or 1 when a worker failed or a handler raised
-- @raise a usage error (bad -j or --ttl, unreadable worker script), or
-- lease.pool.run's error
local function cmd_pool(argv, out)
  local flags, pos = parse(argv, 2, { ["-j"] = true, ["--ttl"] = true, ["--quiet"] = false })
  if #pos ~= 2 then usage("pool takes a worker script and a database path") end
  local j = compat.tointeger(tonumber(flags["-j"] or "4"))
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

-- The subcommands, in the order the usage lists them.
local COMMANDS = {
  { name = "pool", args = "[-j N] [--ttl S] [--quiet] WORKER.lua DB", run = cmd_pool,
    help = "run worker threads over DB's jobs" },
  { name = "jobs", args = "DB [--ready|--held|--done|--blocked] [--json] [--now T]", run = cmd_jobs,
    help = "list jobs" },
  { name = "show", args = "DB ID [--json] [--now T]", run = cmd_show,
    help = "show one job and its result" },
}
local BY_NAME = {}
for _, c in ipairs(COMMANDS) do BY_NAME[c.name] = c end

--- The subcommands' usage lines: "usage: lease pool ...", then one
-- indented line per other command.
-- @treturn string the lines, with no final newline
local function commands_usage()
  local lines = {}
  for i, c in ipairs(COMMANDS) do
    lines[i] = (i == 1 and "usage: " or "       ") .. "lease " .. c.name .. " " .. c.args
  end
  return table.concat(lines, "\n")
end

--- Whether `lease NAME ...` names a subcommand.
-- @tparam string name the first argument
-- @treturn boolean
function cli.is_command(name)
  return BY_NAME[name] ~= nil
end

--- The host program's whole usage text: its options (as lua.c's) and the
-- subcommands.
-- @tparam[opt="lease"] string progname the program's name as invoked
-- @treturn string the text, ending with a newline
function cli.usage(progname)
  progname = progname or "lease"
  local lines = {
    "usage: " .. progname .. " [options] [script [args]]",
    "       " .. progname .. " COMMAND [args]",
    "Available options are:",
    OPTIONS,
    "With no script and no -e or -v: an interactive prompt when standard input is a",
    "terminal, else standard input is run as the script.",
    "The modules lease, lease.thread, lease.pool and lease.cli are preloaded.",
    "Commands:",
  }
  for _, c in ipairs(COMMANDS) do
    lines[#lines + 1] = string.format("  %s %s %s   %s", progname, c.name, c.args, c.help)
  end
  lines[#lines + 1] = "A first argument that is a word (no '.' or '/') names a command: run a script"
  lines[#lines + 1] = "file called like a command as ./NAME."
  return table.concat(lines, "\n") .. "\n"
end

--- Run a subcommand.
-- @tparam table argv argv[1] the subcommand, then its arguments (strings)
-- @tparam[opt=io.stdout] file out where results go
-- @tparam[opt=io.stderr] file err where messages go
-- @treturn integer the exit status: 0; 1 for a missing job, a worker that
-- failed or a database error (printed as "lease <cmd>: <message>"); 2 for
-- bad usage or an unknown command (printed with the usage lines)
function cli.main(argv, out, err)
  out, err = out or io.stdout, err or io.stderr
  local name = argv[1]
  local cmd = BY_NAME[name]
  if not cmd then
    err:write("lease: unknown command '", tostring(name), "'\n", commands_usage(), "\n")
    return 2
  end
  local ok, res = pcall(cmd.run, argv, out, err)
  if ok then return res end
  if getmetatable(res) == Usage then
    err:write("lease ", name, ": ", res.msg, "\n", commands_usage(), "\n")
    return 2
  end
  err:write("lease ", name, ": ", tostring(res), "\n")
  return 1
end

return cli
