"""What a driver hands back to the cell lifecycle."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..loadgen.base import LoadResult


@dataclass
class Measurement:
    result: LoadResult            # the measured window's load result: requests, errors, latency
    t0: float                     # the window, as epochs: samples inside it are the cell's figures
    t1: float
    extra: dict = field(default_factory=dict)   # driver-specific record fields (added to the record as they are)
