# static_rps.gp: static-file responses per second vs concurrent clients, a line per server (seed 002's first
# figure). Data (file_1): a block per series with columns concurrency rps rps_steady bytes_per_s valid
# repetition cell_id, then each figure's point mean and 95 % interval (<figure>_mean _lo _hi): the line is the mean
# of repetitions, the bar its interval; points are cells, hollow ones flagged.
# Parameters: see common.gp.
load 'common.gp'
set multiplot layout 1,1 title title font ',14' @MARGINS
set logscale x 10
set xlabel 'concurrent clients (log scale)'
set ylabel 'responses per second (req/s: requests / measured window)'
set yrange [0:*]
p = 1
f = pfile(p)
if (pvalues(p) == 0) { @NO_VALUES }
plot for [i=1:pn(p)] f index i-1 using 1:'rps_mean' smooth unique with lines lw 2.5 lc rgb pcolor(p,i) dt pdash(p,i) \
         title columnheader(1), \
     for [i=1:pn(p)] f index i-1 using 1:'rps_mean':'rps_lo':'rps_hi' with yerrorbars ps 0 lw 1.5 \
         lc rgb pcolor(p,i) notitle, \
     for [i=1:pn(p)] f index i-1 using 1:(valid_y('rps')) with points pt 7 ps 1.3 lc rgb pcolor(p,i) notitle, \
     for [i=1:pn(p)] f index i-1 using 1:(flagged_y('rps')) with points pt 6 ps 2.2 lw 2 lc rgb pcolor(p,i) notitle, \
     keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
     keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
unset multiplot
