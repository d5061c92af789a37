"""The shared test helpers that a live test leans on while the runner starts and stops processes under it."""

from __future__ import annotations

import subprocess
import sys

import psutil
import pytest
from testkit import descendants, experiment_with, wait_until

from crossbench.plan import experiment

pytestmark = pytest.mark.spawns  # real process trees for the helpers to read


def test_descendants_reads_a_live_tree_and_leaves_out_a_child_that_ends_while_read(monkeypatch):
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys; "
            "a = subprocess.Popen(['sleep', '30']); b = subprocess.Popen(['sleep', '31']); "
            "sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
    )
    try:

        def both_sleeping():
            tree = descendants(parent.pid)
            return tree if [p.info["name"] for p in tree] == ["sleep", "sleep"] else None

        tree = wait_until(both_sleeping, 10, "both sleeps to start")
        assert sorted(p.info["cmdline"][-1] for p in tree) == ["30", "31"]
        assert {p.info["ppid"] for p in tree} == {parent.pid}
        ended = tree[0].pid
        real_as_dict = psutil.Process.as_dict

        def as_dict(self, *args, **kwargs):
            if self.pid == ended:
                raise psutil.NoSuchProcess(self.pid)
            return real_as_dict(self, *args, **kwargs)

        monkeypatch.setattr(psutil.Process, "as_dict", as_dict)
        assert [p.pid for p in descendants(parent.pid)] == [tree[1].pid]
    finally:
        for child in psutil.Process(parent.pid).children(recursive=True):
            child.kill()
        parent.kill()
        parent.wait()
    assert descendants(parent.pid) == []


def test_experiment_with_replaces_one_line_of_a_shipped_experiment_and_refuses_a_line_it_lacks(tmp_path):
    copy = experiment_with(tmp_path, "maxthreads-quick", "max_window_bias = 0.02", "max_window_bias = 0.05")
    assert experiment.load(str(copy))["run"]["max_window_bias"] == 0.05
    assert experiment.load("maxthreads-quick")["run"]["max_window_bias"] == 0.02
    with pytest.raises(AssertionError, match="no single line 'max_window_bias = 0.5'"):
        experiment_with(tmp_path, "maxthreads-quick", "max_window_bias = 0.5", "max_window_bias = 0")
    two = experiment_with(
        tmp_path, "maxthreads-quick", "repetitions = 1", "repetitions = 2", ("relaunch_disturbed = true", "")
    )
    run = experiment.load(str(two))["run"]
    assert run["repetitions"] == 2 and run["relaunch_disturbed"] is False
