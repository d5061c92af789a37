"""The spawn guard: a test outside the live tier starts no process, unless it is marked `spawns` (runner/pyproject.toml
says what each marker means). Every test folder's conftest.py installs it by importing its three hooks:

    from spawn_guard import pytest_runtest_call, pytest_runtest_setup, pytest_runtest_teardown  # noqa: F401

(one conftest.py above all the folders would not be read: pytest looks for conftests no higher than the folder of
its configuration file, runner/; test_spawn_guard.py checks that every folder runner/test.sh runs has it). Hooks
rather than an autouse fixture: a test's setup includes the session fixtures it is the first to use (the analysed
run draws its charts with gnuplot), and a fixture sees none of what was set up before it.

While a test's setup, call or teardown runs, starting a process fails the test with a message naming the test
and the command, and nothing is started: subprocess (so asyncio's subprocesses, os.popen and multiprocessing's
spawn too), os.posix_spawn/posix_spawnp, os.fork/forkpty (multiprocessing's fork), os.system, os.exec*. A process
started by a thread of the test, or by code that swallows the failure, still fails the test when the phase ends."""

from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager

import pytest

EXEMPT = ("live", "spawns")
OS_CALLS = (
    "posix_spawn",
    "posix_spawnp",
    "fork",
    "forkpty",
    "system",
    "execv",
    "execve",
    "execvp",
    "execvpe",
    "execl",
    "execle",
    "execlp",
    "execlpe",
)


def message(nodeid: str, command) -> str:
    shown = command if isinstance(command, str) else " ".join(map(str, command)) if command else "?"
    return (
        f"{nodeid} started a process outside the live tier: {shown}\n"
        "mark the test `spawns` (or `live`), or keep it from starting one (runner/tests/spawn_guard.py)"
    )


@contextmanager
def refusing(nodeid: str):
    """While inside, every way of starting a process raises pytest's Failed naming `nodeid` and the command; yields
    the list of commands refused (for what a thread or a broad `except` hid)."""
    refused: list = []

    def refuse(command):
        refused.append(command)
        pytest.fail(message(nodeid, command), pytrace=False)

    def execute_child(self, args, *rest, **kwargs):  # every subprocess.Popen, however it was imported
        refuse(args)

    def os_call(name):
        def call(*args, **kwargs):
            refuse(f"os.{name}{args[:2]!r}" if args else f"os.{name}()")

        return call

    saved = {name: getattr(os, name) for name in OS_CALLS if hasattr(os, name)}
    saved_child = subprocess.Popen._execute_child
    subprocess.Popen._execute_child = execute_child
    for name in saved:
        setattr(os, name, os_call(name))
    try:
        yield refused
    finally:
        subprocess.Popen._execute_child = saved_child
        for name, original in saved.items():
            setattr(os, name, original)


def guarded(item):
    if any(item.get_closest_marker(name) for name in EXEMPT):
        return (yield)
    with refusing(item.nodeid) as refused:
        try:
            return (yield)
        finally:
            if refused:
                pytest.fail(message(item.nodeid, refused[0]), pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item):
    return (yield from guarded(item))
