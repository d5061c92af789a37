"""The hinge a pool of N parallel slots puts into a closed-loop delay sweep, fitted over every launch: C clients
served a delay d by N slots see mean latency / d = a * max(1, C / N) (a, about 1.00-1.05, is the base
overhead). On logs, log r = log a + max(0, log C - log N). Between two measured concurrencies the launches at or
under log N are flat and those above it bent, so least squares is solved exactly there: log N is the flat side's
mean log r less the bent side's mean of log r - log C. The fit is the best of these over every gap between
measured concurrencies (beyond the lowest and the highest it is constant: every launch flat, or every launch bent).

The interval of N comes from the launches' own spread, concurrency by concurrency: log N is a difference of two
side means, so its variance is the sum of each concurrency's launch variance weighted by its share of its side
(a concurrency with one launch takes the pooled spread of the others), with Student's t on Welch-Satterthwaite
degrees of freedom, each variance's s^4 taken without its bias (E s^4 = sigma^4 (nu + 2) / nu). Solved in every
gap, the interval is the hull of the log N that this test does not reject. Where the concurrencies' means stray
from the hinge more than their launches stray from each other (lack of fit, p < LACK_OF_FIT_P), that variance is
multiplied by the lack-of-fit ratio and the degrees of freedom are the lack of fit's (concurrencies - 2): a fit
the data contradict gets the wider interval they support, never a floor of the method's own. The lack-of-fit F
test pools the launches' spread, so a concurrency that spreads more than the others reads as lack of fit more
often than its p says; the gate is set where the simulated sweeps of knee_coverage.py (each concurrency spread
as the maxthreads reference's) are covered 95 % of the time. Pure numbers in, numbers out; knees.py says
what they mean."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import NamedTuple

CONFIDENCE = 0.95
LACK_OF_FIT_P = 0.002  # lack of fit this significant widens the interval (set by knee_coverage.py)
EDGE = 1e-9  # in log N: a fit or an end this close to a measured concurrency is at it
METHOD = (
    "hinge r = a max(1, C/N), least squares on log r over every launch, N solved exactly between the "
    "measured concurrencies; interval: N's variance from each concurrency's own launch spread, Student's t "
    f"on Welch-Satterthwaite df, times the lack-of-fit ratio where lack of fit p < {LACK_OF_FIT_P:g}"
)


@dataclass(frozen=True)
class HingeFit:
    n_best: float  # the N of least RSS (the lowest C when every launch looks bent, the highest
    a: float  # when none does); a: the base overhead at it
    low: float | None  # the interval of N; None with fewer than 3 launches (no spread to read)
    high: float | None
    flat_fits: bool  # N >= the highest C (no launch past the knee) lies inside the interval
    bent_fits: bool  # N <= the lowest C (every launch past it) lies inside the interval
    rss: float
    launches: int
    concurrencies: tuple[float, ...]
    past: int  # launches at C > n_best
    lack_of_fit_p: float | None  # None without replicates at three concurrencies or more
    worst_offset: float  # the largest |mean residual| of a concurrency, as a factor - 1
    widened: float = 1.0  # the lack-of-fit ratio the interval's variance was multiplied by (1: none)

    def as_dict(self) -> dict:
        return {**asdict(self), "concurrencies": list(self.concurrencies), "method": METHOD}


class Gap(NamedTuple):
    """log N between two measured log C: the least-squares log N if it lay here (`centre`), its variance from
    the launches' spread and that variance's degrees of freedom."""

    low: float
    high: float
    centre: float
    variance: float
    df: float


def fit(launches: list[tuple[float, float]], confidence: float = CONFIDENCE) -> HingeFit | None:
    """The hinge fitted to (concurrency, ratio) launches; None with fewer than two concurrencies or a ratio
    that is not positive (a hinge needs a flat and a rising side to place N)."""
    import numpy as np

    pairs = [(float(c), float(r)) for c, r in launches if c and c > 0 and r is not None]
    if len({c for c, _ in pairs}) < 2 or any(r <= 0 for _, r in pairs):
        return None
    x = np.log([c for c, _ in pairs])
    y = np.log([r for _, r in pairs])
    found = gaps(x, y)
    m = min((min(max(g.centre, g.low), g.high) for g in found), key=lambda value: rss(x, y, value))
    m = next((float(v) for v in np.unique(x) if abs(v - m) <= EDGE), m)  # on a measured C: at it
    if len(pairs) == len(found) + 1 and len(pairs) > 2:  # one launch a concurrency: the residuals' spread
        found = gaps(x, y, rss(x, y, m) / (len(pairs) - 2))
    b = float((y - np.maximum(0.0, x - m)).mean())
    p, worst, ratio = lack_of_fit(x, y - b - np.maximum(0.0, x - m), len(pairs))
    widen = ratio if p is not None and p < LACK_OF_FIT_P and ratio > 1 else 1.0
    low, high = interval(found, m, confidence, widen, len(set(x.tolist())) - 2) if len(pairs) >= 3 else (None, None)
    return HingeFit(
        n_best=math.exp(m),
        a=math.exp(b),
        low=None if low is None else math.exp(low),
        high=None if high is None else math.exp(high),
        flat_fits=bool((high if high is not None else m) >= x.max() - EDGE),
        bent_fits=bool((low if low is not None else m) <= x.min() + EDGE),
        rss=rss(x, y, m),
        launches=len(pairs),
        concurrencies=tuple(sorted({c for c, _ in pairs})),
        past=int(np.sum(x > m + EDGE)),
        lack_of_fit_p=p,
        worst_offset=worst,
        widened=widen,
    )


def rss(x, y, m: float) -> float:
    """The residual sum of squares of the hinge at log N = m, log a at its best (the mean of y - bend)."""
    import numpy as np

    u = y - np.maximum(0.0, x - m)
    return float(((u - u.mean()) ** 2).sum())


def spreads(x, y, common: float | None = None):
    """Per measured log C: (log C, launches, mean log r, variance, its degrees of freedom). A concurrency with one
    launch takes the pooled variance of the others; with none replicated every one takes `common` (the hinge's
    residual variance) and the degrees of freedom are None (that one estimate's, n - 2, apply to the sum)."""
    import numpy as np

    xs = np.unique(x)
    groups = [y[x == value] for value in xs]
    n = np.array([len(g) for g in groups], dtype=float)
    means = np.array([g.mean() for g in groups])
    pooled_df = float((n - 1).sum())
    if not pooled_df:
        return xs, n, means, np.full(len(xs), common or 0.0), None
    pooled = float(sum(((g - g.mean()) ** 2).sum() for g in groups) / pooled_df)
    var = np.array([g.var(ddof=1) if len(g) > 1 else pooled for g in groups])
    return xs, n, means, var, np.where(n > 1, n - 1, pooled_df)


def gaps(x, y, common: float | None = None) -> list[Gap]:
    """Every gap between neighbouring measured log C, with the least-squares log N if it lay there."""
    import numpy as np

    xs, n, means, var, df = spreads(x, y, common)
    out = []
    for k in range(len(xs) - 1):
        flat, bent = slice(0, k + 1), slice(k + 1, len(xs))
        n_flat, n_bent = n[flat].sum(), n[bent].sum()
        centre = (n[flat] * means[flat]).sum() / n_flat - (n[bent] * (means[bent] - xs[bent])).sum() / n_bent
        terms = np.concatenate([n[flat] * var[flat] / n_flat**2, n[bent] * var[bent] / n_bent**2])
        variance = float(terms.sum())
        if df is None:
            dof = max(1.0, len(y) - 2.0)
        elif variance > 0:
            dofs = np.concatenate([df[flat], df[bent]])
            dof = variance**2 / float((terms**2 / (dofs + 2)).sum())
        else:
            dof = math.inf
        out.append(Gap(float(xs[k]), float(xs[k + 1]), float(centre), variance, dof))
    return out


def interval(
    found: list[Gap], m: float, confidence: float, widen: float = 1.0, lack_df: int = 0
) -> tuple[float, float]:
    """The hull of the log N whose gap's t test does not reject them: |centre - log N| <= t sqrt(variance),
    the variance times `widen` and the degrees of freedom at most `lack_df` where lack of fit widened it. Where
    every gap rejects its own log N (the fit `m` on a measured C, each neighbouring gap's least squares beyond
    it), the fit give or take the wider of its neighbouring gaps' half-widths."""
    from scipy.stats import t  # imported here: scipy takes ~0.3 s to import

    ends, around = [], []
    for gap in found:
        dof = min(gap.df, lack_df) if widen > 1 and lack_df > 0 else gap.df
        half = float(t.ppf(0.5 + confidence / 2, dof)) * math.sqrt(gap.variance * widen) if gap.variance > 0 else 0.0
        low, high = max(gap.low, gap.centre - half), min(gap.high, gap.centre + half)
        if low <= high:
            ends += [low, high]
        if gap.low - EDGE <= m <= gap.high + EDGE:
            around.append(half)
    if not ends:
        ends = [max(found[0].low, m - max(around)), min(found[-1].high, m + max(around))]
    return min(ends), max(ends)


def lack_of_fit(x, residuals, n: int) -> tuple[float | None, float, float]:
    """(p of the lack-of-fit F test, the largest |mean residual| of a concurrency as a factor - 1, the F ratio):
    how far the concurrencies' means stray from the hinge against how far their launches stray from each other.
    The p needs replicates (n > k) and three concurrencies or more (k - 2 > 0 degrees of freedom)."""
    import numpy as np

    groups = [residuals[x == value] for value in np.unique(x)]
    means = np.array([g.mean() for g in groups])
    worst = float(math.exp(float(np.abs(means).max())) - 1)
    k = len(groups)
    if k < 3 or n <= k:
        return None, worst, 1.0
    pure = float(sum(((g - g.mean()) ** 2).sum() for g in groups))
    lack = float(sum(len(g) * g.mean() ** 2 for g in groups))
    if pure <= 0:
        return (0.0 if lack > 1e-12 else 1.0), worst, (math.inf if lack > 1e-12 else 1.0)
    from scipy.stats import f

    statistic = (lack / (k - 2)) / (pure / (n - k))
    return float(f.sf(statistic, k - 2, n - k)), worst, statistic
