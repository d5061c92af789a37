"""Several load generators' results as one cell, merged exactly: counts summed, latency from the union of their
samples (wrk: their full histograms added bucket by bucket; open-loop tools: their per-request rows
concatenated), never from averaged percentiles. Each generator's own figures stay in `extra["per_host"]`."""
from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

from . import openloop
from .base import LoadgenError, LoadResult

WRK_PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0}


def wrk_percentile(histogram: list[tuple[int, int]], p: float) -> int | None:
    """wrk's own rule (stats_percentile in stats.c): the first value whose running count reaches
    round(p / 100 * n + 0.5); histogram = sorted (value_us, count) pairs."""
    total = sum(count for _, count in histogram)
    if not total:
        return None
    rank = round(p / 100 * total + 0.5)
    seen = 0
    for value, count in histogram:
        seen += count
        if seen >= rank:
            return value
    return histogram[-1][0]


def added(histograms: list[list[tuple[int, int]]]) -> list[tuple[int, int]]:
    """Several wrk histograms (1 us buckets) as one."""
    counts: dict[int, int] = {}
    for histogram in histograms:
        for value, count in histogram:
            counts[value] = counts.get(value, 0) + count
    return sorted(counts.items())


def wrk_latency_ms(histogram: list[tuple[int, int]]) -> dict[str, float | None]:
    total = sum(count for _, count in histogram)
    if not total:
        return {"mean": None, **{k: None for k in WRK_PERCENTILES}, "max": None}
    figures = {k: wrk_percentile(histogram, p) / 1000 for k, p in WRK_PERCENTILES.items()}
    return {"mean": sum(v * c for v, c in histogram) / total / 1000, **figures, "max": histogram[-1][0] / 1000}


def histogram_of(result: LoadResult) -> list[tuple[int, int]]:
    histogram = (result.extra.get("latency_us") or {}).get("histogram")
    if histogram is None:
        raise LoadgenError("wrk: its JSON has no histogram (runner/lua/report.lua older than the merge)")
    return [(int(v), int(c)) for v, c in histogram]


def host_figures(host: str, result: LoadResult, cpu_percent: float | None) -> dict:
    return {"host": host, "requests": result.requests, "rps": result.rps, "duration_s": result.duration_s,
            "errors": result.error_count, "latency_ms": result.latency_ms, "cpu_percent": cpu_percent,
            "command": result.extra.get("command")}


def merged(parts: list[tuple[str, LoadResult, float | None]], latency_ms: dict) -> LoadResult:
    """One result from (host, result, its CPU percent) per generator and the latency computed from their union.
    The window is the longest of theirs (they start together), so req/s is never overstated."""
    first = parts[0][1]
    errors = {kind: sum(r.errors.get(kind, 0) for _, r, _ in parts) for kind in first.errors}
    return dataclasses.replace(
        first, requests=sum(r.requests for _, r, _ in parts), duration_s=max(r.duration_s for _, r, _ in parts),
        bytes=sum(r.bytes for _, r, _ in parts), errors=errors, latency_ms=latency_ms,
        latency_source=first.latency_source + f" Merged from {len(parts)} load hosts' exact samples.",
        raw_files=tuple(f for _, r, _ in parts for f in r.raw_files),
        extra={"per_host": [host_figures(h, r, cpu) for h, r, cpu in parts], "hosts": len(parts),
               "command": [r.extra.get("command") for _, r, _ in parts]})


def merge_wrk(parts: list[tuple[str, LoadResult, float | None]]) -> LoadResult:
    """The hosts' histograms added; when any host's histogram is broken (wrk's pipelined correction: wrk.py), only
    the largest max survives, as in a single run."""
    broken = [r.extra["latency_invalid"] for _, r, _ in parts if r.extra.get("latency_invalid")]
    if broken:
        worst = max((r.latency_ms.get("max") or 0 for _, r, _ in parts), default=None)
        one = merged(parts, {"mean": None, "p50": None, "p90": None, "p99": None, "max": worst})
        return dataclasses.replace(one, extra={**one.extra, "latency_invalid": broken[0]})
    return merged(parts, wrk_latency_ms(added([histogram_of(r) for _, r, _ in parts])))


def rows_dir(result: LoadResult, rows_file: str) -> Path:
    """Where an open-loop run's per-request rows are (oha.sqlite, k6.csv: among its raw files)."""
    found = [Path(f) for f in result.raw_files if f.endswith(rows_file)]
    if not found:
        raise LoadgenError(f"{result.tool}: no per-request rows ({rows_file}) to merge")
    return found[0].parent


def merge_oha(parts: list[tuple[str, LoadResult, float | None]]) -> LoadResult:
    from . import oha
    return merge_open_loop(parts, lambda r: oha.requests(rows_dir(r, "oha.sqlite")))


def merge_k6(parts: list[tuple[str, LoadResult, float | None]]) -> LoadResult:
    from . import k6
    return merge_open_loop(parts, lambda r: k6.requests(rows_dir(r, "k6.csv")))


def merge_open_loop(parts: list[tuple[str, LoadResult, float | None]], requests_of) -> LoadResult:
    """Open-loop runs started together, each at its share of the rate: their rows as one population (times are
    each run's own, from its common start), rates and counts summed, the worst schedule lag kept."""
    rows = openloop.merge(*(requests_of(r) for _, r, _ in parts))
    one = merged(parts, openloop.latency(rows))
    extras = [r.extra for _, r, _ in parts]
    window = max(r.duration_s for _, r, _ in parts)
    lags = [e.get("schedule_lag_ms") or {} for e in extras]
    worst = max(lags, key=lambda lag: lag.get("p99") or 0)
    summed = {key: sum(e.get(key) or 0 for e in extras) for key in
              ("rate", "rate_sent", "scheduled", "never_sent", "aborted_at_deadline", "concurrency")}
    status = sum((Counter(e.get("status_counts") or {}) for e in extras), Counter())
    behind = [f"{h}: {e['behind_schedule']}" for (h, _, _), e in zip(parts, extras) if e.get("behind_schedule")]
    return dataclasses.replace(one, extra={
        **one.extra, **summed, "rate_achieved": openloop.completion_rate(rows, window),
        "rate_answered": len(rows) / window, "schedule_lag_ms": worst,
        "schedule_lag_exact": all(e.get("schedule_lag_exact", True) for e in extras),
        "latency_slope_ms_per_s": openloop.slope_ms_per_s(rows), "status_counts": dict(sorted(status.items())),
        **({"behind_schedule": "; ".join(behind)} if behind else {})})


def merge_ab(parts: list[tuple[str, LoadResult, float | None]]) -> LoadResult:
    """ab runs started together, each with its share of the count: the mean weighted by each run's requests (the
    union's own mean), percentiles from the union of their per-request times (ab.tsv: whole ms, ab's finest
    per-request figure), counts summed."""
    from . import ab
    totals = sorted(ms for _, r, _ in parts for _, ms in ab.per_request(ab_dir(r)))
    done = sum(r.requests for _, r, _ in parts)
    mean = sum((r.latency_ms.get("mean") or 0) * r.requests for _, r, _ in parts) / done if done else None
    figures = {k: openloop.percentile(totals, p) for k, p in (("p50", "50"), ("p90", "90"), ("p99", "99"))}
    one = merged(parts, {"mean": mean, **figures, "max": totals[-1] if totals else None})
    summed = {key: sum(r.extra.get(key) or 0 for _, r, _ in parts) for key in ("complete_requests", "failed_requests")}
    return dataclasses.replace(one, latency_source=one.latency_source + " Percentiles from the hosts' ab.tsv rows "
                               "(whole ms).", extra={**one.extra, **summed})


def ab_dir(result: LoadResult) -> Path:
    found = [Path(f) for f in result.raw_files if f.endswith("ab.tsv")]
    if not found:
        raise LoadgenError("ab: no per-request file (ab.tsv) to merge")
    return found[0].parent
