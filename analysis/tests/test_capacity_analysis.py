"""Capacity searches in the analysis, on a SYNTHETIC run (nothing measured): a search's records made by the
runner's own decisions (crossbench.decide.capacity) against a toy pool that answers 97 req/s, then the findings, the
capacity chart's data and the marks on the open-loop latency chart."""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from crossbench.decide import capacity
from crossbench.plan import experiment
from crossbench_analysis.charts import export
from crossbench_analysis.findings import findings, findings_capacity
from crossbench_analysis.read.runinfo import AnalysisError, load_run

HOLDS = 97.0


def launch(cell, rng, holds=HOLDS) -> dict:
    over = max(0.0, cell.rate / holds - 1)
    p99 = (cell.delay_ms + 6 + 3000 * over) * math.exp(rng.gauss(0, 0.03))
    achieved = min(cell.rate, holds)
    return {**cell.to_dict(), "schema_version": 6, "status": "ok", "valid": not over,
            "flags": ["unsustainable"] if over > 0.02 else [], "latency_ms": {"p50": p99 * 0.9, "p99": p99},
            "rate_achieved": achieved, "rps": achieved, "requests": int(achieved * 3), "error_total": 0,
            "cpu_percent": achieved * 0.04, "threads_peak": 40, "rss_peak_mb": 180.0,
            "setting": "tomcat maxThreads=20", "parallel_limit": 20, "processes": 1}


def capacity_run(path: Path, seed: int = 7, cpu_model: str = "AMD EPYC", holds: float = HOLDS) -> Path:
    config = experiment.apply_overrides(experiment.load("capacity-quick"), {"shuffle": False, "groups": ["tomcat"]})
    rng = random.Random(seed)
    cells = experiment.expand(config)
    records = [launch(c, rng, holds) for c in cells]
    while more := capacity.next_launches(cells, records, experiment.recorded(config)):
        cells += more
        records += [launch(c, rng, holds) for c in more]
    path.mkdir(parents=True)
    (path / "metadata.json").write_text(json.dumps({"run_id": "capacity-synthetic", "experiment": "capacity-quick",
                                                    "synthetic": True, "config": config,
                                                    "machine": {"cpu_model": cpu_model, "cores": 2}}))
    (path / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_the_finding_leads_with_the_rate_held_and_folds_the_cost_and_the_models(tmp_path):
    run = load_run(capacity_run(tmp_path / "run"))
    [bracket] = findings.compute(run)
    assert bracket.sentence.startswith("tomcat maxThreads=20, 200 ms delay: holds ")
    assert "req/s at p99 <= 300 ms for 10 s; bracket " in bracket.sentence and ", capacity " in bracket.sentence
    assert len(bracket.sentence) <= 200 and bracket.leads, bracket.sentence
    assert "CPU 0.4" in bracket.detail and "threads 40" in bracket.detail and "rates tried: " in bracket.detail
    assert "Little's law predicts 100 req/s (20 / 200 ms)" in bracket.detail
    assert "Erlang C, for arrivals at random" in bracket.detail
    assert bracket.figure is not None and bracket.figure <= HOLDS
    assert bracket.basis.startswith("confirmed by a long launch; bracket ")     # capacity-quick confirms for 10 s
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
    assert float(row["holds"]) <= HOLDS and row["long_launch"].startswith("held at ")
    assert row["limited_by"] == "its pool: 20 / 200 ms = 100 req/s" and row["above"] == "-"
    findings.write(run, set())
    text = findings.text(run_dir)
    assert text.startswith("summary:") and "holds more than" in text and "its pool: 20 / 200 ms" in text
    assert "| tomcat maxThreads=20 | /delay/sync 200 ms, p99 <= 300 ms |" in (run_dir / "findings.md").read_text()


def test_settings_are_ranked_only_where_their_capacities_intervals_are_apart():
    def out(setting, low, high):
        return {"setting": setting, "keepalive": True, "target_p99_ms": 300, "delay_ms": 200, "passed_rps": low,
                "failed_rps": high, "estimate": {"value": (low * high) ** 0.5, "ci95_low": low * 0.9,
                                                 "ci95_high": high * 1.1}}
    above = findings_capacity.ranking([out("tornado", 1900, 3200), out("tomcat virtual", 1340, 1600),
                                       out("tomcat maxThreads=20", 100, 109)])
    assert above == {"tornado": ["tomcat maxThreads=20"], "tomcat virtual": ["tomcat maxThreads=20"]}


def test_the_capacity_chart_data_and_the_latency_charts_marks(tmp_path):
    run = load_run(capacity_run(tmp_path / "run"))
    [out] = capacity.outcomes(run.cells, experiment.recorded(run.metadata["config"]))
    jobs = {job.name: job for job in export.export(run, tmp_path / "run" / "charts")}
    rows = (tmp_path / "run" / "charts" / "data" / "capacity.dat").read_text().splitlines()
    assert rows[1] == "label passed_rps failed_rps predicted_rps target_p99_ms"
    assert rows[2].split()[1:] == [f"{out['passed_rps']:g}", f"{out['failed_rps']:g}", "100", "300"]
    latency = jobs["openloop_latency"].params
    assert latency["target_1"] == "300"
    assert latency["passed_1"] == f"{out['passed_rps']:g}" and latency["failed_1"] == f"{out['failed_rps']:g}"


def test_capacity_aa_pools_the_settings_spread_on_logs(tmp_path, capsys):
    """Three synthetic runs of one search (different seeds): the spread is the estimates' own on logs, with 2 df,
    printed for capacity_spread.toml; runs of two machines are refused."""
    from crossbench_analysis import cli
    from crossbench_analysis.compare import capacity_aa
    runs = [capacity_run(tmp_path / f"run{seed}", seed=seed, holds=holds) for seed, holds in ((7, 97), (8, 80), (9, 110))]
    result = capacity_aa.spread(runs)
    [setting] = result["settings"]
    logs = [math.log(v) for v in setting["estimates"]]
    mean = sum(logs) / 3
    assert result["run_df"] == 2
    assert result["run_sd_estimate"] == pytest.approx(math.sqrt(sum((v - mean) ** 2 for v in logs) / 2))
    assert result["run_sd"] > result["run_sd_estimate"]
    assert cli.main(["capacity-aa", *map(str, runs)]) == 0
    out = capsys.readouterr().out
    assert "[[machine]]" in out and 'measured_on = "AMD EPYC, 2 cores"' in out and "run_df = 2" in out
    other = capacity_run(tmp_path / "elsewhere", seed=10, cpu_model="Intel Xeon")
    with pytest.raises(AnalysisError, match="different machines"):
        capacity_aa.spread([runs[0], other])
