# gc_pauses.gp: Tomcat's latency p99 (left) beside the GC pauses JFR recorded in the same windows (right),
# against concurrent clients; a series per setting.
# Data: file_1 (a block per series: concurrency p99_ms gc_pause_max_ms gc_pause_total_ms gc_pause_count
# gc_pause_longest_ms (the longest of the point's launches) valid repetition cell_id, then each figure's point
# mean and 95 % interval over launches, <figure>_mean _lo _hi: the p99 bars). Parameters: see common.gp.
load 'common.gp'
set multiplot layout 1,2 title title font ',14' @MARGINS
set logscale x 10
set xlabel 'concurrent clients (log scale)'
p = 1
f = pfile(p)

set title 'latency p99' font ',12'
set ylabel 'ms'
set yrange [0:*]
plot for [i=1:pn(p)] f index i-1 using 1:'p99_ms_mean' smooth unique with lines lw 2.5 lc rgb pcolor(p,i) \
         dt pdash(p,i) title columnheader(1), \
     for [i=1:pn(p)] f index i-1 using 1:'p99_ms_mean':'p99_ms_lo':'p99_ms_hi' with yerrorbars ps 0 lw 1.5 \
         lc rgb pcolor(p,i) notitle, \
     keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
     for [i=1:pn(p)] f index i-1 using 1:(valid_y('p99_ms')) with points pt 7 ps 1.1 lc rgb pcolor(p,i) notitle, \
     for [i=1:pn(p)] f index i-1 using 1:(flagged_y('p99_ms')) with points pt 6 ps 2 lw 2 lc rgb pcolor(p,i) \
         notitle
unset label 1001; unset label 1002

set title 'GC pauses in the window (JFR)' font ',12'
set ylabel 'ms'
plot for [i=1:pn(p)] f index i-1 using 1:'gc_pause_longest_ms' smooth unique with lines lw 2.5 \
         lc rgb pcolor(p,i) title columnheader(1), \
     for [i=1:pn(p)] f index i-1 using 1:'gc_pause_total_ms_mean' smooth unique with lines lw 1.5 dt 2 \
         lc rgb pcolor(p,i) notitle, \
     for [i=1:pn(p)] f index i-1 using 1:(valid_y('gc_pause_max_ms')) with points pt 7 ps 1.1 lc rgb pcolor(p,i) \
         notitle, \
     for [i=1:pn(p)] f index i-1 using 1:(flagged_y('gc_pause_max_ms')) with points pt 6 ps 2 lw 2 lc rgb pcolor(p,i) \
         notitle, \
     keyentry with linespoints pt 7 lw 2.5 lc rgb '#555555' title 'points: each launch''s longest pause; solid: the longest of them', \
     keyentry with lines dt 2 lw 1.5 lc rgb '#555555' title 'dashed: all pauses added up (mean of launches)'
unset multiplot
