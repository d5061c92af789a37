"""The maxthreads family's knee chart: each setting's ratio against concurrency with the knee the analysis finds
in the records (judge/knees.py), kept beside the chart data as knees.jsonl. maxthreads.py lists it among the
family's charts."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict
from pathlib import Path

from crossbench_analysis.judge import knees as knee_finder
from crossbench_analysis.read.runinfo import Run

from .kit import ChartJob
from .kit_files import write_blocks
from .kit_intervals import interval_key
from .kit_labels import series_order, shades_in_order
from .kit_pools import queue_groups


def knee_shades(knees: list[dict]) -> tuple[str, str]:
    """Colours and dashes of a panel's knee series, as the chart kit gives every chart's: each server's k-th
    setting its shade in setting order (a run that sweeps Tomcat beside Tornado draws Tornado in its blue)."""
    styles = shades_in_order([k["server"] for k in knees])
    return " ".join(color for color, _ in styles), " ".join(str(dash) for _, dash in styles)


def write_knees(run: Run, data_dir: Path) -> list[dict]:
    """Finds every setting's knee in the run's cells (so re-analysing an old run recomputes them) and keeps them
    beside the chart data as knees.jsonl."""
    found = [asdict(k) for k in knee_finder.settings_knees(run.cells)]
    knee_finder.write_jsonl(found, data_dir / knee_finder.KNEES_FILE)
    return found


def knee_range(k: dict) -> list[float | None]:
    """[middle, low, high] of the knee's bar: the fitted N's interval, or the bracket (middle in log C)."""
    if k["status"] == "fitted" and k["knee_low"] is not None:
        return [k["knee_concurrency"], k["knee_low"], k["knee_high"]]
    if k["status"] == "bracket" and k["bracket"]:
        low, high = k["bracket"]
        return [round((low * high) ** 0.5, 1), low, high]
    return [None, None, None]


LABEL_EDGE = 0.8  # a knee this far along the panel's log C range, or further, is labelled to its left


def label_edge(concurrencies: list[float]) -> float:
    """The concurrency past which a knee's label would run off the panel's right edge (LABEL_EDGE of the log range)."""
    low, high = min(concurrencies), max(concurrencies)
    return low * (high / low) ** LABEL_EDGE


def knees_chart(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    """Ratio vs concurrency, a curve per setting, its knee marked; one panel per group and delay."""
    queues = queue_groups(cells)
    # nothing to draw for a setting whose every launch was left out, nor one at one concurrency (no curve to bend)
    knees = [k for k in write_knees(run, data_dir) if k.get("group") not in queues and len(k["points"]) > 1]
    if not knees:
        return None
    panels: dict[tuple, list[dict]] = defaultdict(list)
    for k in knees:
        panels[(k["group"], k["delay_ms"])].append(k)
    params: dict = {
        "panels": len(panels),
        "nflagged": sum(1 for k in knees for pt in k["points"] if not pt.get("valid", True)),
        **interval_key(
            [
                c
                for c in cells
                if c["cell_id"] in {i for k in knees for pt in k["points"] for i in pt.get("cell_ids", [])}
            ]
        ),
    }
    files = []
    for p, ((group, delay), mine) in enumerate(sorted(panels.items(), key=lambda kv: (kv[0][1], kv[0][0])), 1):
        mine = sorted(mine, key=lambda k: series_order(k["server"], k["setting"]))
        shades, dashes = knee_shades(mine)
        name, marks = f"maxthreads_knees_{group}_d{delay}.dat", f"maxthreads_knees_{group}_d{delay}_marks.dat"
        write_blocks(
            data_dir / name,
            f"maxthreads knees, group {group}, delay {delay} ms (run "
            f"{run.run_id}); ratio = {mine[0]['ratio_used']}, efficiency_ratio = the seed's",
            ["concurrency", "ratio", "threads_peak", "efficiency_ratio", "valid", "ratio_lo", "ratio_hi", "launches"],
            [
                (
                    k["setting"],
                    [
                        [
                            pt["concurrency"],
                            pt["ratio"],
                            pt.get("threads_peak"),
                            pt.get("efficiency_ratio"),
                            pt.get("valid", True),
                            pt.get("ratio_low"),
                            pt.get("ratio_high"),
                            pt.get("launches"),
                        ]
                        for pt in k["points"]
                    ],
                )
                for k in mine
            ],
        )
        write_blocks(
            data_dir / marks,
            "knees: the hinge's fitted N (NaN: none stated), its 95 % interval, or "
            "the bracket of measured concurrencies that holds it (range_*); predicted = the parallel limit "
            "(maxThreads, workers)",
            ["knee_concurrency", "threshold", "predicted", "range_mid", "range_low", "range_high", "text"],
            [
                (
                    k["setting"],
                    [
                        [
                            k["knee_concurrency"] if k["status"] == "fitted" else None,
                            k["threshold"],
                            k["predicted"],
                            *knee_range(k),
                            k["text"],
                        ]
                    ],
                )
                for k in mine
            ],
        )
        files += [name, marks]
        params.update(
            {
                f"file_{p}": name,
                f"marks_{p}": marks,
                f"nseries_{p}": len(mine),
                f"key_{p}": 1,
                f"title_{p}": f"{group}, delay {delay / 1000:g} s",
                f"colors_{p}": shades,
                f"dashes_{p}": dashes,
                f"threshold_{p}": mine[0]["threshold"],
                f"ratio_{p}": mine[0]["ratio_used"],
                f"predicted_{p}": " ".join(str(k["predicted"] or "NaN") for k in mine),
                f"label_edge_{p}": label_edge([pt["concurrency"] for k in mine for pt in k["points"]]),
            }
        )
    summary = "; ".join(f"{k['setting']}: {k['text']}" for k in knees)
    ratio = knees[0]["ratio_used"].replace("_", " ")
    return ChartJob(
        "maxthreads_knees",
        "maxthreads_knees.gp",
        f"Where the ratio bends: {ratio} vs concurrent clients per server setting, knee marked",
        "One curve per setting (Tomcat's maxThreads or virtual threads, gunicorn's workers, ...), log "
        "scales. The knee (diamond) is the parallel limit N of a hinge, ratio = a max(1, C / N), fitted "
        "over every launch; its horizontal bar is N's 95 % interval (from the launches' spread), or, "
        "where the launches do not place it more closely, the bracket of measured concurrencies that holds it; the dotted "
        "vertical line of the same colour is the prediction, the parallel limit (maxThreads, workers). Thin dashed: "
        "the seed's ratio from the window's count, which past the knee shows the queue the answered "
        "requests' latency hides when the window is short. Each point is the geometric mean of its "
        "launches, its bar the 95 % interval (none under 3 launches). From "
        f"charts/data/knees.jsonl: {summary}.",
        params,
        files,
    )
