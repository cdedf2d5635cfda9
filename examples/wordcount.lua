-- examples/wordcount.lua: the main job.  Word counts of real files by a
-- pool of native worker threads, some of which stall past their lease,
-- some of which fail once (retried after a backoff), and some of which
-- always fail (discarded after their attempts, their errors kept).
--
-- Usage: lease examples/wordcount.lua [-j N] [--ttl S] [--stall FRACTION]
--                                     [--fail-once N] [--always-fail N]
--                                     [--attempts N] [--db PATH] [DIR]
--   DIR       every regular file under it becomes a job
--             (default /usr/share/common-licenses, on every Debian machine)
--   -j N      worker threads (default 4)
--   --ttl S   lease length in seconds (default 1)
--   --stall F fraction of jobs whose first worker stalls for 1.5 ttl
--             (default 0): the lease runs out, another worker takes the
--             job over, and the stalled worker's late complete is refused
--   --fail-once N    files whose first attempt raises (default 0): stored
--             with the job by db:fail, retried after the backoff, then done
--   --always-fail N  files whose every attempt raises (default 0): discarded
--             after --attempts attempts, every error kept in the database
--   --attempts N     each job's max_attempts (default 3)
--   --db PATH the database file to create (default: a new temporary
--             file); an existing file is refused, never overwritten
-- Prints the pool's summary and the discarded jobs (`lease jobs --status
-- discarded`), then checks the database itself: every job completed
-- exactly once with a result equal to a fresh single-threaded count, or
-- discarded with one error per attempt.  Exits 0 when the check passes, 1
-- when it fails, 2 on bad usage.
local lease = require("lease")
local pool = require("lease.pool")
local lfs = require("lfs")   -- Debian's lua-filesystem

--- Print a usage error and exit with status 2.
-- @tparam string msg what is wrong with the command line
local function usage(msg)
  io.stderr:write("wordcount: ", msg, "\n",
    "usage: lease examples/wordcount.lua [-j N] [--ttl S] [--stall FRACTION] [--fail-once N]\n"
    .. "                                    [--always-fail N] [--attempts N] [--db PATH] [DIR]\n")
  os.exit(2)
end

-- Options.
local opt = { j = 4, ttl = 1, stall = 0, fail_once = 0, always_fail = 0, attempts = 3,
              dir = "/usr/share/common-licenses" }
local i = 1
while arg[i] do
  local a = arg[i]
  --- The value after option a.
  -- @treturn string the next argument (exits through usage when there is none)
  local function value()
    i = i + 1
    if arg[i] == nil then usage(a .. " needs a value") end
    return arg[i]
  end
  --- The integer value after option a.
  -- @treturn integer (exits through usage when it is not one)
  local function integer()
    local n = tonumber(value())   -- math.floor gives an integer on 5.3 and 5.4
    return n and n == math.floor(n) and n < 2 ^ 31 and math.floor(n) or usage(a .. " needs an integer")
  end
  if a == "-j" then opt.j = integer()
  elseif a == "--fail-once" then opt.fail_once = integer()
  elseif a == "--always-fail" then opt.always_fail = integer()
  elseif a == "--attempts" then opt.attempts = integer()
  elseif a == "--ttl" then opt.ttl = tonumber(value()) or usage("--ttl needs a number")
  elseif a == "--stall" then opt.stall = tonumber(value()) or usage("--stall needs a number")
  elseif a == "--db" then opt.db = value()
  elseif a:sub(1, 1) == "-" then usage("unknown option " .. a)
  else opt.dir = a end
  i = i + 1
end
if opt.j < 1 then usage("-j must be at least 1") end
if not (opt.ttl > 0) then usage("--ttl must be > 0") end
if not (opt.stall >= 0 and opt.stall <= 1) then usage("--stall must be from 0 to 1") end
if opt.fail_once < 0 or opt.always_fail < 0 then usage("--fail-once and --always-fail must be >= 0") end
if opt.attempts < 2 then usage("--attempts must be at least 2 (a stall or a failure uses one)") end

--- Every regular file under dir (symbolic links skipped), as paths that
-- start with dir.
-- @tparam string dir the directory
-- @tparam table out the list to append to
-- @treturn table out
-- @raise lfs's error when a directory cannot be read
local function files_under(dir, out)
  for name in lfs.dir(dir) do
    if name ~= "." and name ~= ".." then
      local p = dir .. "/" .. name
      local mode = lfs.symlinkattributes(p, "mode")
      if mode == "directory" then files_under(p, out)
      elseif mode == "file" then out[#out + 1] = p end
    end
  end
  return out
end

local attr = lfs.attributes(opt.dir)
if not attr or attr.mode ~= "directory" then usage(opt.dir .. " is not a directory") end
local files = files_under(opt.dir, {})
table.sort(files)
if #files == 0 then usage(opt.dir .. " holds no files") end

local path = opt.db
if path then
  if lfs.attributes(path) then usage(path .. " exists: give a path for a new database") end
else
  local tmp = os.tmpname()   -- an empty file, made safely; the database sits beside it
  os.remove(tmp)
  path = tmp .. ".db"
end

-- Stall an evenly spread share of the jobs (at least one when asked); the
-- files that fail are taken from the others, from the end of the list.
local stall_ids, nstall = {}, 0
if opt.stall > 0 then
  nstall = math.max(1, math.floor(#files * opt.stall + 0.5))
  for k = 1, nstall do stall_ids[files[math.floor((k - 1) * #files / nstall) + 1]] = true end
end
local fail_once, always_fail = {}, {}
do
  local k = #files
  local function next_free()
    while k >= 1 and stall_ids[files[k]] do k = k - 1 end
    k = k - 1
    return files[k + 1]
  end
  for _ = 1, opt.always_fail do local f = next_free(); if f then always_fail[f] = true end end
  for _ = 1, opt.fail_once do local f = next_free(); if f then fail_once[f] = true end end
end

--- How many keys a set has.
-- @tparam table t a set
-- @treturn integer
local function size(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end

--- Fill db with the jobs, run the pool, and check the database as stored.
-- @param db the lease handle on path
-- @treturn boolean whether the self-check passed
local function run(db)
  db:enqueue_many(files, { max_attempts = opt.attempts })
  print(string.format("wordcount: %d files from %s into %s; %d workers, ttl %g s, %d stalled, "
    .. "%d failing once, %d always failing, %d attempts each", #files, opt.dir, path, opt.j, opt.ttl,
    nstall, size(fail_once), size(always_fail), opt.attempts))

  local worker = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "wordcount_worker.lua"
  local tty = os.execute("[ -t 2 ]") == true
  local summary = pool.run({
    db = path, worker = worker, workers = opt.j, ttl = opt.ttl, poll = 0.02,
    args = { stall_ids = stall_ids, fail_once = fail_once, always_fail = always_fail },
    -- a short backoff for a demonstration: 0.1 s, 0.2 s, 0.4 s, ...
    backoff = function(attempt) return 0.1 * 2 ^ (attempt - 1) end,
    progress = tty, completed = true,
  })
  print(pool.format(summary))
  print("discarded jobs (lease jobs " .. path .. " --status discarded):")
  require("lease.cli").main({ "jobs", path, "--status", "discarded" })

  -- The self-check, against the database as stored.
  local _, top10 = dofile(worker)
  local once, match, discarded, problems = 0, 0, 0, {}
  for _, f in ipairs(files) do
    local s = db:state(f)
    local times = summary.completed[f] or 0
    if always_fail[f] then
      -- discarded after its attempts, one error kept per attempt
      if s.status == "discarded" and s.attempt == opt.attempts and #s.errors == opt.attempts
        and times == 0 then
        discarded = discarded + 1
      else
        problems[#problems + 1] = string.format("%s: %s after %d attempts with %d errors", f,
          tostring(s.status), s.attempt, #s.errors)
      end
    else
      if s.status == "completed" and times == 1 then once = once + 1
      else problems[#problems + 1] = string.format("%s: %s, completed %d times", f, tostring(s.status), times) end
      if s.result == top10(f) then match = match + 1
      else problems[#problems + 1] = f .. ": stored result differs from a fresh count" end
      if fail_once[f] and not (#s.errors >= 1 and s.errors[1].message:find("simulated failure", 1, true)) then
        problems[#problems + 1] = f .. ": its first failure is not recorded"
      end
    end
  end
  local good = #files - size(always_fail)
  local ok = once == good and match == good and discarded == size(always_fail) and #summary.failed == 0
    and (nstall == 0 or summary.refused + summary.renew_refused > 0)
    and summary.retried >= size(fail_once)
  print(string.format("self-check: %d/%d jobs done exactly once, %d/%d results equal a fresh count, "
    .. "%d/%d discarded with an error per attempt, %d retried after a failure, %d stale completions "
    .. "refused: %s", once, good, match, good, discarded, size(always_fail), summary.retried,
    summary.refused, ok and "ok" or "FAILED"))
  for _, p in ipairs(problems) do print("  " .. p) end
  return ok
end

-- The handle is closed when run ends, however it ends (every Lua version:
-- no `<close>`); an error is raised again after the close.
local db = lease.open(path)
local ran, res = pcall(run, db)
db:close()
if not ran then error(res, 0) end
local ok = res
print("inspect the jobs with: " .. (arg[-1] or "lease") .. " jobs " .. path)
os.exit(ok and 0 or 1)
