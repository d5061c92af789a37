"""The capacity estimated from every launch of a search (decide/capacity_fit.py): known answers."""

from __future__ import annotations

import math

import pytest

from crossbench.decide import capacity_fit


def launches(*at: tuple[float, int, int]) -> list[tuple[float, bool]]:
    """(rate, held, tried) per rate as one launch per row."""
    return [(rate, i < held) for rate, held, tried in at for i in range(tried)]


def test_shares_are_made_non_increasing_by_pooling_adjacent_violators():
    # 100: 1 of 4, 115: 3 of 4 violate (more held at the higher rate): pooled to 4 of 8 each
    fitted = capacity_fit.shares(launches((80, 4, 4), (100, 1, 4), (115, 3, 4), (130, 0, 4)))
    assert fitted == [(80, 1.0, 4), (100, 0.5, 4), (115, 0.5, 4), (130, 0.0, 4)]


def test_the_crossing_is_read_between_its_neighbours_on_the_log_scale():
    # shares 1, 0.75, 0.5, 0.25, 0: one half is reached at 115 exactly
    assert capacity_fit.crossing(
        launches((80, 4, 4), (100, 3, 4), (115, 2, 4), (130, 1, 4), (160, 0, 4))
    ) == pytest.approx(115)
    # 0.75 at 100, 0.25 at 130: half way between them on logs, sqrt(100 x 130)
    assert capacity_fit.crossing(launches((100, 3, 4), (130, 1, 4))) == pytest.approx(math.sqrt(100 * 130))


def test_launches_that_do_not_disagree_place_it_in_their_gap_and_the_gap_is_its_interval():
    found = capacity_fit.estimate(launches((100, 3, 3), (119, 0, 3), (141, 0, 3)))
    assert found.rate == pytest.approx(math.sqrt(100 * 119)) and (found.low, found.high) == (100, 119)


def test_one_rate_between_all_held_and_all_failed_is_the_capacity_within_that_bracket():
    """The searches' usual end (a logistic fit has no maximum there): 1,600 all held, 1,900 two of four, 2,260
    none: the capacity is 1,900, its interval at least 1,600 to 2,260."""
    found = capacity_fit.estimate(launches((800, 3, 3), (1600, 3, 3), (1900, 2, 4), (2260, 0, 3), (3200, 0, 3)))
    assert found.rate == pytest.approx(1900) and found.low <= 1600 and found.high >= 2260
    assert capacity_fit.estimate(
        launches((800, 3, 3), (1600, 3, 3), (1900, 2, 4), (2260, 0, 3))
    ) == capacity_fit.estimate(launches((800, 3, 3), (1600, 3, 3), (1900, 2, 4), (2260, 0, 3)))  # fixed seed


def test_no_crossing_without_a_hold_and_a_failure():
    assert capacity_fit.estimate(launches((100, 3, 3), (200, 3, 3))) is None
    assert capacity_fit.estimate(launches((100, 0, 3))) is None
    assert capacity_fit.estimate(launches((100, 2, 4), (200, 2, 4))) is None  # never under one half
