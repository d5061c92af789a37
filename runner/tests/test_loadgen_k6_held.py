"""k6 in a held window (loadgen/k6_held.py): its constant-vus script, and the parser on real captured runs
(fixtures/loadgen/k6_held, README there): one row per request, the window cut by held.py, errors by error_code."""

from __future__ import annotations

import csv
import dataclasses
import shutil
from pathlib import Path

import pytest
from test_loadgen_support import open_loop_spec

from crossbench.loadgen import held, k6, k6_held

FIXTURES = Path(__file__).parent / "fixtures" / "loadgen" / "k6_held"


def held_spec(**changes):
    """A held closed loop: no rate, 1 s held before a 2 s window and 0.5 s after it."""
    return open_loop_spec(**{"rate": None, "held_s": 1.0, "tail_s": 0.5, **changes})


def parsed(case: str):
    return k6.parse(FIXTURES / case, tool_version="1.8.1")


def csv_rows(case: str) -> list[dict]:
    with open(FIXTURES / case / "k6.csv", newline="") as handle:
        return list(csv.DictReader(handle))


# --- script and command line ----------------------------------------------------------------------


def test_a_held_run_is_constant_vus_for_the_held_time_the_window_and_the_tail():
    text = k6_held.script(held_spec(concurrency=400, keepalive=True))
    for part in (
        "executor: 'constant-vus', vus: 400, duration: '3500ms'",
        "noConnectionReuse: false",
        "gracefulStop: '6000ms'",  # the timeout and a second: requests in flight at the end are waited for
        "latency.add(t.blocked + t.duration, tags)",  # blocked holds a new connection's connect time already
    ):
        assert part in text, part
    assert "sleep" not in text and "t.connecting +" not in text


def test_the_command_takes_no_rate_and_names_the_same_files():
    cmd = k6.build_command(held_spec(cpus=(0,)), Path("/cell"))
    assert cmd[:3] == ["taskset", "-c", "0"] and cmd[-1] == "/cell/k6.js" and "csv=/cell/k6.csv" in cmd


def test_a_held_run_under_a_second_is_refused():
    """k6's constant-vus exits 104 on a duration under 1 s (seen capturing the fixtures): refused before it runs."""
    with pytest.raises(k6.LoadgenError, match="1 s or more"):
        k6.build_command(held_spec(duration_s=0.5, held_s=0.2, tail_s=0.2))


# --- parser on captured runs ----------------------------------------------------------------------


def test_tomcats_queue_reads_its_truth_from_the_held_window():
    """4 VUs on 2 Tomcat threads at 100 ms: every answer waits 2 rounds (200 ms), 20 answers a second, Little's law
    4 in flight; the window opens once the cold burst has settled, after the planned 0.5 s."""
    result = parsed("tomcat_queue")
    window = result.extra["held_window"]
    assert result.tool == "k6" and "constant-vus" in result.latency_source and "held window" in result.latency_source
    assert window["opened_s"] >= 0.5 and not window["short"] and window["finished_after_load"] == 0, window
    assert result.latency_ms["mean"] == pytest.approx(200, rel=0.1)  # 2 rounds, and Tomcat's few ms each
    assert result.rps == pytest.approx(20, rel=0.05)
    assert result.rps * result.latency_ms["mean"] / 1000 == pytest.approx(4, rel=0.02)
    assert result.error_count == 0 and result.extra["status_counts"] == {"200": result.extra["run_requests"]}
    assert result.extra["connections_opened"] == 4  # keep-alive: one connection a VU, for the whole run


def test_rows_are_the_requests_with_their_send_and_end_from_the_earliest_send():
    rows = k6_held.requests(FIXTURES / "tomcat_queue")
    assert min(r.start_s for r in rows) == 0 and all(r.end_s > r.start_s for r in rows)
    assert all(r.end_s - r.start_s == pytest.approx(r.latency_ms / 1000, abs=1e-6) for r in rows)
    assert [r.start_s for r in rows] == sorted(r.start_s for r in rows)


def test_a_requests_stamp_is_its_end_within_a_millisecond():
    """The script's sample is stamped when it is added; k6's own http_reqs sample carries the request's end
    (tracer.go: Trail.EndTime). Per VU, in order, they are the same requests: the stamps differ by the script's
    few statements."""
    rows = csv_rows("tomcat_queue")
    ours = sorted(int(r["timestamp"]) for r in rows if r["metric_name"] == k6_held.LATENCY_METRIC)
    ends = sorted(int(r["timestamp"]) for r in rows if r["metric_name"] == "http_reqs")
    assert len(ours) == len(ends) and max(a - b for a, b in zip(ours, ends)) < 1000  # microseconds
    assert min(a - b for a, b in zip(ours, ends)) >= 0


def test_the_window_is_held_cut_on_those_rows():
    """No second copy of the cut: the record is held.run_figures on the rows, its epochs from the earliest send."""
    rows, origin = k6_held.rows_of(k6_held.samples(FIXTURES / "tomcat_queue"))
    spec = {"window_s": 1.0, "held_s": 0.5, "tail_s": 0.4, "launched_at": origin}
    figures = held.run_figures(rows, 4, spec)
    result = parsed("tomcat_queue")
    assert result.extra["held_window"] == figures["extra"]["held_window"]
    assert result.extra["window_epoch"] == figures["extra"]["window_epoch"] and origin > 1.7e9
    assert result.latency_ms == figures["latency_ms"] and result.window_rate == figures["rate"]


def test_percentiles_are_over_the_windows_requests():
    result = parsed("tomcat_queue")
    got = dict(k6.GENERATOR.percentiles(FIXTURES / "tomcat_queue", [50, 99]))
    assert got == {50: result.latency_ms["p50"], 99: result.latency_ms["p99"]}


def test_an_open_loop_run_is_not_read_as_held(tmp_path):
    """The parser tells the two by k6.spec.json, which run() writes for a held run only."""
    shutil.copytree(FIXTURES.parent / "k6" / "normal", tmp_path / "normal")
    assert "held_window" not in k6.parse(tmp_path / "normal").extra


def test_several_load_hosts_cannot_hold_a_k6_window():
    one = parsed("tomcat_queue")
    with pytest.raises(k6.LoadgenError, match="one load host only"):
        k6.merge_hosts([("a", one, None), ("b", dataclasses.replace(one), None)])
