"""A foreign load of known size, to check the noise figures against (docs/results/noise-plant): a busy loop pinned to
one core, busy DUTY percent of every 10 ms and asleep the rest, for as long as a command runs.

    python -m crossbench.sampling.planted_load --duty 10 --core 1 --record FILE -- COMMAND [ARG ...]

The loop is this module's child, not the command's, so a run started as COMMAND counts its CPU as foreign. FILE
(JSON) says what was planted: the duty asked, the core, the seconds the loop ran and the CPU seconds it used
(`reached_percent`: the duty it had, which a core shared with a busy server can hold under the asked one). The
command's exit status is this module's; the loop is stopped when the command ends, Ctrl-C included.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PERIOD_S = 0.01


def spin(duty_percent: float, period_s: float = PERIOD_S) -> None:
    """Busy duty_percent of each period, asleep the rest, until killed."""
    busy_s = duty_percent / 100 * period_s
    next_start = time.perf_counter()
    while True:
        start = time.perf_counter()
        while time.perf_counter() - start < busy_s:
            pass
        next_start += period_s
        rest = next_start - time.perf_counter()
        if rest > 0:
            time.sleep(rest)
        else:
            next_start = time.perf_counter()  # late (the core was taken): start the next period now


def duty(text: str) -> float:
    value = float(text)
    if not 0 < value <= 100:
        raise argparse.ArgumentTypeError(f"--duty {text}: a percent of the core, above 0 and at most 100")
    return value


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m crossbench.sampling.planted_load", description=__doc__.split("\n\n")[0].replace("\n", " ")
    )
    parser.add_argument("--duty", type=duty, required=True, help="percent of the core the loop keeps busy")
    parser.add_argument("--core", type=int, required=True, help="the core the loop is pinned to")
    parser.add_argument("--record", type=Path, help="where to write what was planted (JSON)")
    parser.add_argument("--spin", action="store_true", help=argparse.SUPPRESS)  # the loop itself
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- and the command to run beside the loop")
    args = parser.parse_args(argv)
    args.command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.core not in os.sched_getaffinity(0):
        parser.error(f"--core {args.core}: not one of this process's cores {sorted(os.sched_getaffinity(0))}")
    if not args.spin and not args.command:
        parser.error("give the command to run beside the loop after --")
    return args


def planted(loop: subprocess.Popen, args: argparse.Namespace, wall_s: float) -> dict:
    import psutil  # at its use, as the runner's samplers: the loop's CPU seconds before it is stopped

    try:
        times = psutil.Process(loop.pid).cpu_times()
        cpu_s = times.user + times.system
    except psutil.Error:
        cpu_s = None
    return {
        "duty_percent": args.duty,
        "core": args.core,
        "period_ms": PERIOD_S * 1000,
        "seconds": round(wall_s, 2),
        "cpu_seconds": None if cpu_s is None else round(cpu_s, 2),
        "reached_percent": None if cpu_s is None or wall_s <= 0 else round(cpu_s / wall_s * 100, 1),
        "command": args.command,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.spin:
        os.sched_setaffinity(0, {args.core})
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # stopped by its parent, after the command
        spin(args.duty)
    loop = subprocess.Popen(
        [sys.executable, "-m", __spec__.name, "--spin", "--duty", str(args.duty), "--core", str(args.core)]
    )
    started = time.monotonic()
    command = None
    try:
        command = subprocess.Popen(args.command)
        while True:
            try:
                return command.wait()
            except KeyboardInterrupt:
                continue  # the command has the same Ctrl-C and stops itself: wait for it to finish
    finally:
        record = planted(loop, args, time.monotonic() - started)
        loop.kill()
        loop.wait()
        if command is not None and command.poll() is None:
            command.terminate()
            command.wait()
        if args.record:
            args.record.parent.mkdir(parents=True, exist_ok=True)
            args.record.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
