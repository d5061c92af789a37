"""The operating-system plumbing every part of the runner shares (crossbench.oskit)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from crossbench import oskit

FORKER = (
    "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
    "print('ready', flush=True); time.sleep(60)"
)


@pytest.mark.spawns  # a Python child
def test_stop_group_stops_the_child_and_what_it_started():
    proc = subprocess.Popen([sys.executable, "-c", FORKER], stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout.readline().strip() == "ready"
    grandchild = psutil.Process(proc.pid).children()[0]
    oskit.stop_group(proc, grace_s=5)
    assert proc.returncode is not None
    grandchild.wait(timeout=5)  # gone too (psutil raises TimeoutExpired otherwise)
    assert not grandchild.is_running()


@pytest.mark.spawns  # true
def test_a_reaped_child_is_never_signalled_again(monkeypatch):
    proc = subprocess.Popen(["true"], start_new_session=True)
    proc.wait()
    sent = []
    monkeypatch.setattr(oskit.os, "killpg", lambda pid, sig: sent.append((pid, sig)))
    assert oskit.stop_group(proc, grace_s=1) == 0
    oskit.signal_unreaped_group(proc, 9)
    assert sent == []  # its pid (the group id) may belong to a stranger by now


# A process whose threads keep starting threads: a pin taken while they start must still leave none behind.
SPAWNER = """import os, sys, threading, time
def spawn(depth):
    if depth:
        threading.Thread(target=spawn, args=(depth - 1,), daemon=True).start()
    time.sleep(60)
for _ in range(4):
    threading.Thread(target=spawn, args=(3,), daemon=True).start()
while threading.active_count() < 17:
    time.sleep(0.001)
print('ready', flush=True)
for _ in range(200):
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    time.sleep(0.005)
time.sleep(60)
"""


def affinities(pid: int) -> dict[int, set[int]]:
    return {tid: os.sched_getaffinity(tid) for tid in oskit.thread_ids(pid)}


@pytest.mark.spawns  # a Python child with threads, and `python -m crossbench.oskit pin` (RemoteHost.pin's)
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to pin onto one of them")
@pytest.mark.parametrize("through", ["call", "command"])
def test_pin_tree_leaves_every_thread_and_every_later_one_on_its_cores(through):
    core = max(os.sched_getaffinity(0))
    proc = subprocess.Popen([sys.executable, "-c", SPAWNER], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        assert any(cores != {core} for cores in affinities(proc.pid).values())  # it started on every core
        if through == "call":
            moved = oskit.pin_tree(proc.pid, [core])
        else:
            done = subprocess.run(
                [sys.executable, "-m", "crossbench.oskit", "pin", str(proc.pid), str(core)],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert done.returncode == 0, done.stderr
            moved = int(done.stdout)
        assert moved >= 17  # the main thread and the 16 the spawners made, at least
        before = len(affinities(proc.pid))
        deadline = time.monotonic() + 10
        while len(affinities(proc.pid)) < before + 20 and time.monotonic() < deadline:
            time.sleep(0.05)  # threads made after the pin, by threads it moved
        seen = affinities(proc.pid)
        assert len(seen) >= before + 20 and all(cores == {core} for cores in seen.values()), seen
    finally:
        oskit.stop_group(proc, grace_s=5)


@pytest.mark.spawns  # python -m crossbench.oskit
def test_the_pin_command_refuses_what_it_cannot_read():
    done = subprocess.run(
        [sys.executable, "-m", "crossbench.oskit", "pin", "12", "zero"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode != 0 and "crossbench.oskit pin" in done.stderr


def test_the_port_wait_only_waits_while_time_wait_fills_the_range(monkeypatch):
    monkeypatch.setattr(oskit, "ephemeral_port_count", lambda: 1000)
    monkeypatch.setattr(oskit, "time_wait_count", lambda: 100)
    assert oskit.wait_for_ephemeral_ports() < 0.5
    monkeypatch.setattr(oskit, "time_wait_count", lambda: 900)
    start = time.monotonic()
    assert oskit.wait_for_ephemeral_ports(limit_s=1.5) >= 1.5
    assert time.monotonic() - start < 4


def test_the_open_file_limit_is_raised_or_refused_clearly(monkeypatch):
    soft, hard = oskit.resource.getrlimit(oskit.resource.RLIMIT_NOFILE)
    assert oskit.raise_open_files(10) >= 10 + oskit.FD_MARGIN
    if hard != oskit.resource.RLIM_INFINITY:
        with pytest.raises(oskit.LimitTooLow, match="hard limit"):
            oskit.raise_open_files(hard + 1)
