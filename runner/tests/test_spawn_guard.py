"""The spawn guard (spawn_guard.py): outside the live tier a test starts no process unless marked `spawns`, and
./runner/test.sh --fast runs none of those. Every check here runs under the guard itself and starts nothing."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import threading
import tomllib
from subprocess import Popen  # imported by name, as a module may: the guard still sees it

import pytest
import spawn_guard
from spawn_guard import guarded, refusing

from crossbench import paths

NODE = "tests/test_x.py::test_y"
# os's own, taken at import (outside any test's phase): a call below that would really fork or replace pytest is
# made only once it is seen to be the guard's
ORIGINAL = {name: getattr(os, name) for name in ("fork", "execv")}


def refused_with(call, *command_words):
    """`call` is refused, the message naming the test and the command."""
    with pytest.raises(pytest.fail.Exception) as failed:
        call()
    text = str(failed.value)
    assert text.startswith(f"{NODE} started a process outside the live tier") and "`spawns`" in text, text
    assert all(word in text for word in command_words), (command_words, text)


def test_every_way_of_starting_a_process_is_refused_and_nothing_starts(tmp_path):
    made = tmp_path / "made"

    async def with_asyncio():
        await asyncio.create_subprocess_exec("touch", str(made))

    before = subprocess.Popen._execute_child, os.fork, os.system
    with refusing(NODE) as refused:
        refused_with(lambda: subprocess.run(["touch", str(made)]), "touch", str(made))
        refused_with(lambda: Popen(f"touch {made}", shell=True), "touch")
        refused_with(lambda: subprocess.check_output(["touch", str(made)]), "touch")
        refused_with(lambda: asyncio.run(with_asyncio()), "touch")
        refused_with(lambda: os.popen(f"touch {made}"), "touch")
        refused_with(lambda: os.system(f"touch {made}"), "os.system", "touch")
        assert all(getattr(os, name) is not original for name, original in ORIGINAL.items())
        refused_with(os.fork, "os.fork")
        refused_with(lambda: os.posix_spawn("/usr/bin/touch", ["touch", str(made)], {}), "os.posix_spawn", "touch")
        refused_with(lambda: os.posix_spawnp("touch", ["touch", str(made)], {}), "os.posix_spawnp")
        refused_with(lambda: os.execv("/usr/bin/touch", ["touch", str(made)]), "os.execv")
    assert len(refused) == 10 and not made.exists()
    assert (subprocess.Popen._execute_child, os.fork, os.system) == before  # put back as found


class Item:
    def __init__(self, *markers: str):
        self.nodeid, self.markers = NODE, markers

    def get_closest_marker(self, name):
        return pytest.mark.spawns if name in self.markers else None


def test_a_process_started_by_a_thread_or_behind_a_broad_except_still_fails_the_test():
    phase = guarded(Item())
    next(phase)  # the test's phase runs here

    def hides_it():
        try:
            subprocess.run(["true"])
        except BaseException:  # noqa: BLE001 - what a careless helper does
            pass

    thread = threading.Thread(target=hides_it)
    thread.start()
    thread.join()
    with pytest.raises(pytest.fail.Exception, match=f"{re.escape(NODE)} started a process .*: true"):
        phase.send(None)  # the phase ends


@pytest.mark.parametrize("marker", spawn_guard.EXEMPT)
def test_a_live_or_spawns_test_is_left_alone(marker):
    before = subprocess.Popen._execute_child
    phase = guarded(Item(marker))
    next(phase)
    assert subprocess.Popen._execute_child is before
    with pytest.raises(StopIteration):
        phase.send("result")


def test_a_clean_phase_passes_its_result_through():
    phase = guarded(Item())
    next(phase)
    with pytest.raises(StopIteration) as done:
        phase.send("result")
    assert done.value.value == "result"


def test_every_folder_the_suite_runs_installs_the_guard_and_the_fast_tier_leaves_spawns_out():
    """A conftest.py above the folders would not be read (pytest stops at runner/, its configuration's folder), so
    each folder's own installs the hooks: a new folder without them would run unguarded."""
    script = (paths.RUNNER / "test.sh").read_text()
    listed = re.search(r"^tests=\(([^)]*)\)", script, re.M)
    assert listed and '"${tests[@]}"' in script[script.index("run_pytest()") :], "test.sh lists its test folders once"
    folders = re.findall(r"\b([a-z-]+/tests)\b", listed.group(1))
    assert {"runner/tests", "analysis/tests", "tornado-app/tests", "gunicorn-app/tests", "uvicorn-app/tests"} <= set(
        folders
    ), folders
    hooks = {"pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown"}
    for folder in folders:
        conftest = paths.REPO / folder / "conftest.py"
        assert conftest.exists(), f"{folder} has no conftest.py installing the spawn guard"
        imported = re.search(r"^from spawn_guard import ([\w, ]+)", conftest.read_text(), re.M)
        assert imported and hooks <= {n.strip() for n in imported.group(1).split(",")}, folder
    assert 'run_pytest -m "not live and not spawns" "${tests[@]}"' in script
    declared = tomllib.loads((paths.RUNNER / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert {m.split(":")[0] for m in declared["markers"]} >= {"live", "spawns"}
    assert "--strict-markers" in declared["addopts"]
