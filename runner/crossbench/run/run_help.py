"""The defaults run_all.sh's --help shows beside the matrix overrides: the values of the experiment that will run
(--experiment NAME, --quick: its quick variant; else the default one), read from its file, so that a default
shown is the one the run takes."""

from __future__ import annotations

import argparse

from crossbench import durations
from crossbench.plan import experiment
from crossbench.refusal import Refusal


def experiment_named(argv: list[str], default: str) -> str:
    """The experiment the command line asks for (--experiment NAME, --quick), as parse_args will resolve it; an
    unknown name is left for parse_args to refuse in its own words."""
    scan = argparse.ArgumentParser(add_help=False)
    scan.add_argument("--experiment", default=default)
    scan.add_argument("--quick", action="store_true")
    known, _ = scan.parse_known_args(argv)
    name = known.experiment
    if known.quick and not (name == "quick" or name.endswith("-quick")):
        name = "quick" if name == default else f"{name}-quick"
    return name


def defaults(name: str) -> dict[str, str]:
    """Each overridable option's value in experiment `name` (by the option's dest), as --help shows it: {} for an
    experiment that does not load."""
    try:
        config = experiment.load(name)
    except (Refusal, OSError):
        return {}
    run, groups = config["run"], config.get("group", [])
    window = durations.text(run["duration_s"]) if isinstance(run.get("duration_s"), (int, float)) else "?"
    if run.get("min_window_delays"):
        window += f", at least {run['min_window_delays']:g} round trips of the delay"
    found = {
        "duration_s": window,
        "warmup_s": durations.text(run["warmup_s"]) if isinstance(run.get("warmup_s"), (int, float)) else "?",
        "repetitions": str(run["repetitions"]),
        "precision": f"{run['precision']:g}" if run.get("precision") else "off",
        "min_launches": str(run["min_launches"]),
        "max_launches": str(run["max_launches"]),
        "best_level_launches": str(run["best_level_launches"]),
        "loadgen": run["loadgen"],
        "servers": ",".join(run["servers"]),
        "server_cpus": listed(run["server_cpus"]) or "any core",
        "loadgen_cpus": listed(run["loadgen_cpus"]) or "any core",
        "loadgen_threads": str(run["loadgen_threads"]),
        "concurrency": per_group(groups, "concurrency", listed),
        "delays_ms": per_group(groups, "delays_ms", lambda ms: ",".join(durations.text(v / 1000) for v in ms)),
        "rates": per_group(groups, "rates", lambda r: r if isinstance(r, str) else listed(r))
        or (listed(run["rates"]) if isinstance(run.get("rates"), list) else run.get("rates") or ""),
    }
    return {dest: text for dest, text in found.items() if text}


def knob_defaults(name: str, plugins) -> dict[str, str]:
    """Each server knob the experiment's server sections set (by the knob's name), as --help shows it:
    "tomcat 1024" (its groups may set their own)."""
    try:
        config = experiment.load(name)
    except (Refusal, OSError):
        return {}
    found: dict[str, list[str]] = {}
    for plugin in plugins:
        for knob in plugin.knobs:
            value = config.get(plugin.name, {}).get(knob.name)
            if value is not None:
                found.setdefault(knob.name, []).append(
                    f"{plugin.name} {listed(value) if isinstance(value, list) else value}"
                )
    return {knob: "; ".join(values) for knob, values in found.items()}


def listed(values) -> str:
    return ",".join(str(v) for v in values or ())


def per_group(groups: list[dict], key: str, shown) -> str:
    """A group key's values: one text when every group that has it agrees, else each group's ("static: 1,10;
    delay: 1,10,100")."""
    found = {g["name"]: shown(g[key]) for g in groups if g.get(key) not in (None, [], "")}
    if len(set(found.values())) == 1:
        return next(iter(found.values()))
    return "; ".join(f"{group}: {text}" for group, text in found.items())


def note(shown: dict[str, str], name: str, dest: str) -> str:
    """' (default: seed002's 10s)', or '' when the experiment does not set it."""
    return f" (default: {name}'s {shown[dest]})" if dest in shown else ""
