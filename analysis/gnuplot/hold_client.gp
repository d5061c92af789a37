# hold_client.gp: seed 003, the holder's own CPU over time and its RSS against connections open (2 panels).
# Data (file_1): a block per cell: t_s connections_open connections_held client_cpu_percent client_rss_mb
# failures connect_timeout read_timeout cell_id. Parameters: see common.gp.
load 'common.gp'
f = pfile(1)
n = pn(1)
set multiplot layout 1,2 title title font ',14' margins 0.07,0.98,0.16,0.86 spacing 0.08,0.1
set yrange [0:*]
set key top left

set title 'client CPU over time (100 = one core)' font ',12'
set xlabel 'time from the first connection (s)'
set ylabel 'client CPU (% of one core)'
plot for [i=1:n] f index i-1 using 1:'client_cpu_percent' with lines lw 1.5 lc rgb pcolor(1,i) \
         title columnheader(1)
unset label 1001; unset label 1002

set title 'client RSS against its open connections' font ',12'
set xlabel 'connections open (count)'
set ylabel 'client RSS (MiB)'
plot for [i=1:n] f index i-1 using 'connections_open':'client_rss_mb' with points pt 7 ps 0.5 lc rgb pcolor(1,i) \
         title columnheader(1)
unset multiplot
