"""The pictures the README and docs/ show, made again from the committed quick run (docs/results/quick/, the
newest run there, which keeps its cells.jsonl): the run analysed afresh in a scratch copy, a few of its charts
copied, and its report.html photographed by headless Chromium.

python -m crossbench_analysis pictures [--out docs/images]
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from .pipeline import analyze
from .report import front

# chart file in the run's charts/ -> the name it has in docs/images/
CHARTS = {
    "throughput.png": "quick-throughput.png",
    "latency.png": "quick-latency.png",
    "efficiency.png": "quick-efficiency.png",
    "maxthreads_knees.png": "quick-knees.png",
    "latency_spectrum.png": "quick-latency-spectrum.png",
}
REPORT_SHOT = "report.png"
WINDOW = "1280,1600"  # the screenshot's size: the report's header, summary and first findings
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# Offline and quiet: no first-run page, no background fetches this machine's closed network would refuse.
BROWSER_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
)


class PicturesError(RuntimeError):
    pass


def browser() -> str:
    found = next(filter(None, (shutil.which(name) for name in BROWSERS)), None)
    if found is None:
        raise PicturesError("no Chromium found (Debian: apt-get install chromium); the report's picture needs it")
    return found


def screenshot(page: Path, picture: Path, scratch: Path) -> None:
    command = [
        browser(),
        *BROWSER_FLAGS,
        f"--user-data-dir={scratch / 'profile'}",
        f"--window-size={WINDOW}",
        "--virtual-time-budget=10000",
        f"--screenshot={picture}",
        page.resolve().as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    if done.returncode != 0 or not picture.is_file():
        raise PicturesError(
            f"Chromium took no screenshot of {page} (exit {done.returncode}): "
            f"{done.stderr.strip().splitlines()[-1:] or ''}"
        )


def make(results: Path, out: Path) -> list[Path]:
    """Every picture written into `out`; returns their paths."""
    run = front.newest_run(results, front.QUICK_SET)
    if run is None or not (run / "cells.jsonl").is_file():
        raise PicturesError(f"{results / front.QUICK_SET / 'runs'} holds no quick run with its cells.jsonl")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="crossbench-pictures-") as scratch_name:
        scratch = Path(scratch_name)
        copy = scratch / run.name
        shutil.copytree(run, copy)
        analyze(copy)
        written = []
        for chart, name in CHARTS.items():
            if (copy / "charts" / chart).is_file():
                written.append(Path(shutil.copyfile(copy / "charts" / chart, out / name)))
        screenshot(copy / "report.html", out / REPORT_SHOT, scratch)
        return [*written, out / REPORT_SHOT]
