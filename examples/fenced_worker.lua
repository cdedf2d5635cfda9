-- examples/fenced_worker.lua: a worker's own output rows, written inside
-- with_lease, commit only while its lease holds; a downstream store that
-- receives writes tagged with the fence refuses the stale one at its gate.
--
--   worker A claims job "invoice-42" and starts writing the invoice's
--   lines, then stalls; its lease runs out; worker B claims the job (a
--   larger fence), writes its lines and completes in one transaction, and
--   sends the total to the downstream store (its own database file),
--   which passes it through fence_gate.  A wakes up: its with_lease is
--   refused before its function runs, and its late send is refused by the
--   gate.  The counts at the end show that only B's rows exist.
--
-- Usage: build/lease examples/fenced_worker.lua [directory]
--    or: LUA_CPATH='build/?.so;;' lua5.4 examples/fenced_worker.lua [directory]
-- The directory (default: a new temporary one) receives jobs.db and
-- store.db; both must not exist yet.  Time is the caller's clock, a plain
-- number, as in the contract.  Exits 1 when an outcome differs.
local lease = require("lease")

local dir = arg[1]
if not dir then
  dir = os.tmpname()   -- a name made safely; the directory takes its place
  os.remove(dir)
end
os.execute("mkdir -p '" .. dir:gsub("'", [['\'']]) .. "'")
local jobs_path, store_path = dir .. "/jobs.db", dir .. "/store.db"
for _, p in ipairs({ jobs_path, store_path }) do
  local f = io.open(p, "rb")
  if f then
    f:close()
    io.stderr:write("fenced_worker: ", p, " exists: give a new directory\n")
    os.exit(2)
  end
end

local ok_all = true
local function expect(cond, what)
  if not cond then
    ok_all = false
    print("   !! unexpected: " .. what)
  end
end
local function say(t, who, fmt, ...)
  print(string.format("t=%-3s %-2s " .. fmt, t, who, ...))
end

local db = lease.open(jobs_path)
local id, ttl = "invoice-42", 10
db:enqueue(id)
local fa = db:claim(id, "A", 0, ttl)
-- the workers' own table lives in the same file as the jobs
assert(db:with_lease(id, "A", fa, 0, function(tx)
  tx:exec("CREATE TABLE IF NOT EXISTS invoice_lines(invoice TEXT, line INTEGER, amount INTEGER,"
    .. " written_by TEXT, fence INTEGER)")
end))
say(0, "A", "claims %s: fence %d (lease until t=%d)", id, fa, ttl)

--- The downstream store: another service with its own database, which
-- takes a total tagged with a fence and keeps it only when the fence
-- passes its gate.  It handles one request at a time, so the gate and
-- the write never interleave with another request.
-- @tparam string who the sender, for the printout
-- @tparam integer fence the sender's fencing token
-- @tparam integer total the invoice total
-- @treturn boolean whether the store kept it
local function send_to_store(who, fence, total)
  local passed, why = lease.fence_gate(store_path, "invoice-totals/" .. id, fence)
  if passed then
    local f = assert(io.open(dir .. "/store-" .. id .. ".txt", "w"))
    f:write(string.format("%s %d %d\n", who, fence, total))
    f:close()
  end
  return passed, why
end

--- A worker's step: write the invoice's lines and complete the job, in
-- one transaction that holds the lease.
-- @tparam string who the owner
-- @tparam integer fence its fencing token
-- @tparam number now the caller's clock
-- @treturn boolean, ... what with_lease returned
local function write_invoice(who, fence, now)
  return db:with_lease(id, who, fence, now, function(tx)
    local total = 0
    for line, amount in ipairs({ 1200, 350, 75 }) do
      tx:exec("INSERT INTO invoice_lines VALUES (?, ?, ?, ?, ?)", id, line, amount, who, fence)
      total = total + amount
    end
    assert(tx:complete(string.format("total %d by %s/%d", total, who, fence)))
    return total
  end)
end

-- A stalls before it writes anything (a long pause, a frozen VM...).
say(3, "A", "stalls")
local fb = db:claim(id, "B", 11, ttl)
say(11, "B", "claims %s after A's lease ran out: fence %s", id, tostring(fb))
expect(fb == fa + 1, "B should get the next fence")
local ok, total = write_invoice("B", fb, 12)
say(12, "B", "with_lease: lines written, job completed -> %s, total %s", tostring(ok), tostring(total))
expect(ok and total == 1625, "B's with_lease should commit")
local passed = send_to_store("B", fb, total)
say(13, "B", "sends total %d to the store (fence %d) -> %s", total, fb, tostring(passed))
expect(passed, "the store should take B's total")

-- A wakes up and carries on as if it still held the lease.
local refused, why = write_invoice("A", fa, 14)
say(14, "A", "wakes up, with_lease with fence %d -> %s, %s", fa, tostring(refused), tostring(why))
expect(refused == false and why == "done", "A's with_lease must be refused before its function runs")
local late, late_why = send_to_store("A", fa, 9999)
say(15, "A", "sends a total to the store (fence %d) -> %s, %s", fa, tostring(late), tostring(late_why))
expect(late == false and late_why == "stale_fence", "the store must refuse A's stale fence")

-- The counts.
local counts = {}
local state = db:state(id)
local f = assert(io.open(dir .. "/store-" .. id .. ".txt"))
local stored = f:read("*l")
f:close()
print()
print("job: done=" .. tostring(state.done) .. ", result \"" .. tostring(state.result) .. "\"")
-- Count the lines per writer, read in a transaction of a job of its own.
local fc = db:claim(id, "counter", 100, 1)   -- done: nothing to claim
expect(fc == nil, "a done job is never claimed again")
db:enqueue("count-lines")
local fcount = db:claim("count-lines", "counter", 100, 10)
db:with_lease("count-lines", "counter", fcount, 100, function(tx)
  for r in tx:rows("SELECT written_by, count(*) AS n FROM invoice_lines GROUP BY written_by") do
    counts[r.written_by] = r.n
  end
  tx:complete("counted")
end)
print(string.format("invoice lines written by A: %d, by B: %d", counts.A or 0, counts.B or 0))
print("store holds: " .. stored)
expect((counts.A or 0) == 0 and counts.B == 3, "only B's three lines may exist")
expect(stored == "B 2 1625", "the store must hold B's total")
db:close()
print(ok_all and "ok: the stale worker's rows never appeared" or "FAILED")
os.exit(ok_all and 0 or 1)
