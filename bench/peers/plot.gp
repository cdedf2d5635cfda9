# bench/peers/plot.gp: the peer comparison's bar chart.
#   gnuplot -e "datafile='peers.dat'; outfile='docs/peers.svg'; cols='2 3 4'; subtitle='...'" bench/peers/plot.gp
# datafile (written by bench/peers/run.lua): one line per system,
#   "name" W1 W2 W3 enqueue      (jobs/s; NaN where the system has no such call)
# cols: the data columns to draw (2 = W1, 3 = W2, 4 = W3).
if (!exists("subtitle")) subtitle = ""
if (!exists("cols")) cols = "2 3 4"

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
label(c) = c == 2 ? "W1: 1 worker" : c == 3 ? "W2: 4 workers" : "W3: batches of 100"
color(c) = c == 2 ? "#4477aa" : c == 3 ? "#ee6677" : "#228833"
plot for [c in cols] datafile using (column(int(c))):xtic(1) title label(int(c)) lc rgb color(int(c))
