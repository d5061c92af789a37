# seed004_pool_waiting.gp: requests waiting for a pooled database connection over the measured window, a panel
# per table of seed 004, a line per stack (thick: waiting; thin: connections lent out). t = 0: the window starts.
# Data (file_N): a block per stack: t_s waiting active size valid repetition cell_id. Parameters: common.gp.
load 'common.gp'
set multiplot layout nrows,ncols title title font ',14' @MARGINS
set xlabel 'time from start of measured window (s)'
set yrange [0:*]
do for [p=1:panels] {
    f = pfile(p)
    set title ptitle(p) font ',12'
    if (pkey(p)) { set key on } else { set key off }
    if (first_column(p)) { set ylabel 'requests waiting / connections lent (count)' } else { unset ylabel }
    if (pvalues(p) == 0) { @NO_VALUES }
    plot for [i=1:pn(p)] f index i-1 using 1:'waiting' with lines lw 2.5 lc rgb pcolor(p,i) title columnheader(1), \
         for [i=1:pn(p)] f index i-1 using 1:'active' with lines lw 1 lc rgb pcolor(p,i) notitle, \
         keyentry with lines lw 1 lc rgb '#555555' title 'thin: connections lent out'
    unset label 1001; unset label 1002
    @VALUES_RESET; set yrange [0:*]
}
unset multiplot
