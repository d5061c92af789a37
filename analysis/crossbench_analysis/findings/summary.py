"""The run's summary: one row per server setting and workload of a concurrency sweep, answering what a reader came
to learn before any sentence: where it bends, the most it answered and the latency there, and what held it there
(its pool, its core, the load generator, or only the clients' own pace). findings.md, the terminal's findings and
report.html open with it; the findings below say how each figure was computed.

A delay sweep's row reads its points and the knee the findings fit (findings_sweeps.counted: the same valid
launches); a static sweep's has no knee. Figures are a point's value with its 95 % interval over launches
(points.fmt_interval's one notation)."""
from __future__ import annotations

from collections import defaultdict

from crossbench.endpoints import is_static
from crossbench.figures import points as figures
from crossbench_analysis.judge.knee_rule import Knee, fitted_c_text
from crossbench_analysis.judge.knees import predicted_knee
from crossbench_analysis.read.runinfo import by_default_driver, num
from crossbench_analysis.read.setting import setting_order
from crossbench_analysis.report.tables import COLUMNS, KEYS

from .finding import delay_text, figure, sig, split, value, who
from .findings_sweeps import SATURATED_PCT, counted, delay_sweeps

BUSY_CORE_PCT = 90.0          # a core this busy is what holds the throughput (loadgen_saturated's threshold too)
POOL_SHARE = 0.9              # a pool past its size that answers this share of size / delay is held by the pool


def rows(points: list[dict]) -> list[dict]:
    """The summary's rows: the delay sweeps (closed loop, by setting, endpoint and delay), then the static mix per
    setting; none for a run without concurrency sweeps (capacity, open loop, TechEmpower tables)."""
    out = []
    for _, pts in delay_sweeps(points):
        good, _, _, knee = counted(pts)
        if good:
            out.append(row(good, f"{pts[0].get('endpoint')}, {delay_text(pts[0])} delay", bend_text(knee), pts))
    for pts in static_sweeps(points):
        good, _ = split(pts)
        good = [p for p in good if value(p, "rps") is not None]
        if good:
            out.append(row(good, "static mix", "n/a (no delay)", pts))
    return out


def static_sweeps(points: list[dict]) -> list[list[dict]]:
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for p in points:
        if by_default_driver(p) and is_static(p.get("endpoint")) and not num(p.get("delay_ms")):
            grouped[(p.get("group"), who(p))].append(p)
    ordered = sorted(grouped.items(), key=lambda kv: (str(kv[0][0]), setting_order(kv[0][1])))    # 50 before 200
    return [sorted(pts, key=lambda p: num(p.get("concurrency")) or 0) for _, pts in ordered]


def row(good: list[dict], workload: str, bends: str, sweep: list[dict]) -> dict:
    """The row of a sweep (`sweep`: all its points) from its valid points (`good`)."""
    best = max(good, key=lambda p: value(p, "rps") or 0)
    beyond = [p for p in sweep if not p["valid"] and (num(p.get("concurrency")) or 0) > num(best.get("concurrency"))]
    p50, p99 = value(best, "latency_ms.p50"), value(best, "latency_ms.p99")
    return {"setting": who(best), "workload": workload, "bends_at": bends,
            "most_rps": figures.fmt_interval(figure(best, "rps")), "at_c": f"{num(best.get('concurrency')):g}",
            "latency_ms": f"{sig(p50)} / {sig(p99)}" if p50 is not None and p99 is not None else "n/a",
            "limited_by": limited_by(best, beyond), "point_id": best.get("point_id")}


def bend_text(knee: Knee) -> str:
    """The knee as the table says it: 'C=204 [196, 212]', 'C 100-400', 'not up to C=1000'."""
    if knee.status == "fitted":
        return fitted_c_text(knee)
    if knee.status == "bracket":
        return f"C {knee.bracket[0]:g}-{knee.bracket[1]:g}"
    if knee.status == "not_reached":
        return f"not up to C={knee.top:g}"
    if knee.status == "below_range":
        return f"at or below C={knee.bottom:g}"
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
        beyond_text = (f"the load generator at C={saturated_c_text(saturated)} (at full use there: those points "
                       "left out)")
        if cpu is not None and cpu >= BUSY_CORE_PCT * cores:
            return f"the server's core{'s' if cores > 1 else ''} ({sig(cpu, 2)} % CPU); past it {beyond_text}"
        return beyond_text + (f"; here the server {sig(cpu, 2)} % CPU" if cpu is not None else "")
    record = point["records"][0]
    loadgen_cpu = value(point, "loadgen_cpu_percent")
    loadgen_cores = len(record.get("loadgen_cpus") or []) or num(record.get("loadgen_threads")) or 1
    if "loadgen_saturated" in (point.get("flags") or []) or \
            (loadgen_cpu is not None and loadgen_cpu >= SATURATED_PCT * loadgen_cores):
        return f"the load generator ({sig(loadgen_cpu, 2)} % CPU)" if loadgen_cpu is not None else "the load generator"
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


def pool_note(table: list[dict]) -> str:
    """For a run whose pools bent: what the rows say for sizing maxThreads, as an example workload (advise.sh
    takes the reader's own)."""
    if not any(line["limited_by"].startswith("its pool") for line in table):
        return ""
    return ("A pool past its size answered size / delay requests a second, so a service whose requests hold a "
            "thread H ms at R req/s keeps R x H / 1000 threads busy on average: for example 400 req/s holding "
            "50 ms keep 20 busy, and maxThreads must sit above that with room for bursts. "
            "./analysis/advise.sh RUN_DIR --rate R --hold-ms H sizes it for your workload from a maxthreads run.")


def compute(points: list[dict]) -> dict:
    table = rows(points)
    return {"columns": list(COLUMNS), "keys": list(KEYS), "rows": table, "note": pool_note(table)}
