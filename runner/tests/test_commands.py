"""Every script a user types answers --help and --version with exit status 0, and every option of the Python
command lines says what it does; on a fresh clone with no network they answer before anything is set up."""

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crossbench import paths

SCRIPTS = [
    "runner/run_all.sh",
    "runner/serve.sh",
    "runner/db.sh",
    "runner/hosts.sh",
    "runner/install-openloop.sh",
    "runner/test.sh",
    "analysis/analyze.sh",
    "analysis/compare.sh",
    "analysis/advise.sh",
    "analysis/tfb_reference.sh",
]
DRY_RUNS = ["runner/run_all.sh", "runner/install-openloop.sh"]  # the scripts that have a --dry-run


def test_every_user_script_is_listed_here():
    """A new script joins SCRIPTS (and so these checks); the sourced helpers are not commands."""
    sourced = {
        "runner/python-env.sh",
        "runner/prerequisites.sh",
        "runner/script-options.sh",
        "analysis/analysis-cli.sh",
    }
    found = {str(p.relative_to(paths.REPO)) for d in ("runner", "analysis") for p in (paths.REPO / d).glob("*.sh")}
    assert found - sourced == set(SCRIPTS)


@pytest.mark.spawns
@pytest.mark.parametrize("script", SCRIPTS)
def test_a_script_answers_help_and_version_with_status_0(script):
    helped = subprocess.run([str(paths.REPO / script), "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and len(helped.stdout.splitlines()) >= 3, (helped.stdout, helped.stderr[-500:])
    shown = subprocess.run([str(paths.REPO / script), "--version"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and shown.stdout.startswith("crossbench "), (shown.stdout, shown.stderr[-500:])
    assert "(git " in shown.stdout


def _silent_options(parser) -> list:
    """Options of a parser and its sub-commands that have no help text."""
    import argparse

    silent = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                silent += _silent_options(sub)
        elif action.help is None and action.dest != "help":
            silent.append(f"{parser.prog} {'/'.join(action.option_strings) or action.dest}")
    return silent


def test_every_option_of_every_python_command_line_has_help():
    from crossbench.run import run_args, serve
    from crossbench_analysis import cli

    parsers = {
        "run_all": run_args.build_parser(),
        "analysis": cli.build_parser(),
        "serve tomcat": serve.build_parser(["tomcat"]),
    }
    silent = [name for parser in parsers.values() for name in _silent_options(parser)]
    assert not silent, silent


def offline_env(tmp_path: Path) -> tuple[dict, Path]:
    """The environment of a machine with no network and no set-up: no virtual environment on PATH, pip told to use
    no index and proxies that lead nowhere, and an apt-get that writes down that it was called (and fails). Returns
    the environment and the file apt-get would write."""
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    called = tmp_path / "apt-get-called"
    (stubs / "apt-get").write_text(f'#!/bin/sh\necho "$*" >> {called}\nexit 1\n')
    (stubs / "apt-get").chmod(0o755)
    venv_bin = str(Path(sys.prefix) / "bin") if sys.prefix != sys.base_prefix else None
    path = [str(stubs), *(d for d in os.environ["PATH"].split(os.pathsep) if d and d != venv_bin)]
    env = {
        k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "CROSSBENCH_VENV")
    }
    env.update(
        PATH=os.pathsep.join(path),
        PIP_NO_INDEX="1",
        http_proxy="http://127.0.0.1:9",
        https_proxy="http://127.0.0.1:9",
        CROSSBENCH_TOOLS=str(tmp_path / "tools"),
    )
    return env, called


def timed(command: list[str], cwd: Path, env: dict) -> tuple[subprocess.CompletedProcess, float, float]:
    """The command's result, its wall time and the CPU time (user and system) of it and everything it started."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


@pytest.mark.spawns  # git clone, every script
def test_help_version_and_dry_run_on_a_fresh_clone_create_nothing_and_install_nothing(tmp_path):
    """A fresh clone of the committed tree (no .venv, no build), offline: every script's --help and --version, and
    --dry-run where it has one, exit 0 in under 2 s of CPU (the script and all it started; the wall time is bounded
    loosely, as the machine is shared) and leave the clone as it was: no environment made, no bytecode written,
    no apt-get called (the tests may run as root, where the run itself installs Debian packages)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(paths.REPO), str(clone)], check=True, timeout=120)
    env, apt_called = offline_env(tmp_path)
    slow, failed = [], []
    for script in SCRIPTS:
        for option in ("--help", "--version", *(["--dry-run"] if script in DRY_RUNS else [])):
            done, wall, cpu = timed([str(clone / script), option], clone, env)
            if done.returncode != 0:
                failed.append(f"{script} {option}: exit status {done.returncode}: {done.stderr[-400:]}")
            if cpu >= 2.0 or wall >= 10.0:
                slow.append(f"{script} {option}: {cpu:.2f} s of CPU, {wall:.2f} s")
            if script == "runner/run_all.sh" and option == "--dry-run":
                assert len(done.stdout.splitlines()) > 10, done.stdout  # the plan's cells
                assert "missing: the Python environment" in done.stderr and "mvn package" in done.stderr, done.stderr
    assert not failed, "\n".join(failed)
    assert not slow, "\n".join(slow)
    left = subprocess.run(
        ["git", "status", "--porcelain", "--ignored"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout
    assert left == "", f"created in the clone:\n{left}"
    assert not apt_called.exists(), apt_called.read_text()
    assert not (tmp_path / "tools").exists()  # the generators' cache: not made either
