"""The measured lines of compare's noise model in docs/methods.md: the spreads fitted on the quick runs made hours
apart (quick-hours/observed.json, what compare/noise_floor.toml holds) and the model judged on runs it was not
fitted on (holdout.json, `aa --holdout`, in quick-hours/ and quick-aa/): per held-out run compare's A/A changes
with their binomial interval, and per kind of figure the power for a planted change and the smallest change
the data could see."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

HOURS = "quick-hours"  # quick runs made hours apart: the machine's run-to-run spread in noise_floor.toml
# quick runs of another day, each folder as HOURS, with the runs judged by HOURS' spreads (ACROSS_DAYS)
OTHER_DAYS = ("quick-day-2026-12-02", "quick-day-2026-12-03")
ACROSS_DAYS = "across-days.json"  # `aa RUNS --spreads ../quick-hours/observed.json --json`: fitted on another day
HOLDOUT = "holdout.json"  # what `aa --holdout RUNS --json` wrote beside a reference set's runs/
# The kinds of figure in the order they are said: each kind's headline first.
FIGURE_ORDER = ("delayed latency_ratio", "delayed rps", "delayed latency_ms.p99", "static rps", "static latency_ms.p99")


def read_json(path: Path):
    return json.loads(path.read_text())


def pct(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.3g} %"


def spreads_line(observed: dict, name: str) -> str:
    parts = [
        f"{kind} " + ", ".join(f"{figure} {sd:.2%}" for figure, sd in figures.items())
        for kind, figures in observed["run_sd"].items()
    ]
    return f"{name}: " + "; ".join(parts)


def servers_line(observed: dict) -> str:
    """A server's own spreads, where the fit kept them apart (an F test at 5 %), and the cores' speed range."""
    parts = [
        f"{kind} {server} " + ", ".join(f"{figure} {sd:.2%}" for figure, sd in figures.items())
        for kind, servers in (observed.get("by_server") or {}).items()
        for server, figures in servers.items()
    ]
    said = "; a server's own where its run means vary apart from the others' (F test at 5 %): " + (
        "; ".join(parts) if parts else "none"
    )
    span = observed.get("core_speed_ms")
    if span:
        said += f"; the runs' cores timed the fixed unit at {span[0]:g} to {span[1]:g} ms"
    sees = [
        f"{kind} {figure} {pct(share)}"
        for kind, figures in (observed.get("sees") or {}).items()
        for figure, share in figures.items()
    ]
    if sees:
        said += (
            "; by these spreads, with 3 launches a side, compare finds a change 80 % of the time from: "
            + ", ".join(sees)
            + " (changes under that cannot be seen on this machine)"
        )
    return said


def hours_lines(results: Path) -> list[str]:
    """The quick runs made hours apart (HOURS), then those of each other day (OTHER_DAYS): when, the run-to-run
    spread `aa --observe-floor` fitted on them (observed.json: its 95 % upper bounds, and its estimates, what
    noise_floor.toml holds), the model judged out of sample (holdout.json) and, for another day, its runs judged
    by HOURS' spreads (ACROSS_DAYS)."""
    found = []
    for name in (HOURS, *OTHER_DAYS):
        found += day_lines(results / name) + across_lines(results / name)
    return found


def day_lines(folder: Path) -> list[str]:
    if not folder.is_dir():
        return []
    runs = sorted(p for p in (folder / "runs").iterdir() if p.is_dir())
    starts = sorted(datetime.fromisoformat(read_json(run / "metadata.json")["started_at"]) for run in runs)
    observed = read_json(folder / "observed.json")
    span = (starts[-1] - starts[0]).total_seconds() / 3600
    when = f"{starts[0]:%Y-%m-%d %H:%M} to {starts[-1]:%Y-%m-%d %H:%M} UTC, {span:.1f} h apart at most"
    return [
        f"- **Run-to-run spread, {'hours apart' if folder.name == HOURS else 'another day'}** "
        f"(`docs/results/{folder.name}/`"
        + (", runs kept for compare's noise model, `noise_floor.toml`" if folder.name == HOURS else "")
        + f"): {len(starts)} quick runs started from {when}; "
        + spreads_line(observed, f"95 % upper bound over {observed['run_df']} degrees of freedom")
        + "; "
        + spreads_line({"run_sd": observed["estimate"]}, "estimate by moments")
        + servers_line(observed)
        + ".",
        *holdout_lines(folder),
    ]


def held_words(part: dict) -> str:
    low, high = part["interval"]
    return f"{part['changed']} of {part['comparisons']} ({pct(part['rate'])}, 95 % interval {pct(low)} to {pct(high)})"


def figure_words(key: str, part: dict) -> str:
    found = ", ".join(
        f"{pct(float(plant))} in {v['found']} of {v['comparisons']}{server_words(part, plant)}"
        for plant, v in part["planted"].items()
    )
    return (
        f"{key}: A/A {held_words(part['aa'])}, a planted slowdown of {found}; changes under "
        f"{pct(part['sees'])} cannot be seen"
    )


def server_words(part: dict, plant: str) -> str:
    """' (tomcat 36 of 36, tornado 21 of 36)': a plant's power per server, where it differs between them."""
    found = {
        server: (v["planted"][plant]["found"], v["planted"][plant]["comparisons"])
        for server, v in (part.get("by_server") or {}).items()
    }
    if len({k / n for k, n in found.values() if n}) < 2:
        return ""
    return " (" + ", ".join(f"{server} {k} of {n}" for server, (k, n) in found.items()) + ")"


def holdout_lines(folder: Path) -> list[str]:
    """The held-out study of a reference set (HOLDOUT), when the folder has one."""
    written = folder / HOLDOUT
    if not written.is_file():
        return []
    result = read_json(written)
    runs = len(result["runs"])
    per_run = ", ".join(
        f"{study_row['run']} {study_row['aa']['changed']} of {study_row['aa']['comparisons']}"
        for study_row in result["held_out"]
    )
    figures = [
        figure_words(key, result["by_figure"][key])
        for key in (*FIGURE_ORDER, *sorted(set(result["by_figure"]) - set(FIGURE_ORDER)))
        if key in result["by_figure"]
    ]
    return [
        f"- **compare judged on runs it was not fitted on** (`docs/results/{folder.name}/{HOLDOUT}`, "
        f"`aa --holdout`): each of the {runs} runs held out in turn, the model fitted on the other {runs - 1} "
        f"({runs - 2} degrees of freedom), compare over the {runs - 1} pairs that hold it, margin "
        f"{pct(result['margin'])}. The points' verdicts called a change in {held_words(result['aa'])} "
        f"A/A comparisons, against the stated {pct(result['stated_rate'])} ({per_run}); per kind of figure "
        "(every figure's verdict; the smallest change is the median over the comparisons of the change found "
        "80 % of the time): " + "; ".join(figures) + "."
    ]


def missed_text(part: dict) -> str:
    """Per server, where the plant was found, and what compare said where it was not (a study written before
    aa counted them says nothing)."""
    servers = part.get("by_server") or {}
    missed = part["planted"].get("missed") or {}
    if not servers or not missed:
        return ""
    found = ", ".join(f"{name} {s['slower']} of {s['points']}" for name, s in servers.items())
    said = " and ".join(f"{n} {word}" for word, n in sorted(missed.items(), key=lambda item: -item[1]))
    return f" ({found}; the rest {said})"


def across_lines(folder: Path) -> list[str]:
    """A day's runs judged by the spreads fitted on HOURS' runs (ACROSS_DAYS), when the folder has that study."""
    written = folder / ACROSS_DAYS
    if not written.is_file():
        return []
    result = read_json(written)
    parts = []
    for kind, part in sorted(result["by_kind"].items(), key=lambda item: item[0] != "delayed"):
        aa, found = part["aa"], part["planted"]
        low, high = aa["interval"]
        parts.append(
            f"{kind} points: A/A {aa['changed']} of {aa['points']} headline comparisons called a change (95 % "
            f"interval {pct(low)} to {pct(high)}), a planted {pct(result['plant'])} slowdown found in "
            f"{found['slower']} of {found['points']}{missed_text(part)}"
        )
    return [
        f"- **compare fitted on another day** (`docs/results/{folder.name}/{ACROSS_DAYS}`, `aa RUNS --spreads "
        f"{HOURS}/observed.json`): the spreads fitted on `{HOURS}`'s runs judging these {len(result['runs'])} "
        f"runs' {result['pairs']} pairs, margin {pct(result['margin'])}: " + "; ".join(parts) + "."
    ]
