# seed004_cpu.gp: each stack's CPU split between its parts, in the table's order (sorted by p99). Left: percent of
# one core, stacked bottom up: the server (its own colour), nginx, PgBouncer, PostgreSQL. Right: the same sums as
# CPU milliseconds per request.
# Data (file_1): one block, a row per stack: x label, the parts (server proxy pooler db, percent of one core),
# upto_<part> (stacked sums), ms_upto_<part> (the sums as ms per request), rps,
# valid repetition cell_id, then upto_db_mean _lo _hi and ms_upto_db_mean _lo _hi (the stack's total: its point's
# mean and 95 % interval over launches, black bars). Parameters: common.gp, and nstacks, label_1..label_N,
# colors_1 (one word per row),
# part_colors and part_titles (nginx, PgBouncer, PostgreSQL: one word each).
load 'common.gp'
set multiplot layout 1,2 title title font ',14' margins 0.09,0.98,0.30,0.90 spacing 0.10,0.12
f = file_1
w = 0.7
set style fill solid 0.9 border lc rgb '#333333'
set offsets 0, 0, graph 0.22, 0
set xrange [0.4:nstacks + 0.6]
set xtics () rotate by 35 right font ',9'
do for [i=1:nstacks] { set xtics add (value(sprintf('label_%d', i)) i) }
set yrange [0:*]
rowcolor(i) = word(colors_1, i)
at_row(i) = ($1 == i ? 1 : NaN)
part_color(k) = word(part_colors, k)
parts = 'proxy pooler db'

do for [panel=1:2] {
    prefix = panel == 1 ? 'upto_' : 'ms_upto_'
    set ylabel (panel == 1 ? 'CPU (% of one core, stacked)' : 'CPU per request (ms, stacked)')
    if (panel == 1) { set key top left } else { unset key }
    if (pvalues(1) == 0) { @NO_VALUES }
    # the tallest sum first, each smaller one drawn over it, the server's own part last
    plot for [k=3:1:-1] f index 0 using 1:(column(prefix.word(parts, k))):(w) with boxes \
             lc rgb part_color(k) title word(part_titles, k), \
         for [i=1:nstacks] f index 0 using 1:(at_row(i)*column(prefix.'server')):(w) with boxes \
             lc rgb rowcolor(i) notitle, \
         f index 0 using 1:(column(prefix.'db')):(sig2(column(prefix.'db'))) \
             with labels offset 0,0.7 font ',9' notitle, \
         f index 0 using 1:(column(prefix.'db_mean')):(column(prefix.'db_lo')):(column(prefix.'db_hi')) \
             with yerrorbars ps 0 lw 1.5 lc rgb 'black' notitle, \
         keyentry with yerrorbars ps 0 lw 1.5 lc rgb 'black' title interval_title, \
         f index 0 using 1:(flagged_y(prefix.'db')) with points pt 6 ps 3 lw 2 lc rgb 'black' notitle, \
         keyentry with boxes lc rgb '#dddddd' title 'server: its own colour', \
         keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
    unset label 1001; unset label 1002
    @VALUES_RESET; set yrange [0:*]
}
unset multiplot
