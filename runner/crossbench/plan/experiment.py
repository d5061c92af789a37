"""Experiments are data: a TOML file under runner/experiments/, overridden from the command line, expanded
into the list of cells to measure. The resolved configuration is what a run records and what --resume reuses.

This module loads a file and applies the command line's overrides; experiment_checks.py checks the result into
typed values (experiment_schema.py), carried with it as one Resolved value; experiment_expand.py turns those into
cells (cellplan.CellPlan), and decide/between_cells.py holds what the run decides between cells; a caller imports each
name from the module that defines it."""

from __future__ import annotations

import copy
import random
import tomllib
from pathlib import Path

from crossbench import durations, endpoints, loadgen, paths, servers, workload
from crossbench.servers import declared
from crossbench_contract.delay import MAX_DELAY_MS

from . import experiment_expand, user_paths
from .cellplan import CellPlan
from .experiment_checks import validate
from .experiment_schema import RUN_KEYS, Experiment, ExperimentError, typed

# precision = P: min_launches first rounds, then as many launches as their spread says the headline figure's 95 %
# interval needs to be within P, at most max_launches (crossbench.decide.precision); repetitions then only sets
# the first rounds.
RUN_DEFAULTS = {
    "repetitions": 1,
    "shuffle": True,
    "shuffle_seed": None,
    "keepalive": True,
    "loadgen": loadgen.DEFAULT,
    "precision": None,
    "min_launches": 3,
    "max_launches": 6,
    "min_window_delays": 0,
    "best_level_launches": 0,
    "relaunch_disturbed": False,
    "max_window_bias": 0,
    "server_cpus": [],
    "loadgen_cpus": [],
    "loadgen_threads": 1,
    "pipeline": 1,
    "servers": list(servers.DEFAULT_PAIR),
}


def experiment_path(name_or_path: str) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix == ".toml" and candidate.is_file():
        return candidate
    named = paths.EXPERIMENTS / f"{name_or_path}.toml"
    if named.is_file():
        return named
    known = ", ".join(sorted(p.stem for p in paths.EXPERIMENTS.glob("*.toml")))
    raise ExperimentError(f"no experiment {name_or_path!r}; known: {known} (or give a path to a .toml file)")


def load(name_or_path: str, server_files: tuple[str, ...] = ()) -> dict:
    """The experiment file with [run]'s defaults filled in, and its declared servers ([server.NAME], and those of
    each --server-file, which join its servers) checked, recorded in its [server] section and registered
    (servers.declare)."""
    path = experiment_path(name_or_path)
    config = read_toml(path)
    config.setdefault("name", path.stem)
    with_units(config, path)
    config["run"] = {**RUN_DEFAULTS, **config.get("run", {})}
    if isinstance(config["run"].get(WORKLOAD_KEY), str):  # a path relative to the experiment file
        config["run"][WORKLOAD_KEY] = str(path.parent / config["run"][WORKLOAD_KEY])
    declarations = declared.normalised(config.get(declared.SECTION, {}), str(path), path.parent, servers.BUILT_IN)
    for server_file in server_files:
        found = declared_in(Path(server_file), set(declarations))
        declarations.update(found)
        # a server given on the command line is measured beside the experiment's own (--servers chooses otherwise)
        config["run"]["servers"] = [
            *config["run"]["servers"],
            *(name for name in found if name not in config["run"]["servers"]),
        ]
    if declarations:
        config[declared.SECTION] = declarations
        servers.declare(config, str(path))
        endpoints_like(config)
    return config


# A file writes durations with their unit as the command line does (duration = "1m30s", delays = ["1s", "250ms"]),
# or as a number under a key that names its unit (duration_s = 90, delays_ms = [1000, 250]); a run records the
# second form, which --resume reads back.
UNIT_KEYS = {"duration": "duration_s", "warmup": "warmup_s", "delays": "delays_ms"}


def with_units(config: dict, path: Path) -> None:
    """The file's durations written with their unit turned, in place, into the keys that name the unit; an
    ExperimentError in one line for one that does not read or is given both ways."""
    sections = [("[run]", config.get("run", {}))] + [(f"group {g.get('name')}", g) for g in config.get("group", [])]
    for where, section in sections:
        for key, named in UNIT_KEYS.items():
            if key not in section:
                continue
            if named in section:
                raise ExperimentError(f"{path}: {where} gives both {key} and {named}: keep one")
            try:
                section[named] = converted(key, section.pop(key))
            except durations.DurationError as e:
                raise ExperimentError(f"{path}: {where} {key}: {e}") from None


def converted(key: str, value):
    """A duration key's value in its named unit: seconds for duration (above 0) and warmup, whole milliseconds for
    each of delays (1 to the endpoints' cap)."""
    if key == "delays":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise durations.DurationError(f"{value!r}: give a list of durations with their unit, e.g. [\"1s\", \"3s\"]")
        return [durations.whole_milliseconds(v, least=1, most=MAX_DELAY_MS) for v in value]
    if not isinstance(value, str):
        raise durations.DurationError(f"{value!r}: give a duration with its unit in quotes, e.g. \"10s\"")
    return durations.seconds(value, zero=key != "duration")


def endpoints_like(config: dict) -> None:
    """Each group that names no endpoint for a declared server with `like` gives it its like's endpoint there
    (declared.endpoint_like), written into the configuration the run records."""
    for group in config.get("group", []):
        table = group.get("endpoint")
        for name, declaration in config[declared.SECTION].items():
            if isinstance(table, dict) and name not in table and declared.endpoint_like(declaration, table):
                table[name] = declared.endpoint_like(declaration, table)


def read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ExperimentError(f"{path}: {e}") from e
    except OSError as e:
        raise ExperimentError(f"{path}: cannot be read ({e.strerror})") from e


def declared_in(path: Path, taken: set[str]) -> dict:
    """A --server-file's declared servers, checked: the file holds [server.NAME] sections and nothing else."""
    config = read_toml(path)
    other = sorted(set(config) - {declared.SECTION})
    if other or not config.get(declared.SECTION):
        raise servers.DeclarationError(
            f"{path}: a server file holds [server.NAME] sections only"
            + (f", not [{other[0]}]" if other else ", and this one has none")
        )
    found = declared.normalised(config[declared.SECTION], str(path), path.parent, servers.BUILT_IN)
    again = sorted(taken & set(found))
    if again:
        raise servers.DeclarationError(
            f"{path}: [server.{again[0]}] name: {again[0]} is declared already (by the "
            "experiment or an earlier --server-file)"
        )
    return found


def apply_overrides(config: dict, overrides: dict) -> dict:
    """Overrides use the command line's names (see run.py); None means not given. A server knob given on the
    command line applies to every server that has it, over the experiment's section and over groups' own."""
    config = copy.deepcopy(config)
    run = config["run"]
    for key in RUN_KEYS & set(overrides):
        if overrides[key] is not None:
            run[key] = overrides[key]
    for plugin in servers.PLUGINS.values():
        for knob in plugin.knobs:
            if overrides.get(knob.name) is None:
                continue
            config.setdefault(plugin.name, {})[knob.name] = overrides[knob.name]
            for group in config.get("group", []):
                if knob.name in group.get(plugin.name, {}):
                    group[plugin.name][knob.name] = overrides[knob.name]
    generator = loadgen.ADAPTERS.get(run["loadgen"])
    if generator is not None and not generator.keepalive:
        run["keepalive"] = False  # a generator that always opens one connection per request
    for group in config.get("group", []):
        if overrides.get("rates") is not None:
            group["rates"] = overrides["rates"]
        if overrides.get("concurrency") is not None:
            group["concurrency"] = overrides["concurrency"]
        if overrides.get("delays_ms") is not None and "delays_ms" in group:
            group["delays_ms"] = overrides["delays_ms"]
    if overrides.get("paths"):  # after --concurrency: each path's groups take it, and C=1 beside it
        user_paths.measure(config, overrides["paths"])
    workload_measured(config, overrides)
    if overrides.get("groups"):
        unknown = set(overrides["groups"]) - {g["name"] for g in config.get("group", [])}
        if unknown:
            raise ExperimentError(f"--groups: no group {', '.join(sorted(unknown))} in {config['name']}")
        config["group"] = [g for g in config["group"] if g["name"] in overrides["groups"]]
    if run.get("shuffle_seed") is None:  # drawn once, then recorded with the configuration (and reused by --resume)
        run["shuffle_seed"] = random.SystemRandom().randrange(1, 1_000_000)
    return Resolved(config, validate(config))


WORKLOAD_KEY = "workload"  # [run] workload = "file.toml" in an experiment file; its requests are recorded instead


def workload_measured(config: dict, overrides: dict) -> None:
    """A workload file (--workload, or the experiment's [run] workload) read and its groups made, in place; an
    ExperimentError in one line for a bad file or one given beside --path."""
    run = config["run"]
    given = overrides.get("workload_file") or run.pop(WORKLOAD_KEY, None)
    run.pop(WORKLOAD_KEY, None)
    if given is None:
        return
    if not isinstance(given, str):
        raise ExperimentError(f"[run] workload is the path of a workload file, as workload = \"w.toml\", not {given!r}")
    if run.get("paths"):
        raise ExperimentError("--path and a workload file are both given: keep one (a workload file can list GETs)")
    try:
        user_paths.measure_workload(config, workload.read(given))
    except workload.WorkloadError as e:
        raise ExperimentError(str(e)) from None


class Resolved(dict):
    """A resolved configuration: the dict metadata.json records and --resume reads back, holding the typed
    Experiment validate() checked it into (`experiment`), which expand() and recorded() pass on instead of typing
    the dict again. It is not changed once made: a configuration to change is a copy, a plain dict (as --resume's
    raised best levels are), typed again when read."""

    def __init__(self, config: dict, experiment: Experiment):
        super().__init__(config)
        self.experiment = experiment

    def __copy__(self) -> dict:
        return dict(self)

    def __deepcopy__(self, memo) -> dict:
        return copy.deepcopy(dict(self), memo)

    def copy(self) -> dict:
        return dict(self)


def expand(config: dict) -> list[CellPlan]:
    """Every cell of the experiment (resolved: apply_overrides or validate checked it), in run order (shuffled with
    a recorded seed when asked)."""
    return experiment_expand.expand(config.experiment if isinstance(config, Resolved) else typed(config))


def recorded(config: dict) -> Experiment:
    """A resolved or recorded configuration (apply_overrides' result, a run's metadata) as the typed values the
    run and its decisions read: a resolved one's own, checked when it was resolved; a recorded one typed here, the
    defaults of [run] keys it predates filled in. Its declared servers are registered again (a resumed run)."""
    servers.declare(config, f"the recorded experiment {config.get('name')}")
    endpoints.declare_user(workload.user_endpoints(config.get("run", {})))
    if isinstance(config, Resolved):
        return config.experiment
    return typed({**config, "run": {**RUN_DEFAULTS, **config.get("run", {})}})
