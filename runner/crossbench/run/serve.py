"""`./runner/serve.sh SERVER [options]`: one server alone, in the foreground, until Ctrl-C.

Every server plug-in's knobs are options here (`./runner/serve.sh SERVER --help` lists them for that server).
`--server-file PATH` adds the servers a file declares as data (crossbench/servers/declared.py), knobs and all.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

from crossbench import oskit, servers, version
from crossbench.hosts.local import HERE
from crossbench.options import refuse_repeated
from crossbench.refusal import Refusal
from crossbench.servers import Knob, RunningServer, ServerFailed

from . import server_files


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def positive_list(text: str) -> list[int]:
    return [positive(part) for part in text.split(",") if part.strip()]


def cpu_list(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part != "")
    except ValueError:
        raise argparse.ArgumentTypeError(f"--cpus takes core numbers such as 0 or 0,1, not {text!r}") from None


def choice_list(choices: tuple[str, ...]):
    def parse(text: str) -> list[str]:
        values = [v.strip() for v in text.split(",") if v.strip()]
        bad = [v for v in values if v not in choices]
        if bad or not values:
            raise argparse.ArgumentTypeError(f"choose among {', '.join(choices)} (comma-separated), not {text!r}")
        return values

    return parse


def text_list(value: str) -> list[str]:
    """'17,25' -> ['17', '25'] (a text knob swept from the command line)."""
    values = [v.strip() for v in value.split(",") if v.strip()]
    if not values:
        raise argparse.ArgumentTypeError("expected one value or several separated by commas")
    return values


def knob_argument(parser, knob: Knob, *, sweep: bool, help_prefix: str = "", default_note: str | None = None) -> None:
    """One option for a knob; with `sweep`, a sweep knob takes comma-separated values (one cell each). Its help
    ends with its default: `default_note`, else the knob's own unless its help already says it."""
    many = sweep and knob.sweep
    if default_note is None:
        said = "default" in knob.help or knob.default in (None, (), "")
        default_note = "" if said else f"(default: {knob.default})"
    kwargs = {"dest": knob.name, "default": None, "help": f"{help_prefix}{knob.help} {default_note}".rstrip()}
    if knob.kind == "bool":
        parser.add_argument(knob.flag, action=argparse.BooleanOptionalAction, **kwargs)
        return
    if knob.kind == "int":
        kwargs["type"] = positive_list if many else positive
    elif knob.kind == "choice":
        kwargs.update({"type": choice_list(knob.choices)} if many else {"choices": knob.choices})
    elif knob.kind == "list":
        kwargs["type"] = shlex.split
    elif knob.kind == "text" and many:
        kwargs["type"] = text_list
    parser.add_argument(knob.flag, **kwargs)


def build_parser(argv) -> argparse.ArgumentParser:
    """serve.sh's options: the chosen server's knobs (the first word of argv that is no option), and only its own."""
    parser = argparse.ArgumentParser(prog="serve.sh", description=__doc__)
    parser.add_argument("server", help=f"one of {', '.join(servers.PLUGINS)}")
    parser.add_argument(
        server_files.OPTION,
        action="append",
        default=[],
        metavar="PATH",
        dest="server_files",
        help="a TOML file declaring servers as data ([server.NAME]; examples/tornado-declared.toml)",
    )
    version.add_option(parser)
    name = next(
        (a for a in server_files.split(argv if argv is not None else sys.argv[1:])[1] if not a.startswith("-")), None
    )
    if name in servers.PLUGINS:  # the chosen server's own knobs, and only its own
        plugin = servers.PLUGINS[name]
        group = parser.add_argument_group(name)
        for knob in plugin.knobs:
            knob_argument(group, knob, sweep=False)
    own_ports = ", ".join(f"{plugin.name} {plugin.default_port}" for plugin in servers.PLUGINS.values())
    parser.add_argument("--port", type=positive, help=f"default: the server's own ({own_ports})")
    parser.add_argument("--cpus", type=cpu_list, default=(), help="pin the server to these cores (taskset)")
    parser.add_argument(
        "--db-url",
        help="serve the database endpoints from this PostgreSQL "
        "(postgresql://USER@HOST:PORT/DB, holding the tables world and kv)",
    )
    return parser


def parse_args(argv):
    parser = build_parser(argv)
    refuse_repeated(parser, sys.argv[1:] if argv is None else list(argv), allowed={"server_files"})
    args = parser.parse_args(argv)
    try:
        plugin = servers.get(args.server)
    except servers.UnknownServer as e:
        parser.error(str(e))
    if not plugin.starts:
        parser.error(f"{args.server}: {plugin.summary}; serve.sh starts servers, there is none to start")
    args.plugin = plugin
    args.port = args.port or plugin.default_port
    given = {k.name: getattr(args, k.name) for k in plugin.knobs if getattr(args, k.name, None) is not None}
    # Per-cell artefacts (a JFR recording) go to the current directory, and only when asked for by name.
    args.artefacts_dir = Path.cwd() if given.get("jfr") else None
    try:
        args.settings = plugin.settings(given)
    except servers.SettingsError as e:
        parser.error(str(e))
    return args


def wait_for_stop(server: RunningServer) -> str:
    """Blocks until SIGINT/SIGTERM or the server's own exit; returns which."""
    try:
        while server.alive():
            time.sleep(0.5)
        return "died"
    except KeyboardInterrupt:
        return "signal"


def build_python_env(plugin, settings: dict) -> None:
    """A Python server on an interpreter of its own (--python) needs its environment, built once into the tools
    cache the first time it is asked for; a failed build is refused with its reason."""
    env = plugin.python_env(settings)
    if env is not None and not env.ready():
        print(
            f"serve: building the environment of Python {env.interpreter} once into the tools cache ({env.path}: "
            "a minute or two, from PyPI)",
            file=sys.stderr,
            flush=True,
        )
        env.build()


def main(argv=None) -> int:
    oskit.interrupt_on_signals()
    try:
        server_files.declare(sys.argv[1:] if argv is None else list(argv))
    except Refusal as e:
        print(f"serve: {e}", file=sys.stderr)
        return e.exit_code
    args = parse_args(argv)
    work_dir = Path(tempfile.mkdtemp(prefix=f"crossbench-{args.server}-"))
    try:
        build_python_env(args.plugin, args.settings)
        args.plugin.preflight(args.settings)
        server = RunningServer(
            args.plugin.spec(args.settings, args.port, work_dir, args.cpus, args.artefacts_dir, args.db_url), HERE
        )
        server.start()
    except Refusal as e:  # a missing build or tool, a port in use, a server that cannot run here, bad settings
        print(f"serve: {e}", file=sys.stderr)
        return e.exit_code
    ready = False
    try:
        server.wait_ready()
        ready = True  # from here a signal is the way to stop it: a clean stop, wherever it lands
        settings = ", ".join(f"{k}={v}" for k, v in server.spec.describe.items() if k != "catalina_base")
        print(f"{args.server} ready at {server.url}/ (pid {server.pid}; {settings})", flush=True)
        print(f"log: {server.spec.log_path} (removed after a clean stop); Ctrl-C stops it", flush=True)
        if wait_for_stop(server) == "died":
            print(
                f"serve: {args.server} exited with status {server.process.returncode}:\n{server.log_tail()}",
                file=sys.stderr,
            )
            return 1
    except ServerFailed as e:
        print(f"serve: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if not ready:
            return 130
    finally:
        server.stop()
        print(f"{args.server} stopped", file=sys.stderr)
    shutil.rmtree(work_dir, ignore_errors=True)  # a clean stop leaves nothing behind; a failure keeps the log
    return 0


if __name__ == "__main__":
    sys.exit(main())
