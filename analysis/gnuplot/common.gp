# common.gp: what every chart shares (terminal, footer, colours, helpers). Loaded by each chart script;
# plot.py puts this folder on GNUPLOT_LIB, by hand: GNUPLOT_LIB=analysis/gnuplot gnuplot -e "..." chart.gp
#
# Parameters (gnuplot -e "name='value'"):
#   fmt      'png' (pngcairo, 1200x750) or 'svg'            outfile  where the chart goes
#   title    the chart's title                               footer   run id, machine, date (bottom left)
#   note     cells that could not be drawn (bottom right)    nflagged number of flagged cells (legend entry)
#   ikey     the interval bars' key entry ('one launch a point: no interval' when no point has two launches)
#   panels   how many panels; for each panel N = 1..panels:
#            file_N (data file), title_N, nseries_N (series blocks in the file), colors_N and dashes_N (one word
#            per series), key_N (1: this panel shows a key), values_N (cells with a value to draw)

if (!exists("fmt")) fmt = 'png'
if (!exists("outfile")) outfile = 'chart.'.fmt
if (!exists("title")) title = ''
if (!exists("footer")) footer = ''
if (!exists("note")) note = ''
if (!exists("nflagged")) nflagged = 0
if (!exists("panels")) panels = 1

if (fmt eq 'svg') {
    set terminal svg size 1200,750 dynamic font 'DejaVu Sans,12' background rgb 'white'
} else {
    set terminal pngcairo size 1200,750 font 'DejaVu Sans,11' background rgb 'white'
}
set output outfile
set encoding utf8
set termoption noenhanced            # labels are run ids, paths and cell ids: no sub/superscripts
set datafile missing NaN             # a missing value skips its point without breaking the line

set border 3 lw 1
set tics nomirror
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1 dt 1
set key top left Left reverse samplen 3 spacing 1.15 font ',10' box lc rgb '#bbbbbb' opaque
set format x '%g'

# Footer (run, machine, date) and, above it, the note about undrawable cells: drawn with the first panel
# only (each script unsets labels 1001 and 1002 after its first plot).
set label 1001 footer at screen 0.01, 0.018 left font ',9' textcolor rgb '#444444'
set label 1002 note at screen 0.01, 0.045 left font ',9' textcolor rgb '#b2182b'

# Multiplot frame: title on top, room for the footer and note at the bottom; headroom for the key.
ncols = panels <= 3 ? panels : (panels == 4 ? 2 : 3)
nrows = int(ceil(panels * 1.0 / ncols))
margins_right(r) = sprintf('margins 0.07,%g,0.14,0.90 spacing 0.06,0.12', r)    # the frame, its right edge at r
MARGINS = margins_right(0.98)
first_column(p) = (p - 1) % ncols == 0
set offsets 0, 0, graph 0.28, 0      # linear y only: latency.gp unsets it

# Per-panel parameters and per-series styles.
pfile(p) = value(sprintf('file_%d', p))
ptitle(p) = value(sprintf('title_%d', p))
pn(p) = value(sprintf('nseries_%d', p))
pkey(p) = value(sprintf('key_%d', p))
pcolor(p, i) = word(value(sprintf('colors_%d', p)), i)
pdash(p, i) = int(real(word(value(sprintf('dashes_%d', p)), i)))
pvalues(p) = exists(sprintf('values_%d', p)) ? value(sprintf('values_%d', p)) : 1
pparam(name, p) = exists(sprintf('%s_%d', name, p)) ? value(sprintf('%s_%d', name, p)) : ''
nth(list, k) = k <= words(list) ? real(word(list, k)) : NaN

# A value label a reader can quote: at least two significant figures, never exponent form (1.5 stays '1.5', not
# '1'; 0.042 '0.042'; 1234 '1234'); '' for NaN. sig2u(v, unit) appends a unit.
sig2(v) = v != v ? '' : (abs(v) >= 10 ? sprintf('%.0f', v) : (abs(v) >= 1 ? sprintf('%.1f', v) : \
    (abs(v) >= 0.1 ? sprintf('%.2f', v) : (abs(v) >= 0.01 ? sprintf('%.3f', v) : sprintf('%.2g', v)))))
sig2u(v, unit) = v != v ? '' : sig2(v).unit

# Interval bars pass through their point: gnuplot 5.4 otherwise clears a background-coloured disc at the point
# (pointintervalbox), which punched a white hole into bars and into points drawn before the bar.
set pointintervalbox 0.001

# The key entry of the interval bars: ikey says what a bar is, and that a point of one launch has none.
interval_title = exists("ikey") ? ikey : 'bar: 95% interval over launches'

# Valid cells as filled points, flagged ones (valid = 0) as large hollow points.
valid_y(col) = column('valid') > 0 ? column(col) : NaN
flagged_y(col) = column('valid') > 0 ? NaN : column(col)
flagged_title = nflagged > 0 ? sprintf('hollow: flagged, valid=false (%d)', nflagged) : ''

# A panel without a single value (every cell failed) gets fixed ranges and a notice instead of gnuplot's
# "x range is invalid": `if (n == 0) { @NO_VALUES }` before its plot, `@VALUES_RESET` after it. no_values_why
# says why there are none when it is not failed cells (a server the suite did not start: not read).
if (!exists("no_values_why")) no_values_why = 'failed cells: see the report table'
NO_VALUES = "set xrange [1:1000]; set yrange [1:10]; \
  set label 1004 sprintf('no values to draw (%s)', no_values_why) at graph 0.5, 0.5 center"
VALUES_RESET = "unset label 1004; set autoscale x"
