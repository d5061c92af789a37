# threads_peak.gp: peak thread count of the server's process tree vs concurrent clients, a line per server, one
# panel per delay; Tomcat's maxThreads as dotted grey lines (maxthreads_N: space-separated values).
# Data (file_N): a block per series with columns concurrency threads_peak threads_mean pool_busy_peak valid
# repetition cell_id, then each figure's point mean and 95 % interval (<figure>_mean _lo _hi).
# Parameters: see common.gp.
load 'common.gp'
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set logscale x 10
set xlabel 'concurrent clients (log scale)'
set yrange [0:*]
do for [p=1:panels] {
    f = pfile(p)
    mt = pparam('maxthreads', p)
    set title ptitle(p) font ',12'
    if (pkey(p)) { set key on } else { set key off }
    if (first_column(p)) { set ylabel 'threads, peak in the measured window (count)' } else { unset ylabel }
    if (pvalues(p) == 0) { @NO_VALUES }
    plot for [i=1:pn(p)] f index i-1 using 1:'threads_peak_mean' smooth unique with lines lw 2.5 lc rgb pcolor(p,i) \
             dt pdash(p,i) title columnheader(1), \
         for [i=1:pn(p)] f index i-1 using 1:'threads_peak_mean':'threads_peak_lo':'threads_peak_hi' with yerrorbars ps 0 lw 1.5 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(valid_y('threads_peak')) with points pt 7 ps 1.2 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(flagged_y('threads_peak')) with points pt 6 ps 2.2 lw 2 \
             lc rgb pcolor(p,i) notitle, \
         for [k=1:words(mt)] nth(mt, k) with lines dt 3 lw 2 lc rgb '#777777' notitle, \
         keyentry with lines dt 3 lw 2 lc rgb '#777777' title (words(mt) > 0 ? 'Tomcat maxThreads = '.mt : ''), \
         keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
         keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
    unset label 1001; unset label 1002
    @VALUES_RESET; set yrange [0:*]
}
unset multiplot
