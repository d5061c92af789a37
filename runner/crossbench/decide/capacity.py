"""Capacity at a latency target, found by search (groups with rates = "search", search_spec.py): per server
setting, the highest offered rate shown to hold the target and the lowest shown not to.

Decided from the records alone, like the precision target, so Ctrl-C and --resume continue a search where it
stopped: a rate tried is a point (its id ends in -q<rate>), its launches are cells.

Each launch is judged on its own requests (launch_holds: p99 over the requests its window fired at or under the
target, `achieved` of them answered, errors within `errors`, a queue that did not grow: flag unsustainable). A rate
passes once three launches or more all held and fails once as many all failed; launches that disagree ask for
more, up to max_launches, and then the rate is undecided: near the capacity, it fails nothing (the earlier rule,
an interval over the launches' p99s, read such rates as failures and averaged p99s that are not a p99 over the
requests). The capacity is estimated from every launch of the search (capacity_fit: where holding becomes as
likely as not), its interval widened to the machine's run-to-run spread (capacity_spread). A launch whose generator
fell behind its own schedule (loadgen_saturated) measured the generator, not the server: alone it is left out and
launched again (a p99 lag of 5.1 ms once in 3 launches at 800 req/s, oha at 14 % of its core, measured), and when
half a rate's launches or more fell behind, the search stops there and says the capacity is above the
generator's ceiling, not a bracket. A group searched with `generator = true` (search_spec.py) measures that
ceiling first, against a server far faster than the generator; every other search's rates above it are CEILING.

The search: from the start rate, double until a rate fails (or halve until one passes), then bisect (geometric
midpoint) between the highest rate that passed and the lowest that failed, an undecided rate between them
splitting the bracket in two steps (the widest bisected first), until every step is within `resolution` (or the
run-to-run spread, where that is wider) or max_rates rates were tried. The answer is that bracket and the
estimate, with what each request cost at the rate that passed: CPU per request, RSS, threads and database
connections, each with its interval.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

from crossbench import stats
from crossbench.decide import capacity_fit, capacity_spread
from crossbench.figures import points
from crossbench.plan.cellplan import CONFIRMATION, CellPlan, launches_so_far
from crossbench.plan.experiment_expand import round_seed as seed_of
from crossbench.plan.experiment_expand import search_launches
from crossbench.plan.experiment_schema import Experiment
from crossbench.plan.search_spec import SearchSpec, round_rate
from crossbench.record.record import cell_id_of

PASS, FAIL, UNDECIDED, PENDING, CEILING = "pass", "fail", "undecided", "pending", "ceiling"
BRACKETED, BUDGET, ABOVE_CEILING, FAILS_ALL, RUNNING, POOL_LIMIT = \
    "bracketed", "budget reached", "above the generator's ceiling", "fails at every rate tried", "running", \
    "holds at the most its pool carries"
LOWEST_RATE = 1.0           # a search that fails here stops halving
FILE = "capacity.json"
SATURATED = points.GENERATOR_CEILING
OPENED_IN_WINDOW = "connections_in_window"
# A plateau, not a capacity (plateau()): p99 at the first failing rate under this many times the first passing one's,
# with the server's cores under this percent busy and every offered request answered
PLATEAU_RISE = 1.25
PLATEAU_CPU = 80.0
# A long launch that did not hold at the rate found is tried again a resolution step lower, so many times in all: a
# pool at exactly threads / delay is critically loaded, held for 4 s and not for 60 (Tomcat's 20 threads at 100 req/s)
MAX_CONFIRMATIONS = 3


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
    spread: capacity_spread.Spread
    trials: list[Trial] = field(default_factory=list)
    confirmations: list[Trial] = field(default_factory=list)    # the long last launches (spec.confirm_s), rate down

    @property
    def confirmation(self) -> Trial | None:
        """The long launch that held, else the lowest one tried."""
        held = [t for t in self.confirmations if t.verdict == PASS]
        return held[0] if held else (self.confirmations[-1] if self.confirmations else None)

    def confirmation_rate(self) -> float | None:
        """The rate of the next long launch, from a search that asks for them and found a rate shown to hold: that
        rate first, then one resolution step (the group's) below each that did not hold, MAX_CONFIRMATIONS in
        all; None once one held, the last did not run, or none is wanted."""
        if not self.spec.confirm_s or self.spec.generator or self.passed is None or \
                self.status() not in (BRACKETED, POOL_LIMIT, BUDGET):
            return None
        if not self.confirmations:
            return self.passed.rate
        last = self.confirmations[-1]
        if last.verdict != FAIL or len(self.confirmations) >= MAX_CONFIRMATIONS:
            return None
        lower = round_rate(last.rate / (1 + self.spec.resolution))
        return lower if lower < last.rate else None

    @property
    def resolution(self) -> float:
        """How narrow the bracket gets: the group's resolution, or the run-to-run spread where that is wider
        (a narrower bracket would not be found again by another run)."""
        return max(self.spec.resolution, math.exp(self.spread.run_sd) - 1)

    @property
    def passed(self) -> Trial | None:
        """The highest rate shown to hold below every rate shown to fail."""
        ceiling = self.failed.rate if self.failed else math.inf
        passing = [t for t in self.trials if t.verdict == PASS and t.rate < ceiling]
        return passing[-1] if passing else None

    @property
    def failed(self) -> Trial | None:
        """The lowest rate shown to fail (an undecided rate failed nothing: its launches disagreed)."""
        return next((t for t in self.trials if t.verdict == FAIL), None)

    @property
    def ceiling(self) -> Trial | None:
        return next((t for t in self.trials if t.verdict == CEILING), None)

    @property
    def first(self) -> dict:
        return self.trials[0].point

    @property
    def top(self) -> float:
        """The highest rate tried under the generator's ceiling."""
        return max((t.rate for t in self.trials if t.verdict != CEILING), default=self.trials[0].rate)

    @property
    def pool_limit(self) -> float:
        """The highest rate its concurrency (the pool's most connections) carries within the target: Little's law,
        rounded down to a rate the search offers."""
        limit = self.first["concurrency"] * 1000 / self.target_ms
        rounded = round_rate(limit)
        return rounded if rounded <= limit else round_rate(rounded * 0.999)

    def status(self) -> str:
        if any(t.verdict == PENDING for t in self.trials):
            return RUNNING
        if self.ceiling and (not self.failed or self.ceiling.rate <= self.failed.rate):
            return ABOVE_CEILING
        if self.passed and self.failed and self.midpoint() is None:
            return BRACKETED
        if not self.passed and self.trials[0].rate <= LOWEST_RATE:
            return FAILS_ALL
        if self.passed and not self.failed and self.top >= self.pool_limit:
            return POOL_LIMIT
        if len(self.trials) >= self.spec.max_rates or self.proposal() is None:
            return BUDGET
        return RUNNING

    def midpoint(self) -> float | None:
        """The geometric middle of the widest step between the highest rate shown to hold and the lowest shown to
        fail, the undecided rates between them included (the capacity lies in one of those steps: each is
        narrowed); None once every step is within the resolution or its middle was tried."""
        inside = sorted({self.passed.rate, self.failed.rate} |
                        {t.rate for t in self.trials if self.passed.rate < t.rate < self.failed.rate})
        steps = sorted(zip(inside, inside[1:]), key=lambda step: step[1] / step[0], reverse=True)
        for low, high in steps:
            middle = round_rate(math.sqrt(low * high))
            if not narrow(low, high, self.resolution) and low < middle < high and self.untried(middle):
                return middle
        return None

    def untried(self, rate: float) -> float | None:
        return None if any(t.rate == rate for t in self.trials) else rate

    def proposal(self) -> float | None:
        """Bisect between the highest rate shown to hold and the lowest shown to fail; without a failure, double
        past the highest rate tried (up to the pool's limit); without a hold, halve below the lowest."""
        low, high = self.passed, self.failed
        if low and high:
            return self.midpoint()
        if low:
            return self.untried(min(round_rate(self.top * 2), self.pool_limit))
        return self.untried(max(LOWEST_RATE, round_rate(self.trials[0].rate / 2)))

    def next_rate(self) -> float | None:
        """The next rate to try; None when the search is over or waits for launches."""
        if self.status() != RUNNING or any(t.verdict == PENDING for t in self.trials):
            return None
        return self.proposal()


def narrow(low: float, high: float, resolution: float) -> bool:
    return high <= low * (1 + resolution)


def launch_holds(r: dict, rate: float, spec: SearchSpec, target_ms: float) -> str | None:
    """Why one launch did not hold its target, from its own requests; None when it held: p99 over the requests
    its window's schedule fired at or under the target, at least `achieved` of them answered, errors within
    `errors`, and its backlog not growing (flag unsustainable: latency rising through the window, or answers
    falling behind the offer)."""
    p99 = (r.get("latency_ms") or {}).get("p99")
    requests = r.get("requests") or 0
    if (r.get("error_total") or 0) > spec.errors * max(1, requests):
        return f"errors over {spec.errors:.2%} of requests"
    if not answered_offer(r, rate, spec):
        return f"answered {requests} of {rate * r['measured_s']:.0f} offered"
    if p99 is None or p99 > target_ms:
        return f"p99 {p99:.0f} ms" if p99 is not None else "no p99"
    if "unsustainable" in (r.get("flags") or ()):
        return "its queue grew through the window"
    return None


def answered_offer(r: dict, rate: float, spec: SearchSpec) -> bool:
    """At least `achieved` of the requests its window's schedule fired were answered (true without a window)."""
    return (r.get("requests") or 0) >= spec.achieved * rate * (r.get("measured_s") or 0)


def judge(point: dict, launches: list[dict], spec: SearchSpec, target_ms: float) -> tuple[str, str]:
    """(verdict, why) of one rate from its counted launches, each judged on its own requests (launch_holds): it
    passes once MIN_LAUNCHES launches or more all held, fails once as many all failed; launches that disagree ask
    for more, up to max_launches, then the rate is undecided (a rate near the capacity: the estimate uses it).
    A launch whose generator fell behind, or whose window opened connections its pool should have held, is left
    out and launched again."""
    rate = point["rate"]
    behind = [r for r in launches if SATURATED in (r.get("flags") or ())]
    if len(launches) >= stats.MIN_LAUNCHES and 2 * len(behind) >= len(launches):
        return CEILING, f"the load generator fell behind its own schedule in {len(behind)} of {len(launches)} launches"
    spoiled = [r for r in launches if r in behind or OPENED_IN_WINDOW in (r.get("flags") or ())]
    launches = [r for r in launches if r not in spoiled]
    n = len(launches)
    if n < stats.MIN_LAUNCHES:
        return PENDING, f"{n} of {stats.MIN_LAUNCHES} launches" + (f" ({len(spoiled)} left out: the generator "
                                                                    "fell behind or opened connections in its "
                                                                    "window)" if spoiled else "")
    reasons = [launch_holds(r, rate, spec, target_ms) for r in launches]
    held = sum(reason is None for reason in reasons)
    p99s = sorted(v for v in points.launch_values(launches, "latency_ms.p99"))
    shown = f"{held} of {n} launches held" + (f": p99 {p99s[0]:.0f}-{p99s[-1]:.0f} ms" if p99s else "")
    failing = sorted({reason for reason in reasons if reason and not reason.startswith("p99")})
    shown += f" ({'; '.join(failing)})" if failing else ""
    if held == n:
        return PASS, shown
    if held == 0:
        return FAIL, shown
    return (PENDING if n < spec.max_launches else UNDECIDED), shown


def searches(records: list[dict], experiment: Experiment, machine: str | None = None) -> list[Search]:
    """Every search of a run, from its records (the last record of a cell run again wins), in the order its
    series first appear; `machine` names where it ran (its run-to-run spread; default: this machine)."""
    specs = {g.name: g.search for g in experiment.groups if g.search is not None}
    spread = capacity_spread.for_machine(machine)
    found: dict[str, Search] = {}
    by_cell = {r["cell_id"]: r for r in records if r.get("group") in specs and r.get("rate") is not None}
    confirmations: dict[str, list[Trial]] = {}
    for point in points.aggregate(list(by_cell.values())):
        spec = specs[point["group"]]
        target = spec.target_ms(point["delay_ms"])
        series = series_of(point["point_id"], point["rate"])
        launches = [by_cell[c] for c in point["cells"]]
        if is_confirmation(point["point_id"]):
            confirmations.setdefault(series, []).append(confirmed(point, launches, spec, target))
            continue
        verdict, why = judge(point, launches, spec, target)
        tried = point["n"] + point["failed"] + len(point.get("disturbed_cells", []))
        if verdict == PENDING and tried >= spec.max_launches:     # launches failed or were disturbed: no more
            verdict, why = UNDECIDED, f"{point['n']} of {tried} launches counted ({why})"
        search = found.setdefault(series, Search(series, point["group"], spec, target, spread))
        search.trials.append(Trial(point["rate"], verdict, why, point["n"], point))
    for search in found.values():
        search.trials.sort(key=lambda t: t.rate)
        search.confirmations = sorted(confirmations.get(search.series, []), key=lambda t: -t.rate)
    return cap_at_generator(list(found.values()))


def confirmed(point: dict, launches: list[dict], spec: SearchSpec, target_ms: float) -> Trial:
    """The confirmation launch's verdict: held (PASS) or not (FAIL), on its own requests."""
    if not launches:
        return Trial(point["rate"], UNDECIDED, "the launch did not run", 0, point)
    [launch] = launches[-1:]
    why = launch_holds(launch, point["rate"], spec, target_ms)
    p99 = (launch.get("latency_ms") or {}).get("p99")
    shown = f"p99 {p99:.0f} ms over {launch.get('requests')} requests in {launch.get('measured_s'):g} s" \
        if p99 is not None and launch.get("measured_s") else "no p99"
    return Trial(point["rate"], PASS if why is None else FAIL, shown + (f" ({why})" if why and not
                                                                        why.startswith("p99") else ""), 1, point)


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


CONFIRM = CONFIRMATION.removesuffix("-q")      # "-confirm": what series_of strips


def series_of(point_id: str, rate: float) -> str:
    """The search a point belongs to: its id without the offered rate (cellplan.Point.id ends in -q<rate>) and a
    confirmation's mark."""
    suffix = f"-q{rate:g}"
    point_id = point_id[:-len(suffix)] if point_id.endswith(suffix) else point_id
    return point_id[:-len(CONFIRM)] if point_id.endswith(CONFIRM) else point_id


def is_confirmation(point_id: str) -> bool:
    return CONFIRMATION in point_id


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
        rate, confirm = search.next_rate(), search.confirmation_rate()
        model = planned[search.trials[0].point["point_id"]]
        if rate is not None:
            wanted += [at_rate(model, rate, repetition) for repetition in first_launches]
        elif confirm is not None:
            wanted.append(confirmation_launch(model, confirm, search.spec.confirm_s))
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


def confirmation_launch(model: CellPlan, rate: float, window_s: float) -> CellPlan:
    """A long last launch of the search at `rate`: a point of its own (-confirm-q<rate>), window_s long."""
    point_id = f"{series_of(model.point_id, model.rate)}{CONFIRM}-q{rate:g}"
    return replace(model, rate=rate, point_id=point_id, repetition=1, cell_id=cell_id_of(point_id, 1), index=0,
                   duration_s=window_s)


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


def counted_launches(trial: Trial, by_cell: dict[str, dict]) -> list[dict]:
    """A rate's launches that count for its verdict (not left out for the generator or the connections)."""
    launches = [by_cell[c] for c in trial.point["cells"] if c in by_cell]
    return [r for r in launches if not {SATURATED, OPENED_IN_WINDOW} & set(r.get("flags") or ())]


def held_launches(search: Search, by_cell: dict[str, dict]) -> list[tuple[float, bool]]:
    """(rate, held) for every counted launch of the search below the generator's ceiling."""
    return [(t.rate, launch_holds(r, t.rate, search.spec, search.target_ms) is None)
            for t in search.trials if t.verdict != CEILING for r in counted_launches(t, by_cell)]


def with_spread(fitted: capacity_fit.Estimate, spread: capacity_spread.Spread) -> dict:
    """The estimate with its interval widened to the run-to-run spread (ci95_*), the fit's own kept (fit_ci95_*)."""
    low, high = capacity_spread.widened(fitted.rate, fitted.low, fitted.high, spread)
    return {**fitted.as_dict(), "fit_ci95_low": round(fitted.low, 3), "fit_ci95_high": round(fitted.high, 3),
            "ci95_low": round(low, 3), "ci95_high": round(high, 3)}


def median_p99(trial: Trial, by_cell: dict[str, dict]) -> float | None:
    values = sorted(points.launch_values(counted_launches(trial, by_cell), "latency_ms.p99"))
    return values[len(values) // 2] if values else None


def plateau(search: Search, by_cell: dict[str, dict]) -> dict | None:
    """A target set by a tail that does not grow with the rate, not by a capacity: at the lowest rate shown to
    fail every launch answered its offer, the server's CPU stayed under PLATEAU_CPU of its cores, and p99 was less
    than PLATEAU_RISE times the one at the lowest rate shown to hold. None otherwise."""
    failed = search.failed
    passed = next((t for t in search.trials if t.verdict == PASS), None)
    if not (passed and failed and passed.rate < failed.rate):
        return None
    at_fail = counted_launches(failed, by_cell)
    cores = [len(r.get("server_cpus") or ()) or 1 for r in at_fail]
    cpu = [r["cpu_percent"] / c for r, c in zip(at_fail, cores) if isinstance(r.get("cpu_percent"), (int, float))]
    answered = all(answered_offer(r, failed.rate, search.spec) for r in at_fail)
    low, high = median_p99(passed, by_cell), median_p99(failed, by_cell)
    if not (at_fail and cpu and answered and low and high) or max(cpu) >= PLATEAU_CPU or high >= PLATEAU_RISE * low:
        return None
    flat = [v for t in search.trials if t.verdict in (PASS, FAIL, UNDECIDED) and t.rate <= failed.rate
            for v in [median_p99(t, by_cell)] if v is not None]
    return {"p99_ms": [round(min(flat), 1), round(max(flat), 1)], "from_rps": min(t.rate for t in search.trials),
            "to_rps": failed.rate, "rise": round(high / low, 3), "cpu_percent_max": round(max(cpu), 1)}


def outcome(search: Search, records: list[dict]) -> dict:
    """A search's answer as capacity.json keeps it: the bracket, how the search ended, the capacity estimated
    from every launch (capacity_fit), a plateau where the tail set the target, the cost at the rate that passed,
    and every rate tried with its verdict and how many of its launches held."""
    by_cell = {r["cell_id"]: r for r in records}
    passed, failed, ceiling = search.passed, search.failed, search.ceiling
    first = search.first
    fitted = capacity_fit.estimate(held_launches(search, by_cell))
    return {
        "series": search.series, "group": search.group, "server": first.get("server"),
        "setting": first.get("setting"), "endpoint": first.get("endpoint"), "delay_ms": first.get("delay_ms"),
        "concurrency": first.get("concurrency"), "parallel_limit": first.get("parallel_limit"),
        "keepalive": first.get("keepalive"),
        "predicted_rps": predicted(first), "target_p99_ms": search.target_ms, "status": search.status(),
        "passed_rps": passed.rate if passed else None, "failed_rps": failed.rate if failed else None,
        "failed_verdict": failed.verdict if failed else None,
        "shown_to_fail_rps": next((t.rate for t in search.trials if t.verdict == FAIL), None),
        "ceiling_rps": ceiling.rate if ceiling else None, "resolution": search.resolution,
        "generator": search.spec.generator,
        "cost": cost(passed, [by_cell[c] for c in passed.point["cells"]]) if passed else {},
        "passed_p99_ms": passed.point["figures"].get("latency_ms.p99") if passed else None,
        "estimate": with_spread(fitted, search.spread) if fitted else None,
        "confirmation": confirmation_dict(search.confirmation) if search.confirmation else None,
        "confirmations": [confirmation_dict(t) for t in search.confirmations], "confirm_s": search.spec.confirm_s,
        "spread": search.spread.as_dict(),
        "plateau": plateau(search, by_cell),
        "top_rps": search.top,
        "trials": [{"rate": t.rate, "verdict": t.verdict, "why": t.why, "n": t.n, "point_id": t.point["point_id"],
                    "held": sum(launch_holds(r, t.rate, search.spec, search.target_ms) is None
                                for r in counted_launches(t, by_cell)),
                    "cells": t.point["cells"]} for t in search.trials],
    }


def confirmation_dict(trial: Trial) -> dict:
    return {"rate": trial.rate, "held": trial.verdict == PASS, "why": trial.why, "cells": trial.point["cells"]}


def confirmed_rps(out: dict) -> float | None:
    """The rate a search's long launch held (capacity.json's outcome); None when none held or none ran."""
    check = out.get("confirmation")
    return check["rate"] if check and check["held"] else None


def held_rps(out: dict) -> float | None:
    """The rate to read as held: the long launch's where one held, else the highest the short launches held."""
    return confirmed_rps(out) or out.get("passed_rps")


def predicted(point: dict) -> float | None:
    """The rate the server's parallel limit allows (Little's law: limit / delay); None where waiting holds
    nothing."""
    limit, delay = point.get("parallel_limit"), point.get("delay_ms")
    return limit * 1000 / delay if limit and delay else None


def outcomes(records: list[dict], experiment: Experiment, machine: str | None = None) -> list[dict]:
    return [outcome(search, records) for search in searches(records, experiment, machine)]


def label(out: dict) -> str:
    """A search's setting as findings name it: its server setting, and its clients' connections when they are
    not kept alive (the same server is searched both ways)."""
    return out["setting"] + (" (a new connection per request)" if out.get("keepalive") is False else "")


def sentence(out: dict) -> str:
    """One line: "tomcat maxThreads=20 /delay/sync 200 ms: p99 <= 300 ms up to 100-119 req/s, capacity 109 [100,
    119] req/s (CPU 2.1 ms a request)"."""
    where = f"{label(out)} {out['endpoint']}" + (f" {out['delay_ms']} ms" if out["delay_ms"] else "")
    if out.get("generator"):
        return f"{where}: the load generator's ceiling, {generator_words(out)}"
    text = bracket_words(out)
    cpu = out["cost"].get("cpu_ms_per_request")
    if cpu:
        text += f" (CPU {points.fmt_interval(cpu, 'ms')} a request)"
    return f"{where}: {text}"


def bracket_words(out: dict) -> str:
    """What the search showed: a bracket with the capacity estimated from every launch, a plateau named as one,
    or how far it got."""
    target = f"p99 <= {out['target_p99_ms']:g} ms"
    status, low, high = out["status"], out["passed_rps"], out["failed_rps"]
    ended = "" if status == BRACKETED else f" ({status})"
    if status == ABOVE_CEILING:
        held = f", held at {low:g} req/s" if low else ""
        return f"{target}: capacity above the generator's ceiling of {out['ceiling_rps']:g} req/s{held}"
    if low is None and high is None:
        return f"{target}: no rate decided yet ({status})"
    if low is None:
        return f"{target} not shown at any rate tried (down to {high:g} req/s: {status})"
    if high is None:
        top = out.get("top_rps") or low
        return (f"{target} holds at least up to {low:g} req/s" +
                (f"; no failure shown up to {top:g}" if top > low else ", the highest tried") +
                estimate_words(out) + ended + confirmation_words(out))
    flat = out.get("plateau")
    if flat:
        return (f"{target} is set by a tail that does not grow with the rate, not by a capacity: p99 "
                f"{flat['p99_ms'][0]:.0f}-{flat['p99_ms'][1]:.0f} ms from {flat['from_rps']:g} to {flat['to_rps']:g} "
                f"req/s, every offered request answered, CPU at most {flat['cpu_percent_max']:.0f} % (crossed "
                f"between {low:g} and {high:g} req/s){ended}")
    return f"{target} up to {low:g}-{high:g} req/s" + estimate_words(out) + ended + confirmation_words(out)


def estimate_words(out: dict) -> str:
    """The capacity estimated from every launch, with its interval and the spread in it."""
    fitted = out.get("estimate")
    if not fitted:
        return ""
    return f", capacity {points.fmt_interval(fitted, 'req/s')} ({fitted['launches']} launches, {spread_words(out)})"


def confirmation_words(out: dict) -> str:
    """The long launch that decided, and the ones above it that did not hold: "; confirmed by a long launch at 95
    req/s: p99 210 ms over 5700 requests in 60 s (not at 100 req/s: p99 392 ms over 6000 requests in 60 s)"."""
    check = out.get("confirmation")
    if not check:
        return ""
    above = [c for c in out.get("confirmations") or () if c["rate"] > check["rate"]]
    missed = "; ".join(f"{c['rate']:g} req/s: {c['why']}" for c in above)
    missed = f" (not at {missed})" if missed else ""
    return f"; {'confirmed' if check['held'] else 'NOT confirmed'} by a long launch at {check['rate']:g} req/s: " \
           f"{check['why']}{missed}"


def spread_words(out: dict) -> str:
    spread = out.get("spread")
    if not spread:
        return "no run-to-run spread"
    return capacity_spread.Spread(**spread).words()


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
