"""k6 adapter: open-loop load with k6's constant-arrival-rate executor, the cross-check for oha; and closed loop
(no rate: constant-vus) for held windows (k6_held.py, the window cut by held.py as oha's is).

k6 starts iteration i at start + i / rate on a free VU; when all maxVUs (= LoadSpec.concurrency) are
busy it DROPS the iteration (dropped_iterations) instead of queueing it. Its http_req_duration
(sending + waiting + receiving) leaves out the schedule lag and the connect time, so the script
written here (k6.js) measures latency from the schedule itself and records one sample per request,
`crossbench_latency` = (iteration start - scheduled) + blocked + http_req_duration (k6's blocked runs from
asking for a connection to having it, so a new connection's connect and TLS time are inside it),
in ms. The lag's clock is JavaScript's Date.now() against exec.scenario.startTime, both whole ms: each
latency is exact to about +-1 ms (fine for delays, too coarse for sub-ms /hello latencies).
A cell with declared requests (a workload file's) sends them, each chosen by its weight, and tags each sample with
the request's index (k6_requests.py): the record then has each kind's latency inside the mix (`latency_by_kind`).
Files: k6.js, k6.csv (--out csv, unix_micro, one row per sample), k6.summary.json (--summary-export),
k6.requests.json (the declared requests' names), stdout, stderr.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import re
from collections import Counter
from pathlib import Path

from crossbench.loadgen import held, k6_held, k6_requests, merge, openloop, process
from crossbench.loadgen.base import LoadGenerator, LoadgenError, LoadResult, LoadSpec, empty_errors, raw_path

name = "k6"
VERSION = "1.8.1"  # runner/install-openloop.sh builds this one
MARGIN_S = 20.0
LATENCY_METRIC = "crossbench_latency"
LAG_METRIC = "crossbench_lag"

LATENCY_SOURCE = (
    "k6 1.8.1 constant-arrival-rate, one crossbench_latency sample per request (k6.csv) written by the "
    "adapter's script: (iteration start - scheduled start, Date.now() in whole ms, so +-1 ms) + blocked "
    "(connect and TLS inside it) + http_req_duration. k6's own http_req_duration leaves out the schedule lag and "
    "connect time. Iterations k6 could not start (all maxVUs busy) are dropped, not queued: they have no "
    "latency (extra never_sent) and shift later schedule slots, so lags are then upper bounds. "
    "Percentiles: nearest rank over every row."
)

SCRIPT = """\
import http from 'k6/http';
import exec from 'k6/execution';
import { Trend } from 'k6/metrics';

%(requests)s
const periodMs = %(period_ms)s;
const latency = new Trend('%(latency)s', true);
const lag = new Trend('%(lag)s', true);

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(99)', 'p(99.9)'],
  noConnectionReuse: %(no_reuse)s,
  scenarios: {
    open: {
      executor: 'constant-arrival-rate', rate: %(rate)d, timeUnit: '%(time_unit)s',
      duration: '%(duration)s', preAllocatedVUs: %(vus)d, maxVUs: %(vus)d, gracefulStop: '%(grace)s',
    },
  },
};

export default function () {
  const i = exec.scenario.iterationInTest;
  const late = Date.now() - (exec.scenario.startTime + i * periodMs);
  exec.vu.metrics.metadata.i = String(i);
  const k = pick();
  const res = send(k, '%(timeout)s');
  const t = res.timings;
  const tags = tagged(k, { code: String(res.status), err: String(res.error_code) });
  latency.add(late + t.blocked + t.duration, tags);
  lag.add(late);
}
"""


# the pinned build in the tools cache, else one on PATH; its version as it prints it ("k6 v1.8.1 (commit/..., go1.26.8, linux/amd64)")
TOOL = openloop.PinnedTool(name, VERSION, ("version",), r"^k6 v(\S+)")
binary, available, version = TOOL.binary, TOOL.available, TOOL.installed_version


def _rate(rate: float) -> tuple[int, str]:
    """k6 takes a whole number of iterations per timeUnit: (rate, '1s'), or per 1000 s for fractions."""
    return (int(rate), "1s") if rate == int(rate) else (round(rate * 1000), "1000s")


def script(spec: LoadSpec) -> str:
    rate, unit = _rate(spec.rate)
    return SCRIPT % {
        "requests": k6_requests.code(spec),
        "period_ms": repr(1000.0 / spec.rate),
        "rate": rate,
        "time_unit": unit,
        "duration": f"{round(spec.duration_s * 1000)}ms",
        "vus": spec.concurrency,
        "grace": f"{round(spec.timeout_s * 1000) + 1000}ms",
        "timeout": f"{round(spec.timeout_s * 1000)}ms",
        "no_reuse": "false" if spec.keepalive else "true",
        "latency": LATENCY_METRIC,
        "lag": LAG_METRIC,
    }


def build_command(spec: LoadSpec, out_dir: Path | None = None) -> list[str]:
    """The k6 command line, open loop or (no rate) a held closed loop; run() writes the script (k6.js) it names."""
    TOOL.refuse_unfit(spec, closed_loop=True)
    if spec.rate is None and k6_held.run_length_s(spec) < 1:  # constant-vus refuses a duration under 1 s
        raise LoadgenError("k6 holds a window for 1 s or more: held time, window and tail together")
    out_dir = Path(out_dir or ".")
    return process.taskset_prefix(spec.cpus) + [
        binary() or name,
        "run",
        "--quiet",
        "--no-usage-report",
        "--out",
        f"csv={raw_path(out_dir, name, 'csv')}",
        "--summary-export",
        str(raw_path(out_dir, name, "summary.json")),
        str(raw_path(out_dir, name, "js")),
    ]


def run(spec: LoadSpec, out_dir: Path) -> LoadResult:
    if not available():
        raise LoadgenError(f"k6 {VERSION} not built: run runner/install-openloop.sh k6")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = build_command(spec, out_dir)
    for suffix in ("csv", "summary.json", "spec.json"):
        raw_path(out_dir, name, suffix).unlink(missing_ok=True)
    closed = spec.rate is None  # a held window (k6_held.py)
    raw_path(out_dir, name, "js").write_text(k6_held.script(spec) if closed else script(spec))
    k6_requests.write_names(spec, out_dir)
    if closed:
        raw_path(out_dir, name, "spec.json").write_text(k6_held.spec_file(spec))
    env = {"K6_CSV_TIME_FORMAT": "unix_micro", "K6_NO_COLOR": "true", "GOMAXPROCS": str(max(1, spec.threads))}
    length = k6_held.run_length_s(spec) if closed else spec.duration_s
    limit = process.whole_seconds(length) + 2 * process.whole_seconds(spec.timeout_s) + MARGIN_S
    done = process.run_bounded(cmd, out_dir, name, limit, env=env, host=spec.host, start_at=spec.start_at)
    if done.returncode != 0:
        raise LoadgenError(f"k6 exited {done.returncode}: {process.tail(done.stderr) or process.tail(done.stdout)}")
    result = parse(out_dir, tool_version=version())
    return dataclasses.replace(result, extra={**result.extra, "command": cmd, "env": env})


def _script_value(text: str, pattern: str) -> str:
    match = re.search(pattern, text)
    if not match:
        raise LoadgenError(f"k6: k6.js does not say {pattern!r}")
    return match.group(1)


def _samples(out_dir: Path, metric: str) -> list[dict]:
    """The rows of one metric in k6.csv."""
    with open(raw_path(out_dir, name, "csv"), newline="") as handle:
        return [row for row in csv.DictReader(handle) if row["metric_name"] == metric]


def _rate_of(out_dir: Path) -> float:
    """The offered rate, from the script's period (k6.js)."""
    text = raw_path(out_dir, name, "js").read_text()
    return 1000.0 / float(_script_value(text, r"const periodMs = ([\d.e+-]+);"))


def _tags(row: dict) -> dict[str, str]:
    return dict(part.split("=", 1) for part in row.get("extra_tags", "").split("&") if "=" in part)


def _metadata(row: dict) -> dict[str, str]:
    return dict(part.split("=", 1) for part in row.get("metadata", "").split("&") if "=" in part)


def requests(out_dir: Path | str) -> list[openloop.Request]:
    """Every request that got an answer (any status), in schedule order, from k6.csv.

    Times are from the scenario's start: slot i is scheduled at i / rate; start_s adds the lag.
    """
    rate = _rate_of(Path(out_dir))
    result = []
    for row in _samples(Path(out_dir), LATENCY_METRIC):
        tags = _tags(row)
        if not answered(int(tags.get("err", "0"))):
            continue
        slot = int(_metadata(row)["i"])
        latency_ms = float(row["metric_value"])
        result.append(
            openloop.Request(
                scheduled_s=slot / rate,
                start_s=slot / rate,
                end_s=slot / rate + latency_ms / 1000,
                latency_ms=latency_ms,
                status=int(tags.get("code", "0")),
                bytes=0,
                kind=tags.get("req", ""),
            )
        )
    return sorted(result, key=lambda r: r.scheduled_s)


def merge_hosts(parts: list[tuple[str, LoadResult, float | None]]) -> LoadResult:
    """Several load hosts' runs as one (GENERATOR.merge): their per-request rows (k6.csv) as one population. A held
    window is k6's from one host only (oha's merges)."""
    if any(r.extra.get("held_window") for _, r, _ in parts):
        raise LoadgenError("k6 holds a window from one load host only: hold it with oha (held_windows = \"oha\")")
    return merge.merge_open_loop(parts, lambda r: requests(merge.raw_dir(r, "k6.csv")))


answered = k6_held.answered  # an answer, whatever its status (k6's error_code 1400..1599 for 4xx/5xx)


def window_percentiles(out_dir: Path | str, percents) -> list[tuple[float, float]]:
    """(percent, ms) over the requests the record counts: every answered one, or a held run's sent inside its
    window (held.cut), by the suite's one percentile."""
    out_dir = Path(out_dir)
    if raw_path(out_dir, name, "spec.json").exists():
        spec = json.loads(raw_path(out_dir, name, "spec.json").read_text())
        rows = held.window_of(k6_held.requests(out_dir), int(spec["concurrency"]), spec)[0].sent
    else:
        rows = requests(out_dir)
    return openloop.spectrum(rows, percents)


def error_kind(code: int) -> str:
    """ERROR_KINDS for a k6 error_code (lib/netext/httpext/error_codes.go)."""
    if code in (1050, 1211):
        return "timeout"
    if code in (1210, 1212, 1213) or 1100 <= code < 1200:
        return "connect"
    if code == 1201:
        return "write"
    if code == 1220:
        return "read"
    return "other"


def _summary_value(summary: dict, metric: str, field: str, default=0):
    return summary.get("metrics", {}).get(metric, {}).get(field, default)


def parse(source: Path | str, tool_version: str = "unknown") -> LoadResult:
    """A LoadResult from a run directory (k6.js, k6.csv, k6.summary.json; a held run's k6.spec.json too)."""
    out_dir = Path(source)
    if raw_path(out_dir, name, "spec.json").exists():
        return k6_held.parse(out_dir, tool_version, error_kind)
    try:
        summary = json.loads(raw_path(out_dir, name, "summary.json").read_text())
        text = raw_path(out_dir, name, "js").read_text()
        window = int(_script_value(text, r"duration: '(\d+)ms'")) / 1000
        all_rows, rate = _samples(out_dir, LATENCY_METRIC), _rate_of(out_dir)
    except (OSError, ValueError, KeyError) as exc:
        raise LoadgenError(f"k6: unreadable output in {out_dir} ({exc})") from exc
    rows = requests(out_dir)
    codes = Counter(int(_tags(r).get("err", "0")) for r in all_rows)
    errors = empty_errors()
    for code, count in codes.items():
        if not answered(code):
            errors[error_kind(code)] += count
    errors["non_2xx"] = sum(1 for r in rows if not 200 <= r.status < 300)
    lags = [float(r["metric_value"]) for r in _samples(out_dir, LAG_METRIC)]
    dropped = int(_summary_value(summary, "dropped_iterations", "count"))
    extra = {
        **openloop.rates(rows, window, rate, len(all_rows)),
        "schedule_lag_ms": openloop.lag_figures(lags),
        "schedule_lag_exact": dropped == 0,
        "never_sent": dropped,
        "latency_slope_ms_per_s": openloop.slope_ms_per_s(rows),
        "status_counts": {str(k): v for k, v in sorted(Counter(r.status for r in rows).items())},
        "by_kind": openloop.by_kind(rows, k6_requests.names(out_dir)),
        "error_codes": {str(k): v for k, v in sorted(codes.items()) if k},
        "tool_percentiles_ms": {k: v for k, v in summary.get("metrics", {}).get(LATENCY_METRIC, {}).items()},
        "http_req_duration_ms": summary.get("metrics", {}).get("http_req_duration"),
    }
    return openloop.result(
        name,
        tool_version,
        rows,
        window,
        bytes=int(_summary_value(summary, "data_received", "count")),
        errors=errors,
        latency_source=LATENCY_SOURCE,
        raw_files=process.existing(out_dir, name, ("js", "requests.json", "csv", "summary.json", "stdout", "stderr")),
        extra=extra,
    )


GENERATOR = LoadGenerator(
    name=name,
    available=available,
    version=version,
    build_command=build_command,
    run=run,
    parse=parse,
    open_loop=True,  # sends on a schedule (LoadSpec.rate): open-loop cells use it
    holds_window=True,  # and closed loop, one process spanning a held window (k6_held.py); its open loop holds none
    merge=merge_hosts,
    binary=binary,
    requests=requests,
    percentiles=window_percentiles,
    sends="mix",  # a workload file's requests from its script, each by its weight, latency per kind (k6_requests.py)
)
