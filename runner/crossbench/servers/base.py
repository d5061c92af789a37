"""What a server plug-in declares. One module per server kind under crossbench/servers/ subclasses ServerPlugin;
the runner, serve.sh, the experiment files and the tests know servers only through this interface.

A plug-in stands on its facts (crossbench/server_facts.py: its name, its knobs, config keys with defaults and
validation read from the experiment's section of the plug-in's name and from the command line). It says which
endpoints it serves, the tools it needs, how to build its command line, how many requests of a blocking endpoint
it serves at once, and (optionally) a probe that looks inside it while a cell runs (Tomcat's JVM probe).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import itertools
import shutil
from dataclasses import dataclass
from pathlib import Path

from crossbench.refusal import Missing, Refusal

from ..endpoints import STATIC_ENDPOINT as STATIC_ENDPOINT  # re-exported: the plug-ins name it from here
from ..endpoints import family
from ..knobs import Knob as Knob  # re-exported: the runner names a plug-in's knobs and their errors from here
from ..knobs import SettingsError as SettingsError
from ..oskit import HOST
from ..sampling import db_pool
from ..server_facts import ServerFacts
from .lifecycle import ServerSpec
from .probe import Probe

ENDPOINTS = family("core")
TFB_ENDPOINTS = family("tfb")  # TechEmpower's two types without a database
# need a database (--db-url, or the run's own); /fortunes and /updates are TechEmpower's, beside /db and /queries
DB_ENDPOINTS = family("db")


def database_env(db_url: str | None, settings: dict, cell_dir: Path | None = None) -> dict:
    """How the Python apps learn their database (they read these at start, in each worker), and where each
    process logs its pool's counts in a cell (sampling/db_pool.py reads them)."""
    if not db_url:
        return {}
    log_dir = pool_log_dir(cell_dir)
    return {
        "CROSSBENCH_DB_URL": db_url,
        "CROSSBENCH_DB_POOL": str(settings["db_pool"]),
        "CROSSBENCH_DB_WAIT_MS": str(settings["db_wait_ms"]),
        "CROSSBENCH_DB_PREPARED": "1" if settings["db_prepared"] else "0",
        **({"CROSSBENCH_DB_POOL_LOG": str(log_dir)} if log_dir else {}),
    }


def pool_log_dir(cell_dir: Path | None) -> Path | None:
    return cell_dir / db_pool.LOG_DIR if cell_dir else None


class ToolMissing(Missing, RuntimeError):
    """A tool the server needs is not installed (the message names the package)."""


class CannotRunHere(Refusal, RuntimeError):
    """A setting this machine cannot run (Tomcat's virtual threads without a JDK 21+): the run skips its cells
    and says why; the plug-in raises it, the runner never needs to know the plug-in's own errors."""


@dataclass(frozen=True)
class Tool:
    """Something the server needs on this machine: an executable on PATH or an importable Python module."""

    what: str  # executable name, or "python:<module>"
    install: str  # the package that brings it, e.g. "apt-get install nginx-light"

    def present(self) -> bool:
        if self.what.startswith("python:"):
            return importlib.util.find_spec(self.what.removeprefix("python:")) is not None
        return shutil.which(self.what) is not None


class ServerPlugin:
    facts: ServerFacts = ServerFacts("")  # what is known of it without starting it: name, knobs, palette, ...
    summary: str = ""
    endpoints: frozenset[str] = frozenset()
    tools: tuple[Tool, ...] = ()
    default_port: int = 8000
    ready_timeout_s: float = 20.0
    distributions: tuple[str, ...] = ()  # Python packages whose versions the run's metadata records
    process_flag: str = ""  # variant labels: "-w" gives "-w4" for 4 processes, "" for 1
    proxies: bool = False  # it can stand in front of another server (group proxy = "<name>")
    FIELDS: dict[str, str] = {}  # record fields its records alone carry, beyond its knobs (record.py)

    # --- its facts (server_facts.py) -------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.facts.name

    @property
    def knobs(self) -> tuple[Knob, ...]:
        return self.facts.knobs

    @property
    def process_knob(self) -> str | None:
        """The knob that sets how many processes serve (worker sweeps)."""
        return self.facts.process_knob

    @property
    def palette(self) -> tuple[str, ...]:
        return self.facts.palette

    @property
    def starts(self) -> bool:
        """The suite starts it for each launch and stops it after; False: a server the user started and keeps
        running (external.py), whose launches all measure one process the suite neither sets nor stops."""
        return self.facts.starts

    # --- settings --------------------------------------------------------------------------------------
    def knob(self, name: str) -> Knob:
        return next(k for k in self.knobs if k.name == name)

    def defaults(self) -> dict:
        return {k.name: k.default for k in self.knobs}

    def unknown_keys(self, section: dict) -> set[str]:
        return set(section) - {k.name for k in self.knobs}

    def validate_section(self, section: dict) -> None:
        """An experiment's section: known keys, each value (or each value of a sweep list) acceptable."""
        unknown = self.unknown_keys(section)
        if unknown:
            raise SettingsError(
                f"unknown [{self.name}] keys {sorted(unknown)}; allowed: {sorted(k.name for k in self.knobs)}"
            )
        for key, value in section.items():
            knob = self.knob(key)
            for one in value if knob.sweep and isinstance(value, list) else [value]:
                knob.check(one, self.name)

    def settings(self, section: dict) -> dict:
        """One cell's full settings: defaults under the given values, each checked."""
        self.validate_section(section)
        merged = {**self.defaults(), **section}
        return {k.name: k.check(merged[k.name], self.name) for k in self.knobs}

    def variants(self, section: dict) -> list[dict]:
        """The cells' settings a section asks for: the cross product of its sweep lists."""
        sweeps = [k.name for k in self.knobs if k.sweep and isinstance(section.get(k.name), list)]
        values = [section[name] for name in sweeps]
        return [self.settings({**section, **dict(zip(sweeps, combo))}) for combo in itertools.product(*values)]

    def variant_label(self, settings: dict) -> str:
        """The part of a cell id that tells this server's variants apart: its process count where it has a flag
        for it, else its sweep knobs off their default."""
        if self.process_flag:
            count = self.process_count(settings)
            return f"{self.process_flag}{count}" if count != 1 else ""
        return "".join(
            f"-{k.name.replace('_', '')}{settings[k.name]}"
            for k in self.knobs
            if k.sweep and settings[k.name] != k.default
        )

    def describe(self, settings: dict) -> str:
        return self.name + self.variant_label(settings).replace("-", " ")

    def record_fields(self, settings: dict) -> dict:
        return {
            k.name: (list(settings[k.name]) if k.kind == "list" else settings[k.name])
            for k in self.knobs
            if k.in_record
        }

    # --- what it does ----------------------------------------------------------------------------------
    def process_count(self, settings: dict) -> int:
        """Server processes that serve requests (the record's `processes`)."""
        return settings[self.process_knob] if self.process_knob else 1

    def parallel_limit(self, settings: dict, endpoint: str) -> int | None:
        """How many requests of `endpoint` it serves at once when each holds a worker for its whole delay;
        None when waiting holds nothing (an event loop's timer, virtual threads, a non-blocking endpoint)."""
        return None

    def pool_knob(self, endpoint: str) -> str | None:
        """The knob that sizes the one pool of threads serving `endpoint`, the variable a maxthreads sweep varies;
        None where no single knob does. Tomcat's records say it through their executor (analysis read/setting.py)."""
        return None

    def preflight(self, settings: dict) -> None:
        """Refuses, before anything runs, what cannot run here (ToolMissing, SettingsError)."""
        missing = [t for t in self.tools if not t.present()]
        if missing:
            raise ToolMissing(
                f"{self.name} needs " + "; ".join(f"{t.what.removeprefix('python:')} ({t.install})" for t in missing)
            )

    def python_env(self, settings: dict):
        """The virtual environment its cells with these settings run in when it is not the project's own (a
        pyvenv.PythonEnv the run builds before the first cell), else None. CannotRunHere for an interpreter this
        machine cannot give."""
        return None

    def reads(self, settings: dict) -> tuple[Path, ...]:
        """What its server reads on this machine outside its cell's folder: a server on a host of its own
        (--hosts) finds each there at the same path, or in the host's copy of this checkout for what is in this
        one (run/open_placement.py checks it before the first cell). Its own Python environment, if it has one."""
        env = self.python_env(settings)
        return (env.path,) if env else ()

    def prime(self, settings: dict, work_dir: Path, cpus: tuple[int, ...], host) -> str | None:
        """Before the first measured launch: what a server makes on its first start and keeps (a cache), made
        by one unmeasured start on `host` (crossbench.hosts) so that every measured launch starts alike. Returns
        what it did, or None."""
        return None

    def spec(
        self,
        settings: dict,
        port: int,
        work_dir: Path,
        cpus: tuple[int, ...] = (),
        cell_dir: Path | None = None,
        db_url: str | None = None,
        address: str = HOST,
    ) -> ServerSpec:
        """The command line and log of one start. `cell_dir` is where per-cell artefacts go (a JFR file);
        `db_url` (postgresql://user@host:port/db) is the database the database endpoints query, if any;
        `address` where it listens (loopback unless load comes from other hosts)."""
        raise NotImplementedError

    def running(self, spec: ServerSpec, host, cell_dir: Path | None = None):
        """The server of one start on `host` (crossbench.hosts), not yet started: a with-block starts and stops
        it (a RunningServer by default)."""
        return host.server(spec, cell_dir)

    def deploy_problem(self, settings: dict, log_path: Path) -> str | None:
        """What its logs (`log_path`, its start's log, and what lies beside it) say went wrong in a start that
        answers all the same (a user's WAR Tomcat could not deploy), in one line; None when nothing did."""
        return None

    def versions(self) -> dict:
        found = {}
        for name in self.distributions:
            try:
                found[name] = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                found[name] = None
        return found

    def stopped_figures(self, settings: dict, cell_dir: Path, describe: dict, t0: float, t1: float) -> dict:
        """Figures read after the server stopped, from what it left in `cell_dir` for the window [t0, t1]
        (Tomcat: its JFR recording). Costs no measured time. None by default."""
        return {}

    def stopped_settings(self, describe: dict, cell_dir: Path) -> dict:
        """The record's server_settings once the server stopped: `describe` (what it said at start) with what it
        left in `cell_dir` about itself (a Python server: the interpreter each process ran). As given by default."""
        return describe

    def stopped_flags(self, settings: dict, figures: dict) -> list[str]:
        """Flags about what stopped_figures could not read (Tomcat: a recording that was on, but missing or
        torn). None by default."""
        return []

    def probe(self, pid: int, cell_dir: Path, host) -> Probe | None:
        """What looks inside the server while the cell runs (a Probe, servers/probe.py): by default the pool files
        its processes write in database cells (nothing else); Tomcat's JVM probe in servers/tomcat_probe.py.
        None: no probe. `host` the server's (crossbench.hosts): `pid` is that host's."""
        return (
            db_pool.ProcessLogProbe(pool_log_dir(cell_dir), cell_dir, host.clock_offset_s)
            if DB_ENDPOINTS[0] in self.endpoints
            else None
        )
