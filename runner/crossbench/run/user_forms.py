"""The short forms for a user's own server on run_all.sh's command line: `--war PATH` (their WAR on the suite's
Tomcat) and `--app MODULE:CALLABLE --app-dir DIR` (their Python app under the suite's Python servers). Each
measures the requests the user names (--path: it serves none of the suite's) and, without --experiment, runs
its own sweep (your-war, your-app). An app's kind is read before anything is planned, by importing it once in
its environment (built here on first use), and decides the servers of the run (servers/python_app.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from crossbench import pyvenv, servers
from crossbench.refusal import Refusal
from crossbench.servers import python_app, python_runtime

WAR_EXPERIMENT = "your-war"  # what --war runs unless --experiment names another
APP_EXPERIMENT = "your-app"  # what --app runs unless --experiment names another
APP_OPTIONS = {"app_dir": "--app-dir", "requirements": "--requirements", "app_kind": "--app-kind"}


def experiment_given(given: list[str]) -> bool:
    return any(word == "--experiment" or word.startswith("--experiment=") for word in given)


def war_experiment(p: argparse.ArgumentParser, args, given: list[str]) -> None:
    """--war measures the user's WAR on the requests they name (--path): it serves none of the suite's. Without
    --experiment it runs the your-war sweep."""
    if not getattr(args, "war", None):
        return
    args.war = str(Path(args.war).resolve())  # as the run records it: a resume from elsewhere finds it
    if not args.paths and not args.workload_file:
        p.error(
            "--war: name the requests to measure with --path (e.g. --path /app/hello) or --workload FILE: your WAR "
            "serves none of "
            "the suite's endpoints"
        )
    if not experiment_given(given):
        args.experiment = WAR_EXPERIMENT


def app_experiment(p: argparse.ArgumentParser, args, given: list[str]) -> None:
    """--app: its options checked, its kind read (or --app-kind's), and the servers and gunicorn workers that
    serve that kind set where the command line does not name them."""
    if not getattr(args, "app", None):
        alone = [flag for dest, flag in APP_OPTIONS.items() if getattr(args, dest, None) is not None]
        if alone:
            p.error(f"{alone[0]} goes with --app MODULE:CALLABLE")
        return
    if not args.paths and not args.workload_file:
        p.error(
            "--app: name the requests to measure with --path (e.g. --path /orders) or --workload FILE: your app "
            "serves none of the suite's endpoints"
        )
    for dest in ("app_dir", "requirements"):  # as the run records them: a resume from elsewhere finds them
        if getattr(args, dest, None):
            setattr(args, dest, str(Path(getattr(args, dest)).resolve()))
    try:
        python_app.check(vars(args))
        kind, factory = app_kind(args)
    except Refusal as e:
        p.exit(e.exit_code, f"run_all: {e}\n")
    if not serving(kind):
        p.error(f"--app-kind {kind}: one of {', '.join(sorted(kinds()))}")
    args.app_kind = kind
    if factory and not python_app.factory(args.app):
        args.app += "()"
    args.servers = chosen(p, args.servers, serving(kind), "--servers", kind)
    for name in args.servers:
        for knob, values in servers.get(name).app_settings(kind).items():
            if getattr(args, knob, None) is None:  # the command line's own are checked by the plug-in's preflight
                setattr(args, knob, values)
    if not experiment_given(given):
        args.experiment = APP_EXPERIMENT


def app_kind(args) -> tuple[str, bool]:
    """--app-kind's, else what importing the app in its environment (on the first --python asked) says; a dry run
    builds nothing, so without the environment it plans a WSGI app and says so."""
    settings = {**vars(args), "python": args.python[0] if args.python else None}
    if args.app_kind:
        return args.app_kind, False
    try:
        env = python_runtime.environment(settings)
    except python_runtime.CannotRunHere as e:
        raise python_app.AppRefused(str(e)) from None
    if not env.ready():
        if args.dry_run:
            print(
                f"run_all: --app {args.app}: its environment is not built (a dry run builds none), so its kind is "
                f"not read: planned as {python_app.WSGI}; --app-kind names another",
                file=sys.stderr,
            )
            return python_app.WSGI, False
        print(
            f"run_all: building --app's environment once into the tools cache ({env.path}: its requirements and "
            "the suite's pinned servers, from PyPI)",
            file=sys.stderr,
            flush=True,
        )
        try:
            env.build()
        except pyvenv.EnvBuildFailed as e:
            raise python_app.AppRefused(f"--app {args.app}: {e}") from None
    return python_app.kind(settings, env.python)


def kinds() -> set[str]:
    """Every kind of app a server serves."""
    return {kind for plugin in servers.PLUGINS.values() for kind in getattr(plugin, "app_kinds", ())}


def serving(kind: str) -> tuple[str, ...]:
    """The servers that serve an app of this kind."""
    return tuple(name for name, plugin in servers.PLUGINS.items() if kind in getattr(plugin, "app_kinds", ()))


def chosen(p: argparse.ArgumentParser, asked: list[str] | None, serving: tuple[str, ...], flag: str, kind: str):
    """What the command line asked among what serves the app's kind (all of those when it asked nothing)."""
    if asked is None:
        return list(serving)
    wrong = [one for one in asked if one not in serving]
    if wrong:
        p.error(f"{flag} {wrong[0]}: a {kind} app is served by {', '.join(serving)}")
    return asked
