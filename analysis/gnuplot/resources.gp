# resources.gp: for one group or delay, vs concurrent clients: CPU of the server's process tree (solid) and of
# the load generator (dashed), system-wide CPU per core, peak RSS, and peak threads (2 x 2 panels).
# Data: file_1 (a block per series: concurrency cpu_percent loadgen_cpu_percent rss_peak_mb threads_peak valid
# repetition cell_id, then each figure's point mean and 95 % interval <figure>_mean _lo _hi) and corefile (a
# block per series and core: concurrency core_cpu_percent valid repetition cell_id core_cpu_percent_mean _lo _hi;
# ncoreblocks blocks, coloured by corecolors and dashed by coredashes, one word per block). Bars: each point's
# 95 % interval over launches (ikey says so, or that a point of one launch has none).
# Parameters: see common.gp.
load 'common.gp'
if (!exists("ncoreblocks")) ncoreblocks = 0
if (!exists("values_cpu")) values_cpu = 1
if (!exists("values_rss")) values_rss = 1
if (!exists("values_threads")) values_threads = 1
if (!exists("values_cores")) values_cores = ncoreblocks
panels = 4
set multiplot layout 2,2 title title font ',14' @MARGINS
set logscale x 10
set xlabel 'concurrent clients (log scale)'
p = 1
f = pfile(p)

set title 'CPU of the server process tree (mean over the window)' font ',12'
set ylabel 'CPU (% of one core)'
set yrange [0:*]
set offsets 0, 0, graph 0.5, 0
if (values_cpu == 0) { @NO_VALUES }
plot for [i=1:pn(p)] f index i-1 using 1:'cpu_percent_mean' smooth unique with lines lw 2.5 lc rgb pcolor(p,i) \
         dt pdash(p,i) title columnheader(1), \
     for [i=1:pn(p)] f index i-1 using 1:'loadgen_cpu_percent_mean' smooth unique with lines lw 1.5 dt 2 \
         lc rgb pcolor(p,i) notitle, \
     for [i=1:pn(p)] f index i-1 using 1:'cpu_percent_mean':'cpu_percent_lo':'cpu_percent_hi' with yerrorbars \
         ps 0 lw 1.5 lc rgb pcolor(p,i) notitle, \
     for [i=1:pn(p)] f index i-1 using 1:(valid_y('cpu_percent')) with points pt 7 ps 1.1 lc rgb pcolor(p,i) \
         notitle, \
     for [i=1:pn(p)] f index i-1 using 1:(flagged_y('cpu_percent')) with points pt 6 ps 2 lw 2 \
         lc rgb pcolor(p,i) notitle, \
     keyentry with lines dt 2 lw 1.5 lc rgb '#555555' title 'dashed: load generator', \
     keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
     keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title flagged_title
unset label 1001; unset label 1002
@VALUES_RESET

set title 'CPU per core, system-wide (mean over the window)' font ',12'
set ylabel 'core busy (% of that core)'
set yrange [0:150]
set ytics 0, 20, 100
if (ncoreblocks > 0 && values_cores > 0) {
    plot for [i=1:ncoreblocks] corefile index i-1 using 1:'core_cpu_percent_mean' smooth unique with lines lw 2 \
             lc rgb word(corecolors, i) dt int(real(word(coredashes, i))) title columnheader(1), \
         for [i=1:ncoreblocks] corefile index i-1 using 1:'core_cpu_percent_mean':'core_cpu_percent_lo':\
             'core_cpu_percent_hi' with yerrorbars ps 0 lw 1 lc rgb word(corecolors, i) notitle, \
         for [i=1:ncoreblocks] corefile index i-1 using 1:(valid_y('core_cpu_percent')) with points pt 7 \
             ps 1 lc rgb word(corecolors, i) notitle, \
         for [i=1:ncoreblocks] corefile index i-1 using 1:(flagged_y('core_cpu_percent')) with points pt 6 \
             ps 2 lw 2 lc rgb word(corecolors, i) notitle
} else {
    @NO_VALUES
    set yrange [0:150]
    set label 1004 'no per-core CPU captured'
    plot NaN notitle
    @VALUES_RESET
}
set ytics autofreq
set key off
set offsets 0, 0, graph 0.1, 0

set title 'Memory: peak resident set of the server' font ',12'
set ylabel 'resident memory, peak (MiB)'
set yrange [0:*]
if (values_rss == 0) { @NO_VALUES }
plot for [i=1:pn(p)] f index i-1 using 1:'rss_peak_mb_mean' smooth unique with lines lw 2.5 lc rgb pcolor(p,i) \
         dt pdash(p,i) notitle, \
     for [i=1:pn(p)] f index i-1 using 1:'rss_peak_mb_mean':'rss_peak_mb_lo':'rss_peak_mb_hi' with yerrorbars ps 0 lw 1.5 \
         lc rgb pcolor(p,i) notitle, \
     for [i=1:pn(p)] f index i-1 using 1:(valid_y('rss_peak_mb')) with points pt 7 ps 1.1 lc rgb pcolor(p,i) \
         notitle, \
     for [i=1:pn(p)] f index i-1 using 1:(flagged_y('rss_peak_mb')) with points pt 6 ps 2 lw 2 \
         lc rgb pcolor(p,i) notitle

set title 'Threads: peak in the window' font ',12'
set ylabel 'threads, peak (count)'
@VALUES_RESET
set yrange [0:*]
if (values_threads == 0) { @NO_VALUES }
plot for [i=1:pn(p)] f index i-1 using 1:'threads_peak_mean' smooth unique with lines lw 2.5 lc rgb pcolor(p,i) \
         dt pdash(p,i) notitle, \
     for [i=1:pn(p)] f index i-1 using 1:'threads_peak_mean':'threads_peak_lo':'threads_peak_hi' with yerrorbars ps 0 lw 1.5 \
         lc rgb pcolor(p,i) notitle, \
     for [i=1:pn(p)] f index i-1 using 1:(valid_y('threads_peak')) with points pt 7 ps 1.1 lc rgb pcolor(p,i) \
         notitle, \
     for [i=1:pn(p)] f index i-1 using 1:(flagged_y('threads_peak')) with points pt 6 ps 2 lw 2 \
         lc rgb pcolor(p,i) notitle
unset multiplot
