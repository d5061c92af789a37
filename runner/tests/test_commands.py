"""Every script a user types answers --help and --version with exit status 0, and every option of the Python
command lines says what it does."""
import subprocess

import pytest

from crossbench import paths

SCRIPTS = ["runner/run_all.sh", "runner/serve.sh", "runner/db.sh", "runner/hosts.sh", "runner/install-openloop.sh",
           "runner/test.sh", "analysis/analyze.sh", "analysis/compare.sh", "analysis/advise.sh",
           "analysis/tfb_reference.sh"]


def test_every_user_script_is_listed_here():
    """A new script joins SCRIPTS (and so these checks); the sourced helpers are not commands."""
    sourced = {"runner/python-env.sh", "runner/prerequisites.sh", "runner/script-options.sh",
               "analysis/analysis-cli.sh"}
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
    parsers = {"run_all": run_args.build_parser(), "analysis": cli.build_parser(),
               "serve tomcat": serve.build_parser(["tomcat"])}
    silent = [name for parser in parsers.values() for name in _silent_options(parser)]
    assert not silent, silent
