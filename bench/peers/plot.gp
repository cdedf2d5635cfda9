# bench/peers/plot.gp: the peer comparison's bar chart.
#   gnuplot -e "datafile='peers.dat'; outfile='docs/peers.svg'; subtitle='...'" bench/peers/plot.gp
# datafile (written by bench/peers/run.lua): one line per system,
#   "name" W1 W2 W3 enqueue      (jobs/s; NaN where the system has no such call)
if (!exists("subtitle")) subtitle = ""

set terminal svg size 900,520 dynamic font "sans,12" background "white"
set output outfile
set title "No-op jobs processed per second (log scale)\n{/*0.8 " . subtitle . "}"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 10
set yrange [10:*]
set format y "%.0s%c"
set ylabel "jobs/s"
set grid ytics lc rgb "#dddddd"
set key top right box
set border 3
set tics nomirror
set xtics rotate by -30 noenhanced
plot datafile using 2:xtic(1) title "W1: 1 worker" lc rgb "#4477aa", \
     ""       using 3 title "W2: 4 workers" lc rgb "#ee6677", \
     ""       using 4 title "W3: batches of 100" lc rgb "#228833"
