"""Helpers every test folder shares (runner, the apps', analysis): one way to wait for something, one way to read
a run's records, one way to read a process tree, one way to kill a test's process group. A module of its own, not a conftest.py: `from conftest
import ...` would pick whichever conftest.py of the test folders was imported first."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil

from crossbench import oskit, paths
from crossbench.cell import fields
from crossbench.record import record

POLL_S = 0.05


def wait_until(predicate, timeout_s: float, what, step_s: float = POLL_S):
    """Polls `predicate` until it returns something true and returns that; fails the test naming `what` (a text,
    or a function giving one, called then: the state at the deadline) when `timeout_s` pass first. A wait for
    something is always this, never a fixed sleep: a busy machine makes a fixed sleep too short."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what() if callable(what) else what}")
        time.sleep(step_s)


def options(base: list[str], *extra: str) -> list[str]:
    """A command line's options with `extra` overriding `base` (run_all refuses an option given twice with
    different values, as a user's command line): an option of base that extra gives again is dropped, with its
    value. Both are flat lists; an option's value is the next word unless that starts with --."""
    given = {word.split("=", 1)[0] for word in extra if word.startswith("--")}
    kept, skip = [], False
    for i, word in enumerate(base):
        if skip:
            skip = False
            continue
        if word.startswith("--") and word.split("=", 1)[0] in given:
            skip = "=" not in word and i + 1 < len(base) and not base[i + 1].startswith("--")
            continue
        kept.append(word)
    return [*kept, *extra]


def records(run_dir: Path) -> list[dict]:
    """A run directory's records in the order they were written; none while it has no cells.jsonl yet. Records
    of the current schema are checked against the contract on the way (assert_records_match_contract): every
    live run a test reads is also a test of the contract."""
    path = Path(run_dir) / "cells.jsonl"
    found = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    assert_records_match_contract(found)
    return found


def assert_records_match_contract(found: list[dict]) -> None:
    """Fails naming each field and cell where a record of the current schema lacks a declared field or carries
    an undeclared one (crossbench.cell.fields; older schemas, as the analysis tests' fixtures, are read through
    record.upgrade and not held to it)."""
    wrong = [
        problem for r in found if r.get("schema_version") == record.SCHEMA_VERSION for problem in fields.problems(r)
    ]
    assert not wrong, "records break the contract (crossbench/record/record.py):\n" + "\n".join(wrong)


def records_by_id(run_dir: Path) -> dict[str, dict]:
    """The records by cell id."""
    return {r["cell_id"]: r for r in records(run_dir)}


def measure_samples(run_or_cell_dir: Path) -> int:
    """How many samples the run's sampler has taken in measured windows so far (rows of phase `measure` in the
    samples.csv of the cell directory given, or of every cell of the run directory given): the run's own account
    of where it is, for a test that must act inside a window."""
    directory = Path(run_or_cell_dir)
    files = (
        [directory / "samples.csv"] if (directory / "samples.csv").exists() else directory.glob("cells/*/samples.csv")
    )
    return sum(f.read_text().count(",measure,") for f in files)


def descendants(pid: int) -> list[psutil.Process]:
    """The processes under `pid` now, each with `.info` holding its name, command line and parent's pid. One that
    ends while it is read is left out: the runner starts short-lived commands all the time, and reading one that
    just ended raised NoSuchProcess inside a wait (a CI failure here, in the first second of a run)."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    alive = []
    for child in children:
        try:
            child.info = child.as_dict(["name", "cmdline", "ppid"])
        except psutil.NoSuchProcess:
            continue
        alive.append(child)
    return alive


def marked_processes(variable: str, value: str) -> list[psutil.Process]:
    """The live processes whose environment holds variable=value: every process a run started with that mark
    inherits it, so the ones left behind after the run are found however they were started."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get(variable) == value:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def marked_names(variable: str, value: str) -> set[str]:
    """The names of the live processes whose environment holds variable=value (marked_processes): what a run left
    running, said in a failure message."""
    found = set()
    for proc in marked_processes(variable, value):
        try:
            found.add(proc.name())
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def run_all_marked(variable: str, value: str, *args: str, timeout_s: float) -> subprocess.CompletedProcess:
    """./runner/run_all.sh ARGS to its end with variable=value in its environment (marked_processes finds what
    it leaves), no input, its output captured."""
    return subprocess.run(
        [str(paths.RUNNER / "run_all.sh"), *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, variable: value},
        stdin=subprocess.DEVNULL,
    )


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL a test's child started with start_new_session=True, its whole group, and reap it."""
    if proc.poll() is None:
        oskit.signal_unreaped_group(proc, signal.SIGKILL)
    proc.wait()


def experiment_with(tmp_path: Path, name: str, line: str, replacement: str, *more: tuple[str, str]) -> Path:
    """A copy of the shipped experiment `name` with one whole line of its file replaced (and each of `more`'s
    lines by theirs), written into tmp_path: a live test's own lighter load of the same experiment. Fails when the
    file no longer has such a line."""
    lines = (paths.EXPERIMENTS / f"{name}.toml").read_text().splitlines(keepends=True)
    for old, new in ((line, replacement), *more):
        found = [i for i, text in enumerate(lines) if text.split("#")[0].strip() == old]
        assert len(found) == 1, f"{name}.toml has no single line {old!r}"
        lines[found[0]] = new + "\n"
    copy = tmp_path / f"{name}.toml"
    copy.write_text("".join(lines))
    return copy


def seed003_quick_holding(tmp_path: Path, hold_s: int) -> Path:
    """seed003-quick with each group's hold after the ramp (5 s, beside its 2 s read timeout) cut to hold_s, the
    ramp the RSS fit reads kept. Fails when the file no longer holds 5 s with 2 s timeouts in its two groups."""
    text = (paths.EXPERIMENTS / "seed003-quick.toml").read_text()
    assert text.count(" hold_s = 5, timeout_s = 2,") == 2, "seed003-quick.toml no longer holds 5 s with 2 s timeouts"
    copy = tmp_path / "seed003-quick.toml"
    copy.write_text(text.replace(" hold_s = 5,", f" hold_s = {hold_s},"))
    return copy


def alive(proc: psutil.Process) -> bool:
    """A process still running; a zombie counts as dead: it runs nothing and holds no namespace, and reaping it is
    its parent's job (an orphan's is init's, which may take seconds in a container)."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def launch_record(cell_id, rps, p99, status="ok", flags=(), delay_ms=0, kind="closed_loop"):
    """A launch's record as points.aggregate and precision read it: the point and repetition from the cell id
    (POINT-rN), the given throughput and p99 (p50 half of it), one Tomcat point at C=10."""
    return {
        "cell_id": cell_id,
        "point_id": cell_id.rsplit("-r", 1)[0],
        "repetition": int(cell_id.rsplit("-r", 1)[1]),
        "status": status,
        "flags": list(flags),
        "rps": rps,
        "delay_ms": delay_ms,
        "kind": kind,
        "latency_ms": {"p50": p99 / 2, "p99": p99},
        "server": "tomcat",
        "concurrency": 10,
        "efficiency_ratio": None,
        "threads_peak": 30,
    }
