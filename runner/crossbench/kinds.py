"""The kinds of cell as data: what the analysis draws each kind against and the figure a point of it is judged by.

A kind is measured by its driver (crossbench.drivers, one per kind); what a record of it means is here, on the
ground floor, so that reading a record needs no driver.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_KIND = "closed_loop"  # a group without `kind`, and records older than the field
PEAK_KIND = DEFAULT_KIND  # the kind that measures a point's peak (rates = "auto")
RATE_KIND = "open_loop"  # the kind that offers a fixed rate (rates = [...] or a share of the peak)


@dataclass(frozen=True)
class Kind:
    """axis: what the analysis draws the kind's cells against, "concurrency" or "rate" (offered).
    headline: the figure a point is judged by (its precision target, compare's first column), a dotted name
    reading inside an object; None for the sweeps' rule: the latency ratio for delayed cells, throughput
    otherwise. Not the efficiency ratio: its count of answers in a window of a whole number of round trips takes
    or misses the last one by chance (Tomcat C=1, 1 s delay, 15 s windows: 15, 14, 15 answers, ratios 1.00, 1.07,
    1.00, the latency ratio 1.00 each time)."""

    axis: str = "concurrency"
    headline: str | None = None


KINDS: dict[str, Kind] = {
    "closed_loop": Kind(),
    "pipelined": Kind(),
    "fixed_count": Kind(),
    "hol_probe": Kind(headline="latency_ms.p50"),  # seed 000: how long an instant request waits
    "hold_connections": Kind(headline="rss_per_connection_kb"),  # seed 003: what a held connection costs
    "open_loop": Kind(axis="rate", headline="latency_ms.p99"),  # its tail at the offered rate
}


def of_record(record: dict) -> Kind | None:
    """The kind of a record (None for a kind this checkout does not have)."""
    return KINDS.get(record.get("kind") or DEFAULT_KIND)


def headline(record: dict) -> str:
    """The figure a record's point is judged by (Kind.headline)."""
    kind = of_record(record)
    if kind is not None and kind.headline is not None:
        return kind.headline
    return "latency_ratio" if record.get("delay_ms") else "rps"


def by_default_kind(record: dict) -> bool:
    """A record of the default kind (the closed-loop concurrency sweep), records older than `kind` too."""
    return (record.get("kind") or DEFAULT_KIND) == DEFAULT_KIND


def offered_rate(record: dict) -> bool:
    """A record drawn against the rate it was offered (an open-loop kind's), not against concurrency."""
    kind = of_record(record)
    return kind is not None and kind.axis == "rate"
