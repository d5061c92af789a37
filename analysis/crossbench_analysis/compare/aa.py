"""How far compare can be trusted on this machine: runs of one configuration compared pairwise (A/A: every
"faster" or "slower" is a false alarm; "same" and "inconclusive" are counted apart), and the same pairs with a
planted change (every launch of B made `plant` slower in throughput, so latency and the efficiency ratio grow by
1 / (1 - plant)): the share compare finds is its power. The planted change rides on real run-to-run noise.

python -m crossbench_analysis aa RUN RUN [RUN ...] [--plant 0.10] [--noise-floor SIGMA_RUN]

--observe-floor measures sigma_run, the run-to-run spread compare adds to its variance (noise_floor.toml): per
figure and kind of point, the spread of the runs' means on logs beyond what the launches within each explain
(noise_fit.py). --holdout judges that model on runs it was not fitted on (holdout.py).

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
import math
import shutil
import tempfile
from pathlib import Path

from crossbench.figures import points as point_data
from crossbench_analysis.read.runinfo import AnalysisError, load_run

from . import compare, compare_stats, holdout, noise_fit
from .compare_within import round_values

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


def verdict_counts(
    run_a: Path, run_b: Path, run_sd: float | None, margin: float, spreads: dict | None = None
) -> dict[str, dict[str, int]]:
    """The headline verdicts of a compare of two runs, counted per kind of point (static, delayed), in all, and per
    kind and server ("delayed tornado")."""
    comparison = compare.compare_runs(load_run(run_a), load_run(run_b), run_sd=run_sd, margin=margin, spreads=spreads)
    points = {p["point_id"]: p for p in point_data.load(Path(run_a))}
    counts: dict[str, dict[str, int]] = {}
    for row in comparison.rows:
        point = points.get(row.point_id, {})
        kind = compare_stats.kind_of(point) if point else compare_stats.STATIC
        for key in ("all", kind, f"{kind} {point.get('server')}"):
            tally = counts.setdefault(key, {})
            tally[row.verdict.word] = tally.get(row.verdict.word, 0) + 1
    return counts


def study(
    runs: list[Path],
    plant: float = 0.10,
    run_sd: float | None = None,
    margin: float = compare_stats.DEFAULT_MARGIN,
    spreads: dict | None = None,
) -> dict:
    """False alarms over every pair of runs, and the planted change found over the same pairs (B planted), in all
    and per kind of point (`by_kind`). spreads: aa --observe-floor's output from other runs (held out)."""
    pairs = list(itertools.combinations(runs, 2))
    aa: dict[str, dict[str, int]] = {}
    found: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for i, (a, b) in enumerate(pairs):
            for kind, counts in verdict_counts(a, b, run_sd, margin, spreads).items():
                tally = aa.setdefault(
                    kind, dict.fromkeys(("points", "changed", "same", "inconclusive", "cannot_tell"), 0)
                )
                tally["points"] += sum(counts.values())
                tally["changed"] += counts.get(compare_stats.FASTER, 0) + counts.get(compare_stats.SLOWER, 0)
                tally["same"] += counts.get(compare_stats.SAME, 0)
                tally["inconclusive"] += counts.get(compare_stats.INCONCLUSIVE, 0)
                tally["cannot_tell"] += counts.get(compare_stats.CANNOT_TELL, 0)
            planted_b = planted_copy(b, Path(scratch) / f"planted-{i}", plant)
            for kind, counts in verdict_counts(a, planted_b, run_sd, margin, spreads).items():
                tally = found.setdefault(kind, {"points": 0, "slower": 0, "missed": {}})
                tally["points"] += sum(counts.values())
                tally["slower"] += counts.get(compare_stats.SLOWER, 0)
                for word, n in counts.items():  # what compare said where it did not find the plant
                    if word != compare_stats.SLOWER:
                        tally["missed"][word] = tally["missed"].get(word, 0) + n
    table = (
        compare_stats.observed_table(spreads)
        if spreads
        else compare_stats.run_sds(run_sd, compare.machines_of(*map(load_run, runs)))
    )
    by_kind = {
        kind: {
            "aa": rates(aa[kind]),
            "planted": power(found.get(kind, {"points": 0, "slower": 0})),
            "by_server": {
                key.split(" ", 1)[1]: power(found[key]) for key in sorted(found) if key.startswith(f"{kind} ")
            },
        }
        for kind in aa
        if kind != "all" and " " not in kind
    }
    return {
        "runs": [str(r) for r in runs],
        "pairs": len(pairs),
        "plant": plant,
        "margin": margin,
        "run_sd": table,
        "aa": rates(aa.get("all", dict.fromkeys(("points", "changed", "same", "inconclusive", "cannot_tell"), 0))),
        "planted": power(found.get("all", {"points": 0, "slower": 0})),
        "by_kind": by_kind,
    }


def rates(tally: dict[str, int]) -> dict:
    """An A/A tally with its false-alarm and "same" shares, and the false-alarm rate's binomial interval."""

    def share(k: str) -> float | None:
        return tally[k] / tally["points"] if tally["points"] else None

    interval = list(holdout.clopper_pearson(tally["changed"], tally["points"])) if tally["points"] else [None, None]
    return {**tally, "false_alarm_rate": share("changed"), "same_rate": share("same"), "interval": interval}


def power(tally: dict[str, int]) -> dict:
    return {**tally, "power": tally["slower"] / tally["points"] if tally["points"] else None}


def observed_floor(runs: list[Path]) -> dict:
    """sigma_run per kind of point and figure, what noise_floor.toml's [machine.run_sd.KIND] should hold, fitted by
    noise_fit.fit: for each point seen in 2+ runs, the variance of its run means minus the mean of their launch
    variances (a one-way random-effects estimate, by moments), averaged over the points of a kind, floored at 0,
    its square root (`estimate`), over k - 1 degrees of freedom since every point of a run shares that run's level
    (run_df); a server's own where its run means vary differently from the others' (`by_server`), and the range
    of the runs' core speed readings the model holds for (`core_speed_ms`). What noise_floor.toml holds is
    `estimate` with `run_df`: compare carries the degrees of freedom into its interval (Welch-Satterthwaite),
    which is how the estimate's own uncertainty enters. `run_sd` is its 95 % upper bound, printed for the worst
    case: the run means' variance itself (the launches' share left in) times (k - 1) / chi2(0.05, k - 1). Not
    both: the bound with the degrees of freedom counts the uncertainty twice."""
    from scipy.stats import chi2

    if len(runs) < 2:
        raise AnalysisError("--observe-floor takes two or more runs of one configuration")
    model = noise_fit.fit(noise_fit.load_tables(runs))
    df = model["run_df"]
    bound = {
        kind: {
            figure: round(math.sqrt(found["run_means_variance"] * df / chi2.ppf(0.05, df)), 4)
            for figure, found in figures.items()
        }
        for kind, figures in model["detail"].items()
    }
    return {
        "measured_on": model["measured_on"],
        "runs": len(model["runs"]),
        "run_ids": model["runs"],
        "run_df": df,
        "measured": True,
        "run_sd": bound,
        "estimate": model["run_sd"],
        "by_server": model["by_server"],
        "sees": model["sees"],
        "core_speed_ms": model["core_speed_ms"],
        "detail": model["detail"],
    }


def text(result: dict) -> str:
    lines = [
        f"{len(result['runs'])} runs, {result['pairs']} pairs; run-to-run spread: "
        f"{result['run_sd']['source']}; margin {result['margin']:.0%}"
    ]
    for kind, part in [("all points", result), *((f"{k} points", v) for k, v in result.get("by_kind", {}).items())]:
        aa, planted = part["aa"], part["planted"]
        if not aa["points"]:
            continue
        lines.append(
            f"{kind}: A/A {aa['changed']} of {aa['points']} point comparisons called a change (false-alarm "
            f"rate {aa['false_alarm_rate']:.1%}); {aa['same']} same ({aa['same_rate']:.1%}), "
            f"{aa['inconclusive']} inconclusive, {aa['cannot_tell']} cannot tell; planted "
            f"{result['plant']:.0%} slower: found in {planted['slower']} of {planted['points']} "
            f"({planted['power']:.1%}){missed_words(part)}"
        )
    return "\n".join(lines)


def missed_words(part: dict) -> str:
    """Where a planted change was not found, what compare said instead and on which servers' points."""
    missed = part["planted"].get("missed") or {}
    if not missed:
        return ""
    said = ", ".join(f"{n} {word}" for word, n in sorted(missed.items(), key=lambda item: -item[1]))
    servers = part.get("by_server") or {}
    found = ", ".join(f"{name} {s['slower']} of {s['points']}" for name, s in servers.items())
    return f"; not found: {said}" + (f" ({found} found)" if found else "")


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
    counts = {
        test: {"points": 0, "aa_changed": 0, "aa_cannot_tell": 0, "planted_found": 0} for test in ("paired", "welch")
    }
    per_point = []
    for run_dir in runs:
        run = load_run(run_dir)
        for point in point_data.load(run.path):
            figure = point.get("headline") or "rps"
            pairs = halves(round_values(run, point, figure))
            if len(pairs) < 2:
                continue
            both = (pairs, planted_pairs(pairs, figure, plant))
            judged = {
                "paired": tuple(compare_stats.judge_paired(figure, ps, None, None) for ps in both),
                "welch": tuple(
                    compare_stats.judge(figure, [a for a, _ in ps], [b for _, b in ps], None, None, 0.0) for ps in both
                ),
            }
            for test, (aa_verdict, planted_verdict) in judged.items():
                tally = counts[test]
                tally["points"] += 1
                tally["aa_changed"] += aa_verdict.changed
                tally["aa_cannot_tell"] += aa_verdict.word == compare_stats.CANNOT_TELL
                tally["planted_found"] += planted_verdict.word == compare_stats.SLOWER
            aa_verdict, aa_test = judged["paired"][0], judged["paired"][0].test
            per_point.append(
                {
                    "run": run.run_id,
                    "point_id": point["point_id"],
                    "figure": figure,
                    "pairs": len(pairs),
                    "aa_ratio": aa_verdict.ratio,
                    "aa_low": aa_test and aa_test.low,
                    "aa_high": aa_test and aa_test.high,
                    "aa_verdict": judged["paired"][0].word,
                    "planted_verdict": judged["paired"][1].word,
                    "welch_planted_verdict": judged["welch"][1].word,
                }
            )
    for tally in counts.values():
        tally["false_alarm_rate"] = tally["aa_changed"] / tally["points"] if tally["points"] else None
        tally["power"] = tally["planted_found"] / tally["points"] if tally["points"] else None
    return {"runs": [str(r) for r in runs], "plant": plant, "within": True, "tests": counts, "points": per_point}


def text_within(result: dict) -> str:
    lines = [
        f"{len(result['runs'])} run(s); each point's odd rounds (A) against its even rounds (B), round 2k-1 "
        f"paired with 2k; planted: B {result['plant']:.0%} slower"
    ]
    for test, name in (
        ("paired", "paired t on log values (compare --within)"),
        ("welch", "Welch's t on the same halves, unpaired, no floor"),
    ):
        t = result["tests"][test]
        if not t["points"]:
            lines.append(f"{name}: no point with 2 or more pairs of rounds")
            continue
        lines.append(
            f"{name}: A/A {t['aa_changed']} of {t['points']} points called a change (false-alarm rate "
            f"{t['false_alarm_rate']:.1%}); planted found in {t['planted_found']} of {t['points']} "
            f"(power {t['power']:.1%})"
        )
    return "\n".join(lines)
