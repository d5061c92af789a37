"""Drivers: what happens between "the server is ready" and "stop it", one per kind of cell.

A driver is a function `drive(plan, ctx, server, sampler) -> Measurement`, with an optional
`preflight(plan)` that refuses, before the run starts, what it could not do. The cell lifecycle (cell.py) starts
and verifies the server, starts the samplers, calls the driver, stops everything in `finally`, and builds the
record from the Measurement. A group in an experiment file picks its driver with `kind = "..."` and passes it
settings with `options = { ... }` (plan.options).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import closed_loop, fixed_count, hol_probe, hold, pipelined
from .base import Measurement


def no_preflight(plan) -> None:
    return None


@dataclass(frozen=True)
class Driver:
    drive: Callable             # (plan, ctx, server, sampler) -> Measurement
    preflight: Callable = no_preflight   # (plan) -> None; raises with a clear reason before anything runs


DRIVERS: dict[str, Driver] = {
    "closed_loop": Driver(closed_loop.drive, closed_loop.preflight),
    "pipelined": Driver(pipelined.drive, closed_loop.preflight),
    "fixed_count": Driver(fixed_count.drive, fixed_count.preflight),
    "hol_probe": Driver(hol_probe.drive),
    "hold_connections": Driver(hold.drive, hold.preflight),
}

__all__ = ["DRIVERS", "Driver", "Measurement"]
