"""ab's start-up artifact, measured and taken out (pure functions over ab's own outputs).

Debian's ab 2.3 sends its first request alone and opens the other C-1 connections only once that answer is
back (seen with strace): a fixed-count run pays one extra whole round of the delay. With `-n 200 -c 40` and a
1 s non-blocking delay that is 6 rounds instead of 5, so ab reports about 33 req/s where the server did 40.
The figure without it: the requests after the lone one, over the time after it:

    rps = (n - 1) / (time taken - lone request's time)

ab's -g file has whole-second start times, too coarse to find the lone request by its start; its time is the
fastest request's instead (it met an idle server: no later request can be faster by more than noise).
"""

from __future__ import annotations

import re

METHOD = (
    "(complete - 1) / (ab's time taken - the lone first request's time); that time estimated as the "
    "fastest per-request total in ab's -g file (the lone request meets an idle server)"
)


def startup_free(rows: list[tuple[float, float]], taken_s: float, concurrency: int) -> dict | None:
    """rows: (start_epoch_s, total_ms) per request, as crossbench.loadgen.ab.per_request gives them."""
    if len(rows) < 2 or taken_s <= 0:
        return None
    lone_ms = min(ms for _, ms in rows)
    rest_s = taken_s - lone_ms / 1000
    if rest_s <= 0:
        return None
    rps = (len(rows) - 1) / rest_s
    return {
        "rps": rps,
        "time_per_request_ms": concurrency * 1000 / rps,
        "lone_request_ms": lone_ms,
        "time_s": rest_s,
        "requests": len(rows) - 1,
        "method": METHOD,
    }


def starts_per_second(rows: list[tuple[float, float]], seconds: int = 10) -> list[int]:
    """How many requests ab started in each whole second of its run, the first `seconds` of them: with a
    delay of a second or more the lone first request shows as a 1 before the rounds of C."""
    if not rows:
        return []
    first = int(min(start for start, _ in rows))
    counts = [0] * seconds
    for start, _ in rows:
        if int(start) - first < seconds:
            counts[int(start) - first] += 1
    return counts


def ab_reported(stdout: str) -> dict:
    """ab's own headline figures, as printed (the seed's table quotes these)."""

    def number(pattern):
        match = re.search(pattern, stdout, re.MULTILINE)
        return float(match.group(1)) if match else None

    return {
        "rps": number(r"^Requests per second:\s+([\d.]+)"),
        "time_per_request_ms": number(r"^Time per request:\s+([\d.]+) \[ms\] \(mean\)$"),
        "time_per_request_across_ms": number(
            r"^Time per request:\s+([\d.]+) \[ms\] \(mean, across all concurrent requests\)"
        ),
        "time_taken_s": number(r"^Time taken for tests:\s+([\d.]+) seconds"),
    }


def expected_rounds(requests: int, concurrency: int, *, blocking_workers: int | None) -> dict:
    """Rounds of the delay a fixed-count run needs, with and without ab's lone first request.

    blocking_workers: how many requests the server runs at once on a blocking endpoint (Tornado sync: 1);
    None for a non-blocking one (all C at once)."""
    parallel = min(concurrency, blocking_workers) if blocking_workers else concurrency
    ideal = -(-requests // parallel)
    with_lone = 1 + -(-(requests - 1) // parallel)
    return {"ideal": ideal, "with_lone_first_request": with_lone}
