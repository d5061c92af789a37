"""Capacity at a latency target, found by search (groups with rates = "search", search_spec.py): per server
setting, the highest offered rate shown to hold the target and the lowest shown not to.

Decided from the records alone, like the precision target, so Ctrl-C and --resume continue a search where it
stopped: a rate tried is a point (its id ends in -q<rate>), its launches are cells.

A rate passes only when its interval says so: p99's upper bound at or under the target, with errors within
`errors` of the requests and no launch's queue growing through its window; it fails when p99's lower bound is
over the target, the answers' upper bound is under `achieved` of the offered rate, errors are over, or every
launch's queue grew through its window (flag unsustainable: a rate the server cannot hold for long, however short
the window); in between (or with some launches unsustainable) it is launched again, up to max_launches, then
undecided. The answers only ever fail a rate: a short window counts them within a percent or two of the offered
rate either way (measured: 84.0 to 86.0 req/s answered at 84.1 offered, 2 s windows), so asking their lower bound
to clear 99 % left rates undecided whose p99 was far under the target; a server that falls behind shows it first
in its latency, counted from the schedule. Looking again after each launch is a sequence of tests, so
each look uses a Bonferroni-widened interval (95 % over all looks at a rate). A launch whose generator fell
behind its own schedule (loadgen_saturated) measured the generator, not the server: alone it is left out and
launched again (a p99 lag of 5.1 ms once in 3 launches at 800 req/s, oha at 14 % of its core, measured), and when
half a rate's launches or more fell behind, the search stops there and says the capacity is above the
generator's ceiling, not a bracket. A group searched with `generator = true` (search_spec.py) measures that
ceiling first, against a server far faster than the generator; every other search's rates above it are CEILING.

The search: from the start rate, double until a rate fails (or halve until one passes), then bisect (geometric
midpoint) between the highest rate that passed and the lowest that did not, until they are within `resolution`
of each other or max_rates rates were tried. The answer is that bracket, with what each request cost at the rate
that passed: CPU per request, RSS, threads and database connections, each with its interval.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

from crossbench import stats
from crossbench.figures import points
from crossbench.plan.cellplan import CellPlan, launches_so_far
from crossbench.plan.experiment_expand import round_seed as seed_of
from crossbench.plan.experiment_expand import search_launches
from crossbench.plan.experiment_schema import Experiment
from crossbench.plan.search_spec import SearchSpec, round_rate
from crossbench.record.record import cell_id_of

PASS, FAIL, UNDECIDED, PENDING, CEILING = "pass", "fail", "undecided", "pending", "ceiling"
BRACKETED, BUDGET, ABOVE_CEILING, FAILS_ALL, RUNNING = \
    "bracketed", "budget reached", "above the generator's ceiling", "fails at every rate tried", "running"
LOWEST_RATE = 1.0           # a search that fails here stops halving
FILE = "capacity.json"
SATURATED = "loadgen_saturated"


@dataclass(frozen=True)
class Trial:
    """One rate tried: its verdict against the target and why."""
    rate: float
    verdict: str
    why: str
    n: int
    point: dict


@dataclass
class Search:
    """One server setting's search: the rates tried, in rate order."""
    series: str
    group: str
    spec: SearchSpec
    target_ms: float
    trials: list[Trial] = field(default_factory=list)

    @property
    def passed(self) -> Trial | None:
        """The highest rate shown to pass below every rate that did not."""
        ceiling = self.failed.rate if self.failed else math.inf
        passing = [t for t in self.trials if t.verdict == PASS and t.rate < ceiling]
        return passing[-1] if passing else None

    @property
    def failed(self) -> Trial | None:
        """The lowest rate not shown to pass (failed or undecided)."""
        return next((t for t in self.trials if t.verdict in (FAIL, UNDECIDED)), None)

    @property
    def ceiling(self) -> Trial | None:
        return next((t for t in self.trials if t.verdict == CEILING), None)

    @property
    def first(self) -> dict:
        return self.trials[0].point

    def status(self) -> str:
        if any(t.verdict == PENDING for t in self.trials):
            return RUNNING
        if self.ceiling and (not self.failed or self.ceiling.rate <= self.failed.rate):
            return ABOVE_CEILING
        if self.passed and self.failed and (narrow(self.passed.rate, self.failed.rate, self.spec.resolution)
                                            or self.untried(self.midpoint()) is None):
            return BRACKETED
        if not self.passed and self.trials[0].rate <= LOWEST_RATE:
            return FAILS_ALL
        if len(self.trials) >= self.spec.max_rates:
            return BUDGET
        return RUNNING

    def midpoint(self) -> float:
        return round_rate(math.sqrt(self.passed.rate * self.failed.rate))

    def untried(self, rate: float) -> float | None:
        return None if any(t.rate == rate for t in self.trials) else rate

    def next_rate(self) -> float | None:
        """The next rate to try: bisect a bracket, else double past the highest pass or halve below the lowest
        failure; None when the search is over or waits for launches."""
        if self.status() != RUNNING or any(t.verdict == PENDING for t in self.trials):
            return None
        low, high = self.passed, self.failed
        if low and high:
            return self.untried(self.midpoint())
        if high:
            return self.untried(max(LOWEST_RATE, round_rate(high.rate / 2)))
        return self.untried(round_rate(low.rate * 2))


def narrow(low: float, high: float, resolution: float) -> bool:
    return high <= low * (1 + resolution)


def look_confidence(spec: SearchSpec) -> float:
    """The confidence of each look at a rate: 95 % shared over its looks (one per launch from the third)."""
    looks = spec.max_launches - stats.MIN_LAUNCHES + 1
    return 1 - (1 - stats.CONFIDENCE) / looks


def judge(point: dict, launches: list[dict], spec: SearchSpec, target_ms: float) -> tuple[str, str]:
    """(verdict, why) of one rate from its counted launches."""
    rate = point["rate"]
    behind = [r for r in launches if SATURATED in (r.get("flags") or ())]
    if len(launches) >= stats.MIN_LAUNCHES and 2 * len(behind) >= len(launches):
        return CEILING, f"the load generator fell behind its own schedule in {len(behind)} of {len(launches)} launches"
    launches = [r for r in launches if r not in behind]      # a launch whose generator lagged once is left out
    n = len(launches)
    if n < stats.MIN_LAUNCHES:
        return PENDING, f"{n} of {stats.MIN_LAUNCHES} launches" + (f" ({len(behind)} left out: the generator "
                                                                    "fell behind)" if behind else "")
    confidence = look_confidence(spec)
    p99s, answered = (points.launch_values(launches, name) for name in ("latency_ms.p99", "rate_achieved"))
    if len(p99s) < n or len(answered) < n:
        return UNDECIDED, "a launch without its p99 or its answers per second"
    p99, achieved = stats.estimate(p99s, confidence), stats.estimate(answered, confidence)
    requests = sum(r.get("requests") or 0 for r in launches)
    errors = sum(r.get("error_total") or 0 for r in launches)
    shown = (f"p99 {points.fmt_interval(p99.as_figure(), 'ms')}, answered "
             f"{points.fmt_interval(achieved.as_figure(), 'req/s')}, {errors} errors in {requests}")
    floor = spec.achieved * rate
    growing = sum("unsustainable" in (r.get("flags") or ()) for r in launches)
    if not requests or errors > spec.errors * requests:
        return FAIL, f"errors over {spec.errors:.2%} of requests; {shown}"
    if p99.low is None or achieved.low is None:
        return UNDECIDED, f"no interval; {shown}"
    if p99.low > target_ms or achieved.high < floor:
        return FAIL, shown
    if growing == n:
        return FAIL, f"every launch unsustainable (its queue grew through the window); {shown}"
    if p99.high <= target_ms and not growing:
        return PASS, shown
    if growing:
        shown += f"; {growing} of {n} launches unsustainable"
    return (PENDING if n < spec.max_launches else UNDECIDED), shown


def searches(records: list[dict], experiment: Experiment) -> list[Search]:
    """Every search of a run, from its records (the last record of a cell run again wins), in the order its
    series first appear."""
    specs = {g.name: g.search for g in experiment.groups if g.search is not None}
    found: dict[str, Search] = {}
    by_cell = {r["cell_id"]: r for r in records if r.get("group") in specs and r.get("rate") is not None}
    for point in points.aggregate(list(by_cell.values())):
        spec = specs[point["group"]]
        target = spec.target_ms(point["delay_ms"])
        series = series_of(point["point_id"], point["rate"])
        launches = [by_cell[c] for c in point["cells"]]
        verdict, why = judge(point, launches, spec, target)
        tried = point["n"] + point["failed"] + len(point.get("disturbed_cells", []))
        if verdict == PENDING and tried >= spec.max_launches:     # launches failed or were disturbed: no more
            verdict, why = UNDECIDED, f"{point['n']} of {tried} launches counted ({why})"
        search = found.setdefault(series, Search(series, point["group"], spec, target))
        search.trials.append(Trial(point["rate"], verdict, why, point["n"], point))
    for search in found.values():
        search.trials.sort(key=lambda t: t.rate)
    return cap_at_generator(list(found.values()))


def generator_ceiling(found: list[Search]) -> tuple[float, str] | None:
    """(rate, series): the lowest of the highest rates the run's finished generator searches held on schedule;
    None while they run or without one."""
    held = [(s.passed.rate, s.series) for s in found if s.spec.generator and s.status() != RUNNING and s.passed]
    return min(held) if held else None


def cap_at_generator(found: list[Search]) -> list[Search]:
    """Every server search's rates above the generator's measured ceiling become CEILING: at those rates the
    generator was not shown to keep its schedule, so a pass or a failure there may be the generator's."""
    ceiling = generator_ceiling(found)
    if ceiling is None:
        return found
    rate, series = ceiling
    why = f"above the load generator's ceiling of {rate:g} req/s (search {series})"
    for search in found:
        if not search.spec.generator:
            search.trials = [replace(t, verdict=CEILING, why=f"{why}; {t.why}") if t.rate > rate else t
                             for t in search.trials]
    return found


def series_of(point_id: str, rate: float) -> str:
    """The search a point belongs to: its id without the offered rate (cellplan.Point.id ends in -q<rate>)."""
    suffix = f"-q{rate:g}"
    return point_id[:-len(suffix)] if point_id.endswith(suffix) else point_id


def next_launches(cells: list[CellPlan], records: list[dict], experiment: Experiment) -> list[CellPlan]:
    """What the searches launch next: one more launch of each rate still pending, else the first launches of
    each search's next rate; nothing once every search is over. Cells planned and not yet recorded come first
    (a resumed run runs them before asking)."""
    recorded = {r["cell_id"] for r in records}
    searching = [c for c in cells if c.group in search_groups(experiment)]
    if not searching or any(c.cell_id not in recorded for c in searching):
        return []
    planned, launched = launches_so_far(cells)
    first_launches = search_launches(experiment.run)
    wanted: list[CellPlan] = []
    found = searches(records, experiment)
    measuring = [s for s in found if s.spec.generator and s.status() == RUNNING]
    for search in measuring or found:     # the generator's ceiling first: no server search passes it meanwhile
        pending = [t for t in search.trials if t.verdict == PENDING]
        for trial in pending:
            pid = trial.point["point_id"]
            wanted.append(planned[pid].launch(launched[pid] + 1))
        rate = search.next_rate()
        if rate is not None:
            model = planned[search.trials[0].point["point_id"]]
            wanted += [at_rate(model, rate, repetition) for repetition in first_launches]
    if experiment.run.shuffle and wanted:      # drift spread over the searches, as rounds spread it
        random.Random(seed_of(experiment.run.shuffle_seed, len(cells))).shuffle(wanted)
    return wanted


def search_groups(experiment: Experiment) -> set[str]:
    return {g.name for g in experiment.groups if g.search is not None}


def at_rate(model: CellPlan, rate: float, repetition: int) -> CellPlan:
    """A launch of a search's cell at another rate (the same server, settings and endpoint)."""
    point_id = f"{series_of(model.point_id, model.rate)}-q{rate:g}"
    return replace(model, rate=rate, point_id=point_id, repetition=repetition,
                   cell_id=cell_id_of(point_id, repetition), index=0)


def cost(trial: Trial, launches: list[dict]) -> dict:
    """What a request cost at a rate, each figure with its interval over the launches: ms of the server's CPU a
    request (its process tree's CPU over the answers per second), peak RSS, threads, database connections."""
    def per_request(r):
        cpu, rps = r.get("cpu_percent"), r.get("rps")
        return cpu * 10 / rps if isinstance(cpu, (int, float)) and rps else None
    figures = {"cpu_ms_per_request": points.figure_of(points.launch_values(launches, per_request)),
               "rss_peak_mb": trial.point["figures"].get("rss_peak_mb"),
               "threads_peak": trial.point["figures"].get("threads_peak"),
               "db_connections_peak": points.figure_of(points.launch_values(launches, "db_pool_active_peak"))}
    return {name: figure for name, figure in figures.items() if figure}


def outcome(search: Search, records: list[dict]) -> dict:
    """A search's answer as capacity.json keeps it: the bracket, how the search ended, the cost at the rate that
    passed, and every rate tried with its verdict."""
    by_cell = {r["cell_id"]: r for r in records}
    passed, failed, ceiling = search.passed, search.failed, search.ceiling
    first = search.first
    return {
        "series": search.series, "group": search.group, "server": first.get("server"),
        "setting": first.get("setting"), "endpoint": first.get("endpoint"), "delay_ms": first.get("delay_ms"),
        "concurrency": first.get("concurrency"), "parallel_limit": first.get("parallel_limit"),
        "predicted_rps": predicted(first), "target_p99_ms": search.target_ms, "status": search.status(),
        "passed_rps": passed.rate if passed else None, "failed_rps": failed.rate if failed else None,
        "failed_verdict": failed.verdict if failed else None,
        "shown_to_fail_rps": next((t.rate for t in search.trials if t.verdict == FAIL), None),
        "ceiling_rps": ceiling.rate if ceiling else None, "resolution": search.spec.resolution,
        "generator": search.spec.generator,
        "cost": cost(passed, [by_cell[c] for c in passed.point["cells"]]) if passed else {},
        "passed_p99_ms": passed.point["figures"].get("latency_ms.p99") if passed else None,
        "trials": [{"rate": t.rate, "verdict": t.verdict, "why": t.why, "n": t.n, "point_id": t.point["point_id"],
                    "cells": t.point["cells"]} for t in search.trials],
    }


def predicted(point: dict) -> float | None:
    """The rate the server's parallel limit allows (Little's law: limit / delay); None where waiting holds
    nothing."""
    limit, delay = point.get("parallel_limit"), point.get("delay_ms")
    return limit * 1000 / delay if limit and delay else None


def outcomes(records: list[dict], experiment: Experiment) -> list[dict]:
    return [outcome(search, records) for search in searches(records, experiment)]


def sentence(out: dict) -> str:
    """One line: "tomcat maxThreads=20 /delay/sync 200 ms: p99 <= 300 ms up to 94.5-99.2 req/s (CPU 0.41 ms a
    request)"."""
    where = f"{out['setting']} {out['endpoint']}" + (f" {out['delay_ms']} ms" if out["delay_ms"] else "")
    target = f"p99 <= {out['target_p99_ms']:g} ms"
    status, low, high = out["status"], out["passed_rps"], out["failed_rps"]
    if out.get("generator"):
        return f"{where}: the load generator's ceiling, {generator_words(out)}"
    if status == ABOVE_CEILING:
        held = f", held at {low:g} req/s" if low else ""
        text = f"{target}: capacity above the generator's ceiling of {out['ceiling_rps']:g} req/s{held}"
    elif low is None and high is None:
        text = f"{target}: no rate decided yet ({status})"
    elif low is None:
        text = f"{target} not shown at any rate tried (down to {high:g} req/s: {status})"
    elif high is None:
        text = f"{target} holds at {low:g} req/s, the highest tried ({status})"
    elif out.get("failed_verdict") == UNDECIDED:
        text = f"{target} up to {low:g}-{high:g} req/s ({high:g} undecided" + \
               ("" if status == BRACKETED else f"; {status}") + ")"
    else:
        text = f"{target} up to {low:g}-{high:g} req/s" + ("" if status == BRACKETED else f" ({status})")
    cpu = out["cost"].get("cpu_ms_per_request")
    if cpu:
        text += f" (CPU {points.fmt_interval(cpu, 'ms')} a request)"
    return f"{where}: {text}"


def generator_words(out: dict) -> str:
    """What a generator search found: the most it was shown to send on schedule, and where that stopped."""
    low, high, ceiling = out["passed_rps"], out["failed_rps"], out["ceiling_rps"]
    if not low:
        return f"not shown at any rate tried ({out['status']})"
    stop = (f"it fell behind its schedule at {ceiling:g}" if ceiling and (not high or ceiling <= high) else
            f"p99 over {out['target_p99_ms']:g} ms from {high:g}" if high else "the highest rate tried")
    return f"sends on schedule up to {low:g} req/s ({stop}): no server search counts a rate above it"


def summary(found: list[dict]) -> str:
    return "\n".join(["capacity:"] + [f"  {sentence(out)}" for out in found]) if found else ""
