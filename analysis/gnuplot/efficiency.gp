# efficiency.gp: seed 002's efficiency ratio (C / rps) / delay vs concurrent clients, a line per server, one
# panel per delay, the ideal 1.0 as a dashed black line; mean latency / delay thin dashed beside it.
# Data (file_N): a block per series with columns concurrency efficiency_ratio latency_ratio
# efficiency_ratio_steady valid repetition cell_id, then each figure's point mean and 95 % interval (<figure>_mean _lo _hi).
# Parameters: see common.gp.
load 'common.gp'
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set logscale x 10
set xlabel 'concurrent clients (log scale)'
set yrange [0:*]
if (!exists("bend")) bend = 1.1      # the findings' bend threshold (finding.THRESHOLD)
do for [p=1:panels] {
    f = pfile(p)
    set title ptitle(p) font ',12'
    if (pkey(p)) { set key on } else { set key off }
    if (first_column(p)) { set ylabel 'efficiency ratio (C / rps / delay; no unit, 1 = no added wait)' } else { unset ylabel }
    if (pvalues(p) == 0) { @NO_VALUES }
    plot 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'ideal 1.0', \
         bend with lines dt 3 lw 1.2 lc rgb '#777777' title sprintf('bend: above %g for good (the findings)', bend), \
         for [i=1:pn(p)] f index i-1 using 1:'efficiency_ratio_mean' smooth unique with lines lw 2.5 \
             lc rgb pcolor(p,i) dt pdash(p,i) title columnheader(1), \
         for [i=1:pn(p)] f index i-1 using 1:'latency_ratio_mean' smooth unique with lines lw 1.2 dt 2 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:'efficiency_ratio_mean':'efficiency_ratio_lo':'efficiency_ratio_hi' with yerrorbars ps 0 lw 1.5 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(valid_y('efficiency_ratio')) with points pt 7 ps 1.2 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(flagged_y('efficiency_ratio')) with points pt 6 ps 2.2 lw 2 \
             lc rgb pcolor(p,i) notitle, \
         keyentry with lines dt 2 lw 1.2 lc rgb '#555555' title 'thin dashed: mean latency / delay', \
         keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
         keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
    unset label 1001; unset label 1002
    @VALUES_RESET; set yrange [0:*]
}
unset multiplot
