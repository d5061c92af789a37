"""What an experiment file may say: the known sections and keys, the defaults of a group, and the typed values a
checked configuration becomes (RunSettings, Group, Experiment: `typed`) for the run, its decisions and expansion
(experiment_expand.py). The checks themselves are experiment_checks.py. The file's own dict stays what a run
records and what --resume reuses."""

from __future__ import annotations

from dataclasses import dataclass, field

from crossbench import endpoints, servers
from crossbench.database import pgbouncer
from crossbench.kinds import DEFAULT_KIND
from crossbench.loadgen import DEFAULT as DEFAULT_LOADGEN
from crossbench.refusal import Refusal

from .search_spec import SEARCH_RATES, SearchSpec
from .search_spec import parse as parse_search

ALL_ENDPOINTS = tuple(e.path for e in endpoints.TABLE)
MAX_CONCURRENCY = 20_000

RUN_KEYS = {
    "duration_s",
    "warmup_s",
    "repetitions",
    "shuffle",
    "shuffle_seed",
    "loadgen",
    "keepalive",
    "servers",
    "server_cpus",
    "loadgen_cpus",
    "loadgen_threads",
    "pipeline",
    "rates",
    "db_url",
    "precision",
    "min_launches",
    "max_launches",
    "min_window_delays",
    "best_level_launches",
    "relaunch_disturbed",
    "held_windows",
    "max_window_bias",
    "paths",
    "requests",
}
ANALYSIS_KEYS = {"knees", "advise"}  # knees = true: print the knees analysis found at the end of the run;
# advise = true: maxThreads advice at the end (crossbench_analysis.advice; the workload from --advise-*)
GROUP_KEYS = {
    "name",
    "kind",
    "endpoint",
    "concurrency",
    "delays_ms",
    "rates",
    "rate_shares",
    "peak_loadgen",
    "options",
    "proxy",
    "db_pool_total",
    "pooler",
    "pooler_pool",
    "worker_sweep",
    "pipeline",
    "search",
    *servers.PLUGINS,
}
PROXIES = servers.proxies()  # group key proxy = "<name>": that plug-in in front of the server (its [<name>])
# group key pooler = "pgbouncer": PgBouncer (transaction mode) between the server and the database, holding
# pooler_pool server connections (default: as many as the server's own pools); servers then run with the
# pooler's SERVER_SETTINGS (PgBouncer's: prepare nothing).
POOLERS = {"pgbouncer": pgbouncer}
# rates = "auto": a closed-loop cell measures the peak first (same server, setting, endpoint, delay, concurrency),
# then the open-loop cells offer these shares of it (10% .. 120%: below, at and past the peak).
AUTO_RATES = "auto"
AUTO_SHARES = (0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.2)
PEAK_LOADGEN = DEFAULT_LOADGEN  # the closed-loop generator a peak cell uses unless the group says peak_loadgen


class ExperimentError(Refusal, ValueError):
    pass


@dataclass(frozen=True)
class RunSettings:
    """[run], defaults filled in (experiment.RUN_DEFAULTS) and checked."""

    duration_s: float
    warmup_s: float
    repetitions: int
    shuffle: bool
    shuffle_seed: int | None
    loadgen: str
    keepalive: bool
    servers: tuple[str, ...]
    server_cpus: tuple[int, ...]
    loadgen_cpus: tuple[int, ...]
    loadgen_threads: int
    pipeline: int
    precision: float | None
    min_launches: int
    max_launches: int
    min_window_delays: float
    rates: object = None  # [r, ...], "auto" or None: the groups' rates unless a group has its own
    db_url: str | None = None
    best_level_launches: int = 0  # best levels launched to this count, the picking one included (0: off)
    # a disturbed launch (decide/disturbed.py) launched again once in a run of one launch a point too, as runs of two
    # or more always are (a knee's sweep loses a concurrency whose only launch was disturbed)
    relaunch_disturbed: bool = False
    # delayed closed-loop cells of the default generator measured in a held window (loadgen/held.py): one process of
    # the generator that holds windows spans warm-up, window and tail, so the window holds the queue C makes.
    # True (oha, the first registered that can), a generator's name ("oha", "k6"), or False (none)
    held_windows: bool | str = False
    # a delayed closed-loop window at least its slowest round trip over this share (0: off), so one round trip of
    # each connection too many or too few moves its figures by at most that share (metrics.window_for_bias)
    max_window_bias: float = 0.0
    # the user's own request paths (--path): endpoints of their server, measured like the contract's, each point's
    # ratios against the same endpoint's C=1 point (figures/service_time.py)
    paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class Group:
    """One [[group]]: which endpoint each server measures, over which concurrencies, delays and rates."""

    name: str
    kind: str
    endpoints: dict  # server -> endpoint (a server without one is not in the group)
    concurrency: tuple[int, ...]
    delays_ms: tuple[int, ...]  # (0,) for an endpoint without a delay
    sections: dict  # server -> its settings: the experiment's [server] with the group's on top
    rates: object = None  # the group's own, else the run's
    rate_shares: tuple[float, ...] = AUTO_SHARES
    peak_loadgen: str = PEAK_LOADGEN
    options: dict = field(default_factory=dict)
    proxy: str | None = None
    db_pool_total: tuple = ()
    pooler: str | None = None
    pooler_pool: int | None = None
    worker_sweep: bool = False
    pipeline: int | None = None  # None: the run's
    search: SearchSpec | None = None  # rates = "search": the capacity search (search_spec.py)


@dataclass(frozen=True)
class Experiment:
    name: str
    run: RunSettings
    groups: tuple[Group, ...]


def server_section(config: dict, group: dict, server: str) -> dict:
    """The experiment's [server] settings, with the group's own section on top."""
    return {**config.get(server, {}), **group.get(server, {})}


def typed(config: dict) -> Experiment:
    """The checked configuration as typed values (validate() first)."""
    run = config["run"]
    settings = RunSettings(
        duration_s=run["duration_s"],
        warmup_s=run["warmup_s"],
        repetitions=run["repetitions"],
        shuffle=run["shuffle"],
        shuffle_seed=run.get("shuffle_seed"),
        loadgen=run["loadgen"],
        keepalive=run["keepalive"],
        servers=tuple(run["servers"]),
        server_cpus=tuple(run["server_cpus"]),
        loadgen_cpus=tuple(run["loadgen_cpus"]),
        loadgen_threads=run["loadgen_threads"],
        pipeline=run["pipeline"],
        precision=run.get("precision"),
        min_launches=run["min_launches"],
        max_launches=run["max_launches"],
        min_window_delays=run["min_window_delays"],
        rates=run.get("rates"),
        db_url=run.get("db_url"),
        best_level_launches=run.get("best_level_launches", 0),
        relaunch_disturbed=run.get("relaunch_disturbed", False),
        held_windows=run.get("held_windows", False),
        max_window_bias=run.get("max_window_bias", 0),
        paths=tuple(run.get("paths") or ()),
    )
    return Experiment(config["name"], settings, tuple(typed_group(config, group) for group in config["group"]))


def typed_group(config: dict, group: dict) -> Group:
    return Group(
        name=group["name"],
        kind=group.get("kind", DEFAULT_KIND),
        endpoints=dict(group["endpoint"]),
        concurrency=tuple(group["concurrency"]),
        delays_ms=tuple(group.get("delays_ms") or [0]),
        sections={name: server_section(config, group, name) for name in servers.PLUGINS},
        rates=group.get("rates") or config["run"].get("rates"),
        rate_shares=tuple(group.get("rate_shares", AUTO_SHARES)),
        peak_loadgen=group.get("peak_loadgen", PEAK_LOADGEN),
        options=dict(group.get("options", {})),
        proxy=group.get("proxy"),
        db_pool_total=tuple(group.get("db_pool_total") or ()),
        pooler=group.get("pooler"),
        pooler_pool=group.get("pooler_pool"),
        worker_sweep=group.get("worker_sweep", False),
        pipeline=group.get("pipeline"),
        search=parse_search(group.get("search"), group["name"]) if group.get("rates") == SEARCH_RATES else None,
    )
