"""The samples wrk's requests had: its coordinated-omission correction undone, exactly.

wrk 4.x, once the run is over and before it prints its statistics or hands the histogram to a script's done(),
runs stats_correct (src/stats.c) with interval = duration_us / (requests / connections), both integer divisions
(src/wrk.c): for every recorded sample of n us with n >= 2 x interval it adds one synthetic sample at each of
n - interval, n - 2 x interval, ... while that value is above the interval. It reads each bucket before any bucket
above it has added to it, so the synthetic samples never beget more. A corrected bucket m therefore holds its own
samples plus one for every sample at m + k x interval (k >= 1) when m > interval, and walking down from the top
bucket, each bucket's own count is its count less the own counts above it in its residue class (mod interval).

Measured on a quick run (Tomcat, static mix, C=1): 8,590 requests, a corrected histogram of 11,250 samples, mean
0.904 ms (rps x mean = 1.94 in flight on one connection); recovered: 8,590 samples, mean 0.462 ms.
"""

from __future__ import annotations

import re
from pathlib import Path

Histogram = list[tuple[int, int]]


class Unrecoverable(ValueError):
    """The histogram does not come from stats_correct over the counts wrk reported (a bucket would go below zero,
    or the samples recovered are not the requests'): its latency figures cannot be trusted."""


def interval_us(duration_us: int, requests: int, connections: int) -> int | None:
    """wrk's expected interval (src/wrk.c), or None when it made no correction (fewer requests than connections)."""
    if connections < 1:
        raise Unrecoverable(f"wrk ran on {connections} connections: no interval to undo")
    per_connection = requests // connections
    return duration_us // per_connection if per_connection > 0 else None


def undone(histogram: Histogram, interval: int | None) -> Histogram:
    """The histogram before stats_correct added its samples; `histogram` is wrk's, sorted (value_us, count) pairs.
    Unrecoverable when a bucket holds fewer samples than the correction must have added to it."""
    if interval is None:
        return list(histogram)
    if interval <= 0:
        raise Unrecoverable(f"wrk's interval was {interval} us: stats_correct cannot have run")
    above: dict[int, int] = {}  # residue class -> own samples above the bucket being read
    own: Histogram = []
    for value, count in reversed(histogram):
        residue = value % interval
        added = above.get(residue, 0) if value > interval else 0
        mine = count - added
        if mine < 0:
            raise Unrecoverable(
                f"bucket {value} us holds {count} samples, fewer than the {added} wrk's correction "
                f"(interval {interval} us) added to it"
            )
        above[residue] = above.get(residue, 0) + mine
        if mine:
            own.append((value, mine))
    own.reverse()
    return own


def check_count(samples: int, *, requests: int, timeouts: int, pipeline: int, connections: int) -> None:
    """The samples recovered are the requests': one per response (per batch of `pipeline` when pipelined), less
    those wrk left out as slower than --timeout (counted in its timeout errors, with the connections it found
    stuck). A pipelined connection's last batch may be cut short by the window's end."""
    most = -(-requests // pipeline)
    least = max(0, (requests - timeouts) // pipeline - (connections if pipeline > 1 else 0))
    if not least <= samples <= most:
        raise Unrecoverable(
            f"{samples} samples recovered for {requests} requests ({timeouts} timeouts, pipeline "
            f"{pipeline}): expected {least} to {most}"
        )


CONNECTIONS_LINE = re.compile(r"^\s*\d+ threads and (\d+) connections", re.MULTILINE)


def connections_from_stdout(stdout: Path) -> int | None:
    """wrk's own account of its connections ('  2 threads and 4 connections'), for a wrk.json written by a script
    that did not record them."""
    try:
        match = CONNECTIONS_LINE.search(stdout.read_text(errors="replace"))
    except OSError:
        return None
    return int(match.group(1)) if match else None
