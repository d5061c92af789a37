"""An experiment's cells, in run order: every group's matrix (server x settings x delay x concurrency x pool x
rate), each point launched once per round, the rounds shuffled with the run's recorded seed."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, replace

from crossbench import servers
from crossbench.drivers import DEFAULT_KIND, DRIVERS, PEAK_KIND, RATE_KIND
from crossbench.loadgen import ADAPTERS, holding_window
from crossbench.loadgen import DEFAULT as DEFAULT_LOADGEN
from crossbench.record import metrics
from crossbench.record.record import point_of
from crossbench.stats import MIN_LAUNCHES

from .cellplan import CellPlan, Point
from .experiment_schema import AUTO_RATES, POOLERS, Experiment, ExperimentError, Group, RunSettings
from .search_spec import round_rate


@dataclass(frozen=True)
class Coordinates:
    """Where a point sits in its group's matrix, before its rates."""

    group: Group
    plugin: servers.ServerPlugin  # the server's plug-in, looked up once by its name and passed along
    endpoint: str
    settings: dict
    delay_ms: int
    concurrency: int


def expand(experiment: Experiment) -> list[CellPlan]:
    """Every cell of the experiment, in run order (shuffled with a recorded seed when asked)."""
    cells = []
    for group in experiment.groups:
        for server in experiment.run.servers:
            endpoint = group.endpoints.get(server)
            if endpoint is None:
                continue
            plugin = servers.get(server)
            for settings in sweep_variants(experiment.run, group, plugin):
                for delay_ms in group.delays_ms:
                    for concurrency in group.concurrency:
                        for pooled in pool_variants(group, plugin, settings, concurrency):
                            at = Coordinates(group, plugin, endpoint, pooled, delay_ms, concurrency)
                            cells += point_cells(experiment, at)
    return [replace(cell, index=position) for position, cell in enumerate(in_rounds(cells, experiment.run), 1)]


def in_rounds(cells: list[CellPlan], run: RunSettings) -> list[CellPlan]:
    """Run order: every point once (round 1), then every point again (round 2, ...), so drift on the machine
    spreads over all configurations instead of landing on one. With shuffle, each round's order is drawn with
    its own seed from the run's recorded shuffle_seed. A worker sweep's steps stay together and in order (each
    decides whether the next runs); a peak cell (round 1) runs just before the round-1 cells offering shares of
    it, so before all of them. Every launch of a peak point runs in round 1, before those cells: their rate is a
    share of the peak's mean over its launches."""
    peak_points = {point_of(cell.peak_cell) for cell in cells if cell.peak_cell}
    rounds: dict[int, list[list[CellPlan]]] = {}
    for cell in cells:
        is_peak = cell.point_id in peak_points
        units = rounds.setdefault(1 if is_peak else cell.repetition, [])
        home = next(
            (
                u
                for u in units
                if (cell.sweep and u[0].sweep == cell.sweep)
                or (is_peak and u[0].point_id == cell.point_id)
                or (cell.peak_cell and u[0].cell_id == cell.peak_cell)
            ),
            None,
        )
        home.append(cell) if home else units.append([cell])
    ordered = []
    for number, units in sorted(rounds.items()):
        if run.shuffle:
            random.Random(round_seed(run.shuffle_seed, number)).shuffle(units)
        ordered += [cell for unit in units for cell in unit]
    return ordered


def round_seed(shuffle_seed: int | None, number: int) -> int:
    return (shuffle_seed or 0) * 1000 + number


def sweep_cores(run: RunSettings) -> int:
    return len(run.server_cpus) or os.cpu_count() or 1


def sweep_variants(run: RunSettings, group: Group, plugin: servers.ServerPlugin) -> list[dict]:
    """The server's settings for a group; worker_sweep = true sets its process knob to 1, 2, 3, ... up to
    2 x cores + 1 (seed 004's rule; the run stops a series after two drops in a row, sweep_stopped). A server
    with no processes to count (Tomcat: one JVM) is measured once."""
    section = group.sections[plugin.name]
    if not group.worker_sweep or not plugin.process_knob:
        return plugin.variants(section)
    steps = range(1, 2 * sweep_cores(run) + 2)
    return [settings for step in steps for settings in plugin.variants({**section, plugin.process_knob: step})]


def pool_variants(group: Group, plugin: servers.ServerPlugin, settings: dict, concurrency: int) -> list[dict]:
    """db_pool_total = [2, 4, "concurrency"]: the same total of database connections on every server, split over
    its processes (db_pool = total / processes, at least 1), so pools are compared at equal totals."""
    if not group.db_pool_total:
        return [settings]
    processes = plugin.process_count(settings)
    return [
        {**settings, "db_pool": max(1, (concurrency if total == "concurrency" else total) // processes)}
        for total in group.db_pool_total
    ]


def point_cells(experiment: Experiment, at: Coordinates) -> list[CellPlan]:
    """One point of a group's matrix: its repetitions at each rate (or the closed-loop cell when it has none)."""
    repetitions = range(1, first_rounds(experiment.run) + 1)
    group = at.group
    if group.search is not None:
        rate = search_start(at)
        return [plan_cell(experiment, at, repetition, rate) for repetition in search_launches(experiment.run)]
    if is_open_loop(experiment.run, group) and rates_of(group) == AUTO_RATES:
        peaks = [plan_cell(experiment, at, repetition, peak=True) for repetition in repetitions]
        return peaks + [
            replace(plan_cell(experiment, at, repetition, share=share), peak_cell=peaks[0].cell_id)
            for share in group.rate_shares
            for repetition in repetitions
        ]
    return [
        plan_cell(experiment, at, repetition, rate)
        for rate in group_rates(experiment.run, group)
        for repetition in repetitions
    ]


def search_launches(run: RunSettings) -> range:
    """The launches a capacity search gives each rate it tries first: enough for an interval."""
    return range(1, max(first_rounds(run), MIN_LAUNCHES) + 1)


def search_start(at: Coordinates) -> float:
    """Where a capacity search starts: the group's start_rate, else the server's predicted limit (its parallel
    limit / delay: Tomcat's maxThreads / delay on /delay/sync)."""
    spec = at.group.search
    if spec.start_rate:
        return round_rate(spec.start_rate)
    limit = at.plugin.parallel_limit(at.settings, at.endpoint)
    if limit and at.delay_ms:
        return round_rate(limit * 1000 / at.delay_ms)
    raise ExperimentError(
        f"group {at.group.name}: {at.plugin.name} on {at.endpoint} has no predicted limit to start "
        "its capacity search from; give search.start_rate (e.g. its closed-loop peak)"
    )


def first_rounds(run: RunSettings) -> int:
    """Rounds planned before anything is measured: the repetitions asked, at least min_launches with a precision
    target (further launches are decided from the figures: crossbench.decide.precision)."""
    return max(run.repetitions, run.min_launches) if run.precision else run.repetitions


def is_open_loop(run: RunSettings, group: Group) -> bool:
    """An open-loop group, or a closed-loop one run with an open-loop generator (--loadgen oha --rates ...)."""
    tool = ADAPTERS.get(run.loadgen)
    return group.kind == RATE_KIND or (group.kind == DEFAULT_KIND and tool is not None and tool.open_loop)


def rates_of(group: Group):
    if not group.rates:
        raise ExperimentError(f"group {group.name}: open-loop cells need rates (rates = [...], \"auto\" or --rates)")
    return group.rates


def group_rates(run: RunSettings, group: Group) -> list[float | None]:
    return list(rates_of(group)) if is_open_loop(run, group) else [None]


def point_of_cell(at: Coordinates, *, rate=None, share=None, peak=False) -> Point:
    """The typed point a cell measures (its id and the cell ids derive from it: cellplan.Point)."""
    group, plugin = at.group, at.plugin
    return Point(
        group=group.name,
        server=plugin.name,
        variant=plugin.variant_label(at.settings),
        endpoint=at.endpoint,
        concurrency=at.concurrency,
        delay_ms=at.delay_ms,
        peak=peak,
        proxy=group.proxy,
        pool_total=at.settings["db_pool"] * plugin.process_count(at.settings) if group.db_pool_total else None,
        pooler=group.pooler,
        pooler_pool=group.pooler_pool if group.pooler else None,
        rate=rate,
        share=share,
    )


def plan_cell(
    experiment: Experiment,
    at: Coordinates,
    repetition: int,
    rate=None,
    *,
    share: float | None = None,
    peak: bool = False,
) -> CellPlan:
    """One cell. An open-loop cell offers `rate`, or (rates = "auto") `share` of its peak cell's throughput;
    `peak` plans that closed-loop cell."""
    run, group = experiment.run, at.group
    open_loop = rate is not None or share is not None
    kind = RATE_KIND if open_loop else PEAK_KIND if peak else group.kind
    loadgen = group.peak_loadgen if peak else DRIVERS[kind].loadgen or run.loadgen
    pipeline = run.pipeline if group.pipeline is None else group.pipeline
    if held_window(run, kind, at.delay_ms, loadgen, pipeline):
        loadgen = holding_window() if run.held_windows is True else run.held_windows
    point = point_of_cell(at, rate=rate, share=share, peak=peak)
    proxy = servers.get(group.proxy).variants(group.sections[group.proxy])[0] if group.proxy else None
    pooler = {"name": group.pooler, "pool_size": group.pooler_pool} if group.pooler else None
    settings = {**at.settings, **POOLERS[group.pooler].SERVER_SETTINGS} if pooler else at.settings
    sweep, step = sweep_of(point, group, settings, at.plugin)
    return CellPlan(
        cell_id=point.cell_id(repetition),
        point_id=point.id,
        experiment=experiment.name,
        group=group.name,
        server=at.plugin.name,
        endpoint=at.endpoint,
        concurrency=at.concurrency,
        delay_ms=at.delay_ms,
        duration_s=window_s(run, at, open_loop),
        warmup_s=run.warmup_s,
        repetition=repetition,
        loadgen=loadgen,
        keepalive=DRIVERS[kind].keepalive(
            run.keepalive, group.options
        ),  # a group may pipeline alone (tfb's plaintext):
        pipeline=pipeline,
        server_cpus=run.server_cpus,
        loadgen_cpus=run.loadgen_cpus,
        loadgen_threads=run.loadgen_threads,
        settings=dict(settings),
        kind=kind,
        options=dict(group.options),
        rate=rate,
        rate_share=share,
        proxy=proxy,
        pooler=pooler,
        sweep=sweep,
        sweep_step=step,
        target_ms=group.search.target_ms(at.delay_ms) if group.search is not None else None,
    )


def held_window(run: RunSettings, kind: str, delay_ms: int, loadgen: str, pipeline: int) -> bool:
    """A delayed closed-loop cell of a run with held_windows, on the default generator without pipelining: its
    window is held (loadgen/held.py) by the generator held_windows names, true meaning the first that can (oha);
    a generator the run names itself is kept."""
    return run.held_windows and kind == DEFAULT_KIND and delay_ms > 0 and loadgen == DEFAULT_LOADGEN and pipeline == 1


def window_s(run: RunSettings, at: Coordinates, open_loop: bool = False) -> float:
    """The measured window: duration_s, or min_window_delays round trips of the delay when that is longer (a
    short window serves more launches; a 10 s delay still needs a long one to complete enough requests), or for
    a closed-loop cell with max_window_bias, its slowest round trip over that share when that is longer still."""
    window = max(run.duration_s, run.min_window_delays * at.delay_ms / 1000)
    if run.max_window_bias and not open_loop and at.delay_ms:
        window = max(window, round(metrics.window_for_bias(round_trip_s(at), run.max_window_bias), 3))
    return window


def round_trip_s(at: Coordinates) -> float:
    """The slowest round trip a healthy server gives the point: ceil(C / parallel limit) rounds of the delay, one
    round without a limit (metrics.expected_worst_latency_s)."""
    limit = at.plugin.parallel_limit(at.settings, at.endpoint)
    return metrics.expected_worst_latency_s(
        delay_ms=at.delay_ms, concurrency=at.concurrency, blocking=limit is not None, workers=limit
    )


def sweep_of(point: Point, group: Group, settings: dict, plugin: servers.ServerPlugin) -> tuple[str | None, int | None]:
    """(series id, step) of a worker-sweep cell: the series is the point's id with N for the process count (and
    the group's own name for a peak cell)."""
    knob = plugin.process_knob
    if not group.worker_sweep or not knob:
        return None, None
    series = replace(point, peak=False, variant=plugin.variant_label({**settings, knob: "N"}))
    return series.id, settings[knob]
