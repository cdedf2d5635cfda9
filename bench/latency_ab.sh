#!/bin/sh
# bench/latency_ab.sh: an idle pool's enqueue-to-start latency of two builds,
# run by turns in the same session, with the new build's ratio to the base.
#   bench/latency_ab.sh BASE_HOST NEW_HOST [PRODUCER [ROUNDS [JOBS [DB]]]]
# BASE_HOST, NEW_HOST  the `lease` host of each build (say an older commit's
#                      build/lease, and this tree's)
# PRODUCER             thread (default) or process, as bench/latency.lua takes
# ROUNDS               runs of each build, alternating base and new (default 3)
# JOBS                 jobs per run (default 200; about 8 s a run)
# DB                   a file path (default a new file under /tmp, made afresh
#                      by each run) or a postgresql:// URI
# Each run is bench/latency.lua of this tree with that build's host (the
# process producer runs under the same host).  Prints a line per run, then
#   RESULT base_p50_ms=<ms> new_p50_ms=<ms> p50_ratio=<new/base>
#          base_p99_ms=<ms> new_p99_ms=<ms> p99_ratio=<new/base>
# (medians over the rounds; a ratio above 1 means the new build is slower).
# A routine before each commit that touches waiting or waking: the new
# build's p50 ratio well above 1 on both producers is a regression.
set -eu
[ $# -ge 2 ] || { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
base=$1
new=$2
producer=${3:-thread}
rounds=${4:-3}
jobs=${5:-200}
db=${6:-/tmp/lease-latency-ab-$$.db}
case "$producer" in thread|process) ;; *) echo "latency_ab: PRODUCER must be thread or process" >&2; exit 2 ;; esac
for n in "$rounds" "$jobs"; do
  case "$n" in ''|*[!0-9]*|0) echo "latency_ab: ROUNDS and JOBS must be positive integers" >&2; exit 2 ;; esac
done
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp)
drop_db() { case "$db" in postgres*|*=*) ;; *) rm -f "$db" "$db-wal" "$db-shm" ;; esac; }
trap 'rm -f "$out"; drop_db' EXIT

r=1
while [ "$r" -le "$rounds" ]; do
  for which in base new; do
    if [ "$which" = base ]; then host=$base; else host=$new; fi
    if ! line=$(LEASE_HOST="$host" "$host" "$here/latency.lua" "$db" "$producer" "$jobs" | grep '^RESULT'); then
      echo "latency_ab: round $r of $which ($host) printed no RESULT" >&2
      exit 1
    fi
    echo "round $r $which: $line"
    echo "$which $line" >> "$out"
  done
  r=$((r + 1))
done

awk '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    for (i = 2; i <= NF; i++) {
      split($i, kv, "=")
      if (kv[1] == "p50_ms") { n50[$1]++; p50[$1, n50[$1]] = kv[2] }
      if (kv[1] == "p99_ms") { n99[$1]++; p99[$1, n99[$1]] = kv[2] }
    }
  }
  END {
    if (n50["base"] == 0 || n50["new"] == 0 || n99["base"] == 0 || n99["new"] == 0) {
      print "latency_ab: a run printed no p50_ms or p99_ms" > "/dev/stderr"
      exit 1
    }
    for (w = 1; w <= 2; w++) {
      k = w == 1 ? "base" : "new"
      delete a; for (i = 1; i <= n50[k]; i++) a[i] = p50[k, i]; m50[k] = median(a, n50[k])
      delete a; for (i = 1; i <= n99[k]; i++) a[i] = p99[k, i]; m99[k] = median(a, n99[k])
    }
    if (m50["base"] <= 0 || m99["base"] <= 0) {
      print "latency_ab: a base median of 0 ms gives no ratio" > "/dev/stderr"
      exit 1
    }
    printf "RESULT base_p50_ms=%.2f new_p50_ms=%.2f p50_ratio=%.2f base_p99_ms=%.2f new_p99_ms=%.2f p99_ratio=%.2f\n",
      m50["base"], m50["new"], m50["new"] / m50["base"], m99["base"], m99["new"], m99["new"] / m99["base"]
  }' "$out"
