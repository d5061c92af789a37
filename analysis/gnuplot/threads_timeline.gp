# threads_timeline.gp: server thread count over time in each server's highest-concurrency cell, one panel per
# delay (seed 002's VisualVM picture). t = 0 is the start of the measured window; warm-up is before it.
# Data (file_N): a block per series with columns t_s threads pool_busy pool_current concurrency valid phase
# cell_id. Thin lines: Tomcat's connector pool busy threads (when probed). Parameters: see common.gp.
load 'common.gp'
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set xlabel 'time from start of measured window (s)'
set yrange [0:*]
set arrow 1 from 0, graph 0 to 0, graph 1 nohead dt 2 lc rgb '#999999'
do for [p=1:panels] {
    f = pfile(p)
    mt = pparam('maxthreads', p)
    set title ptitle(p) font ',12'
    if (pkey(p)) { set key on } else { set key off }
    if (first_column(p)) { set ylabel 'threads (count)' } else { unset ylabel }
    if (pvalues(p) == 0) { @NO_VALUES }
    plot for [i=1:pn(p)] f index i-1 using 1:'threads' with lines lw 2.5 lc rgb pcolor(p,i) dt pdash(p,i) \
             title columnheader(1), \
         for [i=1:pn(p)] f index i-1 using 1:'pool_busy' with lines lw 1 lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 every 8 using 1:(flagged_y('threads')) with points pt 6 ps 1.8 lw 2 \
             lc rgb pcolor(p,i) notitle, \
         for [k=1:words(mt)] nth(mt, k) with lines dt 3 lw 2 lc rgb '#777777' notitle, \
         keyentry with lines lw 1 lc rgb '#555555' title 'thin: Tomcat pool busy threads', \
         keyentry with lines dt 3 lw 2 lc rgb '#777777' title (words(mt) > 0 ? 'Tomcat maxThreads = '.mt : ''), \
         keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
    unset label 1001; unset label 1002
    @VALUES_RESET; set yrange [0:*]
}
unset multiplot
