"""k6 adapter (open loop, the cross-check): command line and script, parser on captured runs, and a live run."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from test_loadgen_support import open_loop_against_tornado
from test_loadgen_support import open_loop_spec as spec

from crossbench import loadgen
from crossbench.loadgen import k6, openloop
from crossbench.loadgen.base import ERROR_KINDS, LoadgenError

FIXTURES = Path(__file__).parent / "fixtures" / "loadgen" / "k6"
CASES = ("normal", "not_found", "closed_port", "dropped")


def latencies_ms(case: str) -> list[float]:
    """The answered requests' crossbench_latency rows of the fixture's k6.csv, read directly (not through the
    adapter): error_code empty (200) or 1400..1599 (an HTTP error status is still an answer)."""
    with open(FIXTURES / case / "k6.csv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["metric_name"] == k6.LATENCY_METRIC]
    codes = [int(dict(p.split("=") for p in r["extra_tags"].split("&"))["err"]) for r in rows]
    return sorted(float(r["metric_value"]) for r, code in zip(rows, codes) if code == 0 or 1400 <= code < 1600)


# --- command line and script ----------------------------------------------------------------------


def test_command_writes_csv_and_summary_and_runs_the_script():
    cmd = k6.build_command(spec(cpus=(0,)), Path("/cell"))
    assert cmd[:3] == ["taskset", "-c", "0"]
    assert cmd[-1] == "/cell/k6.js" and "--out" in cmd and "csv=/cell/k6.csv" in cmd
    assert cmd[cmd.index("--summary-export") + 1] == "/cell/k6.summary.json"


def test_script_is_constant_arrival_rate_with_latency_from_the_schedule():
    text = k6.script(spec(rate=250, concurrency=40, duration_s=3, keepalive=False))
    for part in (
        "executor: 'constant-arrival-rate', rate: 250, timeUnit: '1s'",
        "duration: '3000ms'",
        "preAllocatedVUs: 40, maxVUs: 40",
        "noConnectionReuse: true",
        "const periodMs = 4.0;",
        "late + t.blocked + t.duration",
    ):
        assert part in text, part
    # k6's blocked ends when the connection is had (tracer.go: gotConn - getConn), its connect and TLS inside it
    assert "t.connecting" not in text and "t.tls_handshaking" not in text


def test_a_fractional_rate_is_counted_per_1000_seconds():
    assert "rate: 2500, timeUnit: '1000s'" in k6.script(spec(rate=2.5))


@pytest.mark.parametrize("bad", [dict(rate=0), dict(pipeline=2), dict(urls=()), dict(concurrency=0)])
def test_refused_specs(bad):
    with pytest.raises(LoadgenError):
        k6.build_command(spec(**bad))


def test_registered_and_open_loop():
    assert loadgen.get("k6") is k6.GENERATOR and k6.GENERATOR.open_loop and k6.GENERATOR.holds_window


@pytest.mark.parametrize(
    "code, kind",
    [
        (1050, "timeout"),
        (1211, "timeout"),
        (1212, "connect"),
        (1101, "connect"),
        (1201, "write"),
        (1220, "read"),
        (1000, "other"),
    ],
)
def test_error_kinds(code, kind):
    assert k6.error_kind(code) == kind


# --- parser on real k6 runs (see fixtures/loadgen/k6/README.md) ---------------------------------


@pytest.mark.parametrize("case", CASES)
def test_percentiles_are_nearest_rank_over_every_answered_request(case):
    result = k6.parse(FIXTURES / case)
    assert set(result.errors) == set(ERROR_KINDS)
    values = latencies_ms(case)
    assert result.requests == len(values)
    if not values:
        assert set(result.latency_ms.values()) == {None}
        return
    for key, p in openloop.PERCENTILES.items():
        assert result.latency_ms[key] == values[math.ceil(float(p) * len(values) / 100 - 1e-9) - 1]
    assert result.latency_ms["max"] == values[-1]
    tool = json.loads((FIXTURES / case / "k6.summary.json").read_text())["metrics"][k6.LATENCY_METRIC]
    middle = (len(values) - 1) / 2  # k6 interpolates the median
    assert values[math.floor(middle)] <= tool["med"] + 1e-9 and tool["med"] <= values[math.ceil(middle)] + 1e-9


def test_normal():
    result = k6.parse(FIXTURES / "normal")
    x = result.extra
    assert result.requests == 401 and result.error_count == 0 and result.duration_s == 2
    assert (x["rate"], x["rate_sent"], x["never_sent"], x["status_counts"]) == (200, 200.5, 0, {"200": 401})
    assert result.latency_ms["p99"] == pytest.approx(6.941251) and result.latency_ms["p999"] == pytest.approx(30.722159)
    assert x["schedule_lag_exact"] and x["schedule_lag_ms"]["p99"] == 4.0 and "behind_schedule" not in x
    assert x["tool_percentiles_ms"]["p(99.9)"] == pytest.approx(25.3565698)  # k6's own, interpolated


def test_an_http_error_status_is_an_answer_counted_as_non_2xx():
    result = k6.parse(FIXTURES / "not_found")
    assert result.requests == 201 and result.errors["non_2xx"] == 201 and result.errors["other"] == 0
    assert result.extra["status_counts"] == {"404": 201} and result.extra["error_codes"] == {"1404": 201}
    assert result.latency_ms["p50"] == pytest.approx(1.364368)


def test_closed_port_is_connect_errors_only():
    result = k6.parse(FIXTURES / "closed_port")
    assert result.requests == 0 and result.errors["connect"] == 101 and result.error_count == 101
    assert result.extra["rate_achieved"] == 0 and result.extra["error_codes"] == {"1212": 101}


def test_dropped_iterations_are_never_sent_and_do_not_blame_the_generator():
    result = k6.parse(FIXTURES / "dropped")
    x = result.extra
    assert result.requests == 98 and x["never_sent"] == 103 and not x["schedule_lag_exact"]
    assert x["rate_achieved"] == pytest.approx(47.52, abs=0.01)
    assert "behind_schedule" not in x  # the server held every VU; the lag is only an upper bound


# --- live --------------------------------------------------------------------------------------


@pytest.mark.live
def test_live_rate_is_kept_against_tornado(tmp_path):
    result = open_loop_against_tornado(k6, 50, tmp_path)
    assert result.error_count == 0 and result.extra["never_sent"] == 0 and 99 <= result.requests <= 101
    assert result.latency_ms["p50"] < 50
