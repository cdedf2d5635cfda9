--- The subcommands of the `lease` host program, and its usage text.
--
--   lease pool DB WORKER.lua [-j N] [--ttl S] [--queue Q] [--forever] [--grace S]
--              [--batch N] [--poll S] [--drain-wait S] [--decode json] [--timeout S]
--              [--events] [--quiet]
--   lease enqueue DB ID [--payload S | --payload-file F] [--queue Q] [--priority N]
--                 [--run-at T | --in SECONDS] [--max-attempts N] [--timeout S] [--after ID]...
--                 [--key K] [--json]
--   lease jobs DB [--status S] [--queue Q] [--errors] [--ready|--held|--done|--blocked]
--             [--limit N] [--json] [--now T]
--   lease show DB ID [--json] [--now T]
--   lease retry DB ID... | DB --discarded [--queue Q] [--json]
--   lease cancel DB ID... [--json]
--   lease prune DB --before T [--queue Q] [--status S] [--json]
--   lease pause DB QUEUE | lease resume DB QUEUE
--   lease limit DB QUEUE [--concurrency N] [--rate N --per S] [--clear]
--   lease queues DB [--json] [--now T]
--   lease events DB [--job ID] [--since SEQ] [--limit N] [--json]
--   lease stats DB [--json] [--watch S [--count N]] [--now T]
--   lease metrics DB [--now T]
--   lease timeline DB [--job ID] [--queue Q] [--since T] -o FILE.svg|FILE.html
--   lease web DB [--port P] [--bind ADDR] [--token T]
--
-- Inspection reads `until` as wall-clock seconds (lease.now(), what the pool
-- stores); a database kept on another clock passes its own --now.  Times
-- are shown as UTC ISO 8601 (--json keeps the stored numbers); a time
-- option takes seconds since the epoch, a date, or a duration (`parse_time`).
-- Every command prints its own usage with --help.  The
-- host program (src/host/host.c) asks this module for its whole usage text
-- (@{usage}) and runs a first argument that is a word through @{main}.
-- @module lease.cli
local cli = {}
local compat = require("lease.compat")

-- The metatable of a usage error: cli.main prints it and returns 2.
local Usage = {}
-- The metatable of a request for a command's help (--help, -h): cli.main
-- prints the command's usage and returns 0.
local Help = {}

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
-- @raise a help request (--help, -h), or a usage error for an unknown flag
-- or a missing value
local function parse(argv, first, spec)
  local flags, pos, i = {}, {}, first
  -- --help or -h anywhere a flag may stand (not as another flag's value)
  -- wins over every other complaint about the line
  while argv[i] ~= nil do
    if (argv[i] == "--help" or argv[i] == "-h") and spec[argv[i]] == nil then
      error(setmetatable({}, Help), 0)
    end
    i = i + (spec[argv[i]] and 2 or 1)
  end
  i = first
  while argv[i] ~= nil do
    local a = argv[i]
    if a:sub(1, 1) == "-" and #a > 1 then
      if spec[a] == nil then usage("unknown option " .. a) end
      if spec[a] then
        i = i + 1
        if argv[i] == nil then usage(a .. " needs a value") end
        if spec[a] == "many" then   -- given again: each value kept, in order
          flags[a] = flags[a] or {}
          flags[a][#flags[a] + 1] = argv[i]
        else
          flags[a] = argv[i]
        end
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

local utf8_sequence = compat.utf8_sequence

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

--- Whether the locale (LC_ALL, else LC_CTYPE, else LANG, the first one
-- set) names UTF-8: then text shown to a person may hold UTF-8 as is.
-- @treturn boolean
local function utf8_locale()
  for _, name in ipairs({ "LC_ALL", "LC_CTYPE", "LANG" }) do
    local v = os.getenv(name)
    if v and v ~= "" then return (v:lower():gsub("[^%w]", "")):find("utf8", 1, true) ~= nil end
  end
  return false
end

--- Whether the UTF-8 sequence of n bytes at byte i of s is a character
-- that moves or hides text on a terminal: a C1 control (U+0080..U+009F),
-- or a bidirectional embedding, override or isolate (U+202A..U+202E,
-- U+2066..U+2069), which could make one id look like another.
-- @tparam string s any bytes
-- @tparam integer i where the sequence starts
-- @tparam integer n its length (utf8_sequence)
-- @treturn boolean
local function control_sequence(s, i, n)
  local a, b, c = s:byte(i, i + 2)
  if n == 2 then return a == 0xC2 and b < 0xA0 end
  if n ~= 3 or a ~= 0xE2 then return false end
  return (b == 0x80 and c >= 0xAA and c <= 0xAE) or (b == 0x81 and c >= 0xA6 and c <= 0xA9)
end

--- A byte string shown to a person: printable ASCII as is; in a UTF-8
-- locale (utf8_locale) valid UTF-8 characters as is too, but for controls
-- (control_sequence); every other byte as \xNN.
-- @tparam string s any bytes
-- @treturn string the text to show
local function show_bytes(s)
  if not s:find("[\128-\255]") or not utf8_locale() then return compat.hex_escaped(s) end
  local out, i = {}, 1
  while i <= #s do
    local n = utf8_sequence(s, i)
    if n and n > 1 and not control_sequence(s, i, n) then
      out[#out + 1] = s:sub(i, i + n - 1)
      i = i + n
    else
      out[#out + 1] = compat.hex_escaped(s:sub(i, i))
      i = i + 1
    end
  end
  return table.concat(out)
end

--- A byte string in double quotes for a message: "..." around show_bytes.
-- @tparam string s any bytes
-- @treturn string
local function quoted(s)
  return '"' .. show_bytes(s) .. '"'
end

--- The width of text show_bytes made, in terminal columns: one per
-- character (bytes that do not continue a UTF-8 sequence).
-- @tparam string s text from show_bytes
-- @treturn integer
local function width(s)
  local _, continuing = s:gsub("[\128-\191]", "")
  return #s - continuing
end

--- Text padded with spaces to w columns (width), for a table's column.
-- @tparam string s text from show_bytes
-- @tparam integer w the column's width
-- @treturn string
local function pad(s, w)
  return s .. string.rep(" ", w - width(s))
end

--- Whether x is a finite number (JSON can write it).
-- @param x any value
-- @treturn boolean
local function finite(x)
  return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge
end

--- A time shown to a person: UTC, ISO 8601, to the millisecond
-- ("2026-12-01T10:00:00.000Z").  A time outside the years 0000..9999 (or
-- not finite) is shown as its number of seconds.
-- @tparam number t seconds since the epoch
-- @treturn string
local function iso_time(t)
  if not finite(t) or t < -62167219200 or t >= 253402300800 then return tostring(t) end
  local whole = math.floor(t)
  local ms = math.floor((t - whole) * 1000 + 0.5)
  if ms >= 1000 then whole, ms = whole + 1, 0 end
  return os.date("!%Y-%m-%dT%H:%M:%S", whole) .. string.format(".%03dZ", ms)
end

-- Seconds in each unit of a duration.
local UNITS = { s = 1, m = 60, h = 3600, d = 86400, w = 604800 }

--- A duration: one or more numbers, each with its unit s, m, h, d or w
-- ("90s", "2d", "1h30m", "1.5h").
-- @tparam string text
-- @treturn ?number seconds, or nil when text is not a duration
local function parse_duration(text)
  if text == "" then return nil end
  local total, at = 0, 1
  while at <= #text do
    local num, unit, nxt = text:match("^(%d+%.?%d*)([smhdw])()", at)
    if not num then return nil end
    total = total + tonumber(num) * UNITS[unit]
    at = nxt
  end
  return total
end

--- Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
-- @tparam integer y year
-- @tparam integer m month 1..12
-- @tparam integer d day of the month
-- @treturn integer
local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * ((m + 9) % 12) + 2) / 5) + d - 1
  return era * 146097 + yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy - 719468
end

--- A date, with a time of day or not, in ISO 8601: "2026-12-01" (its
-- midnight), "2026-12-01T10:00", "2026-12-01T10:00:30.5", then "Z" or an
-- offset "+02:00" ("+0200"); a space may stand for the T.  With no offset
-- the time is UTC.
-- @tparam string text
-- @treturn ?number seconds since the epoch, or nil when text is not such a date
local function parse_date(text)
  local y, mo, d, rest = text:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)(.*)$")
  if not y then return nil end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  local leap = (y % 4 == 0 and y % 100 ~= 0) or y % 400 == 0
  local mdays = { 31, leap and 29 or 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }
  if mo < 1 or mo > 12 or d < 1 or d > mdays[mo] then return nil end
  local t = days_from_civil(y, mo, d) * 86400
  if rest == "" then return t end
  local h, mi, tail = rest:match("^[T ](%d%d):(%d%d)(.*)$")
  if not h then return nil end
  local sec = 0
  local stext, after = tail:match("^:(%d%d%.?%d*)(.*)$")
  if stext then sec, tail = tonumber(stext), after end
  h, mi = tonumber(h), tonumber(mi)
  if h > 23 or mi > 59 or sec >= 60 then return nil end
  local offset = 0
  if tail ~= "" and tail ~= "Z" then
    local sign, oh, om = tail:match("^([+-])(%d%d):?(%d%d)$")
    if not sign or tonumber(oh) > 23 or tonumber(om) > 59 then return nil end
    offset = (tonumber(oh) * 3600 + tonumber(om) * 60) * (sign == "+" and 1 or -1)
  end
  return t + h * 3600 + mi * 60 + sec - offset
end

--- A time given on the command line: seconds since the epoch (a number),
-- a date (parse_date), or, where a direction is given, a duration
-- (parse_duration) counted from now: "ago" for a time in the past
-- (--before 2d), "ahead" for one in the future (--run-at 2h).
-- @tparam string name the flag, for the message
-- @tparam string text its value
-- @tparam ?string direction "ago", "ahead", or nil (no durations)
-- @treturn number seconds since the epoch
-- @raise a usage error naming the flag and the forms it takes
local function parse_time(name, text, direction)
  local t = tonumber(text)
  if t == nil then t = parse_date(text) end
  if t == nil and direction then
    local d = parse_duration(text)
    if d then
      local now = require("lease").now()
      t = direction == "ago" and now - d or now + d
    end
  end
  if not finite(t) then
    usage(string.format("%s needs seconds since the epoch, a date (2026-12-01, "
      .. "2026-12-01T10:00:00Z)%s, got '%s'", name,
      direction and string.format(" or a duration (90s, 15m, 2h, 2d, 1w: %s)",
        direction == "ago" and "that long ago" or "that long from now") or "", text))
  end
  return t
end

--- The errors of a job for JSON (texts made valid UTF-8).
-- @tparam ?table errors the job's errors list
-- @treturn ?table
local function errors_json(errors)
  if not errors then return nil end
  local out = {}
  for k, e in ipairs(errors) do
    out[k] = { attempt = e.attempt, at = finite(e.at) and e.at or nil, owner = utf8_safe(e.owner),
               fence = e.fence, message = utf8_safe(e.message) }
  end
  return out
end

--- The JSON text of a job, one object (lease.json: numbers read back exactly).
-- `until` is null when the stored value is not a finite number (the job
-- is then blocked, and `blocked` says why).  Results are counted in
-- bytes (result_bytes); the text itself only with with_result.
-- @tparam table job a job as db:state or db:jobs returns it
-- @tparam boolean with_result whether to include the result and payload text
-- @treturn string the JSON object
local function job_json(job, with_result)
  local json = require("lease.json")
  local u = job["until"]
  local t = { id = utf8_safe(job.id), status = job.status, queue = utf8_safe(job.queue),
              priority = job.priority, run_at = finite(job.run_at) and job.run_at or nil,
              attempt = job.attempt, max_attempts = job.max_attempts, timeout = job.timeout,
              owner = utf8_safe(job.owner) or json.null,
              ["until"] = finite(u) and u or json.null, fence = job.fence, done = job.done,
              payload_bytes = job.payload and #job.payload or 0,
              result_bytes = job.result_size or (job.result and #job.result) or 0,
              key = utf8_safe(job.key),
              blocked = job.blocked, errors = errors_json(job.errors) }
  if job.after then
    t.after = {}
    for k, id in ipairs(job.after) do t.after[k] = utf8_safe(id) end
  end
  if with_result then
    t.payload = utf8_safe(job.payload) or json.null
    t.result = utf8_safe(job.result) or json.null
  end
  return json.encode(t, { keyorder = { "id", "status", "queue", "priority", "run_at", "attempt",
                                       "max_attempts", "timeout", "owner", "until", "fence", "done",
                                       "payload_bytes", "result_bytes", "key", "blocked", "after",
                                       "errors", "payload", "result" } })
end

--- The time inspection measures leases from: --now T, or lease.now().
-- @tparam table flags the parsed flags
-- @treturn number seconds
-- @raise a usage error when --now is neither seconds nor a date
local function now_from(flags)
  if flags["--now"] then return parse_time("--now", flags["--now"], nil) end
  return require("lease").now()
end

--- The directory a file path is in ("." for a bare name).
-- @tparam string path
-- @treturn string
local function dirname(path)
  local d = path:match("^(.*)/[^/]*$")
  if d == nil then return "." end
  if d == "" then return "/" end
  return d
end

--- Whether a directory exists, and whether this process may create files
-- in it (the shell's test -d and test -w: access(2), as the user runs).
-- @tparam string dir
-- @treturn boolean exists
-- @treturn boolean writable
local function dir_state(dir)
  local q = "'" .. dir:gsub("'", [['\'']]) .. "'"
  local function test(op)
    local r = os.execute("test " .. op .. " " .. q)
    return r == true or r == 0   -- 5.1 and LuaJIT give the status
  end
  if not test("-d") then return false, false end
  return true, test("-w")
end

--- Whether path names a file (not a PostgreSQL connection string or a URI).
-- @tparam string path
-- @treturn boolean
local function is_file_path(path)
  return not path:find("^postgres") and not path:find("^file:") and not path:find("=")
end

--- A database error made plain for a person: to a [cantopen] on a file,
-- what is wrong with its directory or the file (missing, not writable); to
-- a [readonly], that this user may not write there.
-- @param err the error lease.open raised
-- @tparam string path the database file
-- @tparam boolean create whether the command creates a missing file
-- @return err, or its text with the reason added
local function explain_open(err, path, create)
  local text = tostring(err)
  if not is_file_path(path) then return err end
  local dir = dirname(path)
  if text:find("[readonly]", 1, true) then
    return text .. ": this user may not write " .. path .. " or the directory " .. dir
  end
  if not text:find("[cantopen]", 1, true) then return err end
  local exists, writable = dir_state(dir)
  local f = io.open(path, "rb")
  if f then f:close() end
  if not exists then
    return text .. ": the directory " .. dir .. " does not exist"
  elseif not f and not create then
    return text .. ": there is no file " .. path .. " (lease enqueue creates one)"
  elseif not writable then
    return text .. ": the directory " .. dir .. " is not writable, and SQLite creates "
      .. (f and "the -wal and -shm files" or "the file") .. " there"
  end
  return err
end

--- A file path as an SQLite URI that opens it read-only and immutable:
-- no locks, no -wal or -shm read or made.
-- @tparam string path
-- @treturn string "file:...?immutable=1"
local function immutable_uri(path)
  return "file:" .. path:gsub("[^%w/%._~-]", function(c) return string.format("%%%02X", c:byte()) end)
    .. "?immutable=1"
end

--- Open an existing database read-only (inspection never writes).  A
-- WAL-mode file that this user may read but whose directory it may not
-- write, with no -wal beside it (so no writer has it open and every commit
-- is in the file), is read through an immutable URI: SQLite would
-- otherwise need to create the -shm there.  Then a note says so on err.
-- With a -wal beside it (commits that may not be in the file yet) there,
-- the error says what is missing and what to do instead.
-- @tparam string path the database file
-- @tparam[opt] file err where the note goes
-- @return a lease handle
-- @raise lease.open's error, e.g. [cantopen] for a missing file, with
-- explain_open's reason; for a [readonly] that cannot be read around,
-- what is missing and what to do
local function open_ro(path, err)
  if path == "" then usage("the database path is empty") end
  local lease = require("lease")
  local ok, db = pcall(lease.open, path, { readonly = true, create = false })
  if ok then return db end
  local text = tostring(db)
  local dir = dirname(path)
  local wal = io.open(path .. "-wal", "rb")
  if wal then wal:close() end
  if not (text:find("[readonly]", 1, true) or (wal and text:find("[cantopen]", 1, true)))
      or not is_file_path(path) or select(2, dir_state(dir)) then
    error(explain_open(db, path, false), 0)
  end
  if wal then
    error(text .. ": " .. path .. "-wal holds commits not yet in the file, and SQLite needs to "
      .. "create or write " .. path .. "-shm to read them, which this user may not in " .. dir
      .. ": run the command as the file's owner, or copy the file with its -wal to a "
      .. "directory you can write and inspect the copy", 0)
  end
  local ok2, db2 = pcall(lease.open, immutable_uri(path), { readonly = true, create = false })
  if not ok2 then
    error(text .. ": the directory " .. dir .. " is not writable, SQLite needs to create "
      .. path .. "-shm there to read a WAL file, and reading it unlocked failed too (" .. tostring(db2)
      .. "): copy the file to a directory you can write and inspect the copy", 0)
  end
  if err then
    err:write("note: ", show_bytes(dir), " is not writable: ", show_bytes(path), " is read without locks ",
      "(a writer that starts meanwhile is not seen)\n")
  end
  return db2
end

--- A number flag, checked.
-- @tparam table flags the parsed flags
-- @tparam string name the flag ("--priority")
-- @tparam string kind "integer", "time" (finite), "seconds" (finite, >= 0) or
-- "seconds > 0" (finite, > 0)
-- @tparam[opt] integer min for an integer: the smallest allowed
-- @tparam[opt] integer max for an integer: the largest allowed (then min is given too)
-- @return the number, or nil when the flag was not given
-- @raise a usage error naming the flag
local function number_flag(flags, name, kind, min, max)
  local text = flags[name]
  if text == nil then return nil end
  local x = tonumber(text)
  if kind == "integer" then
    x = x and compat.tointeger(x)
    if not x or (min and x < min) or (max and x > max) then
      usage(string.format("%s needs an integer%s, got '%s'", name,
        max and string.format(" from %d to %d", min, max) or min and (" >= " .. min) or "", text))
    end
    return x
  end
  local low = kind == "seconds" and not (x and x >= 0) or kind == "seconds > 0" and not (x and x > 0)
  if not x or x ~= x or x == math.huge or x == -math.huge or low then
    usage(string.format("%s needs a finite number%s, got '%s'", name,
      (kind == "seconds" and " of seconds >= 0") or (kind == "seconds > 0" and " of seconds > 0") or "", text))
  end
  return x
end

--- A flag of seconds > 0 (--timeout, --per): a number or a duration
-- (parse_duration: 30s, 2m, 1h30m), finite and > 0 (nil when not given).
-- @tparam table flags the parsed flags
-- @tparam string name the flag's name
-- @treturn ?number seconds
-- @raise a usage error naming the flag
local function timeout_flag(flags, name)
  local text = flags[name]
  if text == nil then return nil end
  local x = tonumber(text) or parse_duration(text)
  if not x or not (x > 0) or x == math.huge then
    usage(string.format("%s needs a number of seconds > 0 or a duration (30s, 2m, 1h), got '%s'",
      name, text))
  end
  return x
end

-- The engine's bounds the CLI checks before it opens a database (lease.h):
-- a priority and max_attempts are 32-bit integers, a queue's name is at
-- most LEASE_QUEUE_MAX bytes, a schedule's LEASE_SCHEDULE_NAME_MAX.
local INT32_MIN, INT32_MAX = -2147483648, 2147483647
local QUEUE_MAX, SCHEDULE_NAME_MAX = 255, 200

-- The statuses a job can have (db:state's status), for --status.
local STATUSES = { available = true, scheduled = true, running = true, retryable = true,
                   completed = true, discarded = true, cancelled = true, waiting = true }

--- The --status flag, checked (nil when not given).
-- @tparam table flags the parsed flags
-- @treturn ?string
-- @raise a usage error naming the flag and the words it takes
local function status_flag(flags)
  local st = flags["--status"]
  if st ~= nil and not STATUSES[st] then
    usage("--status needs one of available, scheduled, running, retryable, completed, discarded, "
      .. "cancelled, waiting, got '" .. st .. "'")
  end
  return st
end

--- The --queue flag, checked (nil when not given).
-- @tparam table flags the parsed flags
-- @treturn ?string
-- @raise a usage error when it is empty
local function queue_flag(flags)
  local q = flags["--queue"]
  if q == "" then usage("--queue needs a non-empty name") end
  if q and #q > QUEUE_MAX then
    usage(string.format("--queue needs a name of at most %d bytes, got %d", QUEUE_MAX, #q))
  end
  return q
end

--- Whether the environment asks the CLI's writes to record events in the
-- ledger: LEASE_EVENTS set, not empty and not "0".
-- @treturn boolean
local function events_env()
  local v = os.getenv("LEASE_EVENTS")
  return v ~= nil and v ~= "" and v ~= "0"
end

--- The message of an argument the engine refused ("bad argument #2 to
-- 'enqueue' (opts.priority must be ...)"), with the source position Lua
-- put before it removed, or nil for any other error.
-- @param e an error value
-- @treturn ?string "enqueue: opts.priority must be ..."
local function argument_error(e)
  if type(e) ~= "string" then return nil end
  local fn, why = e:gsub("^[^:\n]+:%d+: ", "", 1):match("^bad argument #%d+ to '([^']*)' %((.*)%)$")
  if not fn then return nil end
  return fn .. ": " .. why
end

--- Before a command creates a missing database file for a write, the
-- write on a database in memory: an argument the engine refuses is then a
-- usage error, and no file is created for it.
-- @tparam string path the database
-- @tparam function write function(db): the command's write
-- @raise a usage error with the engine's message
local function dry_run(path, write)
  if not is_file_path(path) then return end
  local f = io.open(path, "rb")
  if f then f:close() return end
  local db = require("lease").open(":memory:")
  local ok, e = pcall(write, db)
  db:close()
  local why = not ok and argument_error(e)
  if why then usage(why) end   -- any other error is the real write's to report
end

--- Open a database for writing; create it only when asked.  Its writes
-- record events (lease.open's events) when LEASE_EVENTS asks.
-- @tparam string path the database file
-- @tparam boolean create whether a missing file is created
-- @return a lease handle
-- @raise lease.open's error, e.g. [cantopen] for a missing file, with
-- explain_open's reason
local function open_rw(path, create)
  if path == "" then usage("the database path is empty") end
  local ok, db = pcall(require("lease").open, path, { create = create, events = events_env() })
  if not ok then error(explain_open(db, path, create), 0) end
  return db
end

--- Write the errors of a job a list loaded, one indented line each,
-- oldest first ("    error attempt N at TIME by OWNER: message", TIME as
-- iso_time).
-- @tparam file out where the lines go
-- @tparam table job a job, with its errors list when it was loaded
local function write_errors(out, job)
  for _, e in ipairs(job.errors or {}) do
    out:write(string.format("    error attempt %s at %s by %s: %s\n", tostring(e.attempt), iso_time(e.at),
      show_bytes(e.owner or "-"), show_bytes(e.message or "")))
  end
end

--- lease jobs DB [--status S] [--queue Q] [--errors] [--ready|--held|--done|--blocked]
-- [--limit N] [--json] [--now T]: lists jobs in enqueue order (the first N
-- with --limit), as a table a person
-- reads (id, status, queue, attempts, owner, time left on the lease, fence,
-- result size; its unique key on a line under a job that has one; with
-- --errors, or for discarded and retryable jobs, every error kept under
-- the job) with a count
-- line, or one JSON array.  Results are never loaded, only their sizes.
-- --ready, --held and --done are --status available, running and
-- completed; --blocked lists the jobs no worker can take.
-- @tparam table argv {"jobs", args...}
-- @tparam file out where the list goes
-- @tparam file err where a note on how the file was read goes (open_ro)
-- @treturn integer 0
-- @raise a usage error, or a database error
local function cmd_jobs(argv, out, err)
  local flags, pos = parse(argv, 2, { ["--ready"] = false, ["--held"] = false, ["--done"] = false,
                                     ["--blocked"] = false, ["--json"] = false, ["--now"] = true,
                                     ["--status"] = true, ["--queue"] = true, ["--errors"] = false,
                                     ["--limit"] = true })
  if #pos ~= 1 then usage("jobs takes one database path") end
  local limit = number_flag(flags, "--limit", "integer", 1)
  local status = status_flag(flags)
  local queue = queue_flag(flags)
  local blocked = false
  for w, st in pairs({ ready = "available", held = "running", done = "completed", blocked = true }) do
    if flags["--" .. w] then
      if status or blocked then usage("give at most one of --status, --ready, --held, --done, --blocked") end
      if st == true then blocked = true else status = st end
    end
  end
  local with_errors = flags["--errors"] or status == "discarded" or status == "retryable"
  local now = now_from(flags)
  return compat.using(open_ro(pos[1], err), function(db)
    local rows, after = {}, 0
    repeat
      local want = limit and math.min(1000, limit - #rows) or 1000
      local page
      if blocked then page = db:jobs("blocked", now, want, after)
      else
        page = db:jobs({ status = status, queue = queue, now = now, limit = want, after = after,
                         results = false, errors = with_errors or nil })
      end
      for _, j in ipairs(page) do rows[#rows + 1] = j end
      if #page > 0 then after = page[#page].seq end
    until #page < want or (limit and #rows >= limit)
    if flags["--json"] then
      local parts = {}
      for k, j in ipairs(rows) do parts[k] = job_json(j, false) end
      out:write("[", table.concat(parts, ",\n "), "]\n")
      return 0
    end
    local w = 2
    for _, j in ipairs(rows) do w = math.max(w, width(show_bytes(j.id))) end
    w = math.min(w, 60)
    local fmt = "%s  %-10s  %s  %-7s  %s  %-18s  %6s  %s\n"
    out:write(string.format(fmt, pad("ID", w), "STATUS", pad("QUEUE", 10), "ATTEMPT",
      pad("OWNER", 12), "LEASE LEFT", "FENCE", "RESULT"))
    for _, j in ipairs(rows) do
      local size = j.result_size or (j.result and #j.result)
      out:write(string.format(fmt, pad(show_bytes(j.id), w), tostring(j.status or "-"),
        pad(show_bytes(j.queue or "-"), 10), string.format("%s/%s", tostring(j.attempt or "-"),
        tostring(j.max_attempts or "-")), pad(j.owner and show_bytes(j.owner) or "-", 12),
        left(j, now), j.fence,
        (size and (size > 0 or j.status == "completed")) and (size .. " B") or "-"))
      if j.key then out:write("    key ", show_bytes(j.key), "\n") end
      write_errors(out, j)
    end
    local c = db:counts(now, queue)
    local parts = {}
    for _, st in ipairs({ "available", "scheduled", "running", "retryable", "completed", "discarded",
                          "cancelled", "waiting" }) do
      if (c[st] or 0) > 0 then parts[#parts + 1] = string.format("%d %s", c[st], st) end
    end
    if (c.blocked or 0) > 0 then parts[#parts + 1] = string.format("%d blocked", c.blocked) end
    out:write(string.format("%d jobs%s%s%s\n", c.total, #parts > 0 and ": " or "",
      table.concat(parts, ", "), (status or blocked or limit) and string.format(" (%d shown)", #rows)
      or ""))
    return 0
  end)
end

--- lease show DB ID [--json] [--now T]: prints one job with its payload,
-- its errors and its whole result, line by line (each line's bytes as
-- show_bytes shows them).
-- @tparam table argv {"show", args...}
-- @tparam file out where the job goes
-- @tparam file err where "no job" goes
-- @treturn integer 0, or 1 when the job is missing
-- @raise a usage error, or a database error
local function cmd_show(argv, out, err)
  local flags, pos = parse(argv, 2, { ["--json"] = false, ["--now"] = true })
  if #pos ~= 2 then usage("show takes a database path and a job id") end
  local now = now_from(flags)
  return compat.using(open_ro(pos[1], err), function(db)
    local j = db:state(pos[2], now)
    if not j then
      err:write(string.format("lease show: no job %s in %s\n", quoted(pos[2]), show_bytes(db:name())))
      return 1
    end
    if flags["--json"] then
      out:write(job_json(j, true), "\n")
      return 0
    end
    out:write(string.format("id          %s\nstatus      %s\nqueue       %s\npriority    %s\n"
      .. "run at      %s\nattempt     %s of %s\ntimeout     %s\nowner       %s\nuntil       %s\n"
      .. "lease left  %s\nfence       %d\ndone        %s\npayload     %s\n", show_bytes(j.id),
      tostring(j.status), show_bytes(j.queue or "-"), tostring(j.priority),
      j.run_at and iso_time(j.run_at) or "-", tostring(j.attempt), tostring(j.max_attempts),
      j.timeout and string.format("%g s", j.timeout) or "-", j.owner and show_bytes(j.owner) or "-",
      (j.owner or j["until"] ~= 0) and iso_time(j["until"]) or "-", left(j, now), j.fence, j.done and "yes" or "no",
      j.payload and show_bytes(j.payload) or "-"))
    if j.key then out:write("key         ", show_bytes(j.key), "\n") end
    if j.after then
      local ids = {}
      for k, id in ipairs(j.after) do ids[k] = show_bytes(id) end
      out:write("after       ", table.concat(ids, ", "), "\n")
    end
    for _, e in ipairs(j.errors or {}) do
      out:write(string.format("error       attempt %s at %s by %s (fence %s): %s\n", tostring(e.attempt),
        iso_time(e.at), show_bytes(e.owner or "-"), tostring(e.fence), show_bytes(e.message or "")))
    end
    if j.blocked then out:write("blocked     ", show_bytes(j.blocked), "\n") end
    out:write(string.format("result      %s\n", j.result and (#j.result .. " bytes") or "-"))
    if j.result then
      -- each line as show_bytes shows it: a result's escapes never reach the terminal
      for line in (j.result:sub(-1) == "\n" and j.result or j.result .. "\n"):gmatch("([^\n]*)\n") do
        out:write(show_bytes(line), "\n")
      end
    end
    return 0
  end)
end

--- lease enqueue DB ID [--payload S | --payload-file F] [--queue Q]
-- [--priority N] [--run-at T | --in SECONDS] [--max-attempts N]
-- [--timeout S] [--after ID]... [--key K] [--json]: adds one job (the file
-- is created when missing).  --payload-file reads the payload's bytes from
-- a file, or from standard input for "-".  Each --after names a job this
-- one waits for (db:enqueue's after).  --key gives the job a unique key:
-- while an unfinished job of the queue holds it, nothing is added and the
-- holder is named.
-- @tparam table argv {"enqueue", args...}
-- @tparam file out where the outcome goes
-- @tparam file err where "exists", "duplicate" or the --after refusal goes
-- @treturn integer 0, or 1 when a job with that id exists (left as it was),
-- the key is held, or an --after job is missing, discarded or cancelled
-- (nothing stored)
-- @raise a usage error, or a database error
local function cmd_enqueue(argv, out, err)
  local flags, pos = parse(argv, 2, { ["--payload"] = true, ["--queue"] = true, ["--priority"] = true,
                                     ["--run-at"] = true, ["--in"] = true, ["--max-attempts"] = true,
                                     ["--json"] = false, ["--payload-file"] = true,
                                     ["--timeout"] = true, ["--after"] = "many", ["--key"] = true })
  if #pos ~= 2 then usage("enqueue takes a database path and a job id") end
  if flags["--key"] == "" then usage("--key needs a non-empty key") end
  if pos[2] == "" then usage("enqueue needs a non-empty job id") end
  if flags["--run-at"] and flags["--in"] then usage("give at most one of --run-at and --in") end
  if flags["--payload"] and flags["--payload-file"] then
    usage("give at most one of --payload and --payload-file")
  end
  local opts = { payload = flags["--payload"], queue = queue_flag(flags),
                 priority = number_flag(flags, "--priority", "integer", INT32_MIN, INT32_MAX),
                 max_attempts = number_flag(flags, "--max-attempts", "integer", 1, INT32_MAX),
                 timeout = timeout_flag(flags, "--timeout"),
                 run_at = flags["--run-at"] and parse_time("--run-at", flags["--run-at"], "ahead"),
                 after = flags["--after"], key = flags["--key"] }
  for _, id in ipairs(opts.after or {}) do
    if id == "" then usage("--after needs a non-empty job id") end
    if id == pos[2] then usage("--after names the job itself: '" .. id .. "'") end
  end
  local delay = number_flag(flags, "--in", "seconds")
  if delay then opts.run_at = require("lease").now() + delay end
  local file = flags["--payload-file"]
  if file then
    local f, why = io.stdin, nil
    if file ~= "-" then f, why = io.open(file, "rb") end
    if not f then usage("--payload-file cannot read " .. tostring(why)) end
    opts.payload = f:read("*a")
    if file ~= "-" then f:close() end
    if not opts.payload then usage("--payload-file cannot read " .. file) end
  end
  dry_run(pos[1], function(db) db:enqueue(pos[2], opts) end)
  return compat.using(open_rw(pos[1], true), function(db)
    local ok, why, other = db:enqueue(pos[2], opts)
    local holder = why == "duplicate" and other or nil
    local dep = why ~= "duplicate" and other or nil
    if flags["--json"] then
      local json = require("lease.json")
      out:write(json.encode({ id = utf8_safe(pos[2]), enqueued = ok and true or false, reason = why,
                              held_by = utf8_safe(holder), after = utf8_safe(dep) },
        { keyorder = { "id", "enqueued", "reason", "held_by", "after" } }), "\n")
    elseif ok then
      out:write("enqueued ", show_bytes(pos[2]), "\n")
    end
    if not ok and not flags["--json"] and dep then
      err:write(string.format("lease enqueue: job %s not enqueued: its --after job %s is %s in %s\n",
        quoted(pos[2]), quoted(dep), why == "missing" and "not there" or tostring(why),
        show_bytes(db:name())))
    elseif not ok and not flags["--json"] then
      err:write(string.format("lease enqueue: job %s %s in %s%s\n", quoted(pos[2]), tostring(why),
        show_bytes(db:name()),
        holder and string.format(" (key %s is held by job %s)", quoted(opts.key), quoted(holder)) or ""))
    end
    return ok and 0 or 1
  end)
end

--- Apply db:retry or db:cancel to ids and print each outcome.
-- @tparam string name "retry" or "cancel"
-- @param db a lease handle
-- @tparam {string,...} ids the jobs
-- @tparam table flags the parsed flags (--json)
-- @tparam file out where the outcomes go
-- @treturn integer 0 when every job was changed, else 1
-- @raise a database error
local function apply_each(name, db, ids, flags, out)
  local now = require("lease").now()
  local results, all = {}, true
  for k, id in ipairs(ids) do
    local ok, why, holder = db[name](db, id, now)
    results[k] = { id = id, ok = ok and true or false, reason = why, held_by = holder }
    if not ok then all = false end
  end
  if flags["--json"] then
    local json = require("lease.json")
    local parts = {}
    for k, r in ipairs(results) do
      parts[k] = json.encode({ id = utf8_safe(r.id), ok = r.ok, reason = r.reason,
                               held_by = utf8_safe(r.held_by) },
        { keyorder = { "id", "ok", "reason", "held_by" } })
    end
    out:write("[", table.concat(parts, ",\n "), "]\n")
  else
    local verb = name == "retry" and "retried" or "cancelled"
    for _, r in ipairs(results) do
      if r.ok then out:write(verb, " ", show_bytes(r.id), "\n")
      else
        out:write("refused ", show_bytes(r.id), ": ", tostring(r.reason),
          r.held_by and (" (its key is held by " .. show_bytes(r.held_by) .. ")") or "", "\n")
      end
    end
  end
  return all and 0 or 1
end

--- lease retry DB ID... | --discarded [--queue Q] [--json]: makes jobs
-- available again with a fresh attempt budget (db:retry).
-- @tparam table argv {"retry", args...}
-- @tparam file out where the outcomes go
-- @treturn integer 0, or 1 when a job was refused (missing, held, ...)
-- @raise a usage error, or a database error
local function cmd_retry(argv, out)
  local flags, pos = parse(argv, 2, { ["--discarded"] = false, ["--queue"] = true, ["--json"] = false })
  if #pos < 1 then usage("retry takes a database path, then job ids or --discarded") end
  if (flags["--discarded"] == true) == (#pos > 1) then usage("give job ids or --discarded, not both, not neither") end
  local queue = queue_flag(flags)
  if queue and not flags["--discarded"] then usage("--queue goes with --discarded") end
  return compat.using(open_rw(pos[1], false), function(db)
    local ids = {}
    if flags["--discarded"] then
      local after = 0
      repeat
        local page = db:jobs({ status = "discarded", queue = queue, results = false, limit = 1000,
                               after = after })
        for _, j in ipairs(page) do ids[#ids + 1] = j.id; after = j.seq end
      until #page < 1000
    else
      for k = 2, #pos do ids[#ids + 1] = pos[k] end
    end
    return apply_each("retry", db, ids, flags, out)
  end)
end

--- lease cancel DB ID... [--json]: cancels jobs (db:cancel): never
-- claimed again, and a worker still holding one is refused when it
-- completes.
-- @tparam table argv {"cancel", args...}
-- @tparam file out where the outcomes go
-- @treturn integer 0, or 1 when a job was refused
-- @raise a usage error, or a database error
local function cmd_cancel(argv, out)
  local flags, pos = parse(argv, 2, { ["--json"] = false })
  if #pos < 2 then usage("cancel takes a database path and job ids") end
  return compat.using(open_rw(pos[1], false), function(db)
    local ids = {}
    for k = 2, #pos do ids[#ids + 1] = pos[k] end
    return apply_each("cancel", db, ids, flags, out)
  end)
end

--- lease prune DB --before T [--queue Q] [--status S] [--json]: deletes
-- completed, discarded and cancelled jobs finished before T (db:prune);
-- never a job that is held or still to run.
-- @tparam table argv {"prune", args...}
-- @tparam file out where the count goes
-- @treturn integer 0
-- @raise a usage error, or a database error
local function cmd_prune(argv, out)
  local flags, pos = parse(argv, 2, { ["--before"] = true, ["--queue"] = true, ["--status"] = true,
                                     ["--json"] = false })
  if #pos ~= 1 then usage("prune takes one database path") end
  if not flags["--before"] then usage("prune needs --before T (a time, a date or a duration ago)") end
  local before = parse_time("--before", flags["--before"], "ago")
  local status = status_flag(flags)
  if status and status ~= "completed" and status ~= "discarded" and status ~= "cancelled" then
    usage("--status for prune needs completed, discarded or cancelled, got '" .. status .. "'")
  end
  return compat.using(open_rw(pos[1], false), function(db)
    local n = db:prune(before, { queue = queue_flag(flags), status = status })
    if flags["--json"] then out:write(require("lease.json").encode({ pruned = n }), "\n")
    else out:write(string.format("pruned %d jobs\n", n)) end
    return 0
  end)
end

--- lease schedule DB NAME (--every S | --cron EXPR) [--queue Q]
-- [--payload S] [--priority N] [--max-attempts N]: creates the schedule
-- NAME, or replaces it (DB is created when missing).
-- @tparam table argv {"schedule", args...}
-- @tparam file out where the outcome goes
-- @treturn integer 0
-- @raise a usage error (a bad cron expression names its field), or a
-- database error
local function cmd_schedule(argv, out)
  local flags, pos = parse(argv, 2, { ["--every"] = true, ["--cron"] = true, ["--queue"] = true,
                                     ["--payload"] = true, ["--priority"] = true,
                                     ["--max-attempts"] = true })
  if #pos ~= 2 then usage("schedule takes a database path and a schedule NAME") end
  if pos[2] == "" then usage("schedule needs a non-empty NAME") end
  if flags["--every"] and flags["--cron"] then usage("give --every or --cron, not both") end
  if not flags["--every"] and not flags["--cron"] then usage("schedule needs --every or --cron") end
  local lease = require("lease")
  local now = lease.now()
  if #pos[2] > SCHEDULE_NAME_MAX then
    usage(string.format("schedule needs a NAME of at most %d bytes, got %d", SCHEDULE_NAME_MAX, #pos[2]))
  end
  local opts = { queue = queue_flag(flags), payload = flags["--payload"],
                 priority = number_flag(flags, "--priority", "integer", INT32_MIN, INT32_MAX),
                 max_attempts = number_flag(flags, "--max-attempts", "integer", 1, INT32_MAX) }
  if flags["--every"] then
    opts.every = number_flag(flags, "--every", "seconds > 0")
    if not (now + opts.every > now) then
      usage("--every needs a finite number of seconds > 0, large enough to change the clock, got '"
        .. flags["--every"] .. "'")
    end
  else
    local ok, why = pcall(lease.cron_next, flags["--cron"], now)
    if not ok then usage("--cron: " .. tostring(why):gsub("^bad argument #%d+ to '[^']*' %((.*)%)$", "%1")) end
    opts.cron = flags["--cron"]
  end
  dry_run(pos[1], function(db) db:schedule(pos[2], now, opts) end)
  return compat.using(open_rw(pos[1], true), function(db)
    db:schedule(pos[2], now, opts)
    out:write("scheduled ", show_bytes(pos[2]), "\n")
    return 0
  end)
end

--- lease schedules DB [--json]: lists the schedules, one line each (name,
-- every or cron, queue, next and last tick), or as one JSON array.
-- Read-only.
-- @tparam table argv {"schedules", args...}
-- @tparam file out where the list goes
-- @tparam file err where a note on an unlocked read goes
-- @treturn integer 0
-- @raise a usage error, or a database error
local function cmd_schedules(argv, out, err)
  local flags, pos = parse(argv, 2, { ["--json"] = false })
  if #pos ~= 1 then usage("schedules takes one database path") end
  return compat.using(open_ro(pos[1], err), function(db)
    local list = db:schedules()
    if flags["--json"] then
      local json = require("lease.json")
      local parts = {}
      for k, s in ipairs(list) do
        parts[k] = json.encode({ name = utf8_safe(s.name), every = s.every, cron = s.cron,
          queue = utf8_safe(s.queue), payload = s.payload and utf8_safe(s.payload),
          priority = s.priority, max_attempts = s.max_attempts, created_at = s.created_at,
          next_at = s.next_at, last_at = s.last_at },
          { keyorder = { "name", "every", "cron", "queue", "payload", "priority", "max_attempts",
                         "created_at", "next_at", "last_at" } })
      end
      out:write("[", table.concat(parts, ","), "]\n")
      return 0
    end
    for _, s in ipairs(list) do
      out:write(string.format("%s  %s  queue %s  next %s  last %s\n", show_bytes(s.name),
        s.cron and ("cron " .. show_bytes(s.cron)) or string.format("every %.17gs", s.every),
        show_bytes(s.queue), iso_time(s.next_at), s.last_at and iso_time(s.last_at) or "-"))
    end
    return 0
  end)
end

--- lease pause DB QUEUE and lease resume DB QUEUE: db:pause and
-- db:resume of one queue.
-- @tparam table argv {"pause" or "resume", args...}
-- @tparam file out where the outcome goes
-- @treturn integer 0
-- @raise a usage error, or a database error
local function cmd_pause(argv, out)
  local verb = argv[1]
  local _, pos = parse(argv, 2, {})
  if #pos ~= 2 then usage(verb .. " takes a database path and a queue") end
  if pos[2] == "" then usage(verb .. " needs a non-empty queue name") end
  return compat.using(open_rw(pos[1], false), function(db)
    db[verb](db, pos[2])
    out:write(string.format("%s %s\n", verb == "pause" and "paused" or "resumed", show_bytes(pos[2])))
    return 0
  end)
end

--- lease limit DB QUEUE [--concurrency N] [--rate N --per S] [--clear]:
-- db:limit, the given limits replacing the queue's (--clear, or no limit
-- given with it: none).
-- @tparam table argv {"limit", args...}
-- @tparam file out where the outcome goes
-- @treturn integer 0
-- @raise a usage error, or a database error
local function cmd_limit(argv, out)
  local flags, pos = parse(argv, 2, { ["--concurrency"] = true, ["--rate"] = true, ["--per"] = true,
                                     ["--clear"] = false })
  if #pos ~= 2 then usage("limit takes a database path and a queue") end
  if pos[2] == "" then usage("limit needs a non-empty queue name") end
  local limits = {
    concurrency = number_flag(flags, "--concurrency", "integer", 1),
    rate = number_flag(flags, "--rate", "integer", 1),
    per = timeout_flag(flags, "--per"),
  }
  if (limits.rate == nil) ~= (limits.per == nil) then usage("--rate and --per go together") end
  local any = limits.concurrency or limits.rate
  if flags["--clear"] and any then usage("--clear takes no limit with it") end
  if not flags["--clear"] and not any then
    usage("limit needs --concurrency N, --rate N --per S, or --clear")
  end
  return compat.using(open_rw(pos[1], false), function(db)
    db:limit(pos[2], limits)
    if not any then out:write("cleared the limits of ", show_bytes(pos[2]), "\n")
    else
      local parts = {}
      if limits.concurrency then parts[#parts + 1] = "concurrency " .. limits.concurrency end
      if limits.rate then
        parts[#parts + 1] = string.format("rate %d per %s s", limits.rate, tostring(limits.per))
      end
      out:write("limited ", show_bytes(pos[2]), ": ", table.concat(parts, ", "), "\n")
    end
    return 0
  end)
end

--- lease unschedule DB NAME: deletes the schedule NAME (its jobs stay).
-- @tparam table argv {"unschedule", args...}
-- @tparam file out where the outcome goes
-- @tparam file err where "no schedule" goes
-- @treturn integer 0, or 1 when there is no schedule NAME
-- @raise a usage error, or a database error
local function cmd_unschedule(argv, out, err)
  local _, pos = parse(argv, 2, {})
  if #pos ~= 2 or pos[2] == "" then usage("unschedule takes a database path and a schedule NAME") end
  return compat.using(open_rw(pos[1], false), function(db)
    if db:unschedule(pos[2]) then
      out:write("unscheduled ", show_bytes(pos[2]), "\n")
      return 0
    end
    err:write("lease unschedule: no schedule ", show_bytes(pos[2]), " in ", show_bytes(pos[1]), "\n")
    return 1
  end)
end

--- lease tick DB: one tick at the current time: enqueues the jobs of the
-- schedules due (db:tick) and prints their ids, one a line.
-- @tparam table argv {"tick", args...}
-- @tparam file out where the ids go
-- @treturn integer 0
-- @raise a usage error, or a database error
local function cmd_tick(argv, out)
  local _, pos = parse(argv, 2, {})
  if #pos ~= 1 then usage("tick takes one database path") end
  return compat.using(open_rw(pos[1], false), function(db)
    for _, id in ipairs(db:tick(require("lease").now())) do out:write(show_bytes(id), "\n") end
    return 0
  end)
end

-- The status words db:queues counts, in the order lease queues shows them.
local QUEUE_COLUMNS = { "available", "scheduled", "running", "retryable", "completed",
                        "discarded", "cancelled", "waiting" }

--- lease queues DB [--json] [--now T]: every queue with jobs or settings
-- (db:queues): paused or not, its limits, its jobs by status.
-- @tparam table argv {"queues", args...}
-- @tparam file out where the table goes
-- @treturn integer 0
-- @raise a usage error, or a database error
local function cmd_queues(argv, out, err)
  local flags, pos = parse(argv, 2, { ["--json"] = false, ["--now"] = true })
  if #pos ~= 1 then usage("queues takes one database path") end
  local now = now_from(flags)
  return compat.using(open_ro(pos[1], err), function(db)
    local qs = db:queues(now)
    if flags["--json"] then
      local json = require("lease.json")
      for i, q in ipairs(qs) do   -- names valid UTF-8, as every --json string
        local c = {}
        for k, v in pairs(q) do c[k] = v end
        c.name = utf8_safe(q.name)
        qs[i] = c
      end
      out:write(json.encode(qs, { sorted = true, null_nonfinite = true }), "\n")
      return 0
    end
    local rows = { { "QUEUE", "STATE", "LIMITS" } }
    for _, c in ipairs(QUEUE_COLUMNS) do rows[1][#rows[1] + 1] = c:upper() end
    for _, q in ipairs(qs) do
      local lim = {}
      if q.concurrency then lim[#lim + 1] = "concurrency " .. q.concurrency end
      if q.rate then lim[#lim + 1] = string.format("rate %d/%gs", q.rate, q.per) end
      local row = { show_bytes(q.name), q.paused and "paused" or "running",
                    #lim > 0 and table.concat(lim, ", ") or "-" }
      for _, c in ipairs(QUEUE_COLUMNS) do row[#row + 1] = tostring(q[c]) end
      rows[#rows + 1] = row
    end
    local w = {}
    for _, r in ipairs(rows) do
      for k, v in ipairs(r) do w[k] = math.max(w[k] or 0, width(v)) end
    end
    for _, r in ipairs(rows) do
      local cells = {}
      for k, v in ipairs(r) do cells[k] = k < #r and pad(v, w[k]) or v end
      out:write(table.concat(cells, "  "), "\n")
    end
    return 0
  end)
end

--- lease events DB [--job ID] [--since SEQ] [--limit N] [--json]: the
-- events ledger (db:events) in seq order, all of it or one job's, after
-- seq SEQ, at most N: seq, time (UTC), op, outcome and reason, job (or
-- queue), owner, fence; or one JSON array of the events as db:events reads
-- them (times as the stored numbers).
-- @tparam table argv {"events", args...}
-- @tparam file out where the list goes
-- @tparam file err where a note on how the file was read goes (open_ro)
-- @treturn integer 0
-- @raise a usage error, or a database error
local function cmd_events(argv, out, err)
  local flags, pos = parse(argv, 2, { ["--job"] = true, ["--since"] = true, ["--limit"] = true,
                                     ["--json"] = false })
  if #pos ~= 1 then usage("events takes one database path") end
  local limit = number_flag(flags, "--limit", "integer", 1)
  local since = number_flag(flags, "--since", "integer", 0) or 0
  local job = flags["--job"]
  if job == "" then usage("--job needs a job id, got ''") end
  return compat.using(open_ro(pos[1], err), function(db)
    local rows = {}
    repeat
      local want = limit and math.min(10000, limit - #rows) or 10000
      local page = db:events({ id = job, since_seq = since, limit = want })
      for _, e in ipairs(page) do rows[#rows + 1] = e end
      if #page > 0 then since = page[#page].seq end
    until #page < want or (limit and #rows >= limit)
    if flags["--json"] then
      local json = require("lease.json")
      local parts = {}
      for k, e in ipairs(rows) do
        parts[k] = json.encode({ seq = e.seq, at = e.at, op = e.op, id = utf8_safe(e.id) or json.null,
                                 queue = utf8_safe(e.queue) or json.null,
                                 owner = utf8_safe(e.owner) or json.null, fence = e.fence or json.null,
                                 outcome = e.outcome, reason = e.reason or json.null },
          { keyorder = { "seq", "at", "op", "id", "queue", "owner", "fence", "outcome", "reason" } })
      end
      out:write("[", table.concat(parts, ",\n "), "]\n")
      return 0
    end
    local w = 3
    for _, e in ipairs(rows) do w = math.max(w, width(show_bytes(e.id or e.queue or "-"))) end
    w = math.min(w, 60)
    local fmt = "%8s  %-24s  %-8s  %-20s  %s  %s  %s\n"
    out:write(string.format(fmt, "SEQ", "AT (UTC)", "OP", "OUTCOME", pad("JOB", w), pad("OWNER", 12),
      "FENCE"))
    for _, e in ipairs(rows) do
      local job_or_queue = e.id and show_bytes(e.id) or ("queue " .. show_bytes(e.queue or "-"))
      out:write(string.format(fmt, tostring(e.seq), iso_time(e.at), e.op,
        e.reason and ("refused " .. e.reason) or "ok", pad(job_or_queue, w),
        pad(e.owner and show_bytes(e.owner) or "-", 12), e.fence and tostring(e.fence) or "-"))
    end
    out:write(string.format("%d events\n", #rows))
    return 0
  end)
end

-- What observe's functions use of this module to show bytes and times.
local OBSERVE_FMT = { show = show_bytes, time = iso_time, safe = utf8_safe }

--- lease stats DB [--json] [--watch S [--count N]] [--now T]: per queue, its
-- jobs by status, paused and limits, completions per minute over the last
-- 1, 5 and 15 minutes and refusals by op and reason (from the events
-- ledger), and the age of the oldest available job (lease.observe.collect);
-- or one JSON object of those numbers.  With --watch S it prints again
-- every S seconds until interrupted, or N times with --count N.
-- @tparam table argv {"stats", args...}
-- @tparam file out where the numbers go
-- @tparam file err where a note on how the file was read goes (open_ro)
-- @treturn integer 0
-- @raise a usage error naming the option, or a database error
local function cmd_stats(argv, out, err)
  local flags, pos = parse(argv, 2, { ["--json"] = false, ["--watch"] = true, ["--count"] = true,
                                     ["--now"] = true })
  if #pos ~= 1 then usage("stats takes one database path") end
  local watch = number_flag(flags, "--watch", "seconds > 0")
  local count = number_flag(flags, "--count", "integer", 1)
  if count and not watch then usage("--count needs --watch") end
  local fixed = flags["--now"] and now_from(flags)
  local observe = require("lease.observe")
  return compat.using(open_ro(pos[1], err), function(db)
    local n = 0
    local ok, e = pcall(function()
      while true do
        local st = observe.collect(db, fixed or require("lease").now())
        if flags["--json"] then out:write(observe.json(st, utf8_safe), "\n")
        else out:write(observe.text(st, OBSERVE_FMT)) end
        out:flush()
        n = n + 1
        if not watch or (count and n >= count) then return end
        require("lease").sleep(watch)
        if not flags["--json"] then out:write("\n") end
      end
    end)
    -- SIGINT (Ctrl-C) raises "interrupted!" in the running code (the host's
    -- lua.c handler): the end --watch waits for, so exit 0
    if not ok and not (watch and tostring(e):find("interrupted!$")) then error(e, 0) end
    return 0
  end)
end

--- lease metrics DB [--now T]: the numbers of lease stats in the
-- Prometheus text exposition format (lease.observe.metrics), for a node
-- exporter's textfile collector or a scrape.
-- @tparam table argv {"metrics", args...}
-- @tparam file out where the text goes
-- @tparam file err where a note on how the file was read goes (open_ro)
-- @treturn integer 0
-- @raise a usage error, or a database error
local function cmd_metrics(argv, out, err)
  local flags, pos = parse(argv, 2, { ["--now"] = true })
  if #pos ~= 1 then usage("metrics takes one database path") end
  local now = now_from(flags)
  local observe = require("lease.observe")
  return compat.using(open_ro(pos[1], err), function(db)
    out:write(observe.metrics(observe.collect(db, now)))
    return 0
  end)
end

--- lease timeline DB [--job ID] [--queue Q] [--since T] -o FILE.svg|FILE.html:
-- the events ledger's leases drawn as an SVG (lease.observe.svg), one row
-- per job; .html wraps it in a page.  Prints what it wrote.
-- @tparam table argv {"timeline", args...}
-- @tparam file out where the summary line goes
-- @tparam file err where a note on how the file was read goes (open_ro)
-- @treturn integer 0
-- @raise a usage error naming the option, a database error, or the
-- error of writing FILE
local function cmd_timeline(argv, out, err)
  local flags, pos = parse(argv, 2, { ["--job"] = true, ["--queue"] = true, ["--since"] = true,
                                     ["-o"] = true })
  if #pos ~= 1 then usage("timeline takes one database path") end
  local file = flags["-o"]
  if not file then usage("-o FILE is required (FILE.svg or FILE.html)") end
  local kind = file:match("%.([sS][vV][gG])$") or file:match("%.([hH][tT][mM][lL]?)$")
  if not kind then usage("-o needs a file ending in .svg or .html, got '" .. file .. "'") end
  local job = flags["--job"]
  if job == "" then usage("--job needs a job id, got ''") end
  local queue = queue_flag(flags)
  local since = flags["--since"] and parse_time("--since", flags["--since"], "ago")
  local observe = require("lease.observe")
  return compat.using(open_ro(pos[1], err), function(db)
    local events, after = {}, 0
    repeat
      local page = db:events({ id = job, since_seq = after, limit = 10000 })
      for _, e in ipairs(page) do
        if e.id and (not since or e.at >= since) then events[#events + 1] = e end
      end
      if #page > 0 then after = page[#page].seq end
    until #page < 10000
    if queue then
      local keep, kept = {}, {}
      for _, e in ipairs(events) do
        if keep[e.id] == nil then
          local st = db:state(e.id)
          keep[e.id] = st ~= nil and st.queue == queue
        end
        if keep[e.id] then kept[#kept + 1] = e end
      end
      events = kept
    end
    local svg, counts = observe.svg(events, OBSERVE_FMT)
    local text = kind:lower() == "svg" and svg or observe.html(svg)
    local f, oerr = io.open(file, "wb")
    if not f then error(oerr, 0) end
    local ok, werr = f:write(text)
    f:close()
    if not ok then error(werr, 0) end
    out:write(string.format("wrote %s: %d jobs, %d leases, %d refused writes\n", show_bytes(file), counts.jobs,
      counts.leases, counts.refused))
    return 0
  end)
end

--- lease web DB [--port P] [--bind ADDR] [--token T]: a dashboard of DB
-- over HTTP (lease.web): the queues with pause and resume, the jobs by
-- queue and status, each job with its payload, result, errors, events and
-- timeline, and retry and cancel.  The actions need the token, printed at
-- start (a fresh one, unless --token gives it).  Serves one request at a
-- time, opening DB for each, until interrupted (SIGINT).
-- @tparam table argv {"web", args...}
-- @tparam file out where the address and the token go
-- @tparam file err where a note on how the file was read goes (open_ro)
-- @treturn integer 0, once interrupted
-- @raise a usage error naming the option, a database error, the error of
-- binding the address, or that this build has no web (no libmicrohttpd)
local function cmd_web(argv, out, err)
  local flags, pos = parse(argv, 2, { ["--port"] = true, ["--bind"] = true, ["--token"] = true })
  if #pos ~= 1 then usage("web takes one database path") end
  local port = number_flag(flags, "--port", "integer", 0)
  if port and port > 65535 then usage("--port needs an integer from 0 to 65535, got '" .. flags["--port"] .. "'") end
  local bind = flags["--bind"] or "127.0.0.1"
  if flags["--token"] == "" then usage("--token needs a non-empty token") end
  local web = require("lease.web")
  local name = compat.using(open_ro(pos[1], err), function(db) return db:name() end)
  local ctx = { db = pos[1], name = name, token = flags["--token"] or web.new_token(), fmt = OBSERVE_FMT,
                now = require("lease").now, open_rw = function(p) return open_rw(p, false) end,
                open_ro = function(p) return open_ro(p) end }
  local ok, e = pcall(web.serve, ctx, bind, port or 8765, out)
  if not ok then
    -- the listen function's name is '?' in Lua 5.1's message
    local why = type(e) == "string" and e:match("^bad argument #1 to '[^']*' %((not an IPv4 or IPv6 address)%)$")
    if why then usage("--bind needs " .. why:gsub("^not ", "", 1) .. ", got '" .. bind .. "'") end
    error(e, 0)
  end
  return 0
end

--- lease pool DB WORKER.lua [-j N] [--ttl S] [--queue Q] [--forever]
-- [--grace S] [--batch N] [--poll S] [--drain-wait S] [--decode json]
-- [--timeout S] [--events] [--quiet]: runs lease.pool over the queue with the handler
-- WORKER.lua returns (or its table of handler and hooks, lease.pool.HOOKS),
-- and prints the summary.  The older order WORKER.lua DB is
-- still read when the first ends in ".lua" and the second does not.  The
-- script is compiled once first, so a syntax error is reported once.  A
-- live progress line goes to stderr when it is a terminal (never with
-- --quiet).  With --events (or LEASE_EVENTS) the workers' writes record
-- events in the ledger.  SIGINT and SIGTERM shut it down.
-- @tparam table argv {"pool", args...}
-- @tparam file out where the summary goes
-- @treturn integer 0; 1 when a worker failed or a job was discarded
-- during the run
-- @raise a usage error (a bad flag value, an unreadable worker script), the
-- script's syntax error, or lease.pool.run's error
local function cmd_pool(argv, out)
  local flags, pos = parse(argv, 2, { ["-j"] = true, ["--ttl"] = true, ["--quiet"] = false,
                                     ["--queue"] = true, ["--forever"] = false, ["--grace"] = true,
                                     ["--batch"] = true, ["--poll"] = true, ["--drain-wait"] = true,
                                     ["--decode"] = true, ["--timeout"] = true, ["--events"] = false })
  if #pos ~= 2 then usage("pool takes a database path and a worker script") end
  local dbpath, worker = pos[1], pos[2]
  if dbpath:find("%.lua$") and not worker:find("%.lua$") then dbpath, worker = worker, dbpath end
  local decode = flags["--decode"]
  if decode ~= nil and decode ~= "json" then usage("--decode takes json, got '" .. decode .. "'") end
  local j = compat.tointeger(tonumber(flags["-j"] or "4"))
  if not j or j < 1 or j > 256 then usage("-j needs an integer from 1 to 256") end
  local ttl = tonumber(flags["--ttl"] or "10")
  local now = require("lease").now()
  if not ttl or not (ttl > 0) or ttl == math.huge or not (now + ttl > now) then
    usage("--ttl needs a finite number of seconds > 0, large enough to change the clock")
  end
  local batch = number_flag(flags, "--batch", "integer", 1)
  if batch and batch > 1000000 then usage("--batch needs an integer from 1 to 1000000") end
  local poll = number_flag(flags, "--poll", "seconds > 0")
  local queue = queue_flag(flags)
  local grace = number_flag(flags, "--grace", "seconds")
  local drain_wait = number_flag(flags, "--drain-wait", "seconds")
  local timeout = timeout_flag(flags, "--timeout")
  local f = io.open(worker, "rb")
  if not f then usage("cannot read worker script " .. worker) end
  f:close()
  local compiled, why = loadfile(worker)
  if not compiled then error("worker script does not compile: " .. tostring(why), 0) end
  local pool = require("lease.pool")
  local progress = not flags["--quiet"] and os.execute("[ -t 2 ]") == true
  local ran, s = pcall(pool.run, { db = dbpath, worker = worker, workers = j, ttl = ttl,
                       progress = progress, queue = queue,
                       open = { create = false, events = flags["--events"] and true or events_env() },
                       forever = flags["--forever"] and true or nil, shutdown_grace = grace,
                       batch = batch, poll = poll, drain_wait = drain_wait, decode = decode,
                       timeout = timeout })
  if not ran then error(explain_open(s, dbpath, false), 0) end
  out:write(pool.format(s, show_bytes), "\n")
  return (#s.failed == 0 and s.discarded == 0) and 0 or 1
end

-- The subcommands, in the order the usage lists them: name, the
-- arguments, one line of what it does, and its options (lease NAME --help).
local COMMANDS = {
  { name = "pool", args = "DB WORKER.lua [-j N] [--ttl S] [--queue Q] [--forever] [--grace S] "
      .. "[--batch N] [--poll S] [--drain-wait S] [--decode json] [--timeout S] [--events] [--quiet]",
    run = cmd_pool,
    help = "run worker threads over a queue of DB",
    options = [[
  -j N              worker threads, 1 to 256 (default 4)
  --ttl S           lease length in seconds (default 10); job.heartbeat() renews it
  --queue Q         the queue to work (default "default")
  --forever         keep waiting for new jobs instead of stopping once the queue is drained
  --grace S         seconds running handlers get after SIGINT or SIGTERM (default 10)
  --batch N         jobs claimed at once (default 1)
  --poll S          longest wait when no job is ready (default 1; new jobs wake it)
  --drain-wait S    how far ahead retries are waited for before stopping (default 30)
  --decode json     decode each payload as JSON into job.data
  --timeout S       seconds (or 30s, 2m, 1h) a handler may run on a job without a timeout
                    of its own; past it the handler is stopped and the job failed
  --events          record the workers' writes in the events ledger (as LEASE_EVENTS=1 does)
  --quiet           no progress line on standard error
The older order WORKER.lua DB is read too.]] },
  { name = "enqueue", args = "DB ID [--payload S | --payload-file F] [--queue Q] [--priority N] "
      .. "[--run-at T | --in SECONDS] [--max-attempts N] [--timeout S] [--after ID]... [--key K] "
      .. "[--json]",
    run = cmd_enqueue,
    help = "add a job (DB is created when missing)",
    options = [[
  --payload S       the payload
  --payload-file F  the payload, the bytes of file F ("-": standard input)
  --queue Q         the queue (default "default")
  --priority N      an integer; lower runs first (default 0)
  --run-at T        not before T: seconds since the epoch, a date (2026-12-01T10:00:00Z)
                    or a duration from now (90s, 15m, 2h, 2d, 1w)
  --in SECONDS      not before SECONDS from now
  --max-attempts N  attempts before the job is discarded (default 25)
  --timeout S       seconds (or 30s, 2m, 1h) a pool's handler may run on it (default: the
                    pool's --timeout, else none)
  --after ID        wait until job ID is completed (repeat for more); a job
                    ID discarded or cancelled cancels this one
  --key K           a unique key: refused ("duplicate", naming the job that holds it)
                    while an unfinished job of the queue has key K
  --json            print the outcome as JSON]] },
  { name = "jobs", args = "DB [--status S] [--queue Q] [--errors] [--ready|--held|--done|--blocked] "
      .. "[--limit N] [--json] [--now T]", run = cmd_jobs, help = "list jobs",
    options = [[
  --status S        only jobs with status S: available, scheduled, running, retryable,
                    completed, discarded, cancelled, waiting
  --ready, --held, --done   --status available, running, completed
  --blocked         only the jobs no worker can take
  --queue Q         only the queue Q
  --errors          every error kept under each job
  --limit N         the first N jobs only
  --json            one JSON array, times as exact numbers
  --now T           measure leases from T (seconds or a date) instead of now]] },
  { name = "show", args = "DB ID [--json] [--now T]", run = cmd_show,
    help = "show one job, its errors and its result",
    options = [[
  --json            one JSON object, times as exact numbers
  --now T           measure the lease from T (seconds or a date) instead of now]] },
  { name = "retry", args = "DB ID... | DB --discarded [--queue Q] [--json]", run = cmd_retry,
    help = "run jobs again with a fresh attempt budget",
    options = [[
  --discarded       every discarded job (of the queue Q with --queue)
  --json            print the outcomes as JSON]] },
  { name = "cancel", args = "DB ID... [--json]", run = cmd_cancel, help = "cancel jobs",
    options = [[
  --json            print the outcomes as JSON]] },
  { name = "prune", args = "DB --before T [--queue Q] [--status S] [--json]", run = cmd_prune,
    help = "delete finished jobs",
    options = [[
  --before T        finished before T: seconds since the epoch, a date (2026-12-01)
                    or a duration ago (90s, 15m, 2h, 2d, 1w)
  --queue Q         only the queue Q
  --status S        only completed, discarded or cancelled jobs
  --json            print the count as JSON]] },
  { name = "schedule", args = "DB NAME (--every S | --cron EXPR) [--queue Q] [--payload S] "
      .. "[--priority N] [--max-attempts N]", run = cmd_schedule,
    help = "create or replace a recurring job (DB is created when missing)",
    options = [[
  --every S         a tick every S seconds (at the multiples of S since the epoch)
  --cron EXPR       a tick at each minute EXPR matches in UTC: "m h dom mon dow"
  --queue Q         the jobs' queue (default "default")
  --payload S       the jobs' payload
  --priority N      the jobs' priority (default 0)
  --max-attempts N  the jobs' attempts before discard (default 25)
Each tick enqueues the job NAME@TICK when `lease tick` or a --forever pool runs.]] },
  { name = "schedules", args = "DB [--json]", run = cmd_schedules, help = "list the schedules",
    options = [[
  --json            one JSON array, times as exact numbers]] },
  { name = "unschedule", args = "DB NAME", run = cmd_unschedule,
    help = "delete a schedule (its jobs stay)", options = "  (none)" },
  { name = "tick", args = "DB", run = cmd_tick,
    help = "enqueue the jobs of the schedules due now, and print their ids", options = "  (none)" },
  { name = "pause", args = "DB QUEUE", run = cmd_pause,
    help = "stop claim_next handing out the queue's jobs (held leases go on)", options = "" },
  { name = "resume", args = "DB QUEUE", run = cmd_pause, help = "hand out a paused queue's jobs again",
    options = "" },
  { name = "limit", args = "DB QUEUE [--concurrency N] [--rate N --per S] [--clear]", run = cmd_limit,
    help = "set the queue's limits, replacing the ones it had",
    options = [[
  --concurrency N   at most N of its jobs held with a live lease at once
  --rate N --per S  at most N jobs handed out in any S seconds (S: seconds or
                    a duration, 30s, 1m, 1h)
  --clear           no limits]] },
  { name = "queues", args = "DB [--json] [--now T]", run = cmd_queues,
    help = "list the queues: paused or not, their limits, their jobs by status",
    options = [[
  --json            one JSON array of {name, paused, concurrency, rate, per, and a count per status}
  --now T           count statuses at T (seconds or a date) instead of now]] },
  { name = "events", args = "DB [--job ID] [--since SEQ] [--limit N] [--json]", run = cmd_events,
    help = "list the events ledger: every operation on a job, refused ones too",
    options = [[
  --job ID          only this job's events
  --since SEQ       only the events after seq SEQ (a page's last seq)
  --limit N         at most N events
  --json            one JSON array of {seq, at, op, id, queue, owner, fence, outcome, reason}]] },
  { name = "stats", args = "DB [--json] [--watch S [--count N]] [--now T]", run = cmd_stats,
    help = "per queue: jobs by status, limits, completions per minute, oldest available, refusals",
    options = [[
  --json            one JSON object, exact numbers
  --watch S         print again every S seconds until interrupted
  --count N         with --watch: stop after N prints
  --now T           measure at T (seconds or a date) instead of now
Completions and refusals come from the events ledger (handles opened with events = true).]] },
  { name = "metrics", args = "DB [--now T]", run = cmd_metrics,
    help = "the numbers of stats in the Prometheus text format",
    options = [[
  --now T           measure at T (seconds or a date) instead of now]] },
  { name = "timeline", args = "DB [--job ID] [--queue Q] [--since T] -o FILE.svg|FILE.html",
    run = cmd_timeline, help = "draw the events ledger's leases, one row per job, as SVG or HTML",
    options = [[
  --job ID          only this job
  --queue Q         only the jobs of queue Q
  --since T         only the events at or after T: seconds, a date or a duration ago (2h)
  -o FILE           the file to write: FILE.svg, or FILE.html (the SVG in a page)]] },
  { name = "web", args = "DB [--port P] [--bind ADDR] [--token T]", run = cmd_web,
    help = "serve a dashboard of the queues and jobs, with pause, resume, retry and cancel",
    options = [[
  --port P          the port (default 8765; 0: one the system picks, printed)
  --bind ADDR       the address to listen on, an IPv4 or IPv6 literal (default 127.0.0.1)
  --token T         the token the actions need (default: a fresh random one, printed)
One request at a time; each opens DB briefly.  Needs a build with libmicrohttpd.]] },
}
local BY_NAME = {}
for _, c in ipairs(COMMANDS) do BY_NAME[c.name] = c end

--- One command's usage line: "usage: lease NAME ARGS".
-- @tparam table c an entry of COMMANDS
-- @treturn string
local function command_usage(c)
  return "usage: lease " .. c.name .. " " .. c.args
end

--- The edit distance between two words (insertions, deletions,
-- substitutions, and swaps of two neighbours, each 1).
-- @tparam string a
-- @tparam string b
-- @treturn integer
local function distance(a, b)
  local d = {}
  for i = 0, #a do d[i] = { [0] = i } end
  for j = 0, #b do d[0][j] = j end
  for i = 1, #a do
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      d[i][j] = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 and j > 1 and a:sub(i, i) == b:sub(j - 1, j - 1) and a:sub(i - 1, i - 1) == b:sub(j, j) then
        d[i][j] = math.min(d[i][j], d[i - 2][j - 2] + 1)
      end
    end
  end
  return d[#a][#b]
end

--- The command nearest to a word that names none: within an edit
-- distance of 2 (of 1 for a word of up to 3 letters), or the one whose
-- name the word begins (2 letters at least).
-- @tparam string word
-- @treturn ?string the command's name, or nil when none is near
local function nearest(word)
  local best, best_d
  word = word:lower()
  for _, c in ipairs(COMMANDS) do
    local d = distance(word, c.name)
    if #word >= 2 and c.name:sub(1, #word) == word then d = 0 end
    if not best_d or d < best_d then best, best_d = c.name, d end
  end
  if best_d <= (#word <= 3 and 1 or 2) then return best end
  return nil
end

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
    "The modules lease, lease.thread, lease.pool, lease.cli, lease.json, lease.observe,",
    "lease.web, lease.compat and lease.testing are preloaded, and lease.httpd in a",
    "build with libmicrohttpd.",
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
-- @treturn integer the exit status: 0; 1 for a missing job, a job that
-- exists (enqueue), a refused retry or cancel, a worker that failed or a
-- job discarded during a pool run, or a database error (printed as
-- "lease <cmd>: <message>"); 2 for bad usage (printed with that command's
-- usage line, the message naming the option) or an unknown command
-- (printed with the nearest command's name when one is near, and every
-- command's usage line); 0 for --help or -h (the command's usage and
-- options on out)
function cli.main(argv, out, err)
  out, err = out or io.stdout, err or io.stderr
  local name = argv[1]
  local cmd = BY_NAME[name]
  if not cmd then
    local near = type(name) == "string" and nearest(name)
    err:write("lease: unknown command '", show_bytes(tostring(name)), "'",
      near and (" (did you mean " .. near .. "?)") or "", "\n", commands_usage(), "\n")
    return 2
  end
  local ok, res = pcall(cmd.run, argv, out, err)
  if ok then return res end
  if getmetatable(res) == Help then
    out:write(command_usage(cmd), "\n", cmd.help, "\n", cmd.options, "\n")
    return 0
  end
  local refused = argument_error(res)   -- an argument the engine refused: bad usage too
  if refused then res = setmetatable({ msg = refused }, Usage) end
  if getmetatable(res) == Usage then
    err:write("lease ", name, ": ", show_bytes(res.msg), "\n", command_usage(cmd), "\n",
      "Try 'lease ", name, " --help'.\n")
    return 2
  end
  err:write("lease ", name, ": ", show_bytes(tostring(res)), "\n")
  return 1
end

return cli
