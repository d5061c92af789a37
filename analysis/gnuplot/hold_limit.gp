# hold_limit.gp: seed 003 over time: connections held and open, and the client's failures with the server's
# accept queue (2 panels). Data: file_1 (a block per cell: t_s connections_open connections_held
# client_cpu_percent client_rss_mb failures connect_timeout read_timeout cell_id) and queuefile (a block per
# cell: t_s server_established accept_queue cell_id). limits: Tomcat's maxConnections values, one word each.
# Parameters: see common.gp.
load 'common.gp'
if (!exists("limits")) limits = ''
f = pfile(1)
n = pn(1)
set multiplot layout 2,1 title title font ',14' margins 0.08,0.97,0.12,0.90 spacing 0.06,0.16
set xlabel 'time from the first connection (s)'
set key top left

# The scale follows the connections, not the limits: a maxConnections far above them (Tomcat's default 8192
# against 500 held) is named in a label instead of stretching the axis.
stats f using 'connections_open' nooutput
top = STATS_max > 0 ? STATS_max * 1.3 : 10
set yrange [0:top]
above = ''
do for [k=1:words(limits)] { if (nth(limits, k) > top) { above = above . sprintf(' %g', nth(limits, k)) } }
if (strlen(above) > 0) {
    set label 5 'Tomcat maxConnections off this scale:'.above at graph 0.99, graph 0.06 right font ',10' \
        textcolor rgb '#555555'
}
set title 'connections: held (solid, HEAD answered) and open (dashed, TCP connected)' font ',12'
set ylabel 'connections (count)'
plot for [i=1:n] f index i-1 using 1:'connections_held' with lines lw 2.5 lc rgb pcolor(1,i) \
         title columnheader(1), \
     for [i=1:n] f index i-1 using 1:'connections_open' with lines lw 1.5 dt 2 lc rgb pcolor(1,i) notitle, \
     for [k=1:words(limits)] (nth(limits, k) <= top ? nth(limits, k) : NaN) with lines dt 3 lw 2 \
         lc rgb '#777777' title (nth(limits, k) <= top ? sprintf('Tomcat maxConnections = %g', nth(limits, k)) : '')
unset label 5
unset label 1001; unset label 1002

set yrange [0:*]
set title 'client failures so far (solid: connect timeouts, dashed: HEAD never answered); thin: accept queue' font ',12'
set ylabel 'clients or connections (count)'
plot for [i=1:n] f index i-1 using 1:'connect_timeout' with lines lw 2.5 lc rgb pcolor(1,i) \
         title columnheader(1), \
     for [i=1:n] f index i-1 using 1:'read_timeout' with lines lw 2 dt 2 lc rgb pcolor(1,i) notitle, \
     for [i=1:n] queuefile index i-1 using 1:'accept_queue' with lines lw 1 lc rgb pcolor(1,i) notitle
unset multiplot
