"""The seed 000 / 001 charts, drawn from real records (fixtures/seeds/, see its README): the exported rows are
the records' figures, every chart is a real PNG and SVG, and a run without such cells gets none of them."""

from __future__ import annotations

import math
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from analysis_markers import needs_gnuplot
from testkit import records_by_id

from crossbench_analysis import analyze
from crossbench_analysis.charts import export
from crossbench_analysis.read.runinfo import load_run

FIXTURES = Path(__file__).parent / "fixtures" / "seeds"
SEED_CHARTS = {"seed000": {"seed000_ab", "seed000_hol"}, "seed001": {"seed001_pipelined"}}


def run_copy(name: str, tmp_path: Path) -> Path:
    run_dir = tmp_path / name
    shutil.copytree(FIXTURES / name, run_dir, ignore=shutil.ignore_patterns("README.md"))
    return run_dir


def dat_rows(path: Path) -> list[dict]:
    """The one block of a seed chart's .dat file, as dicts (NaN as None)."""
    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    header = lines[0].split("\t")[1:]
    columns = ["x", *header]
    rows = []
    for line in lines[1:]:
        values = line.split("\t")
        rows.append({k: (None if v == "NaN" else v) for k, v in zip(columns, values)})
    return rows


def close(text: str | None, value) -> bool:
    if text is None or value is None:
        return text is None and value is None
    return math.isclose(float(text), float(value), rel_tol=1e-5)


def exported(run_dir: Path) -> dict[str, export.ChartJob]:
    return {j.name: j for j in export.export(load_run(run_dir), run_dir / "charts")}


def test_ab_rows_are_the_records_figures(tmp_path):
    run_dir = run_copy("seed000", tmp_path)
    cells = records_by_id(run_dir)
    job = exported(run_dir)["seed000_ab"]
    rows = dat_rows(run_dir / "charts" / "data" / "seed000_ab.dat")
    ab_cells = {k: c for k, c in cells.items() if c["kind"] == "fixed_count"}
    assert {r["cell_id"] for r in rows} == set(ab_cells)
    assert [r["x"] for r in rows] == [str(i) for i in range(1, len(rows) + 1)]
    for row in rows:
        cell = ab_cells[row["cell_id"]]
        reference = cell["ab"]["reference"] or {}
        assert close(row["ab_rps"], cell["ab"]["reported"]["rps"])
        assert close(row["startup_free_rps"], cell["rps_startup_free"])
        assert close(row["article_rps"], reference.get("rps"))
        assert close(row["ab_tpr_ms"], cell["ab"]["reported"]["time_per_request_ms"])
        assert job.params[f"label_{row['x']}"].startswith(cell["server"].capitalize())
    # the article's figures are Tornado's, and come first
    assert rows[0]["cell_id"].startswith("ab_sync-tornado") and close(rows[0]["article_rps"], 1.00)


def test_probe_rows_are_the_records_figures(tmp_path):
    run_dir = run_copy("seed000", tmp_path)
    cells = records_by_id(run_dir)
    exported(run_dir)
    rows = dat_rows(run_dir / "charts" / "data" / "seed000_hol.dat")
    probes = {k: c for k, c in cells.items() if c["kind"] == "hol_probe"}
    assert {r["cell_id"] for r in rows} == set(probes)
    for row in rows:
        cell = probes[row["cell_id"]]
        for column, figure in (("p50_ms", "p50"), ("p99_ms", "p99"), ("max_ms", "max")):
            assert close(row[column], cell["latency_ms"][figure])
        assert int(row["probes"]) == cell["probes_sent"]


def test_pipelined_rows_are_the_records_figures(tmp_path):
    run_dir = run_copy("seed001", tmp_path)
    cells = records_by_id(run_dir)
    job = exported(run_dir)["seed001_pipelined"]
    rows = dat_rows(run_dir / "charts" / "data" / "seed001_pipelined.dat")
    assert {r["cell_id"] for r in rows} == set(cells)
    for row in rows:
        cell = cells[row["cell_id"]]
        assert close(row["rps"], cell["rps"]) and close(row["wrk_max_ms"], cell["latency_ms"]["max"])
        assert close(row["batch_latency_mean_ms"], cell["batch_latency_mean_ms"])
    assert sorted(job.params[f"label_{i}"] for i in (1, 2, 3)) == ["Tomcat", "Tornado", "Tornado x2"]


def test_a_run_without_seed_cells_gets_no_seed_chart(synthetic_run, tmp_path):
    run_dir = tmp_path / "synthetic"
    shutil.copytree(synthetic_run, run_dir)
    names = set(exported(run_dir))
    assert not names & set().union(*SEED_CHARTS.values())


@pytest.mark.spawns  # gnuplot
@needs_gnuplot
@pytest.mark.parametrize("name", sorted(SEED_CHARTS))
def test_seed_charts_are_drawn(name, tmp_path):
    run_dir = run_copy(name, tmp_path)
    result = analyze(run_dir)
    drawn = {c.name for c in result.charts if c.ok}
    assert SEED_CHARTS[name] <= drawn
    for chart in SEED_CHARTS[name]:
        png, svg = run_dir / "charts" / f"{chart}.png", run_dir / "charts" / f"{chart}.svg"
        assert png.stat().st_size > 20_000, f"{png.name} looks empty"
        texts = " ".join(t.text or "" for t in ET.parse(svg).getroot().iter() if t.tag.endswith("text"))
        assert "Seed 00" in texts and f"run {run_dir.name}" in texts
        assert f"charts/{chart}.png" in (run_dir / "report.html").read_text()
