"""Several load generators' results as one cell, merged exactly: counts summed, latency from the union of their
samples (wrk: their full histograms added bucket by bucket; open-loop tools: their per-request rows
concatenated), never from averaged percentiles. Each generator's own figures stay in `extra["per_host"]`.
What is common lives here; each adapter's merge (its GENERATOR's) reads its own raw files and calls it."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

from . import openloop
from .base import LoadgenError, LoadResult


def host_figures(host: str, result: LoadResult, cpu_percent: float | None) -> dict:
    return {
        "host": host,
        "requests": result.requests,
        "rps": result.rps,
        "duration_s": result.duration_s,
        "errors": result.error_count,
        "latency_ms": result.latency_ms,
        "cpu_percent": cpu_percent,
        "command": result.extra.get("command"),
    }


def merged(parts: list[tuple[str, LoadResult, float | None]], latency_ms: dict) -> LoadResult:
    """One result from (host, result, its CPU percent) per generator and the latency computed from their union.
    The window is the longest of theirs (they start together), so req/s is never overstated."""
    first = parts[0][1]
    errors = {kind: sum(r.errors.get(kind, 0) for _, r, _ in parts) for kind in first.errors}
    return dataclasses.replace(
        first,
        requests=sum(r.requests for _, r, _ in parts),
        duration_s=max(r.duration_s for _, r, _ in parts),
        bytes=sum(r.bytes for _, r, _ in parts),
        errors=errors,
        latency_ms=latency_ms,
        latency_source=first.latency_source + f" Merged from {len(parts)} load hosts' exact samples.",
        raw_files=tuple(f for _, r, _ in parts for f in r.raw_files),
        extra={
            "per_host": [host_figures(h, r, cpu) for h, r, cpu in parts],
            "hosts": len(parts),
            "command": [r.extra.get("command") for _, r, _ in parts],
        },
    )


def status_counts(parts: list[tuple[str, LoadResult, float | None]]) -> dict | None:
    """The hosts' answers per status added up; None when any host counted none."""
    counts = [r.extra.get("status_counts") for _, r, _ in parts]
    if any(c is None for c in counts):
        return None
    return dict(sorted(sum((Counter(c) for c in counts), Counter()).items()))


def raw_dir(result: LoadResult, suffix: str) -> Path:
    """The directory of the run's raw file ending in `suffix` (oha.sqlite, k6.csv, ab.tsv), which a merge re-reads."""
    found = [Path(f) for f in result.raw_files if f.endswith(suffix)]
    if not found:
        raise LoadgenError(f"{result.tool}: no per-request rows ({suffix}) to merge")
    return found[0].parent


def merge_open_loop(parts: list[tuple[str, LoadResult, float | None]], requests_of) -> LoadResult:
    """Open-loop runs started together, each at its share of the rate: their rows as one population (times are
    each run's own, from its common start), rates and counts summed, the worst schedule lag kept, and each
    declared request kind's latency over every host's rows (its names in index order, as each part has them)."""
    rows = openloop.merge(*(requests_of(r) for _, r, _ in parts))
    one = merged(parts, openloop.latency(rows))
    extras = [r.extra for _, r, _ in parts]
    window = max(r.duration_s for _, r, _ in parts)
    lags = [e.get("schedule_lag_ms") or {} for e in extras]
    worst = max(lags, key=lambda lag: (lag.get("judged") or {}).get("ms") or lag.get("p99") or 0)
    summed = {
        key: sum(e.get(key) or 0 for e in extras)
        for key in ("rate", "rate_sent", "scheduled", "never_sent", "aborted_at_deadline", "concurrency")
    }
    status = sum((Counter(e.get("status_counts") or {}) for e in extras), Counter())
    behind = [f"{h}: {e['behind_schedule']}" for (h, _, _), e in zip(parts, extras) if e.get("behind_schedule")]
    achieved = openloop.completion_rate(rows, window)
    kinds = next((list(e["by_kind"]) for e in extras if e.get("by_kind")), None)
    return dataclasses.replace(
        one,
        window_rate=achieved,
        extra={
            **one.extra,
            **summed,
            "rate_achieved": achieved,
            "rate_answered": len(rows) / window,
            "schedule_lag_ms": worst,
            "schedule_lag_exact": all(e.get("schedule_lag_exact", True) for e in extras),
            "latency_slope_ms_per_s": openloop.slope_ms_per_s(rows),
            "status_counts": dict(sorted(status.items())),
            "by_kind": openloop.by_kind(rows, kinds),
            **({"behind_schedule": "; ".join(behind)} if behind else {}),
        },
    )
