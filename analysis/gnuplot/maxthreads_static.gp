# maxthreads_static.gp: the static mix's responses per second per Tomcat setting, a series per number of
# clients: the mean of the launches as a point, its 95 % interval as a bar (none with one launch).
# Data: file_1, a block per concurrency (x setting rps_mean rps_min rps_max cells rps_lo rps_hi).
# Parameters (beyond common.gp): nsettings.
load 'common.gp'
set multiplot layout 1,1 title title font ',14' @MARGINS
set xlabel 'Tomcat setting'
set ylabel 'responses per second (req/s: requests / measured window)'
set xrange [-0.6:nsettings - 0.4]
set yrange [0:*]
p = 1
f = pfile(p)
n = pn(p)
off(i) = (i - (n + 1) / 2.0) * 0.14
# the settings' names once, under their centre (each series sits a little to one side of it); the data file
# writes their spaces as _ ("tomcat_maxThreads=50"): spaced(s) gives them back
spaced(s) = strstrt(s, "_") ? s[1:strstrt(s, "_") - 1] . " " . spaced(s[strstrt(s, "_") + 1:]) : s
plot f index 0 using 1:(NaN):xtic(spaced(strcol(2))) notitle, \
     for [i=1:n] f index i-1 using ($1 + off(i)):3 with points pt 7 ps 1.5 lc rgb pcolor(p,i) \
         title columnheader(1), \
     for [i=1:n] f index i-1 using ($1 + off(i)):'rps_mean':'rps_lo':'rps_hi' with yerrorbars ps 0 lw 2 \
         lc rgb pcolor(p,i) notitle, \
     keyentry with yerrorbars ps 0 lw 2 lc rgb '#555555' title interval_title
unset multiplot
