"""The flags a launch's record can carry that decide how it counts in its point (figures/points.py): their names
here, on the ground floor, so that reading a record needs none of the code that raises them."""

from __future__ import annotations

# Disturbed: the launch's figures are left out of its point while the point has a launch without them
NOISY_HOST = "noisy_host"  # another process took the cores during the window (sampling/noise.py)
WINDOW_TOO_SHORT = "window_too_short"  # a held window too short for its round trips to average out (record/metrics.py)

# Caveats: the launch stays in its point and the findings say the caveat beside its figures
SERVER_CLOSED = "server_closed_connections"  # the server answers one request a connection (sampling/noise.py)
# A Tomcat launch's JFR recording, on, missing or unreadable (servers/tomcat_jfr.py): the first Tomcat start on a
# machine makes the class-data archive, and the JVM turns JFR off while it does; the window's figures stand.
JFR_UNREADABLE = "jfr_unreadable"
LATENCY_UNRECOVERABLE = "latency_unrecoverable"  # a result with latency_method "none" (loadgen/base.py)
