"""How far compare can be trusted on this machine: runs of one configuration compared pairwise (A/A: every
"faster" or "slower" is a false alarm), and the same pairs with a planted change (every launch of B made `plant`
slower in throughput, so latency and the efficiency ratio grow by 1 / (1 - plant)): the share compare finds
is its power. The planted change rides on real run-to-run noise, measured here.

python -m crossbench_analysis aa RUN RUN [RUN ...] [--plant 0.10] [--noise-floor SHARE]

Within one run (--within, compare RUN --within's test): each point's launches split into its odd rounds (A) and
its even rounds (B), round 2k-1 paired with round 2k, so A/A asks whether one configuration differs from itself
inside a run, and the planted change is found or not against the run's own round-to-round noise. Two variants
that a user compares inside a run are paired within one round; the halves here are a round apart, so the study
errs on the side of less power.

python -m crossbench_analysis aa --within RUN [RUN ...] [--plant 0.10]
"""
from __future__ import annotations

import itertools
import json
import shutil
import tempfile
from pathlib import Path

from crossbench import points as point_data

from . import compare, compare_stats
from .compare_within import round_values
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
    floors = compare.compare_stats.floors(noise_floor, compare.cpu_models(*map(load_run, runs)))
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


def halves(by_round: dict[int, float]) -> list[tuple[float, float]]:
    """Round 2k-1 paired with round 2k, where both have a counted launch."""
    return [(by_round[r], by_round[r + 1]) for r in sorted(by_round) if r % 2 == 1 and r + 1 in by_round]


def planted_pairs(pairs: list[tuple[float, float]], figure: str, plant: float) -> list[tuple[float, float]]:
    """B made `plant` slower: throughput x (1 - plant), a latency or ratio / (1 - plant)."""
    factor = 1 / (1 - plant) if compare_stats.lower_is_better(figure) else 1 - plant
    return [(a, b * factor) for a, b in pairs]


def study_within(runs: list[Path], plant: float = 0.10) -> dict:
    """Per run and point, by its headline figure: A/A between its odd and even rounds, and the planted change
    found, by the paired test compare --within uses; Welch's t on the same halves (unpaired, no floor) beside."""
    counts = {test: {"points": 0, "aa_changed": 0, "aa_cannot_tell": 0, "planted_found": 0}
              for test in ("paired", "welch")}
    per_point = []
    for run_dir in runs:
        run = load_run(run_dir)
        for point in point_data.load(run.path):
            figure = point.get("headline") or "rps"
            pairs = halves(round_values(run, point, figure))
            if len(pairs) < 2:
                continue
            both = (pairs, planted_pairs(pairs, figure, plant))
            judged = {"paired": tuple(compare_stats.judge_paired(figure, ps, None, None) for ps in both),
                      "welch": tuple(compare_stats.judge(figure, [a for a, _ in ps], [b for _, b in ps], None, None,
                                                         0.0) for ps in both)}
            for test, (aa_verdict, planted_verdict) in judged.items():
                tally = counts[test]
                tally["points"] += 1
                tally["aa_changed"] += aa_verdict.changed
                tally["aa_cannot_tell"] += aa_verdict.word == compare_stats.CANNOT_TELL
                tally["planted_found"] += planted_verdict.word == compare_stats.SLOWER
            aa_test = judged["paired"][0].test
            per_point.append({"run": run.run_id, "point_id": point["point_id"], "figure": figure, "pairs": len(pairs),
                              "aa_ratio": aa_test.ratio, "aa_low": aa_test.low, "aa_high": aa_test.high,
                              "aa_verdict": judged["paired"][0].word, "planted_verdict": judged["paired"][1].word,
                              "welch_planted_verdict": judged["welch"][1].word})
    for tally in counts.values():
        tally["false_alarm_rate"] = tally["aa_changed"] / tally["points"] if tally["points"] else None
        tally["power"] = tally["planted_found"] / tally["points"] if tally["points"] else None
    return {"runs": [str(r) for r in runs], "plant": plant, "within": True, "tests": counts, "points": per_point}


def text_within(result: dict) -> str:
    lines = [f"{len(result['runs'])} run(s); each point's odd rounds (A) against its even rounds (B), round 2k-1 "
             f"paired with 2k; planted: B {result['plant']:.0%} slower"]
    for test, name in (("paired", "paired t on log values (compare --within)"),
                       ("welch", "Welch's t on the same halves, unpaired, no floor")):
        t = result["tests"][test]
        if not t["points"]:
            lines.append(f"{name}: no point with 2 or more pairs of rounds")
            continue
        lines.append(f"{name}: A/A {t['aa_changed']} of {t['points']} points called a change (false-alarm rate "
                     f"{t['false_alarm_rate']:.1%}); planted found in {t['planted_found']} of {t['points']} "
                     f"(power {t['power']:.1%})")
    return "\n".join(lines)
