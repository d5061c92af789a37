"""Runs gnuplot on each chart's .gp script, once for PNG (pngcairo) and once for SVG.

Parameters reach the scripts only as gnuplot variables (`gnuplot -e "name='value'; ..." script.gp`): values
are data (file names, titles, numbers), never gnuplot commands. gnuplot runs in charts/data/ so the scripts
name their data files relative to it, and finds common.gp through GNUPLOT_LIB."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from crossbench_analysis.read.runinfo import AnalysisError

from .kit import ChartJob

GNUPLOT_DIR = Path(__file__).resolve().parents[2] / "gnuplot"
FORMATS = ("png", "svg")
TIMEOUT_S = 120


class GnuplotMissing(AnalysisError):
    pass


@dataclass
class PlotResult:
    name: str
    outputs: list[Path] = field(default_factory=list)
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


def gnuplot_binary() -> str:
    wanted = os.environ.get("GNUPLOT") or "gnuplot"
    binary = shutil.which(wanted)
    if not binary:
        raise GnuplotMissing(
            f"{wanted} not found (PATH or $GNUPLOT): the charts need gnuplot (Debian/Ubuntu: "
            "apt-get install gnuplot-nox; GNUPLOT=/path/to/gnuplot picks another)"
        )
    return binary


def gp_value(value) -> str:
    """A Python value as a gnuplot constant: numbers as numbers, everything else a single-quoted string."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if value == value and abs(value) != float("inf") else "NaN"
    text = " ".join(str(value).split())  # one line: -e takes no newlines
    return "'" + text.replace("'", "''") + "'"


def assignments(params: dict) -> str:
    for name in params:
        if not name.isidentifier():
            raise ValueError(f"not a gnuplot variable name: {name!r}")
    return "; ".join(f"{name}={gp_value(value)}" for name, value in params.items())


def run_gnuplot(script: Path, params: dict, cwd: Path, timeout_s: float = TIMEOUT_S) -> None:
    """One bounded gnuplot run; AnalysisError with gnuplot's own message when it fails."""
    env = dict(os.environ)
    env["GNUPLOT_LIB"] = os.pathsep.join(filter(None, [str(GNUPLOT_DIR), env.get("GNUPLOT_LIB")]))
    command = [gnuplot_binary(), "-e", assignments(params), str(script)]
    try:
        proc = subprocess.run(
            command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired as e:
        raise AnalysisError(f"gnuplot {script.name} took longer than {timeout_s:g} s and was stopped") from e
    if proc.returncode != 0:
        raise AnalysisError(f"gnuplot {script.name} failed (exit {proc.returncode}):\n{proc.stderr.strip()}")
    # gnuplot prints warnings (e.g. "Skipping data file with no valid points" for a series a panel lacks)
    # and still draws; they are expected and not shown.


def plot_chart(job: ChartJob, charts_dir: Path, footer: str, formats=FORMATS) -> PlotResult:
    result = PlotResult(job.name)
    script = GNUPLOT_DIR / job.script
    data_dir = charts_dir / "data"
    try:
        if not script.is_file():
            raise AnalysisError(f"no gnuplot script {script}")
        for fmt in formats:
            out = charts_dir / f"{job.name}.{fmt}"
            out.unlink(missing_ok=True)
            params = {
                "fmt": fmt,
                "outfile": str(out.resolve()),
                "title": job.title,
                "footer": footer,
                "note": job.note,
                **job.params,
            }
            run_gnuplot(script, params, data_dir)
            if not out.is_file() or out.stat().st_size == 0:
                raise AnalysisError(f"gnuplot {job.script} exited 0 but wrote no {out.name}")
            result.outputs.append(out)
    except GnuplotMissing:
        raise
    except AnalysisError as e:
        result.error = str(e)
    return result


def plot_all(jobs: list[ChartJob], charts_dir: Path, footer: str) -> list[PlotResult]:
    gnuplot_binary()  # fail once, clearly, before anything else
    return [plot_chart(job, charts_dir, footer) for job in jobs]
