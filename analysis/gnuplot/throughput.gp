# throughput.gp: delayed answers per second vs concurrent clients, a line per server setting, one panel per delay,
# log x and y; Little's law beside them: C / delay (dotted grey: every client served at once) and maxThreads /
# delay (dashed grey, one per pool size: the most a pool of that size answers).
# Data (file_N): a block per series with columns concurrency rps valid repetition cell_id, then the point's mean
# and 95 % interval (rps_mean rps_lo rps_hi). Parameters: see common.gp; delay_N (ms), maxthreads_N (the pool
# sizes of the panel's settings, space-separated; empty without one).
load 'common.gp'
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set logscale x 10
set logscale y 10
set format y '%g'
set offsets 0, 0, 0, 0
set xlabel 'concurrent clients (log scale)'
do for [p=1:panels] {
    # the full label on the first column; the others name the unit only (a long one would run into the ticks)
    if (first_column(p)) { set ylabel 'answers per second (req/s, log scale)' } else { set ylabel 'req/s' }
    f = pfile(p)
    d = pparam('delay', p); delay_s = (d eq '') ? 0 : real(d) / 1000.0
    mt = pparam('maxthreads', p)
    set title ptitle(p) font ',12'
    # the key sits bottom right, where rising lines never pass: the y axis then fits the data alone
    if (pkey(p)) { set key on bottom right } else { set key off }
    set autoscale y
    STATS_records = 0; stats f using 'rps' nooutput
    lo = (exists("STATS_records") && STATS_records > 0) ? STATS_min : NaN
    hi = (exists("STATS_records") && STATS_records > 0) ? STATS_max : NaN
    if (lo > 0 && hi >= lo) { set yrange [lo / 4 : hi * 2] }
    if (pvalues(p) == 0) { @NO_VALUES }
    plot (delay_s > 0 ? x / delay_s : NaN) with lines dt 3 lw 2 lc rgb '#777777' title 'C / delay: every client served at once', \
         for [k=1:words(mt)] (delay_s > 0 ? nth(mt, k) / delay_s : NaN) with lines dt 2 lw 1.5 lc rgb '#999999' \
             notitle, \
         for [i=1:pn(p)] f index i-1 using 1:'rps_mean' smooth unique with lines lw 2.5 lc rgb pcolor(p,i) \
             dt pdash(p,i) title columnheader(1), \
         for [i=1:pn(p)] f index i-1 using 1:'rps_mean':'rps_lo':'rps_hi' with yerrorbars ps 0 lw 1.5 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(valid_y('rps')) with points pt 7 ps 1.1 lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(flagged_y('rps')) with points pt 6 ps 2 lw 2 lc rgb pcolor(p,i) \
             notitle, \
         keyentry with lines dt 2 lw 1.5 lc rgb '#999999' title (words(mt) > 0 ? 'maxThreads / delay, maxThreads = '.mt : ''), \
         keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
         keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
    unset label 1001; unset label 1002
    @VALUES_RESET
}
unset multiplot
