"""ApacheBench (ab) adapter: seed 000's tool. One URL, HTTP/1.0, text output parsed.

ab writes three files here: ab.stdout (its report, parsed), ab.csv (-e: the 0..100th percentiles in
ms with 3 decimals) and ab.tsv (-g: one line per request, whole ms, start time in whole seconds).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from crossbench.loadgen import merge, openloop, process
from crossbench.loadgen.base import LoadGenerator, LoadgenError, LoadResult, LoadSpec, empty_errors, raw_path

name = "ab"
MAX_CONCURRENCY = 20000  # ab.c MAX_CONCURRENCY
TIME_LIMIT_REQUESTS = 50000  # ab -t implies -n 50000 (and stops there even before the time is up)
MARGIN_S = 15.0

LATENCY_SOURCE = (
    "ab's per-request total time (connect + request + full response), measured from the start of "
    "each connection (with -k, from the previous response on a kept-alive connection); no "
    "coordinated-omission correction. Includes ab's start-up artifact: ab sends one request alone "
    "and opens the other C-1 connections only when its header has arrived. mean: whole ms from the "
    "'Total' row; p50/p90/p99/max from ab.csv (0.001 ms) when it is consistent, else whole ms "
    "from the 'Percentage of the requests served' table."
)


@dataclass(frozen=True)
class AbOptions:
    requests: int | None = None  # -n: stop after this many (with -t, whichever comes first)
    exit_on_recv_error: bool = False  # ab's own default; False passes -r so one reset does not end the run
    wall_limit_s: float = 600.0  # bound for a count-only run (no -t)


def available() -> bool:
    return shutil.which("ab") is not None


def version() -> str:
    """ab -V prints 'This is ApacheBench, Version 2.3 <$Revision$>'."""
    match = re.search(r"ApacheBench, Version (\S+)", process.version_output(["ab", "-V"]))
    return match.group(1) if match else "unknown"


def build_command(spec: LoadSpec, out_dir: Path | None = None, options: AbOptions | None = None) -> list[str]:
    """The ab command line; without out_dir the -g/-e files are named relative to the working directory."""
    options = options or AbOptions()
    if len(spec.urls) != 1:
        raise LoadgenError(f"ab takes exactly one URL, got {len(spec.urls)}: use wrk for a URL mix")
    if spec.pipeline != 1:
        raise LoadgenError("ab cannot pipeline requests")
    if not 1 <= spec.concurrency <= MAX_CONCURRENCY:
        raise LoadgenError(f"ab concurrency must be 1..{MAX_CONCURRENCY}, got {spec.concurrency}")
    if spec.duration_s <= 0 and not options.requests:
        raise LoadgenError("ab needs a time limit (spec.duration_s > 0) or a count (AbOptions.requests)")
    if options.requests is not None and options.requests < spec.concurrency:
        raise LoadgenError(f"ab refuses concurrency {spec.concurrency} above its request count {options.requests}")
    url = spec.urls[0]
    if not urlsplit(url).path:
        url += "/"
    cmd = process.taskset_prefix(spec.cpus) + ["ab"]
    if spec.duration_s > 0:
        cmd += ["-t", str(process.whole_seconds(spec.duration_s))]
    if options.requests:
        cmd += ["-n", str(options.requests)]  # after -t, which would reset it to 50000
    cmd += ["-c", str(spec.concurrency), "-s", str(process.whole_seconds(spec.timeout_s))]
    if spec.keepalive:
        cmd.append("-k")
    if not options.exit_on_recv_error:
        cmd.append("-r")
    out_dir = Path(out_dir or ".")
    return cmd + ["-g", str(raw_path(out_dir, name, "tsv")), "-e", str(raw_path(out_dir, name, "csv")), url]


def run(spec: LoadSpec, out_dir: Path, options: AbOptions | None = None) -> LoadResult:
    options = options or AbOptions()
    process.require("ab")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for suffix in ("tsv", "csv"):
        raw_path(out_dir, name, suffix).unlink(missing_ok=True)
    cmd = build_command(spec, out_dir, options)
    window = process.whole_seconds(spec.duration_s) if spec.duration_s > 0 else options.wall_limit_s
    done = process.run_bounded(
        cmd,
        out_dir,
        name,
        window + process.whole_seconds(spec.timeout_s) + MARGIN_S,
        host=spec.host,
        start_at=spec.start_at,
    )
    if done.returncode != 0:
        raise LoadgenError(f"ab exited {done.returncode}: {process.tail(done.stderr) or process.tail(done.stdout)}")
    result = parse(out_dir, tool_version=version())
    cap = options.requests or (TIME_LIMIT_REQUESTS if spec.duration_s > 0 else None)
    extra = {
        **result.extra,
        "command": cmd,
        "keepalive": spec.keepalive,
        "stopped_by_count": bool(cap and result.extra["complete_requests"] >= cap),
    }
    return dataclasses.replace(result, extra=extra)


def _number(pattern: str, text: str, cast=int, default=None):
    match = re.search(pattern, text, re.MULTILINE)
    return cast(match.group(1)) if match else default


def _csv_percentiles(path: Path) -> dict[int, float] | None:
    """ab.csv as {percent: ms}; None when missing or not non-decreasing.

    ab indexes its sorted samples at round(done * p / 100), which runs one past the end for high p
    when few requests were done (with -n 40, the 99% row reads memory after the array).
    """
    if not path.exists():
        return None
    rows = {}
    for line in path.read_text().splitlines()[1:]:
        percent, ms = line.split(",")
        rows[int(percent)] = float(ms)
    values = [rows[p] for p in sorted(rows)]
    if not values or any(b < a for a, b in zip(values, values[1:])):
        return None
    return rows


def parse(source: Path | str, tool_version: str = "unknown") -> LoadResult:
    """A LoadResult from ab's report: a run directory (ab.stdout, ab.csv) or the report text."""
    directory, text = process.source_text(source, name)
    complete = _number(r"^Complete requests:\s+(\d+)", text)
    taken = _number(r"^Time taken for tests:\s+([\d.]+) seconds", text, float)
    if complete is None or taken is None:
        raise LoadgenError(f"ab report has no results: {text.strip().splitlines()[-1:] or 'empty'}")

    failed = re.search(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", text)
    connect, receive, length, exceptions = (int(g) for g in failed.groups()) if failed else (0, 0, 0, 0)
    errors = empty_errors()
    errors.update(
        connect=connect,
        read=receive,
        write=_number(r"^Write errors:\s+(\d+)", text, default=0),
        non_2xx=_number(r"^Non-2xx responses:\s+(\d+)", text, default=0),
        other=length + exceptions,
    )

    rows = {
        m.group(1): [int(x) for x in m.group(2, 3, 5, 6)] + [float(m.group(4))]
        for m in re.finditer(
            r"^(Connect|Processing|Waiting|Total):\s+(\d+)\s+(\d+)\s+([\d.]+)\s+(\d+)\s+(\d+)$", text, re.MULTILINE
        )
    }
    table = {int(p): float(ms) for p, ms in re.findall(r"^\s*(\d+)%\s+(\d+)", text, re.MULTILINE)}
    csv = _csv_percentiles(raw_path(directory, name, "csv")) if directory else None
    pct = csv or table
    total = rows.get("Total")  # min, mean, median, max, sd
    latency = {
        "mean": float(total[1]) if total else None,
        "p50": pct.get(50),
        "p90": pct.get(90),
        "p99": pct.get(99),
        "max": pct.get(100, float(total[3]) if total else None),
    }
    return LoadResult(
        tool=name,
        tool_version=tool_version,
        # with -r a failed receive is still stored as a "complete" request: take those out
        requests=complete - receive,
        duration_s=taken,
        bytes=_number(r"^Total transferred:\s+(\d+) bytes", text, default=0),
        errors=errors,
        latency_ms=latency,
        latency_source=LATENCY_SOURCE,
        latency_resolution_ms=1.0,  # the mean is the 'Total' row's, in whole ms
        raw_files=process.existing(directory, name, ("stdout", "stderr", "csv", "tsv")) if directory else (),
        extra={
            "complete_requests": complete,
            "failed_requests": _number(r"^Failed requests:\s+(\d+)", text, default=0),
            "failed_breakdown": {"connect": connect, "receive": receive, "length": length, "exceptions": exceptions},
            "keepalive_requests": _number(r"^Keep-Alive requests:\s+(\d+)", text),
            "html_bytes": _number(r"^HTML transferred:\s+(\d+) bytes", text),
            "document_length": _number(r"^Document Length:\s+(\d+) bytes", text),
            "rps_reported": _number(r"^Requests per second:\s+([\d.]+)", text, float),
            "connection_times_ms": {k: dict(zip(("min", "mean", "median", "max", "sd"), v)) for k, v in rows.items()},
            "percentiles_ms": pct,
            "percentiles_from": "ab.csv" if csv else "report table",
        },
    )


def per_request(source: Path | str) -> list[tuple[float, float]]:
    """(start_epoch_s, total_ms) per request from ab's -g file (a run directory or the file), by start.

    ab writes whole seconds for the start and whole ms for the time, sorted by total time: enough to
    drop the first second (ab's lone first request and the ramp of the other connections) and
    recompute figures on the rest, not to order requests within a second.
    """
    path = Path(source)
    if path.is_dir():
        path = raw_path(path, name, "tsv")
    rows = []
    for line in path.read_text().splitlines()[1:]:
        fields = line.split("\t")  # starttime (ctime text), seconds, ctime, dtime, ttime, wait
        rows.append((float(fields[1]), float(fields[4])))
    return sorted(rows, key=lambda row: row[0])


def merge_hosts(parts: list[tuple[str, LoadResult, float | None]]) -> LoadResult:
    """Several load hosts' runs as one (GENERATOR.merge), each started with its share of the count: the mean
    weighted by each run's requests (the union's own mean), percentiles from the union of their per-request times
    (ab.tsv: whole ms, ab's finest per-request figure), counts summed."""
    totals = sorted(ms for _, r, _ in parts for _, ms in per_request(merge.raw_dir(r, "ab.tsv")))
    done = sum(r.requests for _, r, _ in parts)
    mean = sum((r.latency_ms.get("mean") or 0) * r.requests for _, r, _ in parts) / done if done else None
    figures = {k: openloop.percentile(totals, p) for k, p in (("p50", "50"), ("p90", "90"), ("p99", "99"))}
    one = merge.merged(parts, {"mean": mean, **figures, "max": totals[-1] if totals else None})
    summed = {key: sum(r.extra.get(key) or 0 for _, r, _ in parts) for key in ("complete_requests", "failed_requests")}
    return dataclasses.replace(
        one,
        latency_source=one.latency_source + " Percentiles from the hosts' ab.tsv rows (whole ms).",
        extra={**one.extra, **summed},
    )


GENERATOR = LoadGenerator(
    name=name,
    available=available,
    version=version,
    build_command=build_command,
    run=run,
    parse=parse,
    merge=merge_hosts,
)
