"""The queueing arithmetic that sizes a pool for the load a user asks maxThreads advice for (crossbench.advice_load:
arrival rate, the time a request holds a thread, optionally a p99 target). Pure functions, no run needed.

- Little's law: requests holding a thread at once, on average = arrival rate x holding time.
- Headroom: with arrivals at random (Poisson) and threads never short, the number of requests holding a thread
  at a moment is Poisson distributed with that mean, whatever the holding times' distribution (M/G/infinity).
  The pool is sized so that it is full (an arrival would wait) at most FULL_SHARE of the time.
- A p99 target: Erlang C (M/M/N) gives the share of requests that wait for a thread and how long; exponential
  holding times wait longer than fixed ones, so the pool it asks for is on the safe side."""

from __future__ import annotations

import math

FULL_SHARE = 0.001  # the pool may be full 0.1 % of the time
P99_SHARE = 0.01  # a p99 target: at most 1 % of requests may wait past the budget


def poisson_tail(mean: float, n: int) -> float:
    """P(X >= n) for X Poisson with this mean. The terms are started in logs at n - 1 or n and summed away from
    it (the lower sum below the mean, the upper one above), so a mean of thousands neither underflows e^-mean nor
    loses the tail to rounding."""
    if n <= 0:
        return 1.0
    if mean <= 0:
        return 0.0
    if n <= mean:  # 1 - P(X <= n - 1), summed down from k = n - 1
        k, term, total = n - 1, math.exp(-mean + (n - 1) * math.log(mean) - math.lgamma(n)), 0.0
        while term > 1e-17 * total:
            total += term
            if k == 0:
                break
            term *= k / mean
            k -= 1
        return max(0.0, 1.0 - total)
    k, term, total = n, math.exp(-mean + n * math.log(mean) - math.lgamma(n + 1)), 0.0
    while term > 1e-17 * total:  # P(X >= n), summed up from k = n
        total += term
        k += 1
        term *= mean / k
    return min(1.0, total)


def pool_for_headroom(busy: float, full_share: float = FULL_SHARE) -> int:
    """The smallest pool N with P(Poisson(busy) >= N) <= full_share: full at most that share of the time."""
    n = max(1, math.floor(busy))
    while poisson_tail(busy, n) > full_share:
        n += 1
    return n


def erlang_c(n: int, load: float) -> float:
    """The share of arrivals that wait for one of n threads (M/M/n, offered load in threads); 1 when n <= load."""
    if n <= load:
        return 1.0
    blocked = 1.0  # Erlang B, by the recurrence B(k) = A B(k-1) / (k + A B(k-1))
    for k in range(1, n + 1):
        blocked = load * blocked / (k + load * blocked)
    return n * blocked / (n - load * (1 - blocked))


def wait_beyond(n: int, load: float, hold_ms: float, budget_ms: float) -> float:
    """P(a request waits longer than budget_ms for a thread) in M/M/n: C(n, A) exp(-(n - A) t / hold)."""
    if n <= load:
        return 1.0
    return erlang_c(n, load) * math.exp(-(n - load) * budget_ms / hold_ms)


def pool_for_p99(busy: float, hold_ms: float, budget_ms: float, share: float = P99_SHARE) -> int | None:
    """The smallest pool with at most `share` of requests waiting past budget_ms; None when the budget is
    negative (the target is missed before any wait)."""
    if budget_ms < 0:
        return None
    n = max(1, math.floor(busy) + 1)
    while wait_beyond(n, busy, hold_ms, budget_ms) > share:
        n += 1
    return n


def queue_within_target(pool: int, hold_ms: float, budget_ms: float) -> int:
    """Requests that can wait in Tomcat's queue and still be answered within the budget: the pool hands out
    `pool` threads every holding time, so a queue of pool x budget / hold drains in time."""
    return max(0, math.floor(pool * budget_ms / hold_ms))


def rate_within_p99(pool: int, hold_ms: float, p99_ms: float, share: float = P99_SHARE) -> float | None:
    """The capacity Erlang C predicts for a pool: the highest Poisson arrival rate (req/s) at which at most
    `share` of requests wait past p99_ms - hold_ms for one of `pool` threads each held hold_ms (M/M/n, so on the
    safe side of fixed holding times). None when the target is below the holding time."""
    budget = p99_ms - hold_ms
    if budget < 0 or pool < 1 or hold_ms <= 0:
        return None
    low, high = 0.0, float(pool)  # offered load in threads: wait_beyond is 1 from `pool` on
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if wait_beyond(pool, mid, hold_ms, budget) <= share else (low, mid)
    return low * 1000 / hold_ms
