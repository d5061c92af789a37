"""How often the knee's interval holds the knee, by simulation through the suite's own fit (knee_rule.judge, which
calls hinge.fit): sweeps with a known pool N and overheads a (the flat side) and a_past (per C / N past it), so a
known knee N a / a_past, drawn with three launches a concurrency whose log spread is one of those the maxthreads
reference measured on that side of its pool, and the overheads a pair that reference measured. Fitted on a coarse
grid (the reference's: doubling from 25 to 1000, its five pools) and on a fine one (every 25 to 50 clients
around a pool of 200), counting how often the fit's interval holds N a / a_past, and how often what a finding
states (the interval of a fitted knee, the bracket otherwise) does. Replayed besides: each reference pool's own
measured concurrency means as the truth, whose overheads drift with C as the real ones do (the hinge does not fit
them exactly, so the lack-of-fit widening is at work), with the same launch spreads; the knee they predict is
their overheads' pool x a / a_past.

A fixed seed makes every figure the same on every run. `python -m crossbench_analysis.judge.knee_coverage
--out FILE` runs the full study and writes its result as JSON."""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

from .knee_rule import judge
from .knees import overheads

REFERENCE = Path(__file__).resolve().parents[3] / "docs" / "results" / "maxthreads" / "runs" / "maxthreads-delay"
LAUNCHES = 3
GRIDS = {
    "coarse": ((25, 50, 100, 200, 400, 800, 1000), (50, 100, 200, 400, 800)),
    "fine": ((100, 125, 150, 175, 200, 225, 250, 300, 350, 400), (200,)),
}
SWEEPS = 4000  # per grid: a coverage of 95 % is read to +-0.35 % (one standard error)


def reference_noise(run: Path = REFERENCE) -> dict:
    """From a maxthreads run's points.jsonl: the log spread (sd of the launches' logs) of every concurrency of
    every pool's latency ratio, at or under its pool (flat) and past it, and each pool's overheads (a, a_past)."""
    import numpy as np

    by_pool: dict[float, dict[float, list[float]]] = defaultdict(dict)
    for line in (run / "points.jsonl").read_text().splitlines():
        point = json.loads(line) if line.strip() else {}
        found = (point.get("figures") or {}).get("latency_ratio") or {}
        pool = point.get("parallel_limit")
        if pool and len(found.get("launches") or []) > 1:
            by_pool[pool][point["concurrency"]] = [math.log(v) for v in found["launches"]]
    flat, past, pairs = [], [], []
    for pool, by_c in by_pool.items():
        for c, logs in by_c.items():
            (flat if c <= pool else past).append(float(np.std(logs, ddof=1)))
        found = overheads(pool, [(c, math.exp(sum(v) / len(v))) for c, v in by_c.items()])
        if found is not None:
            pairs.append((found.a, found.a_past))
    return {"flat": flat, "past": past, "overheads": pairs}


def sweep(rng, concurrencies, pool: float, a: float, a_past: float, noise: dict) -> list[tuple[float, float]]:
    """One simulated sweep's (concurrency, latency ratio) launches: r = max(a, a_past C / pool), each
    concurrency's launches spread by a log sd drawn from the reference's on its side of the knee."""
    knee = pool * a / a_past
    out = []
    for c in concurrencies:
        side = noise["flat"] if c <= knee else noise["past"]
        sd = side[int(rng.integers(len(side)))]
        mean = a if c <= knee else a_past * c / pool
        out += [(c, mean * math.exp(float(rng.normal(0.0, sd)))) for _ in range(LAUNCHES)]
    return out


def covered(grid: str, sweeps: int = SWEEPS, seed: int = 1, noise: dict | None = None, rule=judge) -> dict:
    """The share of simulated sweeps on `grid` whose fit interval holds N a / a_past, and of those whose stated
    answer (a fitted knee's interval, else its bracket) holds it; `rule` takes launches, returns a Knee."""
    import numpy as np

    noise = noise or reference_noise()
    concurrencies, pools = GRIDS[grid]
    rng = np.random.default_rng(seed)
    held = stated = stated_held = fitted = 0
    widths = []
    for i in range(sweeps):
        pool = pools[i % len(pools)]
        a, a_past = noise["overheads"][int(rng.integers(len(noise["overheads"])))]
        truth = pool * a / a_past
        knee = rule(sweep(rng, concurrencies, pool, a, a_past, noise))
        fit = knee.fit
        if fit is not None and fit.low is not None:
            held += fit.low <= truth <= fit.high
            widths.append(math.log(fit.high / fit.low))
        if knee.status in ("fitted", "bracket"):
            low, high = (knee.low, knee.high) if knee.status == "fitted" else knee.bracket
            stated += 1
            fitted += knee.status == "fitted"
            stated_held += low <= truth <= high
    return {
        "grid": grid,
        "concurrencies": list(concurrencies),
        "pools": list(pools),
        "sweeps": sweeps,
        "launches_each": LAUNCHES,
        "seed": seed,
        "interval_coverage": held / sweeps,
        "stated": stated,
        "stated_fitted": fitted,
        "stated_coverage": stated_held / stated if stated else None,
        "median_width_pct": 100 * (math.exp(float(np.median(widths))) - 1) if widths else None,
    }


def reference_means(run: Path = REFERENCE) -> dict[float, dict[float, float]]:
    """Each pool's mean log latency ratio at each concurrency of a maxthreads run's points.jsonl."""
    out: dict[float, dict[float, float]] = defaultdict(dict)
    for line in (run / "points.jsonl").read_text().splitlines():
        point = json.loads(line) if line.strip() else {}
        found = (point.get("figures") or {}).get("latency_ratio") or {}
        if point.get("parallel_limit") and found.get("launches"):
            logs = [math.log(v) for v in found["launches"]]
            out[point["parallel_limit"]][point["concurrency"]] = sum(logs) / len(logs)
    return dict(out)


def replayed(sweeps: int = SWEEPS, seed: int = 1, noise: dict | None = None) -> dict:
    """The share of sweeps replayed from the reference's own means (one pool after another, launches spread as
    the reference's were) whose fit interval holds the knee those means predict, and how many were widened."""
    import numpy as np

    noise = noise or reference_noise()
    means = reference_means()
    pools = sorted(means)
    rng = np.random.default_rng(seed)
    held = widened = 0
    for i in range(sweeps):
        pool = pools[i % len(pools)]
        truth = overheads(pool, [(c, math.exp(m)) for c, m in means[pool].items()]).predicted
        launches = []
        for c, m in sorted(means[pool].items()):
            side = noise["flat"] if c <= pool else noise["past"]
            sd = side[int(rng.integers(len(side)))]
            launches += [(c, math.exp(m + float(rng.normal(0.0, sd)))) for _ in range(LAUNCHES)]
        fit = judge(launches).fit
        held += fit.low <= truth <= fit.high
        widened += fit.widened > 1
    return {
        "grid": "reference means",
        "pools": pools,
        "sweeps": sweeps,
        "launches_each": LAUNCHES,
        "seed": seed,
        "interval_coverage": held / sweeps,
        "widened_share": widened / sweeps,
    }


def study(sweeps: int = SWEEPS, seed: int = 1) -> dict:
    """The full study: every grid, with the noise and overheads of the reference it draws from."""
    noise = reference_noise()
    return {
        "confidence": 0.95,
        "noise_from": str(REFERENCE.relative_to(REFERENCE.parents[4])),
        "flat_sd_range": [min(noise["flat"]), max(noise["flat"])],
        "past_sd_range": [min(noise["past"]), max(noise["past"])],
        "grids": [covered(grid, sweeps, seed, noise) for grid in GRIDS],
        "replayed": replayed(sweeps, seed, noise),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="the knee interval's coverage, simulated (knee_coverage.py)")
    parser.add_argument("--out", type=Path, help="write the result here as JSON (default: print it)")
    parser.add_argument("--sweeps", type=int, default=SWEEPS, help=f"sweeps per grid (default {SWEEPS})")
    args = parser.parse_args(argv)
    if args.sweeps < 1:
        parser.error(f"--sweeps must be at least 1, not {args.sweeps}")
    text = json.dumps(study(args.sweeps), indent=2) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
