"""A capacity estimated from every launch of a search: where a launch holding its target becomes as likely as not.

Each launch of a capacity search holds its target or does not (capacity.launch_holds). Plotted against the offered
rate, holds give way to failures somewhere; the capacity is the rate where P(hold) = 0.5:
- launches that do not disagree (every launch at or below some rate held, every one above it failed): the data
  cannot place it closer than that gap, so the estimate is its geometric midpoint and the interval the gap itself;
- launches that overlap (a failure below a hold): a logistic fit of hold against log rate (maximum likelihood by
  Newton's method), the rate where it crosses 0.5, its 95 % interval by resampling launches (bootstrap percentile,
  BOOTSTRAP resamples, a resample that no longer overlaps taking its gap's midpoint).
None where every launch held or every one failed: no crossing was seen.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

BOOTSTRAP = 2000
CONFIDENCE = 0.95
NEWTON_STEPS = 50
SEED = 20261127                      # a fixed seed: the same launches give the same interval


@dataclass(frozen=True)
class Estimate:
    rate: float                       # where P(hold) = 0.5
    low: float                        # its 95 % interval
    high: float
    method: str                       # "gap" (launches do not disagree) or "logistic" (they overlap)
    launches: int

    def as_dict(self) -> dict:
        return {"value": round(self.rate, 3), "ci95_low": round(self.low, 3), "ci95_high": round(self.high, 3),
                "method": self.method, "launches": self.launches}


def gap(launches: list[tuple[float, bool]]) -> tuple[float, float] | None:
    """(highest rate held, lowest rate failed) when every hold lies below every failure; None otherwise."""
    held = [rate for rate, holds in launches if holds]
    failed = [rate for rate, holds in launches if not holds]
    if not held or not failed or max(held) >= min(failed):
        return None
    return max(held), min(failed)


def logistic_crossing(launches: list[tuple[float, bool]]) -> float | None:
    """The rate where a logistic fit of hold against log rate crosses 0.5 (None when the fit does not settle, or
    P(hold) rises with the rate: no capacity in it)."""
    x = np.log([rate for rate, _ in launches])
    y = np.array([1.0 if holds else 0.0 for _, holds in launches])
    centre = x.mean()
    design = np.column_stack([np.ones_like(x), x - centre])
    beta = np.zeros(2)
    for _ in range(NEWTON_STEPS):
        p = 1 / (1 + np.exp(-design @ beta))
        weights = p * (1 - p)
        hessian = design.T @ (design * weights[:, None])
        try:
            step = np.linalg.solve(hessian, design.T @ (y - p))
        except np.linalg.LinAlgError:
            return None
        beta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    else:
        return None
    intercept, slope = beta
    if slope >= 0 or not np.isfinite(slope):
        return None
    return float(math.exp(centre - intercept / slope))


def crossing(launches: list[tuple[float, bool]]) -> float | None:
    found = gap(launches)
    if found:
        return math.sqrt(found[0] * found[1])
    return logistic_crossing(launches)


def estimate(launches: list[tuple[float, bool]]) -> Estimate | None:
    """The capacity from (rate, held) per launch (module docstring); None without both a hold and a failure."""
    if not any(holds for _, holds in launches) or all(holds for _, holds in launches):
        return None
    found = gap(launches)
    if found:
        low, high = found
        return Estimate(math.sqrt(low * high), low, high, "gap", len(launches))
    centre = logistic_crossing(launches)
    if centre is None:
        return None
    rng = random.Random(SEED)
    rates = [rate for rate, _ in launches]
    again = [crossing([rng.choice(launches) for _ in launches]) for _ in range(BOOTSTRAP)]
    again = sorted(min(max(c, min(rates)), max(rates)) for c in again if c is not None)
    if len(again) < BOOTSTRAP / 2:
        return None
    tail = (1 - CONFIDENCE) / 2
    low, high = again[int(tail * len(again))], again[int((1 - tail) * len(again)) - 1]
    return Estimate(centre, min(low, centre), max(high, centre), "logistic", len(launches))
