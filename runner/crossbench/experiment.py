"""Experiments are data: a TOML file under runner/experiments/, overridden from the command line, expanded
into the list of cells to measure. The resolved configuration is what a run records and what --resume reuses."""
from __future__ import annotations

import copy
import os
import random
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from . import paths, servers
from .loadgen import ADAPTERS
from .servers import DB_ENDPOINTS, ENDPOINTS, STATIC_ENDPOINT, TFB_ENDPOINTS, SettingsError

ALL_ENDPOINTS = (*ENDPOINTS, *TFB_ENDPOINTS, *DB_ENDPOINTS)

STATIC_FILES = ("index.html", "big.jpg", "small.png")
MAX_CONCURRENCY = 20_000

RUN_KEYS = {"duration_s", "warmup_s", "repetitions", "shuffle", "shuffle_seed", "loadgen", "keepalive", "servers",
            "server_cpus", "loadgen_cpus", "loadgen_threads", "pipeline", "rates", "db_url",
            "precision", "min_launches", "max_launches", "min_window_delays"}
ANALYSIS_KEYS = {"knees", "advise"}   # knees = true: print the knees analysis found at the end of the run;
# advise = true: maxThreads advice at the end (crossbench_analysis.advice; the workload from --advise-*)
GROUP_KEYS = {"name", "kind", "endpoint", "concurrency", "delays_ms", "rates", "rate_shares", "peak_loadgen", "options",
              "proxy", "db_pool_total", "pooler", "pooler_pool", "worker_sweep", "pipeline", *servers.PLUGINS}
PROXIES = ("nginx",)              # group key proxy = "nginx": nginx in front of the server (its [nginx] settings)
# group key pooler = "pgbouncer": PgBouncer (transaction mode) between the server and the database, holding
# pooler_pool server connections (default: as many as the server's own pools); servers then prepare nothing.
POOLERS = ("pgbouncer",)
# rates = "auto": a closed-loop cell measures the peak first (same server, setting, endpoint, delay, concurrency),
# then the open-loop cells offer these shares of it (10% .. 120%: below, at and past the peak).
AUTO_RATES = "auto"
AUTO_SHARES = (0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.2)
PEAK_LOADGEN = "wrk"
# precision = P: launch each point until its headline figure's 95 % interval is within P of its mean, between
# min_launches and max_launches launches (crossbench.precision); repetitions then only sets the first rounds.
RUN_DEFAULTS = {"repetitions": 1, "shuffle": True, "shuffle_seed": None, "keepalive": True, "loadgen": "wrk",
                "precision": None, "min_launches": 2, "max_launches": 6, "min_window_delays": 0,
                "server_cpus": [], "loadgen_cpus": [], "loadgen_threads": 1,
                "pipeline": 1, "servers": ["tomcat", "tornado"]}


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
    settings: dict = field(default_factory=dict)   # the server's knobs for this cell (its plug-in's keys)
    kind: str = "closed_loop"            # the driver that measures the cell (crossbench.drivers)
    index: int = 0                       # 1-based position in the run's plan (run order)
    rate: float | None = None            # open loop: requests offered per second (None: closed loop)
    rate_share: float | None = None      # rates = "auto": the share of the peak to offer (rate set at run time)
    peak_cell: str | None = None         # rates = "auto": the closed-loop cell that measures that peak
    proxy: dict | None = None            # nginx's settings when nginx runs in front of the server (group proxy)
    pooler: dict | None = None           # {"name": "pgbouncer", "pool_size": N or None} (group pooler)
    sweep: str | None = None             # worker_sweep groups: the series this cell is a step of
    sweep_step: int | None = None        # ... and its process count (1, 2, 3, ... up to 2 x cores + 1)
    options: dict = field(default_factory=dict)   # the group's driver options, as in the experiment file
    point_id: str = ""                   # what is measured with which settings: the cell_id but its repetition

    def __post_init__(self):
        if not self.point_id:            # plans written before points had ids (plan.json of schema 2 runs)
            object.__setattr__(self, "point_id", point_of(self.cell_id))

    def launch(self, repetition: int) -> "CellPlan":
        """The same point launched once more (a later round)."""
        return replace(self, repetition=repetition, cell_id=cell_id_of(self.point_id, repetition), index=0)

    @property
    def plugin(self) -> servers.ServerPlugin:
        return servers.get(self.server)

    @property
    def parallel_limit(self) -> int | None:
        """How many of this cell's requests the server runs at once when each holds a worker for its whole
        delay (Tomcat's maxThreads on /delay/sync); None when waiting holds nothing."""
        return self.plugin.parallel_limit(self.settings, self.endpoint)

    def paths(self) -> list[str]:
        if self.endpoint == STATIC_ENDPOINT:
            return [f"/static/{name}" for name in STATIC_FILES]
        if self.endpoint.startswith("/delay/") or self.endpoint == "/db/slow":
            return [f"{self.endpoint}?ms={self.delay_ms}"]
        if self.endpoint in ("/queries", "/updates"):
            return [f"{self.endpoint}?queries={self.options.get('queries', 20)}"]
        return [self.endpoint]

    def describe(self) -> str:
        delay = f" delay={self.delay_ms}ms" if self.delay_ms else ""
        offered = (f" at {self.rate:g} req/s" if self.rate is not None else
                   f" at {100 * self.rate_share:g}% of the peak" if self.rate_share is not None else "")
        via = (" behind nginx" if self.proxy else "") + (f" through {self.pooler['name']}" if self.pooler else "")
        return (f"{self.plugin.describe(self.settings)}{via} {self.endpoint} C={self.concurrency}{delay}{offered} "
                f"rep {self.repetition}")

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
    return config


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
    if run["loadgen"] == "http_load":
        run["keepalive"] = False  # http_load always opens one connection per fetch
    for group in config.get("group", []):
        if overrides.get("rates") is not None:
            group["rates"] = overrides["rates"]
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
    if run.get("shuffle_seed") is None:      # drawn once, then recorded with the configuration (and reused by --resume)
        run["shuffle_seed"] = random.SystemRandom().randrange(1, 1_000_000)
    return config


def validate(config: dict) -> None:
    def fail(message):
        raise ExperimentError(f"experiment {config.get('name')}: {message}")

    unknown = set(config) - {"name", "description", "run", "group", "analysis", *servers.PLUGINS}
    if unknown:
        fail(f"unknown sections {sorted(unknown)}; known: run, group, analysis and one per server "
             f"({', '.join(servers.PLUGINS)})")
    for section, allowed in (("run", RUN_KEYS), ("analysis", ANALYSIS_KEYS)):
        unknown = set(config.get(section, {})) - allowed
        if unknown:
            fail(f"unknown [{section}] keys {sorted(unknown)}; allowed: {sorted(allowed)}")
    run = config["run"]
    for key in ("duration_s", "warmup_s"):
        if not isinstance(run.get(key), (int, float)) or run[key] < 0 or (key == "duration_s" and run[key] == 0):
            fail(f"{key} must be a positive number of seconds, not {run.get(key)!r}")
    if run["loadgen"] not in ADAPTERS:
        fail(f"loadgen {run['loadgen']!r} unknown; known: {', '.join(ADAPTERS)}")
    if not run["servers"]:
        fail("servers is empty")
    for name in run["servers"]:
        try:
            servers.get(name)
        except servers.UnknownServer as e:
            fail(str(e))
    if not isinstance(run["repetitions"], int) or run["repetitions"] < 1:
        fail("repetitions must be a positive integer")
    validate_precision(run, fail)
    if isinstance(run["min_window_delays"], bool) or not isinstance(run["min_window_delays"], (int, float)) \
            or run["min_window_delays"] < 0:
        fail(f"min_window_delays is a number of delays (0: off), not {run['min_window_delays']!r}")
    if set(run["server_cpus"]) & set(run["loadgen_cpus"]):
        fail(f"server_cpus {run['server_cpus']} and loadgen_cpus {run['loadgen_cpus']} overlap; "
             "give them disjoint cores (or leave one empty to let the kernel place it)")
    groups = config.get("group", [])
    if not groups:
        fail("no [[group]] to measure")
    for name, plugin in servers.PLUGINS.items():
        check_settings(plugin, config.get(name, {}), f"[{name}]", fail)
    for group in groups:
        validate_group(group, fail)
        for name, plugin in servers.PLUGINS.items():
            check_settings(plugin, server_section(config, group, name), f"group {group['name']}: [{name}]", fail)


def validate_precision(run: dict, fail) -> None:
    precision = run.get("precision")
    if precision is not None and precision is not False and (
            isinstance(precision, bool) or not isinstance(precision, (int, float)) or not 0 < precision < 1):
        fail(f"precision is a share of the mean between 0 and 1 (0.03 = within 3 %), not {precision!r}")
    for key in ("min_launches", "max_launches"):
        if isinstance(run[key], bool) or not isinstance(run[key], int) or run[key] < 1:
            fail(f"{key} must be a positive integer, not {run[key]!r}")
    if run["min_launches"] < 2 and precision:
        fail("min_launches must be at least 2 with a precision target (one launch has no interval)")
    if run["min_launches"] > run["max_launches"]:
        fail(f"min_launches {run['min_launches']} is above max_launches {run['max_launches']}")


def check_settings(plugin: servers.ServerPlugin, section: dict, where: str, fail) -> None:
    try:
        plugin.validate_section(section)
    except SettingsError as e:
        fail(f"{where}: {e}")


def validate_group(group: dict, fail) -> None:
    from .drivers import DRIVERS
    unknown = set(group) - GROUP_KEYS
    if unknown:
        fail(f"group {group.get('name')}: unknown keys {sorted(unknown)}")
    if group.get("kind", "closed_loop") not in DRIVERS:
        fail(f"group {group.get('name')}: kind {group['kind']!r} unknown; known: {', '.join(DRIVERS)}")
    for server, endpoint in group.get("endpoint", {}).items():
        if server not in servers.PLUGINS or endpoint not in ALL_ENDPOINTS:
            fail(f"group {group.get('name')}: endpoint {server} = {endpoint!r}; servers are "
                 f"{', '.join(servers.PLUGINS)}, endpoints {', '.join(ALL_ENDPOINTS)}")
        if endpoint not in servers.PLUGINS[server].endpoints:
            fail(f"group {group.get('name')}: {server} does not serve {endpoint} (it serves "
                 f"{', '.join(sorted(servers.PLUGINS[server].endpoints))})")
    for c in group.get("concurrency", []):
        if not isinstance(c, int) or not 1 <= c <= MAX_CONCURRENCY:
            fail(f"group {group['name']}: concurrency must be integers from 1 to {MAX_CONCURRENCY}, not {c!r}")
    if not group.get("concurrency"):
        fail(f"group {group['name']}: no concurrency levels")
    rates = group.get("rates")
    for rate in [] if rates in (None, AUTO_RATES) else rates if isinstance(rates, list) else [rates]:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate <= 0:
            fail(f"group {group['name']}: rates must be positive requests per second or \"auto\", not {rate!r}")
    for share in group.get("rate_shares", []):
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 5:
            fail(f"group {group['name']}: rate_shares are shares of the peak, above 0 and at most 5, not {share!r}")
    for total in group.get("db_pool_total", []):
        if total != "concurrency" and (isinstance(total, bool) or not isinstance(total, int) or total < 1):
            fail(f"group {group['name']}: db_pool_total takes connection counts or \"concurrency\", not {total!r}")
    if group.get("proxy") is not None and group["proxy"] not in PROXIES:
        fail(f"group {group['name']}: proxy must be one of {', '.join(PROXIES)}, not {group['proxy']!r}")
    validate_pooler(group, fail)
    pipeline = group.get("pipeline", 1)
    if isinstance(pipeline, bool) or not isinstance(pipeline, int) or pipeline < 1:
        fail(f"group {group['name']}: pipeline is the requests in flight per connection (1 or more), not {pipeline!r}")
    if not isinstance(group.get("worker_sweep", False), bool):
        fail(f"group {group['name']}: worker_sweep is true or false, not {group['worker_sweep']!r}")
    if group.get("peak_loadgen", PEAK_LOADGEN) not in ADAPTERS or \
            getattr(ADAPTERS[group.get("peak_loadgen", PEAK_LOADGEN)], "OPEN_LOOP", False):
        fail(f"group {group['name']}: peak_loadgen must be a closed-loop generator, not {group['peak_loadgen']!r}")
    delays = group.get("delays_ms")
    is_delay = any(e.startswith("/delay/") or e == "/db/slow" for e in group.get("endpoint", {}).values())
    if is_delay and not delays:
        fail(f"group {group['name']}: delay endpoints need delays_ms")
    for d in delays or []:
        if not isinstance(d, int) or not 1 <= d <= 60_000:
            fail(f"group {group['name']}: delays_ms must be integers from 1 to 60000, not {d!r}")


def validate_pooler(group: dict, fail) -> None:
    if group.get("pooler") is None:
        if "pooler_pool" in group:
            fail(f"group {group['name']}: pooler_pool without a pooler (pooler = \"pgbouncer\")")
        return
    if group["pooler"] not in POOLERS:
        fail(f"group {group['name']}: pooler must be one of {', '.join(POOLERS)}, not {group['pooler']!r}")
    if any(e not in DB_ENDPOINTS for e in group.get("endpoint", {}).values()):
        fail(f"group {group['name']}: a pooler stands before the database: only database endpoints "
             f"({', '.join(DB_ENDPOINTS)})")
    size = group.get("pooler_pool")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        fail(f"group {group['name']}: pooler_pool is a number of server connections, not {size!r}")


def server_section(config: dict, group: dict, server: str) -> dict:
    """The experiment's [server] settings, with the group's own section on top."""
    return {**config.get(server, {}), **group.get(server, {})}


def expand(config: dict) -> list[CellPlan]:
    """Every cell of the experiment, in run order (shuffled with a recorded seed when asked)."""
    run = config["run"]
    cells = []
    for group in config["group"]:
        for server in run["servers"]:
            endpoint = group["endpoint"].get(server)
            if endpoint is None:
                continue
            for settings in sweep_variants(config, group, server):
                for delay_ms in group.get("delays_ms") or [0]:
                    for concurrency in group["concurrency"]:
                        cells += group_cells(config, group, server, endpoint, settings, delay_ms, concurrency)
    return [replace(cell, index=position) for position, cell in enumerate(in_rounds(cells, run), 1)]


def in_rounds(cells: list[CellPlan], run: dict) -> list[CellPlan]:
    """Run order: every point once (round 1), then every point again (round 2, ...), so drift on the machine
    spreads over all configurations instead of landing on one. With shuffle, each round's order is drawn with
    its own seed from the run's recorded shuffle_seed. A worker sweep's steps stay together and in order (each
    decides whether the next runs); a peak cell (round 1) runs just before the round-1 cells offering shares of
    it, so before all of them."""
    rounds: dict[int, list[list[CellPlan]]] = {}
    for cell in cells:
        units = rounds.setdefault(cell.repetition, [])
        home = next((u for u in units if (cell.sweep and u[0].sweep == cell.sweep) or
                     (cell.peak_cell and u[0].cell_id == cell.peak_cell)), None)
        home.append(cell) if home else units.append([cell])
    ordered = []
    for number, units in sorted(rounds.items()):
        if run["shuffle"]:
            random.Random(round_seed(run, number)).shuffle(units)
        ordered += [cell for unit in units for cell in unit]
    return ordered


def round_seed(run: dict, number: int) -> int:
    return (run.get("shuffle_seed") or 0) * 1000 + number


def sweep_cores(run: dict) -> int:
    return len(run["server_cpus"]) or os.cpu_count() or 1


def sweep_variants(config: dict, group: dict, server: str) -> list[dict]:
    """The server's settings for a group; worker_sweep = true sets its process knob to 1, 2, 3, ... up to
    2 x cores + 1 (seed 004's rule; the run stops a series after two drops in a row, sweep_stopped). A server
    with no processes to count (Tomcat: one JVM) is measured once."""
    plugin = servers.get(server)
    section = server_section(config, group, server)
    if not group.get("worker_sweep") or not plugin.process_knob:
        return plugin.variants(section)
    steps = range(1, 2 * sweep_cores(config["run"]) + 2)
    return [settings for step in steps for settings in plugin.variants({**section, plugin.process_knob: step})]


def pool_variants(group: dict, server: str, settings: dict, concurrency: int) -> list[dict]:
    """db_pool_total = [2, 4, "concurrency"]: the same total of database connections on every server, split over
    its processes (db_pool = total / processes, at least 1), so pools are compared at equal totals."""
    totals = group.get("db_pool_total")
    if not totals:
        return [settings]
    processes = servers.get(server).process_count(settings)
    return [{**settings, "db_pool": max(1, (concurrency if total == "concurrency" else total) // processes)}
            for total in totals]


def group_cells(config, group, server, endpoint, settings, delay_ms, concurrency) -> list[CellPlan]:
    """One point of a group's matrix: its repetitions at each rate (or the closed-loop cell when it has none),
    for each database pool total the group sweeps."""
    return [cell for pooled in pool_variants(group, server, settings, concurrency)
            for cell in point_cells(config, group, server, endpoint, pooled, delay_ms, concurrency)]


def point_cells(config, group, server, endpoint, settings, delay_ms, concurrency) -> list[CellPlan]:
    repetitions = range(1, first_rounds(config["run"]) + 1)
    point = (config, group, server, endpoint, settings, delay_ms, concurrency)
    if is_open_loop(config, group) and rates_of(config, group) == AUTO_RATES:
        peak = plan_cell(*point, 1, peak=True)
        return [peak] + [replace(plan_cell(*point, repetition, share=share), peak_cell=peak.cell_id)
                         for share in group.get("rate_shares", AUTO_SHARES) for repetition in repetitions]
    return [plan_cell(*point, repetition, rate) for rate in group_rates(config, group) for repetition in repetitions]


def first_rounds(run: dict) -> int:
    """Rounds planned before anything is measured: the repetitions asked, at least min_launches with a precision
    target (further launches are decided from the figures: crossbench.precision)."""
    return max(run["repetitions"], run["min_launches"]) if run.get("precision") else run["repetitions"]


def is_open_loop(config: dict, group: dict) -> bool:
    """An open-loop group, or a closed-loop one run with an open-loop generator (--loadgen oha --rates ...)."""
    kind = group.get("kind", "closed_loop")
    tool = ADAPTERS.get(config["run"]["loadgen"])
    return kind == "open_loop" or (kind == "closed_loop" and getattr(tool, "OPEN_LOOP", False))


def rates_of(config: dict, group: dict):
    rates = group.get("rates") or config["run"].get("rates")
    if not rates:
        raise ExperimentError(f"group {group['name']}: open-loop cells need rates (rates = [...], \"auto\" or --rates)")
    return rates


def group_rates(config: dict, group: dict) -> list[float | None]:
    return list(rates_of(config, group)) if is_open_loop(config, group) else [None]


def plan_cell(config, group, server, endpoint, settings, delay_ms, concurrency, repetition, rate=None, *,
              share: float | None = None, peak: bool = False) -> CellPlan:
    """One cell. An open-loop cell offers `rate`, or (rates = "auto") `share` of its peak cell's throughput;
    `peak` plans that closed-loop cell."""
    from .drivers import DRIVERS
    run = config["run"]
    open_loop = rate is not None or share is not None
    kind = "open_loop" if open_loop else "closed_loop" if peak else group.get("kind", "closed_loop")
    loadgen = group.get("peak_loadgen", PEAK_LOADGEN) if peak else DRIVERS[kind].loadgen or run["loadgen"]
    variant = servers.get(server).variant_label(settings)
    slug = endpoint.strip("/").replace("/", "_").replace("*", "mix")
    offered = f"-q{rate:g}" if rate is not None else f"-q{100 * share:g}pct" if share is not None else ""
    name = f"{group['name']}-peak" if peak else group["name"]
    proxy = servers.get(group["proxy"]).variants(server_section(config, group, group["proxy"]))[0] \
        if group.get("proxy") else None
    via = f"-via-{group['proxy']}" if proxy else ""
    pool = f"-pool{settings['db_pool'] * servers.get(server).process_count(settings)}" \
        if group.get("db_pool_total") else ""
    pooler = {"name": group["pooler"], "pool_size": group.get("pooler_pool")} if group.get("pooler") else None
    if pooler:
        settings = {**settings, "db_prepared": False}      # PgBouncer 1.18 in transaction mode keeps none
        pool += f"-{pooler['name']}" + (f"{pooler['pool_size']}" if pooler["pool_size"] else "")
    point_id = f"{name}-{server}{variant}{via}{pool}-{slug}-c{concurrency}-d{delay_ms}{offered}"
    sweep, step = sweep_of(group, server, settings, f"{via}{pool}-{slug}-c{concurrency}-d{delay_ms}{offered}")
    return CellPlan(
        cell_id=cell_id_of(point_id, repetition), point_id=point_id, experiment=config["name"], group=group["name"], server=server, endpoint=endpoint,
        concurrency=concurrency, delay_ms=delay_ms, duration_s=window_s(run, delay_ms), warmup_s=run["warmup_s"],
        repetition=repetition, loadgen=loadgen, keepalive=run["keepalive"],
        pipeline=group.get("pipeline", run["pipeline"]),     # a group may pipeline alone (tfb's plaintext)
        server_cpus=tuple(run["server_cpus"]), loadgen_cpus=tuple(run["loadgen_cpus"]),
        loadgen_threads=run["loadgen_threads"], settings=dict(settings),
        kind=kind, options=dict(group.get("options", {})), rate=rate, rate_share=share, proxy=proxy,
        pooler=pooler, sweep=sweep, sweep_step=step)


def window_s(run: dict, delay_ms: int) -> float:
    """The measured window: duration_s, or min_window_delays round trips of the delay when that is longer (a
    short window serves more launches; a 10 s delay still needs a long one to complete enough requests)."""
    return max(run["duration_s"], run["min_window_delays"] * delay_ms / 1000)


def cell_id_of(point_id: str, repetition: int) -> str:
    return f"{point_id}-r{repetition}"


def point_of(cell_id: str) -> str:
    """The point a cell id measures: everything but its repetition suffix (-rN)."""
    head, _, tail = cell_id.rpartition("-r")
    return head if head and tail.isdigit() else cell_id


def sweep_of(group: dict, server: str, settings: dict, rest: str) -> tuple[str | None, int | None]:
    """(series id, step) of a worker-sweep cell: the id is the cell's with N for the process count."""
    knob = servers.get(server).process_knob
    if not group.get("worker_sweep") or not knob:
        return None, None
    label = servers.get(server).variant_label({**settings, knob: "N"})
    return f"{group['name']}-{server}{label}{rest}", settings[knob]


def sweep_stopped(plan: CellPlan, records: dict[str, dict]) -> str | None:
    """Why a worker-sweep cell is not run (seed 004's rule: stop once throughput dropped two steps in a row),
    from the series' steps measured so far; None to run it."""
    if plan.sweep is None:
        return None
    by_step: dict[int, list[float]] = {}
    for record in records.values():
        if record.get("sweep") == plan.sweep and record.get("status") == "ok" and record["sweep_step"] < plan.sweep_step:
            by_step.setdefault(record["sweep_step"], []).append(record["rps"] or 0.0)
    rps = [sum(values) / len(values) for _, values in sorted(by_step.items())]
    drops = [later < earlier for earlier, later in zip(rps, rps[1:])]
    if len(drops) >= 2 and drops[-1] and drops[-2]:
        return f"throughput dropped two steps in a row ({', '.join(f'{r:.0f}' for r in rps[-3:])} req/s)"
    return None


class PeakMissing(RuntimeError):
    """An open-loop cell's peak cell has no usable throughput: the cell cannot know its rate."""


def with_rate_from_peak(plan: CellPlan, records: dict[str, dict]) -> CellPlan:
    """A rates = "auto" cell with its rate set: its share of the peak cell's measured throughput."""
    if plan.peak_cell is None:
        return plan
    peak = records.get(plan.peak_cell)
    if peak is None or peak.get("status") != "ok" or not peak.get("rps"):
        why = "was not measured" if peak is None else f"has no throughput ({peak.get('error') or peak.get('flags')})"
        raise PeakMissing(f"its peak cell {plan.peak_cell} {why}")
    return replace(plan, rate=round(plan.rate_share * peak["rps"], 1))


def plan_from_dict(data: dict) -> CellPlan:
    """A cell of a run's plan.json (for --resume)."""
    try:
        return CellPlan(**{**data, "server_cpus": tuple(data["server_cpus"]),
                           "loadgen_cpus": tuple(data["loadgen_cpus"])})
    except TypeError as e:
        raise ExperimentError(f"plan.json was written by an older runner ({e}); start a new run") from None
