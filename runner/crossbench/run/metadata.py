"""What produced a run: machine, software versions, git revision. Recorded once per run."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import resource
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from crossbench import pyenvs, servers
from crossbench.hosts.facts import cpu_model
from crossbench.jdk import JdkError, default_jdk, installed_jdks
from crossbench.loadgen import ADAPTERS
from crossbench.record.record import SCHEMA_VERSION, now_iso
from crossbench.version import git_revision


def read_sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def machine() -> dict:
    import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

    return {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "kernel": platform.release(),
        "hostname": socket.gethostname(),
        "somaxconn": read_sysctl("net.core.somaxconn"),
        "tcp_tw_reuse": read_sysctl("net.ipv4.tcp_tw_reuse"),
        "ip_local_port_range": read_sysctl("net.ipv4.ip_local_port_range"),
        "open_files_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
    }


def versions() -> dict:
    found = {"python": sys.version.split()[0], "psutil": importlib.metadata.version("psutil")}
    for plugin in servers.PLUGINS.values():
        found.update(plugin.versions())
    try:
        found["jdk"] = default_jdk().version
    except JdkError:
        found["jdk"] = None
    found["jdks_installed"] = [f"{j.version} {j.home}" for j in installed_jdks()]
    for name, adapter in ADAPTERS.items():
        found[name] = adapter.version() if adapter.available() else None
    if shutil.which("gnuplot"):
        out = subprocess.run(["gnuplot", "--version"], capture_output=True, text=True, timeout=10).stdout
        found["gnuplot"] = out.strip()
    return found


def pythons(cells) -> dict:
    """The Python interpreters this machine has and those the run's Python servers run on (--python's, and the
    project's environment's for cells that name none)."""
    used = {}
    for cell in cells:
        if not isinstance(cell.plugin, servers.PythonServer):
            continue
        env = cell.plugin.python_env(cell.settings)
        where = (
            f"{env.interpreter} in {env.path}"
            if env
            else f"{platform.python_version()} ({os.path.realpath(sys.executable)}) in the project's environment"
        )
        used[where] = None
    return {"found": [str(i) for i in pyenvs.installed()], "used": list(used)}


def collect(run_id: str, config: dict, argv: list[str], cells=()) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "experiment": config["name"],
        "started_at": now_iso(),
        "ended_at": None,
        "machine": machine(),
        "versions": versions(),
        "pythons": pythons(cells),
        "git_revision": git_revision(),
        "command": argv,
        "config": config,
    }
