"""A test outside the live tier starts no process unless marked `spawns` (runner/tests/spawn_guard.py, found
through pythonpath in runner/pyproject.toml)."""

from spawn_guard import pytest_runtest_call, pytest_runtest_setup, pytest_runtest_teardown  # noqa: F401
