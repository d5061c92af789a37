# maxthreads_knees.gp: the sweep's ratio (ratio_N: mean latency / delay, or the seed's efficiency ratio) vs
# concurrent clients, a curve per Tomcat setting, its knee marked (diamond, labelled with its concurrency and
# interval, or the bracket's ends) and its prediction (maxThreads) as a dotted vertical line of the same colour;
# the seed's ratio thin dashed beside each curve; one panel per group and delay; log x and y.
# The knee is the hinge a max(1, C / N) fitted over every launch (knees.py).
# Data: file_N, a block per setting (concurrency ratio threads_peak efficiency_ratio valid: 0 when a cell
# of the point is flagged, drawn hollow; ratio_lo ratio_hi: the ratio's 95 % interval over launches, the bar,
# NaN under 3 launches; launches); marks_N, the same
# settings' knees (knee_concurrency: the hinge's fitted N, NaN when none is stated; threshold predicted;
# range_mid range_low range_high: N's 95 % interval or the bracket of measured concurrencies, drawn as a
# horizontal bar at the threshold; text).
# Parameters (beyond common.gp): marks_N, threshold_N, ratio_N (the record field the knee is found on),
# predicted_N (one word per setting: its maxThreads, NaN for virtual threads), label_edge_N (a concurrency).
load 'common.gp'
# The knee's label: a fitted N with its interval's ends, else the bracket's ends (at the bar's middle); settings
# alternate above and below the threshold so that neighbours' labels do not overlap.
knee_x(n, mid) = (n == n) ? n : mid
# A knee past label_edge_N (the last fifth of the panel's log C range) is labelled to its left, inside the panel.
centred(x) = (x < label_edge) ? x : NaN
flush_right(x) = (x < label_edge) ? NaN : x
knee_text(n, low, high) = (n == n) ? (low == low ? sprintf('C=%.4g [%.4g, %.4g]', n, low, high) : \
    sprintf('C=%.4g', n)) : sprintf('C %g to %g', low, high)
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set logscale x 10
set logscale y 2
set ytics add (1.25, 1.5, 3, 6, 12, 24, 48)   # a tick between the powers of 2: a short range shows more than 1 and 2
set xlabel 'concurrent clients (log scale)'
set offsets 0, 0, 0, 0
do for [p=1:panels] {
    f = pfile(p)
    m = pparam('marks', p)
    t = pparam('threshold', p)
    pred = pparam('predicted', p)
    set title ptitle(p) font ',12'
    if (pkey(p)) { set key on } else { set key off }
    set ylabel sprintf('%s (1 = no added wait; log scale)', pparam('ratio', p) eq 'latency_ratio' ? \
        'latency ratio, mean latency / delay' : 'efficiency ratio, (C / rps) / delay')
    unset arrow
    do for [i=1:words(pred)] {
        if (word(pred, i) ne 'NaN') {
            set arrow i from real(word(pred, i)), graph 0 to real(word(pred, i)), graph 1 nohead dt 3 lw 1.5 \
                lc rgb pcolor(p,i)
        }
    }
    label_edge = real(pparam('label_edge', p))
    stats f using (column(2) > column(4) ? column(2) : column(4)) nooutput
    set yrange [0.9:(STATS_max > 2 ? STATS_max * 1.4 : 2.5)]
    plot t with lines dt 2 lw 1.5 lc rgb 'black' title sprintf('%g: a smaller bend at an end of the range is no knee', t), \
         1 with lines dt 3 lw 1 lc rgb '#777777' title 'ideal 1.0', \
         for [i=1:pn(p)] f index i-1 using 1:2 with lines lw 2.5 lc rgb pcolor(p,i) dt pdash(p,i) \
             title columnheader(1), \
         for [i=1:pn(p)] f index i-1 using 1:'ratio':'ratio_lo':'ratio_hi' with yerrorbars ps 0 lw 1.5 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(valid_y('ratio')) with points pt 7 ps 1.1 lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(flagged_y('ratio')) with points pt 6 ps 2.2 lw 2 lc rgb pcolor(p,i) \
             notitle, \
         for [i=1:pn(p)] f index i-1 using 1:4 with lines lw 1.2 dt 2 lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] m index i-1 using 4:2:5:6 with xerrorbars ps 0 lw 2.5 lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] m index i-1 using 1:2 with points pt 13 ps 2.6 lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] m index i-1 using (centred(knee_x($1, $4))):2:(knee_text($1, $5, $6)) with labels \
             offset 0,(i % 2 ? 1.3 : -1.3) font ',10' textcolor rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] m index i-1 using (flush_right(knee_x($1, $4))):2:(knee_text($1, $5, $6)) with labels \
             right offset 1.5,(i % 2 ? 1.3 : -1.3) font ',10' textcolor rgb pcolor(p,i) notitle, \
         keyentry with points pt 13 ps 2 lc rgb 'black' title 'knee: fitted N, bar its 95 % interval or bracket', \
         keyentry with lines dt 3 lw 1.5 lc rgb 'black' title 'predicted knee: maxThreads', \
         keyentry with lines dt 2 lw 1.2 lc rgb '#555555' title 'thin dashed: the seed''s ratio (C / rps) / delay', \
         keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
         keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
    unset label 1001; unset label 1002
}
unset multiplot
