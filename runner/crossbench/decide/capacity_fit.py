"""A capacity estimated from every launch of a search: where a launch holding its target becomes as likely as not.

Each launch of a capacity search holds its target or does not (capacity.launch_holds). The share of launches that
held at each rate, made non-increasing in the rate (isotonic regression: pool adjacent violators, weighted by
launches), crosses one half somewhere; the capacity is that rate, read between the two rates either side of it on
the log scale. It always exists once a launch held and one failed (a logistic fit does not: launches that hold below
a rate and fail above it, with one rate between, have no maximum-likelihood slope, and the searches' launches are
often so). Launches that do not disagree (every hold below every failure) place it at their gap's geometric middle.
Its 95 % interval: the bootstrap percentile interval over launches (BOOTSTRAP resamples with a fixed seed), never
narrower than the bracket around it: the highest rate where every launch held and the lowest where every one failed
(monotone or not, the data cannot place it closer than that).
None where every launch held or every one failed: no crossing was seen.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

BOOTSTRAP = 2000
CONFIDENCE = 0.95
SEED = 20261127  # a fixed seed: the same launches give the same interval


@dataclass(frozen=True)
class Estimate:
    rate: float  # where P(hold) = 0.5
    low: float  # its 95 % interval
    high: float
    launches: int

    def as_dict(self) -> dict:
        return {
            "value": round(self.rate, 3),
            "ci95_low": round(self.low, 3),
            "ci95_high": round(self.high, 3),
            "method": "isotonic",
            "launches": self.launches,
        }


def shares(launches: list[tuple[float, bool]]) -> list[tuple[float, float, int]]:
    """(rate, share held, launches) per rate in rate order, the shares made non-increasing (pool adjacent
    violators, each block weighted by its launches)."""
    by_rate: dict[float, list[bool]] = {}
    for rate, holds in launches:
        by_rate.setdefault(rate, []).append(holds)
    blocks = []  # [held, launches, [rates]]
    for rate in sorted(by_rate):
        held = by_rate[rate]
        blocks.append([sum(held), len(held), [rate]])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] < blocks[-1][0] / blocks[-1][1]:
            held_n, n, rates = blocks.pop()
            blocks[-1] = [blocks[-1][0] + held_n, blocks[-1][1] + n, blocks[-1][2] + rates]
    return [(rate, held_n / n, len(by_rate[rate])) for held_n, n, rates in blocks for rate in rates]


def crossing(launches: list[tuple[float, bool]]) -> float | None:
    """The rate where the non-increasing share held crosses one half, between its neighbours on the log scale."""
    fitted = shares(launches)
    for (rate, share, _), (above, share_above, _) in zip(fitted, fitted[1:]):
        if share >= 0.5 > share_above:
            x, x_above = math.log(rate), math.log(above)
            return math.exp(x + (share - 0.5) / (share - share_above) * (x_above - x))
    return None


def bracket(launches: list[tuple[float, bool]], at: float) -> tuple[float, float]:
    """The highest rate at or below `at` where every launch held, and the lowest at or above it where every one
    failed (the rates tried at the ends when there is none)."""
    rates = sorted({rate for rate, _ in launches})
    all_held = [r for r in rates if r <= at and all(h for x, h in launches if x == r)]
    all_failed = [r for r in rates if r >= at and not any(h for x, h in launches if x == r)]
    return (max(all_held) if all_held else rates[0]), (min(all_failed) if all_failed else rates[-1])


def estimate(launches: list[tuple[float, bool]]) -> Estimate | None:
    """The capacity from (rate, held) per launch (module docstring); None without both a hold and a failure."""
    centre = crossing(launches)
    if centre is None or all(holds for _, holds in launches):
        return None
    rng = random.Random(SEED)
    again = sorted(
        c for c in (crossing([rng.choice(launches) for _ in launches]) for _ in range(BOOTSTRAP)) if c is not None
    )
    low, high = bracket(launches, centre)
    if len(again) >= BOOTSTRAP / 2:
        tail = (1 - CONFIDENCE) / 2
        low, high = min(low, again[int(tail * len(again))]), max(high, again[int((1 - tail) * len(again)) - 1])
    return Estimate(centre, min(low, centre), max(high, centre), len(launches))
