# latency.gp: latency p50 (solid) and p99 (dashed) vs concurrent clients, a line per server, log y, one panel
# per group or delay. Data (file_N): a block per series with columns concurrency p50_ms p99_ms mean_ms max_ms
# valid repetition cell_id, then each figure's point mean and 95 % interval (<figure>_mean _lo _hi).
# Parameters: see common.gp.
load 'common.gp'
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set logscale x 10
set logscale y 10
set format y '%g'
set offsets 0, 0, 0, 0
set xlabel 'concurrent clients (log scale)'
do for [p=1:panels] {
    f = pfile(p)
    set title ptitle(p) font ',12'
    if (pkey(p)) { set key on } else { set key off }
    if (first_column(p)) { set ylabel 'latency (ms, log scale)' } else { unset ylabel }
    # log axis: headroom for the key computed from the data (set offsets works on linear axes only)
    lo = NaN; hi = NaN
    set autoscale y                  # stats counts only points inside the current ranges
    STATS_records = 0; stats f using 'p50_ms' nooutput; if (exists("STATS_records") && STATS_records > 0) { lo = STATS_min }
    STATS_records = 0; stats f using 'p99_ms' nooutput; if (exists("STATS_records") && STATS_records > 0) { hi = STATS_max }
    if (lo > 0 && hi >= lo) { set yrange [lo / 1.5 : hi * (hi * 1.5 / lo) ** 0.6] } else { set autoscale y }
    if (pvalues(p) == 0) { @NO_VALUES }
    plot for [i=1:pn(p)] f index i-1 using 1:'p50_ms' smooth unique with lines lw 2.5 lc rgb pcolor(p,i) \
             title columnheader(1), \
         for [i=1:pn(p)] f index i-1 using 1:'p99_ms' smooth unique with lines lw 2 dt 2 lc rgb pcolor(p,i) \
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
         keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
    unset label 1001; unset label 1002
    @VALUES_RESET
}
unset multiplot
