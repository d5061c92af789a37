"""compare's tests of a change, B over A on the log scale: Welch's t between runs with the run-to-run variance as
a component, the paired t inside one run, the call against an equivalence margin (criterion's rule for a change,
TOST for "the same") and Benjamini-Hochberg across the points of one compare. Built on stats (t quantile, the
minimum of launches); analysis/crossbench_analysis/compare/compare_stats.py turns these calls into verdicts."""

from __future__ import annotations

import math
from dataclasses import dataclass

from crossbench.stats import CONFIDENCE, MIN_LAUNCHES, PAIRED_METHOD, WELCH_METHOD, t_quantile

INCREASE, DECREASE, EQUIVALENT, INCONCLUSIVE = "increase", "decrease", "equivalent", "inconclusive"
RUN_WELCH_METHOD = "Welch's t on log values, the run-to-run variance added (2 sigma_run^2)"


@dataclass(frozen=True)
class ChangeTest:
    """B over A on the log scale: the difference of the log means, its standard error and degrees of freedom,
    from which every interval, p value and call of a compare follows. `run_sd` is the run-to-run spread that was
    added to the variance (0 within one run)."""

    diff: float
    se: float
    df: float
    n_a: int
    n_b: int
    method: str
    run_sd: float = 0.0

    @property
    def ratio(self) -> float:
        return math.exp(self.diff)

    def interval(self, confidence: float = CONFIDENCE) -> tuple[float, float]:
        """B/A's two-sided interval at `confidence`."""
        half = t_quantile(confidence, self.df) * self.se
        return math.exp(self.diff - half), math.exp(self.diff + half)

    @property
    def low(self) -> float:
        return self.interval()[0]

    @property
    def high(self) -> float:
        return self.interval()[1]

    @property
    def p_value(self) -> float:
        """Two-sided p of "no change" (B/A = 1)."""
        from scipy.stats import t

        return float(2 * t.sf(abs(self.diff) / self.se, self.df))

    def p_change(self, margin: float) -> float:
        """One-sided p that the change is within the margin (H0: |log B/A| <= log(1 + m)), in the direction of
        the estimate: what a faster or slower rests on, defined for every test so that Benjamini-Hochberg weighs
        the claims among all the points tested."""
        from scipy.stats import t

        return float(t.sf((abs(self.diff) - math.log(1 + margin)) / self.se, self.df))

    def p_same(self, margin: float) -> float:
        """TOST's p that the change is beyond the margin (the larger of its two one-sided tests): what a same
        rests on."""
        from scipy.stats import t

        bound = math.log(1 + margin)
        return float(max(t.sf((self.diff + bound) / self.se, self.df), t.sf((bound - self.diff) / self.se, self.df)))


def untestable(*sides: list[float]) -> str | None:
    """Why launch values cannot carry a test, or None: fewer than MIN_LAUNCHES on a side, or a side whose launches
    are all equal (a spread of zero is an artefact, a rounding or a cap, not a measured precision: it would give
    p = 0)."""
    for name, values in zip("AB", sides):
        if len(values) < MIN_LAUNCHES:
            return f"{len(values)} launch{'es' if len(values) != 1 else ''} in {name}, fewer than {MIN_LAUNCHES}"
        if len(set(values)) == 1:
            return f"{name}'s {len(values)} launches are tied: no spread"
    return None


def run_log_ratio(a: list[float], b: list[float], run_sd: float = 0.0, run_df: float | None = None) -> ChangeTest:
    """B/A between two runs: Welch's t on the log values with the run-to-run variance as a component,
    se^2 = s_a^2/n_a + s_b^2/n_b + 2 run_sd^2 (each run's mean carries one draw of the run's level). The degrees
    of freedom are Welch-Satterthwaite's; run_sd, estimated from runs with run_df degrees of freedom, adds its
    own term (2 run_sd^2)^2 / run_df, so a spread measured on few runs widens the interval; run_df None: taken
    as known (a stated default, or a spread given on the command line)."""
    if untestable(a, b) or any(v <= 0 for v in (*a, *b)):
        raise ValueError(f"run_log_ratio needs {MIN_LAUNCHES}+ positive, untied values a side")
    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    ma, mb = sum(la) / len(la), sum(lb) / len(lb)
    va = sum((v - ma) ** 2 for v in la) / (len(la) - 1) / len(la)
    vb = sum((v - mb) ** 2 for v in lb) / (len(lb) - 1) / len(lb)
    total = va + vb + 2 * run_sd**2
    run_term = (2 * run_sd**2) ** 2 / run_df if run_df else 0.0
    df = total**2 / (va**2 / (len(la) - 1) + vb**2 / (len(lb) - 1) + run_term)
    method = RUN_WELCH_METHOD if run_sd else WELCH_METHOD
    return ChangeTest(mb - ma, math.sqrt(total), df, len(a), len(b), method, run_sd)


def paired_change(pairs: list[tuple[float, float]]) -> ChangeTest:
    """B/A from launches paired by round: Student's t on log(b) - log(a), n - 1 degrees of freedom."""
    diffs = [math.log(b) - math.log(a) for a, b in pairs]
    if len(diffs) < MIN_LAUNCHES or len(set(diffs)) == 1:
        raise ValueError(f"paired_change needs {MIN_LAUNCHES}+ pairs whose differences are not all equal")
    n = len(diffs)
    mean = sum(diffs) / n
    se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n)
    return ChangeTest(mean, se, n - 1, n, n, PAIRED_METHOD)


def change_call(test: ChangeTest, margin: float, alpha: float = 1 - CONFIDENCE) -> str:
    """What a test shows against an equivalence margin m, symmetric on the log scale (B/A inside
    [1/(1+m), 1+m]): INCREASE or DECREASE when the whole two-sided (1 - alpha) interval lies beyond it (as
    criterion's compare_to_threshold: both bounds); EQUIVALENT when the two one-sided tests at alpha (TOST)
    both reject a change of m or more, which is the two-sided (1 - 2 alpha) interval, 90 % at alpha = 5 %,
    inside the margin; INCONCLUSIVE otherwise. The two cannot both hold."""
    if not 0 < margin < 1:
        raise ValueError(f"margin {margin} outside (0, 1)")
    bound = math.log(1 + margin)
    low, high = (math.log(v) for v in test.interval(1 - alpha))
    if low > bound:
        return INCREASE
    if high < -bound:
        return DECREASE
    low, high = (math.log(v) for v in test.interval(1 - 2 * alpha))
    return EQUIVALENT if -bound < low and high < bound else INCONCLUSIVE


def benjamini_hochberg(p_values: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p values (1995), in the given order: a test is a discovery at false discovery
    rate q when its adjusted p is at most q; the expected share of false discoveries among those made is then at
    most q (independent or positively dependent tests)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p_values[i] * m / rank)
        adjusted[i] = running
    return adjusted
