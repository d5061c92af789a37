"""The run's summary: one row per server setting and workload of a concurrency sweep, answering what a reader came
to learn before any sentence: where it bends, the most it answered and the latency there, and what held it there
(its pool, its core, the load generator, or only the clients' own pace). findings.md, the terminal's findings and
report.html open with it; the findings below say how each figure was computed.

A delay sweep's row reads its points and the knee the findings fit (findings_knees.counted: the same valid
launches): the fitted N with its interval where the hinge gives one, else the measured concurrencies it lies
between; and the seed's efficiency ratio at the sweep's highest counted concurrency. A static sweep's has neither.
Rows stand in reading order: server (the registry's order), its setting in its own order (maxThreads=50 before
200), then the workload (endpoint, delay by length, the static mix last), whatever order the run measured them in.
Figures are a point's value with its 95 % interval over launches (points.fmt_interval's one notation)."""

from __future__ import annotations

from collections import defaultdict

from crossbench.endpoints import is_static
from crossbench.figures import points as figures
from crossbench.figures import service_time
from crossbench_analysis.judge.knee_rule import Knee, fitted_c_text
from crossbench_analysis.judge.knees import predicted_knee
from crossbench_analysis.read.runinfo import by_default_driver, num, server_rank
from crossbench_analysis.read.setting import pool_size, setting_order
from crossbench_analysis.report.tables import COLUMNS, KEYS

from . import not_read
from .finding import delay_text, figure, sig, split, value, who
from .findings_knees import counted, delay_sweeps
from .findings_sweeps import SATURATED_PCT

BUSY_CORE_PCT = 90.0  # a core this busy is what holds the throughput (loadgen_saturated's threshold too)
POOL_SHARE = 0.9  # a pool past its size that answers this share of size / delay is held by the pool


def rows(points: list[dict]) -> list[dict]:
    """The summary's rows, in reading order (reading_order): one per delay sweep (closed loop, by setting,
    endpoint and delay) and one per setting's static mix; none for a run without concurrency sweeps (capacity,
    open loop, TechEmpower tables)."""
    placed = []
    for _, pts in delay_sweeps(points):
        good, _, _, knee = counted(pts)
        if good:
            delayed = " delay" if num(pts[0].get("delay_ms")) else ""  # else a user path's service time
            line = row(good, f"{pts[0].get('endpoint')}, {delay_text(pts[0])}{delayed}", bend_text(knee), pts)
            placed.append((reading_order(pts), line | {"efficiency_top": efficiency_at_top(good, line["at_c"])}))
    for pts in static_sweeps(points):
        good, _ = split(pts)
        good = [p for p in good if value(p, "rps") is not None]
        if good:
            placed.append(
                (reading_order(pts), row(good, "static mix", "n/a (no delay)", pts) | {"efficiency_top": "n/a"})
            )
    return [r for _, r in sorted(placed, key=lambda placed_row: placed_row[0])]


def reading_order(pts: list[dict]) -> tuple:
    """A row's place: server, setting in its own order, endpoint, delay by length (the static mix, no delay,
    after the delays)."""
    first = pts[0]
    delay = num(first.get("delay_ms")) or 0
    return (
        server_rank(first.get("server")),
        str(first.get("server") or ""),
        setting_order(who(first)),
        delay == 0,
        str(first.get("endpoint") or ""),
        delay,
    )


def efficiency_at_top(good: list[dict], at_c: str) -> str:
    """The seed's efficiency ratio ((C / rps) / delay) at the sweep's highest counted concurrency, with its
    interval; that concurrency named when it is not the row's `at_c` (where it answered most)."""
    top = good[-1]
    found, c = figure(top, "efficiency_ratio"), f"{num(top.get('concurrency')):g}"
    return "n/a" if not found else figures.fmt_interval(found) + ("" if c == at_c else f" at C={c}")


def static_sweeps(points: list[dict]) -> list[list[dict]]:
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for p in points:
        if by_default_driver(p) and is_static(p.get("endpoint")) and not num(p.get("delay_ms")):
            grouped[(p.get("group"), who(p))].append(p)
    ordered = sorted(grouped.items(), key=lambda kv: (str(kv[0][0]), setting_order(kv[0][1])))  # 50 before 200
    return [sorted(pts, key=lambda p: num(p.get("concurrency")) or 0) for _, pts in ordered]


def row(good: list[dict], workload: str, bends: str, sweep: list[dict]) -> dict:
    """The row of a sweep (`sweep`: all its points) from its valid points (`good`)."""
    best = max(good, key=lambda p: value(p, "rps") or 0)
    beyond = [p for p in sweep if not p["valid"] and (num(p.get("concurrency")) or 0) > num(best.get("concurrency"))]
    p50, p99 = value(best, "latency_ms.p50"), value(best, "latency_ms.p99")
    return {
        "setting": who(best),
        "workload": workload,
        "bends_at": bends,
        "most_rps": figures.fmt_interval(figure(best, "rps")),
        "at_c": f"{num(best.get('concurrency')):g}",
        "latency_ms": f"{sig(p50)} / {sig(p99)}" if p50 is not None and p99 is not None else "n/a",
        "limited_by": limited_by(best, beyond),
        "point_id": best.get("point_id"),
    }


def bend_text(knee: Knee) -> str:
    """The knee as the table says it: 'C=204 [196, 212]' (the hinge's N and interval, also where the knee lies
    between two measured concurrencies and the hinge through them has an interval), 'C 100-400' (between them,
    the hinge indicative, or where every fit bends under a bound), 'not up to C=1000'."""
    if knee.status == "fitted" or (knee.status == "bracket" and not knee.indicative):
        return fitted_c_text(knee)
    if knee.status == "bracket":
        return f"C {knee.bracket[0]:g}-{knee.bracket[1]:g}"
    if knee.status == "not_reached":
        return f"not up to C={knee.top:g}"
    if knee.status == "below_range":
        return f"at or below C={knee.bottom:g}"
    if under := knee.under_bracket():  # every fit bent: under a bound between two measured concurrencies
        return f"C {under[0]:g}-{under[1]:g}"
    return "cannot tell (see findings)"


def limited_by(point: dict, beyond: list[dict] = ()) -> str:
    """What held the point's throughput, in order of what would explain it first: the load generator at full use,
    here or at the higher concurrencies left out for it (`beyond`: the sweep's points past this one that are not
    valid), a pool past its size answering at size / delay, the server's core at full use, else the clients' own
    pace (C / delay for a delay, nothing full for the static mix)."""
    saturated = [p for p in beyond if "loadgen_saturated" in (p.get("flags") or [])]
    if saturated:
        cpu = value(point, "cpu_percent")
        cores = len(point["records"][0].get("server_cpus") or []) or 1
        beyond_text = (
            f"the load generator at C={saturated_c_text(saturated)} (at full use there: those points left out)"
        )
        if cpu is not None and cpu >= BUSY_CORE_PCT * cores:
            return f"the server's core{'s' if cores > 1 else ''} ({sig(cpu, 2)} % CPU); past it {beyond_text}"
        return beyond_text + (f"; here the server {sig(cpu, 2)} % CPU" if cpu is not None else "")
    record = point["records"][0]
    loadgen_cpu = value(point, "loadgen_cpu_percent")
    loadgen_cores = len(record.get("loadgen_cpus") or []) or num(record.get("loadgen_threads")) or 1
    if "loadgen_saturated" in (point.get("flags") or []) or (
        loadgen_cpu is not None and loadgen_cpu >= SATURATED_PCT * loadgen_cores
    ):
        return f"the load generator ({sig(loadgen_cpu, 2)} % CPU)" if loadgen_cpu is not None else "the load generator"
    if value(point, "cpu_percent") is None and not_read.not_started(record):
        generator = f"; the load generator {sig(loadgen_cpu, 2)} % CPU" if loadgen_cpu is not None else ""
        return f"cannot tell: its CPU and pool not read (the suite did not start it){generator}"
    c, delay_s = num(point.get("concurrency")) or 0, (num(point.get("delay_ms")) or 0) / 1000
    pool, rps = num(predicted_knee(record)), value(point, "rps") or 0
    if delay_s and pool and c > pool and rps >= POOL_SHARE * pool / delay_s:
        return f"its pool: {pool:g} / {delay_text(point)} = {sig(pool / delay_s)} req/s"
    cpu = value(point, "cpu_percent")
    server_cores = len(record.get("server_cpus") or []) or 1
    if cpu is not None and cpu >= BUSY_CORE_PCT * server_cores:
        return f"the server's core{'s' if server_cores > 1 else ''} ({sig(cpu, 2)} % CPU)"
    busy = f"server {sig(cpu, 2)} % CPU" if cpu is not None else "server CPU not measured"
    if delay_s and rps >= POOL_SHARE * c / delay_s:
        return f"the clients: C / delay = {sig(c / delay_s)} req/s"
    if delay_s:
        return f"no full pool or core: {sig(100 * rps * delay_s / c, 2)} % of C / delay ({busy})"
    return f"no full core or pool ({busy}): more clients may answer more"


def saturated_c_text(saturated: list[dict]) -> str:
    cs = sorted({num(p.get("concurrency")) for p in saturated})
    return " and ".join(f"{c:g}" for c in cs) if len(cs) <= 2 else f"{cs[0]:g} to {cs[-1]:g}"


POOL_NOTE = "maxThreads for your load: ./analysis/advise.sh --rate REQ_PER_S --hold-ms MS_EACH_HOLDS_A_THREAD"
# a pool on a user's path: advise.sh takes the holding time from the run (the path's service time at C=1)
USER_POOL_NOTE = "maxThreads for your load: ./analysis/advise.sh RUN_DIR --rate REQ_PER_S"


def pool_note(points: list[dict]) -> str:
    """One short line pointing to advise.sh, for a run with a thread pool to size (a delay sweep of a setting
    with a pool: Tomcat's maxThreads, or its sweep of a user's path); '' for any other run."""
    pooled = [pts[0] for _, pts in delay_sweeps(points) if pool_size(pts[0]) is not None]
    if any(not service_time.is_user_record(first) for first in pooled):
        return POOL_NOTE
    return USER_POOL_NOTE if pooled else ""


def compute(points: list[dict]) -> dict:
    return {
        "columns": list(COLUMNS),
        "keys": list(KEYS),
        "rows": rows(points),
        "note": pool_note(points),
        "user_paths": any(service_time.is_user_record(point) for point in points),
    }
