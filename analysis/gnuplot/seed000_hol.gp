# seed000_hol.gp: seed 000's "A then C" measured: the instant endpoint's latency (p50, p99, max) while
# background connections keep a delay endpoint busy, one group of bars per cell, log scale.
# Data (file_1): one block, a row per cell: x label p50_ms p99_ms max_ms probes valid repetition cell_id, then each
# figure's point mean and 95 % interval over launches (<figure>_mean _lo _hi): black bars on p50 and p99.
# Parameters: common.gp, and ncells, label_1..label_N. A flagged cell (valid = 0) gets a large hollow circle
# on its p50 bar.
load 'common.gp'
set multiplot layout 1,1 title title font ',14' @MARGINS
f = file_1
w = 0.26
set style fill solid 0.85 border lc rgb '#333333'
set logscale y 10
set offsets 0, 0, 0, 0
set xrange [0.4:ncells + 0.6]
stats f index 0 using (column('max_ms')) nooutput
set yrange [0.1:(STATS_max > 0 ? STATS_max * 40 : 1000)]     # room above the tallest bar for its labels
set xtics () font ',10'
do for [i=1:ncells] { set xtics add (value(sprintf('label_%d', i)) i) }
set ylabel 'probe latency (ms, log scale)' offset 1,0
set format y '%g'
if (pvalues(1) == 0) { @NO_VALUES }
set key top right
plot f index 0 using ($1-w):(column('p50_ms')):($1-1.5*w):($1-0.5*w):(0.1):(column('p50_ms')) \
         with boxxyerror lc rgb '#1b9e77' title 'p50', \
     '' index 0 using ($1):(column('p99_ms')):($1-0.5*w):($1+0.5*w):(0.1):(column('p99_ms')) \
         with boxxyerror lc rgb '#d95f02' title 'p99', \
     '' index 0 using ($1+w):(column('max_ms')):($1+0.5*w):($1+1.5*w):(0.1):(column('max_ms')) \
         with boxxyerror lc rgb '#7570b3' title 'max', \
     '' index 0 using ($1-w):'p50_ms_mean':'p50_ms_lo':'p50_ms_hi' with yerrorbars ps 0 lw 1.5 lc rgb 'black' \
         notitle, \
     '' index 0 using ($1):'p99_ms_mean':'p99_ms_lo':'p99_ms_hi' with yerrorbars ps 0 lw 1.5 lc rgb 'black' notitle, \
     keyentry with yerrorbars ps 0 lw 1.5 lc rgb 'black' title interval_title, \
     '' index 0 using ($1-w):(flagged_y('p50_ms')) with points pt 6 ps 3 lw 2 lc rgb 'black' notitle, \
     keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title, \
     '' index 0 using ($1-w):(column('p50_ms')*1.2):(sig2(column('p50_ms'))) with labels font ',9' notitle, \
     '' index 0 using ($1):(column('p99_ms')*1.2):(sig2(column('p99_ms'))) with labels font ',9' notitle, \
     '' index 0 using ($1+w):(column('max_ms')*1.2):(sig2(column('max_ms'))) with labels font ',9' notitle, \
     '' index 0 using ($1):(column('max_ms')*6):(sprintf('%d probes', column('probes'))) with labels font ',9' tc rgb '#444444' notitle
unset multiplot
