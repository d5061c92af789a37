"""Faults of the environment in the middle of a real run (runner/crossbench/cell/faults.py): the results disk full,
the results directory turned read-only, a load generator gone. Each time the run stops with one line naming the
cause, the run directory and --resume, never a traceback; the cells finished before are kept, the one the fault
hit is not recorded, and --resume on a repaired environment completes the run. The disk is a small tmpfs mounted
for the test (skipped where mounting is not permitted).

Each run is two Tornado cells of 1 s, one launch each: the fault comes once the first is recorded, so the second is
the cell it hits and the first the one kept, and a fault of the environment is met by any window, however short."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from pathlib import Path

import pytest
from testkit import marked_processes, options, records, wait_until

from crossbench import paths
from crossbench.loadgen import oha, openloop

pytestmark = [pytest.mark.live, pytest.mark.shares_cores]

RUN_ALL = str(paths.RUNNER / "run_all.sh")
STOPPED_EXIT = 3
CELLS = 2
MARKER = "CROSSBENCH_TEST_RUN"
SMALL_RUN = [
    "--experiment",
    "quick",
    "--groups",
    "delay",
    "--servers",
    "tornado",
    "--concurrency",
    "2,3",
    "--delays",
    "200ms",
    "--duration",
    "1s",
    "--warmup",
    "0",
    "--repetitions",
    "1",
    "--no-analysis",
]


def sh(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


@pytest.fixture
def small_disk(tmp_path):
    """A 32 MB tmpfs of the test's own: full or read-only at will without touching anything else."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = sh("mount", "-t", "tmpfs", "-o", "size=32m,mode=0755", "tmpfs", str(mount_point))
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        for _ in range(3):  # a bind mount over it, then itself
            if sh("mountpoint", "-q", str(mount_point)).returncode != 0:
                break
            if sh("umount", str(mount_point)).returncode != 0:
                sh("umount", "-l", str(mount_point))


def fill(disk: Path) -> Path:
    """Writes zeros until the file system has no room left."""
    filler = disk / "filler"
    with contextlib.suppress(OSError), open(filler, "wb") as out:
        while True:
            out.write(b"\0" * (1 << 20))
            out.flush()
    probe = os.statvfs(disk)
    assert probe.f_bavail == 0, "the disk still has room"
    return filler


def marked(out: Path, env: dict | None) -> dict:
    """The run's environment with its mark: every process it starts inherits it (marked_processes)."""
    return {**(env or os.environ), MARKER: str(out)}


def stop_midway(out: Path, fault, *args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, list]:
    """Starts the small run, brings on `fault` once its first cell is recorded, and lets the run end."""
    proc = subprocess.Popen(
        [RUN_ALL, *options(SMALL_RUN, "--out", str(out), *args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=marked(out, env),
    )
    try:
        wait_until(lambda: records(out), 120, "the first cell to be recorded")
        fault()
        stdout, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), records(out)


def assert_stopped_cleanly(done: subprocess.CompletedProcess, kept: list, out: Path, cause: str) -> str:
    """The run's last line, once checked."""
    assert done.returncode == STOPPED_EXIT, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("run_all: stopped: ") and cause in last, last
    assert f"--resume {out}" in last and f"of {CELLS} cells kept in {out}" in last, last
    assert len(kept) == 1 and kept[0]["status"] == "ok", kept  # the hit cell: not recorded
    assert marked_processes(MARKER, str(out)) == []
    return last


def assert_resume_completes(out: Path, kept: list, env: dict | None = None) -> None:
    done = subprocess.run(
        [RUN_ALL, "--resume", str(out), "--no-analysis"],
        capture_output=True,
        text=True,
        timeout=180,
        env=marked(out, env),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    final = records(out)
    assert final[: len(kept)] == kept and len({r["cell_id"] for r in final}) == len(final) == CELLS
    assert all(r["status"] == "ok" for r in final), [r.get("error") for r in final]
    assert marked_processes(MARKER, str(out)) == []


def test_a_full_disk_stops_the_run_with_one_line_and_resume_finishes_it(small_disk, report_figure):
    out = small_disk / "run"
    filler = small_disk / "filler"
    done, kept = stop_midway(out, lambda: fill(small_disk))
    report_figure("full disk: " + assert_stopped_cleanly(done, kept, out, os.strerror(errno.ENOSPC)))
    filler.unlink()
    assert_resume_completes(out, kept)


def read_only(disk: Path) -> None:
    """A read-only bind mount over the disk: from now on every open for writing below it fails with EROFS (a
    remount of the disk itself would be refused while the run holds files open for writing). The bind mount's own
    remount is refused as busy while a write opened through it is under way (seen once, in a CI run beside
    another test), so it is tried again until it holds."""
    sh("mount", "--bind", str(disk), str(disk)).check_returncode()
    wait_until(
        lambda: sh("mount", "-o", "remount,bind,ro", str(disk)).returncode == 0, 10, "the read-only remount", 0.05
    )


def test_a_results_directory_turned_read_only_stops_the_run_and_resume_finishes_it(small_disk, report_figure):
    out = small_disk / "run"
    done, kept = stop_midway(out, lambda: read_only(small_disk))
    report_figure("read-only: " + assert_stopped_cleanly(done, kept, out, os.strerror(errno.EROFS)))
    sh("umount", str(small_disk)).check_returncode()  # the bind mount: the disk is writable again
    assert_resume_completes(out, kept)


def test_a_load_generator_gone_mid_run_stops_it_and_resume_finishes_it(tmp_path, report_figure):
    real = openloop.cached_binary("oha", oha.VERSION)
    if not real.exists():
        pytest.fail(f"oha {oha.VERSION} is not built: run runner/install-openloop.sh (runner/test.sh does)")
    tools = tmp_path / "tools"
    link = tools / real.relative_to(openloop.tools_dir())
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    env = {**os.environ, "CROSSBENCH_TOOLS": str(tools)}
    out = tmp_path / "run"
    # 300 req/s: a held open-loop window's 300 requests (drivers/open_loop.MIN_WINDOW_REQUESTS) fit in the 1 s
    # window, which a lower rate would stretch
    done, kept = stop_midway(out, link.unlink, "--loadgen", "oha", "--rates", "300", env=env)
    last = assert_stopped_cleanly(done, kept, out, "oha")
    assert "put it back" in last, last
    report_figure("tool gone: " + last)
    link.symlink_to(real)
    assert_resume_completes(out, kept, env)
