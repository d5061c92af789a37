"""The process-tree sampler beside a server on another host: `python -m crossbench.sampling.stream --pid PID`
samples the tree rooted at PID as ProcessTreeSampler does here and writes its CSV rows (header first) to stdout,
flushed one by one, until the process is gone or it is stopped (it runs under the tether). The host that starts
it reads them back (hosts/remote_sampler.py)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import psutil

from .process_tree import ProcessTreeSampler

GONE_CHECK_S = 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="crossbench.sampling.stream")
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--interval-s", type=float, default=0.25)
    args = parser.parse_args(argv)
    with ProcessTreeSampler(args.pid, interval_s=args.interval_s, out_csv=Path("/dev/stdout")):
        while psutil.pid_exists(args.pid):
            time.sleep(GONE_CHECK_S)
    return 0


if __name__ == "__main__":
    sys.exit(main())
