"""vegeta in a held window (loadgen/vegeta.py): its command line, and the parser on real captured runs
(fixtures/loadgen/vegeta, README there): one row per request sent, the window cut by held.py, errors from the rows."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from test_loadgen_support import open_loop_spec

from crossbench import loadgen
from crossbench.loadgen import held, vegeta
from crossbench.loadgen.base import LoadgenError

FIXTURES = Path(__file__).parent / "fixtures" / "loadgen" / "vegeta"


def held_spec(**changes):
    """A held closed loop: no rate, 1 s held before a 2 s window and 0.5 s after it."""
    return open_loop_spec(**{"rate": None, "held_s": 1.0, "tail_s": 0.5, **changes})


def parsed(case: str):
    return vegeta.parse(FIXTURES / case, tool_version="12.13.0")


def csv_rows(case: str) -> list[list[str]]:
    """The fixture's rows, read directly (not through the adapter)."""
    with open(FIXTURES / case / "vegeta.csv", newline="") as handle:
        return list(csv.reader(handle))


# --- command line ---------------------------------------------------------------------------------


def test_a_held_run_is_c_workers_at_rate_zero_for_the_held_time_the_window_and_the_tail():
    cmd = vegeta.build_command(held_spec(concurrency=400, cpus=(0,)), Path("/cell"))
    assert cmd[:3] == ["taskset", "-c", "0"] and cmd[4] == "attack"
    options = dict(zip(cmd[5::2], cmd[6::2]))
    assert options["-rate"] == "0" and options["-workers"] == options["-max-workers"] == "400"
    assert options["-duration"] == "3500ms" and options["-timeout"] == "5000ms"  # 1 + 2 + 0.5 s
    assert options["-targets"] == "/cell/vegeta.targets" and options["-output"] == "/cell/vegeta.bin"
    assert cmd[-1] == "-keepalive=true"
    assert vegeta.build_command(held_spec(keepalive=False))[-1] == "-keepalive=false"
    assert vegeta.encode_command(Path("/cell"))[1:] == ["encode", "-to", "csv", "-output", "/cell/vegeta.csv"] + [
        "/cell/vegeta.bin"
    ]


@pytest.mark.parametrize(
    "changes, said",
    [
        ({"rate": 100.0}, "closed loop here"),
        ({"requests": ({"method": "POST", "path": "/p", "headers": {}, "body": "", "weight": 1},)}, "plain GETs"),
        ({"pipeline": 2}, "pipeline"),
        ({"concurrency": 0}, "concurrency >= 1"),
    ],
)
def test_what_it_cannot_run_is_refused_with_why(changes, said):
    with pytest.raises(LoadgenError, match=said):
        vegeta.build_command(held_spec(**changes))


@pytest.mark.spawns  # the stand-in binary, for its version
def test_registered_as_a_held_window_generator_found_in_the_tools_cache(tmp_path, monkeypatch):
    assert loadgen.get("vegeta") is vegeta.GENERATOR and vegeta.GENERATOR.holds_window
    assert not vegeta.GENERATOR.open_loop and vegeta.GENERATOR.on_load_hosts == "build"
    monkeypatch.setenv("CROSSBENCH_TOOLS", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert not vegeta.available()
    binary = tmp_path / "vegeta-12.13.0" / "bin" / "vegeta"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\nprintf 'Version: v12.13.0\\nCommit: \\n'\n")
    binary.chmod(0o755)
    assert vegeta.available() and vegeta.binary() == str(binary) and vegeta.version() == "12.13.0"


# --- parser on captured runs ----------------------------------------------------------------------


def test_tomcats_queue_reads_its_truth_from_the_held_window():
    """4 workers on 2 Tomcat threads at 100 ms: every answer waits 2 rounds (200 ms), 20 answers a second, Little's
    law 4 in flight; the window opens once the cold burst has settled."""
    result = parsed("tomcat_queue")
    window = result.extra["held_window"]
    assert result.tool == "vegeta" and "held window" in result.latency_source
    assert window["opened_s"] >= 0.5 and not window["short"] and window["finished_after_load"] == 0, window
    assert result.latency_ms["mean"] == pytest.approx(200, rel=0.1)  # 2 rounds, and Tomcat's few ms each
    assert result.rps == pytest.approx(20, rel=0.06)
    assert result.rps * result.latency_ms["mean"] / 1000 == pytest.approx(4, rel=0.02)
    assert result.error_count == 0 and result.extra["status_counts"] == {"200": 40}
    assert result.extra["run_requests"] == len(csv_rows("tomcat_queue")) == 40


def test_rows_are_the_answered_requests_with_their_send_and_end_from_the_earliest_send():
    rows = vegeta.requests(FIXTURES / "held")
    sent = csv_rows("held")
    first = min(int(r[0]) for r in sent)
    assert len(rows) == len(sent) == 153 and min(r.start_s for r in rows) == 0
    assert [r.start_s for r in rows] == sorted((int(r[0]) - first) / 1e9 for r in sent)
    assert all(r.end_s - r.start_s == pytest.approx(r.latency_ms / 1000, abs=1e-9) for r in rows)
    assert {r.bytes for r in rows} == {2} and {r.status for r in rows} == {200}


def test_the_window_is_held_cut_on_those_rows():
    """No second copy of the cut: the record is held.run_figures on the rows."""
    result = parsed("held")
    rows = vegeta.requests(FIXTURES / "held")
    window = held.cut(rows, concurrency=4, held_s=0.5, window_s=1.0, load_stopped_s=2.0)
    assert result.requests == len(window.answered) == 76 and result.bytes == 2 * 76
    assert result.rps == pytest.approx(window.rate) and result.duration_s == pytest.approx(window.length_s)
    assert result.latency_ms == held.latency(window.sent)


def test_load_hosts_runs_are_one_population_on_this_machines_clock(tmp_path):
    """Two hosts' runs merge into one window over all their requests: the same run twice, the second on a host
    whose clock runs 2.5 s ahead, is twice the answers and workers with the same latency."""
    ahead = tmp_path / "ahead"
    shutil.copytree(FIXTURES / "tomcat_queue", ahead)
    spec = json.loads((ahead / "vegeta.spec.json").read_text())
    (ahead / "vegeta.spec.json").write_text(json.dumps({**spec, "clock_offset_s": 2.5}))
    with open(ahead / "vegeta.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([str(int(r[0]) + 2_500_000_000), *r[1:]] for r in csv_rows("tomcat_queue"))
    one = parsed("tomcat_queue")
    both = vegeta.merge_hosts([("a", one, 10.0), ("b", vegeta.parse(ahead, tool_version="12.13.0"), 12.0)])
    assert both.extra["concurrency"] == 8 and both.extra["run_requests"] == 80 and both.extra["hosts"] == 2
    assert both.requests == 2 * one.requests and both.rps == pytest.approx(2 * one.rps)
    assert both.latency_ms["mean"] == pytest.approx(one.latency_ms["mean"])
    assert [h["cpu_percent"] for h in both.extra["per_host"]] == [10.0, 12.0] and len(both.raw_files) > 3


@pytest.mark.parametrize(
    "case, kind, count, message",
    [
        ("refused", "connect", 311, "connect: connection refused"),
        ("reset", "read", 42, "read: connection reset by peer"),
        ("timeout", "timeout", 3, "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"),
    ],
)
def test_failed_requests_are_rows_counted_by_kind_and_message(case, kind, count, message):
    result = parsed(case)
    assert sum(1 for r in csv_rows(case) if r[1] == "0") == count
    assert result.errors[kind] == result.error_count == count and result.requests == 0
    assert result.extra["error_messages"] == {message: count}


@pytest.mark.parametrize(
    "error, plain",
    [
        (
            'Get "http://127.0.0.1:9/x": dial tcp 0.0.0.0:0->127.0.0.1:9: connect: connection refused',
            "connect: connection refused",
        ),
        ('Get "http://h/x": write tcp 127.0.0.1:5->127.0.0.1:6: write: broken pipe', "write: broken pipe"),
        ('Get "http://h/x": EOF', "EOF"),
    ],
)
def test_an_error_is_named_without_its_request_and_addresses(error, plain):
    assert vegeta.plain_message(error) == plain


def test_unreadable_output_is_refused_not_reported(tmp_path):
    (tmp_path / "vegeta.spec.json").write_text("{")
    with pytest.raises(LoadgenError, match="unreadable output"):
        vegeta.parse(tmp_path)
