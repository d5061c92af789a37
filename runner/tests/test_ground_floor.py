"""The ground floor's data (crossbench.kinds, figures.points.IDENTITY) held to the code above it that it
describes: a driver for every kind, a point's identity the plan's fields."""

from __future__ import annotations

from dataclasses import fields

from crossbench import kinds
from crossbench.drivers import DRIVERS
from crossbench.figures import points
from crossbench.plan.cellplan import CellPlan


def test_every_kind_has_its_driver_and_every_driver_its_kind():
    assert set(DRIVERS) == set(kinds.KINDS)
    assert kinds.DEFAULT_KIND in DRIVERS and kinds.RATE_KIND in DRIVERS and kinds.PEAK_KIND in DRIVERS


def test_a_records_kind_says_its_axis_and_headline():
    assert kinds.offered_rate({"kind": "open_loop"}) and not kinds.offered_rate({"kind": "closed_loop"})
    assert not kinds.offered_rate({}) and not kinds.offered_rate({"kind": "a kind from elsewhere"})
    assert kinds.by_default_kind({}) and kinds.by_default_kind({"kind": "closed_loop"})
    assert not kinds.by_default_kind({"kind": "pipelined"})
    assert kinds.headline({"kind": "pipelined", "delay_ms": 0}) == "rps"
    assert kinds.headline({"kind": "hol_probe", "delay_ms": 1000}) == "latency_ms.p50"
    assert kinds.headline({"kind": "a kind from elsewhere", "delay_ms": 5}) == "latency_ratio"


def test_a_points_identity_is_every_field_of_its_plan_but_one_launchs():
    planned = tuple(f.name for f in fields(CellPlan) if f.name not in points.NOT_IDENTITY)
    assert points.IDENTITY == (*planned, "setting", "parallel_limit", "processes")
