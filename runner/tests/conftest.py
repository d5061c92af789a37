"""Shared pytest setup for the runner's tests: a place to report measured figures (the `live` marker is declared
in runner/pyproject.toml, with --strict-markers)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# a test outside the live tier starts no process unless marked `spawns` (spawn_guard.py)
from spawn_guard import pytest_runtest_call, pytest_runtest_setup, pytest_runtest_teardown  # noqa: F401

from crossbench.sampling import noise

MEASURED: list[str] = []

# Every run a test starts measures the machine's noise floor before its first cell; the tests check that its
# figures are recorded, not how quiet the machine is, so they take 0.2 s instead of 2 s for each of its two
# parts (about 3.6 s less for each of the suite's 30-odd runs; 0.2 s still times about 40 units of arithmetic
# on each core, enough for the spread the quick profile's test asks to be there).
os.environ.setdefault(noise.FLOOR_SECONDS_ENV, "0.2")


@pytest.fixture(scope="session")
def report_figure():
    """Tests that measure something call this; the figures are printed at the end of the run."""
    return MEASURED.append


@contextlib.contextmanager
def own_database_cache():
    """A database cache no other run uses, for $CROSSBENCH_DB_CACHE: a run's PostgreSQL starts in a data directory
    of its own, so a test beside it with a database of its own cannot hold its lock file. Under /var/tmp, where
    postgres's user (nobody, under root) can reach it; removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="crossbench-test-db-", dir="/var/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def database_cache():
    """A database cache of the test's own (own_database_cache)."""
    with own_database_cache() as path:
        yield path


@pytest.fixture(scope="module")
def module_database_cache():
    """One database cache for a module's tests, set as $CROSSBENCH_DB_CACHE while they run: its cluster is made
    (initdb) and loaded once for them, not once a test."""
    with own_database_cache() as path, pytest.MonkeyPatch.context() as patch:
        patch.setenv("CROSSBENCH_DB_CACHE", str(path))
        yield path


def pytest_terminal_summary(terminalreporter):
    if MEASURED:
        terminalreporter.section("measured figures")
        for line in MEASURED:
            terminalreporter.write_line(line)
