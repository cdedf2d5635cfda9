-- specs/faults/with_lease_worker.lua: one worker process of the kill -9
-- rounds of with_lease (with_lease_chaos.lua), run by the host program:
--
--   build/lease specs/faults/with_lease_worker.lua DB NAME SEED ROWS TTL STOPFILE DEADLINE
--
-- Loops until STOPFILE exists, the wall clock passes DEADLINE, or the
-- driver that started it is gone: claim_next one job, sometimes stall
-- past the lease first (a stuck worker, then refused), then with_lease:
-- ROWS rows into the table out (job, fence, owner, k), one at a time with a
-- short sleep between them so a SIGKILL lands inside fn, then tx:complete
-- with "owner/fence", all in the one transaction.  Prints "ready <pid>"
-- once it runs; any error ends the process with the message on stderr.
local lease = require("lease")

local path, owner = arg[1], arg[2]
local seed, rows, ttl = tonumber(arg[3]), tonumber(arg[4]), tonumber(arg[5])
local stopfile, deadline = arg[6], tonumber(arg[7])
math.randomseed(seed)

local f = assert(io.open("/proc/self/stat"))
local stat = f:read("l")
f:close()
local pid = tonumber(stat:match("^(%d+)"))
local ppid = tonumber(stat:match("^%d+ %b() %S+ (%d+)"))

-- true when the loop should stop
local function should_stop()
  if lease.now() > deadline then return true end
  local s = io.open(stopfile)
  if s then s:close() return true end
  local st = io.open("/proc/self/stat")
  local line = st and st:read("l")
  if st then st:close() end
  return line ~= nil and tonumber(line:match("^%d+ %b() %S+ (%d+)")) ~= ppid
end

io.stdout:setvbuf("no")
io.stdout:write("ready ", pid, "\n")
local db = lease.open(path)
local n = 0
while true do
  n = n + 1
  if n % 4 == 0 and should_stop() then break end
  local id, fence = db:claim_next(owner, lease.now(), ttl)
  if not id then
    lease.sleep(0.005)
  else
    if math.random() < 0.1 then lease.sleep(ttl * 1.5) end   -- stuck: the lease runs out
    local ok, why = db:with_lease(id, owner, fence, lease.now(), function(tx)
      for k = 1, rows do
        tx:exec("INSERT INTO out(job, fence, owner, k) VALUES (?, ?, ?, ?)", id, fence, owner, k)
        lease.sleep(0.0005)
      end
      local done, reason = tx:complete(owner .. "/" .. fence)
      if not done then error("tx:complete refused after the lease check: " .. tostring(reason)) end
    end)
    if not ok and why ~= "expired" and why ~= "not_owner" and why ~= "stale_fence" and why ~= "done" then
      error("with_lease refused with " .. tostring(why))
    end
  end
end
db:close()
