"""A server the user started themselves and that is already running (`--target URL`): measured where it is, as
every cell measures a server (load, latency, held windows, intervals, knees, advice, capacity), but the suite
starts, sets, pins and stops nothing of it. Every launch of a point measures that same process, so launches are
not independent starts as they are for a server the suite starts afresh.

What needs the process is not read (threads, CPU, memory, its pool, GC, connections): the record leaves those
figures empty. Given the process (`--target-pid PID`), its process tree is sampled as any server's (CPU, RSS,
threads); a pool and GC stay unread, as no probe attaches to a process the suite did not start.

The URL is checked before anything runs (url_problem, host_problem: http or https, on this machine's loopback or
a host of --hosts), and something must listen there (preflight)."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from urllib.parse import urlsplit

from .. import builtin_servers
from ..oskit import HOST
from .base import ServerPlugin, SettingsError
from .external_server import ExternalServer
from .lifecycle import ServerSpec

SCHEMES = {"http": 80, "https": 443}
LOOPBACK_NAMES = ("localhost",)
CONNECT_TIMEOUT_S = 5.0  # the connection that checks something listens at the URL before anything runs
NOT_READ = "threads, CPU, memory, pool, GC and connections"  # what a server's process alone tells
NOT_READ_WITH_PID = "pool and GC"  # what its process tree, sampled by pid, still does not tell


def url_problem(url: object) -> str | None:
    """Why `url` cannot be a running server's URL (http or https, with a host and a port that parse), or None."""
    if not isinstance(url, str) or not url:
        return f"an http:// or https:// URL, not {url!r}"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading it is what checks it
    except ValueError as e:
        return f"a URL whose host and port parse, not {url!r} ({e})"
    if parts.scheme not in SCHEMES:
        return f"an http:// or https:// URL, not {url!r}"
    if not parts.hostname:
        return f"a URL with a host (http://127.0.0.1:8080/...), not {url!r}"
    return None


def is_loopback(host: str) -> bool:
    """This machine's own loopback: 127.0.0.0/8, ::1, or the name localhost."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_problem(url: str, addresses: tuple[str, ...] = ()) -> str | None:
    """Why the suite will not load the URL's host (neither loopback nor one of `addresses`, the addresses of
    --hosts), or None: load sent elsewhere lands on a machine whose other load the suite knows nothing of."""
    host = urlsplit(url).hostname or ""
    if is_loopback(host) or host in addresses:
        return None
    given = f" ({', '.join(addresses)})" if addresses else ""
    return (
        f"its host {host} is neither this machine's loopback (127.0.0.0/8, ::1, localhost) nor a host of --hosts{given}"
    )


def base_url(url: str) -> str:
    """scheme://host:port of the URL: what every request's path is appended to."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def own_path(url: str) -> str:
    """The request the URL itself names (its path and query), / when it names none."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname, parts.port or SCHEMES[parts.scheme]


def listening_problem(url: str) -> str | None:
    """Why nothing answers a connection at the URL's host and port (connection refused, a timeout), or None."""
    host, port = host_port(url)
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            return None
    except ConnectionRefusedError:
        return f"nothing is listening at {base_url(url)} (connection refused)"
    except OSError as e:
        return f"nothing answers at {base_url(url)} ({e.strerror or e})"


class ExternalPlugin(ServerPlugin):
    facts = builtin_servers.EXTERNAL
    summary = "a server you started yourself, already running (--target URL): measured, never started or stopped"
    endpoints = frozenset({"/hello"})  # a group of the suite's may ask it; --path names its own requests

    def validate_section(self, section: dict) -> None:
        super().validate_section(section)
        url = section.get("target")
        if url is not None and (problem := url_problem(url)):
            raise SettingsError(f"{self.name}: target must be {problem}")

    def process_count(self, settings: dict) -> int | None:
        """Unknown: the suite did not start it."""
        return None

    def describe(self, settings: dict) -> str:
        """Its series' name: --target-name, else the URL's host:port."""
        if settings["target_name"]:
            return settings["target_name"]
        return urlsplit(settings["target"]).netloc if settings["target"] else self.name

    def preflight(self, settings: dict) -> None:
        """A URL given, something listening there, and the process of --target-pid present."""
        url = settings["target"]
        if not url:
            raise SettingsError(f"{self.name}: no URL to measure: give --target URL (the server you started)")
        if problem := listening_problem(url):
            raise SettingsError(f"--target {url}: {problem}; start your server first, or give the URL it listens on")
        pid = settings["target_pid"]
        if pid is not None and not Path(f"/proc/{pid}").is_dir():
            raise SettingsError(f"--target-pid {pid}: no such process on this machine")

    def spec(self, settings, port, work_dir, cpus=(), cell_dir=None, db_url=None, address=HOST) -> ServerSpec:
        """What the records describe it by; nothing is run (its port and address are the URL's)."""
        host, own_port = host_port(settings["target"])
        return ServerSpec(
            self.name,
            own_port,
            [],
            work_dir / f"{self.name}.log",
            {"target": settings["target"], "target_pid": settings["target_pid"]},
            address=host,
        )

    def running(self, spec: ServerSpec, host, cell_dir: Path | None = None) -> ExternalServer:
        return ExternalServer(spec, host, base_url(spec.describe["target"]), spec.describe["target_pid"])


PLUGIN = ExternalPlugin()
