-- specs/fuzz/seeds.lua: write the seed corpus of fuzz_ops (programs in the
-- byte format that specs/fuzz/fuzz_ops.c reads) into DIR.
--   lua5.4 specs/fuzz/seeds.lua specs/fuzz/corpus/fuzz_ops
-- Each seed is one scenario of the contract, so that fuzzing starts from
-- every operation reached with valid arguments; the first one also serves
-- the harness's self-check (a claim at the boundary now == until).
local dir = assert(arg[1], "usage: lua5.4 specs/fuzz/seeds.lua DIR")

local OP = { enqueue = 0, state = 1, claim = 2, renew = 4, complete = 5, release = 6,
  claim_next = 7, claim_many = 8, complete_many = 9, enqueue_many = 10, count = 11,
  list = 12, tick = 14, complete_claim_next = 15 }
-- the harness's pool of strings, by name
local POOL = { a = 0, b = 1, ["a\0"] = 2, ["a\0b"] = 3, ["\0"] = 4, ["job-1"] = 5,
  ["x\xff\xfe"] = 6, A = 7, w1 = 8, w2 = 9, ["w\0"] = 10, ["w1 "] = 11 }

local function pool(s)          -- a pooled string, exact length
  local k = assert(POOL[s], s)
  return { (k // 2 + 1) + 128 * (k % 2) }
end
local function bytes(s)         -- inline bytes (at most 12)
  local t = { 8, #s }
  for i = 1, #s do t[#t + 1] = s:byte(i) end
  return t
end
local CURRENT = { 11 }          -- the job's owner, or an existing id
local NULL = { 0 }
local function nts(s) local t = pool(s); t[1] = t[1] | 0xF0; t[2] = 0; return t end
local function huge(s) local t = pool(s); t[1] = t[1] | 0xF0; t[2] = 2; return t end
local function now(d) return { 10, (math.floor(d * 4)) & 0xff } end  -- clock + d
local NAN_TIME = { 0 }
local function ttl(k) return { 10 + 32 * (k - 1) } end                -- k in 1..8
local FENCE = { 7 }             -- the job's own fence
local STALE = { 0 }             -- one below it

local function program(...)
  local out = {}
  for _, step in ipairs({ ... }) do
    for _, part in ipairs(step) do
      if type(part) == "table" then
        for _, b in ipairs(part) do out[#out + 1] = string.char(b) end
      else
        out[#out + 1] = string.char(part)
      end
    end
  end
  return table.concat(out)
end

local seeds = {
  -- claimable again at now == until (the self-check's case)
  boundary = program(
    { OP.enqueue, pool("a") },
    { OP.claim, pool("a"), pool("w1"), now(0), ttl(1) },
    { OP.tick, 2 },
    { OP.count, now(0) },
    { OP.list, 2, now(0), 0, 3 },   -- which = 2 - 1: LEASE_LIST_READY
    { OP.claim, pool("a"), pool("w2"), now(0), ttl(1) },
    { OP.state, pool("a") }),
  -- claim, renew, complete; a late complete and a stale release refused
  lifecycle = program(
    { OP.enqueue, pool("a") }, { OP.enqueue, pool("b") }, { OP.enqueue, pool("a") },
    { OP.claim, pool("a"), pool("w1"), now(0), ttl(4) },
    { OP.renew, pool("a"), CURRENT, FENCE, now(1), ttl(4) },
    { OP.complete, pool("a"), CURRENT, STALE, now(1), bytes("r") },
    { OP.complete, pool("a"), CURRENT, FENCE, now(2), bytes("r\0s") },
    { OP.complete, pool("a"), CURRENT, FENCE, now(2), bytes("x") },
    { OP.claim, pool("b"), pool("w2"), now(0), ttl(1) },
    { OP.release, pool("b"), pool("w1"), FENCE },
    { OP.release, pool("b"), CURRENT, FENCE },
    { OP.claim, pool("b"), pool("w1"), now(0), ttl(1) },
    { OP.tick, 6 },
    { OP.renew, pool("b"), CURRENT, FENCE, now(0), ttl(1) },
    { OP.count, now(0) },
    { OP.list, 1, now(0), 0, 3 },   -- LEASE_LIST_ALL
    { OP.list, 3, now(0), 0, 3 }),  -- LEASE_LIST_HELD
  -- the batch operations
  batches = program(
    { OP.enqueue_many, 3, pool("a"), pool("a\0"), pool("a") },
    { OP.claim_many, pool("a"), 3, pool("w1"), pool("w2"), pool("w1 "), now(0), ttl(2) },
    { OP.claim_many, pool("a\0"), 2, pool("w1"), pool("w2"), now(0), ttl(2) },
    { OP.claim_next, pool("w2"), now(0), ttl(3), 4 },
    { OP.enqueue_many, 2, pool("job-1"), pool("b") },
    { OP.claim_next, pool("w\0"), now(0), ttl(3), 4 },
    { OP.complete_many, pool("w\0"), now(1), 2, pool("job-1"), FENCE, bytes("ok"),
      pool("b"), FENCE, NULL },
    { OP.count, now(1) }),
  -- complete_claim_next: stored and the next claimed; refused and still claiming
  fused = program(
    { OP.enqueue, pool("a") }, { OP.enqueue, pool("b") }, { OP.enqueue, pool("job-1") },
    { OP.claim_next, pool("w1"), now(0), ttl(2), 3 },
    { OP.complete_claim_next, pool("a"), CURRENT, FENCE, now(1), bytes("r"), ttl(2), 3 },
    { OP.complete_claim_next, pool("a"), pool("w1"), STALE, now(1), NULL, ttl(2), 4 },
    { OP.complete_claim_next, pool("b"), CURRENT, FENCE, now(1), NULL, { 3 }, 3 },
    { OP.count, now(1) }),
  -- refused arguments: NULL, NUL-terminated, too long, NaN
  misuse = program(
    { OP.enqueue, NULL }, { OP.enqueue, nts("a\0b") }, { OP.enqueue, huge("a") },
    { OP.claim, pool("a"), huge("w1"), now(0), ttl(1) },
    { OP.claim, pool("a"), pool("w1"), NAN_TIME, ttl(1) },
    { OP.claim, pool("a"), pool("w1"), now(0), { 3 } },
    { OP.claim_many, pool("a"), 2, pool("w1"), nts("\0"), now(0), ttl(1) },
    { OP.claim_next, pool("w1"), now(0), ttl(1), 0 },
    { OP.list, 6, now(0), 0, 3 },   -- 5: no such kind
    { OP.count, NAN_TIME }),
}

for name, bytes_ in pairs(seeds) do
  local f = assert(io.open(dir .. "/" .. name, "wb"))
  f:write(bytes_)
  f:close()
end
