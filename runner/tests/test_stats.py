"""Known answers for the suite's statistics (crossbench/stats.py): if the interval arithmetic is wrong, these
fail."""

import math

import pytest

from crossbench import stats
from crossbench.figures import points


def test_student_t_interval_of_one_to_five():
    # mean 3, s = sqrt(2.5), se = s / sqrt(5) = 0.70711, t(0.975, 4) = 2.77645: half-width 1.96324
    interval = stats.t_interval([1, 2, 3, 4, 5])
    assert interval.mean == 3
    assert interval.low == pytest.approx(1.036757, abs=1e-6) and interval.high == pytest.approx(4.963243, abs=1e-6)
    assert interval.half_width_rel == pytest.approx(1.963243 / 3, abs=1e-6)
    assert interval.method == stats.T_METHOD


def test_a_figure_is_the_geometric_mean_with_students_t_on_logs_and_never_goes_below_zero():
    # logs of 100, 110, 105: mean 4.653203, s = 0.047661, se = 0.027517, t(0.975, 2) = 4.302653: half 0.118397
    found = stats.estimate([100, 110, 105])
    assert found.value == pytest.approx(104.920575, abs=1e-6) and found.method == stats.GEOMETRIC
    assert found.low == pytest.approx(93.205864, abs=1e-5) and found.high == pytest.approx(118.107666, abs=1e-5)
    assert found.half_width_rel == pytest.approx(118.107666 / 104.920575 - 1, abs=1e-6)  # the wider, upper side
    # the quick run's Tomcat static p99 that read [-1950, 2775] on the straight scale: wide, but above zero
    wide = stats.estimate([60.0, 976.0, 700.0])
    assert 0 < wide.low < wide.value < wide.high


def test_under_three_launches_a_figure_is_indicative_and_a_launch_at_zero_has_no_interval():
    two = stats.estimate([10, 12])  # t(1) = 12.7 would make the interval as wide as the figure
    assert (two.low, two.high, two.indicative, two.method) == (None, None, True, stats.INDICATIVE)
    assert two.value == pytest.approx(math.sqrt(120)) and two.launches == (10.0, 12.0)
    idle = stats.estimate([0.0, 0.3, 0.6])  # an idle CPU: no log, no interval, said so
    assert (idle.value, idle.low, idle.method) == (pytest.approx(0.3), None, stats.NOT_POSITIVE)
    assert points.fmt_interval(two.as_figure(), "req/s") == "2 launches: 10, 12 req/s (indicative)"
    assert points.fmt_interval(idle.as_figure(), "%") == "0.3 % (3 launches, one at zero)"
    with pytest.raises(ValueError):
        stats.estimate([])


def test_steins_rule_sets_the_launches_from_the_first_stage_spread():
    # logs of 100, 150, 120: s = 0.203075; (t(0.975, 2) s / ln 1.05)^2 = (4.302653 * 0.203075 / 0.048790)^2 = 320.7
    assert stats.launches_needed([100, 150, 120], 0.05) == 321
    assert stats.launches_needed([100, 100.2, 100.1], 0.05) == stats.MIN_LAUNCHES  # already tight
    assert stats.launches_needed([100, 101], 0.05) == stats.MIN_LAUNCHES  # no first stage yet
    # only the first stage counts: a tight fourth launch does not lower what a wide first stage asked
    assert stats.launches_needed([100, 150, 120, 121, 120], 0.05) == 321


def test_welch_on_log_values_known_answer():
    # B's geometric mean over A's: (92*97*95*90)^(1/4) / (100*110*105)^(1/3) = 0.890781; Welch's t = -3.5971 on
    # 3.424 degrees of freedom, p = 0.02963, 95 % interval of the ratio [0.80963, 0.98006] (scipy agrees)
    test = stats.log_ratio([100, 110, 105], [92, 97, 95, 90])
    assert test.ratio == pytest.approx(0.8907806, abs=1e-6)
    assert test.low == pytest.approx(0.8096321, abs=1e-6) and test.high == pytest.approx(0.9800626, abs=1e-6)
    assert test.p_value == pytest.approx(0.0296294, abs=1e-6)
    assert (test.n_a, test.n_b, test.method) == (3, 4, stats.WELCH_METHOD)


def test_a_ratio_with_one_launch_a_side_has_no_interval():
    test = stats.log_ratio([100], [90, 91])
    assert test.ratio == pytest.approx(math.sqrt(90 * 91) / 100)
    assert (test.low, test.high, test.p_value, test.method) == (None, None, None, stats.ONE_LAUNCH)
    with pytest.raises(ValueError):
        stats.log_ratio([0.0, 1.0], [1.0, 2.0])


def test_paired_t_on_log_values_known_answer_and_what_pairing_takes_out():
    # Four rounds whose machine state moves both sides alike: log(b/a) = -0.08338, -0.08536, -0.10008, -0.07411;
    # mean -0.08573, s = 0.010751, t(0.975, 3) = 3.18245: B/A 0.917839 [0.902271, 0.933676], p = 0.000536
    # (scipy.stats.ttest_1samp agrees). Welch's t on the same values, unpaired, barely leaves 1: [0.8425, 0.9999].
    a, b = [100, 110, 105, 98], [92, 101, 95, 91]
    test = stats.paired_log_ratio(list(zip(a, b)))
    assert test.ratio == pytest.approx(0.9178391, abs=1e-6)
    assert test.low == pytest.approx(0.9022711, abs=1e-6) and test.high == pytest.approx(0.9336757, abs=1e-6)
    assert test.p_value == pytest.approx(0.000536, abs=1e-6)
    assert (test.n_a, test.n_b, test.method) == (4, 4, stats.PAIRED_METHOD)
    unpaired = stats.log_ratio(a, b)
    assert unpaired.ratio == pytest.approx(test.ratio) and unpaired.low == pytest.approx(0.8425348, abs=1e-6)


def test_one_pair_has_no_interval_and_bad_values_are_refused():
    one = stats.paired_log_ratio([(100, 90)])
    assert (one.ratio, one.low, one.high, one.p_value, one.method) == (
        pytest.approx(0.9),
        None,
        None,
        None,
        stats.ONE_LAUNCH,
    )
    with pytest.raises(ValueError):
        stats.paired_log_ratio([(0.0, 1.0), (1.0, 2.0)])
    with pytest.raises(ValueError):
        stats.paired_log_ratio([])


def test_least_squares_by_hand_with_the_slopes_interval():
    # (0,1) (1,2) (2,2) (3,4): mx 1.5, my 2.25, sxx 5, sxy 4.5: slope 0.9, intercept 0.9; residuals 0.1, 0.2,
    # -0.7, 0.4: 0.7 squared; s.e. sqrt(0.7 / 2 / 5) = 0.264575; t(2, 97.5 %) = 4.302653: half 1.138367
    fit = stats.least_squares([0, 1, 2, 3], [1, 2, 2, 4])
    assert (fit.slope, fit.intercept, fit.n) == (pytest.approx(0.9), pytest.approx(0.9), 4)
    assert fit.slope_low == pytest.approx(0.9 - 1.138367, abs=1e-5)
    assert fit.slope_high == pytest.approx(0.9 + 1.138367, abs=1e-5)
    assert fit.r2 == pytest.approx(4.5**2 / (5 * 4.75))  # syy = 1.5625 + 0.0625 + 0.0625 + 3.0625
    two = stats.least_squares([1, 3], [2, 6])
    assert two.slope == pytest.approx(2) and two.slope_low is None  # two points: a line, no interval
    assert stats.least_squares([1, 2], [1, 2], min_points=3) is None
    assert stats.least_squares([2, 2, 2], [1, 2, 3]) is None  # no spread in x
