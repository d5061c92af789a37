"""Seed 003's client: hold N keep-alive connections to one server and keep each one alive with HEADs.

Opens `rate_per_10ms` connections every 10 ms up to N, sends a HEAD on each as soon as it is connected
(the first answer is what makes a connection "held": the server really serves it), then one HEAD every
`head_interval_s`, each connection at its own random phase so they do not all fire at once. After the
ramp it holds for `hold_s` seconds, then closes everything (also on Ctrl-C / SIGTERM). Every failure is
counted by kind; a slot whose connection failed tries again after `retry_s` (0: it gives up), as a real
client would. Every `sample_s` one row of the timeline goes to a CSV.

asyncio with uvloop when it is installed (the record says which loop ran).

    python -m crossbench.clients.holder --port 8080 --connections 10000 --hold 30 --csv holder.csv --json holder.json
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from .holder_client import CLOSE_RETRY_S, MB, Holder, ensure_open_files, event_loop_name, hold, percentiles
from .holder_types import (
    FAILURE_KINDS,
    FD_MARGIN,
    SLOT_STEP_S,
    TIMELINE_COLUMNS,
    Counters,
    HoldConfig,
    HolderRefused,
    HoldResult,
    Non2xx,
    classify,
    status_of,
    validate,
)

__all__ = [
    "CLOSE_RETRY_S",
    "FAILURE_KINDS",
    "FD_MARGIN",
    "MB",
    "SLOT_STEP_S",
    "TIMELINE_COLUMNS",
    "Counters",
    "HoldConfig",
    "HoldResult",
    "Holder",
    "HolderRefused",
    "Non2xx",
    "classify",
    "ensure_open_files",
    "event_loop_name",
    "hold",
    "main",
    "parse_args",
    "percentiles",
    "status_of",
    "validate",
]


def parse_args(argv):
    d = HoldConfig()
    p = argparse.ArgumentParser(
        prog="python -m crossbench.clients.holder",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default=d.host)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--path", default=d.path)
    p.add_argument("--connections", type=int, default=d.connections)
    p.add_argument("--rate-per-10ms", type=int, default=d.rate_per_10ms)
    p.add_argument("--head-interval", type=float, default=d.head_interval_s, help="seconds between HEADs")
    p.add_argument("--hold", type=float, default=d.hold_s, help="seconds to hold after the ramp")
    p.add_argument("--timeout", type=float, default=d.timeout_s)
    p.add_argument("--retry", type=float, default=d.retry_s, help="seconds before a failed slot retries; 0: never")
    p.add_argument("--sample", type=float, default=d.sample_s)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--csv", type=Path, help="the timeline")
    p.add_argument("--json", type=Path, help="the result")
    args = p.parse_args(argv)
    config = HoldConfig(
        args.host,
        args.port,
        args.path,
        args.connections,
        args.rate_per_10ms,
        args.head_interval,
        args.hold,
        args.timeout,
        args.retry,
        args.sample,
        args.seed,
    )
    validate(config)
    return config, args


def main(argv=None) -> int:
    # SIGTERM (the runner stopping us) closes everything like Ctrl-C does: asyncio.Runner cancels the main task.
    # SIGINT is taken back from whatever the parent left: started from `nohup ... &` (no job control) it arrives
    # ignored, asyncio.Runner then leaves it alone, and neither signal would stop the holder (seen in CI here).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))
    try:
        config, args = parse_args(argv)
        result = hold(config, args.csv)
    except HolderRefused as e:
        print(f"holder: {e}", file=sys.stderr)
        return 2
    if args.json:
        args.json.write_text(json.dumps(result.to_dict(), indent=1))
    print(
        f"holder ({result.event_loop}): held peak {result.connections_held_peak} of {config.connections}, "
        f"at end {result.connections_held_at_end}; {result.requests_answered} HEADs answered; failures "
        f"{ {k: v for k, v in result.failures.items() if v} or 0 }"
    )
    return 130 if result.interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
