"""The report in a real browser (headless Chromium, offline, file://): every chart image loads, the table has
one row per cell, and a screenshot renders, on a SYNTHETIC run directory (not a measurement); and on recorded
real runs (fixtures/runs/), every finding links to a chart that loads and to cells that exist."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from analysis_markers import needs_gnuplot

from crossbench_analysis import analyze

RUNS = Path(__file__).parent / "fixtures" / "runs"

CHROMIUM = next(filter(None, (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome"))), None)
pytestmark = [
    needs_gnuplot,
    pytest.mark.spawns,
    pytest.mark.skipif(  # gnuplot and Chromium
        CHROMIUM is None,
        reason="Chromium not installed (Debian: apt-get install chromium); the report's browser check needs it",
    ),
]

# Appended to a copy of report.html (the report itself has no script): after every image has loaded or
# failed, writes what the browser saw into the DOM for --dump-dom to carry out.
CHECK = """<script>
window.addEventListener('load', function () {
  var result = {
    images: Array.prototype.map.call(document.images, function (img) {
      return {src: img.getAttribute('src'), complete: img.complete, width: img.naturalWidth};
    }),
    rows: document.querySelectorAll('#cell-table tbody tr').length,
    flagged: document.querySelectorAll('#cell-table tbody tr.flagged').length,
    failed: document.querySelectorAll('#cell-table tbody tr.failed').length
  };
  var out = document.createElement('pre');
  out.id = 'browser-check';
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
});
</script>"""


def chromium(*args, user_data: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        f"--user-data-dir={user_data}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_report_images_load_and_table_has_a_row_per_cell(analyzed_run, tmp_path):
    run_dir, result = analyzed_run
    html = (run_dir / "report.html").read_text()
    check_page = run_dir / "report-browser-check.html"
    check_page.write_text(html.replace("</body>", CHECK + "\n</body>"))
    try:
        proc = chromium(
            "--virtual-time-budget=20000",
            "--run-all-compositor-stages-before-draw",
            "--dump-dom",
            check_page.resolve().as_uri(),
            user_data=tmp_path / "profile",
        )
    finally:
        check_page.unlink()
    match = re.search(r'<pre id="browser-check">(.*?)</pre>', proc.stdout, re.S)
    assert match, f"no browser result (exit {proc.returncode}): {proc.stderr[-2000:]}"
    seen = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    n_cells = len((run_dir / "cells.jsonl").read_text().splitlines())
    assert seen["rows"] == n_cells
    assert seen["flagged"] == 1 and seen["failed"] == 1
    assert len(seen["images"]) == len(result.charts)
    for image in seen["images"]:
        assert image["complete"] and image["width"] == 1200, f"{image['src']} did not load: {image}"


def test_report_screenshot_renders(analyzed_run, tmp_path):
    run_dir, _ = analyzed_run
    shot = tmp_path / "report.png"
    proc = chromium(
        f"--screenshot={shot}",
        "--window-size=1400,3000",
        "--hide-scrollbars",
        "--virtual-time-budget=20000",
        (run_dir / "report.html").resolve().as_uri(),
        user_data=tmp_path / "profile",
    )
    assert shot.is_file(), proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1400, 3000)
    assert len(data) > 100_000, "a page with charts on it, not a blank one"


# What the browser saw of the findings: each finding's chart link (the in-page figure it points at, whether that
# figure's image loaded) and its cell links (resolved file URLs, checked on disk by the test).
FINDINGS_CHECK = """<script>
window.addEventListener('load', function () {
  var found = Array.prototype.map.call(document.querySelectorAll('#findings li.finding'), function (li) {
    var chart = li.querySelector('a.chart-link'), file = li.querySelector('a.chart-file');
    var target = chart ? document.getElementById(chart.getAttribute('href').slice(1)) : null;
    var img = target ? target.querySelector('img') : null;
    return {text: li.textContent.trim().slice(0, 120), chart: chart ? chart.getAttribute('href') : null,
            figure: !!target, loaded: !!(img && img.complete && img.naturalWidth > 0),
            file: file ? file.href : null, img: img ? img.src : null,
            cells: Array.prototype.map.call(li.querySelectorAll('a.cell-link'), function (a) { return a.href; }),
            listed: Array.prototype.every.call(li.querySelectorAll('a.cell-link'), function (a) {
              return !!document.querySelector('#cell-table tr[data-cell="' + a.textContent + '"]'); })};
  });
  var out = document.createElement('pre');
  out.id = 'browser-check';
  out.textContent = JSON.stringify({findings: found,
                                    before_charts: document.getElementById('findings').compareDocumentPosition(
                                      document.getElementById('charts')) === Node.DOCUMENT_POSITION_FOLLOWING});
  document.body.appendChild(out);
});
</script>"""


def browser_view(run_dir: Path, script: str, profile: Path) -> dict:
    """Loads a copy of the run's report with `script` appended and returns the JSON it wrote into the page."""
    check_page = run_dir / "report-browser-check.html"
    check_page.write_text((run_dir / "report.html").read_text().replace("</body>", script + "\n</body>"))
    try:
        proc = chromium(
            "--virtual-time-budget=20000",
            "--run-all-compositor-stages-before-draw",
            "--dump-dom",
            check_page.resolve().as_uri(),
            user_data=profile,
        )
    finally:
        check_page.unlink()
    match = re.search(r'<pre id="browser-check">(.*?)</pre>', proc.stdout, re.S)
    assert match, f"no browser result (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(
        match.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    )


@pytest.mark.parametrize("name", ["quick", "seed004-quick"])
def test_every_finding_links_a_chart_and_cells_that_exist(tmp_path, name):
    run_dir = tmp_path / name
    shutil.copytree(RUNS / name, run_dir)
    analyze(run_dir)
    records = json.loads((run_dir / "findings.json").read_text())["findings"]
    seen = browser_view(run_dir, FINDINGS_CHECK, tmp_path / "profile")
    assert seen["before_charts"], "the findings open the page, before the charts"
    assert len(seen["findings"]) == len(records) > 0
    for finding in seen["findings"]:
        assert finding["chart"] and finding["figure"], f"no chart for: {finding['text']}"
        assert finding["loaded"], f"{finding['img']} did not load for: {finding['text']}"
        assert finding["file"] == finding["img"], "the PNG link and the figure show the same chart"
        assert finding["cells"] and finding["listed"], f"cells missing for: {finding['text']}"
        for url in finding["cells"]:
            assert url.startswith("file://") and Path(url[len("file://") :]).is_dir(), url
    shot = tmp_path / f"{name}-report.png"
    proc = chromium(
        f"--screenshot={shot}",
        "--window-size=1400,1600",
        "--hide-scrollbars",
        "--virtual-time-budget=20000",
        (run_dir / "report.html").resolve().as_uri(),
        user_data=tmp_path / "profile",
    )
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", proc.stderr[-2000:]
    if os.environ.get("CROSSBENCH_SCREENSHOTS"):  # a folder to keep the screenshot in, for a person to look at
        shutil.copy(shot, Path(os.environ["CROSSBENCH_SCREENSHOTS"]) / shot.name)
