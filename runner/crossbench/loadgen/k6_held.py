"""k6 closed loop in a held window (loadgen/held.py): the `constant-vus` executor, C VUs each sending its next
request as soon as its last is answered (no sleep), for the held time, the window and the tail in one process;
the window is cut from its per-request rows by held.py, as oha's is.

One row per request: the script adds a `crossbench_latency` sample after each request, valued blocked +
http_req_duration in ms, tagged with its status, k6's error_code and whether it opened a connection. In k6's tracer
(lib/netext/httpext/tracer.go) blocked runs from asking for a connection to having one, so it holds a new
connection's connect and TLS time (adding `connecting` again would count it twice), and http_req_duration is
sending + waiting + receiving up to the last byte (`Done`): the sum is the request's whole life. k6's CSV stamps a
custom sample with the moment it is added (unix_micro), just after that last byte: that is the request's end, and
end - value its send. Times are counted from the
earliest send (every VU sends its first request as the scenario starts, after k6's init). With keep-alive each
VU keeps one connection (its own transport): `connections_opened` in the record says how many the run opened.
Files: k6.js, k6.csv, k6.summary.json, k6.spec.json (what run() asked for: window, held time, tail), stdout, stderr.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

from crossbench.loadgen import held, k6_requests, openloop, process
from crossbench.loadgen.base import LoadgenError, LoadResult, LoadSpec, empty_errors, raw_path
from crossbench.loadgen.openloop import Request

name = "k6"
LATENCY_METRIC = "crossbench_latency"

HELD_LATENCY_SOURCE = (
    "k6 1.8.1 closed loop (constant-vus: C VUs, no sleep) in a held window (loadgen/held.py): one process ran the "
    "cell's load before, through and after the window; latency of each request sent inside the window, from its "
    "send to the last byte of its answer (one crossbench_latency sample per request in k6.csv: blocked, which "
    "holds a new connection's connect time, + http_req_duration, stamped at its end), every one waited for under "
    "the same load; "
    "throughput credits each request with the share of its life inside the window. Percentiles: nearest rank "
    "over those rows. Requests that failed are counted in errors over the whole run."
)

SCRIPT = """\
import http from 'k6/http';
import { Trend } from 'k6/metrics';

%(requests)s
const latency = new Trend('%(latency)s', true);

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(99)'],
  noConnectionReuse: %(no_reuse)s,
  scenarios: {
    held: { executor: 'constant-vus', vus: %(vus)d, duration: '%(duration)s', gracefulStop: '%(grace)s' },
  },
};

export default function () {
  const k = pick();
  const res = send(k, '%(timeout)s');
  const t = res.timings;
  const tags = tagged(k, { code: String(res.status), err: String(res.error_code), conn: t.connecting > 0 ? '1' : '0' });
  latency.add(t.blocked + t.duration, tags);
}
"""


def run_length_s(spec: LoadSpec) -> float:
    """How long the VUs send: the held time, the window and the tail."""
    return spec.held_s + spec.duration_s + spec.tail_s


def script(spec: LoadSpec) -> str:
    """The held run's k6.js; requests in flight when the load stops are waited for (gracefulStop, up to the
    timeout), as oha -w does."""
    return SCRIPT % {
        "requests": k6_requests.code(spec),
        "vus": spec.concurrency,
        "duration": f"{round(run_length_s(spec) * 1000)}ms",
        "grace": f"{round(spec.timeout_s * 1000) + 1000}ms",
        "timeout": f"{round(spec.timeout_s * 1000)}ms",
        "no_reuse": "false" if spec.keepalive else "true",
        "latency": LATENCY_METRIC,
    }


def spec_file(spec: LoadSpec) -> str:
    """k6.spec.json: what the parser needs to cut the window."""
    fields = ("duration_s", "concurrency", "timeout_s", "held_s", "tail_s")
    asked = {("window_s" if f == "duration_s" else f): getattr(spec, f) for f in fields}
    return json.dumps({"rate": None, **asked}, indent=1) + "\n"


def _fields(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split("&") if "=" in part)


def samples(out_dir: Path) -> list[dict]:
    """The crossbench_latency rows of k6.csv, one per request, answered or not, each with its tags read (`tags`:
    code, err, conn)."""
    with open(raw_path(out_dir, name, "csv"), newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["metric_name"] == LATENCY_METRIC]
    return [{**row, "tags": _fields(row.get("extra_tags", ""))} for row in rows]


HTTP_STATUS_CODES = (1400, 1599)  # k6's error_code for an answer with status 4xx/5xx: 1000 + status


def answered(code: int) -> bool:
    """An answer, whatever its status: k6 gives a 4xx/5xx answer an error_code too (1000 + status)."""
    return code == 0 or HTTP_STATUS_CODES[0] <= code <= HTTP_STATUS_CODES[1]


def rows_of(sampled: list[dict]) -> tuple[list[Request], float]:
    """The answered requests as rows with times from the earliest send, in send order, and that send's epoch."""
    ends = [int(r["timestamp"]) / 1e6 for r in sampled]
    values = [float(r["metric_value"]) for r in sampled]
    tags = [r["tags"] for r in sampled]
    kept = [i for i, t in enumerate(tags) if answered(int(t.get("err", "0")))]
    if not kept:
        return [], 0.0
    origin = min(ends[i] - values[i] / 1000 for i in kept)
    rows = [
        Request(
            scheduled_s=ends[i] - values[i] / 1000 - origin,
            start_s=ends[i] - values[i] / 1000 - origin,
            end_s=ends[i] - origin,
            latency_ms=values[i],
            status=int(tags[i].get("code", "0")),
            bytes=0,
            kind=tags[i].get("req", ""),
        )
        for i in kept
    ]
    return sorted(rows, key=lambda r: r.start_s), origin


def requests(out_dir: Path | str) -> list[Request]:
    """Every answered request of a held run, times from its earliest send."""
    return rows_of(samples(Path(out_dir)))[0]


def parse(out_dir: Path, tool_version: str, error_kind) -> LoadResult:
    """A held run's LoadResult: the window cut from its rows (held.run_figures); errors over the whole run by
    k6's error_code (`error_kind`, the adapter's map); bytes by the run's mean per answer (k6 counts them in
    all, data_received)."""
    try:
        spec = json.loads(raw_path(out_dir, name, "spec.json").read_text())
        summary = json.loads(raw_path(out_dir, name, "summary.json").read_text())
        sampled = samples(out_dir)
        rows, origin = rows_of(sampled)
    except (OSError, ValueError, KeyError) as exc:
        raise LoadgenError(f"k6: unreadable output in {out_dir} ({exc})") from exc
    received = int(summary.get("metrics", {}).get("data_received", {}).get("count", 0))
    per_answer = received // len(rows) if rows else 0
    figures = held.run_figures(rows, int(spec["concurrency"]), {**spec, "launched_at": origin})
    window = held.window_of(rows, int(spec["concurrency"]), spec)[0]
    codes = Counter(int(r["tags"].get("err", "0")) for r in sampled)
    errors = empty_errors()
    for code, count in codes.items():
        if not answered(code):
            errors[error_kind(code)] += count
    opened = sum(1 for r in sampled if r["tags"].get("conn") == "1")
    return held.load_result(
        figures,
        tool=name,
        tool_version=tool_version,
        errors=errors,
        latency_source=HELD_LATENCY_SOURCE,
        bytes=per_answer * figures["requests"],
        extra={
            "connections_opened": opened,
            "error_codes": {str(k): v for k, v in sorted(codes.items()) if k},
            "status_counts": {str(k): v for k, v in sorted(Counter(r.status for r in rows).items())},
            "by_kind": openloop.by_kind(window.sent, k6_requests.names(out_dir)),
        },
        raw_files=process.existing(
            out_dir, name, ("js", "requests.json", "csv", "summary.json", "spec.json", "stdout", "stderr")
        ),
    )
