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

DRIVERS: dict[str, Callable] = {
    "closed_loop": closed_loop,
}

__all__ = ["DRIVERS", "Measurement"]
