"""What the launches of a delay sweep say of its knee: the one rule findings, advice, the knees file and its
chart all use (`judge`), on the hinge r(C) = a max(1, C / N) fitted over every launch (hinge.py), and the knee
in words. Imports only hinge.

The rule, in order (MARGIN = 1.1: a bend of less than 10 % at an end of the measured range is no knee):
- fewer than two concurrencies: too_few (a and N cannot be told apart);
- the interval's lower end at or above the highest C / MARGIN (with fewer than MIN_PAST launches past the fit
  there is no interval: the fit itself is judged, and what is said of it is indicative):
  not_reached ("not reached up to C=400"): no launch is past the knee by 10 % or more;
- the hinge does not fit (lack-of-fit F test p < POOR_FIT_P against the launches' own spread at each
  concurrency, and a concurrency's mean more than POOR_FIT_OFFSET off the hinge): poor_fit, no N (a ratio that
  rises as the CPU saturates, not as C / N);
- every launch bent fits (the interval, or the fit, reaches the lowest C: a and N cannot be told apart) and the
  interval ends at or below the lowest C x MARGIN: below_range ("bends at or below C=10");
- the interval reaching past either end of the range (flat or all-bent fits as well): not_resolved;
- otherwise the fitted N with its interval ("knee at C=204 [196, 212]") when the fit places it more closely than
  the grid does and the grid is fine enough to trust the model there: at least 3 launches past it, an interval
  no wider (in log C) than half the gap between the measured concurrencies around it, and those two within a
  factor of GRID_RESOLVES. Else the bracket of measured concurrencies that holds the interval (around the fit
  when it has no interval: fewer than 3 launches past it): "between C=100 and C=400", the fit beside it.
Past the knee r = a C / N pins N, with a read from the flat side. But a request's own overhead grows with the
load (Tomcat maxThreads=200 in the quick profile: a = 1.008 at C=1, 1.023 at C=100, and 2.069 at C=400 means
1.035 there), so an a read far below the knee puts N below its pool. Only a flat point
close to the knee (within GRID_RESOLVES) measures a at nearly the knee's load; a coarser grid gets the bracket.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from crossbench.figures.points import fmt_range

from . import hinge

MARGIN = 1.1
GRID_RESOLVES = 2.0  # the measured concurrencies around a stated knee at most this factor apart
MIN_PAST = 3  # launches past the knee for a stated interval (crossbench.stats.MIN_LAUNCHES)
POOR_FIT_P = 0.01
POOR_FIT_OFFSET = 0.05


@dataclass(frozen=True)
class Knee:
    """What the launches say of the knee (see the module's rule)."""

    status: str  # fitted, bracket, not_reached, below_range, not_resolved, poor_fit, too_few
    concurrency: float | None  # the fitted N (fitted; bracket: the fit, indicative); else None
    low: float | None  # its interval, when stated
    high: float | None
    bracket: tuple[float, float] | None
    bottom: float | None  # the lowest and highest concurrency measured
    top: float | None
    fit: hinge.HingeFit | None = None
    measured: tuple = ()  # the concurrencies measured, as the records give them

    @property
    def indicative(self) -> bool:
        return self.fit is None or self.fit.low is None or self.fit.past < MIN_PAST

    def bent_under(self) -> float | None:
        """The bound a knee is known only to lie under: the hinge's (N < it: every fit is bent, none flat) for one
        not resolved, the lowest concurrency measured for one that bends at or below it; None otherwise."""
        if self.status == "below_range":
            return self.bottom
        if self.status == "not_resolved" and self.fit and not self.fit.flat_fits and self.fit.high is not None:
            return self.fit.high
        return None

    def under_bracket(self) -> tuple[float, float] | None:
        """For a knee known only to lie under a bound: the lowest concurrency measured and the first measured at or
        above the bound (the measured concurrencies it lies between); None otherwise."""
        under = self.bent_under()
        if under is None:
            return None
        return self.bottom, next((c for c in self.measured if c >= under), self.top)

    def words(self) -> str:
        """The knee in words, without the prediction: 'knee at C=204 [196, 212]', 'between C=100 and C=400'."""
        fit = self.fit
        if self.status == "fitted":
            return f"knee at {fitted_c_text(self)}"
        if self.status == "bracket":
            return f"between C={self.bracket[0]:g} and C={self.bracket[1]:g}"
        if self.status == "not_reached":
            return f"not reached up to C={self.top:g}"
        if self.status == "below_range":
            return f"bends at or below C={self.bottom:g}"
        if self.status == "poor_fit":
            return (
                f"no knee: the ratio does not rise as a pool's C / N (lack of fit p = {fit.lack_of_fit_p:.2g}, "
                f"a concurrency {100 * fit.worst_offset:.0f} % off the hinge)"
            )
        if self.status == "too_few":
            return (
                f"one concurrency measured (C={self.top:g}): no knee fitted"
                if self.top is not None
                else "no launch to fit"
            )
        if fit.flat_fits and fit.bent_fits:
            return f"not resolved up to C={self.top:g}: the launches fit any knee"
        side = f"N > {c_text(fit.low)}" if fit.flat_fits else f"N < {c_text(fit.high)}"
        return f"not resolved up to C={self.top:g}: {side}"

    def note(self) -> str:
        """'; fit C=204, indicative: 1 launch past it' for a bracket around a fit with no interval, '; the hinge
        through them: C=196 [194, 199], if the overhead past the knee were the flat side's' for one with it."""
        if self.status != "bracket":
            return ""
        if self.indicative:
            past = self.fit.past
            return f"; fit C={c_text(self.concurrency)}, indicative: {past} launch{'es' if past != 1 else ''} past it"
        return (
            f"; the hinge through them: C={c_text(self.concurrency)} [{c_text(self.low)}, {c_text(self.high)}], "
            "if the overhead past the knee were the flat side's"
        )


def c_text(c: float) -> str:
    """A fitted concurrency as a reader quotes it: whole from 100 up, three significant figures under."""
    return f"{c:.0f}" if c >= 100 else f"{c:.3g}"


def fitted_c_text(knee) -> str:
    """A fitted knee and its interval in the suite's one notation, to the digits the interval supports: 'C=204
    [196, 212]', 'C=4.002 [4.000, 4.004]' (gunicorn's 4 workers, whose launches sit on the hinge)."""
    return "C=" + fmt_range(knee.concurrency, knee.low, knee.high)


def judge(launches: list[tuple[float, float]]) -> Knee:
    """The knee of (concurrency, ratio) launches, by the module's rule."""
    measured = tuple(sorted({c for c, _ in launches}))
    fit = hinge.fit(launches)

    def knee(status: str, n=None, low=None, high=None, bracket=None) -> Knee:
        return Knee(
            status,
            n,
            low,
            high,
            bracket,
            measured[0] if measured else None,
            measured[-1] if measured else None,
            fit,
            measured,
        )

    if fit is None:
        return knee("too_few")
    bottom, top = measured[0], measured[-1]
    # under MIN_PAST launches past it the residuals' interval rests on too little: the fit alone, indicative
    stated = fit.low is not None and fit.past >= MIN_PAST
    low, high = (fit.low, fit.high) if stated else (fit.n_best, fit.n_best)
    if low >= top / MARGIN:
        return knee("not_reached")
    if fit.lack_of_fit_p is not None and fit.lack_of_fit_p < POOR_FIT_P and fit.worst_offset > POOR_FIT_OFFSET:
        return knee("poor_fit")
    bent = fit.bent_fits if stated else math.log(fit.n_best / bottom) <= hinge.EDGE
    if bent and high <= bottom * MARGIN:
        return knee("below_range")
    if stated and (fit.flat_fits or fit.bent_fits):
        return knee("not_resolved")
    around = neighbours(list(measured), fit.n_best)
    if not stated:
        return knee("bracket", fit.n_best, bracket=around)
    if math.log(high / low) <= 0.5 * math.log(around[1] / around[0]) and around[1] / around[0] <= GRID_RESOLVES:
        return knee("fitted", fit.n_best, low, high)
    return knee("bracket", fit.n_best, low, high, bracket=holding(list(measured), low, high, around))


def figure_launches(figures: list[tuple[float, dict | None]]) -> list[tuple[float, float]]:
    """(concurrency, ratio) of every launch from (concurrency, figure) pairs of points.jsonl figures: the
    figure's launch values, its value alone where a record keeps none."""
    return [
        (c, v)
        for c, found in figures
        if found and found.get("value") is not None
        for v in (found.get("launches") or [found["value"]])
        if v is not None
    ]


def neighbours(concurrencies: list[float], n: float) -> tuple[float, float]:
    """The measured concurrencies around N: the highest at or under it and the lowest above it."""
    under = [c for c in concurrencies if c <= n] or concurrencies[:1]
    over = [c for c in concurrencies if c > n] or concurrencies[-1:]
    return under[-1], over[0]


def holding(concurrencies: list[float], low: float, high: float, around: tuple[float, float]) -> tuple[float, float]:
    """The measured concurrencies that hold the interval, give or take MARGIN (a point bent by less than 10 %
    is at the knee, not past it)."""
    under = [c for c in concurrencies if c <= low * MARGIN and c <= around[0]]
    over = [c for c in concurrencies if c >= high / MARGIN and c >= around[1]]
    return (under[-1] if under else around[0]), (over[0] if over else around[1])


def knee_text(knee: Knee, predicted: int | None) -> str:
    """'knee at C=204 [196, 212] (predicted 200)', 'between C=100 and C=400 (predicted 200)', ..."""
    prediction = f"predicted {predicted}" if predicted else "predicted none"
    return f"{knee.words()} ({prediction}{knee.note()})"
