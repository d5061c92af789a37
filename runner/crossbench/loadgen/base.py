"""The one interface every load generator adapter implements.

An adapter turns a LoadSpec (what to send, how hard, for how long) into a command line,
runs it bounded in time, keeps the tool's raw output, and parses it into a LoadResult.
Each adapter module declares one LoadGenerator (its GENERATOR), registered by name in crossbench.loadgen.ADAPTERS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

from crossbench.refusal import Refusal

ERROR_KINDS = ("connect", "read", "write", "timeout", "non_2xx", "other")

# How a result's latency figures were got (LoadResult.latency_method, the record's latency_method).
LATENCY_METHODS = {
    "samples": "every request's own latency as the tool recorded it (ab's rows, oha's and k6's per-request rows, "
    "the probes')",
    "recovered": "wrk's histogram with its coordinated-omission correction undone (loadgen/wrk_correction.py): "
    "one sample per answer, as the requests had them",
    "summary": "the tool's own summary only (http_load: mean, min and max of its samples)",
    "none": "no latency figure could be trusted (flag latency_unrecoverable; throughput kept)",
    "corrected": "records of schema 6 and older measured with wrk: its histogram as wrk reported it, its synthetic "
    "samples included (up to 2.2x the requests' own latency on the static mix)",
}


class LoadgenError(Refusal, RuntimeError):
    """The tool could not run, or its output cannot be trusted (never reported as a result)."""


@dataclass(frozen=True)
class LoadSpec:
    urls: tuple[str, ...]  # one URL, or several picked at random per request (static mix)
    concurrency: int  # closed loop: connections each with one request outstanding
    duration_s: float  # measured window
    timeout_s: float  # per-request timeout: above the slowest answer the cell can expect
    keepalive: bool = True  # False: one connection per fetch (Connection: close, as http_load)
    pipeline: int = 1  # requests in flight per connection (seed 001)
    threads: int = 1  # load generator threads (wrk -t); never above concurrency
    cpus: tuple[int, ...] = ()  # cores the tool is pinned to (taskset); empty = not pinned
    rate: float | None = None  # open loop: requests offered per second, sent on schedule whatever the
    # server does (concurrency is then the most requests in flight: oha -c,
    # k6 maxVUs); None = closed loop. Only oha and k6 read it
    host: object = None  # the host it runs on (crossbench.hosts); None = this machine
    start_at: float | None = None  # with a host: this machine's epoch at which the tool starts (several hosts)
    # A held window (LoadGenerator.holds_window, closed loop): one process runs held_s of the cell's own load before
    # the window and tail_s after it, so the window opens on the queue the concurrency makes and its requests
    # finish under the same load; the window is cut from the per-request rows (loadgen/held.py)
    held_s: float = 0.0
    tail_s: float = 0.0
    # A workload file's requests (crossbench.workload's recorded form: method, path, headers, body, weight), sent
    # instead of GETs of the urls' paths to the urls' origin; each chosen by its weight. Empty: the urls, as GETs
    requests: tuple = ()


@dataclass(frozen=True)
class LoadResult:
    tool: str
    tool_version: str
    requests: int  # completed responses, any status
    duration_s: float  # the window as the tool measured it
    bytes: int
    errors: dict[str, int]  # every kind in ERROR_KINDS, 0 when none
    latency_ms: dict[str, float | None]  # mean, p50, p90, p99, max (open loop: also p999); None where unknown
    latency_source: str  # where the latency figures come from, in words
    raw_files: tuple[str, ...] = ()  # the tool's own output, kept beside the record
    extra: dict = field(default_factory=dict)
    # Open loop: answers per second inside the window (openloop.completion_rate). The generator waits for late
    # answers after the window, so requests / window would credit a server that fell behind with them.
    window_rate: float | None = None
    latency_method: str = "samples"  # how latency_ms was got: one of LATENCY_METHODS
    reported_latency_ms: dict | None = None  # the tool's own figures where they are not ours (wrk's, with
    # its synthetic samples), kept for audit
    latency_resolution_ms: float = 0.001  # the mean's rounding step (ab prints whole ms): Little's-law
    # checks allow half of it per request

    @property
    def rps(self) -> float:
        if self.window_rate is not None:
            return self.window_rate
        return self.requests / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


@dataclass(frozen=True)
class Finished:
    """A bounded run of a tool that ended (on whichever host ran it): its status, raw files and time taken."""

    returncode: int
    stdout: Path
    stderr: Path
    elapsed_s: float


def empty_errors() -> dict[str, int]:
    return {kind: 0 for kind in ERROR_KINDS}


def raw_path(out_dir: Path, tool: str, suffix: str) -> Path:
    return out_dir / f"{tool}.{suffix}"


SENDS = ("get", "one", "mix")  # what declared requests a generator can send (LoadGenerator.sends)
LOAD_HOST_WAYS = ("prerequisites", "build")  # how load hosts get a generator (LoadGenerator.on_load_hosts)


@dataclass(frozen=True, kw_only=True)
class LoadGenerator:
    """What one load generator adapter declares: its module builds one (`GENERATOR = LoadGenerator(...)`) and the
    registry (crossbench.loadgen.ADAPTERS) holds it. Every attribute the runner and the analysis read is here, with
    its default: a misspelt keyword is a TypeError when the module is imported, never a silent default."""

    name: str  # the tool's name, as in --loadgen
    available: Callable[[], bool]  # the tool is on PATH (oha, k6: or in the tools cache)
    version: Callable[[], str]  # the tool's own version string
    build_command: Callable[..., list[str]]  # (spec, out_dir): the argv run() executes; LoadgenError
    run: Callable[..., LoadResult]  # (spec, out_dir): run bounded in time, raw output kept
    parse: Callable[..., LoadResult]  # (out_dir or text): a LoadResult from the raw output
    open_loop: bool = False  # sends on a schedule (LoadSpec.rate): open-loop cells
    keepalive: bool = True  # False: one connection per request whatever is asked
    on_load_hosts: str | None = None  # how load hosts get it: one of LOAD_HOST_WAYS, or not
    # merges several load hosts' results exactly (loadgen/merge.py), [(host label, result, cpu percent)];
    # None: the generator runs from one machine only
    merge: Callable[[list[tuple[str, LoadResult, float | None]]], LoadResult] | None = None
    binary: Callable[[], str | None] | None = None  # the pinned build's path (oha, k6); None: on PATH
    requests: Callable[[Path | str], list] | None = None  # one row per request (openloop.Request) from out_dir
    # (out_dir, percents): [(percent, ms)] over the requests its record counts (a held run's window), from its raw
    # output (the latency spectrum chart); None: the record's own percentiles are all there is
    percentiles: Callable[..., list] | None = None
    # what a cell's declared requests (a workload file: LoadSpec.requests) it can send: "mix" any requests, each
    # chosen by its weight; "one" one request kind per run, its method, headers and body; "get" plain GETs only
    sends: str = "get"
    holds_window: bool = False  # runs a closed loop whose window is cut from its rows,
    # warm-up and tail in the same process (LoadSpec.held_s)
    # and open loop the same way: its schedule runs held_s before the window at the window's own rate, and a tail
    # (an open-loop held window, drivers/open_loop.py)
    holds_open_window: bool = False

    def __post_init__(self):
        """Each attribute of its declared type (a flag True or False, a function callable, None only where the
        default is None); on_load_hosts one of LOAD_HOST_WAYS. TypeError otherwise, when the adapter is imported."""
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"LoadGenerator: name must be a non-empty string, not {self.name!r}")
        for declared in fields(self):
            value, kind = vars(self)[declared.name], str(declared.type)  # the annotation's text (see __future__)
            if value is None and kind.endswith("| None"):
                continue
            if kind == "bool" and not isinstance(value, bool):
                raise TypeError(f"LoadGenerator {self.name}: {declared.name} must be True or False, not {value!r}")
            if kind.startswith("Callable") and not callable(value):
                raise TypeError(
                    f"LoadGenerator {self.name}: {declared.name} must be a function"
                    f"{' or None' if kind.endswith('| None') else ''}, not {value!r}"
                )
        if self.sends not in SENDS:
            raise TypeError(f"LoadGenerator {self.name}: sends must be one of {SENDS}, not {self.sends!r}")
        known_way = self.on_load_hosts in (None, *LOAD_HOST_WAYS)
        if not known_way:
            raise TypeError(
                f"LoadGenerator {self.name}: on_load_hosts must be one of {LOAD_HOST_WAYS} or None, "
                f"not {self.on_load_hosts!r}"
            )
