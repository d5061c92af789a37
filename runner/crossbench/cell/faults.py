"""Faults of the environment, told apart from a cell's own failure: the results disk full, the run directory gone
read-only or unwritable, a tool the run's preflight found and that has gone since. A cell's own failure is recorded
and the run goes on; a fault of the environment would fail every cell after it the same way, so the run stops
instead, with one line saying what happened and what to do. Nothing measured is lost: each finished record is on
disk (synced) before the next cell starts, and the cell the fault hit is not recorded, so --resume runs it again."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from crossbench.drivers import DRIVERS

EXIT_CODE = 3  # 2: refused before anything ran; 130: interrupted
WRITE_CHECK_BYTES = 64 * 1024
# errno -> what to do about it
DISK_ERRORS = {
    errno.ENOSPC: "make room on its disk",
    errno.EDQUOT: "make room within the disk quota",
    errno.EROFS: "make its file system writable again",
    errno.EACCES: "make it writable again",
    errno.EPERM: "make it writable again",
}


class EnvironmentFault(RuntimeError):
    """The run cannot go on here; the message is the cause and what to do about it."""

    def __init__(self, cause: str, remedy: str):
        super().__init__(cause)
        self.cause, self.remedy = cause, remedy


def disk_error(error: BaseException, directory: Path) -> OSError | None:
    """An error writing below `directory` in the exception or its causes: ENOSPC, EDQUOT and EROFS from anywhere,
    EACCES and EPERM only on a file of its own (elsewhere they mean something else, a port below 1024...)."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in DISK_ERRORS:
            if error.errno not in (errno.EACCES, errno.EPERM) or under(error.filename, directory):
                return error
        error = error.__cause__ or error.__context__
    return None


def under(filename, directory: Path) -> bool:
    if not isinstance(filename, (str, os.PathLike)):
        return False
    return Path(os.path.abspath(filename)).is_relative_to(os.path.abspath(directory))


def write_check(directory: Path) -> OSError | None:
    """Writes, syncs and removes a small file in `directory`: the error if it cannot (a full disk makes tools fail
    in ways of their own, wrk with no output, before any error of ours names the disk)."""
    probe = Path(directory) / ".crossbench-write-check"
    try:
        with open(probe, "wb") as out:
            out.write(b"\0" * WRITE_CHECK_BYTES)
            out.flush()
            os.fsync(out.fileno())
        return None
    except OSError as e:
        return e
    finally:
        try:
            probe.unlink(missing_ok=True)
        except OSError:
            pass


def disk_fault(error: OSError, run_path: Path) -> EnvironmentFault:
    where = error.filename or run_path
    return EnvironmentFault(
        f"cannot write {where}: {error.strerror or error}", DISK_ERRORS.get(error.errno, "make it writable again")
    )


def tool_fault(plan) -> EnvironmentFault | None:
    """The checks the run passed before its first cell, again: one that fails now is a tool gone since."""
    try:
        DRIVERS[plan.kind].preflight(plan)
        plan.plugin.preflight(plan.settings)
    except Exception as e:  # noqa: BLE001 - whatever the check says, it said otherwise before the first cell
        return EnvironmentFault(f"{e} (it was there when the run started)", "put it back")
    return None


def cell_fault(plan, error: Exception, cell_dir: Path) -> EnvironmentFault | None:
    """After a cell failed: the environment's fault (returned), or the cell's own (None: record it, go on)."""
    run_path = Path(cell_dir).parent.parent
    found = disk_error(error, run_path) or write_check(cell_dir)
    return disk_fault(found, run_path) if found else tool_fault(plan)


def stop_message(error: BaseException, run_path: Path, kept: int, total: int) -> str | None:
    """The one line the run ends with when the environment stopped it; None when `error` is no such fault."""
    if not isinstance(error, EnvironmentFault):
        found = disk_error(error, run_path)
        if found is None:
            return None
        error = disk_fault(found, run_path)
    return (
        f"run_all: stopped: {error.cause}; {kept} of {total} cells kept in {run_path}; {error.remedy}, then "
        f"finish with: ./runner/run_all.sh --resume {run_path}"
    )


def write_error_line(error: OSError) -> str | None:
    """Writing the run directory outside the cells (creating it, its metadata, the charts): the one line, or None
    when `error` is not the disk's."""
    if error.errno not in DISK_ERRORS or not error.filename:
        return None
    fault = disk_fault(error, Path(error.filename).parent)
    return (
        f"run_all: stopped: {fault.cause}; {DISK_ERRORS[error.errno]}, then run it again (--resume DIR finishes a run)"
    )
