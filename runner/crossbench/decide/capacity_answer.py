"""A capacity search's answer, as capacity.json keeps it (capacity.Search over the run's records): per setting,
the highest rate shown to hold over the long launch (over the short ones where none ran), the bracket up to the
lowest rate shown to fail in any window, an estimate only where launches at one rate disagreed, and how far the held
rate moves between sittings (capacity_spread.py), said beside the bracket and never widening it.

Nothing is stated above a rate that failed its long window nor above a ceiling the run knows: a pool's size over
its delay (Little's law: N workers each held the delay answer at most N / delay) and the generator's measured
ceiling. A 4 s window at exactly a pool's rate may hold where a 60 s one does not (the queue is critically loaded),
so a long launch's failure is a failure, whatever the short launches at that rate said.

Also what a request cost at the rate that held, and a plateau where a tail, not a capacity, set the target."""

from __future__ import annotations

import math

from crossbench.decide import capacity_fit, capacity_spread
from crossbench.decide.capacity import (
    CEILING,
    FAIL,
    OPENED_IN_WINDOW,
    PASS,
    SATURATED,
    UNDECIDED,
    Search,
    Trial,
    answered_offer,
    launch_holds,
    searches,
)
from crossbench.figures import points
from crossbench.plan.experiment_schema import Experiment

# A plateau, not a capacity (plateau()): p99 at the first failing rate under this many times the first passing one's,
# with the server's cores under this percent busy and every offered request answered
PLATEAU_RISE = 1.25
PLATEAU_CPU = 80.0


def long_failures(out: dict) -> list[float]:
    """The rates whose long launch did not hold."""
    return [c["rate"] for c in out.get("confirmations") or () if not c["held"]]


def fails(out: dict) -> float | None:
    """The lowest rate shown to fail: every short launch there failed, or its long launch did."""
    rates = [t["rate"] for t in out["trials"] if t["verdict"] == FAIL] + long_failures(out)
    return min(rates) if rates else None


def known_ceiling(out: dict) -> tuple[float, str] | None:
    """(rate, what) the run knows the setting cannot pass: its pool's size over the delay, the generator's
    measured ceiling; the lower of the two, None without either."""
    known = []
    if out.get("predicted_rps"):
        known.append((out["predicted_rps"], f"its pool: {out['parallel_limit']} / {out['delay_ms']} ms"))
    if out.get("generator_rps"):
        known.append((out["generator_rps"], "the load generator's measured ceiling"))
    return min(known) if known else None


def held(out: dict) -> tuple[float, float | None] | None:
    """(rate, window_s): the highest rate a long launch held under every rate shown to fail and every known
    ceiling; without one, the highest whose short launches all held (window None). None where nothing held."""
    top = min(fails(out) or math.inf, (known_ceiling(out) or (math.inf,))[0] * (1 + 1e-9))
    long = [c["rate"] for c in out.get("confirmations") or () if c["held"] and c["rate"] < top]
    if long:
        return max(long), out.get("confirm_s")
    short = [t["rate"] for t in out["trials"] if t["verdict"] == PASS and t["rate"] < top]
    return (max(short), None) if short else None


def held_rps(out: dict) -> float | None:
    """The rate to read as held (held())."""
    found = held(out)
    return found[0] if found else None


def bracket(out: dict) -> tuple[float | None, float | None]:
    """(held, the lowest rate shown to fail) as an outcome states them, or from its rates tried where it was saved
    without them."""
    if "held_rps" in out:
        return out["held_rps"], out.get("fails_rps")
    return held_rps(out), fails(out)


def confirmed_rps(out: dict) -> float | None:
    """The rate a search's long launch held; None when none held or none ran."""
    found = held(out)
    return found[0] if found and found[1] else None


def cap(out: dict) -> tuple[float, str] | None:
    """(rate, why): what no estimate may pass: the lowest rate that failed its long window or a known ceiling."""
    limits = [(rate, f"failed its {out.get('confirm_s') or 0:g} s launch") for rate in long_failures(out)]
    limits += [known_ceiling(out)] if known_ceiling(out) else []
    return min(limits) if limits else None


def mixed_rates(launches: list[tuple[float, bool]]) -> list[float]:
    """The rates where some launches held and some did not."""
    return sorted({rate for rate, holds in launches if holds} & {rate for rate, holds in launches if not holds})


def estimate(out: dict, launches: list[tuple[float, bool]]) -> tuple[dict | None, str]:
    """(estimate, why none): where holding becomes as likely as not (capacity_fit, long launches counted), only
    where launches at one rate disagreed, its interval never above cap(); none where it would sit at or above it."""
    mixed = mixed_rates(launches)
    if not mixed:
        return None, "no rate with launches that disagree: the bracket is the answer"
    fitted = capacity_fit.estimate(launches)
    if fitted is None:
        return None, "launches that disagree but never cross one half"
    limit = cap(out)
    if limit and fitted.rate >= limit[0]:
        return None, (
            f"its launches place it at or above {points.sig(limit[0], commas=True)} req/s, which "
            f"{limit[1] if limit[1].startswith('failed') else 'is ' + limit[1]}"
        )
    found = fitted.as_dict()
    if limit and found["ci95_high"] > limit[0]:
        found["ci95_high"] = round(limit[0], 3)
    return {**found, "mixed_rps": mixed, "cap_rps": limit[0] if limit else None}, ""


def cost(trial: Trial, launches: list[dict]) -> dict:
    """What a request cost at a rate, each figure with its interval over the launches: ms of the server's CPU a
    request (its process tree's CPU over the answers per second), peak RSS, threads, database connections. A
    search decides its own launches (a precision target beside it is refused), so its figures take the fixed rule."""

    def per_request(r):
        cpu, rps = r.get("cpu_percent"), r.get("rps")
        return cpu * 10 / rps if isinstance(cpu, (int, float)) and rps else None

    figures = {
        "cpu_ms_per_request": points.figure_of(points.launch_values(launches, per_request), points.FIXED),
        "rss_peak_mb": trial.point["figures"].get("rss_peak_mb"),
        "threads_peak": trial.point["figures"].get("threads_peak"),
        "db_connections_peak": points.figure_of(points.launch_values(launches, "db_pool_active_peak"), points.FIXED),
    }
    return {name: figure for name, figure in figures.items() if figure}


def counted_launches(trial: Trial, by_cell: dict[str, dict]) -> list[dict]:
    """A rate's launches that count for its verdict (not left out for the generator or the connections)."""
    launches = [by_cell[c] for c in trial.point["cells"] if c in by_cell]
    return [r for r in launches if not {SATURATED, OPENED_IN_WINDOW} & set(r.get("flags") or ())]


def held_launches(search: Search, by_cell: dict[str, dict]) -> list[tuple[float, bool]]:
    """(rate, held) for every counted launch of the search below the generator's ceiling, the long ones too."""
    tried = [t for t in search.trials if t.verdict != CEILING] + list(search.confirmations)
    return [
        (t.rate, launch_holds(r, t.rate, search.spec, search.target_ms) is None)
        for t in tried
        for r in counted_launches(t, by_cell)
    ]


def median_p99(trial: Trial, by_cell: dict[str, dict]) -> float | None:
    values = sorted(points.launch_values(counted_launches(trial, by_cell), "latency_ms.p99"))
    return values[len(values) // 2] if values else None


def plateau(search: Search, by_cell: dict[str, dict]) -> dict | None:
    """A target set by a tail that does not grow with the rate, not by a capacity: at the lowest rate shown to
    fail every launch answered its offer, the server's CPU stayed under PLATEAU_CPU of its cores, and p99 was less
    than PLATEAU_RISE times the one at the lowest rate shown to hold. None otherwise."""
    failed = search.failed
    passed = next((t for t in search.trials if t.verdict == PASS), None)
    if not (passed and failed and passed.rate < failed.rate):
        return None
    at_fail = counted_launches(failed, by_cell)
    cores = [len(r.get("server_cpus") or ()) or 1 for r in at_fail]
    cpu = [r["cpu_percent"] / c for r, c in zip(at_fail, cores) if isinstance(r.get("cpu_percent"), (int, float))]
    answered = all(answered_offer(r, failed.rate, search.spec) for r in at_fail)
    low, high = median_p99(passed, by_cell), median_p99(failed, by_cell)
    if not (at_fail and cpu and answered and low and high) or max(cpu) >= PLATEAU_CPU or high >= PLATEAU_RISE * low:
        return None
    flat = [
        v
        for t in search.trials
        if t.verdict in (PASS, FAIL, UNDECIDED) and t.rate <= failed.rate
        for v in [median_p99(t, by_cell)]
        if v is not None
    ]
    return {
        "p99_ms": [round(min(flat), 1), round(max(flat), 1)],
        "from_rps": min(t.rate for t in search.trials),
        "to_rps": failed.rate,
        "rise": round(high / low, 3),
        "cpu_percent_max": round(max(cpu), 1),
    }


def search_dict(search: Search, by_cell: dict[str, dict]) -> dict:
    """What the search did: its setting, its short launches' bracket, its long launches and every rate tried
    with its verdict and how many of its launches held."""
    passed, failed, ceiling, first = search.passed, search.failed, search.ceiling, search.first
    return {
        "series": search.series,
        "group": search.group,
        "server": first.get("server"),
        "setting": first.get("setting"),
        "endpoint": first.get("endpoint"),
        "delay_ms": first.get("delay_ms"),
        "concurrency": first.get("concurrency"),
        "parallel_limit": first.get("parallel_limit"),
        "keepalive": first.get("keepalive"),
        "predicted_rps": predicted(first),
        "generator_rps": search.generator_rps,
        "target_p99_ms": search.target_ms,
        "status": search.status(),
        "passed_rps": passed.rate if passed else None,
        "failed_rps": failed.rate if failed else None,
        "failed_verdict": failed.verdict if failed else None,
        "ceiling_rps": ceiling.rate if ceiling else None,
        "resolution": search.resolution,
        "generator": search.spec.generator,
        "confirm_s": search.spec.confirm_s,
        "confirmation": confirmation_dict(search.confirmation) if search.confirmation else None,
        "confirmations": [confirmation_dict(t) for t in search.confirmations],
        "plateau": plateau(search, by_cell),
        "top_rps": search.top,
        "trials": [
            {
                "rate": t.rate,
                "verdict": t.verdict,
                "why": t.why,
                "n": t.n,
                "point_id": t.point["point_id"],
                "held": sum(
                    launch_holds(r, t.rate, search.spec, search.target_ms) is None for r in counted_launches(t, by_cell)
                ),
                "cells": t.point["cells"],
            }
            for t in search.trials
        ],
    }


def outcome(search: Search, records: list[dict], machine: str | None = None) -> dict:
    """A search's answer (module docstring): what it did (search_dict), then what held and for how long, the
    lowest failure, the ceiling it knows, the estimate where one is supported, the spread between sittings of
    the setting on `machine` (default: this one), and the cost at the rate that held."""
    by_cell = {r["cell_id"]: r for r in records}
    out = search_dict(search, by_cell)
    found, failure, ceiling = held(out), fails(out), known_ceiling(out)
    fitted, why_none = estimate(out, held_launches(search, by_cell))
    spread = capacity_spread.for_setting(search.series, machine)
    at = next((t for t in search.trials + search.confirmations if found and t.rate == found[0]), None)
    return {
        **out,
        "held_rps": found[0] if found else None,
        "held_s": found[1] if found else None,
        "fails_rps": failure,
        "fails_s": out["confirm_s"] if failure in long_failures(out) else None,
        "known_ceiling_rps": ceiling[0] if ceiling else None,
        "known_ceiling": ceiling[1] if ceiling else None,
        "estimate": fitted,
        "estimate_why": why_none,
        "spread": spread.as_dict() if spread else None,
        "spread_wider": bool(spread and found and failure and spread.moves > failure / found[0] - 1),
        "cost": cost(at, [by_cell[c] for c in at.point["cells"] if c in by_cell]) if at else {},
        "passed_p99_ms": at.point["figures"].get("latency_ms.p99") if at else None,
    }


def confirmation_dict(trial: Trial) -> dict:
    return {"rate": trial.rate, "held": trial.verdict == PASS, "why": trial.why, "cells": trial.point["cells"]}


def predicted(point: dict) -> float | None:
    """The rate the server's parallel limit allows (Little's law: limit / delay); None where waiting holds
    nothing."""
    limit, delay = point.get("parallel_limit"), point.get("delay_ms")
    return limit * 1000 / delay if limit and delay else None


def outcomes(records: list[dict], experiment: Experiment, machine: str | None = None) -> list[dict]:
    return [outcome(search, records, machine) for search in searches(records, experiment)]
