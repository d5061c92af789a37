"""What a host is, for the run's metadata: CPU, cores, kernel, OS, memory, Python, and the tools' versions.

    python3 runner/crossbench/hosts/facts.py [--tool wrk --tool java ...]     prints one JSON object

Standard library only, so any host's python3 runs it (the local runner's metadata.py has more, with psutil)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

VERSION_TIMEOUT_S = 10
VERSION_FLAGS = ("--version", "-V")  # wrk answers neither with status 0, but prints its version first
LOOKS_LIKE_A_VERSION = re.compile(r"\d+\.\d+")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def os_release() -> str | None:
    try:
        fields = dict(line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line)
    except OSError:
        return None
    return fields.get("PRETTY_NAME", "").strip('"') or None


def first_line(argv: list[str]) -> tuple[int, str]:
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=VERSION_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return -1, ""
    lines = [line.strip() for line in (done.stdout + "\n" + done.stderr).splitlines() if line.strip()]
    return done.returncode, lines[0] if lines else ""


def tool_version(tool: str) -> str | None:
    """The first line `tool --version` (or `-V`) prints; None when the tool is not installed."""
    path = shutil.which(tool)
    if path is None:
        return None
    answers = [first_line([path, flag]) for flag in VERSION_FLAGS]
    for status, line in answers:
        if status == 0 and line:
            return line
    for _, line in answers:
        if LOOKS_LIKE_A_VERSION.search(line):
            return line
    return "unknown"


def facts(tools: list[str]) -> dict:
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": memory_gb(),
        "kernel": platform.release(),
        "os": os_release(),
        "python": platform.python_version(),
        "tools": {tool: tool_version(tool) for tool in tools},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="facts", description=__doc__.splitlines()[0])
    parser.add_argument("--tool", action="append", default=[], help="a command whose version to report")
    print(json.dumps(facts(parser.parse_args(argv).tool), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
