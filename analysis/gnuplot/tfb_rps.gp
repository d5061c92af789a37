# tfb_rps.gp: TechEmpower's test types, responses per second vs concurrent clients, one panel per test type (level),
# a line per stack. Data (file_N): a block per series with columns concurrency rps valid repetition cell_id, then
# rps_mean rps_lo rps_hi (the point's mean and 95 % interval over launches). Parameters: see common.gp.
load 'common.gp'
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set logscale x 2
set xlabel 'concurrent clients (log scale)'
set yrange [0:*]
do for [p=1:panels] {
    f = pfile(p)
    set title ptitle(p) font ',12'
    if (pkey(p)) { set key on } else { set key off }
    if (first_column(p)) { set ylabel 'responses per second (req/s)' } else { unset ylabel }
    if (pvalues(p) == 0) { @NO_VALUES }
    plot for [i=1:pn(p)] f index i-1 using 1:'rps_mean' smooth unique with linespoints pt 7 ps 0.8 lw 2 \
             lc rgb pcolor(p,i) dt pdash(p,i) title columnheader(1), \
         for [i=1:pn(p)] f index i-1 using 1:'rps_mean':'rps_lo':'rps_hi' with yerrorbars ps 0 lw 1.5 \
             lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(flagged_y('rps')) with points pt 6 ps 2.2 lw 2 \
             lc rgb pcolor(p,i) notitle, \
         keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
         keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
    unset label 1001; unset label 1002
    @VALUES_RESET; set yrange [0:*]
}
unset multiplot
