"""The bounded process runner every adapter uses."""

from __future__ import annotations

import signal
import time

import psutil
import pytest
from testkit import wait_until

from crossbench.loadgen import process
from crossbench.loadgen.base import LoadgenError


@pytest.mark.spawns  # sh
def test_output_goes_to_raw_files(tmp_path):
    done = process.run_bounded(["sh", "-c", "echo out; echo err >&2; exit 3"], tmp_path, "tool", 10)
    assert done.returncode == 3
    assert (tmp_path / "tool.stdout").read_text() == "out\n"
    assert (tmp_path / "tool.stderr").read_text() == "err\n"


@pytest.mark.spawns  # sh
def test_bound_kills_the_whole_process_group(tmp_path):
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    with pytest.raises(LoadgenError, match="still running"):
        process.run_bounded(["sh", "-c", f"sleep 30 & echo $! > {pid_file}; sleep 30"], tmp_path, "tool", 1)
    assert time.monotonic() - started < 10
    child = int(pid_file.read_text())  # the background sleep, not just the shell
    wait_until(lambda: gone(child), 5, f"the tool's child {child} to end")


@pytest.mark.spawns  # sh
def test_interrupt_kills_the_tool_and_propagates(tmp_path):
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    pid_file = tmp_path / "child.pid"
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        with pytest.raises(KeyboardInterrupt):
            process.run_bounded(["sh", "-c", f"sleep 30 & echo $! > {pid_file}; sleep 30"], tmp_path, "tool", 20)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    child = int(pid_file.read_text())
    wait_until(lambda: gone(child), 5, f"the tool's child {child} to end")


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.spawns  # sh
def test_env_reaches_the_tool(tmp_path):
    process.run_bounded(["sh", "-c", 'printf %s "$CB_TEST"'], tmp_path, "tool", 10, env={"CB_TEST": "yes"})
    assert (tmp_path / "tool.stdout").read_text() == "yes"


@pytest.mark.spawns  # no-such-load-generator
def test_missing_tool(tmp_path):
    with pytest.raises(LoadgenError, match="not found"):
        process.require("no-such-load-generator")
    with pytest.raises(LoadgenError, match="cannot start"):
        process.run_bounded(["no-such-load-generator"], tmp_path, "tool", 5)


def test_whole_seconds_rounds_up():
    assert [process.whole_seconds(s) for s in (0, 0.2, 1, 1.0000000001, 2.5, 60)] == [1, 1, 1, 1, 3, 60]
