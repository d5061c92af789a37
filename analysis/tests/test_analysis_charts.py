"""The drawing, tested on SYNTHETIC run directories (not measurements): every chart is a real PNG and SVG,
the .dat exports hold exactly the cells of cells.jsonl, nulls and flags survive, the report lists every cell."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from analysis_markers import ANALYSIS, needs_gnuplot
from synthetic_run import SYNTHETIC_CPU, make_run
from testkit import records_by_id

from crossbench_analysis import AnalysisError, analyze
from crossbench_analysis.charts import export, plot
from crossbench_analysis.read.runinfo import load_run

EXPECTED_CHARTS = {
    "static_rps",
    "efficiency",
    "throughput",
    "threads_peak",
    "threads_timeline",
    "latency",
    "maxthreads_knees",
    "resources_static",
    "resources_d1000",
    "resources_d3000",
    "latency_spectrum",
}
FAILED_ID = "0019-tomcat-delay_sync-c100-d3000-r1"
FLAGGED_ID = "0008-tornado-static_all-c1000-d0-r1"


def read_dat(path: Path) -> tuple[list[str], list[tuple[str, list[dict]]]]:
    """A .dat file back into (columns, [(series label, rows as dicts)]), the NaN placeholder rows dropped."""
    lines = path.read_text().splitlines()
    columns = next(line for line in lines if line.startswith("# columns: "))[len("# columns: ") :].split()
    blocks, current = [], None
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith('"'):
            label = line[1 : line.index('"', 1)]
            assert line[len(label) + 2 :].split() == columns[1:], f"{path.name}: block header names the columns"
            current = (label, [])
            blocks.append(current)
            continue
        values = line.split("\t")
        assert len(values) == len(columns), f"{path.name}: {line!r}"
        row = dict(zip(columns, values))
        if row.get("cell_id") != "-":
            current[1].append(row)
    return columns, blocks


def num(text: str) -> float | None:
    return None if text == "NaN" else float(text)


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 1e-5 * max(1.0, abs(a), abs(b))


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.spawns  # gnuplot
@needs_gnuplot
def test_every_chart_is_a_real_png_and_svg(analyzed_run):
    run_dir, result = analyzed_run
    assert {c.name for c in result.charts} == EXPECTED_CHARTS
    assert not result.failed_charts
    for name in EXPECTED_CHARTS:
        png, svg = run_dir / "charts" / f"{name}.png", run_dir / "charts" / f"{name}.svg"
        assert png_size(png) == (1200, 750)
        assert png.stat().st_size > 20_000, f"{png.name} looks empty"
        root = ET.parse(svg).getroot()
        assert root.tag.endswith("svg")
        assert svg.stat().st_size > 10_000
        texts = " ".join(t.text or "" for t in root.iter() if t.tag.endswith("text"))
        assert "run 20261122-0130-seed002-synthetic" in texts, f"{svg.name}: footer names the run"
        assert SYNTHETIC_CPU in texts, f"{svg.name}: footer names the machine"


@pytest.mark.spawns  # gnuplot (the analysed run)
@needs_gnuplot
def test_chart_text_has_titles_axes_and_flag_legend(analyzed_run):
    run_dir, _ = analyzed_run
    svg = ET.parse(run_dir / "charts" / "static_rps.svg").getroot()
    texts = " ".join(t.text or "" for t in svg.iter() if t.tag.endswith("text"))
    for expected in (
        "Static files: responses per second",
        "concurrent clients (log scale)",
        "responses per second",
        "tomcat",
        "tornado",
        "hollow: flagged, valid=false (1)",
    ):
        assert expected in texts
    efficiency = " ".join(
        t.text or "" for t in ET.parse(run_dir / "charts" / "efficiency.svg").getroot().iter() if t.tag.endswith("text")
    )
    assert "ideal 1.0" in efficiency and "delay 1 s" in efficiency and "delay 3 s" in efficiency
    assert FAILED_ID in efficiency, "the undrawable failed cell is named under the chart"
    threads = " ".join(
        t.text or ""
        for t in ET.parse(run_dir / "charts" / "threads_peak.svg").getroot().iter()
        if t.tag.endswith("text")
    )
    assert "Tomcat maxThreads = 200" in threads


def test_static_export_rows_match_cells(synthetic_run, tmp_path):
    run = load_run(synthetic_run)
    export.export(run, tmp_path / "charts")
    cells = records_by_id(synthetic_run)
    columns, blocks = read_dat(tmp_path / "charts" / "data" / "static_rps.dat")
    tail_end = columns.index("cell_id") + 1
    assert columns[0] == "concurrency" and columns[tail_end - 3 : tail_end] == ["valid", "repetition", "cell_id"]
    assert columns[tail_end : tail_end + 3] == ["rps_mean", "rps_lo", "rps_hi"]  # each point's interval
    assert [label for label, _ in blocks] == ["tomcat", "tornado"]
    rows = {r["cell_id"]: r for _, block in blocks for r in block}
    assert set(rows) == {i for i, c in cells.items() if c["group"] == "static"}
    for cell_id, row in rows.items():
        cell = cells[cell_id]
        assert close(num(row["rps"]), cell["rps"])
        assert close(num(row["rps_steady"]), cell["rps_steady"])
        assert int(row["concurrency"]) == cell["concurrency"]
        assert row["valid"] == ("1" if cell["valid"] else "0")
    assert rows[FLAGGED_ID]["valid"] == "0"
    for _, block in blocks:
        assert [int(r["concurrency"]) for r in block] == sorted(int(r["concurrency"]) for r in block)


def test_per_delay_exports_hold_every_delay_cell_and_the_failed_one(synthetic_run, tmp_path):
    run = load_run(synthetic_run)
    jobs = {j.name: j for j in export.export(run, tmp_path / "charts")}
    cells = records_by_id(synthetic_run)
    data = tmp_path / "charts" / "data"
    for delay in (1000, 3000):
        expected = {i for i, c in cells.items() if c["delay_ms"] == delay}
        for chart, figure in (("efficiency", "efficiency_ratio"), ("threads_peak", "threads_peak")):
            _, blocks = read_dat(data / f"{chart}_d{delay}.dat")
            rows = {r["cell_id"]: r for _, block in blocks for r in block}
            assert set(rows) == expected, f"{chart} d{delay}"
            for cell_id, row in rows.items():
                assert close(num(row[figure]), cells[cell_id][figure])
    _, blocks = read_dat(data / "efficiency_d3000.dat")
    failed = next(r for _, b in blocks for r in b if r["cell_id"] == FAILED_ID)
    assert failed["efficiency_ratio"] == "NaN" and failed["valid"] == "0"
    assert FAILED_ID in jobs["efficiency"].note
    assert jobs["efficiency"].params["panels"] == 2
    assert jobs["efficiency"].params["title_1"] == "delay 1 s"
    labels = [label for label, _ in read_dat(data / "efficiency_d1000.dat")[1]]
    assert labels == ["tomcat /delay/sync", "tomcat /delay/async", "tornado /delay/async"]
    assert jobs["threads_peak"].params["maxthreads_1"] == "200"


def test_latency_and_resources_exports_cover_every_cell(synthetic_run, tmp_path):
    run = load_run(synthetic_run)
    export.export(run, tmp_path / "charts")
    cells = records_by_id(synthetic_run)
    data = tmp_path / "charts" / "data"
    seen_latency, seen_resources = {}, {}
    for path in data.glob("latency_*.dat"):
        seen_latency.update({r["cell_id"]: r for _, b in read_dat(path)[1] for r in b})
    for path in data.glob("resources_*.dat"):
        if not path.name.endswith("_cores.dat"):
            seen_resources.update({r["cell_id"]: r for _, b in read_dat(path)[1] for r in b})
    assert set(seen_latency) == set(cells) == set(seen_resources)
    for cell_id, cell in cells.items():
        assert close(num(seen_latency[cell_id]["p99_ms"]), cell["latency_ms"]["p99"])
        assert close(num(seen_resources[cell_id]["rss_peak_mb"]), cell["rss_peak_mb"])
        assert close(num(seen_resources[cell_id]["cpu_percent"]), cell["cpu_percent"])
    _, core_blocks = read_dat(data / "resources_static_cores.dat")
    assert [label for label, _ in core_blocks] == [
        "tomcat: core 0 (load generator)",
        "tomcat: core 1 (server)",
        "tornado: core 0 (load generator)",
        "tornado: core 1 (server)",
    ]
    row = next(r for r in core_blocks[1][1] if r["concurrency"] == "1000")
    assert close(num(row["core_cpu_percent"]), cells[row["cell_id"]]["cpu_per_core"]["1"])


def test_timeline_export_is_the_highest_concurrency_samples(synthetic_run, tmp_path):
    run = load_run(synthetic_run)
    export.export(run, tmp_path / "charts")
    _, blocks = read_dat(tmp_path / "charts" / "data" / "threads_timeline_d1000.dat")
    assert [label for label, _ in blocks] == [
        "tomcat /delay/sync, C=1000",
        "tomcat /delay/async, C=1000",
        "tornado /delay/async, C=1000",
    ]
    label, rows = blocks[0]
    cell_id = rows[0]["cell_id"]
    samples = (synthetic_run / "cells" / cell_id / "samples.csv").read_text().splitlines()[1:]
    assert len(rows) == len(samples)
    first_measure = next(r for r in rows if r["phase"] == "measure")
    assert abs(float(first_measure["t_s"])) < 1e-6, "t = 0 where the measured window starts"
    assert float(rows[0]["t_s"]) < 0, "warm-up before it"
    assert max(float(r["threads"]) for r in rows) == 222


def test_gnuplot_values_are_quoted_not_code():
    assert plot.gp_value("it's") == "'it''s'"
    assert plot.gp_value("a\nb; set output 'x'") == "'a b; set output ''x'''"
    assert plot.gp_value(3) == "3" and plot.gp_value(True) == "1"
    with pytest.raises(ValueError):
        plot.assignments({"bad name": 1})


@pytest.mark.spawns  # gnuplot
@needs_gnuplot
def test_all_failed_run_with_odd_metadata_still_draws(tmp_path):
    run_dir = make_run(tmp_path / "allfail", samples=False)
    cells = list(records_by_id(run_dir).values())
    for cell in cells:
        for key in (
            "rps",
            "rps_steady",
            "efficiency_ratio",
            "latency_ratio",
            "threads_peak",
            "rss_peak_mb",
            "cpu_percent",
            "cpu_per_core",
            "loadgen_cpu_percent",
        ):
            cell[key] = None
        cell["latency_ms"] = None
        cell.update(status="failed", valid=False, flags=["failed"])
    (run_dir / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells) + '{"cut short')
    metadata = json.loads((run_dir / "metadata.json").read_text())
    metadata["machine"]["cpu_model"] = "Intel(R) Xeon(R) \"Gold\" it's @ 2.0GHz_x^2 {a} & <b>"
    (run_dir / "metadata.json").write_text(json.dumps(metadata))
    result = analyze(run_dir)
    assert not result.failed_charts
    assert any("cut short" in w for w in result.warnings)
    html = (run_dir / "report.html").read_text()
    assert "&lt;b&gt;" in html and "<b>\"Gold\"" not in html
    assert html.count("<tr class=\"failed\"") == len(cells)


@pytest.mark.spawns  # gnuplot
@needs_gnuplot
def test_sparse_records_and_no_metadata_do_not_crash(tmp_path):
    """Records with only a few fields (another experiment, an older runner), nulls where numbers go."""
    run_dir = tmp_path / "sparse"
    run_dir.mkdir()
    records = [
        {"cell_id": "a", "server": "tomcat", "status": "failed"},
        {
            "cell_id": "b",
            "server": "tornado",
            "group": "hello",
            "endpoint": "/hello",
            "concurrency": 100,
            "rps": 5000,
            "latency_ms": {"p50": 1, "p99": 3},
            "valid": True,
            "flags": [],
        },
        {
            "cell_id": "c",
            "server": "tornado",
            "group": "hold",
            "concurrency": None,
            "rss_peak_mb": 50,
            "latency_ms": None,
            "cpu_per_core": None,
        },
    ]
    (run_dir / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    result = analyze(run_dir)
    assert not result.failed_charts and any("metadata.json" in w for w in result.warnings)
    assert (run_dir / "report.html").read_text().count("data-cell=") == 3


def test_gnuplot_missing_is_a_clear_error_and_the_report_is_still_written(tmp_path, monkeypatch):
    run_dir = make_run(tmp_path / "run")
    monkeypatch.setenv("GNUPLOT", "gnuplot-that-does-not-exist")
    with pytest.raises(AnalysisError, match="gnuplot-nox"):
        analyze(run_dir)
    html = (run_dir / "report.html").read_text()
    assert "Chart not drawn" in html and html.count("<tr class=") == len(records_by_id(run_dir))


class ReportParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.images, self.links, self.in_table, self.external = [], [], [], False, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and attrs.get("id") == "cell-table":
            self.in_table = True
        if tag == "tr" and self.in_table and "data-cell" in attrs:
            self.rows.append((attrs["data-cell"], attrs.get("class", "")))
        if tag == "img":
            self.images.append(attrs["src"])
        if tag == "a" and attrs.get("href", "").startswith("charts/"):
            self.links.append(attrs["href"])
        for key in ("src", "href"):
            if attrs.get(key, "").startswith(("http:", "https:", "//")):
                self.external.append(attrs[key])
        if tag in ("script", "link"):
            self.external.append(tag)

    def handle_endtag(self, tag):
        if tag == "table":
            self.in_table = False


@pytest.mark.spawns  # gnuplot (the analysed run)
@needs_gnuplot
def test_report_lists_every_cell_and_embeds_every_chart(analyzed_run):
    run_dir, result = analyzed_run
    parser = ReportParser()
    parser.feed((run_dir / "report.html").read_text())
    cells = records_by_id(run_dir)
    assert sorted(cell_id for cell_id, _ in parser.rows) == sorted(cells)
    classes = dict(parser.rows)
    assert classes[FLAGGED_ID] == "flagged" and classes[FAILED_ID] == "failed"
    assert sum(1 for c in classes.values() if c == "") == len(cells) - 2
    assert sorted(parser.images) == sorted(f"charts/{n}.png" for n in EXPECTED_CHARTS)
    for src in parser.images + parser.links:
        assert (run_dir / src).is_file(), src
    assert {f"charts/{n}.svg" for n in EXPECTED_CHARTS} <= set(parser.links)
    assert parser.external == [], "report.html must open offline: no scripts, stylesheets or remote URLs"
    html = (run_dir / "report.html").read_text()
    for fact in (
        "0123456789abcdef0123456789abcdef01234567",
        "17.0.99-synthetic",
        "wrk",
        SYNTHETIC_CPU,
        "SYNTHETIC data",
    ):
        assert fact in html


@pytest.mark.spawns  # python -m crossbench_analysis
def test_cli_exit_status_for_a_directory_that_is_not_a_run(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "crossbench_analysis", "analyze", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )  # installed: no PYTHONPATH
    assert proc.returncode == 1 and "no cells.jsonl" in proc.stderr


@pytest.mark.spawns  # analyze.sh
@needs_gnuplot
def test_analyze_sh_draws_a_run(tmp_path):
    run_dir = make_run(
        tmp_path / "run", concurrency=(1, 100), delays=(500,), groups=("static", "delay"), flagged=False, failed=False
    )
    proc = subprocess.run([str(ANALYSIS / "analyze.sh"), str(run_dir)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (run_dir / "report.html").is_file()
    assert png_size(run_dir / "charts" / "efficiency.png") == (1200, 750)
    manifest = json.loads((run_dir / "charts" / "data" / "manifest.json").read_text())
    assert manifest["run_id"] == "20261122-0130-seed002-synthetic"
