# capacity.gp: capacity searches' brackets, one bar per server setting. Data (file_1): a header row, then one row
# per search: label passed_rps failed_rps predicted_rps target_p99_ms. The bar reaches passed_rps (shown to hold
# the target), an error bar from it up to failed_rps (shown not to, or the generator's ceiling), a cross at
# predicted_rps. Parameters: see common.gp.
load 'common.gp'
set multiplot layout 1,1 title title font ',14' @MARGINS
set title ptitle(1) font ',12'
set key on
set style fill solid 0.35 border
set boxwidth 0.6
set yrange [0:*]
set ylabel 'offered rate (req/s)'
set xtics rotate by -20 left
set offsets 0.5, 0.5, graph 0.1, 0
f = pfile(1)
plot f using 0:'passed_rps':xtic(1) with boxes lc rgb pcolor(1,1) title 'holds the target (shown)', \
     f using 0:'passed_rps':'passed_rps':'failed_rps' with yerrorbars pt 0 lw 2 lc rgb '#b2182b' \
         title 'bracket: up to the lowest rate shown not to hold', \
     f using 0:'predicted_rps' with points pt 2 ps 2 lw 2 lc rgb 'black' title 'predicted by the parallel limit'
unset multiplot
