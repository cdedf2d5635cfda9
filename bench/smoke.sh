#!/bin/sh
# bench/smoke.sh LUA BUILD_DIR: the CI smoke run of the benchmark (ctest
# bench_smoke).  Runs bench/bench.lua on tiny sizes (seconds), checks that
# it printed its tables, and draws the plots from its data into the build
# tree, so the benchmark keeps building and running.  Asserts no timing.
set -eu
cd "$(dirname "$0")/.."
lua=$1
build=$2
out=$build/tmp/bench-smoke
rm -rf "$out"
mkdir -p "$out"
fail() { echo "bench_smoke: $*" >&2; exit 1; }
status=0
"$lua" bench/bench.lua --smoke --build "$build" --dir "$out/db" --out "$out" >"$out/log" 2>&1 || status=$?
cat "$out/log"
[ "$status" -eq 0 ] || fail "bench.lua exited $status"
for row in '| cycle | full | Lua handle |' '| cycle | normal | LuaSQL (one connection) |' \
           '| renew | full | floor (raw SQLite, C) |' '| end to end | normal | Lua handle |' \
           '| 2 | normal | Lua handle (lease.thread) |' '| 4 | full | db:claim_many (Lua) |' \
           '| each further handle' '| target | measured |' 'bench: done'; do
  grep -qF -- "$row" "$out/log" || fail "the output has no line with: $row"
done
# a concurrency limit's claim against a plain one (bench/limit_claim.lua)
limit_claim() {
  grep -qF -- 'RESULT backlog=200 claims=5 ' "$1" || fail "limit_claim.lua printed no RESULT line ($1)"
}
host=no
if [ -x "$build/lease" ]; then
  host=yes
  status=0
  "$build/lease" bench/limit_claim.lua "$out/limit.db" 200 5 1 >"$out/limit.log" 2>&1 || status=$?
  cat "$out/limit.log"
  [ "$status" -eq 0 ] || fail "bench/limit_claim.lua exited $status"
  limit_claim "$out/limit.log"
  # where an idle waiter's time goes (bench/latency_parts.lua), five jobs
  status=0
  "$build/lease" bench/latency_parts.lua "$out/parts.db" 5 0.01 >"$out/parts.log" 2>&1 || status=$?
  cat "$out/parts.log"
  [ "$status" -eq 0 ] || fail "bench/latency_parts.lua exited $status"
  for part in enqueue enqueued_to_woken woken_to_claimed server_now_busy server_now_idle; do
    grep -q "^PART $part p50_ms=" "$out/parts.log" || fail "latency_parts.lua printed no $part line"
  done
else
  echo "bench_smoke: no $build/lease (the host is not built): bench/limit_claim.lua not run"
fi
# SQLite and PostgreSQL side by side, when the build has the PostgreSQL backend
if grep -q '^LIBPQ_FOUND:INTERNAL=1' "$build/CMakeCache.txt" 2>/dev/null; then
  if [ "$host" = yes ]; then
    status=0
    scripts/pg-cluster run auto -- sh -c "\"$build/lease\" bench/limit_claim.lua \"\$LEASE_TEST_PG\" 200 5 1" \
      >"$out/limit-pg.log" 2>&1 || status=$?
    cat "$out/limit-pg.log"
    [ "$status" -eq 0 ] || fail "bench/limit_claim.lua on PostgreSQL exited $status"
    limit_claim "$out/limit-pg.log"
  fi
  status=0
  scripts/pg-cluster run auto -- "$lua" bench/engines.lua --build "$build" --reps 1 --n 40 \
    >"$out/engines.log" 2>&1 || status=$?
  cat "$out/engines.log"
  [ "$status" -eq 0 ] || fail "bench/engines.lua exited $status"
  for row in '| cycle (enqueue+claim+complete), cycles/s |' '| claim_next(1)+complete, 4 threads, jobs/s |' \
             'PostgreSQL sync on' 'engines: done'; do
    grep -qF -- "$row" "$out/engines.log" || fail "engines.lua printed no line with: $row"
  done
fi
if command -v gnuplot >/dev/null 2>&1; then
  gnuplot -e "datadir='$out'; outdir='$out'" bench/plot.gp
  [ -s "$out/bench-threads.svg" ] && [ -s "$out/bench-claim-next.svg" ] || fail "no plots drawn"
fi
echo "bench_smoke: ok"
