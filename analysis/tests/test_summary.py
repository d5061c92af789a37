"""The summary table that opens findings.md, the terminal's findings and the report: each row checked against the
points it reads (the quick run's recorded cells), what held a point named by its own figures, and the table shown
first everywhere."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crossbench.figures.points import fmt_interval
from crossbench_analysis.findings import findings, summary
from crossbench_analysis.findings.finding import load_points
from crossbench_analysis.read.runinfo import load_run
from crossbench_analysis.report import tables

RUNS = Path(__file__).parent / "fixtures" / "runs"


def quick(tmp_path: Path, change=None) -> Path:
    run = Path(shutil.copytree(RUNS / "quick", tmp_path / "quick"))
    if change:
        records = [json.loads(line) for line in (run / "cells.jsonl").read_text().splitlines()]
        for r in records:
            change(r)
        (run / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return run


def rows_of(run: Path) -> dict[tuple[str, str], dict]:
    return {(r["setting"], r["workload"]): r for r in summary.compute(load_points(load_run(run)))["rows"]}


def cell(run: Path, cell_id: str) -> dict:
    return next(c for c in map(json.loads, (run / "cells.jsonl").read_text().splitlines()) if c["cell_id"] == cell_id)


def test_each_row_reads_the_point_that_answered_most(tmp_path):
    run = quick(tmp_path)
    rows = rows_of(run)
    assert set(rows) == {
        ("tomcat maxThreads=200", "/delay/sync, 250 ms delay"),
        ("tornado", "/delay/async, 250 ms delay"),
        ("tomcat maxThreads=200", "static mix"),
        ("tornado", "static mix"),
    }
    # Tomcat's C=400 is flagged (ratio_disagreement): its most is C=100's, where 100 clients at 250 ms pace it
    tomcat = rows[("tomcat maxThreads=200", "/delay/sync, 250 ms delay")]
    c100 = cell(run, "delay-tomcat-mt200-delay_sync-c100-d250-r1")
    assert tomcat["at_c"] == "100" and tomcat["most_rps"] == fmt_interval({"value": c100["rps"], "n": 1})
    assert tomcat["latency_ms"] == f"{c100['latency_ms']['p50']:.0f} / {c100['latency_ms']['p99']:.0f}"
    assert tomcat["bends_at"] == "not up to C=100" and tomcat["limited_by"] == "the clients: C / delay = 400 req/s"
    tornado = rows[("tornado", "/delay/async, 250 ms delay")]
    assert tornado["bends_at"] == "C 100-400" and tornado["at_c"] == "400"
    assert rows[("tornado", "static mix")]["bends_at"] == "n/a (no delay)"


def test_what_held_a_point_comes_from_its_own_figures(tmp_path):
    """A pool past its size answering size / delay is held by the pool; a core at full use by the core; a
    saturated generator by the generator, whatever else is true."""

    def pool_bound(r):
        if r["cell_id"] == "delay-tomcat-mt200-delay_sync-c400-d250-r1":
            r.update(flags=[], valid=True, rps=792.0)
        if r["cell_id"] == "static-tornado-static_mix-c100-d0-r1":
            r.update(cpu_percent=97.0)

    run = quick(tmp_path, pool_bound)
    rows = rows_of(run)
    assert (
        rows[("tomcat maxThreads=200", "/delay/sync, 250 ms delay")]["limited_by"]
        == "its pool: 200 / 250 ms = 800 req/s"
    )
    assert rows[("tornado", "static mix")]["limited_by"] == "the server's core (97 % CPU)"
    generator_bound = {
        "records": [{"loadgen_cpus": [0], "loadgen": "wrk"}],
        "flags": [],
        "concurrency": 100,
        "delay_ms": 0,
        "figures": {"loadgen_cpu_percent": {"value": 99.0}, "cpu_percent": {"value": 97.0}, "rps": {"value": 5000.0}},
    }
    assert summary.limited_by(generator_bound) == "the load generator (99 % CPU)"
    assert summary.compute(load_points(load_run(run)))["note"] == summary.POOL_NOTE


def test_a_sweep_whose_higher_concurrencies_saturated_the_generator_says_so_not_more_clients(tmp_path):
    """The maxthreads reference's static mix: C=100 flagged loadgen_saturated, so C=10 answered the most of the
    valid points; what held it is the generator past it, not "more clients may answer more"."""

    def saturated(r):
        if r["cell_id"].startswith("static-tornado-static_mix-c100-"):
            r.update(flags=["loadgen_saturated"], valid=False)
        if r["cell_id"].startswith("static-tornado-static_mix-c1-"):
            r.update(cpu_percent=60.0)

    rows = rows_of(quick(tmp_path, saturated))
    said = rows[("tornado", "static mix")]
    assert (
        said["at_c"] == "1"
        and said["limited_by"]
        == "the load generator at C=100 (at full use there: those points left out); here the server 60 % CPU"
    ), said

    def core_first(r):  # the server's core full where it answered most: that held it there
        saturated(r)
        if r["cell_id"].startswith("static-tornado-static_mix-c1-"):
            r.update(cpu_percent=97.0)

    said = rows_of(quick(tmp_path / "core", core_first))[("tornado", "static mix")]
    assert (
        said["limited_by"] == "the server's core (97 % CPU); past it the load generator at C=100 (at full use "
        "there: those points left out)"
    ), said


def test_the_summary_opens_findings_md_the_terminal_and_the_report(tmp_path):
    from crossbench_analysis.report import report

    run = quick(tmp_path)
    loaded = load_run(run)
    findings.write(loaded, set())
    md = (run / "findings.md").read_text()
    assert md.index("## Summary") < md.index("## quick") and "| server setting | workload | knee |" in md
    said = findings.text(run).splitlines()
    assert said[0] == "summary:" and said[1].split()[:3] == ["server", "setting", "workload"]
    assert said.index("findings:") > len(rows_of(run))
    html = report.write_report(
        loaded,
        [],
        [],
        findings.sections(json.loads((run / "findings.json").read_text())["findings"]),
        None,
        findings.written_summary(run),
    ).read_text()
    assert html.index('id="summary"') < html.index("<h2>Findings</h2>") and "the clients: C / delay = 400" in html


def test_a_run_read_whole_has_no_summary_and_the_tables_render_nothing():
    assert tables.markdown(tables.EMPTY) == [] and tables.plain(tables.EMPTY) == []


REFERENCES = Path(__file__).resolve().parents[2] / "docs" / "results"
REFERENCE_RUNS = [
    "seed002/runs/seed002",
    "maxthreads/runs/maxthreads-delay",
    "maxthreads/runs/maxthreads-static-queues",
    "your-war/runs/your-war-full",  # a user's path of 55 characters: cut in the table, whole under its row
]


def reference_summary(name: str) -> dict:
    from crossbench_analysis.read import points_run

    return summary.compute(load_points(points_run.load(REFERENCES / name)))


@pytest.mark.parametrize("name", REFERENCE_RUNS)
def test_the_terminals_summary_of_a_reference_run_fits_100_columns(name):
    said = tables.plain(reference_summary(name))
    assert said and max(len(line) for line in said) <= tables.WIDTH, max(said, key=len)
    # the key says what a user path's ratios divide by, and only where the run has one
    assert ("(a path of yours: its service time at C=1)" in " ".join(said)) == name.startswith("your-war")
    assert said[1].split()[:3] == ["server", "setting", "workload"]
    printed = findings.text(REFERENCES / name).splitlines()  # what run_all.sh prints: summary and findings
    assert printed[: len(said)] == said and max(len(line) for line in printed) <= tables.WIDTH


def test_rows_stand_in_reading_order_whatever_order_the_run_measured():
    """seed002's points were measured shuffled: Tomcat's rows first, its delays by length, the static mix after
    them; maxthreads' settings by maxThreads, ascending."""
    rows = reference_summary("seed002/runs/seed002")["rows"]
    assert [(r["setting"], r["workload"]) for r in rows] == [
        ("tomcat maxThreads=200", "/delay/async, 1 s delay"),
        ("tomcat maxThreads=200", "/delay/sync, 1 s delay"),
        ("tomcat maxThreads=200", "/delay/sync, 3 s delay"),
        ("tomcat maxThreads=200", "/delay/sync, 10 s delay"),
        ("tomcat maxThreads=200", "static mix"),
        ("tornado", "/delay/async, 1 s delay"),
        ("tornado", "/delay/async, 3 s delay"),
        ("tornado", "/delay/async, 10 s delay"),
        ("tornado", "static mix"),
    ]
    settings = [r["setting"] for r in reference_summary("maxthreads/runs/maxthreads-delay")["rows"]]
    assert settings == [
        "tomcat maxThreads=50",
        "tomcat maxThreads=100",
        "tomcat maxThreads=200",
        "tomcat maxThreads=400",
        "tomcat maxThreads=800",
        "tomcat virtual",
    ]


def test_the_knee_column_gives_the_fitted_knee_and_the_efficiency_ratio_at_the_top():
    """seed002's 10 s sweep lies between C=100 and C=1000; the hinge through them has an interval, and the table
    says it, as the findings' fold does."""
    rows = {(r["setting"], r["workload"]): r for r in reference_summary("seed002/runs/seed002")["rows"]}
    tomcat = rows[("tomcat maxThreads=200", "/delay/sync, 10 s delay")]
    assert tomcat["bends_at"] == "C=199.9 [197.3, 202.5]" and tomcat["efficiency_top"] == "5.01 [4.96, 5.07]"
    assert rows[("tornado", "static mix")]["efficiency_top"] == "n/a"
    at_800 = {r["setting"]: r for r in reference_summary("maxthreads/runs/maxthreads-delay")["rows"]}
    assert at_800["tomcat maxThreads=100"]["efficiency_top"] == "10.014 [9.998, 10.030] at C=1000"


def test_the_advise_note_is_one_short_line_only_where_a_pool_can_be_sized(tmp_path):
    note = reference_summary("seed002/runs/seed002")["note"]
    assert note == summary.POOL_NOTE and len(note) < 100 and "\n" not in note
    tornado_only = [p for p in load_points(load_run(quick(tmp_path))) if p.get("server") == "tornado"]
    assert summary.compute(tornado_only)["note"] == ""


@pytest.mark.parametrize(
    "knee, said",
    [
        ({"status": "fitted", "concurrency": 204.2, "low": 196.0, "high": 212.4}, "C=204 [196, 212]"),
        ({"status": "bracket", "bracket": (100, 400)}, "C 100-400"),
        ({"status": "not_reached", "top": 1000}, "not up to C=1000"),
        ({"status": "below_range", "bottom": 10}, "at or below C=10"),
        ({"status": "poor_fit"}, "cannot tell (see findings)"),
    ],
)
def test_the_bend_in_the_table(knee, said):
    from crossbench_analysis.judge.knee_rule import Knee

    fields = {"concurrency": None, "low": None, "high": None, "bracket": None, "bottom": None, "top": None}
    assert summary.bend_text(Knee(**{**fields, **knee})) == said


def test_the_reports_header_says_what_the_machine_did_and_warns_when_it_could_move_figures():
    from crossbench_analysis.report import noise_words

    meta = {"noise_floor": {"core_speed": {"per_core": {"0": {"median_ms": 19.1}, "1": {"median_ms": 11.4}}}}}
    quiet = [{"steal_percent": 0.1, "foreign_cpu_percent": 0.4, "flags": []} for _ in range(3)]
    said = noise_words.header(meta, quiet)
    assert "cores 0, 1 timed a fixed unit at 19.1 and 11.4 ms (medians, 68 % apart)" in said["text"]
    assert "steal at most 0.1 %" in said["text"] and "0 of 3 launches flagged noisy_host" in said["text"]
    assert "differed by 68 %" in said["warning"]
    even = {"noise_floor": {"core_speed": {"per_core": {"0": {"median_ms": 6.8}, "1": {"median_ms": 6.3}}}}}
    assert noise_words.header(even, quiet)["warning"] == ""
    noisy = quiet + [{"steal_percent": 4.0, "foreign_cpu_percent": 60.0, "flags": ["noisy_host"]}]
    said = noise_words.header(even, noisy)
    assert "1 of 4 launches flagged noisy_host" in said["text"] and "1 launch ran beside" in said["warning"]


def test_a_core_probe_that_shared_its_core_is_not_read_as_the_cores_speed():
    from crossbench_analysis.report import noise_words

    meta = {
        "noise_floor": {
            "core_speed": {
                "per_core": {
                    "0": {"median_ms": 19.1, "core_share_percent": 61.0},
                    "1": {"median_ms": 11.4, "core_share_percent": 99.8},
                }
            }
        }
    }
    said = noise_words.header(meta, [])
    assert "the probe shared its core (core 0 had 61 % of its time)" in said["text"] and said["warning"] == ""


def test_findings_mds_table_fits_100_columns_and_lists_the_rest_of_each_row():
    """seed002's summary: the columns that fit from the left make the table, every other cell is under it."""
    table = reference_summary("seed002/runs/seed002")
    md = tables.markdown(table, width=tables.WIDTH)
    assert max(len(line) for line in md) <= tables.WIDTH, max(md, key=len)
    rows = [line for line in md if line.startswith("| tomcat") or line.startswith("| tornado")]
    assert len(rows) == len(table["rows"]) and all(r.count(" | ") < len(table["keys"]) - 1 for r in rows)
    said = " ".join(md)
    for row in table["rows"]:
        assert all(" ".join(row[k].split()) in " ".join(said.split()) for k in table["keys"] if row[k] != "n/a")
    assert len(tables.markdown(table)[2]) > tables.WIDTH  # the reference docs' table, whole


def test_a_long_user_path_is_cut_in_the_table_and_whole_in_the_list_under_it():
    path = "/jolokia/read/java.lang:type=Memory/HeapMemoryUsage/used, 0.229 ms service time at C=1"
    row = dict.fromkeys(tables.KEYS, "n/a") | {"setting": "tomcat maxThreads=10", "workload": path, "at_c": "5"}
    lines = tables.markdown(
        {"columns": list(tables.COLUMNS), "keys": list(tables.KEYS), "rows": [row], "note": ""}, width=100
    )
    table = [line for line in lines if line.startswith("| tomcat")]
    assert len(table) == 1 and len(table[0]) <= 100 and "\u2026" in table[0]
    assert table[0].startswith("| tomcat maxThreads=10 | /jolokia/read/") and table[0].endswith("at C=1 |")
    below = " ".join(line.strip() for line in lines if not line.startswith("|"))
    assert path in below and "at C: 5" in below


def test_a_knee_every_fit_bends_under_is_said_between_the_measured_c_around_its_bound():
    """The hinge not resolved but bent in every fit (N < 1.75, a CPU-bound path): the table says the measured
    concurrencies it lies between, as advice does, not 'cannot tell'; one that also fits flat still cannot tell."""
    from types import SimpleNamespace

    from crossbench_analysis.judge.knee_rule import Knee

    bent = SimpleNamespace(flat_fits=False, bent_fits=True, high=1.75, low=None)
    knee = Knee("not_resolved", None, None, None, None, 1, 400, bent, (1, 5, 10, 400))
    assert knee.bent_under() == 1.75 and knee.under_bracket() == (1, 5)
    assert summary.bend_text(knee) == "C 1-5"
    either = Knee("not_resolved", None, None, None, None, 1, 400, SimpleNamespace(flat_fits=True, high=300), (1, 400))
    assert either.under_bracket() is None and summary.bend_text(either) == "cannot tell (see findings)"
