# compare.gp: two runs, per matching point: B/A of responses per second (top) and of p99 latency (bottom), log y,
# each with its 95 % interval (error bars). Grey band: the equivalence margin (1 +/- margin); red: a change (the
# whole interval beyond the margin), grey: same within the margin or inconclusive, hollow black triangle: cannot
# tell (under 3 launches on a side, or no spread); a flagged point is drawn as a diamond. Data (file_1, first line names the columns): ordinal label
# flagged rps_ratio rps_low rps_high rps_verdict rps_floor p99_ratio p99_low p99_high p99_verdict p99_floor.
# Parameters: see common.gp; npoints.
load 'common.gp'
if (!exists("npoints")) npoints = 1
set datafile columnheaders
set multiplot layout 2,1 title title font ',14' margins 0.08,0.98,0.25,0.88 spacing 0.06,0.06
f = file_1
set logscale y
set ytics (0.25, 0.5, 0.67, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 4)
set mytics 1
set xrange [0.5 : npoints + 0.5]
set grid noxtics ytics
set key at screen 0.5, 0.935 center top horizontal maxrows 1 width -1 font ',9'
changed(v) = v == 1 || v == 2
ELEMENTS = "1 with lines lc rgb 'black' dt 2 notitle, \
  f using 1:(1):(0.4):(column(fl)) with boxxyerror fs solid 0.35 noborder lc rgb '#bbbbbb' notitle, \
  f using 1:(changed(column(v)) ? column(r) : NaN):(column(lo)):(column(hi)) with yerrorbars pt 7 ps 1.2 \
      lc rgb '#c0392b' notitle, \
  f using 1:((column(v) == 0 || column(v) == 5) ? column(r) : NaN):(column(lo)):(column(hi)) with yerrorbars \
      pt 6 ps 1.2 lw 1.5 \
      lc rgb '#666666' notitle, \
  f using 1:(column(v) == 3 ? column(r) : NaN) with points pt 8 ps 1.4 lw 2 lc rgb '#000000' notitle, \
  f using 1:(column('flagged') > 0 ? column(r) : NaN) with points pt 12 ps 2.2 lw 1.5 lc rgb '#8e44ad' notitle"
KEY = "keyentry with boxes fs solid 0.35 noborder lc rgb '#bbbbbb' title 'margin (1 +/- margin)', \
  keyentry with yerrorbars pt 7 ps 1.2 lc rgb '#c0392b' title 'a change (95% interval)', \
  keyentry with yerrorbars pt 6 ps 1.2 lw 1.5 lc rgb '#666666' title 'same or inconclusive (95% interval)', \
  keyentry with points pt 8 ps 1.4 lw 2 lc rgb '#000000' title 'cannot tell (under 3 launches)', \
  keyentry with points pt 12 ps 2.2 lw 1.5 lc rgb '#8e44ad' title 'flagged point'"
do for [panel=1:2] {
    fig = panel == 1 ? 'rps' : 'p99'
    r = fig.'_ratio'; lo = fig.'_low'; hi = fig.'_high'; v = fig.'_verdict'; fl = fig.'_floor'
    # a symmetric log range around 1 that holds every ratio and every interval
    m = 1.12
    set autoscale y
    STATS_records = 0; stats f using (column(hi) > 0 ? abs(log(column(hi))) : NaN) nooutput
    if (exists("STATS_records") && STATS_records > 0) { m = exp(STATS_max) > m ? exp(STATS_max) : m }
    STATS_records = 0; stats f using (column(lo) > 0 ? abs(log(column(lo))) : NaN) nooutput
    if (exists("STATS_records") && STATS_records > 0) { m = exp(STATS_max) > m ? exp(STATS_max) : m }
    STATS_records = 0; stats f using (column(r) > 0 ? abs(log(column(r))) : NaN) nooutput
    if (exists("STATS_records") && STATS_records > 0) { m = exp(STATS_max) > m ? exp(STATS_max) : m }
    m = m * 1.15
    set yrange [1 / m : m]
    set ylabel (panel == 1 ? 'responses per second, B / A' : 'p99 latency, B / A')
    if (panel == 1) {
        set xtics 1 format ''
        plot @ELEMENTS, @KEY
    } else {
        tickfont = npoints > 60 ? ',6' : ',8'
        set xtics 1 rotate by 90 right font tickfont
        set key off
        plot @ELEMENTS, f using 1:(1):xtic(2) with dots lc rgb '#bbbbbb' notitle
    }
}
unset multiplot
