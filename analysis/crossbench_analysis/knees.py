"""Where the efficiency ratio bends: per server setting, the lowest concurrency at which the ratio exceeds 1.1,
next to what the server's parallel limit predicts (Tomcat's maxThreads, gunicorn's workers on a blocking
endpoint). `find_knee` is the pure rule; `settings_knees` groups a run's cell records by setting. Analysis
computes them from the records every time it runs (maxthreads.py keeps them as charts/data/knees.jsonl), so an
old run re-analysed gets today's rule."""
from __future__ import annotations

import json
import re
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .runinfo import offered_rate
from .setting import EXECUTOR_KNOB, pool_size, setting, setting_order, sweeps_pool

THRESHOLD = 1.1
KNEES_FILE = "knees.jsonl"
# The edge-bias-free ratio first (mean latency / delay); the seed's window count when a record lacks it. The seed's
# ratio is also judged on its own: only it sees clients that wait outside the server (past maxConnections and the
# accept queue they get no answer, so no latency), and the knee record says when the two disagree.
RATIO_FIELDS = ("latency_ratio", "efficiency_ratio")
DISAGREEMENT = 0.25       # knees further apart than this (relative), or one crossed and not the other


@dataclass(frozen=True)
class Knee:
    concurrency: float | None   # interpolated; None when not crossed inside the measured range
    status: str                 # "crossed"; "not_reached": under at the end; "below_range": above from the start
    excursions: tuple[int, ...] = ()   # concurrencies above the threshold that a later point came back under


def find_knee(points: list[tuple[float, float]], threshold: float = THRESHOLD) -> Knee:
    """`points` are (concurrency, ratio). The knee is where the ratio crosses the threshold for good: between
    the last point at or under it and the next one (all later points are above), linear in log concurrency.

    Noisy data: a point above the threshold followed by one at or under it is an excursion, not the knee (a pool
    that has run out of threads does not recover as clients are added); it is reported in `excursions`.
    A point exactly at the threshold counts as under it, so the knee then sits on that point or above.
    """
    points = sorted(points)
    if not points:
        return Knee(None, "not_reached")
    under = [i for i, (_, ratio) in enumerate(points) if ratio <= threshold]
    if not under:
        return Knee(None, "below_range")
    last = under[-1]
    excursions = tuple(int(c) for c, ratio in points[:last] if ratio > threshold)
    if last == len(points) - 1:
        return Knee(None, "not_reached", excursions)
    (c0, r0), (c1, r1) = points[last], points[last + 1]
    fraction = (threshold - r0) / (r1 - r0)
    return Knee(math.exp(math.log(c0) + fraction * (math.log(c1) - math.log(c0))), "crossed", excursions)


@dataclass
class SettingKnee:
    """One line of knees.jsonl."""
    group: str
    endpoint: str
    delay_ms: int
    server: str
    executor: str | None
    max_threads: int | None
    setting: str                       # the record's setting: "tomcat maxThreads=200", "tornado p2", ...
    predicted: int | None              # the parallel limit (pool size); none where waiting holds nothing
    knee_concurrency: float | None
    status: str
    text: str
    ratio_used: str
    threshold: float
    max_concurrency: int
    knee_vs_predicted: float | None
    excursions: list[int]
    threads_peak_max: int | None       # the thread plateau of this setting over all its cells
    seed_ratio_knee: float | None = None   # the knee on the seed's efficiency_ratio
    seed_ratio_status: str | None = None
    disagreement: str | None = None    # why the two ratios' knees differ, when they do
    resolved: bool | None = None       # the crossing stands beyond the intervals; None: one launch a point
    points: list[dict] = field(default_factory=list)


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
    return (record["group"], record["endpoint"], record["delay_ms"], record["server"],
            setting_label(record, with_jdk))


def series_of(record: dict) -> str:
    """What one knee series holds fixed: the point's identity but its concurrency (its point_id without -cN).
    Seed 004's pools group runs four pool sizes under one setting label: four series, never launches of one."""
    from crossbench.points import point_id
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
        varying = [part for i, part in enumerate(mine)
                   if len(others) > 1 and any(i >= len(o) or o[i] != part for o in others)]
        grouped[(*key[:4], key[4] + "".join(f", {part}" for part in varying))] = cells
    return grouped


def predicted_knee(record: dict) -> int | None:
    if "parallel_limit" in record:
        return record["parallel_limit"]
    return pool_size(record)   # schema 1


def usable(record: dict) -> bool:
    return (record.get("status") == "ok" and bool(record.get("delay_ms")) and not offered_rate(record)
            and any(record.get(f) is not None for f in RATIO_FIELDS))


def ratio_field(records: list[dict]) -> str:
    """One ratio for the whole setting, never a mix: the steady one only when every cell has it."""
    return RATIO_FIELDS[0] if all(r.get(RATIO_FIELDS[0]) is not None for r in records) else RATIO_FIELDS[1]


def knee_text(knee: Knee, predicted: int | None, points: list[dict], threshold: float) -> str:
    top, bottom = points[-1]["concurrency"], points[0]["concurrency"]
    prediction = f"predicted {predicted}" if predicted else "predicted none"
    if knee.status == "crossed":
        return f"ratio > {threshold:g} from C={knee.concurrency:.0f} ({prediction})"
    if knee.status == "below_range":
        return f"ratio > {threshold:g} already at C={bottom} ({prediction})"
    return f"not reached up to C={top} ({prediction})"


def setting_knee(key: tuple, records: list[dict], threshold: float = THRESHOLD) -> SettingKnee:
    group, endpoint, delay_ms, server, label = key
    used = ratio_field(records)
    by_c: dict[int, list[dict]] = defaultdict(list)
    for r in records:
        if r.get(used) is not None:
            by_c[r["concurrency"]].append(r)
    points = [{"concurrency": c, "ratio": mean(r[used] for r in rs), **ratio_interval([r[used] for r in rs]),
               "efficiency_ratio": mean(r.get("efficiency_ratio") for r in rs), "cell_ids": [r["cell_id"] for r in rs],
               "threads_peak": max_or_none(r.get("threads_peak") for r in rs),
               "valid": all(r.get("valid", True) for r in rs)}
              for c, rs in sorted(by_c.items())]
    knee = find_knee([(p["concurrency"], p["ratio"]) for p in points], threshold)
    seed = find_knee([(p["concurrency"], p["efficiency_ratio"]) for p in points
                      if p["efficiency_ratio"] is not None], threshold)
    predicted = predicted_knee(records[0])
    resolution = resolved(knee, points, threshold)
    return SettingKnee(
        group=group, endpoint=endpoint, delay_ms=delay_ms, server=server, executor=records[0].get(EXECUTOR_KNOB),
        max_threads=pool_size(records[0]), setting=label, predicted=predicted,
        knee_concurrency=round(knee.concurrency, 1) if knee.concurrency is not None else None,
        status=knee.status, text=knee_text(knee, predicted, points, threshold) + RESOLUTION_TEXT[resolution],
        ratio_used=used, resolved=resolution,
        threshold=threshold, max_concurrency=points[-1]["concurrency"],
        knee_vs_predicted=round(knee.concurrency / predicted, 3) if knee.concurrency and predicted else None,
        excursions=list(knee.excursions), threads_peak_max=max_or_none(p["threads_peak"] for p in points),
        seed_ratio_knee=round(seed.concurrency, 1) if seed.concurrency is not None else None,
        seed_ratio_status=seed.status, disagreement=disagreement(knee, seed, used), points=points)


RESOLUTION_TEXT = {None: "", True: ", beyond the 95 % intervals",
                   False: ", not resolved: the intervals of the points around it reach across the threshold"}


def ratio_interval(values: list[float]) -> dict:
    """The 95 % interval of a concurrency's ratio over its launches (None, None with one launch)."""
    from crossbench import stats
    interval = stats.t_interval(values)
    return {"ratio_low": interval.low, "ratio_high": interval.high, "launches": interval.n}


def resolved(knee: Knee, points: list[dict], threshold: float) -> bool | None:
    """Whether the knee is chosen beyond the error: the point before it is under the threshold with its whole
    interval, and every point from the crossing on is above it with its whole interval. None with one launch."""
    if knee.status == "not_reached":
        judged = points[-1:]
    elif knee.status == "below_range":
        judged = points[:1]
    else:
        last = max(i for i, p in enumerate(points) if p["ratio"] <= threshold)
        judged = points[last:]
    if any(point["ratio_low"] is None for point in judged):
        return None
    under = [point for point in judged if point["ratio"] <= threshold]
    over = [point for point in judged if point["ratio"] > threshold]
    return all(point["ratio_high"] <= threshold for point in under) and \
        all(point["ratio_low"] > threshold for point in over)


def disagreement(knee: Knee, seed: Knee, used: str) -> str | None:
    if used == "efficiency_ratio":
        return None
    if knee.status == seed.status and (knee.status != "crossed" or
                                       abs(knee.concurrency - seed.concurrency) / knee.concurrency <= DISAGREEMENT):
        return None
    where = f"C={seed.concurrency:.0f}" if seed.status == "crossed" else seed.status.replace("_", " ")
    return (f"the seed's ratio (C / rps / delay) bends at {where} while mean latency / delay says "
            f"{knee.status.replace('_', ' ')}: clients the server does not answer (waiting outside it, past "
            f"maxConnections and the accept queue) lower rps but add no latency, so only the seed's ratio sees them")


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


def summary(knees: list[dict]) -> str:
    """The knees in words, one line per setting (knees.jsonl's records)."""
    lines = [f"  {k['group']} {k['setting']} delay {k['delay_ms']} ms: {k['text']} [{k['ratio_used']}]"
             + (f"\n    note: {k['disagreement']}" if k["disagreement"] else "") for k in knees]
    return "knees (" + KNEES_FILE + "):\n" + "\n".join(lines) if lines else "knees: no delay cells to judge"
