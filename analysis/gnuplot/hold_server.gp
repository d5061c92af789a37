# hold_server.gp: seed 003, server RSS, CPU and threads against keep-alive connections held (3 panels).
# Data (file_1): a block per cell: t_s connections_held rss_mb cpu_percent threads cell_id; one point per
# server sample while connections are opened and held. slopes, intercepts: each series' fit
# (rss_per_connection_kb, rss_fit_intercept_mb; one word per series, NaN when not fitted).
# Parameters: see common.gp.
load 'common.gp'
if (!exists("slopes")) slopes = ''
if (!exists("intercepts")) intercepts = ''
f = pfile(1)
n = pn(1)
set multiplot layout 1,3 title title font ',14' margins 0.06,0.98,0.16,0.86 spacing 0.07,0.1
set xlabel 'connections held (count)'
set yrange [0:*]
set offsets 0, 0, graph 0.35, 0
set key top left
slope(i) = nth(slopes, i)

set title 'resident memory (RSS)' font ',12'
set ylabel 'server RSS (MiB)'
plot for [i=1:n] f index i-1 using 'connections_held':'rss_mb' with points pt 7 ps 0.5 lc rgb pcolor(1,i) \
         title columnheader(1), \
     for [i=1:n] (slope(i) == slope(i) ? slope(i) * x / 1024 + nth(intercepts, i) : NaN) with lines lw 1.5 \
         lc rgb pcolor(1,i) title (slope(i) == slope(i) ? sprintf('  fit: %.1f KB per connection', slope(i)) \
         : '  (no fit)')
unset label 1001; unset label 1002

set title 'CPU (100 = one core)' font ',12'
set ylabel 'server CPU (% of one core)'
plot for [i=1:n] f index i-1 using 'connections_held':'cpu_percent' with points pt 7 ps 0.5 lc rgb pcolor(1,i) \
         title columnheader(1)

set title 'threads' font ',12'
set ylabel 'server threads (count)'
plot for [i=1:n] f index i-1 using 'connections_held':'threads' with points pt 7 ps 0.5 lc rgb pcolor(1,i) \
         title columnheader(1)
unset multiplot
