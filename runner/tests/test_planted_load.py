"""The planted foreign load (crossbench/sampling/planted_load.py): a loop of the asked duty beside a command, what
it planted on record, the command's exit status passed on, the loop gone after, bad options refused."""

import json
import os
import subprocess
import sys

import psutil
import pytest

from crossbench.sampling import planted_load

pytestmark = pytest.mark.spawns


def test_the_loop_runs_beside_the_command_and_is_gone_after_it(tmp_path):
    core = max(os.sched_getaffinity(0))
    record = tmp_path / "planted.json"
    marker = tmp_path / "ran"
    command = [sys.executable, "-c", f"import time, pathlib; time.sleep(1.5); pathlib.Path({str(marker)!r}).touch()"]
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    status = planted_load.main(["--duty", "40", "--core", str(core), "--record", str(record), "--", *command])
    assert status == 0 and marker.exists()
    found = json.loads(record.read_text())
    assert (found["duty_percent"], found["core"], found["command"]) == (40.0, core, command)
    assert found["seconds"] >= 1.5
    assert 10 < found["reached_percent"] <= 50  # it ran, and at about its duty (a busy core can hold it under)
    assert {p.pid for p in psutil.Process().children(recursive=True)} <= before  # the loop was stopped


def test_the_commands_exit_status_is_passed_on(tmp_path):
    core = max(os.sched_getaffinity(0))
    status = planted_load.main(["--duty", "5", "--core", str(core), "--", sys.executable, "-c", "raise SystemExit(3)"])
    assert status == 3


@pytest.mark.parametrize(
    "options, says",
    [
        (["--duty", "0", "--core", "0", "--", "true"], "above 0 and at most 100"),
        (["--duty", "150", "--core", "0", "--", "true"], "above 0 and at most 100"),
        (["--duty", "10", "--core", "4096", "--", "true"], "not one of this process's cores"),
        (["--duty", "10", "--core", "0"], "give the command"),
    ],
)
def test_bad_options_are_refused_in_one_line_before_anything_starts(options, says):
    done = subprocess.run(
        [sys.executable, "-m", "crossbench.sampling.planted_load", *options], capture_output=True, text=True
    )
    assert done.returncode == 2 and says in done.stderr
