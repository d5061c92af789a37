# openloop_achieved.gp: answers per second against requests offered per second, a line per server setting, the
# diagonal (kept up) dashed black, predicted capacities as dotted verticals; one panel per group and delay.
# Data (file_N): a block per series with columns rate rate_achieved valid repetition cell_id rate_achieved_mean
# rate_achieved_lo rate_achieved_hi (the point's mean and 95 % interval over launches: the bar; the line joins
# the means).
# Parameters: see common.gp, plus capacity_N (one number or NaN per series).
load 'common.gp'
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set xlabel 'offered rate (req/s)'
set xrange [0:*]
set yrange [0:*]
do for [p=1:panels] {
    f = pfile(p)
    set title ptitle(p) font ',12'
    if (pkey(p)) { set key on } else { set key off }
    if (first_column(p)) { set ylabel 'answered (req/s)' } else { unset ylabel }
    if (pvalues(p) == 0) { @NO_VALUES }
    do for [i=1:pn(p)] {
        c = nth(pparam('capacity', p), i)
        if (c == c) { set arrow i from c, graph 0 to c, graph 1 nohead dt 3 lw 1.5 lc rgb pcolor(p,i) }
    }
    plot x with lines dt 2 lw 1.5 lc rgb 'black' title 'kept up (achieved = offered)', \
         for [i=1:pn(p)] f index i-1 using 1:'rate_achieved_mean' smooth unique with lines lw 2.5 lc rgb pcolor(p,i) \
             title columnheader(1), \
         for [i=1:pn(p)] f index i-1 using 1:'rate_achieved_mean':'rate_achieved_lo':'rate_achieved_hi' \
             with yerrorbars ps 0 lw 1.5 lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(valid_y('rate_achieved')) with points pt 7 ps 1.1 lc rgb pcolor(p,i) \
             notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(flagged_y('rate_achieved')) with points pt 6 ps 2 lw 2 \
             lc rgb pcolor(p,i) notitle, \
         keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
         keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
    unset arrow
    unset label 1001; unset label 1002
    @VALUES_RESET; set xrange [0:*]; set yrange [0:*]
}
unset multiplot
