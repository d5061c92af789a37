"""The report in a real browser (headless Chromium, offline, file://): every chart image loads, the table has
one row per cell, and a screenshot renders. Run on a SYNTHETIC run directory (not a measurement)."""
from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from analysis_markers import needs_gnuplot

CHROMIUM = next(filter(None, (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome"))), None)
pytestmark = [needs_gnuplot, pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium not installed (Debian: apt-get install chromium); the report's browser "
                             "check needs it")]

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
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-extensions", f"--user-data-dir={user_data}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_report_images_load_and_table_has_a_row_per_cell(analyzed_run, tmp_path):
    run_dir, result = analyzed_run
    html = (run_dir / "report.html").read_text()
    check_page = run_dir / "report-browser-check.html"
    check_page.write_text(html.replace("</body>", CHECK + "\n</body>"))
    try:
        proc = chromium("--virtual-time-budget=20000", "--run-all-compositor-stages-before-draw", "--dump-dom",
                        check_page.resolve().as_uri(), user_data=tmp_path / "profile")
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
    proc = chromium(f"--screenshot={shot}", "--window-size=1400,3000", "--hide-scrollbars",
                    "--virtual-time-budget=20000", (run_dir / "report.html").resolve().as_uri(),
                    user_data=tmp_path / "profile")
    assert shot.is_file(), proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1400, 3000)
    assert len(data) > 100_000, "a page with charts on it, not a blank one"
