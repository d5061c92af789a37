"""The record contract: what one line of cells.jsonl holds, who writes each field, and how the format changed.

Every field is declared once, with its line of documentation, by what writes it:
- the cell lifecycle (cell.py), here: PLANNED (every record, failed ones too), MEASURED (every measured record),
  DATABASE (database cells), FAILURE (failed records), DRIVER_DEFAULTS (every record; null unless its driver
  writes them);
- each driver, in its FIELDS (crossbench/drivers/): its own figures, plus the DRIVER_DEFAULTS it writes (`common`);
- each server plug-in (crossbench/servers/): its knobs (`in_record`) and its FIELDS (Tomcat: jvm, tomcat_*).
A record carries exactly the fields declared for its kind, server and status, no more, no fewer
(crossbench/cell/fields.py checks one; `python -m crossbench.cell.fields` lists them all). A driver that returns a
lifecycle key is a programming error (DriverKeyClash), so no figure is silently replaced. Analysis reads only
declared fields (test_record.py). Records of an older schema are read through `upgrade`.
"""

from __future__ import annotations

from datetime import UTC, datetime

from .. import known_servers
from . import metrics

SCHEMA_VERSION = 12

# What changed, newest last (as pyperf keeps its format history): a reader can tell what it is holding.
SCHEMA_HISTORY = {
    1: "first round: Tomcat and Tornado; server knobs as plan fields (max_threads, executor, processes, ...); "
    "drivers' extras merged over the record, last writer winning",
    2: "server plug-ins: every server's knobs at the top level (only its own), `processes` for every server; "
    "drivers may not overwrite shared fields; efficiency_ratio_steady dropped (it equals latency_ratio); "
    "rps_steady null when the load generator was saturated; failed cells say whether the server died "
    "(server_died is decided from the server process, not from the error text); open-loop cells: rate, "
    "rate_share and peak_cell (rates = \"auto\"), the open_loop driver's figures",
    3: "points and launches: point_id (the cell_id without its repetition; a record's repetition is its launch), "
    "rounds in a shuffled order (metadata: run.shuffle_seed), points.jsonl beside cells.jsonl; noise in the "
    "window: steal_percent, foreign_cpu_percent, harness_cpu_percent, tcp_passive_opens, "
    "requests_per_connection; flags noisy_host, server_closed_connections, and imprecise on points",
    4: "one declaration per field: every driver declares its fields (FIELDS), the Tomcat plug-in its own (jvm, "
    "tomcat_*; only Tomcat records carry them); db_pool_active_peak and db_pool_waiting_peak in every measured "
    "record (null without pool readings: schema 3 had them only for Tomcat and database cells); rps_steady "
    "is decided once, by its driver, knowing the cell's loadgen_saturated; a schema 3 record reads as 4 "
    "through upgrade()",
    5: "an open-loop cell's rps is its answers per second inside the window (rate_achieved), no longer every "
    "answer the generator waited for after it over the window (a server that fell behind read faster than it "
    "was: 42.5 req/s from Tomcat with 20 threads on a 1 s delay); a schema 4 open-loop record reads so "
    "through upgrade()",
    6: "noise_impact_percent: what foreign CPU could take from the cell's figures, role by role (the foreign share "
    "of the server's and the load generator's own cores times the share of them each used); noisy_host is "
    "raised above 5 (the precision target) instead of at 10 % of a core of foreign CPU, which flagged a "
    "waiting cell that could not notice it and missed a CPU-bound one that lost 9 %; a schema 5 record reads "
    "with it null through upgrade()",
    7: "latency from the samples requests had: latency_method says how (wrk's coordinated-omission correction is "
    "undone, loadgen/wrk_correction.py; its own figures kept as loadgen_reported_latency_ms); in_flight = rps x "
    "mean latency on closed-loop cells, flag in_flight_over_concurrency above concurrency x pipeline (Little's "
    "law), flag latency_unrecoverable when no latency figure could be trusted; held windows (held_window: one "
    "closed-loop process spans warm-up, window and tail, flag window_not_held); a schema 6 record reads with "
    "latency_method 'corrected' (wrk), 'summary' (http_load) or 'samples' and the new figures null",
    8: "a held window's few_completions asks one answer a connection or 30 in all, whichever is fewer "
    "(metrics.few_completions): Tomcat's 1000 clients on 200 threads at 10 s answer 600 in a 30 s window, its "
    "edges costing nothing; a schema 7 held record flagged by the older rule is judged again from its count "
    "through upgrade()",
    9: "capacity's connections: a search's open-loop cell (target_ms, its p99 target) runs a held window at its own "
    "rate on a keep-alive pool sized from Little's law at the target (pool_connections), opened before the "
    "window; tcp_opens_in_window from the sampler's series of the machine's accepted connections, flag "
    "connections_in_window when such a window opened more than a few; requests_per_connection counts a held "
    "run's every request against its connections (was the window's requests against the whole run's "
    "connections); a schema 8 record reads with target_ms and tcp_opens_in_window null and an open-loop "
    "record's pool its concurrency",
    10: "Python as a variable: a Python server's records carry `python`, the interpreter asked for (--python; null "
    "for the project's environment), and server_settings.python its facts; a schema 9 record of a Python "
    "server reads with python null",
    11: "the user's own requests as the workload (a workload file): a measured record carries "
    "loadgen_status_counts, its answers per HTTP status where the generator counted them; a schema 10 record reads "
    "with it null",
    12: "a mix cell's latency per request kind: a measured record carries latency_by_kind where its generator "
    "measured each request's own latency (k6); a schema 11 record reads with it null",
}

OPEN_LOOP_RPS_METHOD = (
    "answers inside the window per second, from the first answer to the window's end "
    "(rate_achieved), at the offered rate (open loop)"
)

LATENCY_KEYS = ("mean", "p50", "p90", "p99", "max")

# Written by the cell lifecycle for every cell kind, failed cells too: the plan, the server's settings, the times.
PLANNED = {
    "schema_version": "SCHEMA_VERSION of the runner that wrote the record",
    "index": "1-based position of the cell in the run's plan (the order cells run in)",
    "cell_id": "unique within the run: the point_id and the repetition (-rN)",
    "point_id": "what was measured with which settings, everything but the repetition: analysis and compare "
    "group launches by it (points.jsonl)",
    "experiment": "the experiment's name",
    "group": "the experiment group the cell belongs to",
    "server": "the server plug-in's name",
    "endpoint": "the endpoint measured (/static/* is the static mix)",
    "concurrency": "connections (closed loop) or probes in flight",
    "delay_ms": "the delay asked of /delay/*, 0 else",
    "duration_s": "the planned measured window",
    "warmup_s": "the planned unrecorded warm-up",
    "repetition": "1-based launch of the point (round N of the run; a fresh stack each time)",
    "loadgen": "the load generator that measured the cell",
    "keepalive": "false: one connection per request",
    "pipeline": "requests in flight per connection",
    "server_cpus": "cores the server was pinned to",
    "loadgen_cpus": "cores the load generator was pinned to",
    "loadgen_threads": "load generator threads",
    "kind": "the driver (crossbench.drivers)",
    "options": "the group's driver options",
    "rate": "open-loop cells: requests offered per second (null for closed-loop cells)",
    "rate_share": "rates = \"auto\": the share of the peak cell's throughput offered (null otherwise)",
    "peak_cell": "rates = \"auto\": the closed-loop cell whose req/s set the rate (null otherwise)",
    "target_ms": "a capacity search's p99 target, ms (its held window and pool are sized by it; null otherwise)",
    "sweep": "worker_sweep groups: the series (server, endpoint, C, ...) this cell is a step of, else null",
    "sweep_step": "worker_sweep groups: the step's process count (1, 2, ... up to 2 x cores + 1), else null",
    "proxy": "nginx's settings when nginx ran in front of the server (group proxy = \"nginx\"), else null",
    "pooler": "PgBouncer's settings when it stood between server and database (group pooler), else null",
    "started_at": "ISO time the cell started",
    "ended_at": "ISO time it ended",
    "series": "the cell's sampled time series (CSV), relative to the run directory",
    "processes": "server processes serving requests (Tomcat 1, Tornado processes, gunicorn/uvicorn workers, ...)",
    "setting": "the server variant in words, e.g. 'tomcat maxThreads=200'",
    "parallel_limit": "requests of this endpoint the server runs at once when each holds a worker for the whole "
    "delay (Tomcat's maxThreads on /delay/sync); null when waiting holds nothing",
}

# Written by the cell lifecycle for every cell it measured (a failed cell carries FAILED_MEASURED of them).
MEASURED = {
    "status": "ok or failed",
    "valid": "no flag raised",
    "flags": "why the cell is not to be trusted (README)",
    "requests": "answers counted in the window, any status",
    "errors": "errors by kind: connect, read, write, timeout, non_2xx, other",
    "error_total": "sum of errors",
    "rps": "requests / measured window (the seed's definition)",
    "bytes_per_s": "response bytes per second",
    "measured_s": "the window as the load generator measured it",
    "latency_ms": f"{', '.join(LATENCY_KEYS)} in ms",
    "latency_source": "where the latency figures come from, in words",
    "latency_method": "how latency_ms was got: samples, recovered (wrk, its correction undone), summary, none "
    "(flag latency_unrecoverable) or corrected (wrk's own, schema 6 and older: "
    "crossbench.loadgen.base.LATENCY_METHODS)",
    "loadgen_reported_latency_ms": "the load generator's own latency figures where they are not latency_ms (wrk's, "
    "with its synthetic samples), kept for audit; else null",
    "loadgen_status_counts": "answers per HTTP status ({\"200\": n, \"503\": m}) in the load generator's run: "
    "oha and k6 count them from their per-request rows; wrk in report.lua's response(), only for a cell with "
    "declared requests (a workload file) or when CROSSBENCH_WRK_STATUSES=1, as that costs it throughput; else null",
    "latency_by_kind": "a cell sending declared requests (a workload file's), by each request's name: requests, "
    "non_2xx and latency_ms (mean, p50, p90, p99, p999, max) over the requests the record's latency is taken over, "
    "where the generator measured each request's latency (k6); else null (wrk gives the mix's latency only)",
    "loadgen_version": "the tool's own version",
    "loadgen_command": "the exact argv run",
    "threads_peak": "most threads of the server's process tree",
    "threads_mean": "mean threads over the window",
    "rss_peak_mb": "peak RSS of the server's process tree",
    "cpu_percent": "server tree CPU, percent of one core",
    "cpu_per_core": "each core's busy percent",
    "loadgen_cpu_percent": "the load generator's CPU, percent of one core",
    "pool_current_peak": "Tomcat: connector pool threads (JMX)",
    "pool_busy_peak": "Tomcat: busy pool threads",
    "samples": "samples taken in the window",
    "tcp_opens_in_window": "TCP connections this machine accepted between the window's first and last sample "
    "(the sampler's series; a lower bound), flag connections_in_window on a window whose "
    "pool was opened before it",
    "server_settings": "what the server reported of itself at start (versions, resolved settings); a Python "
    "server's `python`: its interpreter's version, implementation, free_threaded, gil_enabled "
    "(with its modules imported), jit, executable, the version asked for, its "
    "environment's packages when it has one of its own (--python), and in_server: what the server's own "
    "processes wrote of themselves at start-up (how many, version, free_threaded, gil_enabled; null when none did)",
    "db_cpu_percent": "database cells: mean CPU of the database's process tree in the window (100 = one core)",
    "db_rss_peak_mb": "database cells: peak RSS of the database's process tree in the window, MiB",
    "proxy_cpu_percent": "proxied cells: mean CPU of nginx's process tree in the window (100 = one core)",
    "proxy_rss_peak_mb": "proxied cells: peak RSS of nginx's process tree in the window, MiB",
    "pooler_cpu_percent": "pooled cells: mean CPU of PgBouncer in the window (100 = one core)",
    "pooler_rss_peak_mb": "pooled cells: peak RSS of PgBouncer in the window, MiB",
    "db_pool_active_peak": "most pooled database connections lent out at once over the server's processes "
    "(Tomcat: HikariCP's MBean at each probe reading; Python servers: their own count, "
    "every change seen, each process's most summed; series in db-pool.csv); "
    "null without pool readings (not a database cell)",
    "db_pool_waiting_peak": "most requests waiting for a pooled connection at once, every connection lent out "
    "(a sync worker never waits: "
    "its one request holds the worker, the rest queue in the socket); null likewise",
    "steal_percent": "CPU steal on the cell's cores in the window, percent of their time (hypervisor); null when "
    "the server or load ran on another host",
    "foreign_cpu_percent": "busy CPU on the cell's cores in the window that was not the stack's, the load "
    "generator's or the runner's (percent of one core; when the server and the load "
    "generator share cores, flag noisy_host above 10)",
    "noise_impact_percent": "the most foreign CPU could take from a role's figures, percent: per role pinned to "
    "cores of its own, the foreign share of its cores times the share of them it used; "
    "flag noisy_host above 5 (sampling/noise.py); null when the roles share cores",
    "harness_cpu_percent": "the runner's own CPU in the window (sampler, probe; percent of one core)",
    "tcp_passive_opens": "TCP connections this machine accepted while the load ran (a held window's whole "
    "process; the server, and nginx in front)",
    "requests_per_connection": "requests / tcp_passive_opens, a held window's every request of its run "
    "(keep-alive: high; connection-per-request: ~1; flag server_closed_connections on a "
    "keep-alive cell below 2)",
    "time_wait_drain_s": "seconds waited after the cell for TIME_WAIT sockets to free half the ephemeral ports "
    "(connection-per-request cells only; usually 0)",
}

# Written by the cell lifecycle for database cells only (the endpoint needs the database: stack.needs_database).
DATABASE = {
    "db_connections_total": "database cells: db_pool x processes, the connections the server may hold",
    "pooler_connections": "pooled cells: the server connections PgBouncer holds to the database (else null)",
    "queries_expected": "database cells: queries verify's requests should have run (N, or N x queries)",
    "queries_counted": "database cells: queries the database counted for them (pg_stat_statements)",
}

# Written for a cell that could not be measured, beside PLANNED and FAILED_MEASURED (null but status and flags).
FAILURE = {"error": "failed cells: what went wrong"}
FAILED_MEASURED = (
    "status",
    "valid",
    "flags",
    "requests",
    "errors",
    "error_total",
    "rps",
    "latency_ms",
    "threads_peak",
    "rss_peak_mb",
    "cpu_percent",
    "loadgen_cpu_percent",
)

SHARED = {**PLANNED, **MEASURED}  # every measured record's lifecycle fields
LIFECYCLE = {**SHARED, **DATABASE, **FAILURE}  # every field the lifecycle owns: no driver may write one

# In every record: a driver that writes one declares it in its FIELDS (`common`); the others' records hold null.
DRIVER_DEFAULTS = {
    "efficiency_ratio": "(concurrency / rps) / delay: the seed's figure; 1.0 is perfect",
    "latency_ratio": "mean latency / delay: the same idea measured directly (Little's law makes them equal "
    "when the window is long enough)",
    "rps_steady": "concurrency / mean latency (Little's law); null when the load generator was saturated",
    "in_flight": "rps x mean latency: requests in flight on average over the window (Little's law); a closed loop "
    "holds at most concurrency x pipeline, flag in_flight_over_concurrency above it",
    "held_window": "a held window's account (loadgen/held.py): opened_s and closed_s from the process's start, "
    "turned_over_s (every connection's first answer in), settled_s (every request sent before that "
    "answered: the window opens no earlier), planned_s, load_stopped_s, answered (ended "
    "inside it), credited (requests by share of life inside it: the rps), sent (sent inside it: "
    "the latency's samples), finished_after_load, short (under half the planned window: the queue "
    "turned over late); null for a window of its own process",
    "rps_method": "how rps was counted",
    "rps_steady_method": "how rps_steady was computed",
    "loadgen_hosts": "cells driven from load hosts (--hosts): each host's own figures (host, requests, "
    "rps, latency_ms, errors, cpu_percent and start_late_ms, from the tether: its tool's CPU and "
    "how long after the common start it began); the record's own figures are their exact merge",
}


def common(*names: str) -> dict[str, str]:
    """The DRIVER_DEFAULTS a driver writes, for its FIELDS: their documentation stays here, in one place."""
    return {name: DRIVER_DEFAULTS[name] for name in names}


class DriverKeyClash(RuntimeError):
    """A driver tried to write a field the cell lifecycle owns."""


def merge(shared: dict, driver_fields: dict, driver_name: str, declared=()) -> dict:
    """The lifecycle's fields and the driver's. DRIVER_DEFAULTS the driver does not declare are null; those it
    declares (`declared`, its FIELDS) are its own to write, so one it forgot is missing and the contract test
    (fields.py) names it."""
    clash = sorted(set(LIFECYCLE) & set(driver_fields))
    if clash:
        raise DriverKeyClash(f"driver {driver_name} writes shared fields {clash}: give them names of its own")
    return {**{k: None for k in DRIVER_DEFAULTS if k not in declared}, **shared, **driver_fields}


def now_iso() -> str:
    """A record's (and a run's) time stamp: UTC, ISO 8601, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def cell_id_of(point_id: str, repetition: int) -> str:
    """A record's cell_id: its point_id and its repetition (the launch)."""
    return f"{point_id}-r{repetition}"


def point_of(cell_id: str) -> str:
    """The point a cell id measures: everything but its repetition suffix (-rN)."""
    head, _, tail = cell_id.rpartition("-r")
    return head if head and tail.isdigit() else cell_id


def upgrade(record: dict) -> dict:
    """A record of any schema as the current one has it, oldest change first (as pyperf reads its old files):
    the loaders (rundir, points, analysis) read every record through this."""
    version = record.get("schema_version")
    version = version if isinstance(version, (int, float)) and not isinstance(version, bool) else 1
    record = dict(record)
    if version < 3 and not record.get("point_id") and isinstance(record.get("cell_id"), str):
        record["point_id"] = point_of(record["cell_id"])
    if version < 4 and record.get("status") == "ok":
        for name in ("db_pool_active_peak", "db_pool_waiting_peak"):
            record.setdefault(name, None)
    if version < 5 and isinstance(record.get("rate_achieved"), (int, float)):  # only open-loop cells have it
        record["rps"], record["rps_method"] = record["rate_achieved"], OPEN_LOOP_RPS_METHOD
    if version < 6 and record.get("status") == "ok":
        record.setdefault("noise_impact_percent", None)
    if version < 7:
        record.setdefault("in_flight", None)
        record.setdefault("held_window", None)
        if record.get("status") == "ok":
            record.setdefault("latency_method", old_latency_method(record))
            record.setdefault("loadgen_reported_latency_ms", None)
    if version < 8:
        record = held_few_completions(record)
    if version < 9:
        record.setdefault("target_ms", None)
        if record.get("status") == "ok":
            record.setdefault("tcp_opens_in_window", None)
            if "rate_achieved" in record:  # only open-loop cells have it
                record.setdefault("pool_connections", record.get("concurrency"))
    if version < 10 and getattr(known_servers.get(record.get("server")), "python", False):
        record.setdefault("python", None)
    if version < 11 and record.get("status") == "ok":
        record.setdefault("loadgen_status_counts", None)
    if version < 12 and record.get("status") == "ok":
        record.setdefault("latency_by_kind", None)
    return record


def held_few_completions(record: dict) -> dict:
    """Schema 8 judges a held window's few_completions by metrics.few_completions (one answer a connection or
    MIN_HELD_ANSWERS in all); a schema 7 held record flagged by the older rule (one a connection only) is judged
    again from its own count, its validity with it."""
    flags = record.get("flags") or []
    if not record.get("held_window") or "few_completions" not in flags or not record.get("concurrency"):
        return record
    if metrics.few_completions(record.get("requests") or 0, record["concurrency"], held=True):
        return record
    kept = [f for f in flags if f != "few_completions"]
    return {**record, "flags": kept, "valid": not kept}


def old_latency_method(record: dict) -> str:
    """What a schema 6 record's latency figures are, told by its own latency_source: wrk's histogram as wrk gave
    it (its synthetic samples in it), a summary without percentiles (http_load), or every other tool's samples."""
    source = record.get("latency_source") or ""
    if "stats_correct" in source:
        return "corrected" if (record.get("latency_ms") or {}).get("mean") is not None else "none"
    return "summary" if "p50/p90/p99 are unknown" in source else "samples"
