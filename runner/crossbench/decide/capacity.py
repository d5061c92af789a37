"""Capacity at a latency target, found by search (groups with rates = "search", search_spec.py): per server
setting, the rates tried and their verdicts, and what to launch next. The answer it leads to is capacity_answer.py,
in words capacity_words.py.

Decided from the records alone, like the precision target, so Ctrl-C and --resume continue a search where it
stopped: a rate tried is a point (its id ends in -q<rate>), its launches are cells.

Each launch is judged on its own requests (launch_holds: p99 over the requests its window fired at or under the
target, `achieved` of them answered, errors within `errors`, a queue that did not grow: flag unsustainable). A rate
passes once three launches or more all held and fails once as many all failed; launches that disagree ask for
more, up to max_launches, and then the rate is undecided: near the capacity, it fails nothing. A launch whose
generator fell behind its own schedule (loadgen_saturated) measured the generator, not the server: alone it is left
out and launched again (a lag of a few ms once in a few launches is the generator's), and when half a rate's
launches or more fell behind, the search stops there and says the capacity is above the generator's ceiling, not a
bracket. A group searched with `generator = true` (search_spec.py) measures that ceiling first, against a server far
faster than the generator; every other search's rates above it are CEILING.

The search: from the start rate, double until a rate fails (or halve until one passes), then bisect (geometric
midpoint) between the highest rate that passed and the lowest that failed, an undecided rate between them
splitting the bracket in two steps (the widest bisected first), until every step is within `resolution` or
max_rates rates were tried. With `confirm_s` it ends with a long launch at the rate that passed, a resolution step
lower while one does not hold (MAX_CONFIRMATIONS in all); a search that launched one had ended its bisection.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

from crossbench import stats
from crossbench.figures import points
from crossbench.plan.cellplan import CONFIRMATION, CellPlan, launches_so_far
from crossbench.plan.experiment_expand import round_seed as seed_of
from crossbench.plan.experiment_expand import search_launches
from crossbench.plan.experiment_schema import Experiment
from crossbench.plan.search_spec import SearchSpec, round_rate
from crossbench.record.record import cell_id_of

PASS, FAIL, UNDECIDED, PENDING, CEILING = "pass", "fail", "undecided", "pending", "ceiling"
BRACKETED, BUDGET, ABOVE_CEILING, FAILS_ALL, RUNNING, POOL_LIMIT = (
    "bracketed",
    "budget reached",
    "above the generator's ceiling",
    "fails at every rate tried",
    "running",
    "holds at the most its pool carries",
)
LOWEST_RATE = 1.0  # a search that fails here stops halving
FILE = "capacity.json"
SATURATED = points.GENERATOR_CEILING
OPENED_IN_WINDOW = "connections_in_window"
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
    trials: list[Trial] = field(default_factory=list)
    confirmations: list[Trial] = field(default_factory=list)  # the long last launches (spec.confirm_s), rate down
    generator_rps: float | None = None  # the run's generator ceiling (cap_at_generator), where it measured one

    @property
    def confirmation(self) -> Trial | None:
        """The long launch that held, else the lowest one tried."""
        held = [t for t in self.confirmations if t.verdict == PASS]
        return held[0] if held else (self.confirmations[-1] if self.confirmations else None)

    def confirmation_rate(self) -> float | None:
        """The rate of the next long launch, from a search that asks for them and found a rate shown to hold: that
        rate first, then one resolution step (the group's) below each that did not hold, MAX_CONFIRMATIONS in
        all; None once one held, the last did not run, or none is wanted."""
        if (
            not self.spec.confirm_s
            or self.spec.generator
            or self.passed is None
            or self.status() not in (BRACKETED, POOL_LIMIT, BUDGET)
        ):
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
        """How narrow the bracket gets: the group's resolution (how far the held rate moves between sittings is
        said beside the answer, capacity_spread.py, not searched to)."""
        return self.spec.resolution

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
        """How the search stands or ended. One that launched a long launch had ended its bisection (it is planned
        only then), so the records say it ended whatever resolution reads them."""
        if any(t.verdict == PENDING for t in self.trials):
            return RUNNING
        over = bool(self.confirmations)
        if self.ceiling and (not self.failed or self.ceiling.rate <= self.failed.rate):
            return ABOVE_CEILING
        if self.passed and self.failed and (over or self.midpoint() is None):
            return BRACKETED
        if not self.passed and self.trials[0].rate <= LOWEST_RATE:
            return FAILS_ALL
        if self.passed and not self.failed and self.top >= self.pool_limit:
            return POOL_LIMIT
        if over or len(self.trials) >= self.spec.max_rates or self.proposal() is None:
            return BUDGET
        return RUNNING

    def midpoint(self) -> float | None:
        """The geometric middle of the widest step between the highest rate shown to hold and the lowest shown to
        fail, the undecided rates between them included (the capacity lies in one of those steps: each is
        narrowed); None once every step is within the resolution or its middle was tried."""
        inside = sorted(
            {self.passed.rate, self.failed.rate}
            | {t.rate for t in self.trials if self.passed.rate < t.rate < self.failed.rate}
        )
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
        return PENDING, f"{n} of {stats.MIN_LAUNCHES} launches" + (
            f" ({len(spoiled)} left out: the generator fell behind or opened connections in its window)"
            if spoiled
            else ""
        )
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


def searches(records: list[dict], experiment: Experiment) -> list[Search]:
    """Every search of a run, from its records (the last record of a cell run again wins), in the order its
    series first appear."""
    specs = {g.name: g.search for g in experiment.groups if g.search is not None}
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
        if verdict == PENDING and tried >= spec.max_launches:  # launches failed or were disturbed: no more
            verdict, why = UNDECIDED, f"{point['n']} of {tried} launches counted ({why})"
        search = found.setdefault(series, Search(series, point["group"], spec, target))
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
    shown = (
        f"p99 {p99:.0f} ms over {launch.get('requests')} requests in {launch.get('measured_s'):g} s"
        if p99 is not None and launch.get("measured_s")
        else "no p99"
    )
    return Trial(
        point["rate"],
        PASS if why is None else FAIL,
        shown + (f" ({why})" if why and not why.startswith("p99") else ""),
        1,
        point,
    )


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
            search.generator_rps = rate
            search.trials = [
                replace(t, verdict=CEILING, why=f"{why}; {t.why}") if t.rate > rate else t for t in search.trials
            ]
    return found


CONFIRM = CONFIRMATION.removesuffix("-q")  # "-confirm": what series_of strips


def series_of(point_id: str, rate: float) -> str:
    """The search a point belongs to: its id without the offered rate (cellplan.Point.id ends in -q<rate>) and a
    confirmation's mark."""
    suffix = f"-q{rate:g}"
    point_id = point_id[: -len(suffix)] if point_id.endswith(suffix) else point_id
    return point_id[: -len(CONFIRM)] if point_id.endswith(CONFIRM) else point_id


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
    for search in measuring or found:  # the generator's ceiling first: no server search passes it meanwhile
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
    if experiment.run.shuffle and wanted:  # drift spread over the searches, as rounds spread it
        random.Random(seed_of(experiment.run.shuffle_seed, len(cells))).shuffle(wanted)
    return wanted


def search_groups(experiment: Experiment) -> set[str]:
    return {g.name for g in experiment.groups if g.search is not None}


def at_rate(model: CellPlan, rate: float, repetition: int) -> CellPlan:
    """A launch of a search's cell at another rate (the same server, settings and endpoint)."""
    point_id = f"{series_of(model.point_id, model.rate)}-q{rate:g}"
    return replace(
        model, rate=rate, point_id=point_id, repetition=repetition, cell_id=cell_id_of(point_id, repetition), index=0
    )


def confirmation_launch(model: CellPlan, rate: float, window_s: float) -> CellPlan:
    """A long last launch of the search at `rate`: a point of its own (-confirm-q<rate>), window_s long."""
    point_id = f"{series_of(model.point_id, model.rate)}{CONFIRM}-q{rate:g}"
    return replace(
        model, rate=rate, point_id=point_id, repetition=1, cell_id=cell_id_of(point_id, 1), index=0, duration_s=window_s
    )
