# maxthreads_cost.gp: what the threads cost, per Tomcat setting at its highest concurrency. Left: peak RSS vs
# peak threads (the slope is a thread's memory); right: server CPU (100 = one core) vs responses per second;
# a flagged cell's point gets a ring.
# Data: file_1, a block per setting with one row: threads_peak rss_peak_mb rps cpu_percent concurrency valid
# cell_id, then each figure's point mean and 95 % interval over launches (<figure>_mean _lo _hi): a cross of
# bars in both figures (NaN with one launch). Parameters: see common.gp.
load 'common.gp'
set multiplot layout 1,2 title title font ',14' @MARGINS
set offsets 0, graph 0.1, graph 0.15, 0
set xrange [0:*]
set yrange [0:*]
p = 1
f = pfile(p)
set xlabel 'threads, peak (count)'
set ylabel 'resident memory, peak (MiB)'
set title 'memory vs threads' font ',12'
set key bottom right
plot for [i=1:pn(p)] f index i-1 using 1:2 with points pt 7 ps 2.2 lc rgb pcolor(p,i) title columnheader(1), \
     for [i=1:pn(p)] f index i-1 using 1:(flagged_y('rss_peak_mb')) with points pt 6 ps 3.6 lw 2 lc rgb pcolor(p,i) \
         notitle, \
     for [i=1:pn(p)] f index i-1 using 'threads_peak_mean':'rss_peak_mb_mean':'threads_peak_lo':'threads_peak_hi':\
         'rss_peak_mb_lo':'rss_peak_mb_hi' with xyerrorbars ps 0 lw 1.5 lc rgb pcolor(p,i) notitle, \
     keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
     keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title, \
     for [i=1:pn(p)] f index i-1 using 1:2:(sig2u($2, ' MiB')) with labels offset 0,1.3 font ',9' notitle
unset label 1001; unset label 1002
set key off
set xlabel 'responses per second (req/s)'
set ylabel 'server CPU (% of one core)'
set title 'CPU vs throughput' font ',12'
plot for [i=1:pn(p)] f index i-1 using 3:4 with points pt 7 ps 2.2 lc rgb pcolor(p,i) notitle, \
     for [i=1:pn(p)] f index i-1 using 3:(flagged_y('cpu_percent')) with points pt 6 ps 3.6 lw 2 lc rgb pcolor(p,i) \
         notitle, \
     for [i=1:pn(p)] f index i-1 using 'rps_mean':'cpu_percent_mean':'rps_lo':'rps_hi':'cpu_percent_lo':\
         'cpu_percent_hi' with xyerrorbars ps 0 lw 1.5 lc rgb pcolor(p,i) notitle, \
     for [i=1:pn(p)] f index i-1 using 3:4:(sig2u($4, '%')) with labels offset 0,1.3 font ',9' notitle
unset multiplot
