"""Shared pytest setup for the runner's tests: markers, and a place to report measured figures."""
from __future__ import annotations

import pytest

MEASURED: list[str] = []


def pytest_configure(config):
    config.addinivalue_line("markers", "live: runs real servers or real load generators on 127.0.0.1")


@pytest.fixture(scope="session")
def report_figure():
    """Tests that measure something call this; the figures are printed at the end of the run."""
    return MEASURED.append


def pytest_terminal_summary(terminalreporter):
    if MEASURED:
        terminalreporter.section("measured figures")
        for line in MEASURED:
            terminalreporter.write_line(line)
