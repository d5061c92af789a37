"""How far compare can be trusted on this machine: runs of one configuration compared pairwise (A/A: every
"faster" or "slower" is a false alarm), and the same pairs with a planted change (every launch of B made `plant`
slower in throughput, so latency and the efficiency ratio grow by 1 / (1 - plant)): the share compare finds
is its power. The planted change rides on real run-to-run noise, measured here.

python -m crossbench_analysis aa RUN RUN [RUN ...] [--plant 0.10] [--noise-floor SHARE]
"""
from __future__ import annotations

import itertools
import json
import shutil
import tempfile
from pathlib import Path

from . import compare
from .runinfo import load_run

SLOWER_FIGURES = {"rps": -1, "bytes_per_s": -1, "rps_steady": -1, "efficiency_ratio": 1, "latency_ratio": 1}


def planted_copy(run_dir: Path, into: Path, plant: float) -> Path:
    """A copy of a run (records only) whose every launch is `plant` slower: throughput x (1 - plant), latencies
    and ratios / (1 - plant). points.jsonl is left out so it is computed from the changed records."""
    into.mkdir(parents=True)
    shutil.copy(run_dir / "metadata.json", into / "metadata.json")
    factor = 1 - plant
    lines = []
    for line in (run_dir / "cells.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        for name, direction in SLOWER_FIGURES.items():
            if isinstance(record.get(name), (int, float)):
                record[name] *= factor if direction < 0 else 1 / factor
        latency = record.get("latency_ms") or {}
        for key, value in latency.items():
            if isinstance(value, (int, float)):
                latency[key] = value / factor
        lines.append(json.dumps(record))
    (into / "cells.jsonl").write_text("\n".join(lines) + "\n")
    return into


def verdict_counts(run_a: Path, run_b: Path, noise_floor: float | None) -> dict[str, int]:
    return compare.compare_runs(load_run(run_a), load_run(run_b), noise_floor=noise_floor).counts()


def study(runs: list[Path], plant: float = 0.10, noise_floor: float | None = None) -> dict:
    """False alarms over every pair of runs, and the planted change found over the same pairs (B planted)."""
    pairs = list(itertools.combinations(runs, 2))
    aa = {"points": 0, "changed": 0, "cannot_tell": 0}
    found = {"points": 0, "slower": 0}
    with tempfile.TemporaryDirectory() as scratch:
        for i, (a, b) in enumerate(pairs):
            counts = verdict_counts(a, b, noise_floor)
            aa["points"] += sum(counts.values())
            aa["changed"] += counts.get("faster", 0) + counts.get("slower", 0)
            aa["cannot_tell"] += counts.get("cannot tell", 0)
            planted = verdict_counts(a, planted_copy(b, Path(scratch) / f"planted-{i}", plant), noise_floor)
            found["points"] += sum(planted.values())
            found["slower"] += planted.get("slower", 0)
    floors = compare.compare_stats.floors(noise_floor)
    return {"runs": [str(r) for r in runs], "pairs": len(pairs), "plant": plant, "noise_floor": floors,
            "aa": {**aa, "false_alarm_rate": aa["changed"] / aa["points"] if aa["points"] else None},
            "planted": {**found, "power": found["slower"] / found["points"] if found["points"] else None}}


def observed_floor(runs: list[Path], share: float = 95) -> dict:
    """The run-to-run noise of each figure on this machine: the `share` percentile (nearest rank) of |B/A - 1|
    over every pair of these runs of one configuration; what noise_floor.toml should hold. A figure's floor is
    taken over the points whose verdict it gives (their headline): rps over the static points, not diluted by
    the delayed points' steady rps, which the latency ratio judges. A figure that is no point's headline
    (p99 and the efficiency ratio in closed loop) is taken over every point that has it."""
    from crossbench.stats import nearest_rank
    judged: dict[str, list[float]] = {}
    beside: dict[str, list[float]] = {}
    for a, b in itertools.combinations(runs, 2):
        for row in compare.compare_runs(load_run(a), load_run(b), noise_floor=0.0).rows:
            for figure, verdict in row.verdicts.items():
                if verdict.ratio is not None:
                    into = judged if figure == row.headline else beside
                    into.setdefault(figure, []).append(abs(verdict.ratio - 1))
    floors = {}
    for figure in sorted({*judged, *beside}):
        values, over = (judged[figure], "headline") if figure in judged else (beside[figure], "every point")
        floors[figure] = {"floor": round(nearest_rank(sorted(values), share), 3), "points": len(values),
                          "over": over, "largest": round(max(values), 3)}
    return floors


def text(result: dict) -> str:
    aa, planted = result["aa"], result["planted"]
    return (f"{len(result['runs'])} runs, {result['pairs']} pairs; noise floor: {result['noise_floor']['source']}\n"
            f"A/A: {aa['changed']} of {aa['points']} point comparisons called a change: false-alarm rate "
            f"{aa['false_alarm_rate']:.1%} ({aa['cannot_tell']} cannot tell)\n"
            f"planted {result['plant']:.0%} slower: found in {planted['slower']} of {planted['points']}: power "
            f"{planted['power']:.1%}")
