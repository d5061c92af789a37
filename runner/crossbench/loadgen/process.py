"""Run a load generator bounded in wall-clock time, its output kept as raw files.

One helper for every adapter: the tool runs on its host (crossbench.hosts: this machine or a load host) in its
own session (process group), writes stdout and stderr straight to `<tool>.stdout` / `<tool>.stderr` in the
cell's directory, and is killed as a group when it outlives its bound or when the runner is interrupted.
"""
from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

from crossbench.hosts import local
from crossbench.loadgen.base import Finished, LoadgenError, raw_path
from crossbench import oskit


def require(tool: str) -> str:
    """The tool's full path, or LoadgenError when it is not on PATH."""
    path = shutil.which(tool)
    if path is None:
        raise LoadgenError(f"{tool} not found on PATH")
    return path


def whole_seconds(seconds: float) -> int:
    """Tools that take whole seconds (wrk -d/--timeout, ab -t/-s, http_load -seconds): round up, at least 1."""
    return max(1, math.ceil(seconds - 1e-9))


taskset_prefix = oskit.taskset_prefix


def source_text(source: Path | str, tool: str, suffix: str = "stdout") -> tuple[Path | None, str]:
    """A parser's input: (run directory, text of <tool>.<suffix> in it), or (None, the text itself)."""
    if isinstance(source, Path) or ("\n" not in source and Path(source).is_dir()):
        directory = Path(source)
        return directory, raw_path(directory, tool, suffix).read_text(errors="replace")
    return None, source


def existing(out_dir: Path, tool: str, suffixes: tuple[str, ...]) -> tuple[str, ...]:
    """The raw files of `tool` in out_dir that exist, as strings for LoadResult.raw_files."""
    paths = (raw_path(out_dir, tool, suffix) for suffix in suffixes)
    return tuple(str(p) for p in paths if p.exists())


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


def run_bounded(cmd: list[str], out_dir: Path, tool: str, limit_s: float,
                env: dict[str, str] | None = None, host=None, start_at: float | None = None) -> Finished:
    """Run cmd to completion within limit_s seconds on `host` (crossbench.hosts; default this machine), its raw
    output in out_dir; its whole process group is killed when it outlives its bound."""
    return (host or local.HERE).run_bounded(cmd, out_dir, tool, limit_s, env, start_at=start_at)


def probe(cmd: list[str], limit_s: float = 5.0) -> str:
    """stdout + stderr of a short informational command (version flags), bounded; '' on failure."""
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=limit_s, errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr
