# bench/plot.gp: the two plots of docs/benchmarks.md from a benchmark run's data files.
#   gnuplot -e "datadir='build/bench-out'; outdir='docs'" bench/plot.gp
# Reads datadir/threads.dat and datadir/claim_next.dat (written by
# bench/bench.lua --out datadir); writes outdir/bench-threads.svg and
# outdir/bench-claim-next.svg.
if (!exists("datadir")) datadir = "build/bench-out"
if (!exists("outdir")) outdir = "docs"

set terminal svg size 760,520 dynamic font "sans,12" background "white"
set key below box
set grid ytics lc rgb "#dddddd"
set border 3
set tics nomirror

# --- thread scaling -----------------------------------------------------
set output outdir . "/bench-threads.svg"
set title "N threads on one file: aggregate cycles/s against 1 thread"
set xlabel "threads (one handle each; 2-core machine)"
set ylabel "aggregate throughput, x 1 thread"
set logscale x 2
set xrange [0.8:10]
set yrange [0:1.6]
set xtics (1, 2, 4, 8)
plot datadir . "/threads.dat" using 1:2 with linespoints lw 2 pt 7 title "C API, synchronous=FULL", \
     ""                       using 1:3 with linespoints lw 2 pt 5 title "C API, synchronous=NORMAL", \
     ""                       using 1:8 with linespoints lw 2 pt 9 title "Lua threads, FULL", \
     ""                       using 1:9 with linespoints lw 2 pt 11 title "Lua threads, NORMAL", \
     ""                       using 1:4 with linespoints lw 1 dt 2 pt 6 title "floor (SQLite's busy handler), FULL", \
     ""                       using 1:5 with linespoints lw 1 dt 2 pt 4 title "floor (SQLite's busy handler), NORMAL", \
     0.9 with lines lc rgb "#aa0000" dt 3 title "target 0.9x"

# --- claim_next against table size ----------------------------------------
unset logscale
set output outdir . "/bench-claim-next.svg"
set title 'claim\_next: cost per call against pending jobs in the table (log scales)'
set xlabel "pending jobs in the table"
set ylabel 'microseconds per claim\_next (FULL adds one fsync)'
set logscale x 10
set logscale y 10
set xrange [500:2000000]
set yrange [5:1000]
set xtics auto
set format x "10^{%L}"
plot datadir . "/claim_next.dat" using 1:2 with linespoints lw 1 dt 2 pt 6 title "floor, FULL", \
     ""                          using 1:3 with linespoints lw 2 pt 7 title "C API, FULL", \
     ""                          using 1:4 with linespoints lw 2 pt 9 title "Lua handle, FULL", \
     ""                          using 1:5 with linespoints lw 1 dt 2 pt 4 title "floor, NORMAL", \
     ""                          using 1:6 with linespoints lw 2 pt 5 title "C API, NORMAL", \
     ""                          using 1:7 with linespoints lw 2 pt 11 title "Lua handle, NORMAL"
