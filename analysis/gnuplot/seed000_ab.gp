# seed000_ab.gp: seed 000's table as bars, one group per cell (server and endpoint): the article's figure
# (grey; Tornado only), ab's here (coloured), and ab's without its lone first request (hatched).
# Left: requests per second; right: ab's "Time per request (mean)" = C x time taken / n. Log scales.
# Data (file_1): one block, a row per cell: x label article_rps ab_rps startup_free_rps article_tpr_ms
# ab_tpr_ms startup_free_tpr_ms valid repetition cell_id, then each figure's point mean and 95 % interval over
# launches (<figure>_mean _lo _hi): black bars on ab's two bars. Parameters: common.gp, and ncells, label_1..label_N.
# rps_lo, rps_hi, tpr_lo, tpr_hi: the two log axes' ranges (from the data). A flagged cell (valid = 0) gets a
# large hollow circle on its ab bar.
load 'common.gp'
set multiplot layout 1,2 title title font ',14' @MARGINS
f = file_1
w = 0.26
set style fill solid 0.85 border lc rgb '#333333'
set logscale y 10
set offsets 0, 0, 0, 0
set xrange [0.4:ncells + 0.6]
set xtics () font ',10'
do for [i=1:ncells] { set xtics add (value(sprintf('label_%d', i)) i) }
set key top left
ART = '#9e9e9e'; AB = '#1f78b4'; FREE = '#d95f02'

set ylabel 'requests per second (log scale)'
if (pvalues(1) == 0) { @NO_VALUES }
set yrange [rps_lo:rps_hi]
plot f index 0 using ($1-w):(column('article_rps')):($1-1.5*w):($1-0.5*w):(rps_lo):(column('article_rps')) \
         with boxxyerror fs solid 0.85 lc rgb ART title 'the article (ab 2.3, Tornado 4.2.1)', \
     '' index 0 using ($1):(column('ab_rps')):($1-0.5*w):($1+0.5*w):(rps_lo):(column('ab_rps')) \
         with boxxyerror fs solid 0.85 lc rgb AB title 'ab here', \
     '' index 0 using ($1+w):(column('startup_free_rps')):($1+0.5*w):($1+1.5*w):(rps_lo):(column('startup_free_rps')) \
         with boxxyerror fs pattern 4 lc rgb FREE title 'ab here, without its lone first request', \
     '' index 0 using ($1):'ab_rps_mean':'ab_rps_lo':'ab_rps_hi' with yerrorbars ps 0 lw 1.5 lc rgb 'black' \
         notitle, \
     '' index 0 using ($1+w):'startup_free_rps_mean':'startup_free_rps_lo':'startup_free_rps_hi' with yerrorbars \
         ps 0 lw 1.5 lc rgb 'black' notitle, \
     keyentry with yerrorbars ps 0 lw 1.5 lc rgb 'black' title interval_title, \
     '' index 0 using ($1):(flagged_y('ab_rps')) with points pt 6 ps 3 lw 2 lc rgb 'black' notitle, \
     keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title, \
     '' index 0 using ($1-w):(column('article_rps')*1.12):(sig2(column('article_rps'))) with labels font ',9' notitle, \
     '' index 0 using ($1):(column('ab_rps')*1.12):(sig2(column('ab_rps'))) with labels font ',9' notitle, \
     '' index 0 using ($1+w):(column('startup_free_rps')*1.12):(sig2(column('startup_free_rps'))) with labels font ',9' notitle
unset label 1001
unset label 1002

set ylabel "ab's Time per request, mean = C x time taken / n (ms, log scale)"
set yrange [tpr_lo:tpr_hi]
unset key
plot f index 0 using ($1-w):(column('article_tpr_ms')):($1-1.5*w):($1-0.5*w):(tpr_lo):(column('article_tpr_ms')) \
         with boxxyerror fs solid 0.85 lc rgb ART notitle, \
     '' index 0 using ($1):(column('ab_tpr_ms')):($1-0.5*w):($1+0.5*w):(tpr_lo):(column('ab_tpr_ms')) \
         with boxxyerror fs solid 0.85 lc rgb AB notitle, \
     '' index 0 using ($1+w):(column('startup_free_tpr_ms')):($1+0.5*w):($1+1.5*w):(tpr_lo):(column('startup_free_tpr_ms')) \
         with boxxyerror fs pattern 4 lc rgb FREE notitle, \
     '' index 0 using ($1):'ab_tpr_ms_mean':'ab_tpr_ms_lo':'ab_tpr_ms_hi' with yerrorbars ps 0 lw 1.5 \
         lc rgb 'black' notitle, \
     '' index 0 using ($1+w):'startup_free_tpr_ms_mean':'startup_free_tpr_ms_lo':'startup_free_tpr_ms_hi' \
         with yerrorbars ps 0 lw 1.5 lc rgb 'black' notitle, \
     '' index 0 using ($1-w):(column('article_tpr_ms')*1.08):(sig2(column('article_tpr_ms'))) with labels rotate by 90 left font ',9' notitle, \
     '' index 0 using ($1):(column('ab_tpr_ms')*1.08):(sig2(column('ab_tpr_ms'))) with labels rotate by 90 left font ',9' notitle, \
     '' index 0 using ($1+w):(column('startup_free_tpr_ms')*1.08):(sig2(column('startup_free_tpr_ms'))) with labels rotate by 90 left font ',9' notitle
unset multiplot
