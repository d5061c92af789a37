# maxthreads_queues.gp: beyond the connector's queues. Responses per second and the connections Tomcat held,
# against concurrent clients (log x), with the clients themselves dotted; the load generator's errors by kind
# on the right axis; vertical lines at maxThreads + acceptCount and at maxConnections.
# Data: file_1, a block per setting and delay (concurrency rps connections_held connect read write timeout
# non_2xx efficiency_ratio latency_ratio valid cell_id rps_mean rps_lo rps_hi: the point's mean and 95 % interval
# over launches, the bar). Parameters (beyond common.gp): limit_queue,
# limit_connections, pool_rps (maxThreads / delay: the most a full pool answers per second).
load 'common.gp'
set multiplot layout 1,1 title title font ',14' margins 0.07,0.92,0.14,0.90
set logscale x 10
set xlabel 'concurrent clients (log scale)'
set ylabel 'responses per second (req/s) / connections held (count)'
set y2label 'errors counted by the load generator (count)'
f = file_1
stats f using (column('connect') + column('read') + column('write') + column('timeout') + \
    column('non_2xx')) nooutput
set y2tics
set format y2 '%.0f'
set yrange [0:*]
set y2range [0:(STATS_max > 0 ? STATS_max * 1.3 : 10)]
# Reference lines only where the data is (a limit far beyond the clients measured would stretch the axis, or
# be drawn outside it): named in a label instead.
stats f using 1 nooutput
cmax = STATS_max
stats f using (column('rps') > column('connections_held') ? column('rps') : column('connections_held')) nooutput
ymax = STATS_max
off = ''
if (limit_queue <= cmax) {
    set arrow 1 from limit_queue, graph 0 to limit_queue, graph 1 nohead dt 2 lw 2 lc rgb '#1f78b4'
    set label 3 sprintf(' maxThreads + acceptCount = %g', limit_queue) at limit_queue, graph 0.45 left \
        font ',10' textcolor rgb '#1f78b4'
} else { off = off . sprintf(' maxThreads + acceptCount = %g;', limit_queue) }
if (limit_connections <= cmax) {
    set arrow 2 from limit_connections, graph 0 to limit_connections, graph 1 nohead dt 4 lw 2 lc rgb '#6a3d9a'
    set label 4 sprintf(' maxConnections = %g', limit_connections) at limit_connections, graph 0.39 left \
        font ',10' textcolor rgb '#6a3d9a'
} else { off = off . sprintf(' maxConnections = %g;', limit_connections) }
if (strlen(off) > 0) { set label 6 'beyond the clients measured:'.off at graph 0.99, graph 0.04 right font ',10' }
pool_line = pool_rps <= ymax * 1.5 ? pool_rps : NaN
plot (x <= ymax * 1.5 ? x : NaN) with lines dt 3 lw 1.5 lc rgb '#777777' title 'clients (connections wanted)', \
     for [i=1:pn(1)] f index i-1 using 1:'rps_mean' smooth unique with lines lw 2.5 lc rgb pcolor(1,i) \
         title 'responses per second: '.columnhead(1), \
     for [i=1:pn(1)] f index i-1 using 1:'rps_mean':'rps_lo':'rps_hi' with yerrorbars ps 0 lw 1.5 \
         lc rgb pcolor(1,i) notitle, \
     for [i=1:pn(1)] f index i-1 using 1:(valid_y('rps')) with points pt 7 ps 1.3 lc rgb pcolor(1,i) notitle, \
     for [i=1:pn(1)] f index i-1 using 1:(flagged_y('rps')) with points pt 6 ps 2.2 lw 2 lc rgb pcolor(1,i) notitle, \
     for [i=1:pn(1)] f index i-1 using 1:'connections_held' with linespoints lw 2.5 dt 4 pt 5 ps 1.3 \
         lc rgb pcolor(1,i) title 'connections Tomcat held (peak)', \
     pool_line with lines dt 2 lw 1 lc rgb '#444444' title sprintf('maxThreads / delay = %g req/s', pool_rps), \
     for [k in 'connect read write timeout non_2xx'] for [i=1:pn(1)] f index i-1 using 1:k axes x1y2 \
         with linespoints lw 1 pt 2 ps 1.5 title (i == 1 ? 'errors: '.k : ''), \
     keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
     keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
unset multiplot
