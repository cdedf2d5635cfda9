#!/bin/sh
# bench/syscalls.sh: the system calls one operation costs, counted with
# strace -c, where they explain a benchmark's ratio (docs/sqlite-backend.md,
# "System calls per operation").  Not part of scripts/test.
#   bench/syscalls.sh [BUILD_DIR]      (default build; needs strace, python3)
# Prints, per cycle (enqueue + claim + complete, three transactions):
#   - fdatasync calls of the path functions and of the seed's Python sketch
#     (bench/seed_sketch.py, a connection per call, rollback journal), both
#     at synchronous FULL: the sketch's journal costs it several syncs per
#     transaction, WAL one;
#   - pwrite calls at synchronous NORMAL of the bench's floor (the
#     contract's statements alone) and of the C API (with the job queue):
#     each WAL frame is two writes.
set -eu
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
n=200
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
count() {   # count SYSCALL FILE: calls of SYSCALL in an strace -c summary
  awk -v s="$1" '$NF == s { print ($4 ~ /^[0-9]+$/) ? $4 : $5 }' "$2"
}
per() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

python3 bench/seed_sketch.py init "$tmp/sketch.db"
strace -f -c -o "$tmp/sketch.st" python3 bench/seed_sketch.py cycle "$tmp/sketch.db" s "$n" >/dev/null
cat > "$tmp/path.lua" <<LUA
package.cpath = "$build/?.so;" .. package.cpath
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
local lease = require("lease")
local p = "$tmp/path.db"
lease.init_db(p)
for i = 1, $n do
  local id = "p" .. i
  lease.enqueue(p, id)
  local f = lease.claim(p, id, "o", 1, 1e9)
  assert(lease.complete(p, id, "o", f, 2, "r"))
end
LUA
strace -f -c -o "$tmp/path.st" lua5.4 "$tmp/path.lua"
for api in floor capi; do
  cat > "$tmp/$api.lua" <<LUA
package.cpath = "$build/?.so;" .. package.cpath
local h = require("lease_bench").$api("$tmp/$api.db", "normal")
h:cycle("c", $n)
h:close()
LUA
  strace -f -c -o "$tmp/$api.st" lua5.4 "$tmp/$api.lua"
done
echo "| per cycle (3 transactions), $n cycles | calls |"
echo "|---|---:|"
echo "| fdatasync, seed sketch in Python (FULL, rollback journal) | $(per "$(count fdatasync "$tmp/sketch.st")" $n) |"
echo "| fdatasync, lease path functions (FULL, WAL) | $(per "$(count fdatasync "$tmp/path.st")" $n) |"
echo "| pwrite64, floor: the contract's statements (NORMAL, WAL) | $(per "$(count pwrite64 "$tmp/floor.st")" $n) |"
echo "| pwrite64, C API with the job queue (NORMAL, WAL) | $(per "$(count pwrite64 "$tmp/capi.st")" $n) |"
