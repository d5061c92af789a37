"""The database pool series: the Python servers' per-process files summed into one, and its peaks."""

from __future__ import annotations

import csv

from crossbench.sampling import db_pool


def write(path, rows):
    path.write_text("t_epoch,active,waiting,size\n" + "".join(f"{t},{a},{w},{s}\n" for t, a, w, s in rows))


def test_processes_are_summed_at_each_line_and_a_silent_process_stops_counting():
    first = [(10.0, 2, 5, 2), (10.25, 2, 7, 2), (12.0, 1, 0, 2)]
    second = [(10.1, 1, 0, 2), (10.35, 2, 3, 2)]  # then gone (killed)
    series = db_pool.summed([first, second])
    assert series == [
        (10.0, 2, 5, 2),
        (10.1, 3, 5, 4),
        (10.25, 3, 7, 4),
        (10.35, 4, 10, 4),
        (12.0, 1, 0, 2),
    ]  # at 12.0 the second's last line is 1.65 s old
    assert db_pool.peaks(series, 10.2, 11.0) == {"db_pool_active_peak": 4, "db_pool_waiting_peak": 10}
    assert db_pool.peaks(series, 20.0, 21.0) == {"db_pool_active_peak": None, "db_pool_waiting_peak": None}


def test_the_probe_writes_the_cells_series_and_skips_cut_lines(tmp_path):
    logs = tmp_path / "db-pool"
    logs.mkdir()
    write(logs / "101.csv", [(1.0, 1, 0, 4), (1.25, 4, 9, 4)])
    (logs / "102.csv").write_text("t_epoch,active,waiting,size\n1.1,2,1,4\n1.3,")  # killed mid-line
    probe = db_pool.ProcessLogProbe(logs, tmp_path)
    assert probe.latest() is None
    probe.stop()
    assert probe.figures(0, 2) == {"db_pool_active_peak": 6, "db_pool_waiting_peak": 10}
    rows = list(csv.DictReader((tmp_path / db_pool.SERIES_FILE).open()))
    assert [(r["t_epoch"], r["active"], r["waiting"], r["size"]) for r in rows] == [
        ("1.000", "1", "0", "4"),
        ("1.100", "3", "1", "8"),
        ("1.250", "6", "10", "8"),
    ]


def test_a_server_on_another_host_has_its_times_moved_onto_this_machines_clock(tmp_path):
    logs = tmp_path / "db-pool"
    logs.mkdir()
    write(logs / "7.csv", [(101.0, 2, 3, 2)])  # that host's clock runs 100 s ahead
    probe = db_pool.ProcessLogProbe(logs, tmp_path, clock_offset_s=100.0)
    assert probe.figures(0.5, 1.5) == {"db_pool_active_peak": 2, "db_pool_waiting_peak": 3}


def test_a_cell_without_pool_files_has_no_series_and_null_figures(tmp_path):
    """Schema 4: every measured record carries the pool's peaks, null without readings."""
    probe = db_pool.ProcessLogProbe(tmp_path / "db-pool", tmp_path)
    probe.stop()
    assert probe.figures(0, 1) == {"db_pool_active_peak": None, "db_pool_waiting_peak": None}
    assert not (tmp_path / db_pool.SERIES_FILE).exists()


def test_the_waiting_count_now_sums_the_processes_last_lines_and_ignores_the_gone(tmp_path):
    import time

    logs = tmp_path / "db-pool"
    logs.mkdir()
    now = time.time()
    write(logs / "1.csv", [(now - 0.5, 2, 9, 2), (now - 0.2, 2, 3, 2)])
    write(logs / "2.csv", [(now - 0.3, 1, 4, 2)])
    write(logs / "3.csv", [(now - 30, 2, 50, 2)])  # a process gone long ago
    probe = db_pool.ProcessLogProbe(logs, tmp_path)
    assert probe.waiting_now() == 7
    assert db_pool.ProcessLogProbe(tmp_path / "none", tmp_path).waiting_now() is None


def test_the_window_opens_once_the_pool_has_drained(monkeypatch):
    from crossbench.cell import cell

    class Draining:
        def __init__(self):
            self.counts = [60, 12, 0, 0]

        def waiting_now(self):
            return self.counts.pop(0)

    probe = Draining()
    monkeypatch.setattr(cell, "POOL_SETTLE_POLL_S", 0.001)
    cell.settle_pool(probe)
    assert probe.counts == [0]  # stopped at the first 0
    cell.settle_pool(None)  # no pool to wait for


def background(probe, failed=False):
    """Tomcat's background probe around a stand-in for the JVM probe, started (no thread, no process)."""
    import threading

    from crossbench.servers.tomcat import BackgroundJvmProbe

    b = BackgroundJvmProbe.__new__(BackgroundJvmProbe)
    b.probe, b.failed, b.started, b.names_asked = probe, failed, threading.Event(), False
    b.started.set()
    return b


def test_the_window_waits_for_the_jvm_probe_to_read_once_but_not_past_its_limit():
    import time

    class Attaching:
        returncode = None

        def __init__(self, empty_reads):
            self.empty_reads = empty_reads

        def latest_line(self):
            self.empty_reads -= 1
            return None if self.empty_reads >= 0 else {"type": "pool"}

    reading = background(Attaching(3))
    reading.wait_attached(5.0)
    assert reading.probe.empty_reads == -1  # waited through three empty reads, stopped at the first line
    never = background(Attaching(10**9))
    t0 = time.monotonic()
    never.wait_attached(0.3)
    assert 0.3 <= time.monotonic() - t0 < 3.0  # a probe that never reads holds the window only so long
    failed = background(Attaching(10**9), failed=True)
    t0 = time.monotonic()
    failed.wait_attached(5.0)
    assert time.monotonic() - t0 < 1.0  # a probe that failed to attach holds nothing


def test_a_probe_made_as_the_server_started_waits_for_the_names_read_once_it_answered():
    """Attached while Tomcat starts, the probe read the MBean names before some existed: told the server answers,
    it asks for them again, and the window waits for the line that read them, not any line."""
    from crossbench.servers.tomcat import BackgroundJvmProbe

    class Early:
        returncode, launched = None, True

        def __init__(self):
            self.asked, self.lines = [], 0

        def ask_names(self, token):
            self.asked.append(token)
            return True

        def latest_line(self):
            self.lines += 1
            return {"type": "pool", "pools": []}

        def names_answered(self, token):
            return token in self.asked and self.lines > 3  # the fourth line read them afresh

    b = background(Early())
    b.server_ready()
    assert b.probe.asked == [BackgroundJvmProbe.NAMES_TOKEN] and b.names_asked
    b.wait_attached(5.0)
    assert b.probe.lines == 4  # three lines from before the names were read again
    unlaunched = background(Early())
    unlaunched.probe.launched = False
    unlaunched.server_ready()  # its first names will be read after this anyway
    assert unlaunched.probe.asked == [] and not unlaunched.names_asked


def test_the_most_at_once_columns_give_the_peaks_once_their_span_is_inside_the_window(tmp_path):
    """A Python server's line carries the most lent and waiting since its previous line: an event loop's writer
    thread mostly runs between a release and the next lending, where its instant reads one connection fewer."""
    logs = tmp_path / "db-pool"
    logs.mkdir()
    (logs / "5.csv").write_text(
        "t_epoch,active,waiting,size,active_most,waiting_most\n10.0,1,9,2,2,14\n10.25,1,8,2,2,12\n10.5,1,8,2,2,11\n"
    )
    probe = db_pool.ProcessLogProbe(logs, tmp_path)
    # the window opens at 10.0: the first line's most covers 9.75-10.0, before it, so its counts stand in
    assert probe.figures(10.0, 10.3) == {"db_pool_active_peak": 2, "db_pool_waiting_peak": 12}
    assert probe.figures(9.0, 10.1) == {"db_pool_active_peak": 2, "db_pool_waiting_peak": 14}
    assert probe.figures(10.0, 10.1) == {"db_pool_active_peak": 1, "db_pool_waiting_peak": 9}
    rows = list(csv.DictReader((tmp_path / db_pool.SERIES_FILE).open()))
    assert [(r["active"], r["active_most"], r["waiting_most"]) for r in rows] == [
        ("1", "2", "14"),
        ("1", "2", "12"),
        ("1", "2", "11"),
    ]
