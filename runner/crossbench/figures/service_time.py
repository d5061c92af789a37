"""The seed's ratios for the user's own requests (--path). A contract endpoint's ratios divide by the delay it was
asked for; a user's endpoint has none, so its ratios divide by the latency the same endpoint had at C=1 in the same
run, on the same server and setting: its service time, what one request costs with nothing queued beside it.
efficiency_ratio is (C / rps) / service time and latency_ratio is mean latency / service time, both 1.0 while
requests wait for nothing but their own work, as a delayed endpoint's are while its pool has room.

They are computed here, after the run, from the records of its C=1 cells (the mean of their mean latencies), and
not by the cells themselves: a run's rounds are shuffled and resumable, so no cell may rely on another having run
first. Records of contract endpoints and records that already carry a ratio pass through unchanged. Once a run's
points are made, the C>1 points' ratio intervals carry the service time's own (`carried`)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

from crossbench import endpoints
from crossbench.endpoints import SERVICE_CONCURRENCY

FIELD = "service_time_ms"  # the C=1 mean latency the ratios are taken against, in each such record
# A point's identity but these: its load (concurrency), its id, and how long it was measured (a longer launch of a
# disturbed point is the same series)
KEY_LEFT_OUT = ("concurrency", "point_id", "duration_s", "warmup_s")


def series_key(record: dict, identity: tuple[str, ...]) -> tuple:
    """What a record shares with its C=1 cells: its point's identity but KEY_LEFT_OUT."""
    return tuple(repr(record.get(name)) for name in identity if name not in KEY_LEFT_OUT)


def is_user_record(record: dict) -> bool:
    return endpoints.is_user(record.get("endpoint")) and not record.get("delay_ms")


def service_times(
    records: list[dict], identity: tuple[str, ...], counted: Callable[[list[dict]], list[dict]]
) -> dict[tuple, float]:
    """Per series of a user endpoint: the mean of its counted C=1 launches' mean latencies, in ms."""
    by_series: dict[tuple, list[dict]] = {}
    for record in records:
        if is_user_record(record) and record.get("concurrency") == SERVICE_CONCURRENCY:
            by_series.setdefault(series_key(record, identity), []).append(record)
    found = {}
    for key, launches in by_series.items():
        means = [
            m
            for r in counted(launches)
            if isinstance(m := (r.get("latency_ms") or {}).get("mean"), (int, float)) and m > 0
        ]
        if means:
            found[key] = statistics.fmean(means)
    return found


def with_ratios(
    records: list[dict], identity: tuple[str, ...], counted: Callable[[list[dict]], list[dict]]
) -> list[dict]:
    """The records, each of a user endpoint given its series' service time and the two ratios against it (a new
    dict; the others as they were). A C=1 launch's FIELD is its own mean latency (its point's figure then has the
    launches' interval), the others' the series' mean. A series without a usable C=1 launch keeps no ratios."""
    service = service_times(records, identity, counted)
    out = []
    for record in records:
        base_ms = service.get(series_key(record, identity)) if is_user_record(record) else None
        if base_ms is None or record.get("efficiency_ratio") is not None:
            out.append(record)
            continue
        mean = (record.get("latency_ms") or {}).get("mean")
        rps, concurrency = record.get("rps") or 0, record.get("concurrency") or 0
        # a C=1 launch carries its own mean, so the C=1 point's service time has its interval over launches
        own = concurrency == SERVICE_CONCURRENCY and isinstance(mean, (int, float)) and mean > 0
        out.append(
            {
                **record,
                FIELD: mean if own else base_ms,
                "efficiency_ratio": (concurrency / rps) / (base_ms / 1000) if rps > 0 else None,
                "latency_ratio": mean / base_ms if isinstance(mean, (int, float)) else None,
            }
        )
    return out


RATIOS = ("efficiency_ratio", "latency_ratio")
CARRIED = "service_time_carried"  # a ratio figure's key: whether its interval holds its service time's


def carried(points: list[dict], identity: tuple[str, ...]) -> list[dict]:
    """The points, each C>1 point of a user endpoint with its ratios' intervals widened by its series' service
    time's (the C=1 point's FIELD figure): the launches of a C>1 point all divide by that one estimate, so their
    spread alone leaves its uncertainty out. The two are independent, so their half-widths on logs add in
    quadrature. A ratio whose series' service time has no interval (under three launches at C=1) keeps its own
    and says so (CARRIED false)."""
    service = {
        series_key(p, identity): p["figures"].get(FIELD)
        for p in points
        if is_user_record(p) and p.get("concurrency") == SERVICE_CONCURRENCY
    }
    out = []
    for p in points:
        base = service.get(series_key(p, identity)) if is_user_record(p) else None
        if not base or p.get("concurrency") == SERVICE_CONCURRENCY:
            out.append(p)
            continue
        figures = {
            name: widened(figure, base) if name in RATIOS and figure else figure
            for name, figure in p["figures"].items()
        }
        out.append({**p, "figures": figures})
    return out


def widened(ratio: dict, service: dict) -> dict:
    """A ratio figure with its interval on logs widened by the service time figure's relative half-width."""
    if ratio.get("ci95_low") is None or service.get("ci95_low") is None:
        return {**ratio, CARRIED: False}
    value, low, high = ratio["value"], ratio["ci95_low"], ratio["ci95_high"]
    own = max(math.log(high / value), math.log(value / low))
    theirs = max(math.log(service["ci95_high"] / service["value"]), math.log(service["value"] / service["ci95_low"]))
    half = math.hypot(own, theirs)
    low, high = value * math.exp(-half), value * math.exp(half)
    return {
        **ratio,
        "ci95_low": low,
        "ci95_high": high,
        "half_width_rel": max(high - value, value - low) / abs(value),
        CARRIED: True,
    }
