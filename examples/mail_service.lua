-- examples/mail_service.lua: a long-running worker service.  A pool of
-- worker threads waits on the queue "mail" of a database for jobs whose
-- payload is JSON, `{"to": ..., "subject": ...}`, and "sends" each one by
-- appending a line to an outbox file.  A send that fails (an address
-- ending in ".invalid", or a flaky first try for addresses starting with
-- "flaky") is recorded with the job and tried again after a backoff; after
-- its max_attempts the job is discarded, its errors kept.
--
-- Usage: lease examples/mail_service.lua DB OUTBOX [-j N]
--   then, from another shell:
--     lease enqueue DB m1 --queue mail --payload '{"to":"ann@example.com","subject":"hi"}'
--     lease jobs DB --queue mail
--   Ctrl-C (SIGINT) or SIGTERM stops it: no new claims, running sends get
--   5 seconds, anything still held goes back to the queue; it prints the
--   summary and exits 0.
local pool = require("lease.pool")

--- Print a usage error and exit with status 2.
-- @tparam string msg what is wrong with the command line
local function usage(msg)
  io.stderr:write("mail_service: ", msg, "\nusage: lease examples/mail_service.lua DB OUTBOX [-j N]\n")
  os.exit(2)
end

local db, outbox, workers = arg[1], arg[2], 2
if not db or not outbox then usage("give a database and an outbox file") end
if arg[3] == "-j" then
  workers = tonumber(arg[4]) or usage("-j needs a number")
elseif arg[3] then
  usage("unknown option " .. arg[3])
end

--- The handler, run in each worker thread: "send" one mail.
-- @tparam table job the pool's job; job.data is the decoded payload and
-- job.args the outbox's path
-- @treturn string what was sent, stored as the job's result
-- @raise "no address", "cannot deliver to ..." (a failed send: retried
-- after the backoff, discarded after max_attempts)
local function send(job)
  local mail = job.data
  if type(mail) ~= "table" or type(mail.to) ~= "string" then error("no address in the payload", 0) end
  if mail.to:match("%.invalid$") then error("cannot deliver to " .. mail.to .. ": no such domain", 0) end
  if mail.to:match("^flaky") and job.attempt == 1 then
    error("cannot deliver to " .. mail.to .. ": connection reset, will retry", 0)
  end
  local line = string.format("to=%s subject=%s job=%s attempt=%d", mail.to, tostring(mail.subject),
    job.id, job.attempt)
  local f = assert(io.open(job.args, "a"))
  f:write(line, "\n")
  f:close()
  return line
end

io.stderr:write(string.format("mail_service: %d workers on queue \"mail\" of %s; Ctrl-C stops\n",
  workers, db))
local summary = pool.run({
  db = db, handler = send, args = outbox, workers = workers, queue = "mail",
  forever = true, decode = "json", ttl = 30, poll = 0.1, shutdown_grace = 5,
  -- 1 s, 2 s, 4 s, ... capped at a minute
  backoff = function(attempt) return math.min(60, 2 ^ (attempt - 1)) end,
})
print(pool.format(summary))
os.exit(#summary.failed == 0 and 0 or 1)
