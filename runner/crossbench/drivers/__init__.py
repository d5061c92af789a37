"""Drivers: what happens between "the server is ready" and "stop it", one per kind of cell (see base.py; what a
record of each kind means is crossbench.kinds).

Each module exposes DRIVER, an instance of a base.Driver subclass; a group in an experiment file picks one with
`kind = "..."`.
"""

from __future__ import annotations

from ..kinds import DEFAULT_KIND, PEAK_KIND, RATE_KIND
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

__all__ = ["DEFAULT_KIND", "DRIVERS", "Driver", "DriverRefused", "Measurement", "PEAK_KIND", "RATE_KIND"]
