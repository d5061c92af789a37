"""wrk adapter: the default engine.

The Lua script runner/lua/report.lua picks a URL path at random per request, pipelines when asked,
and writes wrk's own summary (counters, latency histogram, per-thread rate) as wrk.json from done().
Nothing is scraped from wrk's human-readable stdout; it is kept as wrk.stdout for people.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
from pathlib import Path
from urllib.parse import urlsplit

from crossbench.loadgen import merge, process, wrk_correction, wrk_requests
from crossbench.loadgen.base import LoadGenerator, LoadgenError, LoadResult, LoadSpec, empty_errors, raw_path

name = "wrk"
LUA_SCRIPT = Path(__file__).resolve().parents[2] / "lua" / "report.lua"
JSON_ENV = "CROSSBENCH_WRK_JSON"
MARGIN_S = 15.0
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0}

LATENCY_SOURCE = (
    "wrk's latency histogram (1 us buckets) with wrk's own coordinated-omission correction undone: time from "
    "writing a request to its last response byte, one sample per answer; TCP connect time is not included (the "
    "clock starts at the first write on a connection). wrk adds synthetic samples for latencies above 2x its "
    "expected interval, duration / (requests / connections) (stats_correct); they are taken off exactly "
    "(loadgen/wrk_correction.py) and wrk's own figures kept as loadgen_reported_latency_ms. Responses slower "
    "than --timeout are left out and counted as timeout errors. With pipeline depth N there is one sample per "
    "batch of N requests."
)
CONNECTIONS_ENV, PIPELINE_ENV = "CROSSBENCH_WRK_CONNECTIONS", "CROSSBENCH_WRK_PIPELINE"


def available() -> bool:
    return shutil.which("wrk") is not None


def version() -> str:
    """wrk -v prints e.g. 'wrk debian/4.1.0-3+b2 [epoll] Copyright (C) 2012 Will Glozer' (and exits 1)."""
    match = re.search(r"^wrk (\S+)", process.version_output(["wrk", "-v"]), re.MULTILINE)
    return match.group(1) if match else "unknown"


def threads_for(spec: LoadSpec) -> int:
    """min(threads, connections), at least 1, lowered until it divides the connections.

    wrk gives each thread connections // threads connections, so -c 10 -t 3 would really open 9.
    """
    threads = max(1, min(spec.threads, spec.concurrency))
    while spec.concurrency % threads:
        threads -= 1
    return threads


def _paths(spec: LoadSpec) -> list[str]:
    if not spec.urls:
        raise LoadgenError("wrk: no URL given")
    origins = {urlsplit(u)[:2] for u in spec.urls}
    if len(origins) != 1:
        raise LoadgenError(f"wrk connects to one host: all URLs must share scheme and host:port, got {sorted(origins)}")
    paths = []
    for url in spec.urls:
        parts = urlsplit(url)
        paths.append((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
    return paths


def build_command(spec: LoadSpec, out_dir: Path | None = None) -> list[str]:
    """The wrk command line; the JSON file is named through $CROSSBENCH_WRK_JSON by run()."""
    if spec.concurrency < 1 or spec.pipeline < 1:
        raise LoadgenError(f"wrk: concurrency and pipeline must be >= 1, got {spec.concurrency}, {spec.pipeline}")
    if spec.pipeline > 1 and not spec.keepalive:
        raise LoadgenError(
            "wrk: pipelining needs keep-alive (Connection: close ends the connection "
            "after the first response of the batch)"
        )
    paths = _paths(spec)
    cmd = process.taskset_prefix(spec.cpus) + [
        "wrk",
        "-t",
        str(threads_for(spec)),
        "-c",
        str(spec.concurrency),
        "-d",
        f"{process.whole_seconds(spec.duration_s)}s",
        "--timeout",
        f"{process.whole_seconds(spec.timeout_s)}s",
        "--latency",
        "-s",
        str(LUA_SCRIPT),
    ]
    if not spec.keepalive:
        cmd += ["-H", "Connection: close"]
    if spec.requests:  # a workload file's requests, rendered beside the cell's raw files by run()
        return cmd + [spec.urls[0], "--", str(spec.pipeline), "@" + str(Path(out_dir or ".") / wrk_requests.FILE)]
    return cmd + [spec.urls[0], "--", str(spec.pipeline), *paths]


def run(spec: LoadSpec, out_dir: Path) -> LoadResult:
    process.require("wrk")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = raw_path(out_dir, name, "json")
    json_path.unlink(missing_ok=True)
    if spec.requests:
        wrk_requests.written(spec.requests, out_dir)
    cmd = build_command(spec, out_dir)
    limit = process.whole_seconds(spec.duration_s) + process.whole_seconds(spec.timeout_s) + MARGIN_S
    env = {JSON_ENV: str(json_path), CONNECTIONS_ENV: str(spec.concurrency), PIPELINE_ENV: str(spec.pipeline)}
    done = process.run_bounded(cmd, out_dir, name, limit, env=env, host=spec.host, start_at=spec.start_at)
    if done.returncode != 0:
        raise LoadgenError(f"wrk exited {done.returncode}: {process.tail(done.stderr) or process.tail(done.stdout)}")
    if not json_path.exists() or not json_path.read_text().strip():
        raise LoadgenError(f"wrk wrote no JSON (Lua error?): {process.tail(done.stderr)}")
    result = parse(out_dir, tool_version=version())
    extra = {
        **result.extra,
        "command": cmd,
        "threads": threads_for(spec),
        "connections": spec.concurrency,
        "pipeline": spec.pipeline,
        "keepalive": spec.keepalive,
    }
    return dataclasses.replace(result, extra=extra)


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1000.0


def percentile(histogram: list[tuple[int, int]], p: float) -> int | None:
    """wrk's own rule (stats_percentile in stats.c): the first value whose running count reaches
    round(p / 100 * n + 0.5); histogram = sorted (value_us, count) pairs. C's round() takes a half away from
    zero and Python's to the even neighbour, so the rank is floor(p / 100 * n + 1), which is C's round there."""
    total = sum(count for _, count in histogram)
    if not total:
        return None
    rank = math.floor(p / 100 * total + 1)
    seen = 0
    for value, count in histogram:
        seen += count
        if seen >= rank:
            return value
    return histogram[-1][0]


def added(histograms: list[list[tuple[int, int]]]) -> list[tuple[int, int]]:
    """Several wrk histograms (1 us buckets) as one."""
    counts: dict[int, int] = {}
    for histogram in histograms:
        for value, count in histogram:
            counts[value] = counts.get(value, 0) + count
    return sorted(counts.items())


def latency_ms_of(histogram: list[tuple[int, int]]) -> dict[str, float | None]:
    """mean, p50, p90, p99 and max (ms) of a histogram, by wrk's rule."""
    total = sum(count for _, count in histogram)
    if not total:
        return {"mean": None, **{k: None for k in PERCENTILES}, "max": None}
    figures = {k: percentile(histogram, p) / 1000 for k, p in PERCENTILES.items()}
    return {"mean": sum(v * c for v, c in histogram) / total / 1000, **figures, "max": histogram[-1][0] / 1000}


def histogram_of(result: LoadResult) -> list[tuple[int, int]]:
    """The samples the run's requests had (wrk's correction undone: parse)."""
    histogram = result.extra.get("histogram_us")
    if histogram is None:
        raise LoadgenError(
            "wrk: no recovered histogram (its JSON has none, or one that could not be recovered: "
            f"{result.extra.get('latency_invalid')}): its launches cannot be merged exactly"
        )
    return [(int(v), int(c)) for v, c in histogram]


def histogram_percentiles(out_dir: Path | str, percents) -> list[tuple[float, float]]:
    """(percent, ms) of the samples the requests had (the recovered histogram, parse), by wrk's rule; [] when it
    could not be recovered."""
    histogram = parse(out_dir).extra.get("histogram_us")
    if not histogram:
        return []
    samples = [(int(v), int(c)) for v, c in histogram]
    return [(p, percentile(samples, p) / 1000) for p in percents]


def merge_hosts(parts: list[tuple[str, LoadResult, float | None]]) -> LoadResult:
    """Several load hosts' runs as one (GENERATOR.merge): their histograms added; when any host's histogram is
    broken (the pipelined correction: parse), only the largest max survives, as in a single run."""
    broken = [r.extra["latency_invalid"] for _, r, _ in parts if r.extra.get("latency_invalid")]
    if broken:
        worst = max((r.latency_ms.get("max") or 0 for _, r, _ in parts), default=None)
        one = merge.merged(parts, {"mean": None, "p50": None, "p90": None, "p99": None, "max": worst})
        return dataclasses.replace(
            one,
            latency_method="none",
            extra={**one.extra, "latency_invalid": broken[0], "status_counts": merge.status_counts(parts)},
        )
    one = merge.merged(parts, latency_ms_of(added([histogram_of(r) for _, r, _ in parts])))
    return dataclasses.replace(one, extra={**one.extra, "status_counts": merge.status_counts(parts)})


def parse(source: Path | str, tool_version: str = "unknown") -> LoadResult:
    """A LoadResult from wrk.json: a run directory, the JSON file itself, or its text. Its latency figures are
    those of the samples the requests had (wrk's correction undone); wrk's own are kept as reported_latency_ms.
    A histogram that cannot be recovered leaves the figures null (but max, which is always a real sample) and
    says why in extra latency_invalid; the counts stand."""
    path = Path(source) if not (isinstance(source, str) and source.lstrip().startswith("{")) else None
    if path is not None and path.is_dir():
        path = raw_path(path, name, "json")
    try:
        data = json.loads(path.read_text() if path is not None else source)
        errors, latency = data["errors"], data["latency_us"]
        percentiles = latency["percentiles"]
        requests, duration_us = int(data["requests"]), int(data["duration_us"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LoadgenError(f"wrk: unreadable result JSON ({exc})") from exc

    kinds = empty_errors()
    for kind in ("connect", "read", "write", "timeout"):
        kinds[kind] = int(errors[kind])
    kinds["non_2xx"] = int(errors["status"])  # wrk counts status > 399 only: 3xx are not errors here
    reported = {
        "mean": _ms(latency["mean"]),
        "p50": _ms(percentiles["50"]),
        "p90": _ms(percentiles["90"]),
        "p99": _ms(percentiles["99"]),
        "max": _ms(latency["max"]),
    }
    recovered, why = _recovered(data, path, requests, duration_us, kinds["timeout"])
    if why:
        latency_ms, method = {**dict.fromkeys(PERCENTILES, None), "mean": None, "max": reported["max"]}, "none"
    else:
        latency_ms, method = latency_ms_of(recovered), "recovered"
    return LoadResult(
        tool=name,
        tool_version=tool_version,
        requests=requests,
        duration_s=duration_us / 1e6,
        bytes=int(data["bytes"]),
        errors=kinds,
        latency_ms=latency_ms,
        latency_source=LATENCY_SOURCE,
        latency_method=method,
        reported_latency_ms=reported,
        raw_files=process.existing(path.parent, name, ("json", "stdout", "stderr")) if path else (),
        extra={
            "latency_us": latency,
            "thread_rps": data.get("thread_rps"),
            "status_counts": data.get("statuses"),  # answers per status: with declared requests only (report.lua)
            "non_2xx_counts": "status > 399 only (wrk ignores 3xx)",
            **(
                {"latency_invalid": why}
                if why
                else {
                    "histogram_us": recovered,
                    "synthetic_samples": sum(c for _, c in latency["histogram"]) - sum(c for _, c in recovered),
                }
            ),
        },
    )


def _recovered(
    data: dict, path: Path | None, requests: int, duration_us: int, timeouts: int
) -> tuple[list[tuple[int, int]], str | None]:
    """The histogram of the requests' own samples, or why it cannot be had."""
    histogram = data["latency_us"].get("histogram")
    if histogram is None:
        return [], (
            "wrk's JSON has no histogram (a report.lua that could not read wrk's buckets within its "
            "budget, or an older one): the correction cannot be undone"
        )
    connections = data.get("connections")
    if connections is None and path is not None:
        connections = wrk_correction.connections_from_stdout(path.parent / f"{name}.stdout")
    if connections is None:
        return [], "wrk's connection count is unknown (not in its JSON nor its stdout): the correction cannot be undone"
    pipeline = int(data.get("pipeline") or 1)
    try:
        own = wrk_correction.undone(
            [(int(v), int(c)) for v, c in histogram],
            wrk_correction.interval_us(duration_us, requests, int(connections)),
        )
        wrk_correction.check_count(
            sum(c for _, c in own),
            requests=requests,
            timeouts=timeouts,
            pipeline=pipeline,
            connections=int(connections),
        )
    except wrk_correction.Unrecoverable as exc:
        return [], f"wrk's histogram could not be recovered: {exc}"
    return own, None


GENERATOR = LoadGenerator(
    name=name,
    available=available,
    version=version,
    build_command=build_command,
    run=run,
    parse=parse,
    on_load_hosts="prerequisites",  # prerequisites.sh installs it on every load host (hosts.sh check asks for it)
    merge=merge_hosts,
    percentiles=histogram_percentiles,
    sends="mix",  # a workload file's requests through report.lua, each by its weight
)
