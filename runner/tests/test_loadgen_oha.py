"""oha adapter (open loop): command line, parser on captured runs, exact percentiles, and a live run."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest
from test_loadgen_support import open_loop_against_tornado
from test_loadgen_support import open_loop_spec as spec

from crossbench import loadgen
from crossbench.loadgen import oha, openloop
from crossbench.loadgen.base import ERROR_KINDS, LoadgenError

FIXTURES = Path(__file__).parent / "fixtures" / "loadgen" / "oha"
CASES = ("normal", "not_found", "closed_port", "queueing")


def durations_ms(case: str) -> list[float]:
    """The duration column of the fixture's database, read directly (not through the adapter)."""
    with sqlite3.connect(FIXTURES / case / "oha.sqlite") as db:
        return sorted(row[0] * 1000 for row in db.execute("SELECT duration FROM oha"))


# --- command line -------------------------------------------------------------------------------


def test_command_is_open_loop_with_latency_correction():
    cmd = oha.build_command(spec(cpus=(0,), threads=2), Path("/cell"))
    assert cmd[:3] == ["taskset", "-c", "0"]
    joined = " ".join(cmd)
    for part in (
        "-q 200 --latency-correction",
        "-z 2000ms",
        "-c 10",
        "-t 5000ms",
        "-w",
        "--worker-threads 2",
        "--db-url /cell/oha.sqlite",
        "--output-format json -o /cell/oha.json",
    ):
        assert part in joined
    assert cmd[-1] == "http://127.0.0.1:8080/hello" and "--disable-keepalive" not in cmd


def test_several_urls_go_through_a_file_and_close_is_honoured():
    cmd = oha.build_command(spec(urls=("http://h/a", "http://h/b"), keepalive=False), Path("/cell"))
    assert cmd[-2:] == ["--urls-from-file", "/cell/oha.urls"] and "--disable-keepalive" in cmd


@pytest.mark.parametrize("bad", [dict(rate=0), dict(pipeline=2), dict(urls=()), dict(concurrency=0)])
def test_refused_specs(bad):
    with pytest.raises(LoadgenError):
        oha.build_command(spec(**bad))


def test_without_a_rate_it_runs_a_held_closed_loop_for_the_whole_process():
    """No rate: a closed loop (no -q, no latency correction) for the held time, the window and the tail."""
    cmd = oha.build_command(spec(rate=None, duration_s=4, held_s=2.5, tail_s=1.5))
    assert "-q" not in cmd and "--latency-correction" not in cmd
    assert cmd[cmd.index("-z") + 1] == "8000ms" and "-w" in cmd
    assert oha.build_command(spec(rate=100.0, duration_s=4))[cmd.index("-z") + 1] == "4000ms"


def test_a_held_open_loop_runs_at_its_rate_for_the_whole_process():
    """A rate and a held window: the schedule (-q, latency correction) for the load before, the window and the
    tail, in one process."""
    cmd = oha.build_command(spec(rate=100.0, duration_s=4, held_s=2.5, tail_s=1.0))
    assert cmd[cmd.index("-q") + 1] == "100" and "--latency-correction" in cmd
    assert cmd[cmd.index("-z") + 1] == "7500ms"


@pytest.mark.spawns  # oha
def test_registered_and_found_in_the_tools_cache(tmp_path, monkeypatch):
    assert loadgen.get("oha") is oha.GENERATOR
    monkeypatch.setenv("CROSSBENCH_TOOLS", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert not oha.available()
    binary = tmp_path / "oha-1.16.0" / "bin" / "oha"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\necho oha 1.16.0\n")
    binary.chmod(0o755)
    assert oha.available() and oha.binary() == str(binary) and oha.version() == "1.16.0"


# --- percentiles and merging ----------------------------------------------------------------------


def test_nearest_rank():
    values = list(range(1, 1001))
    assert [openloop.percentile(values, p) for p in ("50", "90", "99", "99.9")] == [500, 900, 990, 999]
    assert openloop.percentile([7.0], "99.9") == 7.0 and openloop.percentile([], "50") is None
    assert openloop.percentile([1, 2, 3], "50") == 2 and openloop.percentile([1, 2, 3, 4], "50") == 2


def test_merge_is_the_union_of_rows():
    a, b = oha.requests(FIXTURES / "normal"), oha.requests(FIXTURES / "not_found")
    merged = openloop.latency(openloop.merge(a, b))
    assert merged == openloop.summarize(durations_ms("normal") + durations_ms("not_found"))
    assert merged["max"] == pytest.approx(6.622149)  # not_found's slowest


# --- parser on real oha runs (see fixtures/loadgen/oha/README.md) --------------------------------


@pytest.mark.parametrize("case", CASES)
def test_percentiles_are_exact_and_agree_with_oha(case):
    result = oha.parse(FIXTURES / case)
    values = durations_ms(case)
    assert set(result.errors) == set(ERROR_KINDS)
    if not values:
        assert set(result.latency_ms.values()) == {None}
        return
    n = len(values)
    tool = json.loads((FIXTURES / case / "oha.json").read_text())
    assert result.latency_ms["max"] == pytest.approx(tool["summary"]["slowest"] * 1000)
    assert result.latency_ms["mean"] == pytest.approx(tool["summary"]["average"] * 1000)
    for key, p in openloop.PERCENTILES.items():
        ours = result.latency_ms[key]
        assert ours == values[math.ceil(float(p) * n / 100 - 1e-9) - 1]  # nearest rank
        theirs = tool["latencyPercentiles"][f"p{p}"] * 1000  # oha: floor(p n / 100), 0-based
        assert theirs == pytest.approx(values[min(int(float(p) / 100 * n), n - 1)])
        assert theirs == pytest.approx(ours) or (float(p) * n / 100).is_integer()


def test_normal():
    result = oha.parse(FIXTURES / "normal")
    assert result.requests == 400 and result.error_count == 0 and result.bytes == 2740
    assert result.duration_s == 2 and result.rps == pytest.approx(400 / (2 - 0.00328446))  # rate_achieved
    assert result.latency_ms["p99"] == pytest.approx(5.092771) and result.latency_ms["max"] == pytest.approx(6.455407)
    x = result.extra
    assert (x["rate"], x["rate_answered"], x["rate_sent"], x["never_sent"]) == (200, 200, 200, 0)
    # 400 answers between the first (at 3.3 ms) and the window's end: 400 / 1.9967 s
    assert x["rate_achieved"] == pytest.approx(400 / (2 - 0.00328446))
    assert x["schedule_lag_exact"] and x["schedule_lag_ms"]["max"] == pytest.approx(2.838068)
    assert x["status_counts"] == {"200": 400} and "behind_schedule" not in x
    assert {r.url for r in oha.requests(FIXTURES / "normal")} == {"/hello", "/now"}  # oha stores the path


def test_not_found_counts_non_2xx_and_keeps_their_latency():
    result = oha.parse(FIXTURES / "not_found")
    assert result.requests == 200 and result.errors["non_2xx"] == 200 and result.error_count == 200
    assert result.extra["status_counts"] == {"404": 200}
    assert result.latency_ms["p50"] == pytest.approx(1.171768)
    # the machine was busy (k6 compiling) during this capture: the ticker ran late at its tail (p99 5.2 ms, on
    # two of 200 lags), but the lag judged (p97.5, five lags above it) is 3.2 ms: not behind its schedule
    lags = result.extra["schedule_lag_ms"]
    assert lags["p99"] == pytest.approx(5.189157)
    assert lags["judged"] == {"percentile": 97.5, "ms": pytest.approx(3.235785), "samples": 200}
    assert "behind_schedule" not in result.extra


def test_closed_port_is_connect_errors_only():
    result = oha.parse(FIXTURES / "closed_port")
    assert result.requests == 0 and result.errors["connect"] == 100 and result.error_count == 100
    assert result.extra["error_messages"] == {"Connection refused (os error 111)": 100}
    assert result.extra["rate_achieved"] == 0 and result.extra["never_sent"] == 0
    assert result.extra["schedule_lag_ms"]["p99"] is None and not result.extra["schedule_lag_exact"]


def test_queueing_server_shows_growing_latency_and_unsent_ticks():
    # /delay/sync?ms=20 on one Tornado loop serves 50 req/s; 100 req/s offered with 4 connections
    result = oha.parse(FIXTURES / "queueing")
    x = result.extra
    assert result.requests == 93 and result.error_count == 0
    assert x["rate_answered"] == 46.5 and x["scheduled"] == 200 and x["never_sent"] == 107
    assert x["rate_achieved"] == pytest.approx(45.06, abs=0.01)  # 3 answers came after the window's end
    assert result.rps == x["rate_achieved"]  # what the server did in the window, not its late answers
    assert result.latency_ms["max"] == pytest.approx(1168.013665) and result.latency_ms["p50"] == pytest.approx(
        576.680727
    )
    assert x["latency_slope_ms_per_s"] > 1000  # each second of the window adds a second of queue
    assert x["queue_wait_ms"]["max"] == pytest.approx(1068.36556)
    assert "behind_schedule" not in x  # the server fell behind, not oha's ticker


@pytest.mark.parametrize(
    "message, kind",
    [
        ("Connection refused (os error 111)", "connect"),
        ("timeout", "timeout"),
        ("connection closed before message completed", "read"),
        ("Connection reset by peer (os error 104)", "read"),
        ("Broken pipe (os error 32)", "write"),
        ("aborted due to deadline", None),
        ("something new", "other"),
    ],
)
def test_error_kinds(message, kind):
    assert oha.error_kind(message) == kind


# --- live --------------------------------------------------------------------------------------


@pytest.mark.live
def test_live_rate_is_kept_against_tornado(tmp_path):
    result = open_loop_against_tornado(oha, 100, tmp_path)
    assert result.requests == 200 and result.error_count == 0 and result.extra["never_sent"] == 0
    assert result.latency_ms["p50"] < 50
    assert {Path(p).name for p in result.raw_files} >= {"oha.json", "oha.sqlite", "oha.spec.json", "oha.stderr"}


# --- a held open-loop window, from rows written as oha writes them ------------------------------


def write_held_run(
    out: Path,
    ticks: list[tuple[float, float]],
    *,
    rate: float,
    held_s: float,
    window_s: float,
    tail_s: float,
    launched_at: float = 1000.0,
    concurrency: int = 3,
) -> Path:
    """oha's three files for a run whose request i was fired at `ticks[i][0]` and answered after `ticks[i][1]` s."""
    out.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(out / "oha.sqlite") as db:
        db.execute(
            "CREATE TABLE oha (url TEXT NOT NULL, start REAL NOT NULL, start_latency_correction REAL, "
            "end REAL NOT NULL, duration REAL NOT NULL, status INTEGER NOT NULL, len_bytes INTEGER NOT NULL, "
            "run INTEGER NOT NULL)"
        )
        db.executemany(
            "INSERT INTO oha VALUES (?, ?, ?, ?, ?, 200, 2, 0)",
            [("http://h/d", fired, fired, fired + took, took) for fired, took in ticks],
        )
    (out / "oha.json").write_text(
        json.dumps(
            {"summary": {"total": held_s + window_s + tail_s}, "errorDistribution": {}, "latencyPercentiles": {}}
        )
    )
    (out / "oha.spec.json").write_text(
        json.dumps(
            {
                "rate": rate,
                "window_s": window_s,
                "concurrency": concurrency,
                "held_s": held_s,
                "tail_s": tail_s,
                "launched_at": launched_at,
            }
        )
    )
    return out


def test_a_held_open_loop_window_is_the_requests_its_schedule_fired_inside_it(tmp_path):
    """10 req/s for 1 s before a 2 s window and 1 s after: the window's latency is its 20 requests' (one slow), its
    throughput every answer that came inside it, the requests fired before it included, and its bounds are epochs."""
    ticks = [(i / 10, 0.5 if i == 15 else 0.2) for i in range(40)]
    result = oha.parse(write_held_run(tmp_path, ticks, rate=10, held_s=1.0, window_s=2.0, tail_s=1.0))
    assert result.requests == 20 and result.duration_s == 2.0
    assert result.latency_ms["p50"] == pytest.approx(200) and result.latency_ms["max"] == pytest.approx(500)
    assert result.rps == pytest.approx(10.0) and result.extra["rate_achieved"] == pytest.approx(10.0)
    assert result.extra["window_epoch"] == [1001.0, 1003.0] and result.extra["run_requests"] == 40
    window = result.extra["held_window"]
    assert (window["sent"], window["answered"], window["finished_after_load"]) == (20, 20, 0)
    assert result.extra["schedule_lag_ms"]["max"] == pytest.approx(0.0, abs=1e-6)
    assert "held window" in result.latency_source


def test_a_held_open_loop_window_counts_its_requests_answered_after_the_load(tmp_path):
    """A server that fell behind: the window's last requests are answered after the load stopped (counted)."""
    ticks = [(i / 10, 0.2 + max(0.0, i / 10 - 1.0)) for i in range(40)]  # from 1 s on, each waits longer
    result = oha.parse(write_held_run(tmp_path, ticks, rate=10, held_s=1.0, window_s=2.0, tail_s=1.0))
    assert result.extra["held_window"]["finished_after_load"] > 0
    assert result.latency_ms["max"] > 2000 and result.extra["latency_slope_ms_per_s"] > 900


def test_held_open_loop_windows_of_several_load_hosts_merge_into_one(tmp_path):
    """Two load hosts at 5 req/s each, held the same way: one window of both hosts' requests fired inside it, and
    every answer that came inside it."""
    ticks = [(i / 5, 0.2) for i in range(20)]
    parts = [
        (host, oha.parse(write_held_run(tmp_path / host, ticks, rate=5, held_s=1.0, window_s=2.0, tail_s=1.0)), None)
        for host in ("a", "b")
    ]
    merged = oha.merge_hosts(parts)
    assert merged.requests == 20 and merged.extra["run_requests"] == 40
    assert merged.rps == pytest.approx(10.0) and merged.extra["rate_achieved"] == pytest.approx(10.0)
    assert merged.extra["window_epoch"] == [1001.0, 1003.0] and merged.latency_ms["p50"] == pytest.approx(200)


def test_held_closed_loop_windows_of_several_load_hosts_are_one_cut_on_one_time_line(tmp_path):
    """Two load hosts of 2 connections each, back-to-back 250 ms answers; the second host's tool started 0.5 s
    late (its tether said so, launched_at). The window is cut once from all four connections on the first host's
    time line: the second host's requests sent 0.5-1 s into its own run (900 ms each) fall inside it."""

    def connections(slow_from: float | None = None) -> list[tuple[float, float]]:
        sent = [k * 0.25 for k in range(16)] * 2
        return [(t, 0.9 if slow_from is not None and slow_from <= t < slow_from + 0.5 else 0.25) for t in sent]

    runs = {"a": (connections(), 1000.0), "b": (connections(slow_from=0.5), 1000.5)}
    parts = [
        (
            host,
            oha.parse(
                write_held_run(
                    tmp_path / host,
                    ticks,
                    rate=None,
                    held_s=1.0,
                    window_s=2.0,
                    tail_s=1.0,
                    launched_at=launched,
                    concurrency=2,
                )
            ),
            None,
        )
        for host, (ticks, launched) in runs.items()
    ]
    merged = oha.merge_hosts(parts)
    assert merged.extra["concurrency"] == 4 and merged.extra["window_epoch"] == [1001.0, 1003.0]
    assert merged.latency_ms["max"] == pytest.approx(900) and merged.extra["held_window"]["sent"] == 32


def test_a_held_closed_loop_runs_spectrum_is_the_requests_its_record_counts(tmp_path):
    """Two connections whose first requests took 1.5 s: the window opens when the queue settled (1.5 s, not the
    planned 1 s) and closes a quarter into the tail (3.25 s). A 900 ms request sent at 3.1 s is in it, and the
    spectrum's percentiles are the record's."""
    steady = [(1.5 + k * 0.25, 0.25) for k in range(10)] * 2
    ticks = [(0.0, 1.5), (0.0, 1.5), *steady, (3.1, 0.9)]
    out = write_held_run(tmp_path, ticks, rate=None, held_s=1.0, window_s=2.0, tail_s=1.0, concurrency=2)
    result = oha.parse(out)
    assert result.extra["held_window"]["opened_s"] == 1.5 and result.extra["held_window"]["closed_s"] == 3.25
    curve = dict(oha.window_percentiles(out, [50, 100]))
    assert curve[100] == pytest.approx(900) == result.latency_ms["max"]
    assert curve[50] == pytest.approx(result.latency_ms["p50"])
