# compare.gp: two runs, per matching cell: B/A of responses per second (top) and of p99 latency (bottom), log y.
# Grey boxes: each cell's noise band (1 +/- threshold); red filled points are beyond it, grey hollow within it;
# triangles: a flagged cell in A or B. Data (file_1): one row per cell key with columns ordinal label rps_ratio
# rps_threshold rps_beyond p99_ratio p99_threshold p99_beyond flagged. Parameters: see common.gp; ncells.
load 'common.gp'
if (!exists("ncells")) ncells = 1
set multiplot layout 2,1 title title font ',14' margins 0.07,0.98,0.25,0.90 spacing 0.06,0.06
f = file_1
set logscale y
set ytics (0.25, 0.5, 0.67, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 4)
set mytics 1
set offsets 0, 0, 0, 0
set xrange [0.5 : ncells + 0.5]
set grid noxtics ytics
set key top left horizontal maxrows 2 width -2
# the elements both panels draw; r, th, bz name the panel's columns, rc is r's column number
ELEMENTS = "1 with lines lc rgb 'black' dt 2 notitle, \
  f using 1:(1):(0.3):(column(th)) with boxxyerror fs solid 0.35 noborder lc rgb '#bbbbbb' notitle, \
  f using 1:(column(bz) > 0 && column('flagged') == 0 ? column(r) : NaN) with points pt 7 ps 1.4 \
      lc rgb '#c0392b' notitle, \
  f using 1:(column(bz) == 0 && column('flagged') == 0 ? column(r) : NaN) with points pt 6 ps 1.4 lw 2 \
      lc rgb '#666666' notitle, \
  f using 1:(column(bz) > 0 && column('flagged') > 0 ? column(r) : NaN) with points pt 9 ps 1.6 \
      lc rgb '#c0392b' notitle, \
  f using 1:(column(bz) == 0 && column('flagged') > 0 ? column(r) : NaN) with points pt 8 ps 1.6 lw 2 \
      lc rgb '#666666' notitle, \
  f using 1:(valid(rc) ? NaN : 1) with points pt 2 ps 1.6 lw 2 lc rgb '#000000' notitle"
KEY = "keyentry with boxes fs solid 0.35 noborder lc rgb '#bbbbbb' title 'noise band (1 +/- threshold)', \
  keyentry with points pt 7 ps 1.4 lc rgb '#c0392b' title 'beyond noise', \
  keyentry with points pt 6 ps 1.4 lw 2 lc rgb '#666666' title 'within noise', \
  keyentry with points pt 9 ps 1.6 lc rgb '#c0392b' title 'beyond, flagged cell', \
  keyentry with points pt 8 ps 1.6 lw 2 lc rgb '#666666' title 'within, flagged cell', \
  keyentry with points pt 2 ps 1.6 lw 2 lc rgb '#000000' title 'no value (failed cell)'"
do for [panel=1:2] {
    fig = panel == 1 ? 'rps' : 'p99'
    r = fig.'_ratio'
    th = fig.'_threshold'
    bz = fig.'_beyond'
    rc = panel == 1 ? 3 : 6
    # a symmetric log range around 1 that holds every ratio and every noise band
    m = 1.12
    set autoscale y                  # stats counts only points inside the current ranges
    STATS_records = 0; stats f using (column(r) > 0 ? abs(log(column(r))) : NaN) nooutput
    if (exists("STATS_records") && STATS_records > 0) { m = exp(STATS_max) > m ? exp(STATS_max) : m }
    STATS_records = 0; stats f using (1 + column(th)) nooutput
    if (exists("STATS_records") && STATS_records > 0) { m = STATS_max > m ? STATS_max : m }
    m = m * 1.25
    set yrange [1 / m : m]
    set ylabel (panel == 1 ? 'responses/s, B / A' : 'p99 latency, B / A')
    if (panel == 1) {
        set xtics 1 format ''
        plot @ELEMENTS, @KEY
    } else {
        tickfont = ncells > 60 ? ',6' : ',8'
        set xtics 1 rotate by 90 right font tickfont
        set key off
        plot @ELEMENTS, f using 1:(1):xtic(2) with dots lc rgb '#bbbbbb' notitle
    }
    unset label 1001; unset label 1002
}
unset multiplot
