# openloop_distribution.gp: latency against percentile for pairs of cells at the same throughput, closed loop
# (solid, points: the generator's own percentiles) and open loop (dashed: from every request), log-log with the
# x axis at 100 / (100 - percentile). Data (file_1): blocks of percentile x latency_ms valid cell_id, in pairs
# (closed, open) that share a colour. Parameters: see common.gp.
load 'common.gp'
set logscale x 10
set logscale y 10
set format y '%g'
set offsets 0, 0, 0, 0
set xtics ('50%%' 2, '90%%' 10, '99%%' 100, '99.9%%' 1000, '99.99%%' 10000)
set xlabel 'percentile (%, log of 1 / (1 - p))'
set ylabel 'latency (ms, log scale)'
set title title font ',14'
f = pfile(1)
plot for [i=1:pn(1)] f index i-1 using 'x':'latency_ms' with linespoints \
         lw (i % 2 ? 2.5 : 2) dt 2 - i % 2 pt (i % 2 ? 7 : -1) ps 1.2 lc rgb pcolor(1,i) title columnheader(1)
