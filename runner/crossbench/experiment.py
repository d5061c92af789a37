"""Experiments are data: a TOML file under runner/experiments/, overridden from the command line, expanded
into the list of cells to measure. The resolved configuration is what a run records and what --resume reuses."""
from __future__ import annotations

import copy
import random
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import paths
from .loadgen import ADAPTERS
from .servers import SERVERS
from .tomcat import EXECUTORS

STATIC_ENDPOINT = "/static/*"
STATIC_FILES = ("index.html", "big.jpg", "small.png")
ENDPOINTS = (STATIC_ENDPOINT, "/delay/sync", "/delay/async", "/hello", "/now")
MAX_CONCURRENCY = 20_000

RUN_KEYS = {"duration_s", "warmup_s", "repetitions", "shuffle", "shuffle_seed", "loadgen", "keepalive", "servers",
            "server_cpus", "loadgen_cpus", "loadgen_threads", "jfr", "pipeline"}
TOMCAT_KEYS = {"max_threads", "executor", "accept_count", "max_connections", "jvm_options", "heap", "jdk"}
TORNADO_KEYS = {"processes", "backlog"}
ANALYSIS_KEYS = {"knees"}         # post-processing steps on the finished records (run.py)
GROUP_KEYS = {"name", "kind", "endpoint", "concurrency", "delays_ms", "options", "tomcat", "tornado"}
RUN_DEFAULTS = {"repetitions": 1, "shuffle": False, "shuffle_seed": 0, "keepalive": True, "loadgen": "wrk",
                "server_cpus": [], "loadgen_cpus": [], "loadgen_threads": 1, "jfr": True,
                "pipeline": 1, "servers": list(SERVERS)}


class ExperimentError(ValueError):
    pass


@dataclass(frozen=True)
class CellPlan:
    cell_id: str
    experiment: str
    group: str
    server: str
    endpoint: str
    concurrency: int
    delay_ms: int
    duration_s: float
    warmup_s: float
    repetition: int
    loadgen: str
    keepalive: bool
    pipeline: int
    server_cpus: tuple[int, ...]
    loadgen_cpus: tuple[int, ...]
    loadgen_threads: int
    max_threads: int | None = None       # Tomcat platform pool
    executor: str | None = None          # Tomcat: platform | virtual
    processes: int | None = None         # Tornado workers
    accept_count: int | None = None      # Tomcat listen queue
    max_connections: int | None = None   # Tomcat connections held at once
    backlog: int | None = None           # Tornado listen queue
    kind: str = "closed_loop"            # the driver that measures the cell (crossbench.drivers)
    options: dict = field(default_factory=dict)   # the group's driver options, as in the experiment file

    @property
    def blocking(self) -> bool:
        """Whether each request holds a worker (thread or process) for its whole delay."""
        return self.endpoint == "/delay/sync" and self.executor != "virtual"

    @property
    def workers(self) -> int | None:
        return self.max_threads if self.server == "tomcat" else self.processes

    def paths(self) -> list[str]:
        if self.endpoint == STATIC_ENDPOINT:
            return [f"/static/{name}" for name in STATIC_FILES]
        if self.endpoint.startswith("/delay/"):
            return [f"{self.endpoint}?ms={self.delay_ms}"]
        return [self.endpoint]

    def describe(self) -> str:
        variant = ""
        if self.server == "tomcat":
            variant = " virtual" if self.executor == "virtual" else f" maxThreads={self.max_threads}"
        delay = f" delay={self.delay_ms}ms" if self.delay_ms else ""
        return f"{self.server}{variant} {self.endpoint} C={self.concurrency}{delay} rep {self.repetition}"

    def to_dict(self) -> dict:
        return asdict(self)


def experiment_path(name_or_path: str) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix == ".toml" and candidate.is_file():
        return candidate
    named = paths.EXPERIMENTS / f"{name_or_path}.toml"
    if named.is_file():
        return named
    known = ", ".join(sorted(p.stem for p in paths.EXPERIMENTS.glob("*.toml")))
    raise ExperimentError(f"no experiment {name_or_path!r}; known: {known} (or give a path to a .toml file)")


def load(name_or_path: str) -> dict:
    path = experiment_path(name_or_path)
    try:
        config = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ExperimentError(f"{path}: {e}") from e
    config.setdefault("name", path.stem)
    config["run"] = {**RUN_DEFAULTS, **config.get("run", {})}
    config.setdefault("tomcat", {})
    config.setdefault("tornado", {})
    return config


def apply_overrides(config: dict, overrides: dict) -> dict:
    """Overrides use the command line's names (see cli.py); None means not given."""
    config = copy.deepcopy(config)
    run, tomcat, tornado = config["run"], config["tomcat"], config["tornado"]
    for key in ("duration_s", "warmup_s", "repetitions", "loadgen", "servers", "server_cpus", "loadgen_cpus",
                "loadgen_threads", "keepalive", "shuffle", "jfr"):
        if overrides.get(key) is not None:
            run[key] = overrides[key]
    # A command-line value wins over the experiment's, and over a group's own section too.
    for section, keys in ((tomcat, ("max_threads", "executor", "accept_count", "max_connections", "jdk", "heap")),
                          (tornado, ("processes", "backlog"))):
        name = "tomcat" if section is tomcat else "tornado"
        for key in keys:
            if overrides.get(key) is not None:
                section[key] = overrides[key]
                for group in config.get("group", []):
                    if key in group.get(name, {}):
                        group[name][key] = overrides[key]
    if run["loadgen"] == "http_load":
        run["keepalive"] = False  # http_load always opens one connection per fetch
    for group in config.get("group", []):
        if overrides.get("concurrency") is not None:
            group["concurrency"] = overrides["concurrency"]
        if overrides.get("delays_ms") is not None and "delays_ms" in group:
            group["delays_ms"] = overrides["delays_ms"]
    if overrides.get("groups"):
        unknown = set(overrides["groups"]) - {g["name"] for g in config.get("group", [])}
        if unknown:
            raise ExperimentError(f"--groups: no group {', '.join(sorted(unknown))} in {config['name']}")
        config["group"] = [g for g in config["group"] if g["name"] in overrides["groups"]]
    validate(config)
    return config


def validate(config: dict) -> None:
    def fail(message):
        raise ExperimentError(f"experiment {config.get('name')}: {message}")

    for section, allowed in (("run", RUN_KEYS), ("tomcat", TOMCAT_KEYS), ("tornado", TORNADO_KEYS),
                             ("analysis", ANALYSIS_KEYS)):
        unknown = set(config.get(section, {})) - allowed
        if unknown:
            fail(f"unknown [{section}] keys {sorted(unknown)}; allowed: {sorted(allowed)}")
    run = config["run"]
    for key in ("duration_s", "warmup_s"):
        if not isinstance(run.get(key), (int, float)) or run[key] < 0 or (key == "duration_s" and run[key] == 0):
            fail(f"{key} must be a positive number of seconds, not {run.get(key)!r}")
    if run["loadgen"] not in ADAPTERS:
        fail(f"loadgen {run['loadgen']!r} unknown; known: {', '.join(ADAPTERS)}")
    if not run["servers"] or set(run["servers"]) - set(SERVERS):
        fail(f"servers must be among {', '.join(SERVERS)}, not {run['servers']}")
    if not isinstance(run["repetitions"], int) or run["repetitions"] < 1:
        fail("repetitions must be a positive integer")
    if set(run["server_cpus"]) & set(run["loadgen_cpus"]):
        fail(f"server_cpus {run['server_cpus']} and loadgen_cpus {run['loadgen_cpus']} overlap; "
             "give them disjoint cores (or leave one empty to let the kernel place it)")
    validate_servers(config["tomcat"], config["tornado"], fail)
    groups = config.get("group", [])
    if not groups:
        fail("no [[group]] to measure")
    for group in groups:
        validate_group(group, fail)
        validate_servers(server_section(config, group, "tomcat"), server_section(config, group, "tornado"), fail)


def validate_servers(tomcat: dict, tornado: dict, fail) -> None:
    executors = as_list(tomcat.get("executor", ["platform"]))
    if set(executors) - set(EXECUTORS):
        fail(f"executor must be among {', '.join(EXECUTORS)}, not {executors}")
    for key, values in (("max_threads", as_list(tomcat.get("max_threads", [200]))),
                        ("accept_count", [tomcat.get("accept_count", 100)]),
                        ("max_connections", [tomcat.get("max_connections", 8192)]),
                        ("processes", as_list(tornado.get("processes", 1))),
                        ("backlog", [tornado.get("backlog", 128)])):
        for value in values:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                fail(f"{key} must be positive integers, not {value!r}")


def validate_group(group: dict, fail) -> None:
    from .drivers import DRIVERS
    unknown = set(group) - GROUP_KEYS
    if unknown:
        fail(f"group {group.get('name')}: unknown keys {sorted(unknown)}")
    for section, allowed in (("tomcat", TOMCAT_KEYS), ("tornado", TORNADO_KEYS)):
        unknown = set(group.get(section, {})) - allowed
        if unknown:
            fail(f"group {group.get('name')}: unknown [{section}] keys {sorted(unknown)}")
    if group.get("kind", "closed_loop") not in DRIVERS:
        fail(f"group {group.get('name')}: kind {group['kind']!r} unknown; known: {', '.join(DRIVERS)}")
    for server, endpoint in group.get("endpoint", {}).items():
        if server not in SERVERS or endpoint not in ENDPOINTS:
            fail(f"group {group.get('name')}: endpoint {server} = {endpoint!r}; endpoints are {', '.join(ENDPOINTS)}")
    for c in group.get("concurrency", []):
        if not isinstance(c, int) or not 1 <= c <= MAX_CONCURRENCY:
            fail(f"group {group['name']}: concurrency must be integers from 1 to {MAX_CONCURRENCY}, not {c!r}")
    if not group.get("concurrency"):
        fail(f"group {group['name']}: no concurrency levels")
    delays = group.get("delays_ms")
    is_delay = any(e.startswith("/delay/") for e in group.get("endpoint", {}).values())
    if is_delay and not delays:
        fail(f"group {group['name']}: delay endpoints need delays_ms")
    for d in delays or []:
        if not isinstance(d, int) or not 1 <= d <= 60_000:
            fail(f"group {group['name']}: delays_ms must be integers from 1 to 60000, not {d!r}")


def as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def server_section(config: dict, group: dict, server: str) -> dict:
    """The experiment's [tomcat] / [tornado] settings, with the group's own section on top."""
    return {**config.get(server, {}), **group.get(server, {})}


def tomcat_variants(tomcat: dict) -> list[tuple[int | None, str]]:
    variants = []
    for executor in as_list(tomcat.get("executor", ["platform"])):
        if executor == "virtual":
            variants.append((None, "virtual"))
        else:
            variants += [(mt, "platform") for mt in as_list(tomcat.get("max_threads", [200]))]
    return variants


def expand(config: dict) -> list[CellPlan]:
    """Every cell of the experiment, in run order (shuffled with a recorded seed when asked)."""
    run = config["run"]
    cells = []
    for group in config["group"]:
        for server in run["servers"]:
            endpoint = group["endpoint"].get(server)
            if endpoint is None:
                continue
            if server == "tomcat":
                variants = tomcat_variants(server_section(config, group, "tomcat"))
            else:
                variants = [(p, None) for p in as_list(server_section(config, group, "tornado").get("processes", 1))]
            for workers, executor in variants:
                for delay_ms in group.get("delays_ms") or [0]:
                    for concurrency in group["concurrency"]:
                        for repetition in range(1, run["repetitions"] + 1):
                            cells.append(plan_cell(config, group, server, endpoint, workers, executor,
                                                   delay_ms, concurrency, repetition))
    if run["shuffle"]:
        random.Random(run.get("shuffle_seed", 0)).shuffle(cells)
    return cells


def plan_cell(config, group, server, endpoint, workers, executor, delay_ms, concurrency, repetition):
    """`workers` is Tomcat's maxThreads (None for virtual threads) or Tornado's process count."""
    run = config["run"]
    tomcat, tornado = server_section(config, group, "tomcat"), server_section(config, group, "tornado")
    if server == "tomcat":
        variant = "-virtual" if executor == "virtual" else f"-mt{workers}"
        max_threads, processes = workers, None
        queues = {"accept_count": tomcat.get("accept_count", 100),
                  "max_connections": tomcat.get("max_connections", 8192)}
    else:
        variant = f"-p{workers}" if workers != 1 else ""
        max_threads, processes = None, workers
        queues = {"backlog": tornado.get("backlog", 128)}
    slug = endpoint.strip("/").replace("/", "_").replace("*", "mix")
    cell_id = f"{group['name']}-{server}{variant}-{slug}-c{concurrency}-d{delay_ms}-r{repetition}"
    return CellPlan(
        cell_id=cell_id, experiment=config["name"], group=group["name"], server=server, endpoint=endpoint,
        concurrency=concurrency, delay_ms=delay_ms, duration_s=run["duration_s"], warmup_s=run["warmup_s"],
        repetition=repetition, loadgen=run["loadgen"], keepalive=run["keepalive"], pipeline=run["pipeline"],
        server_cpus=tuple(run["server_cpus"]), loadgen_cpus=tuple(run["loadgen_cpus"]),
        loadgen_threads=run["loadgen_threads"], max_threads=max_threads, executor=executor, processes=processes,
        kind=group.get("kind", "closed_loop"), options=dict(group.get("options", {})), **queues)
