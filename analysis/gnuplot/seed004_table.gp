# seed004_table.gp: seed 004's table as a chart, one column of bars per stack, sorted by p99 (the article's
# order). Left: p50 (light) and p99 (full) latency, log scale; right: requests per second.
# Data (file_1): one block, a row per stack (a row per launch): x label p50_ms p99_ms rps valid repetition cell_id,
# then each figure's point mean and 95 % interval over launches (<figure>_mean _lo _hi): black bars.
# Parameters: common.gp, and nstacks, label_1..label_N, colors_1 (one word per row).
load 'common.gp'
set multiplot layout 1,2 title title font ',14' margins 0.17,0.98,0.30,0.90 spacing 0.16,0.12
f = file_1
w = 0.36
set style fill solid 0.9 border lc rgb '#333333'
set offsets 0, 0, 0, 0
set xrange [0.4:nstacks + 0.6]
set xtics () rotate by 35 right font ',9'
do for [i=1:nstacks] { set xtics add (value(sprintf('label_%d', i)) i) }
rowcolor(i) = word(colors_1, i)
at_row(i) = ($1 == i ? 1 : NaN)

set ylabel 'latency (ms, log scale): p50 light, p99 full'
if (nflagged == 0 && ikey eq 'one launch a point: no interval') { unset key }
set logscale y 10
set format y '%g'
if (pvalues(1) == 0) { @NO_VALUES }
plot for [i=1:nstacks] f index 0 using ($1-w/2):(at_row(i)*column('p50_ms')):(w*0.95) with boxes \
         fs transparent solid 0.35 lc rgb rowcolor(i) notitle, \
     for [i=1:nstacks] f index 0 using ($1+w/2):(at_row(i)*column('p99_ms')):(w*0.95) with boxes \
         lc rgb rowcolor(i) notitle, \
     f index 0 using ($1+w/2):(column('p99_ms')*1.15):(sig2(column('p99_ms'))) with labels \
         font ',9' notitle, \
     f index 0 using ($1-w/2):'p50_ms_mean':'p50_ms_lo':'p50_ms_hi' with yerrorbars ps 0 lw 1.5 lc rgb 'black' \
         notitle, \
     f index 0 using ($1+w/2):'p99_ms_mean':'p99_ms_lo':'p99_ms_hi' with yerrorbars ps 0 lw 1.5 lc rgb 'black' \
         notitle, \
     keyentry with yerrorbars ps 0 lw 1.5 lc rgb 'black' title interval_title, \
     f index 0 using ($1+w/2):(flagged_y('p99_ms')) with points pt 6 ps 3 lw 2 lc rgb 'black' notitle, \
     keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
unset label 1001; unset label 1002
@VALUES_RESET

set ylabel 'requests per second (req/s)'
unset logscale y
set yrange [0:*]
unset key
plot for [i=1:nstacks] f index 0 using 1:(at_row(i)*column('rps')):(w*1.6) with boxes lc rgb rowcolor(i) notitle, \
     f index 0 using 1:'rps_mean':'rps_lo':'rps_hi' with yerrorbars ps 0 lw 1.5 lc rgb 'black' notitle, \
     f index 0 using 1:(column('rps')):(sig2(column('rps'))) with labels offset 0,0.7 font ',9' notitle
unset multiplot
