"""The capacity estimated from every launch of a search (decide/capacity_fit.py): known answers."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from crossbench.decide import capacity_fit

# 4 launches at each rate: holds thin out from 100 to 130 req/s
OVERLAP = [(r, h) for r, held in ((80, 4), (100, 3), (115, 2), (130, 1), (160, 0)) for h in
           [True] * held + [False] * (4 - held)]


def reference_crossing(launches):
    """The same maximum-likelihood fit by a general optimiser (scipy), not Newton's method."""
    x = np.log([r for r, _ in launches])
    y = np.array([1.0 if h else 0.0 for _, h in launches])

    def minus_log_likelihood(beta):
        z = beta[0] + beta[1] * x
        return float(np.sum(np.logaddexp(0, z) - y * z))
    fit = minimize(minus_log_likelihood, x0=[0.0, 0.0], method="BFGS", options={"gtol": 1e-10})
    return math.exp(-fit.x[0] / fit.x[1])


def test_the_logistic_crossing_is_the_maximum_likelihood_one():
    assert capacity_fit.logistic_crossing(OVERLAP) == pytest.approx(reference_crossing(OVERLAP), rel=1e-4)


def test_overlapping_launches_give_the_logistic_crossing_inside_its_bootstrap_interval():
    found = capacity_fit.estimate(OVERLAP)
    assert found.method == "logistic" and found.launches == 20
    assert 100 < found.rate < 130 and found.low < found.rate < found.high
    assert 80 <= found.low and found.high <= 160
    assert capacity_fit.estimate(OVERLAP) == found          # a fixed seed: the same launches, the same interval


def test_launches_that_do_not_disagree_place_it_in_their_gap():
    found = capacity_fit.estimate([(100, True)] * 3 + [(119, False)] * 3 + [(141, False)] * 3)
    assert found.method == "gap" and (found.low, found.high) == (100, 119)
    assert found.rate == pytest.approx(math.sqrt(100 * 119))


def test_no_crossing_without_a_hold_and_a_failure():
    assert capacity_fit.estimate([(100, True)] * 3 + [(200, True)] * 3) is None
    assert capacity_fit.estimate([(100, False)] * 3) is None
    assert capacity_fit.logistic_crossing([(100, False), (100, True), (200, True), (200, True)]) is None   # rising
