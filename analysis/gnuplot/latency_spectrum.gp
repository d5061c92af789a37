# latency_spectrum.gp: the latency percentile spectrum (HdrHistogram's view): latency against percentile, log-log,
# the x axis at 100 / (100 - percentile), one panel per delay or group, a line per point (server setting and
# concurrency: the launch with the point's median p99), a server's shades by concurrency; the delay dotted.
# Data (file_N): blocks of percentile x latency_ms valid cell_id, one per point. Parameters: see common.gp,
# delay_N (ms; '' for none) and logy_N (1: the latencies span 20x or more, a log y axis; else linear from 0).
load 'common.gp'
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set logscale x 10
set format y '%g'
# headroom (offsets, per panel below): the key, a line per point, sits above the lines
set xtics ('50%%' 2, '90%%' 10, '99%%' 100, '99.9%%' 1000, '99.99%%' 10000)
set xrange [1:*]
set xlabel 'percentile (%, log of 1 / (1 - p))'
set key top left font ',8' samplen 2 spacing 0.9 maxrows 7
do for [p=1:panels] {
    f = pfile(p)
    delay = pparam('delay', p)
    set title ptitle(p) font ',12'
    if (pkey(p)) { set key on } else { set key off }
    if (pparam('logy', p) eq '1') {
        set logscale y 10; set yrange [*:*]; set offsets 0, 0, graph 0.35, 0; ylabel_text = 'latency (ms, log scale)'
    } else {
        unset logscale y; set yrange [0:*]; set offsets 0, 0, graph 0.6, 0; ylabel_text = 'latency (ms)'
    }
    if (first_column(p)) { set ylabel ylabel_text } else { unset ylabel }
    if (pvalues(p) == 0) { @NO_VALUES }
    DELAY_LINE = delay ne '' ? sprintf(", %s with lines dt 3 lw 2 lc rgb '#777777' title 'the delay (%s ms)'", \
        delay, delay) : ''
    plot for [i=1:pn(p)] f index i-1 using 'x':'latency_ms' with lines lw 2 dt pdash(p,i) \
             lc rgb pcolor(p,i) title columnheader(1) @DELAY_LINE
    unset label 1001; unset label 1002
    @VALUES_RESET; set xrange [1:*]
}
unset multiplot
