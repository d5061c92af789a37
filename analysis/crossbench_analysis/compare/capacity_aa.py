"""How far each setting's held rate moves between sittings: two or more runs of one capacity experiment on one
machine, each search in them independent of the others, and per setting the rate each run's search held
(crossbench.decide.capacity_answer.held: the long launch's where one held, else the short launches'). Printed as a
[[machine]] table for runner/crossbench/decide/capacity_spread.toml, each setting with its own held rates: no spread
is pooled over settings whose spreads differ.

A run is read from its capacity.json where it has one (a committed reference keeps only that), else from its
records.

python -m crossbench_analysis capacity-aa RUN RUN [RUN ...]
"""

from __future__ import annotations

import json
from pathlib import Path

from crossbench.decide import capacity, capacity_answer, capacity_words
from crossbench_analysis.judge.capacity_marks import outcomes
from crossbench_analysis.read.runinfo import AnalysisError, load_run


def searched(run_dir: Path) -> tuple[str, str, list[dict]]:
    """(run id, machine, its searches' outcomes) from capacity.json where present, else from the records."""
    saved, meta_file = run_dir / capacity.FILE, run_dir / "metadata.json"
    if saved.is_file() and meta_file.is_file():
        meta = json.loads(meta_file.read_text())
        machine = meta.get("machine") or {}
        return (
            meta.get("run_id") or run_dir.name,
            f"{machine.get('cpu_model')}, {machine.get('cores')} cores",
            json.loads(saved.read_text()),
        )
    run = load_run(run_dir)
    return run.run_id, run.machine_name, outcomes(run)


def held_rates(run_dir: Path) -> tuple[str, str, dict[str, tuple[str, float, float | None]]]:
    """A run's id, machine and, per search that held a rate, its setting, that rate and the window it held for
    (the generator's ceiling left out: it is the generator's, not a server's)."""
    run_id, machine, found = searched(run_dir)
    rates = {}
    for out in found:
        held = capacity_answer.held(out)
        if held and not out.get("generator"):
            rates[out["series"]] = (capacity_words.label(out), *held)
    return run_id, machine, rates


def spread(runs: list[Path]) -> dict:
    """Per setting held in every run, its held rates and how far they move (highest over lowest, less one);
    AnalysisError for runs of different machines or fewer than two."""
    if len(runs) < 2:
        raise AnalysisError("capacity-aa needs two or more runs of one capacity experiment")
    measured = [held_rates(run) for run in runs]
    machines = {machine for _, machine, _ in measured}
    if len(machines) > 1:
        raise AnalysisError(
            f"capacity-aa: runs of different machines ({', '.join(sorted(machines))}): a spread belongs to one machine"
        )
    series = [s for s in measured[0][2] if all(s in found for _, _, found in measured)]
    if not series:
        raise AnalysisError("capacity-aa: no search held a rate in every run")
    settings = []
    for name in series:
        held = [found[name][1] for _, _, found in measured]
        settings.append(
            {
                "series": name,
                "setting": measured[-1][2][name][0],
                "held_rps": held,
                "windows_s": [found[name][2] for _, _, found in measured],
                "moves": max(held) / min(held) - 1,
            }
        )
    left_out = sorted({s for _, _, found in measured for s in found} - set(series))
    return {
        "machine": machines.pop(),
        "runs": [run_id for run_id, _, _ in measured],
        "settings": settings,
        "left_out": left_out,
    }


def text(result: dict) -> str:
    lines = [f"held rates over {len(result['runs'])} runs on {result['machine']} ({', '.join(result['runs'])}):"]
    for found in result["settings"]:
        held = ", ".join(
            f"{v:g}" + (f" ({s:g} s)" if s else " (short)") for v, s in zip(found["held_rps"], found["windows_s"])
        )
        lines.append(f"  {found['setting']}: {held} req/s; moves {found['moves'] * 100:.1f} %")
    if result["left_out"]:
        lines.append(f"  left out (held no rate in every run): {', '.join(result['left_out'])}")
    lines += [
        "",
        "# for runner/crossbench/decide/capacity_spread.toml:",
        "[[machine]]",
        f"measured_on = \"{result['machine']}\"",
        f"source = \"capacity-aa over {len(result['runs'])} runs: {', '.join(result['runs'])}\"",
    ]
    for found in result["settings"]:
        lines += [
            "",
            "[[machine.setting]]",
            f"series = \"{found['series']}\"",
            f"setting = \"{found['setting']}\"",
            f"held_rps = [{', '.join(f'{v:g}' for v in found['held_rps'])}]",
        ]
    return "\n".join(lines)
