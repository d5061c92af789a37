"""How long a held window must be, checked through the window's own cut (loadgen/held.py) on simulated pools with
known truths: N workers each held d seconds answer N / d a second, and rps x mean latency is C (Little's law).

A pool that serves its queue in order answers every connection in the same C / N rounds, and a held window reads
both truths at any length. A pool whose freed worker serves the same connection's next request first (as Tomcat's
keep-alive threads do, ahead of the queue) gives some connections quick turns and others slow ones; a window of a
few round trips then holds one turn of each too many or too few, and its figures move by up to round trip /
window. metrics.window_for_bias sizes the window at 50 slowest round trips for 2 %; metrics.held_truth_broken
flags the window that broke a truth (window_too_short)."""

from __future__ import annotations

import heapq
import random
from collections import deque

import pytest

from crossbench.loadgen.held import cut
from crossbench.loadgen.openloop import Request
from crossbench.record import metrics

CLIENTS, POOL, DELAY_S = 50, 20, 0.2  # maxthreads-quick's C=50 on maxThreads=20 at 200 ms
SLOWEST_S = -(-CLIENTS // POOL) * DELAY_S  # 3 rounds of the delay: 0.6 s
CEILING = POOL / DELAY_S


def pool_rows(run_s: float, ahead: float, seed: int) -> list[Request]:
    """Every request of a closed loop of CLIENTS connections on POOL workers, each request holding one DELAY_S;
    a freed worker takes the same connection's next request first with probability `ahead`, else the queue's
    first (in order)."""
    rng = random.Random(seed)
    queue, done, rows = deque(range(CLIENTS)), [], []
    sent = {c: 0.0 for c in range(CLIENTS)}
    free = POOL

    def start(now: float) -> None:
        nonlocal free
        while free and queue:
            free -= 1
            heapq.heappush(done, (now + DELAY_S, queue.popleft()))

    start(0.0)
    while done and (now := done[0][0]) <= run_s:
        _, c = heapq.heappop(done)
        rows.append(Request(sent[c], sent[c], now, (now - sent[c]) * 1000, 200, 1))
        sent[c] = now
        if rng.random() < ahead:
            heapq.heappush(done, (now + DELAY_S, c))
        else:
            free += 1
            queue.append(c)
            start(now)
    return rows


def held_figures(window_s: float, ahead: float, seed: int) -> tuple[float, float]:
    """(rps, mean latency in ms) of a held window of window_s cut as the closed-loop driver plans it."""
    held_s, tail_s = 2.5 * SLOWEST_S, 2.0 * SLOWEST_S
    stopped = held_s + window_s + tail_s
    window = cut(
        pool_rows(stopped + 5.0, ahead, seed),
        concurrency=CLIENTS,
        held_s=held_s,
        window_s=window_s,
        load_stopped_s=stopped,
    )
    return window.rate, 1000 * sum(r.end_s - r.start_s for r in window.sent) / len(window.sent)


def broken(window_s: float, rps: float, mean_ms: float) -> bool:
    return metrics.held_truth_broken(
        rps=rps,
        ceiling=CEILING,
        window_s=window_s,
        concurrency=CLIENTS,
        in_flight_=metrics.in_flight(rps, mean_ms),
        mean_latency_ms=mean_ms,
    )


def worst_error(window_s: float, ahead: float) -> float:
    """The largest departure of rps / ceiling or rps x mean / C from 1 over eight simulated launches."""
    errors = []
    for seed in range(8):
        rps, mean_ms = held_figures(window_s, ahead, seed)
        errors += [abs(rps / CEILING - 1), abs(rps * mean_ms / 1000 / CLIENTS - 1)]
    return max(errors)


@pytest.mark.parametrize("window_s", [3.0, 6.0, 30.0])
def test_a_pool_that_serves_in_order_reads_its_truths_in_a_window_of_any_length(window_s):
    assert worst_error(window_s, ahead=0.0) < 1e-6


def test_an_unfair_pool_needs_fifty_slowest_round_trips_for_its_truths_within_two_percent():
    """Five round trips (maxthreads-quick's 3 s) read more than 5 % off, and held_truth_broken flags most of
    those launches; window_for_bias's 30 s read within 2 % and flags none."""
    short = [held_figures(3.0, 0.8, seed) for seed in range(8)]
    assert worst_error(3.0, ahead=0.8) > 0.05
    assert sum(broken(3.0, *figures) for figures in short) >= 4
    long_s = metrics.window_for_bias(SLOWEST_S)
    assert long_s == pytest.approx(30.0)
    assert worst_error(long_s, ahead=0.8) < metrics.MAX_WINDOW_BIAS
    assert not any(broken(long_s, *held_figures(long_s, 0.8, seed)) for seed in range(8))
