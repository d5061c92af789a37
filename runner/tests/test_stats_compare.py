"""Known answers for compare's tests in crossbench.figures.changes: Welch on logs with a run-to-run variance
component, the paired test, the call against an equivalence margin (TOST) and Benjamini-Hochberg."""

from __future__ import annotations

import math

import pytest
from scipy import stats as sp

from crossbench.figures import changes

E = math.exp


def test_run_log_ratio_without_run_variance_is_welchs_t_on_logs():
    a, b = [100, 104, 97, 101], [110, 113, 108]
    test = changes.run_log_ratio(a, b)
    expected = sp.ttest_ind([math.log(v) for v in b], [math.log(v) for v in a], equal_var=False)
    assert test.p_value == pytest.approx(expected.pvalue, rel=1e-9)
    assert test.ratio == pytest.approx(E(sum(map(math.log, b)) / 3 - sum(map(math.log, a)) / 4))


def test_run_variance_widens_the_interval_by_hand():
    # logs 0, .1, .2 and .2, .3, .4: each variance .01, so se^2 = .01/3 + .01/3 + 2 * .05^2
    test = changes.run_log_ratio([E(0), E(0.1), E(0.2)], [E(0.2), E(0.3), E(0.4)], run_sd=0.05)
    se2 = 0.01 / 3 * 2 + 2 * 0.05**2
    assert test.diff == pytest.approx(0.2) and test.se == pytest.approx(math.sqrt(se2))
    assert test.df == pytest.approx(se2**2 / (2 * (0.01 / 3) ** 2 / 2))
    low, high = test.interval()
    half = sp.t.ppf(0.975, test.df) * math.sqrt(se2)
    assert (math.log(low), math.log(high)) == pytest.approx((0.2 - half, 0.2 + half))
    assert test.p_value == pytest.approx(2 * sp.t.sf(0.2 / math.sqrt(se2), test.df))
    assert test.p_value > changes.run_log_ratio([E(0), E(0.1), E(0.2)], [E(0.2), E(0.3), E(0.4)]).p_value


def test_paired_change_is_the_paired_t_on_logs():
    pairs = [(100, 92), (80, 74), (110, 101), (90, 84)]
    test = changes.paired_change(pairs)
    expected = sp.ttest_rel([math.log(b) for _, b in pairs], [math.log(a) for a, _ in pairs])
    assert test.p_value == pytest.approx(expected.pvalue, rel=1e-9) and test.df == 3


@pytest.mark.parametrize("values", [[100, 100, 100], [5.0] * 6])
def test_tied_launches_are_untestable_never_p_zero(values):
    assert "tied" in changes.untestable(values, [1, 2, 3])
    assert "tied" in changes.untestable([1, 2, 3], values)
    with pytest.raises(ValueError):
        changes.run_log_ratio(values, [90, 91, 92], run_sd=0.05)
    with pytest.raises(ValueError):
        changes.paired_change([(v, v * 1.1) for v in values])


def test_fewer_than_three_launches_are_untestable():
    assert changes.untestable([1, 2], [1, 2, 3]) == "2 launches in A, fewer than 3"
    assert changes.untestable([1, 2, 3], [4]) == "1 launch in B, fewer than 3"
    assert changes.untestable([1, 2, 3], [4, 5, 6]) is None


def tost(test, margin, alpha=0.05) -> bool:
    """The two one-sided tests, written out: H0 diff <= -log(1+m) and H0 diff >= log(1+m), both rejected."""
    bound = math.log(1 + margin)
    p_low = sp.t.sf((test.diff + bound) / test.se, test.df)
    p_high = sp.t.cdf((test.diff - bound) / test.se, test.df)
    return max(p_low, p_high) < alpha


@pytest.mark.parametrize("diff", [-0.2, -0.06, -0.04, -0.01, 0.0, 0.02, 0.045, 0.07, 0.3])
@pytest.mark.parametrize("se", [0.002, 0.01, 0.03, 0.1])
def test_the_call_agrees_with_the_tests_written_out(diff, se):
    test = changes.ChangeTest(diff, se, 7, 4, 4, "hand")
    call = changes.change_call(test, 0.05)
    half = sp.t.ppf(0.975, 7) * se
    bound = math.log(1.05)
    assert (call == changes.INCREASE) == (diff - half > bound)
    assert (call == changes.DECREASE) == (diff + half < -bound)
    assert (call == changes.EQUIVALENT) == tost(test, 0.05)


def test_known_calls():
    assert changes.change_call(changes.ChangeTest(math.log(0.9), 0.005, 5, 3, 3, "hand"), 0.05) == changes.DECREASE
    assert changes.change_call(changes.ChangeTest(0.0, 0.005, 5, 3, 3, "hand"), 0.05) == changes.EQUIVALENT
    assert changes.change_call(changes.ChangeTest(0.0, 0.2, 5, 3, 3, "hand"), 0.05) == changes.INCONCLUSIVE
    assert changes.change_call(changes.ChangeTest(math.log(1.04), 0.001, 50, 3, 3, "hand"), 0.05) == changes.EQUIVALENT
    assert changes.change_call(changes.ChangeTest(math.log(1.04), 0.001, 50, 3, 3, "hand"), 0.02) == changes.INCREASE


@pytest.mark.parametrize("margin", [0, 1, 1.5, -0.05])
def test_a_margin_outside_zero_one_is_refused(margin):
    with pytest.raises(ValueError, match="outside"):
        changes.change_call(changes.ChangeTest(0.0, 0.01, 5, 3, 3, "hand"), margin)


def test_benjamini_hochberg_by_hand():
    # sorted .005 .01 .03 .04 (m = 4): .04*4/4, .03*4/3, .01*4/2, .005*4/1, then the running minimum from the top
    assert changes.benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert changes.benjamini_hochberg([]) == []
    assert changes.benjamini_hochberg([0.5]) == [0.5]


def test_benjamini_hochberg_matches_scipy():
    import random

    rng = random.Random(36)
    for m in (2, 7, 65):
        p = [rng.random() ** 3 for _ in range(m)] + [0.2, 0.2]
        assert changes.benjamini_hochberg(p) == pytest.approx(list(sp.false_discovery_control(p, method="bh")))
