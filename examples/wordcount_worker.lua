-- examples/wordcount_worker.lua: the handler of the main job.
--
-- Loaded once in each worker thread by lease.pool.  Returns
--   handler(job) -> result: the ten most frequent words of the file job.id,
--                   one "word count" per line;
--   top10(path)  -> the same, for the single-threaded self-check.
-- With job.args.stall_ids[job.id] set, the first attempt stalls for 1.5
-- lease lengths without renewing, as a stuck worker would: its lease runs
-- out, another worker takes the job over, and this worker's late complete
-- is refused.  job.args.fail_once[job.id]: the first attempt raises (the
-- pool stores the error and the job comes back after its backoff);
-- job.args.always_fail[job.id]: every attempt raises, until the job is
-- discarded.
local lease = require("lease")

--- The ten most frequent words (letters only, lower-cased) of a file, ties
-- broken alphabetically, as "word count" lines.
-- @tparam string path the file
-- @treturn string the lines, joined by "\n"
-- @raise when the file cannot be read
local function top10(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("*a")   -- "*a": every Lua version reads it as "all"
  f:close()
  local counts = {}
  for word in text:lower():gmatch("%a+") do counts[word] = (counts[word] or 0) + 1 end
  local words = {}
  for w in pairs(counts) do words[#words + 1] = w end
  table.sort(words, function(a, b)
    if counts[a] ~= counts[b] then return counts[a] > counts[b] end
    return a < b
  end)
  local lines = {}
  for i = 1, math.min(10, #words) do lines[i] = words[i] .. " " .. counts[words[i]] end
  return table.concat(lines, "\n")
end

--- The pool calls this for each job it claimed: a stalled first attempt
-- of the ids in job.args.stall_ids sleeps 1.5 ttl without a heartbeat;
-- the ids in fail_once raise on their first attempt, those in always_fail
-- on every one.
-- @tparam table job the pool's job (id is the file's path)
-- @treturn string the file's top ten words
-- @raise "simulated failure ..." for the ids above, or when the file cannot
-- be read (the pool records it with db:fail)
local function handler(job)
  local args = job.args or {}
  if args.stall_ids and args.stall_ids[job.id] and job.attempt == 1 then
    lease.sleep(job.ttl * 1.5)   -- stuck: no heartbeat, the lease runs out
  end
  if args.fail_once and args.fail_once[job.id] and job.attempt == 1 then
    error("simulated failure on attempt 1 (a flaky disk, say)", 0)
  end
  if args.always_fail and args.always_fail[job.id] then
    error("simulated failure on every attempt (attempt " .. job.attempt .. ")", 0)
  end
  local result = top10(job.id)
  job.heartbeat()
  return result
end

return handler, top10
