"""`./runner/serve.sh tomcat|tornado [options]`: one server alone, in the foreground, until Ctrl-C."""
from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from . import paths
from .jdk import JdkError
from .servers import PortInUse, RunningServer, ServerFailed, TornadoConfig, tomcat_spec, tornado_spec
from .tomcat import DEFAULT_ACCEPT_COUNT, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_THREADS, EXECUTORS, TomcatConfig

DEFAULT_PORTS = {"tomcat": 8080, "tornado": 8888}


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def cpu_list(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part != "")
    except ValueError:
        raise argparse.ArgumentTypeError(f"--cpus takes core numbers such as 0 or 0,1, not {text!r}") from None


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="serve.sh", description=__doc__)
    parser.add_argument("server", choices=sorted(DEFAULT_PORTS))
    parser.add_argument("--port", type=positive, help="default: tomcat 8080, tornado 8888")
    parser.add_argument("--cpus", type=cpu_list, default=(), help="pin the server to these cores (taskset)")
    tomcat = parser.add_argument_group("tomcat")
    tomcat.add_argument("--max-threads", type=positive, default=DEFAULT_MAX_THREADS)
    tomcat.add_argument("--accept-count", type=positive, default=DEFAULT_ACCEPT_COUNT)
    tomcat.add_argument("--max-connections", type=positive, default=DEFAULT_MAX_CONNECTIONS)
    tomcat.add_argument("--executor", choices=EXECUTORS, default="platform")
    tomcat.add_argument("--jdk", help="JDK home, feature version (17, 25) or 'newest'; default: java on PATH, "
                                      "or the newest JDK 21+ for virtual threads")
    tomcat.add_argument("--heap", help="heap size, e.g. 1g (default: the JVM's)")
    tomcat.add_argument("--jfr", type=Path, help="write a JFR recording to this file when stopped")
    tornado = parser.add_argument_group("tornado")
    tornado.add_argument("--processes", type=positive, default=1)
    tornado.add_argument("--backlog", type=positive, default=128)
    args = parser.parse_args(argv)
    args.port = args.port or DEFAULT_PORTS[args.server]
    return args


def build_spec(args, work_dir: Path):
    if args.server == "tomcat":
        config = TomcatConfig(port=args.port, max_threads=args.max_threads, accept_count=args.accept_count,
                              max_connections=args.max_connections, executor=args.executor, jdk=args.jdk,
                              heap=args.heap, jfr_file=args.jfr.resolve() if args.jfr else None)
        return tomcat_spec(config, work_dir, args.cpus)
    return tornado_spec(TornadoConfig(args.port, args.processes, args.backlog), work_dir, args.cpus)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def interrupt_on_signals() -> None:
    """The first SIGINT, SIGTERM or SIGHUP raises KeyboardInterrupt, so `finally` stops the server; later
    ones are ignored, so that a second Ctrl-C cannot cut the clean-up short and leave an orphan."""
    def handler(signum, frame):
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        raise KeyboardInterrupt(f"signal {signum}")
    for sig in STOP_SIGNALS:
        signal.signal(sig, handler)


def wait_for_stop(server: RunningServer) -> str:
    """Blocks until SIGINT/SIGTERM or the server's own exit; returns which."""
    try:
        while server.alive():
            time.sleep(0.5)
        return "died"
    except KeyboardInterrupt:
        return "signal"


def main(argv=None) -> int:
    interrupt_on_signals()
    args = parse_args(argv)
    work_dir = Path(tempfile.mkdtemp(prefix=f"crossbench-{args.server}-"))
    try:
        server = RunningServer(build_spec(args, work_dir))
        server.start()
    except (paths.BuildMissing, PortInUse, JdkError, ValueError) as e:
        print(f"serve: {e}", file=sys.stderr)
        return 2
    try:
        server.wait_ready()
        settings = ", ".join(f"{k}={v}" for k, v in server.spec.describe.items() if k != "catalina_base")
        print(f"{args.server} ready at {server.url}/ (pid {server.pid}; {settings})", flush=True)
        print(f"log: {server.spec.log_path} (removed after a clean stop); Ctrl-C stops it", flush=True)
        if wait_for_stop(server) == "died":
            print(f"serve: {args.server} exited with status {server.process.returncode}:\n{server.log_tail()}",
                  file=sys.stderr)
            return 1
        server.stop()
        shutil.rmtree(work_dir, ignore_errors=True)   # a clean stop leaves nothing behind; a failure keeps the log
        return 0
    except ServerFailed as e:
        print(f"serve: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        server.stop()
        print(f"{args.server} stopped", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
