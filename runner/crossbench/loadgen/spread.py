"""Where a cell's load comes from, as the run's placement says: `Here`, one generator on this machine, its files
in the cell's directory and its result the cell's; or `Spread` over the run's load hosts (--hosts): the
connections split between them, every host's tool started at one moment (each host's clock offset applied), its
files brought back into `loadgen-<n>/`, and the results merged exactly (loadgen/merge.py). A driver calls
`ctx.placement.load.run(...)` and never asks which."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

from crossbench.record import metrics

from . import ADAPTERS, get
from .base import LoadgenError, LoadResult, LoadSpec

START_MARGIN_S = 2.0  # for every host to open its session and scratch directory: 0.2-0.7 s, past 1.2 s under steal
# the generators whose results from several load hosts merge exactly (their LoadGenerator's merge, loadgen/merge.py);
# http_load reports neither per-request times nor a histogram: several of its runs cannot be merged exactly
MERGERS = {name: generator.merge for name, generator in ADAPTERS.items() if generator.merge is not None}


def shares(total: int, parts: int) -> list[int]:
    """`total` connections over `parts` hosts as evenly as whole numbers allow (the first ones get the rest)."""
    return [total // parts + (1 if n < total % parts else 0) for n in range(parts)]


def own_run(tool: str, run=None):
    """`run(spec, out_dir, share, shares)`: the caller's, or the adapter's own run."""
    adapter = get(tool)
    return run or (lambda spec_, dir_, share, shares_: adapter.run(spec_, dir_))


class Here:
    """The load from one generator on `host` (this machine), as without --hosts."""

    def __init__(self, host):
        self.hosts = [host]

    def start_at(self) -> float | None:
        """When a process here must keep time with the load (seed 000's probe): it starts at once."""
        return None

    def run(
        self, tool: str, spec: LoadSpec, out_dir: Path, run=None, start_at: float | None = None
    ) -> tuple[LoadResult, list[str]]:
        return own_run(tool, run)(dataclasses.replace(spec, host=self.hosts[0]), out_dir, 0, 1), []

    def record_fields(self, result: LoadResult) -> dict:
        return {}


class Spread:
    """The load from several load hosts, or one, together (run_spread)."""

    def __init__(self, hosts: list):
        self.hosts = list(hosts)

    def start_at(self) -> float | None:
        return time.time() + START_MARGIN_S

    def run(
        self, tool: str, spec: LoadSpec, out_dir: Path, run=None, start_at: float | None = None
    ) -> tuple[LoadResult, list[str]]:
        return run_spread(tool, spec, out_dir, self.hosts, run, start_at)

    def record_fields(self, result: LoadResult) -> dict:
        """Every load host's own figures (the record's loadgen_hosts)."""
        return {"loadgen_hosts": result.extra["per_host"]}


def run_spread(
    tool: str, spec: LoadSpec, out_dir: Path, hosts: list, run=None, start_at: float | None = None
) -> tuple[LoadResult, list[str]]:
    """The load of `spec` from `hosts` together, and the flags it raised.
    Each host takes its share of the connections and, open loop, an equal share of the rate. `run(spec, out_dir,
    share, shares)` runs one host's share (default: the adapter's run; ab also splits its request count).
    `start_at` (this machine's epoch, at least START_MARGIN_S ahead) when something here must keep time with the
    load (seed 000's probe); by default several hosts start START_MARGIN_S from now, one host at once."""
    run = own_run(tool, run)
    if tool not in MERGERS:
        raise LoadgenError(f"{tool} cannot run on load hosts yet (only {', '.join(MERGERS)} results merge)")
    hosts = hosts[: spec.concurrency]  # one connection needs one host: C=1 runs from the first
    start_at = start_at or (time.time() + START_MARGIN_S if len(hosts) > 1 else None)
    rate = spec.rate / len(hosts) if spec.rate else None
    specs = [
        dataclasses.replace(spec, concurrency=c, host=h, start_at=start_at, rate=rate)
        for c, h in zip(shares(spec.concurrency, len(hosts)), hosts)
    ]
    dirs = [Path(out_dir) / f"loadgen-{n}" for n in range(1, len(hosts) + 1)]
    results = run_together(run, specs, dirs)
    parts = [(h.label, r, h.cpu_percent()) for h, r in zip(hosts, results)]
    flags = (
        ["loadgen_saturated"]
        if any(metrics.loadgen_saturated(cpu, s.threads) for (_, _, cpu), s in zip(parts, specs))
        else []
    )
    merged = MERGERS[tool](parts)
    for figures, host in zip(merged.extra["per_host"], hosts):
        late = host.last_start_s - start_at if host.last_start_s is not None and start_at else None
        figures["start_late_ms"] = round(late * 1000, 2) if late is not None else None
        figures["command"] = host.last_argv or figures["command"]
    return merged, flags


def run_together(run, specs: list[LoadSpec], dirs: list[Path]) -> list[LoadResult]:
    """Each spec in a thread of its own; any host's failure fails the cell (with every host's reason)."""
    results: list = [None] * len(specs)

    def one(n: int) -> None:
        try:
            results[n] = run(specs[n], dirs[n], n, len(specs))
        except Exception as e:  # noqa: BLE001 - reported below with the host's name
            results[n] = e

    threads = [threading.Thread(target=one, args=(n,), name=f"load host {n + 1}") for n in range(len(specs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failures = [f"{s.host.label}: {r}" for s, r in zip(specs, results) if isinstance(r, Exception)]
    if failures:
        raise LoadgenError("load hosts failed: " + "; ".join(failures))
    return results
