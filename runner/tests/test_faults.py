"""faults.py without a run: which errors are the environment's, and the one line a stopped run ends with (the
real full disk, read-only directory and vanished tool are test_faults_live.py)."""

from __future__ import annotations

import errno
import os

from crossbench.cell import faults
from crossbench.loadgen.base import LoadgenError


def wrapped(inner: BaseException) -> LoadgenError:
    """A tool's error caused by `inner`, as an adapter raises it."""
    try:
        try:
            raise inner
        except OSError as e:
            raise LoadgenError("wrk: no JSON in its output") from e
    except LoadgenError as outer:
        return outer


def test_a_full_disk_is_found_behind_the_error_it_caused(tmp_path):
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "cells" / "a" / "wrk.stdout"))
    assert faults.disk_error(wrapped(full), tmp_path) is full
    assert faults.disk_error(wrapped(OSError(errno.EROFS, "ro", "/elsewhere")), tmp_path).errno == errno.EROFS


def test_permission_denied_counts_only_on_the_run_directorys_own_files(tmp_path):
    mine = OSError(errno.EACCES, os.strerror(errno.EACCES), str(tmp_path / "cells.jsonl"))
    theirs = OSError(errno.EACCES, os.strerror(errno.EACCES), "/usr/sbin/nginx")
    assert faults.disk_error(mine, tmp_path) is mine
    assert faults.disk_error(theirs, tmp_path) is None
    assert faults.disk_error(ConnectionRefusedError(errno.ECONNREFUSED, "refused"), tmp_path) is None


def test_the_write_check_passes_on_a_writable_directory_and_leaves_nothing(tmp_path):
    assert faults.write_check(tmp_path) is None
    assert list(tmp_path.iterdir()) == []
    assert faults.write_check(tmp_path / "gone").errno == errno.ENOENT


def test_the_stop_line_names_the_cause_the_count_the_remedy_and_resume(tmp_path):
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "cells.jsonl"))
    line = faults.stop_message(wrapped(full), tmp_path, 2, 5)
    assert line == (
        f"run_all: stopped: cannot write {tmp_path / 'cells.jsonl'}: No space left on device; 2 of 5 cells "
        f"kept in {tmp_path}; make room on its disk, then finish with: ./runner/run_all.sh "
        f"--resume {tmp_path}"
    )
    gone = faults.EnvironmentFault("oha is not built (it was there when the run started)", "put it back")
    assert "oha is not built" in faults.stop_message(gone, tmp_path, 1, 3)
    assert faults.stop_message(RuntimeError("a bug"), tmp_path, 1, 3) is None
    assert "\n" not in line


def test_a_write_outside_the_cells_is_one_line_too(tmp_path):
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "metadata.json.tmp"))
    assert faults.write_error_line(full).startswith(f"run_all: stopped: cannot write {tmp_path}")
    assert faults.write_error_line(OSError(errno.EPIPE, "broken pipe")) is None
