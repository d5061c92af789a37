"""oha adapter: open-loop load at a fixed rate (oha -q RATE --latency-correction), every request kept.

oha's ticker fires request i at start + i / rate into a FIFO; each of the -c connections takes the next
tick when it is free, so a slow server makes ticks wait (the queueing a real user would see) and with
--latency-correction each latency runs from its tick, not from the moment a connection was free.
Files: oha.json (its summary, --output-format json), oha.sqlite (--db-url: one row per answered request,
any status), oha.spec.json (what run() asked for: rate, window), oha.urls (several URLs), stdout, stderr.
Errors (refused, timeout, reset) are not rows: oha counts them only by message in the summary.
"""
from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
from collections import Counter
from pathlib import Path

from crossbench.loadgen import merge, openloop, process
from crossbench.loadgen.base import LoadGenerator, LoadgenError, LoadResult, LoadSpec, empty_errors, raw_path

name = "oha"
VERSION = "1.16.0"                 # runner/install-openloop.sh builds this one
MARGIN_S = 15.0

LATENCY_SOURCE = (
    "oha 1.16.0 -q RATE --latency-correction, one row per answered request in oha.sqlite: from the "
    "moment oha's ticker fired the request (start + i / rate, plus the ticker's own lateness, reported "
    "as schedule_lag_ms) to the last byte of the response; includes the wait for a free connection "
    "(at most -c in flight), connect time and the server's queueing. Percentiles: nearest rank over "
    "every row. Requests that failed (refused, timeout, reset) are not in them (counted in errors); "
    "ticks still waiting for a connection when the window ended were never sent (extra never_sent).")


# the pinned build in the tools cache, else one on PATH; its version as it prints it ("oha 1.16.0")
TOOL = openloop.PinnedTool(name, VERSION, ("--version",), r"^oha (\S+)")
binary, available, version = TOOL.binary, TOOL.available, TOOL.installed_version


def _ms(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"


def build_command(spec: LoadSpec, out_dir: Path | None = None) -> list[str]:
    """The oha command line; out_dir names its output files (the URL list too, written by run())."""
    TOOL.refuse_unfit(spec)
    out_dir = Path(out_dir or ".")
    cmd = process.taskset_prefix(spec.cpus) + [
        binary() or name, "--no-tui", "--output-format", "json", "-o", str(raw_path(out_dir, name, "json")),
        "--db-url", str(raw_path(out_dir, name, "sqlite")),
        "-z", _ms(spec.duration_s), "-q", f"{spec.rate:g}", "--latency-correction",
        "-w",                                  # answers in flight at the end are waited for (up to -t)
        "-c", str(spec.concurrency), "-t", _ms(spec.timeout_s),
        "--worker-threads", str(max(1, spec.threads))]
    if not spec.keepalive:
        cmd.append("--disable-keepalive")
    if len(spec.urls) > 1:
        return cmd + ["--urls-from-file", str(raw_path(out_dir, name, "urls"))]
    return cmd + [spec.urls[0]]


def run(spec: LoadSpec, out_dir: Path) -> LoadResult:
    if not available():
        raise LoadgenError(f"oha {VERSION} not built: run runner/install-openloop.sh oha")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for suffix in ("json", "sqlite"):
        raw_path(out_dir, name, suffix).unlink(missing_ok=True)   # --db-url appends to an existing file
    if len(spec.urls) > 1:
        raw_path(out_dir, name, "urls").write_text("".join(f"{u}\n" for u in spec.urls))
    cmd = build_command(spec, out_dir)
    raw_path(out_dir, name, "spec.json").write_text(json.dumps(
        {"rate": spec.rate, "window_s": spec.duration_s, "concurrency": spec.concurrency,
         "timeout_s": spec.timeout_s, "command": cmd}, indent=1) + "\n")
    limit = process.whole_seconds(spec.duration_s) + process.whole_seconds(spec.timeout_s) + MARGIN_S
    done = process.run_bounded(cmd, out_dir, name, limit, host=spec.host, start_at=spec.start_at)
    if done.returncode != 0:
        raise LoadgenError(f"oha exited {done.returncode}: {process.tail(done.stderr) or process.tail(done.stdout)}")
    result = parse(out_dir, tool_version=version())
    return dataclasses.replace(result, extra={**result.extra, "command": cmd})


def requests(out_dir: Path | str) -> list[openloop.Request]:
    """Every answered request of a run, from oha.sqlite, in the order the ticker fired them."""
    path = raw_path(Path(out_dir), name, "sqlite")
    if not path.exists():
        raise LoadgenError(f"oha: no per-request database {path}")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT start_latency_correction, start, end, duration, status, len_bytes, url "
                          "FROM oha ORDER BY COALESCE(start_latency_correction, start)").fetchall()
    return [openloop.Request(scheduled_s=fired if fired is not None else start, start_s=start, end_s=end,
                             latency_ms=duration * 1000, status=status, bytes=size, url=url)
            for fired, start, end, duration, status, size, url in rows]


def error_kind(message: str) -> str | None:
    """ERROR_KINDS for one of oha's error messages; None for the window's end (not the server's fault)."""
    text = message.lower()
    if "aborted due to deadline" in text:
        return None
    if "timeout" in text or "timed out" in text:
        return "timeout"
    if "connect" in text and ("refused" in text or "error trying to connect" in text or "connection error" in text):
        return "connect"
    if "broken pipe" in text or "write" in text:
        return "write"
    if "reset" in text or "closed" in text or "incomplete" in text or "eof" in text:
        return "read"
    return "other"


def merge_hosts(parts: list[tuple[str, LoadResult, float | None]]) -> LoadResult:
    """Several load hosts' runs as one (GENERATOR.merge): their per-request rows (oha.sqlite) as one population."""
    return merge.merge_open_loop(parts, lambda r: requests(merge.raw_dir(r, "oha.sqlite")))


def parse(source: Path | str, tool_version: str = "unknown") -> LoadResult:
    """A LoadResult from a run directory (oha.json, oha.sqlite, oha.spec.json)."""
    out_dir = Path(source)
    try:
        summary = json.loads(raw_path(out_dir, name, "json").read_text())
        spec = json.loads(raw_path(out_dir, name, "spec.json").read_text())
        rate, window = float(spec["rate"]), float(spec["window_s"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LoadgenError(f"oha: unreadable output in {out_dir} ({exc})") from exc
    rows = requests(out_dir)

    errors, messages, deadline = empty_errors(), summary.get("errorDistribution", {}), 0
    for message, count in messages.items():
        kind = error_kind(message)
        if kind is None:
            deadline += count
        else:
            errors[kind] += count
    errors["non_2xx"] = sum(1 for r in rows if not 200 <= r.status < 300)

    sent = len(rows) + sum(messages.values())           # every tick a connection took, answered or not
    scheduled = math.ceil(window * rate - 1e-9)          # ticks i = 0.. with i / rate before the deadline
    failed = sum(messages.values()) - deadline
    # The ticker's own lateness: the k-th fired tick against k / rate. Exact when every tick became a
    # row; with failures mid-run a row's k is too small, so the figures are an upper bound.
    lag = openloop.lag_figures([(r.scheduled_s - k / rate) * 1000 for k, r in enumerate(rows)])
    extra = {
        **openloop.rates(rows, window, rate, sent),
        "schedule_lag_ms": lag,
        "schedule_lag_exact": failed == 0,
        "queue_wait_ms": openloop.spread([(r.start_s - r.scheduled_s) * 1000 for r in rows]),
        "scheduled": scheduled,
        "never_sent": max(0, scheduled - sent),
        "aborted_at_deadline": deadline,
        "latency_slope_ms_per_s": openloop.slope_ms_per_s(rows),
        "status_counts": {str(k): v for k, v in sorted(Counter(r.status for r in rows).items())},
        "error_messages": messages,
        "concurrency": spec.get("concurrency"),
        "tool_percentiles_ms": {k: v * 1000 for k, v in summary.get("latencyPercentiles", {}).items()
                                if v is not None},
        "tool_total_s": summary["summary"]["total"],
    }
    return openloop.result(
        name, tool_version, rows, window, bytes=sum(r.bytes for r in rows), errors=errors,
        latency_source=LATENCY_SOURCE, extra=extra,
        raw_files=process.existing(out_dir, name, ("json", "sqlite", "spec.json", "urls", "stdout", "stderr")))


GENERATOR = LoadGenerator(
    name=name, available=available, version=version, build_command=build_command, run=run, parse=parse,
    open_loop=True,                    # sends on a schedule (LoadSpec.rate): open-loop cells use it
    on_load_hosts="build",             # hosts.sh setup --open-loop builds it on the load hosts (install-openloop.sh)
    merge=merge_hosts, binary=binary, requests=requests)
