"""Drivers: what happens between "the server is ready" and "stop it", one per kind of cell.

A driver is a function `drive(plan, ctx, server, sampler) -> Measurement`. The cell lifecycle (cell.py) starts
and verifies the server, starts the samplers, calls the driver, stops everything in `finally`, and builds the
record from the Measurement. A group in an experiment file picks its driver with `kind = "..."` and passes it
settings with `options = { ... }` (plan.options).
"""
from __future__ import annotations

from typing import Callable

from .base import Measurement
from .closed_loop import drive as closed_loop
from .fixed_count import drive as fixed_count
from .hold import drive as hold_connections
from .hol_probe import drive as hol_probe
from .pipelined import drive as pipelined

DRIVERS: dict[str, Callable] = {
    "closed_loop": closed_loop,
    "hold_connections": hold_connections,
    "fixed_count": fixed_count,
    "hol_probe": hol_probe,
    "pipelined": pipelined,
}

__all__ = ["DRIVERS", "Measurement"]
