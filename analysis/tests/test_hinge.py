"""The hinge fit (hinge.py) against answers worked out by hand."""

from __future__ import annotations

import math

import pytest

from crossbench_analysis.judge import hinge


def test_exact_launches_give_back_a_and_n():
    """r = 1.02 max(1, C / 50) at C = 10, 20, 100, 200: a = 1.02 and N = 50, no residual."""
    found = hinge.fit([(c, 1.02 * max(1, c / 50)) for c in (10, 20, 100, 200)])
    assert found.n_best == pytest.approx(50, rel=1e-9) and found.a == pytest.approx(1.02, rel=1e-9)
    assert found.rss == pytest.approx(0, abs=1e-12) and found.past == 2 and found.launches == 4
    assert found.low == pytest.approx(50, rel=1e-9) == found.high  # no spread: nothing to widen it
    assert not found.flat_fits and not found.bent_fits


def test_launches_on_the_hinge_get_the_interval_their_spread_gives_with_no_floor():
    """gunicorn's 4 sync workers at 1 s in held windows (the servers reference): every launch within 0.05 % of
    1.002 max(1, C / 4). The interval is what that spread gives: half the spread, half the width, however narrow
    (a floor of the method's own would stop it halving)."""

    def width(spread: float) -> float:
        found = hinge.fit(
            [(c, 1.002 * max(1, c / 4) * k) for c in (1, 2, 4, 6, 8, 16) for k in (1 - spread, 1.0, 1 + spread)]
        )
        assert found.low < found.n_best < found.high and found.widened == 1.0
        return math.log(found.high / found.low)

    assert width(0.0005) == pytest.approx(2 * width(0.00025), rel=1e-3)
    assert width(0.0001) < 0.0003  # 0.03 % in all: as narrow as the launches are


def test_the_interval_of_two_concurrencies_by_hand():
    """Three launches at C=100 (1.01 e^{0, +-0.01}) and at C=400 (1.98 e^{0, +-0.01}). For 100 < N < 400, log N =
    log 1.01 - (log 1.98 - log 400): N = 400 x 1.01 / 1.98 = 204.04. Each concurrency's launch variance is 0.01^2,
    so log N's is 3 x 0.01^2 / 3^2 twice, 6.667e-5; Welch-Satterthwaite with each s^4 unbiased gives
    (6.667e-5)^2 / (2 (3.333e-5)^2 / (2 + 2)) = 8 df, t(0.975; 8) = 2.306: log N +- 0.018828, N from 200.23 to
    207.92."""
    spread = (math.exp(-0.01), 1.0, math.exp(0.01))
    found = hinge.fit([(c, r * k) for c, r in ((100, 1.01), (400, 1.98)) for k in spread])
    assert found.n_best == pytest.approx(204.04, rel=1e-4) and found.a == pytest.approx(1.01, rel=1e-3)
    assert found.rss == pytest.approx(4e-4, rel=1e-3)
    assert found.low == pytest.approx(200.23, rel=1e-4) and found.high == pytest.approx(207.92, rel=1e-4)
    assert found.lack_of_fit_p is None  # two concurrencies: nothing left to test the hinge's shape with


def test_a_concurrency_whose_launches_spread_more_weighs_more_in_the_interval():
    """The same means, but C=400's launches ten times as spread as C=100's: log N's variance is nearly all
    C=400's (its share of its side, squared, times its variance), so the interval is about as wide as C=400's
    spread alone gives, not an average of the two."""

    def fitted(spread_100: float, spread_400: float):
        return hinge.fit(
            [
                (c, r * math.exp(d * s))
                for c, r, s in ((100, 1.01, spread_100), (400, 1.98, spread_400))
                for d in (-1, 0, 1)
            ]
        )

    even, uneven = fitted(0.001, 0.001), fitted(0.0001, 0.01)
    assert math.log(uneven.high / uneven.low) > 5 * math.log(even.high / even.low)


def test_a_poor_fit_widens_the_interval_by_its_lack_of_fit():
    """A flat side whose overhead drifts with C (1.000, 1.010, 1.020 at C=25, 50, 100; launches 0.1 % apart):
    the means stray from one a far more than the launches do, so the variance is multiplied by the lack-of-fit
    ratio and the interval is wider than the launches alone give."""
    spread = (0.999, 1.0, 1.001)
    drift = [(25, 1.0), (50, 1.01), (100, 1.02), (400, 4.0), (800, 8.0)]
    found = hinge.fit([(c, r * k) for c, r in drift for k in spread])
    assert found.lack_of_fit_p < hinge.LACK_OF_FIT_P and found.widened > 10
    steady = hinge.fit([(c, (1.0 if c <= 100 else r) * k) for c, r in drift for k in spread])
    assert steady.widened == 1.0
    assert math.log(found.high / found.low) > 3 * math.log(steady.high / steady.low)


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
    assert two.low is None and two.n_best == pytest.approx(200, rel=1e-3)  # no residual df: no interval


def test_a_fit_on_a_measured_concurrency_both_neighbours_reject_keeps_an_interval(monkeypatch):
    """1.0 at C=50, 0.95 at C=100, then 2.0 and 4.0 at C=200 and 400 (launches 0.1 % apart): the least squares
    of the gap below C=100 lies above it (101.7) and that of the gap above below it (97.5), so the fit is C=100
    and neither gap's test accepts a log N of its own. The interval is the fit give or take the wider of the two
    gaps' half-widths, not none (the widening for lack of fit turned off to show it)."""
    monkeypatch.setattr(hinge, "LACK_OF_FIT_P", 0.0)
    found = hinge.fit(
        [(c, r * k) for c, r in ((50, 1.0), (100, 0.95), (200, 2.0), (400, 4.0)) for k in (0.999, 1.0, 1.001)]
    )
    assert found.n_best == pytest.approx(100) and found.widened == 1.0
    assert found.low < 100 < found.high and math.log(found.high / found.low) < 0.01
