# seed004_workers.gp: requests per second against worker processes, one line per worker sweep; the best step
# of each sweep as a large circle. Data (file_1): a block per sweep: processes rps best valid repetition cell_id
# rps_mean rps_lo rps_hi (the step's mean and 95 % interval over launches: the line joins the means, the bar).
# Parameters: common.gp (nseries_1, colors_1).
load 'common.gp'
f = file_1
set title title font ',14'
set xlabel 'worker processes (count)'
set ylabel 'requests per second (req/s)'
set xtics 1
set autoscale xfix                   # the x axis spans the steps run (plus the offsets), not the next tics
set yrange [0:*]
set offsets 0.3, 0.3, graph 0.28, 0
best_y(col) = column('best') > 0 ? column(col) : NaN
if (pvalues(1) == 0) { @NO_VALUES }
plot for [i=1:nseries_1] f index i-1 using 1:'rps_mean' smooth unique with lines lw 2.5 lc rgb pcolor(1,i) \
         title columnheader(1), \
     for [i=1:nseries_1] f index i-1 using 1:'rps' with points pt 7 ps 1.1 lc rgb pcolor(1,i) notitle, \
     for [i=1:nseries_1] f index i-1 using 1:'rps_mean':'rps_lo':'rps_hi' with yerrorbars ps 0 lw 1.5 \
         lc rgb pcolor(1,i) notitle, \
     for [i=1:nseries_1] f index i-1 using 1:(best_y('rps')) with points pt 6 ps 3.5 lw 2.5 \
         lc rgb pcolor(1,i) notitle, \
     for [i=1:nseries_1] f index i-1 using 1:(flagged_y('rps')) with points pt 6 ps 2 lw 1 lc rgb 'black' notitle, \
     keyentry with points pt 6 ps 3 lw 2.5 lc rgb '#555555' title 'large circle: the best step', \
     keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
     keyentry with points pt 6 ps 2 lw 1 lc rgb 'black' title flagged_title
