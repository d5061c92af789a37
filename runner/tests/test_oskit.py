"""The operating-system plumbing every part of the runner shares (crossbench.oskit)."""
from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest

from crossbench import oskit

FORKER = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); " \
         "print('ready', flush=True); time.sleep(60)"


@pytest.mark.spawns        # a Python child
def test_stop_group_stops_the_child_and_what_it_started():
    proc = subprocess.Popen([sys.executable, "-c", FORKER], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout.readline().strip() == "ready"
    grandchild = psutil.Process(proc.pid).children()[0]
    oskit.stop_group(proc, grace_s=5)
    assert proc.returncode is not None
    grandchild.wait(timeout=5)                      # gone too (psutil raises TimeoutExpired otherwise)
    assert not grandchild.is_running()


@pytest.mark.spawns        # true
def test_a_reaped_child_is_never_signalled_again(monkeypatch):
    proc = subprocess.Popen(["true"], start_new_session=True)
    proc.wait()
    sent = []
    monkeypatch.setattr(oskit.os, "killpg", lambda pid, sig: sent.append((pid, sig)))
    assert oskit.stop_group(proc, grace_s=1) == 0
    oskit.signal_unreaped_group(proc, 9)
    assert sent == []        # its pid (the group id) may belong to a stranger by now


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
