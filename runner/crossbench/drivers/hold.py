"""Seed 003's cell (kind "hold_connections"): hold `concurrency` keep-alive connections to the server with
the holder (crossbench.clients.holder), and measure what holding them costs the server and the client.

The group's `concurrency` is the number of connections (so the run's open-file check, the cell id and
--concurrency all see it). Options: rate_per_10ms (10), head_interval_s (10), hold_s (30), timeout_s (5),
retry_s (1). The warm-up is an idle settle: the server's baseline, and time for the JVM probe to attach.

The holder runs as a child process pinned to the load-generator cores, like wrk: its CPU and RSS are its
own (not the runner's sampler thread and imports), its event loop does not share a GIL with the sampler,
and whatever happens to it, the kernel closes its sockets when it exits, so no connection leaks into the
next cell.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import fields
from pathlib import Path
from urllib.parse import urlsplit

from ..clients.holder import FAILURE_KINDS, HoldConfig
from ..loadgen.base import LoadResult, empty_errors
from ..loadgen.process import run_bounded
from ..oskit import taskset_prefix
from ..sampling.process_tree import summarize
from ..sampling.socket_census import SocketCensus
from . import hold_fit
from .base import Driver, DriverRefused, Measurement

# what a group's options may set, defaulting as the holder does (clients/holder_types.HoldConfig)
DEFAULTS = {
    f.name: f.default
    for f in fields(HoldConfig)
    if f.name in ("rate_per_10ms", "head_interval_s", "hold_s", "timeout_s", "retry_s")
}
TAIL_SAMPLES_S = 0.6
CLIENT_SATURATED_PCT = 90.0
# The cell record's error kinds (loadgen.base.ERROR_KINDS), from the holder's finer ones.
ERROR_KIND_OF = {
    "connect_refused": "connect",
    "connect_timeout": "connect",
    "no_local_port": "connect",
    "too_many_open_files": "connect",
    "reset": "read",
    "closed_by_server": "read",
    "read_timeout": "timeout",
    "non_2xx": "non_2xx",
    "other": "other",
}


class HoldOptionsError(DriverRefused):
    pass


def hold_config(plan, port: int, host: str = "127.0.0.1") -> HoldConfig:
    options = dict(plan.options)
    if "connections" in options:
        raise HoldOptionsError(
            "hold_connections: the number of connections is the group's `concurrency`, not an option"
        )
    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise HoldOptionsError(f"hold_connections: unknown options {sorted(unknown)}; known: {sorted(DEFAULTS)}")
    o = {**DEFAULTS, **options}
    for key, value in o.items():
        low = 0 if key == "retry_s" else 1e-9
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < low:
            raise HoldOptionsError(
                f"hold_connections: {key} must be a number {'>= 0' if low == 0 else '> 0'}, not {value!r}"
            )
    if o["rate_per_10ms"] != int(o["rate_per_10ms"]) or o["rate_per_10ms"] < 1:
        raise HoldOptionsError(
            f"hold_connections: rate_per_10ms must be a whole number >= 1, not {o['rate_per_10ms']!r}"
        )
    return HoldConfig(
        host=host,
        port=port,
        path=plan.paths()[0],
        connections=plan.concurrency,
        rate_per_10ms=int(o["rate_per_10ms"]),
        head_interval_s=float(o["head_interval_s"]),
        hold_s=float(o["hold_s"]),
        timeout_s=float(o["timeout_s"]),
        retry_s=float(o["retry_s"]),
    )


def hold_flags(errors: dict[str, int]) -> list[str]:
    found = ["timeouts"] if errors["timeout"] else []
    return found + (["errors"] if sum(n for kind, n in errors.items() if kind != "timeout") else [])


def command(config: HoldConfig, cell_dir: Path, cpus: tuple[int, ...]) -> list[str]:
    return [
        *taskset_prefix(cpus),
        sys.executable,
        "-m",
        "crossbench.clients.holder",
        "--host",
        config.host,
        "--port",
        str(config.port),
        "--path",
        config.path,
        "--connections",
        str(config.connections),
        "--rate-per-10ms",
        str(config.rate_per_10ms),
        "--head-interval",
        str(config.head_interval_s),
        "--hold",
        str(config.hold_s),
        "--timeout",
        str(config.timeout_s),
        "--retry",
        str(config.retry_s),
        "--csv",
        str(cell_dir / "holder.csv"),
        "--json",
        str(cell_dir / "holder.json"),
    ]


def load_result(held: dict, cell_dir: Path, argv: list[str]) -> LoadResult:
    errors = empty_errors()
    for kind, n in held["failures"].items():
        errors[ERROR_KIND_OF[kind]] += n
    duration = held["hold_end_epoch"] - held["started_epoch"]
    return LoadResult(
        tool="crossbench-holder",
        tool_version=f"crossbench-holder ({held['event_loop']}, Python {sys.version.split()[0]})",
        requests=held["requests_answered"],
        duration_s=duration,
        bytes=0,
        errors=errors,
        latency_ms=held["latency_ms"],
        latency_source="holder: HEAD sent to end of the response head, per request",
        raw_files=tuple(str(cell_dir / f) for f in ("holder.json", "holder.csv", "holder.stdout")),
        extra={"command": " ".join(argv)},
    )


def first_peak_time(timeline: list[dict], column: str = "connections_held") -> float | None:
    peak = max((r[column] for r in timeline), default=0)
    return next((r["t_epoch"] for r in timeline if r[column] == peak), None) if peak else None


def server_figures(samples, timeline: list[dict], held: dict, server_cpus: tuple[int, ...]) -> dict:
    start, ramp_end, hold_end = held["started_epoch"], held["ramp_end_epoch"], held["hold_end_epoch"]
    # The fit runs while the held count rises: to its first peak (before the ramp ends when a limit bites,
    # a little after it when the last connections are answered late).
    rising_end = min(first_peak_time(timeline) or ramp_end, hold_end)
    before = [s for s in samples if s.t_epoch < start]
    at_hold = summarize(samples, ramp_end, hold_end)
    held_at_end = held["connections_held_at_end"]
    cpu_hold = at_hold["cpu_percent"]
    return {
        **hold_fit.rss_per_connection(timeline, samples, start, rising_end),
        "fit_window_s": round(rising_end - start, 3),
        "server_rss_mb_idle": before[-1].rss_mb if before else None,
        "server_threads_idle": before[-1].threads if before else None,
        "server_rss_mb_hold_peak": at_hold["rss_peak_mb"],
        "server_cpu_percent_hold": cpu_hold,
        "server_cpu_percent_hold_per_1k_connections": (
            1000 * cpu_hold / held_at_end if cpu_hold is not None and held_at_end else None
        ),
        "server_threads_hold_peak": at_hold["threads_peak"],
        "server_cpu_percent_ramp": summarize(samples, start, ramp_end)["cpu_percent"],
        "server_core_foreign_percent": foreign_load(summarize(samples, start, hold_end), server_cpus),
    }


def foreign_load(window: dict, server_cpus: tuple[int, ...]) -> float | None:
    """How busy the server's cores were with something else (other processes, interrupts) over the window,
    percent of one core: the server's figures are only its own when this stays small."""
    cores = [window["cpu_per_core"].get(str(c)) for c in server_cpus]
    if not cores or None in cores or window["cpu_percent"] is None:
        return None
    return max(0.0, sum(cores) - window["cpu_percent"])


def client_figures(timeline: list[dict], held: dict, cpus: tuple[int, ...]) -> dict:
    start, ramp_end, hold_end = held["started_epoch"], held["ramp_end_epoch"], held["hold_end_epoch"]

    def cpu_percent(t0: float, t1: float) -> float | None:
        rows = [r for r in timeline if t0 <= r["t_epoch"] <= t1]
        if len(rows) < 2 or rows[-1]["t_epoch"] <= rows[0]["t_epoch"]:
            return None
        return 100 * (rows[-1]["client_cpu_s"] - rows[0]["client_cpu_s"]) / (rows[-1]["t_epoch"] - rows[0]["t_epoch"])

    ramp_cpu = cpu_percent(start, ramp_end)
    return {
        "client_cpu_s": held["client_cpu_s"],
        "client_cpu_percent_ramp": ramp_cpu,
        "client_cpu_percent_hold": cpu_percent(ramp_end, hold_end),
        "client_cpu_percent": cpu_percent(start, hold_end),
        "client_saturated": bool(ramp_cpu and ramp_cpu >= CLIENT_SATURATED_PCT * max(len(cpus), 1)),
        "client_rss_mb_start": held["client_rss_mb_start"],
        "client_rss_mb_peak": held["client_rss_mb_peak"],
        "client_rss_per_connection_kb": hold_fit.client_per_connection(timeline, start, ramp_end),
        "client_event_loop": held["event_loop"],
        "client_cpus": list(cpus),
    }


def kernel_figures(census: SocketCensus) -> dict:
    return {
        "server_established_peak": census.peak("server_established"),
        "accept_queue_peak": census.peak("accept_queue"),
        "accept_queue_limit": census.peak("accept_queue_limit"),
        "syn_recv_peak": census.peak("syn_recv"),
        "listen_overflows": census.delta("listen_overflows"),
        "system_tcp_mem_pages_peak": census.peak("tcp_mem_pages"),  # every TCP socket of the machine
    }


class HoldConnections(Driver):
    loadgen = "crossbench-holder"
    one_load_host = True  # one client process holds the connections
    FIELDS = {
        # the holder (holder.json; its series holder.csv)
        "connections_target": "connections the holder was asked to hold (the group's concurrency)",
        "connections_held_peak": "most connections held at once (answered their first HEAD)",
        "connections_held_at_end": "connections held when the hold ended",
        "connections_open_peak": "most connections open at once (held or not yet answered)",
        "connections_open_at_end": "connections open when the hold ended",
        "all_held_after_s": "seconds from the start until every connection was held; null: never",
        "ramp_s": "seconds from the first connection to the end of the ramp",
        "hold_s": "seconds held after the ramp",
        "connect_attempts": "connections tried, retries included",
        "requests_sent": "HEADs sent",
        "failures": "failures by kind (connect_refused, connect_timeout, reset, "
        "read_timeout, non_2xx, closed_by_server, no_local_port, "
        "too_many_open_files, other)",
        "failure_total": "sum of failures",
        "first_failure": "per failure kind, the first one's exception text",
        "hold_options": "the options the holder ran with (rate_per_10ms, head_interval_s, hold_s, timeout_s, retry_s)",
        "holder_series": "the holder's time series (CSV), relative to the run directory",
        "sockets_series": "the socket census's time series (CSV), relative to the run directory",
        # the server while the count rises and while holding (hold_fit.py)
        "rss_per_connection_kb": "server RSS per held connection, KiB: least squares of RSS on connections held "
        "while that count rises",
        "rss_per_connection_kb_r2": "that fit's r squared",
        "rss_fit_points": "samples in that fit",
        "rss_fit_intercept_mb": "that fit's RSS at no connection, MiB",
        "fit_window_s": "seconds from the start to the held count's first peak (the fit's window)",
        "server_rss_mb_idle": "server RSS before the first connection, MiB",
        "server_threads_idle": "server threads before the first connection",
        "server_rss_mb_hold_peak": "peak server RSS while holding, MiB",
        "server_cpu_percent_hold": "server CPU while holding (percent of one core)",
        "server_cpu_percent_hold_per_1k_connections": "that CPU per 1000 connections held at the end",
        "server_threads_hold_peak": "most server threads while holding",
        "server_cpu_percent_ramp": "server CPU during the ramp (percent of one core)",
        "server_core_foreign_percent": "how busy the server's cores were with other work over the cell (percent "
        "of one core): the server's figures are its own only when this is small",
        # the client (the holder's own CPU and memory)
        "client_cpu_s": "the holder's CPU seconds",
        "client_cpu_percent": "its CPU from start to the hold's end",
        "client_cpu_percent_ramp": "its CPU during the ramp",
        "client_cpu_percent_hold": "its CPU while holding",
        "client_saturated": "its CPU during the ramp reached 90% of its cores",
        "client_rss_mb_start": "its RSS at the start, MiB",
        "client_rss_mb_peak": "its peak RSS, MiB",
        "client_rss_per_connection_kb": "its RSS growth per open connection during the ramp, KiB",
        "client_event_loop": "asyncio or uvloop",
        "client_cpus": "cores the holder was pinned to",
        # the kernel's view of the server's port (sampling/socket_census.py)
        "server_established_peak": "most established connections on the server's port",
        "accept_queue_peak": "longest accept queue",
        "accept_queue_limit": "the accept queue's limit (backlog)",
        "syn_recv_peak": "most half-open connections on the port",
        "listen_overflows": "the kernel's ListenOverflows over the cell (a full accept queue; machine-wide counter)",
        "system_tcp_mem_pages_peak": "the machine's TCP memory, pages (every TCP socket, not only the server's)",
    }

    def preflight(self, plan) -> None:
        hold_config(plan, 1)  # refuses unknown or impossible options

    def warmup(self, plan, ctx, server) -> None:
        time.sleep(plan.warmup_s)  # idle: the server's baseline, and the JVM probe attaches

    def measure(self, plan, ctx, server, sampler) -> Measurement:
        """The holder here, or on the run's (first) load host: its files come back into the cell, its times are
        moved onto this machine's clock to meet the server's samples; the socket census beside the server."""
        host = ctx.placement.load.hosts[0]
        config = hold_config(plan, server.spec.port, urlsplit(server.url).hostname)
        census_csv = ctx.cell_dir / "sockets.csv"
        with ctx.placement.server_host.socket_census(server.spec.port, census_csv) as census:
            argv = command(config, ctx.cell_dir, plan.loadgen_cpus)
            finished = run_bounded(argv, ctx.cell_dir, "holder", config.bound_s() + 30, host=host)
            time.sleep(TAIL_SAMPLES_S)
        return figures(plan, ctx.cell_dir, sampler, census, finished, config, argv, host.clock_offset_s)


def on_our_clock(held: dict, timeline: list[dict], offset_s: float) -> tuple[dict, list[dict]]:
    """The holder's times (its host's clock) as this machine's: minus the host's offset."""
    if not offset_s:
        return held, timeline
    held = {k: (v - offset_s if k.endswith("_epoch") and v else v) for k, v in held.items()}
    return held, [{**row, "t_epoch": row["t_epoch"] - offset_s} for row in timeline]


def figures(plan, cell_dir, sampler, census, finished, config, argv, clock_offset_s: float = 0.0) -> Measurement:
    if finished.returncode != 0 or not (cell_dir / "holder.json").is_file():
        raise RuntimeError(
            f"holder exited with status {finished.returncode}: {finished.stderr.read_text(errors='replace')[-2000:]}"
        )
    held, timeline = on_our_clock(
        json.loads((cell_dir / "holder.json").read_text()),
        hold_fit.read_timeline(cell_dir / "holder.csv"),
        clock_offset_s,
    )
    extra = {
        "connections_target": config.connections,
        "connections_held_peak": held["connections_held_peak"],
        "connections_held_at_end": held["connections_held_at_end"],
        "connections_open_peak": held["connections_open_peak"],
        "connections_open_at_end": held["connections_open_at_end"],
        "all_held_after_s": held["all_held_after_s"],
        "ramp_s": round(held["ramp_end_epoch"] - held["started_epoch"], 3),
        "hold_s": round(held["hold_end_epoch"] - held["ramp_end_epoch"], 3),
        "connect_attempts": held["connect_attempts"],
        "requests_sent": held["requests_sent"],
        "failures": {k: held["failures"][k] for k in FAILURE_KINDS},
        "failure_total": held["failure_total"],
        "first_failure": held["first_failure"],
        "hold_options": {k: getattr(config, k) for k in DEFAULTS},
        "holder_series": f"cells/{plan.cell_id}/holder.csv",
        "sockets_series": f"cells/{plan.cell_id}/sockets.csv",
        **server_figures(sampler.samples(), timeline, held, plan.server_cpus),
        **client_figures(timeline, held, plan.loadgen_cpus),
        **kernel_figures(census),
    }
    result = load_result(held, cell_dir, argv)
    return Measurement(result, held["started_epoch"], held["hold_end_epoch"], extra, hold_flags(result.errors))


DRIVER = HoldConnections()
