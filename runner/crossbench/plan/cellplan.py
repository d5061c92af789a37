"""A planned cell (CellPlan: what one launch measures, as plan.json and the records carry it) and the point it
measures (Point: a typed value from which the point id and the cell ids are derived, in one place)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from crossbench import endpoints, servers
from crossbench.kinds import DEFAULT_KIND
from crossbench.record.record import cell_id_of, point_of

from .experiment_schema import ExperimentError

# a capacity search's long last launch at the rate it found has this in its point id (decide/capacity.py)
CONFIRMATION = "-confirm-q"


@dataclass(frozen=True)
class Point:
    """What is measured with which settings, whatever the launch: the identity of a point."""

    group: str
    server: str
    variant: str  # the server plug-in's label of its settings ("-mt200", "" for none)
    endpoint: str
    concurrency: int
    delay_ms: int
    peak: bool = False  # rates = "auto": the closed-loop cell measuring the group's peak
    proxy: str | None = None  # the server in front (group proxy)
    pool_total: int | None = None  # db_pool_total groups: the database connections of all processes
    pooler: str | None = None  # group pooler, and its server connections (pooler_pool) when given
    pooler_pool: int | None = None
    rate: float | None = None  # open loop: requests offered per second ...
    share: float | None = None  # ... or (rates = "auto") the share of the peak offered

    @property
    def id(self) -> str:
        name = f"{self.group}-peak" if self.peak else self.group
        via = f"-via-{self.proxy}" if self.proxy else ""
        pool = f"-pool{self.pool_total}" if self.pool_total is not None else ""
        if self.pooler:
            pool += f"-{self.pooler}" + (f"{self.pooler_pool}" if self.pooler_pool else "")
        slug = self.endpoint.strip("/").replace("/", "_").replace("*", "mix")
        offered = (
            f"-q{self.rate:g}"
            if self.rate is not None
            else f"-q{100 * self.share:g}pct"
            if self.share is not None
            else ""
        )
        return f"{name}-{self.server}{self.variant}{via}{pool}-{slug}-c{self.concurrency}-d{self.delay_ms}{offered}"

    def cell_id(self, repetition: int) -> str:
        return cell_id_of(self.id, repetition)


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
    settings: dict = field(default_factory=dict)  # the server's knobs for this cell (its plug-in's keys)
    kind: str = DEFAULT_KIND  # the driver that measures the cell (crossbench.drivers)
    index: int = 0  # 1-based position in the run's plan (run order)
    rate: float | None = None  # open loop: requests offered per second (None: closed loop)
    rate_share: float | None = None  # rates = "auto": the share of the peak to offer (rate set at run time)
    peak_cell: str | None = None  # rates = "auto": the closed-loop cell that measures that peak
    target_ms: float | None = None  # a capacity search's p99 target (its pool and held window are sized by it)
    proxy: dict | None = None  # nginx's settings when nginx runs in front of the server (group proxy)
    pooler: dict | None = None  # {"name": "pgbouncer", "pool_size": N or None} (group pooler)
    sweep: str | None = None  # worker_sweep groups: the series this cell is a step of
    sweep_step: int | None = None  # ... and its process count (1, 2, 3, ... up to 2 x cores + 1)
    options: dict = field(default_factory=dict)  # the group's driver options, as in the experiment file
    point_id: str = ""  # what is measured with which settings: the cell_id but its repetition

    def __post_init__(self):
        if not self.point_id:  # plans written before points had ids (plan.json of schema 2 runs)
            object.__setattr__(self, "point_id", point_of(self.cell_id))

    def launch(self, repetition: int) -> CellPlan:
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

    def requests(self, delay_ms: int | None = None) -> list[endpoints.Request]:
        """The cell's requests, with its own delay or the one given (a warm-up's, 0 for a readiness check)."""
        return endpoints.requests(
            self.endpoint,
            delay_ms=self.delay_ms if delay_ms is None else delay_ms,
            queries=self.options.get("queries", endpoints.DEFAULT_QUERIES),
        )

    def paths(self, delay_ms: int | None = None) -> list[str]:
        return [request.path() for request in self.requests(delay_ms)]

    def describe(self) -> str:
        delay = f" delay={self.delay_ms}ms" if self.delay_ms else ""
        offered = (
            f" at {self.rate:g} req/s"
            if self.rate is not None
            else f" at {100 * self.rate_share:g}% of the peak"
            if self.rate_share is not None
            else ""
        )
        if CONFIRMATION in self.point_id:
            offered += f" (confirming, {self.duration_s:g} s)"
        via = (f" behind {servers.proxy().name}" if self.proxy else "") + (
            f" through {self.pooler['name']}" if self.pooler else ""
        )
        return (
            f"{self.plugin.describe(self.settings)}{via} {self.endpoint} C={self.concurrency}{delay}{offered} "
            f"rep {self.repetition}"
        )

    def to_dict(self) -> dict:
        return asdict(self)


def one_per_variant(cells: list[CellPlan]) -> list[CellPlan]:
    """One cell of each server variant (server and settings) among the cells, in the order they first appear."""
    return list({(c.server, repr(c.settings)): c for c in cells}.values())


def launches_so_far(cells: list[CellPlan]) -> tuple[dict[str, CellPlan], dict[str, int]]:
    """Per point id, its first planned cell (to launch again) and the highest repetition planned for it (the
    next launch is one more): what the launches decided after the plan (precision, capacity, best levels) need."""
    planned: dict[str, CellPlan] = {}
    launched: dict[str, int] = {}
    for cell in cells:
        planned.setdefault(cell.point_id, cell)
        launched[cell.point_id] = max(launched.get(cell.point_id, 0), cell.repetition)
    return planned, launched


def plan_from_dict(data: dict) -> CellPlan:
    """A cell of a run's plan.json (for --resume)."""
    try:
        return CellPlan(
            **{**data, "server_cpus": tuple(data["server_cpus"]), "loadgen_cpus": tuple(data["loadgen_cpus"])}
        )
    except TypeError as e:
        raise ExperimentError(f"plan.json was written by an older runner ({e}); start a new run") from None
