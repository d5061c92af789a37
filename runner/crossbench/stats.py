"""The suite's statistics, in one place with known-answer tests: the one percentile definition (nearest rank),
used wherever the runner computes latency figures from individual samples itself (the probe, the holder, the
open-loop generators' per-request rows), and the error of a figure over launches (intervals, ratio tests)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

LATENCY_PERCENTILES = {"p50": 50, "p90": 90, "p99": 99}


def nearest_rank(sorted_values: list[float], percent: float | str) -> float | None:
    """The smallest value with at least percent% of the values at or below it (no interpolation): on 1..100,
    p50 is 50 and p99 is 99. The rank is computed exactly (99.9 % of 1000 is 999, not 999.0000000000001)."""
    if len(sorted_values) == 0:
        return None
    rank = max(1, math.ceil(Fraction(str(percent)) * len(sorted_values) / 100))
    return sorted_values[rank - 1]


def latency_summary(latencies_ms, extra_percentiles: dict[str, float] | None = None) -> dict[str, float | None]:
    """mean, p50, p90, p99, max (and any `extra_percentiles`, e.g. {"p999": 99.9}); None each when empty."""
    values = sorted(latencies_ms)
    wanted = {**LATENCY_PERCENTILES, **(extra_percentiles or {})}
    if not values:
        return {"mean": None, **{k: None for k in wanted}, "max": None}
    return {
        "mean": sum(values) / len(values),
        **{k: nearest_rank(values, p) for k, p in wanted.items()},
        "max": values[-1],
    }


# --- error of a figure over launches. A launch is the unit of repetition (Georges et al., OOPSLA 2007): the
# whole stack started afresh. Intervals are over launch values, never over samples within one.

CONFIDENCE = 0.95
# A stated interval rests on at least this many launches: with two, Student's t has one degree of freedom
# (t = 12.7) and an interval is as wide as the figure; fewer launches are shown as their values, "indicative".
# The first MIN_LAUNCHES launches of a point are also its first stage (launches_needed).
MIN_LAUNCHES = 3
GEOMETRIC = "geometric mean of launches, Student's t on their logs"
STEIN = "geometric mean of launches, Stein's two-stage t on the first 3 launches' log spread (precision target)"
INDICATIVE = "indicative: fewer than 3 launches, no interval"
NOT_POSITIVE = "mean of launches, one at or below zero: no interval"
T_METHOD = "student-t over launches"
ONE_LAUNCH = "one launch: no interval"


@dataclass(frozen=True)
class Estimate:
    """A figure of a point from its launches, by the one estimator every figure uses (GEOMETRIC).

    Throughput, latency and its percentiles, ratios, CPU, RSS and threads are positive and ratio-scaled (a change
    is a factor), so the value is the geometric mean of the launch values and the interval is built on their logs
    and mapped back: never below zero, and on the scale compare judges B/A. A percentile is estimated from the
    launches' own percentiles like any figure, so its value and interval come from one estimator; the launch, not
    the request, is the unit that varies.

    When the precision target set how many launches a point got, its figures use stein_estimate instead.

    With fewer than MIN_LAUNCHES launches, or a launch at zero (an idle CPU), the value has no interval and says
    why (`method`)."""

    value: float
    low: float | None
    high: float | None
    n: int
    method: str
    launches: tuple[float, ...] = ()

    @property
    def indicative(self) -> bool:
        return self.low is None

    @property
    def half_width_rel(self) -> float | None:
        """The interval's larger side over the value: 0.03 is "within 3 %" (on logs the upper side is the
        larger)."""
        if self.low is None or self.high is None or not self.value:
            return None
        return max(self.high - self.value, self.value - self.low) / abs(self.value)

    def as_figure(self) -> dict:
        """The figure as points.jsonl keeps it."""
        return {
            "value": self.value,
            "ci95_low": self.low,
            "ci95_high": self.high,
            "n": self.n,
            "half_width_rel": self.half_width_rel,
            "estimator": self.method,
            "indicative": self.indicative,
            "launches": list(self.launches),
        }


def estimate(values: list[float], confidence: float = CONFIDENCE) -> Estimate:
    """A figure's value and interval from its launch values in launch order (see Estimate)."""
    if not values:
        raise ValueError("estimate of no values")
    values = [float(v) for v in values]
    n = len(values)
    if any(v <= 0 for v in values):
        return Estimate(sum(values) / n, None, None, n, NOT_POSITIVE, tuple(values))
    logs = [math.log(v) for v in values]
    centre = sum(logs) / n
    if n < MIN_LAUNCHES:
        return Estimate(geometric(values, centre), None, None, n, INDICATIVE, tuple(values))
    half = t_quantile(confidence, n - 1) * log_spread(logs) / math.sqrt(n)
    value = geometric(values, centre)
    if half == 0:  # launches that tie: an interval of no width, at their value
        return Estimate(value, value, value, n, GEOMETRIC, tuple(values))
    return Estimate(
        value, min(value, math.exp(centre - half)), max(value, math.exp(centre + half)), n, GEOMETRIC, tuple(values)
    )


def geometric(values: list[float], log_centre: float) -> float:
    """exp of the mean log, kept inside the values: launches that tie give their value exactly (200 threads busy
    in three launches is 200, not the 199.99999999999997 a log and an exp make of it)."""
    return min(max(math.exp(log_centre), min(values)), max(values))


def stein_estimate(values: list[float], confidence: float = CONFIDENCE) -> Estimate:
    """A figure of a point whose launch count the precision target set from its first MIN_LAUNCHES launches
    (launches_needed): the geometric mean of all n, and Stein's interval, t(2) times the log spread of those first
    launches over sqrt(n). The usual interval over all n reuses the spread that chose n and covers 91-94 %
    instead of 95 %; the mean of all launches is independent of the first stage's spread, so Stein's covers as
    stated (runner/tests/test_coverage.py). With three launches the two are the same."""
    plain = estimate(values, confidence)
    if plain.indicative:
        return plain
    logs = [math.log(v) for v in plain.launches]
    half = t_quantile(confidence, MIN_LAUNCHES - 1) * log_spread(logs[:MIN_LAUNCHES]) / math.sqrt(len(logs))
    centre = sum(logs) / len(logs)
    if half == 0:  # a first stage that ties says nothing of the later launches' spread: the usual interval
        return plain
    return Estimate(
        plain.value,
        min(plain.value, math.exp(centre - half)),
        max(plain.value, math.exp(centre + half)),
        plain.n,
        STEIN,
        plain.launches,
    )


def log_spread(logs: list[float]) -> float:
    """The sample standard deviation of log values."""
    centre = sum(logs) / len(logs)
    return math.sqrt(sum((v - centre) ** 2 for v in logs) / (len(logs) - 1))


def launches_needed(first_stage: list[float], precision: float, confidence: float = CONFIDENCE) -> int:
    """Stein's two-stage rule: the launches a point needs for its interval (Estimate) to be within `precision`,
    set once from the log spread of its first MIN_LAUNCHES launches and never revised. Stopping as soon as an
    interval looks narrow stops exactly when the launches happen to agree (their spread underestimated), and such
    intervals cover 89 % instead of 95 % (runner/tests/test_coverage.py)."""
    if len(first_stage) < MIN_LAUNCHES or any(v <= 0 for v in first_stage):
        return MIN_LAUNCHES
    spread = log_spread([math.log(v) for v in first_stage[:MIN_LAUNCHES]])
    wanted = (t_quantile(confidence, MIN_LAUNCHES - 1) * spread / math.log(1 + precision)) ** 2
    return max(MIN_LAUNCHES, math.ceil(wanted))


@dataclass(frozen=True)
class Interval:
    """A mean over launches and its two-sided confidence interval (None, None with one launch): an arithmetic
    mean, for differences that may be negative (a fitted slope's inputs); positive figures use `estimate`."""

    mean: float
    low: float | None
    high: float | None
    n: int
    method: str

    @property
    def half_width_rel(self) -> float | None:
        """Half the interval's width over the mean's magnitude: 0.03 is "within 3 %"."""
        if self.low is None or self.high is None or not self.mean:
            return None
        return (self.high - self.low) / 2 / abs(self.mean)


def t_interval(values: list[float], confidence: float = CONFIDENCE) -> Interval:
    """Student's t interval of the mean of independent values: mean +- t(n-1) * s / sqrt(n)."""
    if not values:
        raise ValueError("t_interval of no values")
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return Interval(mean, None, None, n, ONE_LAUNCH)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(confidence, n - 1) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n, T_METHOD)


@cache
def t_quantile(confidence: float, df: float) -> float:
    """Student's t quantile of a two-sided `confidence` interval."""
    from scipy.stats import t  # imported here: scipy takes ~0.3 s to import and most callers never need it

    return float(t.ppf(0.5 + confidence / 2, df))


@dataclass(frozen=True)
class LineFit:
    """y = slope x + intercept by least squares, the slope's interval (Student t, n - 2 degrees of freedom; None
    from two points) and r2 (None when y does not vary: the fit says nothing of it)."""

    slope: float
    intercept: float
    n: int
    slope_low: float | None
    slope_high: float | None
    r2: float | None


def least_squares(
    xs: list[float], ys: list[float], confidence: float = CONFIDENCE, min_points: int = 2
) -> LineFit | None:
    """The line through (xs, ys); None with fewer than `min_points` points or no spread in x."""
    n = len(xs)
    if n < max(2, min_points) or n != len(ys):
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    syy = sum((y - my) ** 2 for y in ys)
    slope = sxy / sxx
    intercept = my - slope * mx
    low = high = None
    if n > 2:
        residual = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys))
        half = t_quantile(confidence, n - 2) * math.sqrt(residual / (n - 2) / sxx)
        low, high = slope - half, slope + half
    return LineFit(slope, intercept, n, low, high, sxy * sxy / (sxx * syy) if syy else None)


@dataclass(frozen=True)
class RatioTest:
    """B over A from two sets of launch values: the ratio of their geometric means, its interval, and the p
    value of Welch's t test on the log values (throughput and latency are ratio-scaled: a change is a factor)."""

    ratio: float
    low: float | None
    high: float | None
    p_value: float | None
    n_a: int
    n_b: int
    method: str


WELCH_METHOD = "Welch's t on log values (ratio of geometric means)"


def log_ratio(a: list[float], b: list[float], confidence: float = CONFIDENCE) -> RatioTest:
    """Welch's t on log(b) - log(a): unequal variances and sizes allowed; needs 2+ positive values a side
    for an interval (with fewer: the ratio alone, p None)."""
    if any(v <= 0 for v in (*a, *b)):
        raise ValueError("log_ratio takes positive values (a throughput, a latency)")
    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    ma, mb = sum(la) / len(la), sum(lb) / len(lb)
    ratio = math.exp(mb - ma)
    if len(a) < 2 or len(b) < 2:
        return RatioTest(ratio, None, None, None, len(a), len(b), ONE_LAUNCH)
    va = sum((v - ma) ** 2 for v in la) / (len(la) - 1) / len(la)
    vb = sum((v - mb) ** 2 for v in lb) / (len(lb) - 1) / len(lb)
    se = math.sqrt(va + vb)
    if se == 0:
        return RatioTest(ratio, ratio, ratio, 0.0 if ratio != 1 else 1.0, len(a), len(b), WELCH_METHOD)
    df = (va + vb) ** 2 / (va**2 / (len(la) - 1) + vb**2 / (len(lb) - 1))
    half = t_quantile(confidence, df) * se
    from scipy.stats import t

    p = float(2 * t.sf(abs(mb - ma) / se, df))
    return RatioTest(ratio, math.exp(mb - ma - half), math.exp(mb - ma + half), p, len(a), len(b), WELCH_METHOD)


PAIRED_METHOD = "paired t on log values (launches paired by round)"


def paired_log_ratio(pairs: list[tuple[float, float]], confidence: float = CONFIDENCE) -> RatioTest:
    """B over A from launches paired by round, (a, b) each: Student's t on the differences log(b) - log(a).
    Two configurations launched in the same shuffled rounds of one run share each round's state of the machine
    (a core's speed drifts over minutes), which the pairing takes out; the ratio is exp of the mean difference.
    Needs 2+ pairs for an interval (with fewer: the ratio alone, p None)."""
    if any(v <= 0 for pair in pairs for v in pair):
        raise ValueError("paired_log_ratio takes positive values (a throughput, a latency)")
    if not pairs:
        raise ValueError("paired_log_ratio of no pairs")
    diffs = [math.log(b) - math.log(a) for a, b in pairs]
    n = len(diffs)
    mean = sum(diffs) / n
    ratio = math.exp(mean)
    if n < 2:
        return RatioTest(ratio, None, None, None, n, n, ONE_LAUNCH)
    se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n)
    if se == 0:
        return RatioTest(ratio, ratio, ratio, 0.0 if ratio != 1 else 1.0, n, n, PAIRED_METHOD)
    half = t_quantile(confidence, n - 1) * se
    from scipy.stats import t

    p = float(2 * t.sf(abs(mean) / se, n - 1))
    return RatioTest(ratio, math.exp(mean - half), math.exp(mean + half), p, n, n, PAIRED_METHOD)
