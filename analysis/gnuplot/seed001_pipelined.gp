# seed001_pipelined.gp: seed 001's pipelined hello world, one bar per cell. Left: responses per second.
# Right: the mean latency of a pipelined batch by Little's law (C x depth / rps) and wrk's max latency.
# Data (file_1): one block, a row per cell: x label rps batch_latency_mean_ms wrk_max_ms cpu_percent valid
# repetition cell_id, then each figure's point mean and 95 % interval over launches (<figure>_mean _lo _hi):
# black bars. Parameters: common.gp, and ncells, label_1..label_N, lat_lo and lat_hi (the latency
# axis's range, from the data). A flagged cell (valid = 0) gets a
# large hollow circle on its bar.
load 'common.gp'
set multiplot layout 1,2 title title font ',14' @MARGINS
f = file_1
set style fill solid 0.85 border lc rgb '#333333'
set offsets 0, 0, 0, 0
set xrange [0.4:ncells + 0.6]
set xtics () font ',10'
do for [i=1:ncells] { set xtics add (value(sprintf('label_%d', i)) i) }
set ylabel 'responses per second (req/s)'
set yrange [0:*]
set boxwidth 0.5
set offsets 0, 0, graph 0.12, 0
if (nflagged == 0 && ikey eq 'one launch a point: no interval') { unset key }
if (pvalues(1) == 0) { @NO_VALUES }
plot f index 0 using 1:(column('rps')) with boxes lc rgb '#1f78b4' notitle, \
     '' index 0 using 1:'rps_mean':'rps_lo':'rps_hi' with yerrorbars ps 0 lw 1.5 lc rgb 'black' notitle, \
     keyentry with yerrorbars ps 0 lw 1.5 lc rgb 'black' title interval_title, \
     '' index 0 using 1:(flagged_y('rps')) with points pt 6 ps 3 lw 2 lc rgb 'black' notitle, \
     keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title, \
     '' index 0 using 1:(column('rps')):(sig2u(column('rps'), ' req/s')) with labels offset 0,2 font ',9' notitle, \
     '' index 0 using 1:(column('rps')):('server CPU '.sig2u(column('cpu_percent'), '%')) with labels offset 0,1 \
         font ',9' tc rgb '#444444' notitle
unset label 1001
unset label 1002

w = 0.3
set ylabel 'latency (ms, log scale)'
set logscale y 10
set yrange [lat_lo:lat_hi]
set offsets 0, 0, 0, 0
set key top left
plot f index 0 using ($1-w/2):(column('batch_latency_mean_ms')):($1-w):($1):(lat_lo):(column('batch_latency_mean_ms')) \
         with boxxyerror lc rgb '#1b9e77' title "batch mean, Little's law: C x depth / rps", \
     '' index 0 using ($1+w/2):(column('wrk_max_ms')):($1):($1+w):(lat_lo):(column('wrk_max_ms')) \
         with boxxyerror lc rgb '#7570b3' title "wrk's max", \
     '' index 0 using ($1-w/2):'batch_latency_mean_ms_mean':'batch_latency_mean_ms_lo':'batch_latency_mean_ms_hi' \
         with yerrorbars ps 0 lw 1.5 lc rgb 'black' notitle, \
     '' index 0 using ($1+w/2):'wrk_max_ms_mean':'wrk_max_ms_lo':'wrk_max_ms_hi' with yerrorbars ps 0 lw 1.5 \
         lc rgb 'black' notitle, \
     '' index 0 using ($1-w/2):(column('batch_latency_mean_ms')*1.2):(sig2(column('batch_latency_mean_ms'))) with labels font ',9' notitle, \
     '' index 0 using ($1+w/2):(column('wrk_max_ms')*1.2):(sig2(column('wrk_max_ms'))) with labels font ',9' notitle
unset multiplot
