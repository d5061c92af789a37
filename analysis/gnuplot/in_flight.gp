# in_flight.gp: requests in flight (rps x mean latency, Little's law; solid), those a pool served at its busiest
# (dashed) and those that waited (dotted) vs concurrent clients, a colour per server setting, one panel per
# delay; log x and y. Data (file_N): a block per series with columns concurrency in_flight busy queued valid
# repetition cell_id, then each figure's point mean and 95 % interval (<figure>_mean _lo _hi).
# Parameters: see common.gp; maxthreads_N (the panel's pool sizes, dotted grey).
load 'common.gp'
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set logscale x 10
set logscale y 10
set format y '%g'
set offsets 0, 0, 0, 0
set xlabel 'concurrent clients (log scale)'
do for [p=1:panels] {
    if (first_column(p)) { set ylabel 'requests (count, log scale)' } else { set ylabel 'requests' }
    f = pfile(p)
    mt = pparam('maxthreads', p)
    set title ptitle(p) font ',12'
    if (pkey(p)) { set key on } else { set key off }
    set autoscale y
    STATS_records = 0; stats f using 'in_flight' nooutput
    hi = (exists("STATS_records") && STATS_records > 0) ? STATS_max : NaN
    if (hi > 0) { set yrange [0.5 : hi * 8] }
    if (pvalues(p) == 0) { @NO_VALUES }
    plot for [k=1:words(mt)] nth(mt, k) with lines dt 3 lw 1.5 lc rgb '#999999' notitle, \
         for [i=1:pn(p)] f index i-1 using 1:'in_flight_mean' smooth unique with lines lw 2.5 lc rgb pcolor(p,i) \
             title columnheader(1), \
         for [i=1:pn(p)] f index i-1 using 1:'in_flight_mean':'in_flight_lo':'in_flight_hi' with yerrorbars ps 0 \
             lw 1.5 lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(valid_y('in_flight')) with points pt 7 ps 1.1 lc rgb pcolor(p,i) \
             notitle, \
         for [i=1:pn(p)] f index i-1 using 1:'busy_mean' smooth unique with lines lw 2 dt 2 lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(column('queued_mean') >= 0.5 ? column('queued_mean') : NaN) smooth unique \
             with lines lw 2 dt 3 lc rgb pcolor(p,i) notitle, \
         for [i=1:pn(p)] f index i-1 using 1:(column('queued') >= 0.5 ? column('queued') : NaN) with points pt 2 \
             ps 1.3 lc rgb pcolor(p,i) notitle, \
         keyentry with lines lw 2.5 lc rgb '#555555' title 'solid: in flight (rps x mean latency)', \
         keyentry with lines lw 2 dt 2 lc rgb '#555555' title 'dashed: served (pool busy, peak)', \
         keyentry with linespoints pt 2 lw 2 dt 3 lc rgb '#555555' title 'dotted, x: waiting for a thread', \
         keyentry with lines dt 3 lw 1.5 lc rgb '#999999' title (words(mt) > 0 ? 'grey: maxThreads = '.mt : ''), \
         keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
         keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
    unset label 1001; unset label 1002
    @VALUES_RESET
}
unset multiplot
