"""SYNTHETIC run directories for the analysis tests. Nothing here was measured: the figures follow a toy model
(Tomcat's 200-thread pool caps delay throughput, Tornado's event loop does not) only so the charts have shapes
to draw. Every file written says so (metadata "synthetic": true, CPU model "SYNTHETIC ...")."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

SYNTHETIC_CPU = "SYNTHETIC test data, not a measurement"
MAX_THREADS = 200
JVM_BASE_THREADS = 22


def _latency(mean_ms: float) -> dict:
    return {"mean": mean_ms, "p50": mean_ms * 0.97, "p90": mean_ms * 1.2, "p99": mean_ms * 1.6, "max": mean_ms * 2.2}


# How each synthetic server behaves: a thread pool that grows with load (Tomcat) or one event loop (Tornado).
MODEL = {
    "tomcat": {"static_ceiling": 4200, "pooled": True, "rss_base": 180, "cpu_per_c": 40},
    "tornado": {"static_ceiling": 1300, "pooled": False, "rss_base": 32, "cpu_per_c": 30},
}
FLAGGED_CELL = ("tornado", "static")  # (server, group) of the cell drawn flagged, at the top concurrency
FAILED_CELL = ("tomcat", "delay")  # (server, group) of the cell drawn failed, at C=100, the last delay


def _plans(concurrency, delays, groups):
    """(group, server, endpoint, C, delay_ms) in run order."""
    plans = []
    if "static" in groups:
        for server in ("tomcat", "tornado"):
            plans += [("static", server, "/static/*", c, 0) for c in concurrency]
    if "delay" in groups:
        for delay in delays:
            for server, endpoint in (("tomcat", "/delay/sync"), ("tornado", "/delay/async")):
                plans += [("delay", server, endpoint, c, delay) for c in concurrency]
    if "tomcat_async" in groups:
        plans += [("tomcat_async", "tomcat", "/delay/async", c, delays[0]) for c in concurrency]
    return plans


def _figures(server, endpoint, c, delay_ms, rng, scale, noise_amplitude):
    noise = 1 + rng.uniform(-noise_amplitude, noise_amplitude)
    if delay_ms == 0:
        rps = MODEL[server]["static_ceiling"] * (1 - math.exp(-c / 4)) * scale * noise
        mean_ms = c / rps * 1000
        threads = (JVM_BASE_THREADS + min(c, MAX_THREADS) // 4 + 10) if MODEL[server]["pooled"] else 3
        cpu = min(c * MODEL[server]["cpu_per_c"], 100)
        per_core = {"0": min(20 + c * 5, 60), "1": min(c * 40, 100)}
    else:
        delay_s = delay_ms / 1000
        in_flight = min(c, MAX_THREADS) if endpoint == "/delay/sync" else c
        rps = in_flight / delay_s * 0.995 * scale * noise
        mean_ms = c / rps * 1000 if endpoint == "/delay/sync" else delay_ms * 1.002
        threads = (
            (JVM_BASE_THREADS + (min(c, MAX_THREADS) if endpoint == "/delay/sync" else 8))
            if MODEL[server]["pooled"]
            else 3
        )
        cpu = 2 + c * 0.01
        per_core = {"0": 3 + c * 0.01, "1": 2 + c * 0.01}
    rss = MODEL[server]["rss_base"] + (threads * 0.5 if MODEL[server]["pooled"] else c * 0.02)
    return rps, mean_ms, threads, cpu, per_core, rss


def _samples(path: Path, t_start: float, threads_final: int, server: str, warmup_s: float, measure_s: float):
    rows = [
        "t_epoch,phase,procs,threads,rss_mb,cpu_percent,cpu_core0,cpu_core1,loadgen_cpu_percent,pool_current,pool_busy"
    ]
    t = t_start
    total = warmup_s + measure_s + 1.0
    while t < t_start + total:
        elapsed = t - t_start
        phase = "warmup" if elapsed < warmup_s else ("measure" if elapsed < warmup_s + measure_s else "cooldown")
        ramp = min(1.0, elapsed / 1.5)
        if MODEL[server]["pooled"]:
            threads = int(JVM_BASE_THREADS + (threads_final - JVM_BASE_THREADS) * ramp)
            pool = threads - JVM_BASE_THREADS
            pool_current, pool_busy = str(pool), str(max(0, pool - 2))
        else:
            threads, pool_current, pool_busy = threads_final, "", ""
        rows.append(
            f"{t:.3f},{phase},1,{threads},{150 + threads * 0.4:.1f},{20 * ramp:.1f},"
            f"{10 * ramp:.1f},{25 * ramp:.1f},{15 * ramp:.1f},{pool_current},{pool_busy}"
        )
        t += 0.25
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(rows) + "\n")


def make_run(
    path: Path,
    *,
    experiment: str = "seed002",
    run_id: str | None = None,
    repetitions: int = 1,
    concurrency=(1, 10, 100, 1000),
    delays=(1000, 3000),
    groups=("static", "delay", "tomcat_async"),
    scale: float = 1.0,
    seed: int = 2,
    flagged: bool = True,
    failed: bool = True,
    samples: bool = True,
    noise: float = 0.004,
) -> Path:
    """Writes a SYNTHETIC run directory at path and returns it. With flagged/failed: one cell flagged for
    errors (Tornado static C=1000) and one failed cell with null figures (Tomcat delay C=100 at the last
    delay). noise: the relative spread of the toy model's rps between repetitions."""
    rng = random.Random(seed)
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    run_id = run_id or f"20261122-0130-{experiment}-synthetic"
    duration_s, warmup_s = 6.0, 2.0
    metadata = {
        "schema_version": 1,
        "run_id": run_id,
        "experiment": experiment,
        "synthetic": True,
        "started_at": "2026-11-22T01:30:00+00:00",
        "ended_at": "2026-11-22T02:10:00+00:00",
        "machine": {
            "cpu_model": SYNTHETIC_CPU,
            "cores": 2,
            "memory_gb": 7.8,
            "kernel": "6.1.0-synthetic",
            "hostname": "synthetic",
        },
        "versions": {
            "jdk": "17.0.99-synthetic",
            "python": "3.11.2",
            "tomcat": "9.0.99",
            "tornado": "6.5.2",
            "wrk": "4.1.0",
        },
        "git_revision": "0123456789abcdef0123456789abcdef01234567",
        "config": {
            "name": experiment,
            "run": {"duration_s": duration_s, "warmup_s": warmup_s, "repetitions": repetitions, "loadgen": "wrk"},
            "tomcat": {"max_threads": [MAX_THREADS]},
            "note": "SYNTHETIC",
        },
    }
    (path / "metadata.json").write_text(json.dumps(metadata, indent=2))
    records = []
    t = 1795000000.0
    index = 0
    plans = _plans(concurrency, delays, groups)
    for group, server, endpoint, c, delay_ms in plans:
        for rep in range(1, repetitions + 1):
            index += 1
            kind = endpoint.strip("/").replace("/", "_").replace("*", "all")
            cell_id = f"{index:04d}-{server}-{kind}-c{c}-d{delay_ms}-r{rep}"
            rps, mean_ms, threads, cpu, per_core, rss = _figures(server, endpoint, c, delay_ms, rng, scale, noise)
            window = duration_s
            requests = int(rps * window)
            pooled = MODEL[server]["pooled"]
            record = {
                "schema_version": 1,
                "cell_id": cell_id,
                "point_id": f"{group}-{server}-{kind}-c{c}-d{delay_ms}",
                "index": index,
                "experiment": experiment,
                "group": group,
                "server": server,
                "endpoint": endpoint,
                "concurrency": c,
                "delay_ms": delay_ms,
                "duration_s": duration_s,
                "warmup_s": warmup_s,
                "repetition": rep,
                "loadgen": "wrk",
                "keepalive": True,
                "requests": requests,
                "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0, "non_2xx": 0, "other": 0},
                "error_total": 0,
                "rps": rps,
                "rps_steady": c / mean_ms * 1000,
                "bytes_per_s": rps * (780000 if delay_ms == 0 else 2),
                "latency_ms": _latency(mean_ms),
                "latency_source": "wrk done() (synthetic)",
                "efficiency_ratio": (c / rps) / (delay_ms / 1000) if delay_ms else None,
                "latency_ratio": mean_ms / delay_ms if delay_ms else None,
                "threads_peak": threads,
                "threads_mean": threads - 1,
                "rss_peak_mb": rss,
                "cpu_percent": cpu,
                "cpu_per_core": per_core,
                "loadgen_cpu_percent": 5 + min(c, 100) * 0.3,
                "server_cpus": [1],
                "loadgen_cpus": [0],
                "max_threads": MAX_THREADS if pooled else None,
                "executor": "platform" if pooled else None,
                "accept_count": 1024,
                "max_connections": 8192 if pooled else None,
                "processes": 1,
                "pool_busy_peak": min(c, MAX_THREADS) if pooled else None,
                "pool_current_peak": min(c, MAX_THREADS) if pooled else None,
                "status": "ok",
                "valid": True,
                "flags": [],
                "started_at": "2026-11-22T01:31:00+00:00",
                "ended_at": "2026-11-22T01:31:09+00:00",
                "series": f"cells/{cell_id}/samples.csv",
            }
            last_delay = max(delays) if delays else None
            if flagged and (server, group) == FLAGGED_CELL and c == max(concurrency):
                record["errors"]["timeout"] = 37
                record["error_total"] = 37
                record["valid"], record["flags"] = False, ["errors", "timeouts"]
            if failed and (server, group) == FAILED_CELL and c == 100 and delay_ms == last_delay:
                for key in (
                    "requests",
                    "errors",
                    "error_total",
                    "rps",
                    "rps_steady",
                    "bytes_per_s",
                    "efficiency_ratio",
                    "latency_ratio",
                    "threads_peak",
                    "threads_mean",
                    "rss_peak_mb",
                    "cpu_percent",
                    "cpu_per_core",
                    "loadgen_cpu_percent",
                    "pool_busy_peak",
                    "pool_current_peak",
                ):
                    record[key] = None
                record["latency_ms"] = {k: None for k in ("mean", "p50", "p90", "p99", "max")}
                record["status"], record["valid"], record["flags"] = "failed", False, ["server_died"]
                record["error"] = "CellFailed: tomcat died during the cell (synthetic)"
            elif samples:
                _samples(path / record["series"], t, threads, server, warmup_s, duration_s)
            t += duration_s + warmup_s + 5
            records.append(record)
    with open(path / "cells.jsonl", "w") as out:
        for record in records:
            out.write(json.dumps(record, sort_keys=True) + "\n")
    return path


def rewrite(run_dir: Path, change) -> None:
    """Each of a run's records (cells.jsonl) passed to change(record), which edits it in place, and written back."""
    records = [json.loads(line) for line in (run_dir / "cells.jsonl").read_text().splitlines() if line.strip()]
    for r in records:
        change(r)
    (run_dir / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def user_path_cell(cell_id: str, server: str, path: str, c: int, mean_ms: float, **fields) -> dict:
    """A SYNTHETIC closed-loop cell on a user's path (no delay, its ratios taken against its C=1 service time): C
    clients each waiting mean_ms, so C / mean_ms req/s, the server's core busy; `fields` add its group, knobs and
    threads."""
    return {
        "cell_id": cell_id,
        "server": server,
        "endpoint": path,
        "concurrency": c,
        "delay_ms": 0,
        "kind": "closed_loop",
        "status": "ok",
        "flags": [],
        "valid": True,
        "efficiency_ratio": None,
        "latency_ratio": None,
        "rps": c / (mean_ms / 1000),
        "cpu_percent": 99.0,
        "latency_ms": {"mean": mean_ms, "p50": mean_ms, "p99": mean_ms + 1},
        "server_cpus": [1],
        "error_total": 0,
        **fields,
    }


def write_user_run(run: Path, cells: list[dict], paths: list[str], experiment: str) -> Path:
    """A SYNTHETIC run directory of user-path cells: cells.jsonl and the metadata that names the paths (--path)."""
    run.mkdir()
    (run / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells))
    metadata = {
        "run_id": run.name,
        "experiment": experiment,
        "synthetic": True,
        "machine": {"cpu_model": SYNTHETIC_CPU, "somaxconn": "4096"},
        "config": {"run": {"paths": paths}},
    }
    (run / "metadata.json").write_text(json.dumps(metadata))
    return run
