# maxthreads_threads.gp: peak threads of the Tomcat JVM vs maxThreads (log x), one point per setting, the line
# threads = maxThreads dotted; virtual threads as their own point at the right, labelled 'virtual'.
# Data: file_1 (max_threads threads_peak max_concurrency threads_peak_mean threads_peak_lo threads_peak_hi; a
# block per JDK when the run set JDKs against each other), virtual_file (threads_peak max_concurrency
# threads_peak_mean threads_peak_lo threads_peak_hi). _mean/_lo/_hi: the setting's point with the highest mean
# peak and its 95 % interval over launches (the bar; NaN with one launch).
# Parameters (beyond common.gp): nplatform (blocks in file_1), virtual_file, nvirtual (0 or 1), virtual_x (where
# the virtual point goes),
# maxthreads (the maxThreads values, space-separated: the x tics).
load 'common.gp'
set multiplot layout 1,1 title title font ',14' @MARGINS
set logscale x 2
set xlabel 'Tomcat maxThreads (log scale)'
set ylabel 'threads, peak over the setting''s cells (count)'
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
xlow = words(maxthreads) > 0 ? real(word(maxthreads, 1)) / 1.6 : 1
xhigh = words(maxthreads) > 0 ? real(word(maxthreads, words(maxthreads))) : 1
set xrange [xlow:virtual_x * 1.4]
set xtics ()
do for [k=1:words(maxthreads)] { set xtics add (word(maxthreads, k) real(word(maxthreads, k))) }
if (nvirtual > 0) { set xtics add ('virtual' virtual_x) }
plot (x <= xhigh * 1.05 ? x : NaN) with lines dt 3 lw 2 lc rgb '#777777' title 'threads = maxThreads', \
     for [i=0:nplatform-1] file_1 index i using 1:2 with linespoints lw 2.5 pt 7 ps 1.4 \
         lc rgb word('#d95f02 #1b9e77 #7570b3 #e7298a', i % 4 + 1) title columnheader(1), \
     for [i=0:nplatform-1] file_1 index i using 1:2:(sprintf('%d', $2)) with labels offset 0,1.2 font ',10' \
         notitle, \
     for [i=0:nplatform-1] file_1 index i using 1:'threads_peak_mean':'threads_peak_lo':'threads_peak_hi' \
         with yerrorbars ps 0 lw 1.5 lc rgb word('#d95f02 #1b9e77 #7570b3 #e7298a', i % 4 + 1) notitle, \
     virtual_file index 0 using (virtual_x):1 with points pt 9 ps 2.2 lc rgb '#a50f15' title columnheader(1), \
     virtual_file index 0 using (virtual_x):'threads_peak_mean':'threads_peak_lo':'threads_peak_hi' \
         with yerrorbars ps 0 lw 1.5 lc rgb '#a50f15' notitle, \
     keyentry with yerrorbars ps 0 lw 1.5 lc rgb '#555555' title interval_title, \
     virtual_file index 0 using (virtual_x):1:(sprintf('%d (C=%d)', $1, $2)) with labels offset 0,1.2 \
         font ',10' notitle
unset multiplot
