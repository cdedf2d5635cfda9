#!/bin/sh
# bench/idle_cpu.sh: the CPU an idle `forever` pool uses.
#   bench/idle_cpu.sh [HOST [DB [SECONDS [WORKERS]]]]
# Starts a forever pool of WORKERS (default 4) workers with the default
# options on DB (default a new file under /tmp) with HOST (default
# build/lease), lets it settle 2 s, then reads its user and system CPU time
# from /proc/<pid>/stat over SECONDS (default 10) seconds of idling, stops
# it with SIGTERM, and prints:
#   RESULT seconds=<s> cpu_ms=<ms> cpu_percent=<% of one core>
set -eu
host=${1:-build/lease}
db=${2:-/tmp/lease-idle-$$.db}
secs=${3:-10}
workers=${4:-4}
case "$db" in postgres*|*=*) ;; *) rm -f "$db" "$db-wal" "$db-shm" ;; esac
"$host" -e "require('lease.pool').run{ db = '$db', forever = true, workers = $workers,
  handler = function() end }" >/dev/null 2>&1 &
pid=$!
ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
sleep 2
a=$(ticks)
sleep "$secs"
b=$(ticks)
kill -TERM "$pid"
wait "$pid" || true
hz=$(getconf CLK_TCK)
awk -v a="$a" -v b="$b" -v hz="$hz" -v s="$secs" 'BEGIN {
  ms = (b - a) * 1000 / hz
  printf "RESULT seconds=%d cpu_ms=%d cpu_percent=%.2f\n", s, ms, ms / (s * 10) }'
case "$db" in postgres*|*=*) ;; *) rm -f "$db" "$db-wal" "$db-shm" ;; esac
