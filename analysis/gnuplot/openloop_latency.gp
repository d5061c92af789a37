# openloop_latency.gp: latency p50 (solid), p99 (dashed), p99.9 (dotted) against the offered rate, a line per
# server setting, log y, one panel per group and delay; each series' predicted capacity as a dotted vertical
# line in its colour. Data (file_N): a block per series with columns rate p50_ms p99_ms p999_ms rate_achieved
# valid repetition cell_id, then each figure's point mean and 95 % interval (<figure>_mean _lo _hi): the lines
# join the points' means (smooth unique), the bars are the intervals, points are launches.
# Parameters: see common.gp, plus capacity_N (one number or NaN per series); for capacity searches target_N (the
# p99 target in ms, NaN for none), passed_N and failed_N (each series' bracket, NaN for none).
load 'common.gp'
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set logscale y 10
set format y '%g'
set offsets 0, 0, 0, 0
set xlabel 'offered rate (req/s)'
set xrange [0:*]
do for [p=1:panels] {
    f = pfile(p)
    set title ptitle(p) font ',12'
    if (pkey(p)) { set key on } else { set key off }
    if (first_column(p)) { set ylabel 'latency from the scheduled send (ms, log scale)' } else { unset ylabel }
    set autoscale y
    if (pvalues(p) == 0) { @NO_VALUES }
    do for [i=1:pn(p)] {
        c = nth(pparam('capacity', p), i)
        if (c == c) { set arrow i from c, graph 0 to c, graph 1 nohead dt 3 lw 1.5 lc rgb pcolor(p,i) }
    }
    t = nth(pparam('target', p), 1)
    if (t == t) {
        set arrow 500 from graph 0, first t to graph 1, first t nohead dt 2 lw 1.5 lc rgb 'black'
        do for [i=1:pn(p)] {
            lo = nth(pparam('passed', p), i); hi = nth(pparam('failed', p), i)
            tag = 500 + i
            if (lo == lo && hi == hi) { set arrow tag from lo, first t to hi, first t heads size screen 0.006,90 lw 5 lc rgb pcolor(p,i) }
        }
    }
    plot for [i=1:pn(p)] f index i-1 using 1:'p50_ms_mean' smooth unique with lines lw 2.5 lc rgb pcolor(p,i) \
             title columnheader(1), \
         for [i=1:pn(p)] f index i-1 using 1:'p99_ms_mean' smooth unique with lines lw 2 dt 2 lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:'p999_ms_mean' smooth unique with lines lw 1.5 dt 3 lc rgb pcolor(p,i) \
             notitle, \
         for [i=1:pn(p)] f index i-1 using 1:'p50_ms_mean':'p50_ms_lo':'p50_ms_hi' with yerrorbars ps 0 lw 1.5 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:'p99_ms_mean':'p99_ms_lo':'p99_ms_hi' with yerrorbars ps 0 lw 1.5 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:'p999_ms_mean':'p999_ms_lo':'p999_ms_hi' with yerrorbars ps 0 lw 1 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(valid_y('p99_ms')) with points pt 5 ps 1.0 lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(flagged_y('p99_ms')) with points pt 4 ps 1.8 lw 2 lc rgb pcolor(p,i) \
             notitle, \
         keyentry with lines lw 2.5 lc rgb '#555555' title 'solid: p50', \
         keyentry with linespoints pt 5 lw 2 dt 2 lc rgb '#555555' title 'dashed, squares: p99', \
         keyentry with lines lw 1.5 dt 3 lc rgb '#555555' title 'dotted: p99.9; dotted vertical: predicted capacity', \
         keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
         keyentry with points pt 4 ps 1.8 lw 2 lc rgb 'black' title flagged_title
    unset arrow
    unset label 1001; unset label 1002
    @VALUES_RESET; set xrange [0:*]
}
unset multiplot
