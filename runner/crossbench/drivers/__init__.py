"""Drivers: what happens between "the server is ready" and "stop it", one per kind of cell (see base.py).

Each module exposes DRIVER, an instance of a base.Driver subclass; a group in an experiment file picks one with
`kind = "..."`.
"""

from __future__ import annotations

from . import closed_loop, fixed_count, hol_probe, hold, open_loop, pipelined
from .base import Driver, DriverRefused, Measurement

DRIVERS: dict[str, Driver] = {
    "closed_loop": closed_loop.DRIVER,
    "pipelined": pipelined.DRIVER,
    "fixed_count": fixed_count.DRIVER,
    "hol_probe": hol_probe.DRIVER,
    "hold_connections": hold.DRIVER,
    "open_loop": open_loop.DRIVER,
}

DEFAULT_KIND = "closed_loop"  # a group without `kind`, and records older than the field
PEAK_KIND = DEFAULT_KIND  # the kind that measures a point's peak (rates = "auto")
RATE_KIND = "open_loop"  # the kind that offers a fixed rate (rates = [...] or a share of the peak)


def of_record(record: dict) -> Driver | None:
    """The driver that measured a record (None for a kind this checkout does not have)."""
    return DRIVERS.get(record.get("kind") or DEFAULT_KIND)


__all__ = ["DEFAULT_KIND", "DRIVERS", "Driver", "DriverRefused", "Measurement", "PEAK_KIND", "RATE_KIND", "of_record"]
