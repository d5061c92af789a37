"""Tomcat's JVM probe while a cell runs: attached in the background, its connector and database pool figures
for the window."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from ..sampling import db_pool
from ..sampling.jvm_probe import JvmProbeError, connection_counts, db_pool_counts


class BackgroundJvmProbe:
    """The JVM probe (connector pool, collector, processor count), attached in the background: attaching
    takes a second or two, which neither the server's start nor the warm-up need wait for. Until it answers,
    pool figures are empty. Made as the server starts (on a host that lets it attach to a starting JVM), it is
    told when the server answers (server_ready), and asks the probe to query the MBean names again then."""

    NAMES_TOKEN = 1

    def __init__(self, pid: int, cell_dir: Path, host, interval_s: float = 0.25, **probe_options):
        """probe_options: JvmProbe's pool_match and pool_pick, where the pool is not Tomcat's http connector."""
        self.cell_dir = cell_dir
        raw_out = cell_dir / "jvm-probe.jsonl"
        self.probe = host.jvm_probe(pid, interval_s=interval_s, raw_out=raw_out, **probe_options)
        self.started, self.stopping = threading.Event(), threading.Event()
        self.failed = False
        self.names_asked = False  # a line with names_token: NAMES_TOKEN is what wait_attached waits for
        self.stopped = False
        self.thread = threading.Thread(target=self._run, name="jvm-probe", daemon=True)
        self.thread.start()

    def server_ready(self) -> None:
        """The server answers: every MBean it registers at start exists now. A probe launched before this queried
        their names early, perhaps before some existed; it is asked to query them again (one not launched yet will
        query them after this anyway)."""
        if self.probe.launched:
            self.names_asked = self.probe.ask_names(self.NAMES_TOKEN)

    def _run(self) -> None:
        """Starts the probe, then stays until it is stopped: a remote probe's ssh client carries a parent-death
        signal, which follows the thread that started it."""
        try:
            self.probe.start()
        except (JvmProbeError, OSError) as e:
            self.failed = True
            (self.cell_dir / "jvm-probe.error").write_text(str(e))
        finally:
            self.started.set()
        self.stopping.wait()

    def latest(self):
        return self.probe.latest()

    def wait_attached(self, timeout_s: float) -> None:
        """Until the probe has attached and read the JVM once, has failed, or timeout_s has passed: a window
        opened before that has no pool or connection figures (seed004-quick's Tomcat pool-16 cell read none
        when the probe attached 2 s into its 4 s window)."""
        deadline = time.monotonic() + timeout_s
        if not self.started.wait(timeout=timeout_s):
            return
        while (
            not self.failed
            and not self.read_after_ready()
            and self.probe.returncode is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.02)

    def read_after_ready(self) -> bool:
        """A line that read the MBeans the server has once it answers: any line, or when the probe was asked to
        query their names again, a line from its next query on."""
        line = self.probe.latest_line()
        if line is None:
            return False
        return not self.names_asked or self.probe.names_answered(self.NAMES_TOKEN)

    def waiting_now(self) -> int | None:
        """Requests waiting for one of HikariCP's connections at the probe's last reading; None without a pool."""
        pools = (self.probe.latest_line() or {}).get("db_pools") or []
        counts = [pool.get("waiting") for pool in pools if isinstance(pool.get("waiting"), int)]
        return sum(max(0, c) for c in counts) if counts else None

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.started.wait(timeout=self.probe.start_timeout_s + 5)
        self.probe.stop()
        self.stopping.set()
        self.thread.join(timeout=5)
        if self.probe.stderr_tail.strip():  # what the probe said about itself (attach, JMX), kept with the cell
            (self.cell_dir / "jvm-probe.stderr").write_text(self.probe.stderr_tail)
        rows = db_pool_counts(self.cell_dir / "jvm-probe.jsonl")
        if rows:
            db_pool.write_series(self.cell_dir / db_pool.SERIES_FILE, rows)

    def figures(self, t0: float, t1: float) -> dict:
        probe_lines = self.cell_dir / "jvm-probe.jsonl"
        return {
            "jvm": self.probe.jvm_info,
            "tomcat_connection_count_peak": connections_peak(probe_lines, t0, t1),
            **db_pool.peaks(db_pool_counts(probe_lines), t0, t1),
        }


def connections_peak(probe_lines: Path, t0: float, t1: float) -> int | None:
    """The most connections Tomcat held at once in the window (the connector's connectionCount). Beyond
    maxConnections the others wait outside Tomcat (acceptCount + 1 in the kernel's accept queue, the rest
    half-open) and the client counts no error for them: this is the only place a record shows them."""
    return max((n for t, n in connection_counts(probe_lines) if t0 <= t <= t1), default=None)
