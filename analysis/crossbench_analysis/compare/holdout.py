"""compare's noise model judged on runs it was not fitted on: for each run held out, the model fitted on every other
run (noise_fit.fit), and compare's test (compare_stats.judge, the headlines held to the false discovery rate as
compare holds them) over every pair that holds the held-out run, A/A (a change called there is false) and with the
held-out run's launches made 5 % and 10 % slower (found or not: the power), per kind of figure: static rps,
the delayed points' headline, latency percentiles. The false-change rate is stated with its Clopper-Pearson
interval. The pairs share runs, so comparisons are not independent: the interval is the binomial one of the
counts, a lower bound on the true uncertainty.

python -m crossbench_analysis aa --holdout RUN RUN RUN [...] [--json FILE]
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from statistics import median

from crossbench_analysis.read.runinfo import AnalysisError

from . import compare_stats, machine_check, noise_fit
from .noise_fit import RunTable

PLANTS = (0.05, 0.10)
STATED_RATE = 1 - compare_stats.stats.CONFIDENCE  # a change is called when its 95 % interval clears the margin


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact binomial interval of a rate of k in n."""
    from scipy.stats import beta

    if n <= 0:
        raise ValueError("a binomial interval needs one or more trials")
    alpha = 1 - confidence
    low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def planted(values: list[float], figure: str, plant: float) -> list[float]:
    """The launches made `plant` slower: throughput x (1 - plant), a latency or ratio / (1 - plant)."""
    factor = 1 / (1 - plant) if compare_stats.lower_is_better(figure) else 1 - plant
    return [v * factor for v in values]


def pair_verdicts(
    a: RunTable, b: RunTable, table: dict, margin: float, plant: float = 0.0
) -> list[tuple[str, str, bool, compare_stats.Verdict]]:
    """(kind figure, server, is headline, verdict) of every figure of every point both runs hold, B planted; the
    headlines held to the false discovery rate across the points, as compare does."""
    found = []
    for pid in [p for p in a.points if p in b.points]:
        kind, server, figures_a = a.points[pid]
        figures_b = b.points[pid][2]
        for i, figure in enumerate(figures_a):
            sd = compare_stats.run_sd_of(figure, kind, table, server)
            verdict = compare_stats.judge(
                figure,
                figures_a[figure],
                planted(figures_b.get(figure, []), figure, plant),
                None,
                None,
                sd,
                margin,
                table.get("run_df"),
                kind,
            )
            found.append((f"{kind} {figure}", server, i == 0, verdict))
    heads = [i for i, said in enumerate(found) if said[2]]
    held = compare_stats.controlled([found[i][3] for i in heads])
    for i, verdict in zip(heads, held):
        key, server, _, before = found[i]
        found[i] = (key, server, True, replace(verdict, sees=before.sees, about=before.about))
    return found


def model_for(held: RunTable, others: list[RunTable]) -> dict:
    model = noise_fit.fit(others)
    return noise_fit.model_table(model, f"fitted on {len(others)} runs without {held.run_id}")


def tally(counts: dict, key: str, verdict: compare_stats.Verdict, plant: float) -> None:
    entry = counts.setdefault(
        key,
        {
            "aa": dict.fromkeys(("comparisons", "changed", "same", "inconclusive", "cannot_tell"), 0),
            "sees": [],
            "planted": {str(p): {"comparisons": 0, "found": 0} for p in PLANTS},
        },
    )
    if plant:
        part = entry["planted"][str(plant)]
        part["comparisons"] += 1
        part["found"] += verdict.word == compare_stats.SLOWER
        return
    aa = entry["aa"]
    aa["comparisons"] += 1
    aa["changed"] += verdict.changed
    aa["same"] += verdict.word == compare_stats.SAME
    aa["inconclusive"] += verdict.word == compare_stats.INCONCLUSIVE
    aa["cannot_tell"] += verdict.word == compare_stats.CANNOT_TELL
    if verdict.sees is not None:
        entry["sees"].append(verdict.sees)


def held_out(held: RunTable, others: list[RunTable], margin: float, by_figure: dict, by_server: dict) -> dict:
    """One held-out run: its model, and compare's A/A over the pairs that hold it (its headlines counted)."""
    table = model_for(held, others)
    study_row = {
        "run": held.run_id,
        "fitted_on": [t.run_id for t in others],
        "core_speed_ms": held.core_speed_ms,
        "model_core_speed_ms": table["core_speed_ms"],
        "run_sd": {k: table[k] for k in ("static", "delayed")},
        "by_server": table["by_server"],
        "pairs": 0,
        "refused": [],
        "notes": [],
        "headlines": 0,
        "changed": 0,
    }
    for other in others:
        try:
            checked, notes = machine_check.checked(
                table, {held.run_id: held.core_speed_ms, other.run_id: other.core_speed_ms}
            )
        except machine_check.MachineDiffers as e:
            study_row["refused"].append(f"{other.run_id}: {e}")
            continue
        study_row["pairs"] += 1
        study_row["notes"] += notes
        for plant in (0.0, *PLANTS):
            for key, server, head, verdict in pair_verdicts(other, held, checked, margin, plant):
                tally(by_figure, key, verdict, plant)
                tally(by_server.setdefault(key, {}), server, verdict, plant)
                if head and not plant:
                    study_row["headlines"] += 1
                    study_row["changed"] += verdict.changed
    study_row["notes"] = sorted(set(study_row["notes"]))
    return study_row


def rate(changed: int, comparisons: int) -> dict:
    low, high = clopper_pearson(changed, comparisons) if comparisons else (None, None)
    return {
        "changed": changed,
        "comparisons": comparisons,
        "rate": changed / comparisons if comparisons else None,
        "interval": [low, high],
    }


def study(tables: list[RunTable], margin: float = compare_stats.DEFAULT_MARGIN) -> dict:
    """Every run held out in turn (leave one run out); the counts per held-out run and per kind of figure."""
    if len(tables) < 3:
        raise AnalysisError("a held-out study takes three or more runs: two to fit on and one to hold out")
    noise_fit.check_one_set(tables)
    by_figure: dict = {}
    by_server: dict = {}
    rows = [held_out(held, [t for t in tables if t is not held], margin, by_figure, by_server) for held in tables]
    for study_row in rows:
        study_row["aa"] = rate(study_row.pop("changed"), study_row.pop("headlines"))
    figures = {
        key: {
            **summed(entry),
            "by_server": {server: summed(part) for server, part in sorted(by_server.get(key, {}).items())},
        }
        for key, entry in sorted(by_figure.items())
    }
    total = rate(sum(one["aa"]["changed"] for one in rows), sum(one["aa"]["comparisons"] for one in rows))
    return {
        "runs": [t.run_id for t in tables],
        "machine": tables[0].machine,
        "margin": margin,
        "stated_rate": STATED_RATE,
        "plants": list(PLANTS),
        "aa": total,
        "held_out": rows,
        "by_figure": figures,
    }


def summed(entry: dict) -> dict:
    """A kind of figure's tally as stated: the A/A rate and each plant's power with their binomial intervals."""
    aa = entry["aa"]
    return {
        "aa": {**aa, **rate(aa["changed"], aa["comparisons"])},
        "sees": median(entry["sees"]) if entry["sees"] else None,
        "planted": {
            p: {
                **part,
                "power": part["found"] / part["comparisons"] if part["comparisons"] else None,
                "interval": list(clopper_pearson(part["found"], part["comparisons"]))
                if part["comparisons"]
                else [None, None],
            }
            for p, part in entry["planted"].items()
        },
    }


def study_of(run_dirs: list[Path], margin: float = compare_stats.DEFAULT_MARGIN) -> dict:
    return study(noise_fit.load_tables(run_dirs), margin)


def pct(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.3g} %"


def interval_text(part: dict) -> str:
    low, high = part["interval"]
    return f"{part['changed']} of {part['comparisons']} ({pct(part['rate'])}, 95 % interval {pct(low)} to {pct(high)})"


def text(result: dict) -> str:
    lines = [
        f"{len(result['runs'])} runs on {result['machine']}, each held out in turn; margin "
        f"{pct(result['margin'])}; stated false-change rate {pct(result['stated_rate'])}",
        f"held-out A/A, headlines: {interval_text(result['aa'])} called a change",
    ]
    for study_row in result["held_out"]:
        refused = f"; {len(study_row['refused'])} pair(s) refused (cores' speed)" if study_row["refused"] else ""
        lines.append(f"  {study_row['run']} held out: {interval_text(study_row['aa'])}{refused}")
    for key, part in result["by_figure"].items():
        found = "; ".join(
            f"planted {pct(float(p))} found {v['found']} of {v['comparisons']} ({pct(v['power'])})"
            for p, v in part["planted"].items()
        )
        lines.append(
            f"{key}: A/A {interval_text(part['aa'])}; {found}; changes under {pct(part['sees'])} "
            "cannot be seen (median over the comparisons)"
        )
    return "\n".join(lines)
