"""TechEmpower's test types (the tfb experiment, and seed 004's techempower group): responses per second against
concurrent clients, one panel per test type (level), a line per stack (each worker count of a sweep its own),
each point with its 95 % interval over launches."""

from __future__ import annotations

from pathlib import Path

from crossbench.endpoints import TECHEMPOWER
from crossbench_analysis.read.runinfo import Run, num

from .kit import ChartJob, against_concurrency, flagged, how, missing_note, panel_files, with_headings

TFB_GROUPS = ("techempower",)  # other experiments' groups run by TechEmpower's protocol (seed004)
HEADINGS = {"tfb_rps": "TechEmpower's test types: responses per second"}


def is_tfb(cell: dict) -> bool:
    """A cell of TechEmpower's protocol: the tfb experiment's, or a group that follows it in another experiment."""
    experiment = str(cell.get("experiment") or "")
    return cell.get("endpoint") in TECHEMPOWER and (
        experiment == "tfb" or experiment.startswith("tfb-") or cell.get("group") in TFB_GROUPS
    )


def jobs(run: Run, data_dir: Path) -> list[ChartJob]:
    return with_headings([tfb_rps(run, data_dir)], HEADINGS)


def tfb_rps(run: Run, data_dir: Path) -> ChartJob | None:
    cells = [c for c in against_concurrency(run.cells) if is_tfb(c)]
    if not cells:
        return None
    params, files = panel_files(
        run,
        data_dir,
        "tfb_rps",
        cells,
        ["concurrency", "rps", "valid", "repetition", "cell_id"],
        lambda c: [c.get("concurrency"), num(c.get("rps"))],
        ("rps",),
    )
    params["nflagged"] = flagged(cells, "rps")
    return ChartJob(
        "tfb_rps",
        "tfb_rps.gp",
        f"TechEmpower's test types: responses per second ({how(cells)})",
        "Responses per second (requests / measured window) of each stack at each of TechEmpower's "
        "levels, one panel per test type (queries and updates: one panel per rows per request), a line "
        "per stack and worker count; bars: the 95 % interval over launches (none with one launch). "
        "TechEmpower quotes each stack's best level; the findings do the same.",
        params,
        files,
        missing_note(cells, "rps"),
    )
