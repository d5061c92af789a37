"""Shared by the analysis tests (a module of its own: `from conftest import ...` would pick whichever
conftest.py of the three test folders was imported first)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ANALYSIS = Path(__file__).resolve().parents[1]

needs_gnuplot = pytest.mark.skipif(
    shutil.which("gnuplot") is None, reason="gnuplot not installed (apt-get install gnuplot-nox)"
)
