"""The hinge fit (hinge.py) against answers worked out by hand."""
from __future__ import annotations

import math

import pytest

from crossbench_analysis.judge import hinge


def test_exact_launches_give_back_a_and_n():
    """r = 1.02 max(1, C / 50) at C = 10, 20, 100, 200: a = 1.02 and N = 50, no residual."""
    found = hinge.fit([(c, 1.02 * max(1, c / 50)) for c in (10, 20, 100, 200)])
    assert found.n_best == pytest.approx(50, rel=hinge.GRID_STEP) and found.a == pytest.approx(1.02, rel=1e-3)
    assert found.rss == pytest.approx(0, abs=1e-6) and found.past == 2 and found.launches == 4     # the grid
    assert not found.flat_fits and not found.bent_fits


def test_launches_on_the_hinge_get_the_grid_step_not_a_zero_width_interval():
    """gunicorn's 4 sync workers at 1 s in held windows (the servers reference): every launch within 0.1 % of
    1.002 max(1, C / 4), so only one grid point passes the profile bound. The interval is then the grid points
    around it, one step each way, never [4, 4]."""
    launches = [(c, 1.002 * max(1, c / 4) * k) for c in (1, 2, 4, 6, 8, 16) for k in (0.9995, 1.0, 1.0005)]
    found = hinge.fit(launches)
    assert found.low < found.n_best < found.high
    assert math.log(found.high / found.low) == pytest.approx(2 * hinge.GRID_STEP, rel=0.01)


def test_the_profile_interval_of_two_concurrencies_by_hand():
    """Three launches at C=100 (1.01 e^{0, +-0.01}) and at C=400 (1.98 e^{0, +-0.01}). For 100 < N < 400,
    RSS(N) = SSPE + 1.5 D^2 with D = log(1.98 / 1.01) - log(400 / N) and SSPE = 4 x 0.01^2: the least at
    N = 400 x 1.01 / 1.98 = 204.04, and the bound 1.5 D^2 <= SSPE F(0.95; 1, 4) / 4 (F = 7.7086) gives
    |D| <= 0.022669: N from 204.04 e^-0.022669 = 199.47 to 204.04 e^0.022669 = 208.72."""
    spread = (math.exp(-0.01), 1.0, math.exp(0.01))
    found = hinge.fit([(c, r * k) for c, r in ((100, 1.01), (400, 1.98)) for k in spread])
    assert found.n_best == pytest.approx(204.04, rel=1e-3) and found.a == pytest.approx(1.01, rel=1e-3)
    assert found.rss == pytest.approx(4e-4, rel=1e-3)
    assert found.low == pytest.approx(199.47, rel=1e-3) and found.high == pytest.approx(208.72, rel=1e-3)
    assert found.lack_of_fit_p is None          # two concurrencies: nothing left to test the hinge's shape with


def test_lack_of_fit_sets_the_means_against_the_launches_spread():
    """Launches that sit exactly on a hinge pass; a rise the hinge cannot follow fails."""
    spread = (0.99, 1.0, 1.01)
    on = hinge.fit([(c, 1.0 * max(1, c / 100) * k) for c in (50, 100, 200, 400) for k in spread])
    assert on.lack_of_fit_p > 0.5 and on.worst_offset < 0.001
    off = hinge.fit([(c, r * k) for c, r in ((50, 1.0), (100, 1.02), (200, 1.3), (400, 1.35)) for k in spread])
    assert off.lack_of_fit_p < 1e-6 and off.worst_offset > 0.1


def test_the_ends_of_the_range_and_what_cannot_be_fitted():
    flat = hinge.fit([(c, 1.0 * k) for c in (10, 100) for k in (0.99, 1.0, 1.01)])
    assert flat.flat_fits and flat.high == pytest.approx(100)
    bent = hinge.fit([(c, c / 5 * k) for c in (10, 100) for k in (0.99, 1.0, 1.01)])
    assert bent.bent_fits and bent.low == pytest.approx(10)
    assert hinge.fit([(10, 1.0), (10, 1.1)]) is None and hinge.fit([(10, 1.0), (20, 0.0)]) is None
    two = hinge.fit([(100, 1.0), (400, 2.0)])
    assert two.low is None and two.n_best == pytest.approx(200, rel=1e-3)      # no residual df: no interval
