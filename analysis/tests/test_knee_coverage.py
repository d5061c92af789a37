"""The knee interval's coverage shown, not assumed (knee_coverage.py): sweeps with a known pool and overheads,
each concurrency's launches spread as the maxthreads reference's were, fitted by the suite's own rule on the
reference's coarse grid and on a fine one; the 95 % interval must hold the knee they predict (pool x a / a_past)
in 93 to 97 % of them. The pooled profile-likelihood interval over a grid of log N (one residual variance for
every concurrency, at least a grid step each way) is simulated too, and must fail the band, so the test can tell
the two apart. A fixed seed makes every figure the same on every run."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import f

from crossbench_analysis.judge import hinge, knee_coverage
from crossbench_analysis.judge.knee_rule import judge

SWEEPS = 1000  # per grid: a coverage of 95 % read to +-0.7 % (one standard error)
BAND = (0.93, 0.97)
GRID_STEP = 0.0005  # the pooled rule's grid of log N
REPO = Path(__file__).resolve().parents[2]
COVERAGE = REPO / "docs" / "results" / "maxthreads" / "knee-coverage.json"


def pooled_profile(launches):
    """judge's knee with its fit's interval replaced by the pooled profile-likelihood one: {N: RSS(N) <= RSS_min
    (1 + F(0.95; 1, n - 2) / (n - 2))} over a grid of log N, widened to the grid points around a single one."""
    knee = judge(launches)
    x, y = np.log([c for c, _ in launches]), np.log([r for _, r in launches])
    grid = np.unique(np.concatenate([np.arange(x.min(), x.max(), GRID_STEP), x]))
    bend = np.maximum(0.0, x[None, :] - grid[:, None])
    u = y[None, :] - bend
    rss = ((u - u.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    n = len(y)
    within = np.flatnonzero(rss <= rss.min() * (1 + f.ppf(0.95, 1, n - 2) / (n - 2)) + 1e-15)
    first, last = within[0], within[-1]
    if first == last:
        first, last = max(0, first - 1), min(len(grid) - 1, last + 1)
    return replace(knee, fit=replace(knee.fit, low=math.exp(grid[first]), high=math.exp(grid[last])))


@pytest.fixture(scope="module")
def noise():
    return knee_coverage.reference_noise()


def test_the_reference_gives_spreads_on_both_sides_and_overheads_for_every_pool(noise):
    assert len(noise["flat"]) >= 10 and len(noise["past"]) >= 10 and len(noise["overheads"]) == 5
    assert max(noise["past"]) > 3 * float(np.median(noise["flat"]))  # the queue's side spreads more


@pytest.mark.parametrize("grid", sorted(knee_coverage.GRIDS))
def test_the_knee_interval_holds_the_predicted_knee_95_percent_of_the_time(noise, grid):
    found = knee_coverage.covered(grid, SWEEPS, seed=3, noise=noise)
    assert BAND[0] <= found["interval_coverage"] <= BAND[1], found
    assert found["stated_fitted"] == SWEEPS  # every sweep's knee stated as a number here
    assert BAND[0] <= found["stated_coverage"] <= BAND[1], found


@pytest.mark.parametrize("grid", sorted(knee_coverage.GRIDS))
def test_one_pooled_variance_over_a_grid_of_log_n_fails_the_band(noise, grid):
    found = knee_coverage.covered(grid, SWEEPS // 4, seed=3, noise=noise, rule=pooled_profile)
    assert found["interval_coverage"] < BAND[0], found


def test_methods_states_the_committed_study():
    """docs/methods.md states each grid's coverage as docs/results/maxthreads/knee-coverage.json holds it, and
    that file is the study as the module runs it (its sweeps and its grids)."""
    committed = json.loads(COVERAGE.read_text())
    assert [g["grid"] for g in committed["grids"]] == list(knee_coverage.GRIDS)
    assert all(g["sweeps"] == knee_coverage.SWEEPS for g in committed["grids"])
    methods = (REPO / "docs" / "methods.md").read_text()
    for g in committed["grids"]:
        assert BAND[0] <= g["interval_coverage"] <= BAND[1], g
        assert f"{100 * g['interval_coverage']:.1f} %" in methods, f"methods.md does not state {g['grid']}'s coverage"
    replay = committed["replayed"]
    assert (
        f"{100 * replay['interval_coverage']:.1f} % of sweeps, {100 * replay['widened_share']:.0f} % of them" in methods
    )


def test_the_reference_replayed_needs_the_widening_for_lack_of_fit(noise, monkeypatch):
    """Sweeps replayed from each reference pool's own means, whose overheads drift with C: the interval holds the
    knee those means predict in at least 93 % of them, and without the lack-of-fit widening it would not."""
    widened = knee_coverage.replayed(SWEEPS // 2, seed=3, noise=noise)
    assert widened["interval_coverage"] >= BAND[0] and widened["widened_share"] > 0.1, widened
    monkeypatch.setattr(hinge, "LACK_OF_FIT_P", 0.0)
    assert knee_coverage.replayed(SWEEPS // 2, seed=3, noise=noise)["interval_coverage"] < BAND[0]
