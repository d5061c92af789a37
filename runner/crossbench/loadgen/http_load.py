"""ACME http_load adapter: seed 002's tool. One new connection per fetch, a URL file, text output.

http_load exits 0 whatever happened and, above about 1020 parallel fetches, its select() loop
overflows FD_SETSIZE and reports garbage. So: at most 1000 parallel, run under `ulimit -n 1024`
(an overflow then fails loudly), and the output is checked for the known corruption signatures.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections import Counter
from pathlib import Path

from crossbench.loadgen import process
from crossbench.loadgen.base import LoadGenerator, LoadgenError, LoadResult, LoadSpec, empty_errors, raw_path

name = "http_load"
MAX_PARALLEL = 1000
MARGIN_S = 15.0
NUM = r"([-+]?[\d.]+(?:e[-+]?\d+)?)"  # printf %g: 5164.71, 9.20148e+07

LATENCY_SOURCE = (
    "http_load's msecs/first-response: time from sending the request to the first response byte, "
    "not the full response; it prints mean, max and min only, so p50/p90/p99 are unknown. TCP "
    "connect time is separate (msecs/connect, in extra)."
)

# perror()/strerror texts http_load writes to stderr as "<url>: <message>", by error kind.
# "byte count wrong", "checksum wrong" and "timed out" are also counted on stdout: not counted twice.
STDERR_KINDS = {
    "Connection refused": "connect",
    "Connection timed out": "connect",
    "No route to host": "connect",
    "Network is unreachable": "connect",
    "Cannot assign requested address": "connect",
    "Connection reset by peer": "read",
    "Broken pipe": "write",
}
COUNTED_ON_STDOUT = ("byte count wrong", "checksum wrong", "timed out")
# connect() answering EALREADY (or a bad descriptor) means select() reported sockets it was not
# watching: the FD_SETSIZE overflow, as in fixtures parallel1100_fd_overflow.err.
CORRUPTION_SIGNS = ("Operation already in progress", "Bad file descriptor")


def available() -> bool:
    return shutil.which("http_load") is not None


def version() -> str:
    """http_load has no version flag; its VERSION string ('http_load 09Mar2016') is in the binary."""
    path = shutil.which("http_load")
    if path is None:
        return "unknown"
    match = re.search(rb"http_load (\d{2}[A-Z][a-z]{2}\d{4})", Path(path).read_bytes())
    return match.group(1).decode() if match else "unknown"


def url_file_text(spec: LoadSpec) -> str:
    bad = [u for u in spec.urls if not u.startswith("http://")]
    if not spec.urls or bad:
        raise LoadgenError(f"http_load needs http:// URLs (one per line), got {bad or 'none'}")
    return "".join(u.strip() + "\n" for u in spec.urls)  # no blank line: one aborts the run


def build_command(spec: LoadSpec, out_dir: Path | None = None) -> list[str]:
    """The command line; run() writes the URL file it names (relative, without out_dir)."""
    if spec.concurrency > MAX_PARALLEL:
        raise LoadgenError(
            f"http_load refused at -parallel {spec.concurrency}: above about 1020 parallel fetches its "
            f"select() loop overflows FD_SETSIZE (1024) and it reports garbage while exiting 0; "
            f"keep it at or below {MAX_PARALLEL}, or use wrk"
        )
    if spec.concurrency < 1:
        raise LoadgenError(f"http_load -parallel must be >= 1, got {spec.concurrency}")
    if spec.keepalive or spec.pipeline != 1:
        raise LoadgenError(
            "http_load opens one connection per fetch: it cannot keep connections "
            "alive or pipeline (set keepalive=False, pipeline=1)"
        )
    url_file_text(spec)
    return process.taskset_prefix(spec.cpus) + [
        "bash",
        "-c",
        'ulimit -n 1024 && exec "$0" "$@"',
        "http_load",
        "-parallel",
        str(spec.concurrency),
        "-seconds",
        str(process.whole_seconds(spec.duration_s)),
        "-timeout",
        str(process.whole_seconds(spec.timeout_s)),
        str(raw_path(Path(out_dir or "."), name, "urls")),
    ]


def run(spec: LoadSpec, out_dir: Path) -> LoadResult:
    out_dir = Path(out_dir)
    cmd = build_command(spec, out_dir)
    process.require("http_load")
    out_dir.mkdir(parents=True, exist_ok=True)
    raw_path(out_dir, name, "urls").write_text(url_file_text(spec))
    limit = process.whole_seconds(spec.duration_s) + process.whole_seconds(spec.timeout_s) + MARGIN_S
    done = process.run_bounded(cmd, out_dir, name, limit)
    if done.returncode != 0:
        raise LoadgenError(f"http_load exited {done.returncode}: {process.tail(done.stderr)}")
    result = parse(out_dir, tool_version=version())
    return dataclasses.replace(result, extra={**result.extra, "command": cmd})


def stderr_messages(text: str) -> Counter:
    """Count the '<url>: <message>' lines; also reads the summarised '  <count> <url>: <message>' form."""
    counts = Counter()
    for line in text.splitlines():
        match = re.match(r"^\s*(?:(\d+)\s+)?\S+?: (.+?)\s*$", line)
        if match and not line.startswith("---"):  # '--- 60 secs, ...' is -verbose progress
            counts[match.group(2)] += int(match.group(1) or 1)
    return counts


def parse(source: Path | str, tool_version: str = "unknown", stderr: str | None = None) -> LoadResult:
    """A LoadResult from http_load's report: a run directory (http_load.stdout/.stderr) or its text."""
    directory, text = process.source_text(source, name)
    if directory is not None and stderr is None and raw_path(directory, name, "stderr").exists():
        stderr = raw_path(directory, name, "stderr").read_text(errors="replace")

    head = re.search(rf"^(\d+) fetches, (\d+) max parallel, {NUM} bytes, in {NUM} seconds$", text, re.MULTILINE)
    if head is None:
        raise LoadgenError(f"http_load output has no summary line: {text.strip()[:200]!r}")
    fetches, max_parallel = int(head.group(1)), int(head.group(2))
    total_bytes, seconds = float(head.group(3)), float(head.group(4))
    codes = {int(c): int(n) for c, n in re.findall(r"^\s+code (\d+) -- (\d+)$", text, re.MULTILINE)}
    timeouts = _count(r"^(\d+) timeouts$", text)
    bad_bytes = _count(r"^(\d+) bad byte counts$", text)
    bad_checksums = _count(r"^(\d+) bad checksums$", text)
    connect = _stats("connect", text)
    first = _stats("first-response", text)

    messages = stderr_messages(stderr or "")
    errors = empty_errors()
    for message, count in messages.items():
        if not message.endswith(COUNTED_ON_STDOUT) and message not in CORRUPTION_SIGNS:
            errors[STDERR_KINDS.get(message, "other")] += count
    responses = sum(codes.values())
    _check_sane(fetches, responses, timeouts, bad_bytes, errors["connect"] + errors["read"] + errors["write"], messages)
    errors["timeout"] = timeouts
    errors["non_2xx"] = sum(n for c, n in codes.items() if not 200 <= c <= 299)
    # a refused, reset or timed-out fetch is also a "bad byte count" (0 or partial bytes): count the rest
    failed = errors["connect"] + errors["read"] + errors["write"] + timeouts
    errors["other"] += max(0, bad_bytes + bad_checksums - failed)

    return LoadResult(
        tool=name,
        tool_version=tool_version,
        requests=responses,
        duration_s=seconds,
        bytes=round(total_bytes),
        errors=errors,
        latency_ms={"mean": first["mean"], "p50": None, "p90": None, "p99": None, "max": first["max"]},
        latency_source=LATENCY_SOURCE,
        latency_method="summary",
        raw_files=process.existing(directory, name, ("stdout", "stderr", "urls")) if directory else (),
        extra={
            "fetches": fetches,
            "max_parallel": max_parallel,
            "status_codes": codes,
            "fetches_per_sec": _float(rf"^{NUM} fetches/sec", text),
            "connect_ms": connect,
            "first_response_ms": first,
            "bad_byte_counts": bad_bytes,
            "bad_checksums": bad_checksums,
            "stderr_messages": dict(messages),
            "bytes_precision": "6 significant digits (printf %g)",
        },
    )


def _check_sane(fetches, responses, timeouts, bad_bytes, socket_failures, messages) -> None:
    """Raise on the signatures of a corrupt report (see the module docstring)."""
    explained = responses + timeouts + socket_failures
    signs = [m for m in CORRUPTION_SIGNS if messages.get(m)]
    if signs:
        raise LoadgenError(f"http_load output corrupt: stderr says {signs} (select() FD_SETSIZE overflow)")
    if fetches > 0 and responses == 0 and explained < fetches:
        raise LoadgenError(
            f"http_load output corrupt: {fetches} fetches but no response codes, and only "
            f"{explained} of them explained by timeouts or socket errors on stderr"
        )
    if bad_bytes > 10 * max(explained, 1):
        raise LoadgenError(
            f"http_load output corrupt: {bad_bytes} bad byte counts against {responses} "
            f"responses (select() overflow, or a server closing without answering)"
        )


def _count(pattern: str, text: str) -> int:
    match = re.search(pattern, text, re.MULTILINE)
    return int(match.group(1)) if match else 0


def _float(pattern: str, text: str) -> float | None:
    match = re.search(pattern, text, re.MULTILINE)
    return float(match.group(1)) if match else None


def _stats(label: str, text: str) -> dict[str, float | None]:
    match = re.search(rf"^msecs/{label}: {NUM} mean, {NUM} max, {NUM} min$", text, re.MULTILINE)
    values = [float(g) for g in match.groups()] if match else [None] * 3
    return dict(zip(("mean", "max", "min"), values))


GENERATOR = LoadGenerator(
    name=name, available=available, version=version, build_command=build_command, run=run, parse=parse, keepalive=False
)  # opens one connection per fetch: a run with it has keepalive = false
