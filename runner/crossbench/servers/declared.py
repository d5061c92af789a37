"""A server declared as data (declared_schema.py says what its table holds): a ServerPlugin whose knobs, endpoints
and command line come from the table, so the plan, the cells, the records and the analysis treat it as they treat a
built-in plug-in. Its knobs are placeholders in its command; each start renders them with its port and address.

Its runtime says what looks inside it: every runtime gets the process-tree sampler every server has (CPU, RSS,
threads, connections); a "jvm" one the JVM probe as well (its collector, thread counts and the pool its
declaration names: declared_jvm.py)."""

from __future__ import annotations

import itertools
import signal
import sys
from pathlib import Path

from ..declared_schema import SECTION, DeclarationError, check, refuse_taken
from ..oskit import HOST
from ..server_facts import declared_facts
from .base import ServerPlugin, SettingsError
from .declared_jvm import FIELDS as JVM_FIELDS
from .declared_jvm import DeclaredJvmProbe
from .lifecycle import RunningServer, ServerSpec

# Once a declared server answers, its process must still run this long (lifecycle.ServerSpec.foreground_check_s):
# what it costs each start against a command that daemonises and exits only once its daemon answers.
FOREGROUND_CHECK_S = 0.5


class DeclaredPlugin(ServerPlugin):
    """One declared server; `declaration` is its checked table (declared_schema.check), kept as recorded."""

    def __init__(self, name: str, declaration: dict):
        self.facts = declared_facts(name, declaration)
        self.declaration = declaration
        self.summary = f"declared: {' '.join(declaration['command'])}"
        self.endpoints = frozenset(declaration["endpoints"])
        self.ready_timeout_s = declaration["ready"]["timeout_s"]
        self.FIELDS = JVM_FIELDS if declaration["runtime"] == "jvm" else {}

    @property
    def runtime(self) -> str:
        return self.declaration["runtime"]

    def declared_sweeps(self) -> dict:
        return {name: knob["values"] for name, knob in self.declaration["knobs"].items() if len(knob["values"]) > 1}

    def variants(self, section: dict) -> list[dict]:
        """A knob the experiment leaves out is swept over its declared values."""
        return super().variants({**self.declared_sweeps(), **section})

    def validate_section(self, section: dict) -> None:
        """As every plug-in's, and every cell it asks for within the declared bounds (at_most)."""
        super().validate_section(section)
        given = {**self.defaults(), **self.declared_sweeps(), **section}
        swept = [name for name, value in given.items() if isinstance(value, list)]
        for combo in itertools.product(*(given[name] for name in swept)):
            self.check_bounds({**given, **dict(zip(swept, combo))})

    def check_bounds(self, settings: dict) -> None:
        for name, knob in self.declaration["knobs"].items():
            bound = knob["at_most"]
            if bound is not None and settings[name] > settings[bound]:
                raise SettingsError(
                    f"{self.name}: {name} = {settings[name]} is above {bound} = {settings[bound]} "
                    f"(declared at_most = \"{bound}\")"
                )

    def describe(self, settings: dict) -> str:
        """Its name and each knob it sweeps by declaration or that is off its default, as name=value."""
        swept = self.declared_sweeps()
        return " ".join(
            [
                self.name,
                *(
                    f"{k.name}={settings[k.name]}"
                    for k in self.knobs
                    if k.name in swept or settings[k.name] != k.default
                ),
            ]
        )

    def parallel_limit(self, settings: dict, endpoint: str) -> int | None:
        knob = self.pool_knob(endpoint)
        return settings[knob] if knob else None

    def pool_knob(self, endpoint: str) -> str | None:
        """The knob its declaration's `parallel` names for the endpoint."""
        return self.facts.pools.get(endpoint)

    def prime(self, settings: dict, work_dir: Path, cpus: tuple[int, ...], host) -> str | None:
        """One unmeasured start before the first measured launch: a declaration whose command cannot start or
        answer (or daemonises) is said before the first cell (run_checks.prime_servers), and the first launch
        finds the files its command reads in the page cache as later ones do. Says nothing when it answered."""
        with RunningServer(self.spec(settings, host.free_port(), work_dir, cpus), host):
            return None

    def probe(self, pid: int, cell_dir: Path, host):
        """A JVM's probe (declared_jvm.py); other runtimes the one every plug-in has."""
        if self.runtime == "jvm":
            return DeclaredJvmProbe(pid, cell_dir, host, self.declaration["pool"])
        return super().probe(pid, cell_dir, host)

    def reads(self, settings: dict) -> tuple[Path, ...]:
        """Its working directory, and the absolute paths its command and environment name outside it (a
        catalina.sh elsewhere); what they name relative to it comes with it."""
        workdir = Path(self.declaration["workdir"])
        words = [*self.declaration["command"], *self.declaration["env"].values()]
        named = [Path(w) for w in words if w.startswith("/") and "{" not in w and Path(w).exists()]
        return (workdir, *(p for p in named if not p.is_relative_to(workdir)))

    def spec(self, settings, port, work_dir, cpus=(), cell_dir=None, db_url=None, address=HOST) -> ServerSpec:
        values = {**settings, "port": port, "host": address, "python": sys.executable}
        argv = [render(word, values) for word in self.declaration["command"]]
        env = {key: render(value, values) for key, value in self.declaration["env"].items()}
        stop = self.declaration["stop"]
        return ServerSpec(
            self.name,
            port,
            argv,
            work_dir / f"{self.name}-{port}.log",
            dict(settings),
            cpus,
            self.ready_timeout_s,
            env=env,
            address=address,
            workdir=Path(self.declaration["workdir"]),
            ready_path=self.declaration["ready"]["path"],
            stop_signal=signal.Signals["SIG" + stop["signal"]],
            stop_grace_s=stop["grace_s"],
            foreground_check_s=FOREGROUND_CHECK_S,
        )


def render(text: str, values: dict) -> str:
    """One command word or environment value with its placeholders filled in."""
    return text.format_map(values)


def plugins(tables: dict, where: str, check_paths: bool = True) -> dict[str, DeclaredPlugin]:
    """The servers a recorded [server] section declares, each checked again (DeclarationError names `where` and
    the key); check_paths=False where its paths need not exist (declared_schema.check)."""
    return {name: DeclaredPlugin(name, check(name, table, where, None, check_paths)) for name, table in tables.items()}


def normalised(tables: object, where: str, base_dir: Path | None, taken=()) -> dict:
    """A [server] section as a run records it: each declaration checked, relative paths made absolute; a name
    in `taken` (the built-in plug-ins') is refused."""
    if not isinstance(tables, dict):
        raise DeclarationError(f"{where}: [{SECTION}] is a table of [{SECTION}.NAME] sections, not {tables!r}")
    refuse_taken(tables, where, taken)
    checked = {name: check(name, table, where, base_dir) for name, table in tables.items()}
    for name, declaration in checked.items():
        if taken and declaration["like"] is not None and declaration["like"] not in taken:
            raise DeclarationError(
                f"{where}: [{SECTION}.{name}] like: one of {', '.join(taken)}, not {declaration['like']!r}"
            )
    return checked


def endpoint_like(declaration: dict, group_endpoints: dict) -> str | None:
    """The endpoint a group that names none for a declared server gives it: its `like` server's there, when it
    declares that endpoint; None otherwise (it is not in the group)."""
    endpoint = group_endpoints.get(declaration["like"])
    return endpoint if endpoint in declaration["endpoints"] else None
