"""Capacity searches in the analysis, on a SYNTHETIC run (nothing measured): a search's records made by the
runner's own decisions (crossbench.decide.capacity) against a toy pool that answers 97 req/s, then the findings, the
capacity chart's data and the marks on the open-loop latency chart."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from crossbench.decide import capacity, capacity_answer
from crossbench.plan import experiment
from crossbench_analysis.charts import export
from crossbench_analysis.findings import findings, findings_capacity
from crossbench_analysis.read.runinfo import AnalysisError, load_run

HOLDS = 97.0


def launch(cell, rng, holds=HOLDS) -> dict:
    over = max(0.0, cell.rate / holds - 1)
    p99 = (cell.delay_ms + 6 + 3000 * over) * math.exp(rng.gauss(0, 0.03))
    achieved = min(cell.rate, holds)
    return {
        **cell.to_dict(),
        "schema_version": 6,
        "status": "ok",
        "valid": not over,
        "flags": ["unsustainable"] if over > 0.02 else [],
        "latency_ms": {"p50": p99 * 0.9, "p99": p99},
        "rate_achieved": achieved,
        "rps": achieved,
        "requests": int(achieved * 3),
        "error_total": 0,
        "cpu_percent": achieved * 0.04,
        "threads_peak": 40,
        "rss_peak_mb": 180.0,
        "setting": "tomcat maxThreads=20",
        "parallel_limit": 20,
        "processes": 1,
    }


def capacity_run(path: Path, seed: int = 7, cpu_model: str = "AMD EPYC", holds: float = HOLDS) -> Path:
    config = experiment.apply_overrides(experiment.load("capacity-quick"), {"shuffle": False, "groups": ["tomcat"]})
    rng = random.Random(seed)
    cells = experiment.expand(config)
    records = [launch(c, rng, holds) for c in cells]
    while more := capacity.next_launches(cells, records, experiment.recorded(config)):
        cells += more
        records += [launch(c, rng, holds) for c in more]
    path.mkdir(parents=True)
    (path / "metadata.json").write_text(
        json.dumps(
            {
                "run_id": "capacity-synthetic",
                "experiment": "capacity-quick",
                "synthetic": True,
                "config": config,
                "machine": {"cpu_model": cpu_model, "cores": 2},
            }
        )
    )
    (path / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_the_finding_leads_with_the_rate_held_and_folds_the_cost_and_the_models(tmp_path):
    run = load_run(capacity_run(tmp_path / "run"))
    [bracket] = findings.compute(run)
    assert bracket.sentence.startswith("tomcat maxThreads=20, 200 ms delay: holds ")
    assert "req/s at p99 <= 300 ms for 10 s; bracket " in bracket.sentence
    assert len(bracket.sentence) <= 200 and bracket.leads, bracket.sentence
    assert "CPU 0.4" in bracket.detail and "threads 40" in bracket.detail and "rates tried: " in bracket.detail
    assert "Little's law predicts 100 req/s (20 / 200 ms)" in bracket.detail
    assert "Erlang C, for arrivals at random" in bracket.detail
    assert bracket.figure is not None and bracket.figure <= HOLDS
    assert bracket.basis.startswith("confirmed by a long launch; bracket ")  # capacity-quick confirms for 10 s
    assert bracket.cells and all("-q" in c for c in bracket.cells)


def test_the_summary_table_says_what_each_setting_held_and_what_limited_it(tmp_path):
    """The synthetic pool answers 97 req/s with 20 threads at 200 ms: its bracket holds Little's law's 100 req/s,
    so the pool limited it; the table goes into findings.md, the terminal and the report with its own columns."""
    run_dir = capacity_run(tmp_path / "run")
    run = load_run(run_dir)
    table = findings.summarize(run, [])
    [row] = table["rows"]
    assert table["columns"] == list(findings_capacity.COLUMNS) and set(table["keys"]) <= set(row)
    assert row["setting"] == "tomcat maxThreads=20" and row["workload"] == "/delay/sync 200 ms, p99 <= 300 ms"
    assert row["holds"].endswith(" for 10 s") and float(row["holds"].split()[0]) <= HOLDS
    assert row["long_launch"].startswith("held at ") and row["sittings"] == "not measured"
    assert row["limited_by"] == "its pool: 20 / 200 ms = 100 req/s" and row["above"] == "-"
    findings.write(run, set())
    text = findings.text(run_dir)
    assert text.startswith("summary:") and "holds more than" in text and "its pool: 20 / 200 ms" in text
    assert "| tomcat maxThreads=20 | /delay/sync 200 ms, p99 <= 300 ms |" in (run_dir / "findings.md").read_text()


def test_settings_are_ranked_only_where_one_held_what_the_other_failed_by_more_than_their_spreads():
    def out(setting, held, fails, moves=None):
        return {
            "setting": setting,
            "keepalive": True,
            "target_p99_ms": 300,
            "delay_ms": 200,
            "held_rps": held,
            "fails_rps": fails,
            "spread": {"moves": moves} if moves is not None else None,
        }

    found = [
        out("tornado", 2560, 2690, moves=2.2),
        out("uvicorn", 2690, 3200, moves=0.1),
        out("tomcat virtual", 1460, 1600, moves=0.29),
        out("tomcat maxThreads=20", 95.2, 100),
    ]
    above = findings_capacity.ranking(found)
    # tornado's held rate moved 220 % between sittings: 2560 / 3.2 = 800 is under the virtual threads' 1600 x 1.29
    assert above == {
        "uvicorn": ["tomcat virtual", "tomcat maxThreads=20"],
        "tornado": ["tomcat maxThreads=20"],
        "tomcat virtual": ["tomcat maxThreads=20"],
    }


def test_the_capacity_chart_data_and_the_latency_charts_marks(tmp_path):
    run = load_run(capacity_run(tmp_path / "run"))
    [out] = capacity_answer.outcomes(run.cells, experiment.recorded(run.metadata["config"]))
    jobs = {job.name: job for job in export.export(run, tmp_path / "run" / "charts")}
    rows = (tmp_path / "run" / "charts" / "data" / "capacity.dat").read_text().splitlines()
    assert rows[1] == "label passed_rps failed_rps predicted_rps target_p99_ms"
    assert rows[2].split()[1:] == [f"{out['held_rps']:g}", f"{out['fails_rps']:g}", "100", "300"]
    latency = jobs["openloop_latency"].params
    assert latency["target_1"] == "300"
    assert latency["passed_1"] == f"{out['held_rps']:g}" and latency["failed_1"] == f"{out['fails_rps']:g}"


def test_capacity_aa_says_per_setting_how_far_the_held_rate_moved(tmp_path, capsys):
    """Three synthetic runs of one search whose pool answers 97, 80 and 110 req/s: each run's held rate, and how
    far they moved, printed as capacity_spread.toml's table for that setting; runs of two machines are refused."""
    from crossbench_analysis import cli
    from crossbench_analysis.compare import capacity_aa

    runs = [
        capacity_run(tmp_path / f"run{seed}", seed=seed, holds=holds) for seed, holds in ((7, 97), (8, 80), (9, 110))
    ]
    result = capacity_aa.spread(runs)
    [setting] = result["settings"]
    held = [capacity_answer.held_rps(out) for run in runs for out in capacity_aa.searched(run)[2]]
    assert setting["held_rps"] == held and len(set(held)) > 1
    assert setting["moves"] == pytest.approx(max(held) / min(held) - 1)
    assert cli.main(["capacity-aa", *map(str, runs)]) == 0
    out = capsys.readouterr().out
    assert "[[machine]]" in out and 'measured_on = "AMD EPYC, 2 cores"' in out and "[[machine.setting]]" in out
    assert f"held_rps = [{', '.join(f'{v:g}' for v in held)}]" in out
    other = capacity_run(tmp_path / "elsewhere", seed=10, cpu_model="Intel Xeon")
    with pytest.raises(AnalysisError, match="different machines"):
        capacity_aa.spread([runs[0], other])


def test_the_shipped_spread_is_what_capacity_aa_reads_in_the_committed_runs():
    """capacity_spread.toml's table for the AMD VM is capacity-aa over the committed capacity runs, setting by
    setting (docs/results/capacity: aa/capacity-a, aa/capacity-b and runs/capacity)."""
    from crossbench.decide import capacity_spread
    from crossbench_analysis.compare import capacity_aa

    results = Path(__file__).resolve().parents[2] / "docs" / "results" / "capacity"
    result = capacity_aa.spread(
        [results / "aa" / "capacity-a", results / "aa" / "capacity-b", results / "runs" / "capacity"]
    )
    for setting in result["settings"]:
        shipped = capacity_spread.for_setting(setting["series"], result["machine"])
        assert shipped and list(shipped.held_rps) == setting["held_rps"], setting


def test_no_committed_capacity_is_stated_above_a_long_failure_or_a_known_ceiling():
    """Every committed capacity.json (docs/results): what held and the estimate's whole interval at or under the
    lowest rate whose long launch failed and the pool's size over its delay; each setting measured between
    sittings says its own spread."""
    results = Path(__file__).resolve().parents[2] / "docs" / "results"
    found = [
        out
        for path in sorted(results.rglob("capacity.json"))
        for out in json.loads(path.read_text())
        if not out.get("generator")
    ]
    assert len(found) >= 20
    for out in found:
        limits = [c["rate"] for c in out.get("confirmations") or () if not c["held"]]
        limits += [out["predicted_rps"]] if out.get("predicted_rps") else []
        stated = [out["held_rps"]] + (
            [out["estimate"]["value"], out["estimate"]["ci95_high"]] if out.get("estimate") else []
        )
        assert all(v is None or v <= min(limits, default=float("inf")) for v in stated), out["series"]
        assert out["estimate"] is None or out["estimate"]["mixed_rps"]
    spreads = {out["series"]: out["spread"]["moves"] for out in found if out.get("spread")}
    assert len(set(spreads.values())) > 2  # per setting, not one pooled figure
