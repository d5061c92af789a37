"""vegeta adapter: closed loop for held windows (held.py), the window cut from the rows of one process that runs
warm-up, window and tail, as oha's is. It builds with Go in about a minute where oha's Rust build takes five to
seven, so a fresh machine's first quick run holds its windows with it (runner/experiments/quick.toml).

`vegeta attack -rate 0 -workers C -max-workers C`: C workers, each sending its next request as soon as its last is
answered (lib/attack.go: at rate 0 the pacer never waits and no worker is added past -max-workers), over one
keep-alive connection pool. Each result is stamped with its send (Timestamp, the clock of the machine it ran on)
and its latency to the last byte of the body; every request is a result, a failed one with status 0 and Go's error
text, so errors are counted from the rows themselves. Requests in flight when the duration ends are waited for (up
to -timeout), and one more may be sent then: the pacer hands a worker that comes free the tick it was waiting to
give (the timeout fixture's third row); it falls after the load stopped, outside any window.
Several URLs are sent in turn (vegeta's static targeter), not at random as oha's are; held windows have one.
Each answer's body is kept in the output (vegeta counts bytes_in from what it kept): a held window's delayed
endpoints answer a few bytes.
Files: vegeta.targets (the URLs, vegeta's http format), vegeta.csv (`vegeta encode --to csv` of the attack's
output: one row per request; the binary output is removed once encoded, the CSV holding all of it),
vegeta.spec.json (what run() asked for: window, held time, tail), stdout, stderr; vegeta-encode.stdout/.stderr.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import re
from collections import Counter
from pathlib import Path

from crossbench.loadgen import held, merge, openloop, process
from crossbench.loadgen.base import LoadGenerator, LoadgenError, LoadResult, LoadSpec, empty_errors, raw_path
from crossbench.loadgen.openloop import Request

name = "vegeta"
VERSION = "12.13.0"  # runner/install-openloop.sh builds this one
MARGIN_S = 15.0
ENCODE_LIMIT_S = 60.0  # `vegeta encode` of a run's results: a second for ten thousand rows here

HELD_LATENCY_SOURCE = (
    "vegeta 12.13.0 closed loop (attack -rate 0 -workers C -max-workers C) in a held window (loadgen/held.py): one "
    "process ran the cell's load before, through and after the window; latency of each request sent inside the "
    "window, from its send to the last byte of its answer (one row per request in vegeta.csv), every one waited "
    "for under the same load; throughput credits each request with the share of its life inside the window. "
    "Percentiles: nearest rank over those rows. Requests that failed (status 0 rows) are counted in errors over "
    "the whole run."
)

# the pinned build in the tools cache, else one on PATH; its version as it prints it ("Version: v12.13.0"; the
# build sets it, as vegeta's releases do)
TOOL = openloop.PinnedTool(name, VERSION, ("-version",), r"^Version: v?(\S+)")
binary, available, version = TOOL.binary, TOOL.available, TOOL.installed_version

# vegeta.csv's columns (lib/results.go, NewCSVEncoder)
COLUMNS = (
    "timestamp_ns",
    "code",
    "latency_ns",
    "bytes_out",
    "bytes_in",
    "error",
    "body",
    "attack",
    "seq",
    "method",
    "url",
    "headers",
)


def run_length_s(spec: LoadSpec) -> float:
    """How long the workers send: the held time, the window and the tail."""
    return spec.held_s + spec.duration_s + spec.tail_s


def _ms(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"


def build_command(spec: LoadSpec, out_dir: Path | None = None) -> list[str]:
    """The vegeta attack command line; run() writes the targets file it names and encodes its output."""
    if spec.rate is not None:
        raise LoadgenError("vegeta runs a closed loop here (held windows): its open loop is oha's or k6's")
    if spec.requests:
        raise LoadgenError("vegeta sends plain GETs here: a workload's requests go to wrk, oha or k6")
    TOOL.refuse_unfit(spec, closed_loop=True)
    out_dir = Path(out_dir or ".")
    return process.taskset_prefix(spec.cpus) + [
        binary() or name,
        "attack",
        "-targets",
        str(raw_path(out_dir, name, "targets")),
        "-output",
        str(raw_path(out_dir, name, "bin")),
        "-rate",
        "0",
        "-workers",
        str(spec.concurrency),
        "-max-workers",
        str(spec.concurrency),
        "-duration",
        _ms(run_length_s(spec)),
        "-timeout",
        _ms(spec.timeout_s),
        f"-keepalive={'true' if spec.keepalive else 'false'}",
    ]


def encode_command(out_dir: Path) -> list[str]:
    return [binary() or name, "encode", "-to", "csv", "-output", str(raw_path(out_dir, name, "csv"))] + [
        str(raw_path(out_dir, name, "bin"))
    ]


def spec_file(spec: LoadSpec) -> str:
    """vegeta.spec.json: what the parser needs to cut the window (the rows' times start at the earliest send), and
    how far the clock that stamps the rows runs ahead of this machine's (a load host's, hosts/remote.py)."""
    fields = ("duration_s", "concurrency", "timeout_s", "held_s", "tail_s")
    asked = {("window_s" if f == "duration_s" else f): getattr(spec, f) for f in fields}
    offset = getattr(spec.host, "clock_offset_s", 0.0)
    return json.dumps({"rate": None, **asked, "clock_offset_s": offset}, indent=1) + "\n"


def run(spec: LoadSpec, out_dir: Path) -> LoadResult:
    if not available():
        raise LoadgenError(f"vegeta {VERSION} not built: run runner/install-openloop.sh vegeta")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = build_command(spec, out_dir)
    for suffix in ("bin", "csv", "spec.json"):
        raw_path(out_dir, name, suffix).unlink(missing_ok=True)
    raw_path(out_dir, name, "targets").write_text("".join(f"GET {url}\n" for url in spec.urls))
    raw_path(out_dir, name, "spec.json").write_text(spec_file(spec))
    env = {"GOMAXPROCS": str(max(1, spec.threads))}
    limit = process.whole_seconds(run_length_s(spec)) + process.whole_seconds(spec.timeout_s) + MARGIN_S
    done = process.run_bounded(cmd, out_dir, name, limit, env=env, host=spec.host, start_at=spec.start_at)
    if done.returncode != 0:
        raise LoadgenError(f"vegeta exited {done.returncode}: {process.tail(done.stderr) or process.tail(done.stdout)}")
    # here, on what a load host's run copied back
    encoded = process.run_bounded(encode_command(out_dir), out_dir, f"{name}-encode", ENCODE_LIMIT_S)
    if encoded.returncode != 0:
        raise LoadgenError(f"vegeta encode exited {encoded.returncode}: {process.tail(encoded.stderr)}")
    raw_path(out_dir, name, "bin").unlink(missing_ok=True)
    result = parse(out_dir, tool_version=version())
    return dataclasses.replace(result, extra={**result.extra, "command": cmd, "env": env})


def read_spec(out_dir: Path) -> dict:
    """vegeta.spec.json, as run() wrote it (spec_file)."""
    return json.loads(raw_path(out_dir, name, "spec.json").read_text())


def results(out_dir: Path, spec: dict | None = None) -> list[dict]:
    """vegeta.csv's rows, one per request sent, answered or not, by COLUMNS; timestamp_ns on this machine's clock
    (the spec's clock_offset_s taken off)."""
    offset_ns = round(float((spec or read_spec(out_dir)).get("clock_offset_s") or 0.0) * 1e9)
    with open(raw_path(out_dir, name, "csv"), newline="") as handle:
        rows = [dict(zip(COLUMNS, row)) for row in csv.reader(handle) if row]
    return [{**row, "timestamp_ns": int(row["timestamp_ns"]) - offset_ns} for row in rows]


def rows_of(sent: list[dict]) -> tuple[list[Request], float]:
    """The answered requests (status other than 0) as rows with times from the earliest send, in send order, and
    that send's epoch."""
    if not sent:
        return [], 0.0
    origin = min(int(r["timestamp_ns"]) for r in sent)
    rows = [
        Request(
            scheduled_s=(int(r["timestamp_ns"]) - origin) / 1e9,
            start_s=(int(r["timestamp_ns"]) - origin) / 1e9,
            end_s=(int(r["timestamp_ns"]) + int(r["latency_ns"]) - origin) / 1e9,
            latency_ms=int(r["latency_ns"]) / 1e6,
            status=int(r["code"]),
            bytes=int(r["bytes_in"]),
            url=r.get("url", ""),
        )
        for r in sent
        if int(r["code"]) != 0
    ]
    return sorted(rows, key=lambda r: r.start_s), origin / 1e9


def requests(out_dir: Path | str) -> list[Request]:
    """Every answered request of a held run, times from its earliest send."""
    return rows_of(results(Path(out_dir)))[0]


def error_kind(message: str) -> str:
    """ERROR_KINDS for one of Go's net/http error texts."""
    text = message.lower()
    if "timeout" in text or "deadline exceeded" in text:
        return "timeout"
    if "connection refused" in text or "dial tcp" in text:
        return "connect"
    if "broken pipe" in text or "write" in text:
        return "write"
    if "reset" in text or "eof" in text or "closed" in text:
        return "read"
    return "other"


def plain_message(error: str) -> str:
    """Go's error text without the request and the connection's addresses, which differ on every row:
    'Get "URL": read tcp A->B: read: connection reset by peer' is 'read: connection reset by peer'."""
    return re.sub(r"^(?:\w+ \"[^\"]*\": )?(?:(?:dial|read|write) tcp \S+: )?", "", error)


def counted_errors(sent: list[dict]) -> tuple[dict[str, int], dict[str, int]]:
    """The run's failed requests (status 0) by kind, and by Go's error text (plain_message: the record's
    error_messages)."""
    messages = Counter(plain_message(r["error"]) for r in sent if int(r["code"]) == 0)
    errors = empty_errors()
    for message, count in messages.items():
        errors[error_kind(message)] += count
    return errors, dict(sorted(messages.items()))


def window_percentiles(out_dir: Path | str, percents) -> list[tuple[float, float]]:
    """(percent, ms) over the requests sent inside the held window (held.cut, as parse)."""
    out_dir = Path(out_dir)
    spec = read_spec(out_dir)
    rows = rows_of(results(out_dir, spec))[0]
    return openloop.spectrum(held.window_of(rows, int(spec["concurrency"]), spec)[0].sent, percents)


def held_result(sent: list[dict], spec: dict, concurrency: int, tool_version: str, raw_files) -> LoadResult:
    """The LoadResult of requests sent by `concurrency` workers (one run's, or several load hosts' on one clock):
    the window cut from the answered ones (held.run_figures), errors over the whole run from the failed ones."""
    rows, origin = rows_of(sent)
    errors, messages = counted_errors(sent)
    return held.load_result(
        held.run_figures(rows, concurrency, {**spec, "launched_at": origin}),
        tool=name,
        tool_version=tool_version,
        errors=errors,
        latency_source=HELD_LATENCY_SOURCE,
        extra={
            "error_messages": messages,
            "status_counts": {str(k): v for k, v in sorted(Counter(r.status for r in rows).items())},
        },
        raw_files=raw_files,
    )


def parse(out_dir: Path | str, tool_version: str = "unknown") -> LoadResult:
    """A held run's LoadResult from its files (held_result); its rows' times start at the earliest send."""
    out_dir = Path(out_dir)
    try:
        spec = read_spec(out_dir)
        sent = results(out_dir, spec)
        concurrency = int(spec["concurrency"])
    except (OSError, ValueError, KeyError) as exc:
        raise LoadgenError(f"vegeta: unreadable output in {out_dir} ({exc})") from exc
    raw_files = process.existing(out_dir, name, ("targets", "csv", "spec.json", "stdout", "stderr"))
    return held_result(sent, spec, concurrency, tool_version, raw_files)


def merge_hosts(parts: list[tuple[str, LoadResult, float | None]]) -> LoadResult:
    """Held runs started together on several load hosts, each with its share of the workers: one window cut from
    all their requests on this machine's clock, with all their workers (the queue is the server's)."""
    dirs = [merge.raw_dir(r, "vegeta.csv") for _, r, _ in parts]
    specs = [read_spec(d) for d in dirs]
    sent = [row for d, spec in zip(dirs, specs) for row in results(d, spec)]
    whole = held_result(sent, specs[0], sum(int(s["concurrency"]) for s in specs), parts[0][1].tool_version, ())
    one = merge.merged(parts, whole.latency_ms)
    return dataclasses.replace(
        whole,
        latency_source=one.latency_source,
        raw_files=one.raw_files,
        extra={**one.extra, **whole.extra},
    )


GENERATOR = LoadGenerator(
    name=name,
    available=available,
    version=version,
    build_command=build_command,
    run=run,
    parse=parse,
    holds_window=True,  # closed loop only, one process spanning a held window (held.py)
    on_load_hosts="build",  # hosts.sh setup --open-loop builds it on the load hosts (install-openloop.sh)
    merge=merge_hosts,
    binary=binary,
    requests=requests,
    percentiles=window_percentiles,
)
