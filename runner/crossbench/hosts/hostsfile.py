"""The hosts file (`--hosts FILE`, TOML): which machine plays which role. A role left out is this machine.

ssh_config = "ssh_config"            # optional: passed to ssh as -F, relative to the hosts file
[roles]
server = "root@10.77.0.2"            # user@host[:port]; user may be left to the SSH config
db = "root@10.77.0.3:22"
loadgen = ["root@10.77.0.4", "root@10.77.0.5"]
[project_dir]                        # optional: where the project is checked out on a host
"root@10.77.0.2" = "/srv/crossbench" # default: the same path as on this machine
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from crossbench.refusal import Refusal

from .. import paths

SINGLE_ROLES = ("server", "db", "proxy")
ROLES = (*SINGLE_ROLES, "loadgen")
TOP_LEVEL_KEYS = ("ssh_config", "roles", "project_dir")
DEFAULT_PORT = 22
# user@host, user@[v6 address], each with an optional :port; the user may be omitted
DESTINATION = re.compile(
    r"^(?:(?P<user>[^@\s:\[\]]+)@)?(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^@\s:\[\]/]+))"
    r"(?::(?P<port>\d+))?$"
)


class HostsError(Refusal, ValueError):
    """The hosts file is wrong, or a host cannot serve its role; the message says which and why."""


@dataclass(frozen=True)
class Host:
    user: str | None
    address: str
    port: int = DEFAULT_PORT
    project_dir: Path = paths.REPO

    @property
    def destination(self) -> str:
        """What ssh takes as its destination (the port goes separately, as -p)."""
        return f"{self.user}@{self.address}" if self.user else self.address

    @property
    def python(self) -> Path:
        """The project's Python environment on the host: the same place in its checkout as here."""
        here = Path(sys.executable)
        inside = here.is_relative_to(paths.REPO)
        return self.project_dir / here.relative_to(paths.REPO) if inside else self.project_dir / ".venv/bin/python"

    def there(self, here: Path) -> Path:
        """A path of this machine as the host has it: in its copy of this checkout for what is in this one, the
        same path otherwise."""
        return self.project_dir / here.relative_to(paths.REPO) if here.is_relative_to(paths.REPO) else here

    def module_argv(self, module: str, *args: str) -> list[str]:
        """The command line that runs one of the runner's modules on the host, with its checkout's Python."""
        return ["env", f"PYTHONPATH={self.project_dir / 'runner'}", str(self.python), "-m", module, *args]

    @property
    def label(self) -> str:
        """How messages and metadata name the host: the destination as the hosts file writes it."""
        address = f"[{self.address}]" if ":" in self.address else self.address
        where = f"{self.user}@{address}" if self.user else address
        return where if self.port == DEFAULT_PORT else f"{where}:{self.port}"


@dataclass(frozen=True)
class Hosts:
    """None (or an empty loadgen list) means the role runs on this machine."""

    server: Host | None = None
    db: Host | None = None
    proxy: Host | None = None
    loadgen: tuple[Host, ...] = ()
    ssh_config: Path | None = None
    source: Path | None = field(default=None, compare=False)

    def all(self) -> list[Host]:
        """Every remote host once, in role order (a host may play several roles)."""
        found: list[Host] = []
        for role in ROLES:
            for host in self.hosts_of(role):
                if host not in found:
                    found.append(host)
        return found

    def hosts_of(self, role: str) -> list[Host]:
        if role == "loadgen":
            return list(self.loadgen)
        host = getattr(self, role)
        return [host] if host else []

    def roles_of(self, host: Host) -> list[str]:
        return [role for role in ROLES if host in self.hosts_of(role)]


def parse_destination(text: object, where: str) -> Host:
    if not isinstance(text, str):
        raise HostsError(f"{where}: expected a string like \"root@10.0.0.2\" or \"root@10.0.0.2:2222\", got {text!r}")
    match = DESTINATION.match(text.strip())
    if not match:
        raise HostsError(
            f"{where}: {text!r} is not a destination of the form user@host[:port] "
            f"(an IPv6 address goes in brackets: root@[fd00::2]:22)"
        )
    port = int(match["port"]) if match["port"] else DEFAULT_PORT
    if not 1 <= port <= 65535:
        raise HostsError(f"{where}: port {port} in {text!r} is out of range (1-65535)")
    return Host(match["user"], match["v6"] or match["host"], port)


def read_toml(path: Path) -> dict:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise HostsError(f"hosts file {path} does not exist") from None
    except tomllib.TOMLDecodeError as e:
        raise HostsError(f"hosts file {path} is not valid TOML: {e}") from None
    except OSError as e:
        raise HostsError(f"hosts file {path} cannot be read: {e}") from None


def check_keys(found: dict, allowed: tuple[str, ...], what: str, where: Path) -> None:
    unknown = sorted(set(found) - set(allowed))
    if unknown:
        raise HostsError(f"{where}: unknown {what} {', '.join(unknown)} (known: {', '.join(allowed)})")


def read_table(document: dict, key: str, path: Path) -> dict:
    table = document.get(key, {})
    if not isinstance(table, dict):
        raise HostsError(f"{path}: {key} must be a table ([{key}])")
    return table


def read_project_dirs(table: dict, path: Path) -> dict[str, Path]:
    """By host label, so "root@h" and "root@h:22" name the same host."""
    dirs = {}
    for destination, directory in table.items():
        if not isinstance(directory, str) or not directory.startswith("/"):
            raise HostsError(f"{path}: project_dir for {destination!r} must be an absolute path, got {directory!r}")
        dirs[parse_destination(destination, f"{path}: [project_dir]").label] = Path(directory)
    return dirs


def read_loadgen(value: object, path: Path) -> tuple[Host, ...]:
    if not isinstance(value, list):
        raise HostsError(
            f"{path}: roles.loadgen must be a list of destinations, e.g. [\"root@10.0.0.4\"], got {value!r}"
        )
    return tuple(parse_destination(item, f"{path}: roles.loadgen[{i}]") for i, item in enumerate(value))


def read_ssh_config(document: dict, path: Path) -> Path | None:
    value = document.get("ssh_config")
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise HostsError(f"{path}: ssh_config must be a path (a string), got {value!r}")
    config = (path.parent / value).resolve()
    if not config.is_file():
        raise HostsError(f"{path}: ssh_config {config} does not exist")
    return config


def with_project_dirs(hosts: Hosts, project_dirs: dict[str, Path], path: Path) -> Hosts:
    labels = {host.label for host in hosts.all()}
    for label in project_dirs:
        if label not in labels:  # a typo would otherwise fall back to the default path silently
            raise HostsError(f"{path}: [project_dir] names {label}, which plays no role in [roles]")

    def placed(host: Host | None) -> Host | None:
        return host and replace(host, project_dir=project_dirs.get(host.label, paths.REPO))

    return replace(
        hosts,
        server=placed(hosts.server),
        db=placed(hosts.db),
        proxy=placed(hosts.proxy),
        loadgen=tuple(placed(host) for host in hosts.loadgen),
    )


def load_hosts(path: Path | str) -> Hosts:
    path = Path(path)
    document = read_toml(path)
    check_keys(document, TOP_LEVEL_KEYS, "key", path)
    roles = read_table(document, "roles", path)
    check_keys(roles, ROLES, "role", path)
    single = {role: parse_destination(roles[role], f"{path}: roles.{role}") for role in SINGLE_ROLES if role in roles}
    hosts = Hosts(
        **single,
        loadgen=read_loadgen(roles.get("loadgen", []), path),
        ssh_config=read_ssh_config(document, path),
        source=path,
    )
    return with_project_dirs(hosts, read_project_dirs(read_table(document, "project_dir", path), path), path)
