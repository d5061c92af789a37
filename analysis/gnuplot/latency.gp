# latency.gp: latency p50 (solid) and p99 (dashed) vs concurrent clients, a line per server, one panel per group
# or delay: log y where the panel's values span a factor of 20 or more, linear otherwise (a narrow log axis shows
# one tick); the panel's delay as a dotted line. Data (file_N): a block per series with columns concurrency
# p50_ms p99_ms mean_ms max_ms valid repetition cell_id, then each figure's point mean and 95 % interval
# (<figure>_mean _lo _hi). Parameters: see common.gp; delay_N, the panel's delay in ms (0: none).
load 'common.gp'
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set logscale x 10
set format y '%g'
set offsets 0, 0, 0, 0
set xlabel 'concurrent clients (log scale)'
do for [p=1:panels] {
    f = pfile(p)
    set title ptitle(p) font ',12'
    if (pkey(p)) { set key on } else { set key off }
    # the scale from the data: headroom for the key computed from it (set offsets works on linear axes only)
    lo = NaN; hi = NaN
    set logscale y 10
    set autoscale y                  # stats counts only points inside the current ranges
    STATS_records = 0; stats f using 'p50_ms' nooutput; if (exists("STATS_records") && STATS_records > 0) { lo = STATS_min }
    STATS_records = 0; stats f using 'p99_ms' nooutput; if (exists("STATS_records") && STATS_records > 0) { hi = STATS_max }
    d = pparam('delay', p); delay = (d eq '') ? 0 : real(d)
    if (delay > 0 && lo > delay) { lo = delay }
    wide = (lo > 0 && hi / lo >= 20)
    if (wide) {
        set yrange [lo / 1.5 : hi * (hi * 1.5 / lo) ** 0.6]
        set ylabel (first_column(p) ? 'latency (ms, log scale)' : 'ms, log')
    } else {
        unset logscale y
        if (lo > 0 && hi >= lo) { set yrange [0 : hi + 0.45 * (hi - 0)] } else { set autoscale y }
        set ylabel (first_column(p) ? 'latency (ms, linear scale)' : 'ms')
    }
    unset arrow 1
    if (delay > 0) { set arrow 1 from graph 0, first delay to graph 1, first delay nohead dt 3 lw 1.5 lc rgb '#777777' }
    if (pvalues(p) == 0) { @NO_VALUES }
    plot for [i=1:pn(p)] f index i-1 using 1:'p50_ms_mean' smooth unique with lines lw 2.5 lc rgb pcolor(p,i) \
             title columnheader(1), \
         for [i=1:pn(p)] f index i-1 using 1:'p99_ms_mean' smooth unique with lines lw 2 dt 2 lc rgb pcolor(p,i) \
             notitle, \
         for [i=1:pn(p)] f index i-1 using 1:'p50_ms_mean':'p50_ms_lo':'p50_ms_hi' with yerrorbars ps 0 lw 1.5 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:'p99_ms_mean':'p99_ms_lo':'p99_ms_hi' with yerrorbars ps 0 lw 1 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(valid_y('p50_ms')) with points pt 7 ps 1.1 lc rgb pcolor(p,i) \
             notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(valid_y('p99_ms')) with points pt 5 ps 1.0 lc rgb pcolor(p,i) \
             notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(flagged_y('p50_ms')) with points pt 6 ps 2 lw 2 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(flagged_y('p99_ms')) with points pt 4 ps 1.8 lw 2 \
             lc rgb pcolor(p,i) notitle, \
         keyentry with linespoints pt 7 lw 2 lc rgb '#555555' title 'solid, circles: p50', \
         keyentry with linespoints pt 5 lw 2 dt 2 lc rgb '#555555' title 'dashed, squares: p99', \
         keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
         keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title, \
         keyentry with lines dt 3 lw 1.5 lc rgb '#777777' title (delay > 0 ? 'dotted: the delay' : '')
    unset label 1001; unset label 1002
    @VALUES_RESET
}
unset multiplot
