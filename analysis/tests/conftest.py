"""Fixtures for the analysis tests: SYNTHETIC run directories (see synthetic_run.py; nothing here is a
measurement) and their analysis, done once per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

# a test outside the live tier starts no process unless marked `spawns` (runner/tests/spawn_guard.py)
from spawn_guard import pytest_runtest_call, pytest_runtest_setup, pytest_runtest_teardown  # noqa: F401

# synthetic_run lies beside this file (pytest puts a test folder on the path); testkit, the helpers every test
# folder shares, is runner/tests (pythonpath in runner/pyproject.toml); crossbench_analysis is installed.
from synthetic_run import make_run


@pytest.fixture(scope="session")
def synthetic_run(tmp_path_factory) -> Path:
    """Both servers, static and delay groups (plus Tomcat's async group), one flagged cell, one failed cell
    with null figures, samples.csv series. Not analysed: tests that change it get their own copy."""
    return make_run(tmp_path_factory.mktemp("run") / "20261122-0130-seed002-synthetic")


@pytest.fixture(scope="session")
def analyzed_run(tmp_path_factory):
    """A SYNTHETIC run analysed once: (run_dir, AnalysisResult)."""
    if shutil.which("gnuplot") is None:
        pytest.skip("gnuplot not installed (apt-get install gnuplot-nox)")
    from crossbench_analysis import analyze

    run_dir = make_run(tmp_path_factory.mktemp("analyzed") / "20261122-0130-seed002-synthetic")
    return run_dir, analyze(run_dir)
