"""The hinge a pool of N parallel slots puts into a closed-loop delay sweep, fitted over every launch: C clients
served a delay d by N slots see mean latency / d = a * max(1, C / N) (a, about 1.00-1.05, is the base
overhead). On logs, log r = log a + max(0, log C - log N): for a fixed N the best log a is a mean, so the fit
profiles the residual sum of squares over a fine log grid of N between the lowest and the highest concurrency
measured (beyond them it is constant: every launch flat, or every launch bent) and takes its least. The interval
of N is the profile-likelihood one, {N: RSS(N) <= RSS_min (1 + F(0.95; 1, n - 2) / (n - 2))}; the lack-of-fit
test sets the hinge's residuals against the launches' own spread at each concurrency. Pure numbers in, numbers
out; knees.py says what they mean."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

CONFIDENCE = 0.95
GRID_STEP = 0.0005          # in log N: 0.05 %, far finer than any interval the launches give
METHOD = ("hinge r = a max(1, C/N), least squares on log r over every launch, N profiled on a log grid; "
          "interval: profile likelihood, F(0.95; 1, n-2)")


@dataclass(frozen=True)
class HingeFit:
    n_best: float                  # the N of least RSS (the lowest C when every launch looks bent, the highest
    a: float                       # when none does); a: the base overhead at it
    low: float | None              # the profile interval of N; None with fewer than 3 launches (no residual df)
    high: float | None
    flat_fits: bool                # N >= the highest C (no launch past the knee) lies inside the interval
    bent_fits: bool                # N <= the lowest C (every launch past it) lies inside the interval
    rss: float
    launches: int
    concurrencies: tuple[float, ...]
    past: int                      # launches at C > n_best
    lack_of_fit_p: float | None    # None without replicates at three concurrencies or more
    worst_offset: float            # the largest |mean residual| of a concurrency, as a factor - 1

    def as_dict(self) -> dict:
        return {**asdict(self), "concurrencies": list(self.concurrencies), "method": METHOD}


def fit(launches: list[tuple[float, float]], confidence: float = CONFIDENCE) -> HingeFit | None:
    """The hinge fitted to (concurrency, ratio) launches; None with fewer than two concurrencies or a ratio
    that is not positive (a hinge needs a flat and a rising side to place N)."""
    import numpy as np
    pairs = [(float(c), float(r)) for c, r in launches if c and c > 0 and r is not None]
    if len({c for c, _ in pairs}) < 2 or any(r <= 0 for _, r in pairs):
        return None
    x = np.log([c for c, _ in pairs])
    y = np.log([r for _, r in pairs])
    grid = profile_grid(x)
    rss, b = profile(x, y, grid)
    best = int(np.argmin(rss))
    low, high = interval(grid, rss, rss[best], len(pairs), confidence)
    m = float(grid[best])
    fitted = b[best] + np.maximum(0.0, x - m)
    p, worst = lack_of_fit(x, y - fitted, len(pairs))
    edge = GRID_STEP / 2
    return HingeFit(
        n_best=math.exp(m), a=math.exp(float(b[best])), low=None if low is None else math.exp(low),
        high=None if high is None else math.exp(high),
        flat_fits=bool((high if high is not None else m) >= x.max() - edge),
        bent_fits=bool((low if low is not None else m) <= x.min() + edge), rss=float(rss[best]), launches=len(pairs),
        concurrencies=tuple(sorted({c for c, _ in pairs})), past=int(np.sum(x > m + edge)), lack_of_fit_p=p,
        worst_offset=worst)


def profile_grid(x):
    """Log N from the lowest to the highest log C, every GRID_STEP, and each measured log C itself."""
    import numpy as np
    steps = max(2, math.ceil((x.max() - x.min()) / GRID_STEP) + 1)
    return np.unique(np.concatenate([np.linspace(x.min(), x.max(), steps), x]))


def profile(x, y, grid):
    """RSS and the best log a at each log N of the grid: log a is the mean of y - max(0, x - log N)."""
    import numpy as np
    bend = np.maximum(0.0, x[None, :] - grid[:, None])
    b = (y[None, :] - bend).mean(axis=1)
    residual = y[None, :] - bend - b[:, None]
    return (residual ** 2).sum(axis=1), b


def interval(grid, rss, rss_min: float, n: int, confidence: float) -> tuple[float | None, float | None]:
    """The hull of the log N whose RSS is within the profile-likelihood bound; (None, None) with n < 3."""
    if n < 3:
        return None, None
    from scipy.stats import f  # imported here: scipy takes ~0.3 s to import
    bound = rss_min * (1 + float(f.ppf(confidence, 1, n - 2)) / (n - 2))
    within = rss <= bound + 1e-12 * max(1.0, rss_min)        # exact data: the float noise of a zero RSS
    first, last = int(within.argmax()), len(within) - 1 - int(within[::-1].argmax())
    if first == last:       # narrower than the grid (launches on the hinge): it lies within the neighbours
        first, last = max(0, first - 1), min(len(grid) - 1, last + 1)
    return float(grid[first]), float(grid[last])


def lack_of_fit(x, residuals, n: int) -> tuple[float | None, float]:
    """(p of the lack-of-fit F test, the largest |mean residual| of a concurrency as a factor - 1): how far the
    concurrencies' means stray from the hinge against how far their launches stray from each other. The p
    needs replicates (n > k) and three concurrencies or more (k - 2 > 0 degrees of freedom)."""
    import numpy as np
    groups = [residuals[x == value] for value in np.unique(x)]
    means = np.array([g.mean() for g in groups])
    worst = float(math.exp(float(np.abs(means).max())) - 1)
    k = len(groups)
    if k < 3 or n <= k:
        return None, worst
    pure = float(sum(((g - g.mean()) ** 2).sum() for g in groups))
    lack = float(sum(len(g) * g.mean() ** 2 for g in groups))
    if pure <= 0:
        return (0.0 if lack > 1e-12 else 1.0), worst
    from scipy.stats import f
    statistic = (lack / (k - 2)) / (pure / (n - k))
    return float(f.sf(statistic, k - 2, n - k)), worst
