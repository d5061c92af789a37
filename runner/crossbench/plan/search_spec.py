"""A capacity search as an experiment file states it: a group with rates = "search" and a `search` table.

    [[group]]
    name = "capacity"
    kind = "open_loop"
    endpoint = { tomcat = "/delay/sync", tornado = "/delay/async" }
    concurrency = [1000]          # the most requests the generator may hold in flight
    delays_ms = [200]
    rates = "search"
    search = { p99_ms = 300, resolution = 0.05, max_rates = 10, max_launches = 5 }

What holds the target (crossbench.decide.capacity decides it): p99 at or under p99_ms (default P99_DELAYS x the delay),
errors at most `errors` of requests, answers at least `achieved` of the offered rate, the generator on schedule.
The search starts at `start_rate` (default: the server's predicted limit, its parallel limit / delay), brackets
by doubling or halving, then bisects until the bracket is narrower than `resolution` of its lower rate, at most
`max_rates` rates tried. A rate gets MIN_LAUNCHES launches, then one more at a time while its interval straddles
the target, at most `max_launches`, then it is undecided.

Once a search has its answer, `confirm_s` (seconds, default none) launches the highest rate it showed to hold once
more with a window that long, as Nighthawk's testing stage: the answer says whether the long window held too.

A search with `generator = true` measures the load generator's own ceiling instead of a server's capacity: its
server must answer far faster than the generator can send (nginx's /hello), so the highest rate it holds is the
most the generator (on its cores, or on every load host of --hosts together) was shown to send on schedule. It runs
before the other searches go past their first rate, and no rate above it counts for them (crossbench.decide.capacity).
"""

from __future__ import annotations

from dataclasses import dataclass

SEARCH_RATES = "search"
P99_DELAYS = 1.5  # the default target: p99 within 1.5 x the delay the endpoint holds
KEYS = {
    "p99_ms",
    "resolution",
    "start_rate",
    "max_rates",
    "max_launches",
    "errors",
    "achieved",
    "generator",
    "confirm_s",
}


class SearchSpecError(ValueError):
    """A search table that cannot be searched (refused before any cell runs)."""


@dataclass(frozen=True)
class SearchSpec:
    p99_ms: float | None = None  # None: P99_DELAYS x the delay
    resolution: float = 0.05
    start_rate: float | None = None  # None: the server's predicted limit
    max_rates: int = 10
    max_launches: int = 5
    errors: float = 0.001  # errors at most this share of requests (0.1 %)
    achieved: float = 0.99  # answers at least this share of the offered rate
    generator: bool = False  # this search measures the load generator's own ceiling (below)
    confirm_s: float = 0.0  # a last launch this long at the rate found (0: none; below)

    def target_ms(self, delay_ms: int) -> float | None:
        return self.p99_ms if self.p99_ms is not None else (P99_DELAYS * delay_ms if delay_ms else None)


def round_rate(rate: float) -> float:
    """A rate as the search offers it: three significant figures (a point id and its cells name it)."""
    return float(f"{rate:.3g}")


def parse(table, where: str) -> SearchSpec:
    """A group's `search` table, checked; SearchSpecError saying which key is wrong."""
    if table is None:
        table = {}
    if not isinstance(table, dict):
        raise SearchSpecError(f"{where}: search is a table, as search = {{ p99_ms = 300 }}, not {table!r}")
    unknown = set(table) - KEYS
    if unknown:
        raise SearchSpecError(f"{where}: unknown search keys {sorted(unknown)}; known: {sorted(KEYS)}")
    checks = {
        "p99_ms": (0, None, "a latency in ms above zero"),
        "start_rate": (0, None, "requests per second above zero"),
        "resolution": (0, 1, "a share of the rate between 0 and 1, e.g. 0.05"),
        "errors": (0, 1, "a share of requests between 0 and 1, e.g. 0.001"),
        "achieved": (0, 1, "a share of the offered rate between 0 and 1, e.g. 0.99"),
        "confirm_s": (0, 600, "a window in seconds above zero, at most 600, e.g. 60"),
    }
    for key, (low, high, what) in checks.items():
        value = table.get(key)
        if value is None:
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or value <= low
            or (high is not None and value > high)
        ):
            raise SearchSpecError(f"{where}: search.{key} is {what}, not {value!r}")
    if not isinstance(table.get("generator", False), bool):
        raise SearchSpecError(f"{where}: search.generator is true or false, not {table['generator']!r}")
    for key, least in (("max_rates", 2), ("max_launches", 3)):
        value = table.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
            raise SearchSpecError(f"{where}: search.{key} is a whole number of at least {least}, not {value!r}")
    return SearchSpec(**table)


def check_target(spec: SearchSpec, delays_ms, where: str) -> None:
    """A target at or below the delay can never hold; an endpoint without a delay needs p99_ms given."""
    for delay in delays_ms:
        target = spec.target_ms(delay)
        if target is None:
            raise SearchSpecError(f"{where}: search.p99_ms is needed for an endpoint without a delay")
        if delay and target <= delay:
            raise SearchSpecError(
                f"{where}: search.p99_ms {target:g} ms is at or below the delay of {delay} ms: no rate can hold it"
            )
