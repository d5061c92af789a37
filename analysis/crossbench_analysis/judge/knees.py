"""Where each server setting's delay sweep bends, next to what its parallel limit predicts (Tomcat's maxThreads,
gunicorn's workers on a blocking endpoint): `settings_knees` groups a run's cell records by setting and judges
each by knee_rule (the hinge fitted over every launch, hinge.py), with the seed's ratio judged the same way.
Analysis computes them from the records every time it runs (maxthreads.py keeps them as charts/data/knees.jsonl),
so an old run re-analysed gets today's rule."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from crossbench import stats
from crossbench.figures import service_time
from crossbench.figures.points import CAVEATS, counted, point_id
from crossbench_analysis.read.runinfo import offered_rate
from crossbench_analysis.read.setting import EXECUTOR_KNOB, pool_size, setting, setting_order, sweeps_pool

from .knee_rule import MARGIN, Knee, c_text, judge, knee_text

THRESHOLD = MARGIN  # the name the charts and findings draw the 1.1 line by
KNEES_FILE = "knees.jsonl"
# The edge-bias-free ratio first (mean latency / delay); the seed's window count when a record lacks it. The seed's
# ratio is also judged on its own: only it sees clients that wait outside the server (past maxConnections and the
# accept queue they get no answer, so no latency), and the knee record says when the two disagree.
RATIO_FIELDS = ("latency_ratio", "efficiency_ratio")
DISAGREEMENT = 0.25  # fitted knees further apart than this (relative), or one bent and the other not
DECIDED = {"fitted", "bracket", "below_range", "not_reached"}


class Overheads(NamedTuple):
    """What a request of a pool's sweep pays beside the delay, on either side of the pool. a: the ratio's
    geometric mean at C <= pool (the delay plus what a request pays beside it); a_past: the geometric mean of
    ratio / (C / pool) past the pool (what each round of the queue adds beyond the delay). The part of a request's
    time beyond the delay that holds no thread (the client's and the network's share) is paid once on the flat
    side, not per round of the queue, so a > a_past; a hinge with one a then puts N at pool x a / a_past
    (`predicted`), not at the pool."""

    pool: float
    a: float
    a_past: float
    predicted: float


def overheads(pool: float | None, ratios: list[tuple[float, float]]) -> Overheads | None:
    """A pool's Overheads from its sweep's (concurrency, ratio) points; None without a pool or points on both
    sides of it."""
    if not pool:
        return None
    flat = [ratio for c, ratio in ratios if c <= pool]
    past = [ratio * pool / c for c, ratio in ratios if c > pool]
    if not flat or not past or min(flat + past) <= 0:
        return None
    a, a_past = (math.exp(sum(map(math.log, values)) / len(values)) for values in (flat, past))
    return Overheads(pool, a, a_past, pool * a / a_past)


def overheads_record(found: Overheads | None) -> dict | None:
    """Overheads as knees.jsonl keeps them (rounded)."""
    if found is None:
        return None
    return {"a": round(found.a, 5), "a_past": round(found.a_past, 5), "predicted": round(found.predicted, 2)}


def fit_record(knee: Knee) -> dict | None:
    """The fit as knees.jsonl keeps it (rounded), None with fewer than two concurrencies."""
    if knee.fit is None:
        return None
    out = knee.fit.as_dict()
    for key in ("n_best", "a", "low", "high", "rss", "worst_offset", "widened"):
        if out[key] is not None:
            out[key] = round(out[key], 6 if key == "rss" else 4)
    return {**out, "indicative": knee.indicative}


@dataclass
class SettingKnee:
    """One line of knees.jsonl."""

    group: str
    endpoint: str
    delay_ms: int
    server: str
    executor: str | None
    max_threads: int | None
    setting: str  # the record's setting: "tomcat maxThreads=200", "tornado p2", ...
    predicted: int | None  # the parallel limit (pool size); none where waiting holds nothing
    knee_concurrency: float | None  # the fitted N where one is stated (fitted, or a bracket's indicative fit)
    status: str  # judge's: fitted, bracket, not_reached, below_range, not_resolved, ...
    text: str
    ratio_used: str
    threshold: float  # MARGIN: a bend under it at an end of the range is no knee
    max_concurrency: int
    knee_vs_predicted: float | None
    threads_peak_max: int | None  # the thread plateau of this setting over all its cells
    knee_low: float | None = None  # the fitted N's 95 % interval (status fitted)
    knee_high: float | None = None
    bracket: list[float] | None = None  # the measured concurrencies that hold it (status bracket)
    fit: dict | None = None  # the hinge fit (hinge.HingeFit) over every launch
    seed_ratio_knee: float | None = None  # the knee on the seed's efficiency_ratio, by the same fit
    seed_ratio_status: str | None = None
    disagreement: str | None = None  # why the two ratios' knees differ, when they do
    overheads: dict | None = None  # a, a_past and the N they predict, maxThreads x a / a_past (Overheads)
    points: list[dict] = field(default_factory=list)
    left_out: list[dict] = field(default_factory=list)  # concurrencies whose point is not valid: not fitted


def jdk_feature(record: dict) -> str | None:
    """The feature version of the JDK a Tomcat cell ran on ("25" from server_settings.jdk "25.0.2")."""
    version = str((record.get("server_settings") or {}).get("jdk") or "")
    return version.split(".")[0] or None


def jdks_vary(records: list[dict]) -> bool:
    """Tomcat cells on more than one JDK (a run that sets one against another): their labels then say which."""
    return len({jdk_feature(r) for r in records if sweeps_pool(r)}) > 1


def setting_label(record: dict, with_jdk: bool = False) -> str:
    """The record's setting ('tomcat maxThreads=200', 'tornado p2'), with ', JDK 25' when the run's JDKs vary
    and the setting does not name it already."""
    label = setting(record)
    if with_jdk and sweeps_pool(record) and f"JDK {jdk_feature(record)}" not in label:
        return f"{label}, JDK {jdk_feature(record)}"
    return label


def setting_key(record: dict, with_jdk: bool = False) -> tuple:
    return (record["group"], record["endpoint"], record["delay_ms"], record["server"], setting_label(record, with_jdk))


def series_of(record: dict) -> str:
    """What one knee series holds fixed: the point's identity but its concurrency (its point_id without -cN).
    Seed 004's pools group runs four pool sizes under one setting label: four series, never launches of one."""
    return re.sub(r"-c\d+(?=-|$)", "", point_id(record))


def labelled_apart(by_series: dict[tuple, list[dict]]) -> dict[tuple, list[dict]]:
    """Series that share a setting label get the parts of their ids they differ in added to it ("..., pool16")."""
    shared: dict[tuple, list[list[str]]] = defaultdict(list)
    for key, series in by_series:
        shared[key].append(series.split("-"))
    grouped = {}
    for (key, series), cells in by_series.items():
        others = shared[key]
        mine = series.split("-")
        varying = [
            part for i, part in enumerate(mine) if len(others) > 1 and any(i >= len(o) or o[i] != part for o in others)
        ]
        grouped[(*key[:4], key[4] + "".join(f", {part}" for part in varying))] = cells
    return grouped


def predicted_knee(record: dict) -> int | None:
    if "parallel_limit" in record:
        return record["parallel_limit"]
    return pool_size(record)  # schema 1


def usable(record: dict) -> bool:
    return (
        record.get("status") == "ok"
        and bool(record.get("delay_ms") or record.get(service_time.FIELD))
        and not offered_rate(record)
        and any(record.get(f) is not None for f in RATIO_FIELDS)
    )


def ratio_field(records: list[dict]) -> str:
    """One ratio for the whole setting, never a mix: the steady one only when every cell has it."""
    return RATIO_FIELDS[0] if all(r.get(RATIO_FIELDS[0]) is not None for r in records) else RATIO_FIELDS[1]


def launches_at(records: list[dict], used: str) -> tuple[dict[int, list[dict]], list[dict]]:
    """The launches of each concurrency that have the ratio, less those a point leaves out (points.counted), and
    the concurrencies left out whole because their point is not valid (a flag beyond points.CAVEATS on a counted
    launch: few_completions, ratio_disagreement, ...), so the knee rests on the launches findings and advice read
    (seed002's Tomcat launches at C=1000, left out as few_completions, once put a pool of 200 at C=255)."""
    by_c: dict[int, list[dict]] = defaultdict(list)
    for r in records:
        if r.get(used) is not None:
            by_c[r["concurrency"]].append(r)
    kept, left = {}, []
    for c, rs in sorted(by_c.items()):
        launches = counted(rs)
        spoiled = sorted({flag for r in launches for flag in r.get("flags") or ()} - CAVEATS)
        if spoiled:
            left.append({"concurrency": c, "flags": spoiled, "cell_ids": [r["cell_id"] for r in launches]})
        else:
            kept[c] = launches
    return kept, left


def setting_knee(key: tuple, records: list[dict], threshold: float = THRESHOLD) -> SettingKnee:
    group, endpoint, delay_ms, server, label = key
    used = ratio_field(records)
    by_c, left = launches_at(records, used)
    points = [
        {
            "concurrency": c,
            **ratio_interval([r[used] for r in rs]),
            "efficiency_ratio": mean(r.get("efficiency_ratio") for r in rs),
            "cell_ids": [r["cell_id"] for r in rs],
            "threads_peak": max_or_none(r.get("threads_peak") for r in rs),
            "valid": all(r.get("valid", True) for r in rs),
        }
        for c, rs in by_c.items()
    ]
    knee = judge([(c, r[used]) for c, rs in by_c.items() for r in rs])
    seed = judge(
        [(c, r["efficiency_ratio"]) for c, rs in by_c.items() for r in rs if r.get("efficiency_ratio") is not None]
    )
    predicted = predicted_knee(records[0])
    return SettingKnee(
        group=group,
        endpoint=endpoint,
        delay_ms=delay_ms,
        server=server,
        executor=records[0].get(EXECUTOR_KNOB),
        max_threads=pool_size(records[0]),
        setting=label,
        predicted=predicted,
        knee_concurrency=rounded(knee.concurrency),
        status=knee.status,
        text=knee_text(knee, predicted),
        ratio_used=used,
        threshold=threshold,
        max_concurrency=max([p["concurrency"] for p in points] + [x["concurrency"] for x in left]),
        knee_vs_predicted=round(knee.concurrency / predicted, 3) if knee.concurrency and predicted else None,
        threads_peak_max=max_or_none(p["threads_peak"] for p in points),
        knee_low=rounded(knee.low),
        knee_high=rounded(knee.high),
        bracket=list(knee.bracket) if knee.status == "bracket" else None,
        fit=fit_record(knee),
        seed_ratio_knee=rounded(seed.concurrency),
        seed_ratio_status=seed.status,
        disagreement=disagreement(knee, seed, used),
        overheads=overheads_record(overheads(predicted, [(p["concurrency"], p["ratio"]) for p in points])),
        points=points,
        left_out=left,
    )


def rounded(x: float | None) -> float | None:
    return round(x, 1) if x is not None else None


def ratio_interval(values: list[float]) -> dict:
    """A concurrency's ratio over its launches, by the points' estimator (crossbench.stats.estimate: geometric
    mean, Student's t on logs; no interval under 3 launches), and the launch values the fit reads."""
    found = stats.estimate(values)
    return {
        "ratio": round(found.value, 4),
        "ratio_low": found.low,
        "ratio_high": found.high,
        "launches": found.n,
        "ratio_launches": list(found.launches),
    }


def disagreement(knee: Knee, seed: Knee, used: str) -> str | None:
    """Why the seed's ratio bends where mean latency / delay does not (or far from it), by the same fit."""
    if used == "efficiency_ratio" or not {knee.status, seed.status} <= DECIDED:
        return None  # a side that cannot tell (not resolved, poor fit, too few) has nothing to disagree with
    if (knee.status == "not_reached") == (seed.status == "not_reached"):
        if (
            knee.concurrency is None
            or seed.concurrency is None
            or abs(knee.concurrency - seed.concurrency) / knee.concurrency <= DISAGREEMENT
        ):
            return None

    def said(k: Knee) -> str:
        return k.words() + (f" (fit C={c_text(k.concurrency)})" if k.status == "bracket" else "")

    return (
        f"the seed's ratio (C / rps / delay) says {said(seed)} while mean latency / delay says "
        f"{said(knee)}: clients the server does not answer (waiting outside it, past maxConnections and the "
        f"accept queue) lower rps but add no latency, so only the seed's ratio sees them"
    )


def mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(sum(values) / len(values), 4) if values else None


def max_or_none(values) -> int | None:
    values = [v for v in values if v is not None]
    return max(values) if values else None


def settings_knees(records: list[dict], threshold: float = THRESHOLD) -> list[SettingKnee]:
    """One knee per Tomcat setting (group, endpoint, delay, executor, maxThreads) that has delay cells."""
    by_series: dict[tuple, list[dict]] = defaultdict(list)
    with_jdk = jdks_vary([r for r in records if usable(r)])
    for record in records:
        if usable(record):
            by_series[(setting_key(record, with_jdk), series_of(record))].append(record)
    grouped = labelled_apart(by_series)
    order = sorted(grouped, key=lambda k: (k[0], k[1], k[2], k[3], setting_order(k[4])))
    return [setting_knee(key, grouped[key], threshold) for key in order]


def write_jsonl(knees: list[dict], path: Path) -> None:
    path.write_text("".join(json.dumps(k) + "\n" for k in knees))


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def left_text(left: list[dict]) -> str:
    """'C=1000 (few_completions)': the concurrencies a knee left out, and why."""
    return ", ".join(f"C={x['concurrency']} ({', '.join(x['flags'])})" for x in left)


def summary(knees: list[dict]) -> str:
    """The knees in words, one line per setting (knees.jsonl's records)."""
    lines = [
        f"  {k['group']} {k['setting']} delay {k['delay_ms']} ms: {k['text']} [{k['ratio_used']}]"
        + (f"\n    note: {k['disagreement']}" if k["disagreement"] else "")
        + (f"\n    not fitted: {left_text(k['left_out'])}" if k.get("left_out") else "")
        for k in knees
    ]
    return "knees (" + KNEES_FILE + "):\n" + "\n".join(lines) if lines else "knees: no delay cells to judge"
