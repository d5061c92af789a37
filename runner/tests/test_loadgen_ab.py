"""ab adapter: command line, parser on captured ab output, per-request TSV, and a live run."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from test_loadgen_support import counting_server, need  # noqa: F401  (pytest fixture)

from crossbench.loadgen import ab
from crossbench.loadgen.base import ERROR_KINDS, LoadgenError, LoadSpec

FIXTURES = Path(__file__).parent / "fixtures" / "loadgen" / "ab"
WITH_RESULTS = sorted(p.name for p in FIXTURES.iterdir() if "Complete requests" in (p / "ab.stdout").read_text())
WITHOUT_RESULTS = sorted(p.name for p in FIXTURES.iterdir() if p.name not in WITH_RESULTS)


def spec(**overrides) -> LoadSpec:
    values = dict(urls=("http://127.0.0.1:8080/delay/sync?ms=1000",), concurrency=40, duration_s=0, timeout_s=5)
    return LoadSpec(**{**values, **overrides})


def field(case: str, label: str) -> str:
    """A 'Label:   value' line of a captured report, read independently of the adapter."""
    for line in (FIXTURES / case / "ab.stdout").read_text().splitlines():
        if line.startswith(label + ":"):
            return line.split(":", 1)[1].split()[0]
    raise KeyError(label)


def csv_rows(case: str) -> dict[int, float]:
    with open(FIXTURES / case / "ab.csv") as f:
        return {int(row[0]): float(row[1]) for row in list(csv.reader(f))[1:]}


# --- command line -----------------------------------------------------------------------------


def test_seed000_count_run(tmp_path):
    cmd = ab.build_command(spec(keepalive=False), tmp_path, ab.AbOptions(requests=200))
    assert cmd[:7] == ["ab", "-n", "200", "-c", "40", "-s", "5"]
    assert "-t" not in cmd and "-k" not in cmd and "-r" in cmd
    assert cmd[cmd.index("-g") + 1] == str(tmp_path / "ab.tsv")
    assert cmd[cmd.index("-e") + 1] == str(tmp_path / "ab.csv")
    assert cmd[-1] == spec().urls[0]


def test_time_limit_comes_before_count(tmp_path):
    cmd = ab.build_command(spec(duration_s=2.2, timeout_s=0.5), tmp_path, ab.AbOptions(requests=1000))
    assert cmd.index("-t") < cmd.index("-n")  # ab -t resets -n to 50000
    assert cmd[cmd.index("-t") + 1] == "3" and cmd[cmd.index("-s") + 1] == "1"
    assert "-n" not in ab.build_command(spec(duration_s=2), tmp_path)


def test_keepalive_pinning_and_exit_on_error(tmp_path):
    cmd = ab.build_command(
        spec(keepalive=True, cpus=(1,), duration_s=1), tmp_path, ab.AbOptions(exit_on_recv_error=True)
    )
    assert cmd[:4] == ["taskset", "-c", "1", "ab"] and "-k" in cmd and "-r" not in cmd


@pytest.mark.parametrize(
    "bad, options",
    [
        (dict(urls=("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b"), duration_s=1), None),
        (dict(pipeline=2, duration_s=1), None),
        (dict(duration_s=0), None),  # neither time nor count
        (dict(concurrency=40), ab.AbOptions(requests=10)),  # ab refuses c > n
        (dict(concurrency=20001, duration_s=1), None),
    ],
)
def test_refused_specs(tmp_path, bad, options):
    with pytest.raises(LoadgenError):
        ab.build_command(spec(**bad), tmp_path, options)


# --- parser on real ab output -----------------------------------------------------------------


@pytest.mark.parametrize("case", WITH_RESULTS)
def test_parse_matches_the_report(case):
    result = ab.parse(FIXTURES / case, tool_version="2.3")
    complete = int(field(case, "Complete requests"))
    failed = re.search(r"Receive: (\d+), Length: (\d+), Exceptions: (\d+)", (FIXTURES / case / "ab.stdout").read_text())
    receive, length, exceptions = (int(g) for g in failed.groups()) if failed else (0, 0, 0)
    assert result.requests == complete - receive
    assert result.duration_s == float(field(case, "Time taken for tests"))
    assert result.bytes == int(field(case, "Total transferred"))
    assert set(result.errors) == set(ERROR_KINDS) and result.errors["timeout"] == 0
    assert result.errors["read"] == receive and result.errors["other"] == length + exceptions
    non_2xx = "Non-2xx responses" in (FIXTURES / case / "ab.stdout").read_text()
    assert result.errors["non_2xx"] == (int(field(case, "Non-2xx responses")) if non_2xx else 0)
    assert result.extra["rps_reported"] == float(field(case, "Requests per second"))
    assert result.latency_ms["mean"] == _total(case)["mean"]
    if result.extra["percentiles_from"] == "ab.csv":
        rows = csv_rows(case)
        assert [result.latency_ms[k] for k in ("p50", "p90", "p99", "max")] == [rows[50], rows[90], rows[99], rows[100]]
    else:
        assert result.latency_ms["max"] == _total(case)["max"]
    assert str(FIXTURES / case / "ab.stdout") in result.raw_files


def _total(case: str) -> dict[str, int]:
    line = next(row for row in (FIXTURES / case / "ab.stdout").read_text().splitlines() if row.startswith("Total:"))
    low, mean, _sd, median, high = line.split()[1:]
    return {"min": int(low), "mean": int(mean), "median": int(median), "max": int(high)}


def test_normal_run_percentiles_come_from_the_csv():
    rows = csv_rows("normal")
    result = ab.parse(FIXTURES / "normal")
    assert result.requests == 500 and result.error_count == 0
    assert result.latency_ms == {"mean": 4.0, "p50": rows[50], "p90": rows[90], "p99": rows[99], "max": rows[100]}
    assert result.latency_ms["p50"] == 4.269 and result.extra["percentiles_from"] == "ab.csv"


def test_text_only_uses_the_whole_ms_table():
    result = ab.parse((FIXTURES / "normal" / "ab.stdout").read_text())
    assert result.latency_ms == {"mean": 4.0, "p50": 4.0, "p90": 5.0, "p99": 5.0, "max": 5.0}
    assert result.raw_files == ()


def test_csv_with_a_row_past_the_end_is_not_used():
    # -n 40: ab's CSV 99% row indexes stats[40] of a 40-entry array and prints 0.257 ms
    assert csv_rows("slow_first_alone")[99] < csv_rows("slow_first_alone")[98]
    result = ab.parse(FIXTURES / "slow_first_alone")
    assert result.extra["percentiles_from"] == "report table"
    assert result.latency_ms == {"mean": 205.0, "p50": 205.0, "p90": 205.0, "p99": 205.0, "max": 205.0}


def test_non_2xx_includes_redirects():
    assert ab.parse(FIXTURES / "not_found").errors["non_2xx"] == 300
    assert ab.parse(FIXTURES / "status_301").errors["non_2xx"] == 100


def test_keepalive_requests():
    assert ab.parse(FIXTURES / "keepalive").extra["keepalive_requests"] == 500
    assert ab.parse(FIXTURES / "normal").extra["keepalive_requests"] is None


def test_receive_failures_are_not_responses():
    # -r against a server that resets every other connection: ab stores each reset as "complete"
    result = ab.parse(FIXTURES / "reset_r")
    assert result.extra["complete_requests"] == 300 and result.requests == 150
    assert result.errors["read"] == 150 and result.errors["other"] == 149 + 150
    refused = ab.parse(FIXTURES / "refused")  # nobody listening: 100 "complete", 0 answers
    assert refused.requests == 0 and refused.errors["read"] == 100 and refused.errors["connect"] == 0


def test_time_limited_run():
    result = ab.parse(FIXTURES / "timelimit")
    assert result.duration_s == 2.004 and result.requests == 626


@pytest.mark.parametrize("case", WITHOUT_RESULTS)
def test_runs_that_ended_early_have_no_results(case):
    # reset_no_r: 'apr_socket_recv: Connection reset by peer (104)'; never_answers: -s 1 expired
    with pytest.raises(LoadgenError):
        ab.parse(FIXTURES / case)


# --- per-request TSV --------------------------------------------------------------------------


@pytest.mark.parametrize("case", [c for c in WITH_RESULTS if (FIXTURES / c / "ab.tsv").exists()])
def test_per_request_rows(case):
    rows = ab.per_request(FIXTURES / case)
    with open(FIXTURES / case / "ab.tsv") as f:
        table = list(csv.DictReader(f, delimiter="\t"))
    assert len(rows) == len(table) == int(field(case, "Complete requests"))
    assert [start for start, _ in rows] == sorted(int(r["seconds"]) for r in table)
    assert sorted(ms for _, ms in rows) == sorted(float(r["ttime"]) for r in table)


def test_first_request_alone():
    # 10 connections, 200 ms each: ab's first request ran alone, in a second of its own
    rows = ab.per_request(FIXTURES / "slow_first_alone")
    assert rows[0][0] < rows[1][0] and [s for s, _ in rows].count(rows[0][0]) == 1
    assert ab.per_request(FIXTURES / "slow_first_alone" / "ab.tsv") == rows


# --- live -------------------------------------------------------------------------------------
# A run of a fixed count checks counts only and shares the cores; the time-limited run checks how long ab ran,
# and runs alone.


@pytest.mark.spawns  # ab
def test_version_probe():
    need("ab")
    assert ab.version() == "2.3"


@pytest.mark.live
@pytest.mark.shares_cores
def test_live_count_run_without_keepalive(counting_server, tmp_path):
    need("ab")
    run_spec = LoadSpec(
        urls=(counting_server.url("/hello"),), concurrency=4, duration_s=0, timeout_s=5, keepalive=False
    )
    result = ab.run(run_spec, tmp_path, ab.AbOptions(requests=200))
    seen = counting_server.seen
    assert result.requests == 200 and result.error_count == 0 and seen.hits["/hello"] == 200
    assert 200 <= seen.connections <= 200 + 4  # one connection per request
    assert result.extra["stopped_by_count"] is True
    assert len(ab.per_request(tmp_path)) == 200
    assert {Path(p).name for p in result.raw_files} == {"ab.stdout", "ab.stderr", "ab.csv", "ab.tsv"}


@pytest.mark.live
def test_live_time_limited_keepalive(counting_server, tmp_path):
    need("ab")
    run_spec = LoadSpec(urls=(counting_server.url("/hello"),), concurrency=4, duration_s=1, timeout_s=5)
    result = ab.run(run_spec, tmp_path)
    seen = counting_server.seen
    assert result.error_count == 0 and result.requests > 20
    assert seen.connections == 4  # kept alive
    assert result.extra["keepalive_requests"] == result.requests
    assert result.requests <= seen.requests <= result.requests + 4
    assert 1.0 <= result.duration_s < 3 or result.extra["stopped_by_count"]


@pytest.mark.live
@pytest.mark.shares_cores
def test_live_404_counts_as_non_2xx(counting_server, tmp_path):
    need("ab")
    run_spec = LoadSpec(urls=(counting_server.url("/missing"),), concurrency=2, duration_s=0, timeout_s=5)
    result = ab.run(run_spec, tmp_path, ab.AbOptions(requests=50))
    assert result.errors["non_2xx"] == 50 == counting_server.seen.hits["/missing"]
