"""The GC-pauses-beside-p99 chart on a SYNTHETIC maxthreads run (test_maxthreads_charts' toy model) whose delay
cells are given JFR figures: drawn only from cells that have both, one chart per panel."""

from __future__ import annotations

import json

import pytest
from analysis_markers import needs_gnuplot
from test_maxthreads_charts import read_blocks, synthetic_maxthreads_run

from crossbench_analysis.charts import export, plot
from crossbench_analysis.read.runinfo import load_run


def run_with_pauses(tmp_path, with_jfr=lambda c: c["group"] == "delay"):
    run_dir = synthetic_maxthreads_run(tmp_path / "20261122-0130-maxthreads-synthetic")
    cells = [json.loads(line) for line in (run_dir / "cells.jsonl").read_text().splitlines()]
    for c in cells:
        if with_jfr(c):
            c.update(
                tomcat_gc_pause_count=c["concurrency"] // 25,
                tomcat_gc_pause_max_ms=4.0,
                tomcat_gc_pause_total_ms=4.0 * (c["concurrency"] // 25),
            )
    (run_dir / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells))
    return run_dir, {j.name: j for j in export.export(load_run(run_dir), run_dir / "charts")}


def test_only_cells_with_both_figures_are_drawn(tmp_path):
    run_dir, jobs = run_with_pauses(tmp_path)
    gc = [name for name in jobs if name.startswith("gc_pauses_")]
    assert len(gc) == 1  # the delay cells' panel; the static cells have no JFR figures
    blocks = read_blocks(run_dir / "charts" / "data" / jobs[gc[0]].params["file_1"])
    rows = [r for rs in blocks.values() for r in rs]
    assert len(rows) == 18 and {r["gc_pause_max_ms"] for r in rows} == {"4"}
    assert any(r["gc_pause_total_ms"] == "160" and r["concurrency"] == "1000" for r in rows)


def test_a_run_without_jfr_figures_has_no_gc_chart(tmp_path):
    _, jobs = run_with_pauses(tmp_path, with_jfr=lambda c: False)
    assert not any(name.startswith("gc_pauses_") for name in jobs)


@pytest.mark.spawns  # gnuplot
@needs_gnuplot
def test_the_gc_chart_draws(tmp_path):
    run_dir, jobs = run_with_pauses(tmp_path)
    name = next(name for name in jobs if name.startswith("gc_pauses_"))
    result = plot.plot_chart(jobs[name], run_dir / "charts", "SYNTHETIC test run")
    assert result.ok, result.error
    assert len((run_dir / "charts" / f"{name}.png").read_bytes()) > 20_000


def test_the_longest_pause_line_goes_through_the_longest_launch_never_the_mean(tmp_path):
    """Three launches of a point with longest pauses 0, 0 and 137 ms: the line reads 137, not 46."""
    run_dir = synthetic_maxthreads_run(tmp_path / "20261122-0130-maxthreads-synthetic")
    cells = [json.loads(line) for line in (run_dir / "cells.jsonl").read_text().splitlines()]
    model = next(c for c in cells if c["group"] == "delay")
    extra = [dict(model, cell_id=model["cell_id"].replace("-r1", f"-r{k}"), repetition=k) for k in (2, 3)]
    for c, pause in zip([model, *extra], (0.0, 0.0, 137.0)):
        c.update(tomcat_gc_pause_count=1, tomcat_gc_pause_max_ms=pause, tomcat_gc_pause_total_ms=pause)
    (run_dir / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in [*cells, *extra]))
    jobs = {j.name: j for j in export.export(load_run(run_dir), run_dir / "charts")}
    name = next(name for name in jobs if name.startswith("gc_pauses_"))
    rows = [r for rs in read_blocks(run_dir / "charts" / "data" / jobs[name].params["file_1"]).values() for r in rs]
    mine = [r for r in rows if r["concurrency"] == str(model["concurrency"]) and r["gc_pause_count"] == "1"]
    assert len(mine) == 3 and {r["gc_pause_longest_ms"] for r in mine} == {"137"}
