"""What the open-loop adapters (oha, k6) share: one row per request, exact figures from those rows.

Rows, not histograms or the tool's own percentiles: every request's result is kept, so the percentiles
are exact and runs of several generators (or load hosts) merge exactly, by concatenating their rows
(`merge`), never by averaging percentiles.

Percentiles are nearest-rank: the p-th percentile of n sorted values is the ceil(p / 100 * n)-th one
(1-based), always a measured value. oha's own summary takes the floor(p / 100 * n)-th (0-based), which
is the same value unless p / 100 * n is a whole number, where oha's is the next one up.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from .. import stats
from . import process
from .base import LoadgenError, LoadResult

PERCENTILES = {"p50": "50", "p90": "90", "p99": "99", "p999": "99.9"}
# The generator is behind its own schedule when its judged lag (lag_figures) passes the larger of LAG_LIMIT_MS and
# LAG_SHARE of the median latency measured: a lag far under the latencies cannot move them (5.5 ms at 25 req/s beside
# 200 ms answers once called Tomcat's 20 threads "above the generator's ceiling", a CI flake).
LAG_LIMIT_MS = 5.0
LAG_SHARE = 0.05  # the precision target's default: what a lag may move the latencies by
LAG_TAIL_SAMPLES = 5  # the judged lag has at least this many lags above it: never one hiccup


@dataclass(frozen=True)
class Request:
    """One request of an open-loop run; times in seconds from the run's own start."""

    scheduled_s: float  # when the generator's schedule fired it (the latency's origin)
    start_s: float  # when a connection really took it (after waiting for a free one)
    end_s: float  # last byte of the response
    latency_ms: float  # end - scheduled, as the tool computed it
    status: int
    bytes: int
    url: str = ""
    kind: str = ""  # a declared request's index in the cell's requests (k6_requests.py); "" for plain GETs


def tools_dir() -> Path:
    """Where runner/install-openloop.sh builds the pinned tools: <dir>/<tool>-<version>/bin/<tool>."""
    return Path(os.environ.get("CROSSBENCH_TOOLS") or Path.home() / ".cache" / "crossbench" / "tools")


@dataclass(frozen=True)
class PinnedTool:
    """A generator built pinned into the tools cache by install-openloop.sh (oha, k6): where its binary is, and
    what version it reports (`version_argv` prints it, `version_pattern`'s group reads it)."""

    name: str
    version: str
    version_argv: tuple[str, ...]
    version_pattern: str

    def binary(self) -> str | None:
        """The pinned build in the tools cache, else one on PATH, else None."""
        cached = cached_binary(self.name, self.version)
        return str(cached) if cached.exists() else shutil.which(self.name)

    def available(self) -> bool:
        return self.binary() is not None

    def installed_version(self) -> str:
        found = re.search(
            self.version_pattern, process.version_output([self.binary() or self.name, *self.version_argv]), re.MULTILINE
        )
        return found.group(1) if found else "unknown"

    def refuse_unfit(self, spec, closed_loop: bool = False) -> None:
        """What an open-loop generator here cannot run (LoadgenError): no rate (unless it runs `closed_loop` too,
        held windows), pipelining, nothing to send."""
        if (spec.rate is None and not closed_loop) or (spec.rate is not None and spec.rate <= 0):
            raise LoadgenError(f"{self.name} runs open loop here: set LoadSpec.rate (requests per second)")
        if spec.pipeline != 1:
            raise LoadgenError(f"{self.name} cannot pipeline HTTP/1.1 requests")
        if not spec.urls or spec.concurrency < 1 or spec.duration_s <= 0:
            raise LoadgenError(
                f"{self.name} needs a URL, concurrency >= 1 (its most requests in flight) and a duration"
            )


def cached_binary(tool: str, version: str) -> Path:
    return tools_dir() / f"{tool}-{version}" / "bin" / tool


def percentile(sorted_values: list[float], p: str | float) -> float | None:
    """Nearest rank on already sorted values: the suite's one definition (crossbench.stats)."""
    return stats.nearest_rank(sorted_values, p)


def summarize(values_ms: list[float]) -> dict[str, float | None]:
    """mean, p50, p90, p99, p999, max of latencies in ms (None for every figure when there are none)."""
    values = sorted(values_ms)
    figures = {name: percentile(values, p) for name, p in PERCENTILES.items()}
    return {"mean": sum(values) / len(values) if values else None, **figures, "max": values[-1] if values else None}


def latency(rows: list[Request]) -> dict[str, float | None]:
    return summarize([r.latency_ms for r in rows])


def by_kind(rows: list[Request], names: list[str] | None) -> dict[str, dict] | None:
    """Each declared request kind among the rows (a mix cell's: those its latency is taken over), by the request's
    name: how many, how many answered other than 2xx, and their latency; None for a run without declared kinds."""
    if not names:
        return None
    found = {}
    for index, name in enumerate(names):
        mine = [r for r in rows if r.kind == str(index)]
        found[name] = {
            "requests": len(mine),
            "non_2xx": sum(1 for r in mine if not 200 <= r.status < 300),
            "latency_ms": latency(mine),
        }
    return found


def spectrum(rows: list[Request], percents) -> list[tuple[float, float]]:
    """(percent, ms) over the rows' latencies, by the suite's one percentile (a generator's window_percentiles)."""
    values = sorted(r.latency_ms for r in rows)
    return [(p, stats.nearest_rank(values, p)) for p in percents] if values else []


def merge(*runs: list[Request]) -> list[Request]:
    """Rows of several runs (generators, hosts) as one population; compute figures with latency()."""
    return [row for rows in runs for row in rows]


def shifted(rows: list[Request], by_s: float) -> list[Request]:
    """A run's rows with by_s added to their times: on another time line (a host that started by_s later than
    the first; a window that opened -by_s into the run)."""
    if not by_s:
        return rows
    return [replace(r, scheduled_s=r.scheduled_s + by_s, start_s=r.start_s + by_s, end_s=r.end_s + by_s) for r in rows]


def slope_ms_per_s(rows: list[Request]) -> float | None:
    """Least-squares slope of latency against scheduled time: > 0 when a queue grows through the window."""
    if len(rows) < 2:
        return None
    n = len(rows)
    mean_x = sum(r.scheduled_s for r in rows) / n
    mean_y = sum(r.latency_ms for r in rows) / n
    sxx = sum((r.scheduled_s - mean_x) ** 2 for r in rows)
    if sxx == 0:
        return None
    return sum((r.scheduled_s - mean_x) * (r.latency_ms - mean_y) for r in rows) / sxx


def completion_rate(rows: list[Request], window_s: float) -> float:
    """Answers per second the server gave inside the window: completions from the first answer to the window's
    end, over that time. The generators wait for answers after the window, so counting every answered request
    would credit a stalled server with the whole offered rate; starting at the first answer leaves out the
    first request's own latency (a 1 s delay would otherwise read 1 s of the window as idle)."""
    if not rows:
        return 0.0
    first = min(r.end_s for r in rows)
    if first >= window_s:
        return 0.0
    return sum(1 for r in rows if r.end_s <= window_s) / (window_s - first)


def spread(values_ms: list[float]) -> dict[str, float | None]:
    """p50, p99, max of a list of ms values (lags, waits)."""
    values = sorted(values_ms)
    return {"p50": percentile(values, "50"), "p99": percentile(values, "99"), "max": values[-1] if values else None}


def lag_figures(lags_ms: list[float]) -> dict:
    """p50, p99 and max of the generator's lags, and the one judged: the highest percentile (at most p99) with
    LAG_TAIL_SAMPLES lags above it, so that at 25 req/s in a 2 s window (50 lags) it is p90, not the maximum."""
    figures = spread(lags_ms)
    n = len(lags_ms)
    if n:
        percent = max(50.0, min(99.0, 100.0 * (1 - LAG_TAIL_SAMPLES / n)))
        figures["judged"] = {"percentile": round(percent, 1), "ms": percentile(sorted(lags_ms), percent), "samples": n}
    return figures


def rates(rows: list[Request], window: float, rate: float, sent: int) -> dict:
    """The offered rate beside what became of it: completed in the window, answered at all, sent."""
    return {
        "rate": rate,
        "rate_achieved": completion_rate(rows, window),
        "rate_answered": len(rows) / window,  # answered at any time, the window's late answers too
        "rate_sent": sent / window,
    }


def result(tool: str, tool_version: str, rows: list[Request], window: float, **fields):
    """An open-loop run's LoadResult: requests and latency from its rows, and behind_schedule in its extra when
    the generator fell behind its own schedule. `fields`: bytes, errors, latency_source, raw_files, extra."""
    figures = latency(rows)
    saturated = behind_schedule(fields["extra"], figures.get("p50"))
    if saturated:
        fields["extra"]["behind_schedule"] = saturated
    return LoadResult(
        tool=tool,
        tool_version=tool_version,
        requests=len(rows),
        duration_s=window,
        latency_ms=figures,
        window_rate=completion_rate(rows, window),
        **fields,
    )


def behind_schedule(extra: dict, median_latency_ms: float | None = None) -> str | None:
    """Why the generator itself could not keep its schedule (the runner's loadgen_saturated), or None: its judged
    lag (lag_figures) over the larger of LAG_LIMIT_MS and LAG_SHARE of the median latency. A lag that is only an
    upper bound (k6 dropped iterations because the server held every VU; oha lost requests) proves nothing about
    the generator: its CPU, sampled by the cell, still flags a generator at its limit."""
    if not extra.get("schedule_lag_exact", True):
        return None
    lags = extra.get("schedule_lag_ms") or {}
    judged = lags.get("judged") or {"percentile": 99, "ms": lags.get("p99"), "samples": None}
    if judged["ms"] is None:
        return None
    limit = max(LAG_LIMIT_MS, LAG_SHARE * (median_latency_ms or 0.0))
    if judged["ms"] > limit:
        return (
            f"the generator's p{judged['percentile']:g} lag behind its own schedule was {judged['ms']:.1f} ms "
            f"(limit {limit:.1f} ms: the larger of {LAG_LIMIT_MS:g} ms and {LAG_SHARE:.0%} of the median "
            "latency)"
        )
    return None
