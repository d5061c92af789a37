"""How the noise figures read a disturbance of known size: runs of one experiment on one machine, some beside a
planted busy loop (crossbench.sampling.planted_load; its planted.json in the run directory), the others quiet.
Each launch's headline is read against the launches of its point in the quiet runs nearest it in time (never its
own run): what the loop changed, beside the launch's noise_impact_percent, foreign_cpu_percent and noisy_host flag.
Per candidate limit of the impact figure, the launches it would miss (moved past the precision target, impact at
or under the limit) and those it would flag for nothing (not moved, impact over it): the limit
runner/crossbench/sampling/noise.py holds is read from that table.

python -m crossbench_analysis noise-study RUN [RUN ...] [--json FILE]
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from crossbench.figures import points
from crossbench.flags import NOISY_HOST
from crossbench.sampling.noise import NOISE_IMPACT_LIMIT
from crossbench_analysis.read.runinfo import AnalysisError, Run, load_run

PLANTED = "planted.json"
MOVED = NOISE_IMPACT_LIMIT / 100  # a launch moved when its headline is worse by more than the precision target
LIMITS = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
WORSE = {"rps": -1, "latency_ratio": 1, "latency_ms.p99": 1}  # the way a disturbance moves each headline


def condition(run: Run) -> str:
    """'quiet', or the planted loop's role and duty ('server core 10 %')."""
    planted_file = run.path / PLANTED
    if not planted_file.is_file():
        return "quiet"
    planted = json.loads(planted_file.read_text())
    run_config = (run.metadata.get("config") or {}).get("run") or {}
    role = next(
        (name for name in ("server", "loadgen") if planted["core"] in (run_config.get(f"{name}_cpus") or [])),
        f"core {planted['core']}",
    )
    return f"{role} core {planted['duty_percent']:g} %"


def headline_value(cell: dict) -> tuple[str, float] | None:
    name = points.headline(cell)
    value = cell.get(name) if "." not in name else (cell.get("latency_ms") or {}).get(name.split(".", 1)[1])
    if name not in WORSE or not isinstance(value, (int, float)) or value <= 0:
        return None
    return name, float(value)


def launches(run: Run) -> dict[str, list[dict]]:
    """The run's measured launches by point."""
    found: dict[str, list[dict]] = {}
    for cell in run.cells:
        if cell.get("status") == "ok" and headline_value(cell):
            found.setdefault(cell["point_id"], []).append(cell)
    return found


def nearest_quiet(conditions: list[str], at: int) -> list[int]:
    """The quiet runs just before and just after run `at` in time (that run itself never), by index."""
    quiet = [i for i, said in enumerate(conditions) if said == "quiet" and i != at]
    return [i for i in quiet if i < at][-1:] + [i for i in quiet if i > at][:1]


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def rows(runs: list[Run]) -> list[dict]:
    """One row per launch: its condition, point, headline, change against the nearest quiet runs (positive is
    worse), and its noise figures."""
    conditions = [condition(run) for run in runs]
    measured = [launches(run) for run in runs]
    found = []
    for at, run in enumerate(runs):
        baseline = nearest_quiet(conditions, at)
        for point_id, cells in measured[at].items():
            base = [headline_value(cell)[1] for i in baseline for cell in measured[i].get(point_id, [])]
            if not base:
                continue
            reference = geometric_mean(base)
            for cell in cells:
                name, value = headline_value(cell)
                found.append(
                    {
                        "run": run.run_id,
                        "condition": conditions[at],
                        "point": point_id,
                        "headline": name,
                        "change": round(WORSE[name] * (value / reference - 1), 4),
                        "noise_impact_percent": cell.get("noise_impact_percent"),
                        "foreign_cpu_percent": cell.get("foreign_cpu_percent"),
                        "steal_percent": cell.get("steal_percent"),
                        "flagged": NOISY_HOST in (cell.get("flags") or []),
                    }
                )
    return found


def limits(found: list[dict]) -> list[dict]:
    """Per candidate limit of noise_impact_percent: launches moved past MOVED it misses, and launches not moved
    it flags."""
    judged = [launch for launch in found if launch["noise_impact_percent"] is not None]
    moved = [launch for launch in judged if launch["change"] > MOVED]
    still = [launch for launch in judged if launch["change"] <= MOVED]
    return [
        {
            "limit": limit,
            "moved": len(moved),
            "missed": sum(launch["noise_impact_percent"] <= limit for launch in moved),
            "still": len(still),
            "flagged_still": sum(launch["noise_impact_percent"] > limit for launch in still),
        }
        for limit in LIMITS
    ]


def study(run_dirs: list[Path]) -> dict:
    """The rows, their summary per condition and point, and the limits' table; AnalysisError for runs of
    different experiments or machines, or without a quiet run."""
    runs = sorted((load_run(path) for path in run_dirs), key=lambda run: run.metadata.get("started_at") or "")
    if len({run.experiment for run in runs}) > 1 or len({run.machine_name for run in runs}) > 1:
        raise AnalysisError("noise-study: give runs of one experiment on one machine")
    if not any(condition(run) == "quiet" for run in runs):
        raise AnalysisError(f"noise-study: no quiet run (each planted run has {PLANTED} in its directory)")
    found = rows(runs)
    return {
        "experiment": runs[0].experiment,
        "machine": runs[0].machine_name,
        "runs": [{"run": run.run_id, "condition": condition(run), "planted": planted(run)} for run in runs],
        "moved_past": MOVED,
        "summary": summary(found),
        "limits": {
            "all": limits(found),
            **{name: limits([launch for launch in found if launch["headline"] == name]) for name in headlines(found)},
        },
        "launches": found,
    }


def headlines(found: list[dict]) -> list[str]:
    return sorted({launch["headline"] for launch in found})


def planted(run: Run) -> dict | None:
    planted_file = run.path / PLANTED
    return json.loads(planted_file.read_text()) if planted_file.is_file() else None


def summary(found: list[dict]) -> list[dict]:
    groups: dict[tuple[str, str], list[dict]] = {}
    for launch in found:
        groups.setdefault((launch["condition"], launch["point"]), []).append(launch)
    out = []
    for (cond, point), group in sorted(groups.items(), key=lambda item: (order(item[0][0]), item[0][1])):
        out.append(
            {
                "condition": cond,
                "point": point,
                "headline": group[0]["headline"],
                "launches": len(group),
                "change": span([launch["change"] * 100 for launch in group]),
                "noise_impact_percent": span([launch["noise_impact_percent"] for launch in group]),
                "foreign_cpu_percent": span([launch["foreign_cpu_percent"] for launch in group]),
                "flagged": sum(launch["flagged"] for launch in group),
            }
        )
    return out


def order(cond: str) -> tuple:
    """quiet first, then by role and by duty."""
    if cond == "quiet":
        return (0, "", 0.0)
    words = cond.split()
    return (1, words[0], float(words[2]))


def span(values: list) -> list[float] | None:
    known = [v for v in values if v is not None]
    return [round(min(known), 1), round(max(known), 1)] if known else None


def text(result: dict) -> str:
    """The study as markdown: the runs, the summary table and the limits' table."""

    def shown(pair, sign=False):
        if pair is None:
            return "-"
        low, high = (f"{v:+.1f}" if sign else f"{v:.1f}" for v in pair)
        return low if low == high else f"{low} to {high}"

    lines = [
        f"# Planted load against the noise figures: {result['experiment']} on {result['machine']}",
        "",
        "Runs in time order: "
        + ", ".join(
            f"{run['run']} ({run['condition']}"
            + (f", reached {run['planted']['reached_percent']} %" if run["planted"] else "")
            + ")"
            for run in result["runs"]
        )
        + ".",
        "",
        "Change: each launch's headline against its point's launches in the nearest quiet runs before and after"
        " (geometric mean), in percent, positive where worse.",
        "",
        "| condition | point | headline | launches | change % | impact % | foreign % | flagged |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for entry in result["summary"]:
        lines.append(
            f"| {entry['condition']} | {entry['point']} | {entry['headline']} | {entry['launches']} "
            f"| {shown(entry['change'], True)} | {shown(entry['noise_impact_percent'])} "
            f"| {shown(entry['foreign_cpu_percent'])} | {entry['flagged']} of {entry['launches']} |"
        )
    lines += [
        "",
        f"Per limit of noise_impact_percent, over every launch with an impact figure, in all and per headline: those"
        f" whose headline moved more than {result['moved_past']:.0%} worse that the limit misses, and those that did"
        " not that it flags.",
        "",
        "| limit % | "
        + " | ".join(f"{name}: missed (of moved) | {name}: flagged (of not moved)" for name in result["limits"])
        + " |",
        "|---|" + "---|---|" * len(result["limits"]),
    ]
    for at, limit in enumerate(LIMITS):
        cells = []
        for table in result["limits"].values():
            row = table[at]
            cells += [f"{row['missed']} of {row['moved']}", f"{row['flagged_still']} of {row['still']}"]
        lines.append(f"| {limit:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write(result: dict, path: Path) -> None:
    path.write_text(json.dumps(result, indent=1) + "\n")
