"""The figures a cell is judged by: the seed's efficiency ratio, its direct counterpart, and the flags that
say why a cell is not to be trusted. Pure functions, so every rule is tested on its own."""

from __future__ import annotations

import math
from dataclasses import dataclass

from crossbench.flags import WINDOW_TOO_SHORT

# A cell is flagged when ...
RATIO_DISAGREEMENT = 0.10  # ... efficiency ratio and latency ratio differ by more than this (relative)
MIN_ROUND_TRIPS = 3.0  # ... connections completed fewer requests each than this on average
MIN_HELD_TRIPS = 1.0  # ... in a held window, whose edges cost no round trip: one answer each, or
MIN_HELD_ANSWERS = 30  # this many in all (a queue of 5 rounds of 10 s answers 600 of 1000 in 30 s)
LOADGEN_SATURATED_PCT = 90.0  # ... the load generator used more than this share of each core it had
# ... rps x mean latency passes concurrency x pipeline by more than this (relative): a window of its own generator
# process has no request straddling its edges, so a connection's latencies sum to at most the window, and a held
# window credits a straddling request by its share of life inside it (loadgen/held.py); the slack is for the 1 us
# buckets, timed-out answers (counted in rps, not in the latency) and a held window's sampling of latencies
IN_FLIGHT_SLACK = 0.02
# A held window's figures are held to what the cell's mechanics fix (held_truth_broken), to this share: the
# precision the suite states those truths in (C / pool rounds of the delay past the pool). A held window's edges
# cost no round trip, but connections move in waves, so a window may still hold one round trip of each
# connection too many or too few: a window of W seconds over round trips of D moves its figures by up to D / W,
# and one of at least D / MAX_WINDOW_BIAS keeps that under it (window_for_bias).
MAX_WINDOW_BIAS = 0.02
# Little's law counts time inside requests; a generator also spends some between an answer and the next request
# on its connection. The allowance per request, well above a generator's turnaround on a loopback connection,
# keeps a 5 ms delay from reading as a short window while it is a small share of a delay past 100 ms.
TURNAROUND_ALLOWANCE_MS = 1.0


@dataclass(frozen=True)
class Ratios:
    efficiency_ratio: float | None  # (C / rps) / delay: the seed's figure, from the window's count
    rps_steady: float | None  # C / mean latency (Little's law): free of the window-edge bias
    latency_ratio: float | None  # mean latency / delay: the same idea measured directly; it is also
    # (C / rps_steady) / delay, so no second "steady ratio" is kept


def ratios(
    concurrency: int, delay_ms: int, rps: float, mean_latency_ms: float | None, loadgen_saturated: bool = False
) -> Ratios:
    """In a closed loop every connection always has one request outstanding, so C = rps x mean latency
    (Little's law). The window's own count (rps) loses the requests still in flight when it ends: with a
    20 s window and a 1 s delay that is up to 5%; the latency mean does not have that edge. Little's law
    counts only time inside a request: a saturated load generator also spends time between them, so then
    there is no rps_steady."""
    delay_s = delay_ms / 1000
    rps_steady = concurrency / (mean_latency_ms / 1000) if mean_latency_ms and not loadgen_saturated else None
    if delay_s <= 0:
        return Ratios(None, rps_steady, None)
    efficiency = (concurrency / rps) / delay_s if rps > 0 else None
    return Ratios(efficiency, rps_steady, latency_ratio(mean_latency_ms, delay_ms) if mean_latency_ms else None)


def latency_ratio(mean_latency_ms: float | None, delay_ms: int) -> float | None:
    """Mean latency / delay: 1.0 when every request waited only its own delay (closed and open loop alike)."""
    if mean_latency_ms is None or delay_ms <= 0:
        return None
    return (mean_latency_ms / 1000) / (delay_ms / 1000)


def in_flight(rps: float, mean_latency_ms: float | None) -> float | None:
    """Requests in flight on average over the window, by Little's law: throughput x mean latency."""
    return rps * mean_latency_ms / 1000 if mean_latency_ms is not None and rps > 0 else None


def in_flight_over_concurrency(
    in_flight_: float | None, concurrency: int, pipeline: int = 1, rounding: float = 0.0
) -> bool:
    """A closed loop holds at most concurrency x pipeline requests at once: more on average means the latency
    figures hold samples no request had (wrk's own correction did, measured up to 2.36 x C) or the count is off.
    `rounding`: requests in flight the mean's rounding alone can add (rps x half its step)."""
    return in_flight_ is not None and in_flight_ > concurrency * pipeline * (1 + IN_FLIGHT_SLACK) + rounding


def loadgen_saturated(loadgen_cpu_percent: float | None, loadgen_cores: int) -> bool:
    return loadgen_cpu_percent is not None and loadgen_cpu_percent >= LOADGEN_SATURATED_PCT * max(loadgen_cores, 1)


def edge_allowance(window_s: float | None, mean_latency_ms: float | None) -> float:
    """How far the edge of a window of its own (not a held one) alone lifts the efficiency ratio over the latency
    ratio: each connection loses at most the round trip in flight when the window closes, so of T = window / mean
    latency round trips it counts at least T - 1 (a 10 s window at 1 s counts 9 of 10 when the connections started
    together: 1.11). 1 when either is unknown."""
    if not window_s or not mean_latency_ms:
        return 1.0
    trips = window_s / (mean_latency_ms / 1000)
    return trips / (trips - 1) if trips > 1 else math.inf


def ceiling_rps(parallel_limit: int | None, delay_ms: int) -> float | None:
    """The most a server can answer per second when each request holds one of `parallel_limit` workers for its
    whole delay (Tomcat's maxThreads on /delay/sync: maxThreads / delay); None when waiting holds nothing."""
    return parallel_limit * 1000 / delay_ms if parallel_limit and delay_ms > 0 else None


def over_ceiling(rps: float, ceiling: float | None, window_s: float | None) -> bool:
    """Throughput above the pool's ceiling by more than MAX_WINDOW_BIAS and one answer over the window (the
    count's own step): a pool cannot answer faster than its workers are freed, so more is the window's edges
    crediting a wave twice. The credit of the requests straddling the edges moves the count by a few answers
    whatever the window's length, so within the share the truths are stated in it is not told from them."""
    return ceiling is not None and bool(window_s) and rps > ceiling * (1 + MAX_WINDOW_BIAS) + 1 / window_s


def off_concurrency(
    in_flight_: float | None, concurrency: int, mean_latency_ms: float | None, pipeline: int = 1, rounding: float = 0.0
) -> bool:
    """rps x mean latency off C x pipeline by more than MAX_WINDOW_BIAS, the generator's turnaround
    (TURNAROUND_ALLOWANCE_MS, below C only) and the mean's rounding allowed: in a closed loop every connection
    always has a request outstanding, so a held window whose edges cost nothing reads C unless its round trips did
    not average out (its latency sampled the quick turns more than the slow ones, or the slow more)."""
    if in_flight_ is None or not mean_latency_ms:
        return False
    full = concurrency * pipeline
    below = full * (1 - MAX_WINDOW_BIAS - TURNAROUND_ALLOWANCE_MS / mean_latency_ms) - rounding
    return in_flight_ < below or in_flight_ > full * (1 + MAX_WINDOW_BIAS) + rounding


def held_truth_broken(
    *,
    rps: float,
    ceiling: float | None,
    window_s: float | None,
    in_flight_: float | None,
    concurrency: int,
    mean_latency_ms: float | None,
    pipeline: int = 1,
    rounding: float = 0.0,
) -> bool:
    """A held window whose figures break what the cell's mechanics fix (over_ceiling, off_concurrency): flag
    WINDOW_TOO_SHORT, the window too short for its round trips (window_for_bias says how long would do)."""
    return over_ceiling(rps, ceiling, window_s) or off_concurrency(
        in_flight_, concurrency, mean_latency_ms, pipeline, rounding
    )


def window_for_bias(round_trip_s: float, bias: float = MAX_WINDOW_BIAS) -> float:
    """The shortest window whose figures one round trip of each connection too many or too few moves by at most
    `bias`: round trip / bias (50 round trips at 2 %)."""
    return round_trip_s / bias


def flags(
    *,
    concurrency: int,
    requests: int,
    errors: dict[str, int],
    ratios_: Ratios,
    window_s: float | None = None,
    mean_latency_ms: float | None = None,
    in_flight_: float | None = None,
    pipeline: int = 1,
    rounding: float = 0.0,
    held: bool = False,
    rps: float = 0.0,
    ceiling: float | None = None,
) -> list[str]:
    """The closed-loop flags (the cell adds loadgen_saturated for every kind). ratio_disagreement: the two
    ratios differ by more than RATIO_DISAGREEMENT beyond what the window's edge explains (edge_allowance: only a
    window of its own loses the round trip in flight at its end; a held window's edges cost none);
    in_flight_over_concurrency: Little's law broken (in_flight_over_concurrency); window_too_short: a held
    window's rps above its pool's `ceiling` or its rps x mean off C (held_truth_broken)."""
    found = []
    if in_flight_over_concurrency(in_flight_, concurrency, pipeline, rounding):
        found.append("in_flight_over_concurrency")
    if errors.get("timeout", 0):
        found.append("timeouts")
    if sum(n for kind, n in errors.items() if kind != "timeout"):
        found.append("errors")
    if few_completions(requests, concurrency, held):
        found.append("few_completions")
    a, b = ratios_.efficiency_ratio, ratios_.latency_ratio
    edge = 1.0 if held else edge_allowance(window_s, mean_latency_ms)
    if a and b and (a / b > (1 + RATIO_DISAGREEMENT) * edge or b / a > 1 + RATIO_DISAGREEMENT):
        found.append("ratio_disagreement")
    # a saturated generator spends time between requests that Little's law does not count (rps_steady null)
    steady = in_flight_ if ratios_.rps_steady is not None else None
    if held and held_truth_broken(
        rps=rps,
        ceiling=ceiling,
        window_s=window_s,
        in_flight_=steady,
        concurrency=concurrency,
        mean_latency_ms=mean_latency_ms,
        pipeline=pipeline,
        rounding=rounding,
    ):
        found.append(WINDOW_TOO_SHORT)
    return found


def few_completions(requests: int, concurrency: int, held: bool) -> bool:
    """Too few answers to trust the window: a window of its own needs MIN_ROUND_TRIPS a connection (its edges cut
    a round trip each); a held window one a connection or MIN_HELD_ANSWERS in all, whichever is fewer (its edges
    cost nothing, and a queue slower than the window answers only part of its connections in it)."""
    if requests == 0:
        return True
    if held:
        return requests < min(concurrency * MIN_HELD_TRIPS, MIN_HELD_ANSWERS)
    return requests / concurrency < MIN_ROUND_TRIPS


def expected_worst_latency_s(*, delay_ms: int, concurrency: int, blocking: bool, workers: int | None) -> float:
    """The slowest answer a healthy server can give in this cell, for the load generator's timeout.

    A blocking endpoint served by `workers` threads (or processes) answers C requests in ceil(C / workers)
    rounds of the delay; a non-blocking one, or a virtual-thread executor (workers None), in one round.
    """
    delay_s = delay_ms / 1000
    rounds = -(-concurrency // workers) if blocking and workers else 1
    return rounds * delay_s


def loadgen_timeout_s(worst_latency_s: float) -> float:
    """Generous above the worst case: a timeout in a healthy cell would be a lie about the server."""
    return max(10.0, 1.5 * worst_latency_s + 5.0)
