"""A capacity search's run-to-run spread: two or more runs of one capacity experiment on one machine, each search
in them independent of the others, and how far each setting's capacity estimate (crossbench.decide.capacity) moved
between them. The spread is pooled over the settings on the log scale (each setting's own level removed), its 95 %
upper bound printed as a [[machine]] table for runner/crossbench/decide/capacity_spread.toml.

python -m crossbench_analysis capacity-aa RUN RUN [RUN ...]
"""
from __future__ import annotations

import math
from pathlib import Path

from crossbench.decide import capacity
from crossbench_analysis.judge.capacity_marks import outcomes
from crossbench_analysis.read.runinfo import AnalysisError, load_run

CONFIDENCE = 0.95


def estimates(run_dir: Path) -> tuple[str, dict[str, tuple[str, float]]]:
    """A run's machine and, per search that found one, its setting and capacity estimate (the generator's ceiling
    left out: it is the generator's, not a server's)."""
    run = load_run(run_dir)
    machine = run.machine_name
    found = {out["series"]: (capacity.label(out), out["estimate"]["value"]) for out in outcomes(run)
             if out.get("estimate") and not out.get("generator")}
    return machine, found


def spread(runs: list[Path]) -> dict:
    """Each setting's estimates over the runs, and the pooled spread on logs with its degrees of freedom and upper
    bound; AnalysisError for runs of different machines or fewer than two."""
    if len(runs) < 2:
        raise AnalysisError("capacity-aa needs two or more runs of one capacity experiment")
    measured = [estimates(run) for run in runs]
    machines = {machine for machine, _ in measured}
    if len(machines) > 1:
        raise AnalysisError(f"capacity-aa: runs of different machines ({', '.join(sorted(machines))}): a spread "
                            "belongs to one machine")
    series = [s for s in measured[0][1] if all(s in found for _, found in measured)]
    if not series:
        raise AnalysisError("capacity-aa: no search found a capacity in every run")
    settings, squares, df = [], 0.0, 0
    for name in series:
        logs = [math.log(found[name][1]) for _, found in measured]
        mean = sum(logs) / len(logs)
        squares += sum((v - mean) ** 2 for v in logs)
        df += len(logs) - 1
        settings.append({"series": name, "setting": measured[0][1][name][0],
                         "estimates": [found[name][1] for _, found in measured]})
    estimate = math.sqrt(squares / df)
    from scipy import stats as scipy_stats    # at its use: the command lines load without the Python environment
    upper = math.sqrt(squares / scipy_stats.chi2.ppf(1 - CONFIDENCE, df))
    left_out = sorted({s for _, found in measured for s in found} - set(series))
    return {"machine": machines.pop(), "runs": [str(r) for r in runs], "settings": settings, "run_df": df,
            "run_sd_estimate": estimate, "run_sd": upper, "left_out": left_out}


def text(result: dict) -> str:
    lines = [f"capacity estimates over {len(result['runs'])} runs on {result['machine']}:"]
    for found in result["settings"]:
        lines.append(f"  {found['setting']}: " + ", ".join(f"{v:.4g}" for v in found["estimates"]) + " req/s")
    if result["left_out"]:
        lines.append(f"  left out (no capacity in every run): {', '.join(result['left_out'])}")
    lines += [f"run-to-run spread on logs: {result['run_sd_estimate']:.4f} (estimate), {result['run_sd']:.4f} "
              f"(95 % upper bound), {result['run_df']} df", "",
              "# for runner/crossbench/decide/capacity_spread.toml:", "[[machine]]",
              f"measured_on = \"{result['machine']}\"", f"run_sd = {result['run_sd']:.4f}",
              f"run_df = {result['run_df']}",
              f"source = \"capacity-aa over {len(result['runs'])} runs: {', '.join(Path(r).name for r in result['runs'])}\""]
    return "\n".join(lines)
