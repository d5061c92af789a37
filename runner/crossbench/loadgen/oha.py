"""oha adapter: open-loop load at a fixed rate (oha -q RATE --latency-correction), every request kept; and closed
loop (no rate: -c connections, each with one request outstanding) for held windows (held.py), the window cut from
the rows of one process that runs warm-up, window and tail.

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
import time
from collections import Counter
from pathlib import Path

from crossbench.loadgen import held, merge, one_request, openloop, process
from crossbench.loadgen.base import LoadGenerator, LoadgenError, LoadResult, LoadSpec, empty_errors, raw_path

name = "oha"
VERSION = "1.16.0"  # runner/install-openloop.sh builds this one
MARGIN_S = 15.0

LATENCY_SOURCE = (
    "oha 1.16.0 -q RATE --latency-correction, one row per answered request in oha.sqlite: from the "
    "moment oha's ticker fired the request (start + i / rate, plus the ticker's own lateness, reported "
    "as schedule_lag_ms) to the last byte of the response; includes the wait for a free connection "
    "(at most -c in flight), connect time and the server's queueing. Percentiles: nearest rank over "
    "every row. Requests that failed (refused, timeout, reset) are not in them (counted in errors); "
    "ticks still waiting for a connection when the window ended were never sent (extra never_sent)."
)
HELD_LATENCY_SOURCE = (
    "oha 1.16.0 closed loop (-c C, no rate) in a held window (loadgen/held.py): one process ran the cell's load "
    "before, through and after the window; latency of each request sent inside the window, from its send to the "
    "last byte of its answer (one row per answered request in oha.sqlite), every one waited for under the same "
    "load; throughput credits each request with the share of its life inside the window. Percentiles: nearest "
    "rank over those rows. Requests that failed are counted in errors over the whole run."
)
HELD_OPEN_LATENCY_SOURCE = (
    "oha 1.16.0 -q RATE --latency-correction in a held window (loadgen/held.py): one process offered the rate "
    "before, through and after the window on a pool of -c keep-alive connections, opened before it; latency of "
    "each request the schedule fired inside the window, from its tick (start + i / rate) to the last byte of its "
    "answer, so the wait for a free connection counts. Percentiles: nearest rank over those rows. Requests that "
    "failed are counted in errors over the whole run."
)


# the pinned build in the tools cache, else one on PATH; its version as it prints it ("oha 1.16.0")
TOOL = openloop.PinnedTool(name, VERSION, ("--version",), r"^oha (\S+)")
binary, available, version = TOOL.binary, TOOL.available, TOOL.installed_version


def _ms(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"


def run_length_s(spec: LoadSpec) -> float:
    """How long oha sends: the window, and a held window's load before and after it (closed loop, or open loop
    at the window's own rate)."""
    return spec.held_s + spec.duration_s + spec.tail_s


def build_command(spec: LoadSpec, out_dir: Path | None = None) -> list[str]:
    """The oha command line; out_dir names its output files (the URL list too, written by run())."""
    TOOL.refuse_unfit(spec, closed_loop=True)
    out_dir = Path(out_dir or ".")
    schedule = [] if spec.rate is None else ["-q", f"{spec.rate:g}", "--latency-correction"]
    cmd = process.taskset_prefix(spec.cpus) + [
        binary() or name,
        "--no-tui",
        "--output-format",
        "json",
        "-o",
        str(raw_path(out_dir, name, "json")),
        "--db-url",
        str(raw_path(out_dir, name, "sqlite")),
        "-z",
        _ms(run_length_s(spec)),
        *schedule,
        "-w",  # answers in flight at the end are waited for (up to -t)
        "-c",
        str(spec.concurrency),
        "-t",
        _ms(spec.timeout_s),
        "--worker-threads",
        str(max(1, spec.threads)),
    ]
    if not spec.keepalive:
        cmd.append("--disable-keepalive")
    cmd += one_request.flags(spec, name)
    if len(spec.urls) > 1:
        return cmd + ["--urls-from-file", str(raw_path(out_dir, name, "urls"))]
    return cmd + [spec.urls[0]]


def run(spec: LoadSpec, out_dir: Path) -> LoadResult:
    if not available():
        raise LoadgenError(f"oha {VERSION} not built: run runner/install-openloop.sh oha")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for suffix in ("json", "sqlite"):
        raw_path(out_dir, name, suffix).unlink(missing_ok=True)  # --db-url appends to an existing file
    if len(spec.urls) > 1:
        raw_path(out_dir, name, "urls").write_text("".join(f"{u}\n" for u in spec.urls))
    cmd = build_command(spec, out_dir)
    planned = {
        "rate": spec.rate,
        "window_s": spec.duration_s,
        "concurrency": spec.concurrency,
        "timeout_s": spec.timeout_s,
        "held_s": spec.held_s,
        "tail_s": spec.tail_s,
        "launched_at": max(time.time(), spec.start_at or 0.0),
        "command": cmd,
    }
    write_spec(out_dir, planned)
    limit = process.whole_seconds(run_length_s(spec)) + process.whole_seconds(spec.timeout_s) + MARGIN_S
    done = process.run_bounded(cmd, out_dir, name, limit, host=spec.host, start_at=spec.start_at)
    started = getattr(spec.host, "last_start_s", None)
    if started is not None:  # a load host's tether reports when oha really started (its setup can run late)
        write_spec(out_dir, {**planned, "launched_at": started})
    if done.returncode != 0:
        raise LoadgenError(f"oha exited {done.returncode}: {process.tail(done.stderr) or process.tail(done.stdout)}")
    result = parse(out_dir, tool_version=version())
    return dataclasses.replace(result, extra={**result.extra, "command": cmd})


def write_spec(out_dir: Path, spec: dict) -> None:
    """oha.spec.json: what run() asked for, and launched_at, the epoch (this machine's clock) the rows' times
    start at."""
    raw_path(out_dir, name, "spec.json").write_text(json.dumps(spec, indent=1) + "\n")


def requests(out_dir: Path | str) -> list[openloop.Request]:
    """Every answered request of a run, from oha.sqlite, in the order the ticker fired them."""
    path = raw_path(Path(out_dir), name, "sqlite")
    if not path.exists():
        raise LoadgenError(f"oha: no per-request database {path}")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT start_latency_correction, start, end, duration, status, len_bytes, url "
            "FROM oha ORDER BY COALESCE(start_latency_correction, start)"
        ).fetchall()
    return [
        openloop.Request(
            scheduled_s=fired if fired is not None else start,
            start_s=start,
            end_s=end,
            latency_ms=duration * 1000,
            status=status,
            bytes=size,
            url=url,
        )
        for fired, start, end, duration, status, size, url in rows
    ]


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
    """Several load hosts' runs as one (GENERATOR.merge): their per-request rows (oha.sqlite) as one population
    (a held window is cut again from all of them: the queue is the server's, over every host's connections)."""
    first = parts[0][1].extra
    if first.get("held_window") is not None and "rate" not in first:  # closed loop: parse_held's, no rate
        return merge_held(parts)
    one = merge.merge_open_loop(parts, lambda r: window_requests(merge.raw_dir(r, "oha.sqlite")))
    if first.get("held_window") is None:
        return one
    window = one.duration_s  # an open-loop held window: every host's answers inside it
    achieved = sum(r.extra["held_window"]["answered"] for _, r, _ in parts) / window
    return dataclasses.replace(
        one,
        window_rate=achieved,
        extra={
            **one.extra,
            "rate_achieved": achieved,
            "window_epoch": first.get("window_epoch"),
            "run_requests": sum(r.extra.get("run_requests") or 0 for _, r, _ in parts),
        },
    )


def read_spec(out_dir: Path) -> dict:
    """oha.spec.json, as run() wrote it (write_spec)."""
    return json.loads(raw_path(out_dir, name, "spec.json").read_text())


def window_requests(out_dir: Path, spec: dict | None = None) -> list[openloop.Request]:
    """The requests an open-loop run counts: all of them, or a held run's fired inside its window (times from
    its start). `spec`: its oha.spec.json, when the caller has read it."""
    spec = spec or read_spec(out_dir)
    held_s, window = float(spec.get("held_s") or 0.0), float(spec["window_s"])
    rows = requests(out_dir)
    if not held_s:
        return rows
    return held.from_window_start([r for r in rows if held_s <= r.scheduled_s < held_s + window], held_s)


def window_percentiles(out_dir: Path | str, percents) -> list[tuple[float, float]]:
    """(percent, ms) over the requests the record counts, by the suite's one percentile: an open-loop run's
    (window_requests), or a held closed-loop run's sent inside its window (held.cut, as parse_held)."""
    out_dir = Path(out_dir)
    spec = read_spec(out_dir)
    if spec.get("rate") is None:
        return openloop.spectrum(held.window_of(requests(out_dir), int(spec["concurrency"]), spec)[0].sent, percents)
    return openloop.spectrum(window_requests(out_dir, spec), percents)


def merge_held(parts: list[tuple[str, LoadResult, float | None]]) -> LoadResult:
    """Held runs started together on several hosts, each with its share of the connections: one window cut from
    all their rows, with all their connections, each host's rows on the time line of the first to start."""
    dirs = [merge.raw_dir(r, "oha.sqlite") for _, r, _ in parts]
    specs = [read_spec(d) for d in dirs]
    starts = [float(s.get("launched_at") or 0.0) for s in specs]
    first = min(starts)
    rows = openloop.merge(*(openloop.shifted(requests(d), start - first) for d, start in zip(dirs, starts)))
    figures = held.run_figures(rows, sum(int(s["concurrency"]) for s in specs), {**specs[0], "launched_at": first})
    one = merge.merged(parts, figures["latency_ms"])
    return dataclasses.replace(
        one,
        requests=figures["requests"],
        duration_s=figures["duration_s"],
        window_rate=figures["rate"],
        bytes=figures["bytes"],
        extra={**one.extra, **figures["extra"]},
    )


def counted_errors(summary: dict) -> tuple[dict[str, int], int]:
    """oha's errors by kind (non_2xx left at 0) and the requests it aborted at its deadline."""
    errors, deadline = empty_errors(), 0
    for message, count in summary.get("errorDistribution", {}).items():
        kind = error_kind(message)
        if kind is None:
            deadline += count
        else:
            errors[kind] += count
    return errors, deadline


def parse_held(out_dir: Path, summary: dict, spec: dict, tool_version: str) -> LoadResult:
    """A held closed-loop run (no rate): the window cut from its rows (held.py)."""
    errors, _ = counted_errors(summary)
    return held.load_result(
        held.run_figures(requests(out_dir), int(spec["concurrency"]), spec),
        tool=name,
        tool_version=tool_version,
        errors=errors,
        latency_source=HELD_LATENCY_SOURCE,
        extra={
            "error_messages": summary.get("errorDistribution", {}),
            "tool_total_s": summary["summary"]["total"],
        },
        raw_files=process.existing(out_dir, name, ("json", "sqlite", "spec.json", "urls", "stdout", "stderr")),
    )


def parse(source: Path | str, tool_version: str = "unknown") -> LoadResult:
    """A LoadResult from a run directory (oha.json, oha.sqlite, oha.spec.json): open loop, or a held window."""
    out_dir = Path(source)
    try:
        summary = json.loads(raw_path(out_dir, name, "json").read_text())
        spec = read_spec(out_dir)
        if spec["rate"] is None:
            return parse_held(out_dir, summary, spec, tool_version)
        rate, window = float(spec["rate"]), float(spec["window_s"])
        held_s, tail_s = float(spec.get("held_s") or 0.0), float(spec.get("tail_s") or 0.0)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LoadgenError(f"oha: unreadable output in {out_dir} ({exc})") from exc
    every = requests(out_dir)
    run_s = held_s + window + tail_s

    messages = summary.get("errorDistribution", {})
    errors, deadline = counted_errors(summary)
    sent = len(every) + sum(messages.values())  # every tick a connection took, answered or not
    scheduled = math.ceil(run_s * rate - 1e-9)  # ticks i = 0.. with i / rate before the deadline
    failed = sum(messages.values()) - deadline
    # The ticker's own lateness: the k-th fired tick against k / rate. Exact when every tick became a
    # row; with failures mid-run a row's k is too small, so the figures are an upper bound.
    lags = [(r.scheduled_s - k / rate) * 1000 for k, r in enumerate(every)]
    inside = [held_s <= r.scheduled_s < held_s + window for r in every]
    rows = held.from_window_start([r for r, counted in zip(every, inside) if counted], held_s)
    errors["non_2xx"] = sum(1 for r in rows if not 200 <= r.status < 300)
    extra = {
        **openloop.rates(rows, window, rate, sent * window / run_s),
        "schedule_lag_ms": openloop.lag_figures([lag for lag, counted in zip(lags, inside) if counted]),
        "schedule_lag_exact": failed == 0,
        "queue_wait_ms": openloop.spread([(r.start_s - r.scheduled_s) * 1000 for r in rows]),
        "scheduled": math.ceil(window * rate - 1e-9),
        "never_sent": max(0, scheduled - sent),
        "aborted_at_deadline": deadline,
        "latency_slope_ms_per_s": openloop.slope_ms_per_s(rows),
        "status_counts": {str(k): v for k, v in sorted(Counter(r.status for r in rows).items())},
        "error_messages": messages,
        "concurrency": spec.get("concurrency"),
        "tool_percentiles_ms": {k: v * 1000 for k, v in summary.get("latencyPercentiles", {}).items() if v is not None},
        "tool_total_s": summary["summary"]["total"],
    }
    if held_s or tail_s:
        extra.update(held_open_loop(every, rows, spec, run_s))
    result = openloop.result(
        name,
        tool_version,
        rows,
        window,
        bytes=sum(r.bytes for r in rows),
        errors=errors,
        latency_source=HELD_OPEN_LATENCY_SOURCE if held_s else LATENCY_SOURCE,
        extra=extra,
        raw_files=process.existing(out_dir, name, ("json", "sqlite", "spec.json", "urls", "stdout", "stderr")),
    )
    if held_s:  # the window opened on a running load: every answer inside it counts, not from its first
        result = dataclasses.replace(result, window_rate=extra["rate_achieved"])
    return result


def held_open_loop(every: list[openloop.Request], rows: list[openloop.Request], spec: dict, run_s: float) -> dict:
    """An open-loop held run's window account: answers inside it (any request's), the run's requests (what the
    connections carried), and the window as this machine's epochs (the cell's samplers)."""
    held_s, window = float(spec["held_s"]), float(spec["window_s"])
    launched = float(spec.get("launched_at") or 0.0)
    answered = sum(1 for r in every if held_s <= r.end_s < held_s + window)
    return {
        "rate_achieved": answered / window,
        "run_requests": len(every),
        "held_window": {
            "opened_s": held_s,
            "closed_s": held_s + window,
            "planned_s": window,
            "load_stopped_s": round(run_s, 3),
            "answered": answered,
            "sent": len(rows),
            "finished_after_load": sum(1 for r in rows if r.end_s + held_s > run_s),
            "short": False,
        },
        "window_epoch": [launched + held_s, launched + held_s + window],
    }


GENERATOR = LoadGenerator(
    name=name,
    available=available,
    version=version,
    build_command=build_command,
    run=run,
    parse=parse,
    open_loop=True,  # sends on a schedule (LoadSpec.rate): open-loop cells use it
    sends="one",  # one declared request kind per run: its -m, -H, -d (loadgen/one_request.py)
    holds_window=True,  # and closed loop, one process spanning a held window (held.py)
    holds_open_window=True,  # and open loop at the window's rate before and after it
    on_load_hosts="build",  # hosts.sh setup --open-loop builds it on the load hosts (install-openloop.sh)
    merge=merge_hosts,
    binary=binary,
    requests=requests,
    percentiles=window_percentiles,
)
