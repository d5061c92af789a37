"""The one definition of a percentile in the suite (nearest rank), used wherever the runner computes latency
figures from individual samples itself (the probe, the holder, the open-loop generators' per-request rows)."""
from __future__ import annotations

import math

LATENCY_PERCENTILES = {"p50": 50, "p90": 90, "p99": 99}


def nearest_rank(sorted_values: list[float], percent: float) -> float | None:
    """The smallest value with at least percent% of the values at or below it (no interpolation): on 1..100,
    p50 is 50 and p99 is 99."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(percent / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def latency_summary(latencies_ms, extra_percentiles: dict[str, float] | None = None) -> dict[str, float | None]:
    """mean, p50, p90, p99, max (and any `extra_percentiles`, e.g. {"p999": 99.9}); None each when empty."""
    values = sorted(latencies_ms)
    wanted = {**LATENCY_PERCENTILES, **(extra_percentiles or {})}
    if not values:
        return {"mean": None, **{k: None for k in wanted}, "max": None}
    return {"mean": sum(values) / len(values), **{k: nearest_rank(values, p) for k, p in wanted.items()},
            "max": values[-1]}
