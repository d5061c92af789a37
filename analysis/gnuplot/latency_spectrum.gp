# latency_spectrum.gp: the latency percentile spectrum (HdrHistogram's view): latency against percentile, log-log,
# the x axis at 100 / (100 - percentile), one panel per delay or group, a line per point (server setting and
# concurrency: the launch with the point's median p99), a colour per server setting, the line thicker the more
# clients (widths_N; with compact_N = '1' the key names each setting and each concurrency once: keycolors_N,
# keytitle_N_K, keyconcurrencies_N, keywidths_N; else each line's own title, linetitle_N_I); the delay dotted.
# Data (file_N): blocks of percentile x latency_ms valid cell_id, one per point. Parameters: see common.gp,
# delay_N (ms; '' for none) and logy_N (1: the latencies span 20x or more, a log y axis; else linear from 0).
load 'common.gp'
pwidth(p, i) = real(word(pparam('widths', p), i))
# a key entry's colour; black past the list (gnuplot reads a for-loop's style even when it runs no pass)
keycolor(p, k) = k <= words(pparam('keycolors', p)) ? word(pparam('keycolors', p), k) : '#000000'
keywidth(p, k) = k <= words(pparam('keywidths', p)) ? real(word(pparam('keywidths', p), k)) : 1
# the right margin a little wider than common.gp's: the last tick, 99.99%, is centred on the right edge
SPECTRUM_MARGINS = margins_right(0.95)
set multiplot layout nrows,ncols title title font ',14' @SPECTRUM_MARGINS
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
        # fixed ends: autoscaling a log axis rounds out to whole decades (100 to 10^7 ms for lines between 1,000
        # and 21,000); the offset alone leaves the key its room
        set logscale y 10; set yrange [*:*]; set autoscale yfix; set offsets 0, 0, graph 0.35, graph 0.05
        ylabel_text = 'latency (ms, log scale)'
    } else {
        unset logscale y; set autoscale y; set yrange [0:*]; set offsets 0, 0, graph 0.6, 0
        ylabel_text = 'latency (ms)'
    }
    if (first_column(p)) { set ylabel ylabel_text } else { unset ylabel }
    if (pvalues(p) == 0) { @NO_VALUES }
    # (no macros here: gnuplot expands a do-for body's macros once, before its first pass sets them)
    compact = pparam('compact', p) eq '1'
    nsettings = compact ? words(pparam('keycolors', p)) : 0
    cs = compact ? pparam('keyconcurrencies', p) : ''
    plot for [i=1:pn(p)] f index i-1 using 'x':'latency_ms' with lines lw pwidth(p,i) \
             lc rgb pcolor(p,i) title (compact ? '' : value(sprintf('linetitle_%d_%d', p, i))), \
         for [k=1:nsettings] keyentry with lines lw 3 lc rgb keycolor(p, k) \
             title value(sprintf('keytitle_%d_%d', p, k)), \
         for [k=1:words(cs)] keyentry with lines lw keywidth(p, k) lc rgb '#444444' \
             title sprintf('C=%s', word(cs, k)), \
         (delay ne '' ? real(delay) : 1/0) with lines dt 3 lw 2 lc rgb '#777777' \
             title (delay ne '' ? sprintf('the delay (%s ms)', delay) : '')
    unset label 1001; unset label 1002
    @VALUES_RESET; set xrange [1:*]
}
unset multiplot
