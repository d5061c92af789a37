"""Run a load generator bounded in wall-clock time, its output kept as raw files.

One helper for every adapter: the tool runs on its host (crossbench.hosts: this machine or a load host) in its
own session (process group), writes stdout and stderr straight to `<tool>.stdout` / `<tool>.stderr` in the
cell's directory, and is killed as a group when it outlives its bound or when the runner is interrupted.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import time
from pathlib import Path

from crossbench import oskit
from crossbench.loadgen.base import Finished, LoadgenError, raw_path

KILL_GRACE_S = 3.0  # a bounded tool's group gets this long after SIGTERM before SIGKILL


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


def run_bounded(
    cmd: list[str],
    out_dir: Path,
    tool: str,
    limit_s: float,
    env: dict[str, str] | None = None,
    host=None,
    start_at: float | None = None,
) -> Finished:
    """Run cmd to completion within limit_s seconds on `host` (crossbench.hosts; default this machine), its raw
    output in out_dir; its whole process group is killed when it outlives its bound."""
    return (host or THIS_MACHINE).run_bounded(cmd, out_dir, tool, limit_s, env, start_at=start_at)


def run_here(
    cmd: list[str], out_dir: Path, tool: str, limit_s: float, env: dict | None = None, start_at: float | None = None
) -> Finished:
    """cmd to completion within limit_s seconds in its own session, stdout and stderr in `<tool>.stdout` /
    `<tool>.stderr` of out_dir; its whole process group is killed when it outlives its bound or the runner is
    interrupted. `start_at` (epoch): it starts then."""
    out_dir.mkdir(parents=True, exist_ok=True)
    time.sleep(max(0.0, (start_at or 0.0) - time.time()))
    stdout, stderr = raw_path(out_dir, tool, "stdout"), raw_path(out_dir, tool, "stderr")
    started = time.monotonic()
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        try:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                env={**os.environ, **(env or {})},
            )
        except FileNotFoundError as exc:
            raise LoadgenError(f"{tool}: cannot start {cmd[0]!r}: {exc}") from exc
        try:
            returncode = proc.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            oskit.stop_group(proc, KILL_GRACE_S)
            raise LoadgenError(
                f"{tool} still running after its {limit_s:.0f} s bound; "
                f"its process group was killed (raw output in {out_dir})"
            ) from None
        except BaseException:  # KeyboardInterrupt and friends: never leave the tool behind
            oskit.stop_group(proc, KILL_GRACE_S)
            raise
    return Finished(returncode, stdout, stderr, time.monotonic() - started)


def version_output(cmd: list[str], limit_s: float = 5.0) -> str:
    """stdout + stderr of a short informational command (version flags), bounded; '' on failure."""
    try:
        done = subprocess.run(
            cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=limit_s, errors="replace"
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


class ThisMachine:
    """What run_bounded needs of a host, on this machine: a LoadSpec without a host stands for it (hosts.local's
    LocalHost runs its bounded commands the same way, through run_here)."""

    def run_bounded(
        self,
        cmd: list[str],
        out_dir: Path,
        tool: str,
        limit_s: float,
        env: dict | None = None,
        start_at: float | None = None,
    ) -> Finished:
        return run_here(cmd, out_dir, tool, limit_s, env, start_at)


THIS_MACHINE = ThisMachine()
