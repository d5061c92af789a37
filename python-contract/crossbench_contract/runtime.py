"""The interpreter as a server process sees it once its modules are imported: its version, whether it is a
free-threaded build, and whether the GIL is on (`sys._is_gil_enabled()` where it exists: an extension module without
free-threading support turns the GIL back on when imported, so only the server's own process can say). Each process
writes it once, at start-up, to <pid>.json in the directory CROSSBENCH_PYTHON_RUNTIME names (the runner's cell
folder); without it nothing is written."""

from __future__ import annotations

import json
import os
import platform
import sys
import sysconfig
from pathlib import Path

ENV = "CROSSBENCH_PYTHON_RUNTIME"


def facts() -> dict:
    gil = getattr(sys, "_is_gil_enabled", None)
    return {
        "pid": os.getpid(),
        "version": platform.python_version(),
        "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        "gil_enabled": gil() if gil else True,
    }


def report() -> None:
    """Writes this process's facts where CROSSBENCH_PYTHON_RUNTIME says; a folder it cannot write is left alone
    (the runner then records that the server said nothing)."""
    where = os.environ.get(ENV)
    if not where:
        return
    try:
        Path(where).mkdir(parents=True, exist_ok=True)
        (Path(where) / f"{os.getpid()}.json").write_text(json.dumps(facts()) + "\n")
    except OSError:
        pass
