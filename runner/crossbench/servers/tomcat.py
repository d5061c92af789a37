"""The Tomcat plug-in: the WAR on the pinned Tomcat 9, a fresh CATALINA_BASE per start rendered from
runner/tomcat/*.template, the JVM command line, and the JVM probe (connector pool, connections) while a cell runs."""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from urllib.parse import urlencode, urlsplit

from .. import paths
from ..jdk import Jdk, JdkError, select_jdk
from ..sampling import db_pool, jfr
from ..sampling.jvm_probe import JvmProbeError, connection_counts, db_pool_counts
from .base import DB_ENDPOINTS, ENDPOINTS, TFB_ENDPOINTS, CannotRunHere, Knob, ServerPlugin, Tool, db_knobs
from .lifecycle import HOST, ServerSpec

# Tomcat 9's own defaults for the NIO connector; the runner changes them only when asked.
DEFAULT_MAX_THREADS = 200
DEFAULT_ACCEPT_COUNT = 100
DEFAULT_MAX_CONNECTIONS = 8192
EXECUTORS = ("platform", "virtual")

# What catalina.sh passes on JDK 9+, so Tomcat's leak prevention works without warnings.
ADD_OPENS = (
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.rmi/sun.rmi.transport=ALL-UNNAMED",
)

VIRTUAL_EXECUTOR = (
    '    <Executor name="virtualThreads" namePrefix="http-vt-"\n'
    '              className="org.apache.catalina.core.StandardVirtualThreadExecutor" />')


@dataclass(frozen=True)
class TomcatConfig:
    port: int
    address: str = HOST                # the connector's: loopback unless load comes from other hosts
    max_threads: int = DEFAULT_MAX_THREADS
    accept_count: int = DEFAULT_ACCEPT_COUNT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    executor: str = "platform"
    jdk: str | None = None            # JDK home or feature version; None = default (newest with VTs for virtual)
    heap: str | None = None           # -Xmx value such as "1g"; None = the JVM's default
    jfr_file: Path | None = None      # a JFR recording of the whole run, dumped on exit
    cds: "CdsArchive | None" = None   # class-data sharing: use the archive, or make it at exit
    jvm_options: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self):
        if self.executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not {self.executor!r}")
        for name in ("max_threads", "accept_count", "max_connections"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name.replace('_', '-')} must be at least 1")

    def resolve_jdk(self) -> Jdk:
        return select_jdk(self.jdk, need_virtual_threads=self.executor == "virtual")


def settings_jdk(settings: dict) -> Jdk:
    """The JDK a cell's settings ask for; CannotRunHere (the runner skips the cell) when this machine has none."""
    try:
        return select_jdk(settings["jdk"], need_virtual_threads=settings["executor"] == "virtual")
    except JdkError as e:
        raise CannotRunHere(str(e)) from None


def render_server_xml(config: TomcatConfig, tomcat_version: str) -> str:
    if config.executor == "virtual":
        executor_element, pool = VIRTUAL_EXECUTOR, 'executor="virtualThreads"'
    else:
        executor_element, pool = "", f'maxThreads="{config.max_threads}"'
    template = Template((paths.TOMCAT_TEMPLATES / "server.xml.template").read_text())
    return template.substitute(
        executor_element=executor_element, pool_attributes=pool, address=config.address, port=config.port,
        accept_count=config.accept_count, max_connections=config.max_connections, tomcat_version=tomcat_version)


def prepare_base(config: TomcatConfig, base: Path, home: Path) -> Path:
    """Writes a CATALINA_BASE under `base` (which must not exist yet) and returns it."""
    for sub in ("conf/Catalina/localhost", "logs", "temp", "work", "webapps"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    for name in ("web.xml", "catalina.properties", "logging.properties"):
        shutil.copy2(home / "conf" / name, base / "conf" / name)
    (base / "conf" / "server.xml").write_text(render_server_xml(config, paths.tomcat_version(home)))
    root_xml = Template((paths.TOMCAT_TEMPLATES / "ROOT.xml.template").read_text())
    (base / "conf" / "Catalina" / "localhost" / "ROOT.xml").write_text(
        root_xml.substitute(doc_base=paths.WEBAPP_DIR))
    return base


def command(config: TomcatConfig, jdk: Jdk, home: Path, base: Path) -> list[str]:
    """The JVM command line catalina.sh would run, without the shell in between (the pid is the JVM's)."""
    options = [
        f"-Dcatalina.home={home}",
        f"-Dcatalina.base={base}",
        f"-Djava.io.tmpdir={base / 'temp'}",
        f"-Djava.util.logging.config.file={base / 'conf' / 'logging.properties'}",
        "-Djava.util.logging.manager=org.apache.juli.ClassLoaderLogManager",
        "-Djdk.tls.ephemeralDHKeySize=2048",
        "-Dorg.apache.catalina.security.SecurityListener.UMASK=0027",
        *ADD_OPENS,
    ]
    if config.heap:
        options += [f"-Xms{config.heap}", f"-Xmx{config.heap}"]
    if config.jfr_file:
        options.append(f"-XX:StartFlightRecording=filename={config.jfr_file},dumponexit=true,settings=default")
    if config.cds:
        options.append(config.cds.option())
    options += list(config.jvm_options)
    classpath = f"{home / 'bin' / 'bootstrap.jar'}:{home / 'bin' / 'tomcat-juli.jar'}"
    return [str(jdk.java), *options, "-classpath", classpath, "org.apache.catalina.startup.Bootstrap", "start"]


def database_options(db_url: str, settings: dict) -> list[str]:
    """The WAR's pool (org.crossbench.servlet.db.Database) is configured by system properties."""
    return [f"-Dcrossbench.db.url={jdbc_url(db_url)}", f"-Dcrossbench.db.pool={settings['db_pool']}",
            f"-Dcrossbench.db.wait_ms={settings['db_wait_ms']}",
            f"-Dcrossbench.db.prepared={str(settings['db_prepared']).lower()}"]


def jdbc_url(db_url: str) -> str:
    """postgresql://user[:password]@host:port/db -> the PostgreSQL JDBC driver's form."""
    parts = urlsplit(db_url)
    query = {"user": parts.username or "postgres"}
    if parts.password:
        query["password"] = parts.password
    return f"jdbc:postgresql://{parts.hostname}:{parts.port or 5432}{parts.path}?{urlencode(query)}"


@dataclass(frozen=True)
class CdsArchive:
    """An AppCDS archive of the classes a Tomcat start loads (JDK 13+ dynamic archive): the first start makes it
    at exit, later starts map it. Measured here: ready after 2.45 s instead of 2.9 s (JDK 17, one pinned core).
    A stale or foreign archive is not an error: the JVM then starts without it."""
    path: Path

    @classmethod
    def for_start(cls, tomcat_version: str, jdk: Jdk) -> "CdsArchive":
        return cls(paths.CACHE / "cds" / f"tomcat-{tomcat_version}-jdk-{jdk.version}.jsa")

    @property
    def making(self) -> Path:
        return self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")

    def option(self) -> str:
        if self.path.is_file():
            return f"-XX:SharedArchiveFile={self.path}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return f"-XX:ArchiveClassesAtExit={self.making}"

    def keep(self) -> None:
        """After the server stopped: the archive it made at exit becomes the one later starts use."""
        if self.making.is_file():
            os.replace(self.making, self.path)


class TomcatPlugin(ServerPlugin):
    name = "tomcat"
    summary = "the servlet WAR on the pinned Apache Tomcat 9 (thread per request; virtual threads on JDK 21+)"
    endpoints = frozenset({*ENDPOINTS, *TFB_ENDPOINTS, *DB_ENDPOINTS})
    default_port = 8080
    ready_timeout_s = 60.0
    tools = (Tool("taskset", "apt-get install util-linux"),)
    palette = ("#d95f02", "#a50f15", "#e6ab02", "#8c510a", "#e7298a", "#fb6a4a", "#bf812d", "#67000d")  # reds
    FIELDS = {   # Tomcat's records alone carry these: the JVM probe's (BackgroundJvmProbe.figures) and the JFR's
        "jvm": "Tomcat: the JVM as its probe saw it (collector, processors)",
        "tomcat_connection_count_peak": "Tomcat: most connections held at once in the window (connector count)",
        **jfr.FIELDS}
    knobs = (
        Knob("executor", "platform", "platform thread pool or virtual threads (JDK 21+)", kind="choice",
             choices=EXECUTORS, sweep=True, label="{} threads"),
        Knob("max_threads", DEFAULT_MAX_THREADS, "connector pool size (platform executor)", sweep=True,
             label="maxThreads={}"),
        Knob("accept_count", DEFAULT_ACCEPT_COUNT, "the kernel's accept queue (listen backlog)",
             label="acceptCount={}"),
        Knob("max_connections", DEFAULT_MAX_CONNECTIONS, "connections Tomcat holds at once",
             label="maxConnections={}"),
        Knob("jdk", None, "JDK home, feature version (17, 25) or 'newest'; default: java on PATH, or the "
                          "newest JDK 21+ for virtual threads; a list runs each cell on each (the version used "
                          "is in server_settings.jdk)", kind="text", sweep=True, in_record=False),
        Knob("heap", None, "heap size, e.g. 1g (default: the JVM's)", kind="text", in_record=False),
        Knob("jvm_options", (), "extra JVM options", kind="list", in_record=False),
        Knob("jfr", True, "a JFR recording per cell (tomcat.jfr: the record's GC, thread and wait figures come from "
                         "it; open it with `jfr` or JDK Mission Control)", kind="bool", in_record=False),
        *db_knobs(10, "database connections in the pool (HikariCP's default 10; fixed size)"),
        Knob("class_data_sharing", True, "map an AppCDS archive of Tomcat's classes (made by the first start): "
             "about 0.45 s less per start", kind="bool", in_record=False),
    )

    def variants(self, section: dict) -> list[dict]:
        found = []
        for settings in super().variants(section):
            if settings["executor"] == "virtual":       # maxThreads does not apply: one virtual variant
                settings = {**settings, "max_threads": None}
            if settings not in found:
                found.append(settings)
        return found

    def variant_label(self, settings: dict) -> str:
        pool = "-virtual" if settings["executor"] == "virtual" else f"-mt{settings['max_threads']}"
        return pool + (f"-jdk{settings['jdk']}" if named_jdk(settings) else "")

    def describe(self, settings: dict) -> str:
        pool = "virtual" if settings["executor"] == "virtual" else f"maxThreads={settings['max_threads']}"
        return f"tomcat {pool}" + (f" JDK {settings['jdk']}" if named_jdk(settings) else "")

    def parallel_limit(self, settings: dict, endpoint: str) -> int | None:
        blocking = endpoint == "/delay/sync" and settings["executor"] == "platform"
        return settings["max_threads"] if blocking else None

    def preflight(self, settings: dict) -> None:
        super().preflight(settings)
        paths.tomcat_home()
        settings_jdk(settings)

    def config(self, settings: dict, port: int, jfr_file: Path | None = None,
               cds: CdsArchive | None = None, address: str = HOST) -> TomcatConfig:
        return TomcatConfig(port=port, address=address, max_threads=settings["max_threads"] or DEFAULT_MAX_THREADS,
                            executor=settings["executor"], accept_count=settings["accept_count"],
                            max_connections=settings["max_connections"], jdk=settings["jdk"],
                            heap=settings["heap"], jvm_options=tuple(settings["jvm_options"]), jfr_file=jfr_file,
                            cds=cds)

    def spec(self, settings, port, work_dir, cpus=(), cell_dir=None, db_url=None, address=HOST) -> ServerSpec:
        jfr_file = (cell_dir / jfr.RECORDING).resolve() if cell_dir and settings["jfr"] else None
        if db_url:
            settings = {**settings, "jvm_options": (*settings["jvm_options"], *database_options(db_url, settings))}
        home = paths.tomcat_home()
        jdk = settings_jdk(settings)
        cds = CdsArchive.for_start(paths.tomcat_version(home), jdk) if settings["class_data_sharing"] else None
        config = self.config(settings, port, jfr_file, cds, address)
        base = prepare_base(config, Path(tempfile.mkdtemp(prefix="catalina-base-", dir=work_dir)), home)
        describe = {"tomcat": paths.tomcat_version(home), "jdk": jdk.version, "jdk_home": str(jdk.home),
                    "max_threads": config.max_threads if config.executor == "platform" else None,
                    "executor": config.executor, "accept_count": config.accept_count,
                    "max_connections": config.max_connections, "heap": config.heap,
                    "jvm_options": list(config.jvm_options), "catalina_base": str(base)}
        describe["class_data_sharing"] = config.cds.option() if config.cds else None
        return ServerSpec(self.name, port, command(config, jdk, home, base), base / "logs" / "console.log",
                          describe, cpus, self.ready_timeout_s, after_stop=cds.keep if cds else None,
                          address=address)

    def versions(self) -> dict:
        try:
            return {"tomcat": paths.tomcat_version(paths.tomcat_home())}
        except paths.BuildMissing:
            return {"tomcat": None}

    def stopped_figures(self, settings: dict, cell_dir: Path, describe: dict, t0: float, t1: float) -> dict:
        """The JFR recording the JVM dumped at exit, read for the window (crossbench.sampling.jfr)."""
        if not settings["jfr"]:
            return {**dict.fromkeys(jfr.FIGURES), "tomcat_jfr_unreadable": "no recording: the cell ran with jfr off",
                    "tomcat_jfr_read_s": None}
        return jfr.figures(cell_dir / jfr.RECORDING, describe.get("jdk_home"), t0, t1)

    def stopped_flags(self, settings: dict, figures: dict) -> list[str]:
        """jfr_unreadable: the cell ran with a recording that is missing, torn or unreadable (its figures null)."""
        return ["jfr_unreadable"] if settings["jfr"] and figures.get("tomcat_jfr_unreadable") else []

    def probe(self, pid: int, cell_dir: Path, host) -> "BackgroundJvmProbe":
        """The JVM probe beside the Tomcat on its host."""
        return BackgroundJvmProbe(pid, cell_dir, host)


def named_jdk(settings: dict) -> bool:
    """A JDK asked for by feature version ("17", "25"): part of the cell's name, so a run can set one against
    another. The default, "newest" and a path are not (the version used is in the record either way)."""
    return str(settings["jdk"] or "").isdigit()


class BackgroundJvmProbe:
    """The JVM probe (connector pool, collector, processor count), attached in the background: attaching
    takes a second or two, which the warm-up need not wait for. Until it answers, pool figures are empty."""

    def __init__(self, pid: int, cell_dir: Path, host, interval_s: float = 0.25):
        self.cell_dir = cell_dir
        raw_out = cell_dir / "jvm-probe.jsonl"
        self.probe = host.jvm_probe(pid, interval_s=interval_s, raw_out=raw_out)
        self.started, self.stopping = threading.Event(), threading.Event()
        self.failed = False
        self.thread = threading.Thread(target=self._run, name="jvm-probe", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        """Starts the probe, then stays until it is stopped: a remote probe's ssh client carries a parent-death
        signal, which follows the thread that started it."""
        try:
            self.probe.start()
        except (JvmProbeError, OSError) as e:
            self.failed = True
            (self.cell_dir / "jvm-probe.error").write_text(str(e))
        finally:
            self.started.set()
        self.stopping.wait()

    def latest(self):
        return self.probe.latest()

    def wait_attached(self, timeout_s: float) -> None:
        """Until the probe has attached and read the JVM once, has failed, or timeout_s has passed: a window
        opened before that has no pool or connection figures (seed004-quick's Tomcat pool-16 cell read none
        when the probe attached 2 s into its 4 s window)."""
        deadline = time.monotonic() + timeout_s
        if not self.started.wait(timeout=timeout_s):
            return
        while (not self.failed and self.probe.latest_line() is None and self.probe.returncode is None
               and time.monotonic() < deadline):
            time.sleep(0.05)

    def waiting_now(self) -> int | None:
        """Requests waiting for one of HikariCP's connections at the probe's last reading; None without a pool."""
        pools = (self.probe.latest_line() or {}).get("db_pools") or []
        counts = [pool.get("waiting") for pool in pools if isinstance(pool.get("waiting"), int)]
        return sum(max(0, c) for c in counts) if counts else None

    def stop(self) -> None:
        self.started.wait(timeout=self.probe.start_timeout_s + 5)
        self.probe.stop()
        self.stopping.set()
        self.thread.join(timeout=5)
        if self.probe.stderr_tail.strip():     # what the probe said about itself (attach, JMX), kept with the cell
            (self.cell_dir / "jvm-probe.stderr").write_text(self.probe.stderr_tail)
        rows = db_pool_counts(self.cell_dir / "jvm-probe.jsonl")
        if rows:
            db_pool.write_series(self.cell_dir / db_pool.SERIES_FILE, rows)

    def figures(self, t0: float, t1: float) -> dict:
        probe_lines = self.cell_dir / "jvm-probe.jsonl"
        return {"jvm": self.probe.jvm_info, "tomcat_connection_count_peak": connections_peak(probe_lines, t0, t1),
                **db_pool.peaks(db_pool_counts(probe_lines), t0, t1)}


def connections_peak(probe_lines: Path, t0: float, t1: float) -> int | None:
    """The most connections Tomcat held at once in the window (the connector's connectionCount). Beyond
    maxConnections the others wait outside Tomcat (acceptCount + 1 in the kernel's accept queue, the rest
    half-open) and the client counts no error for them: this is the only place a record shows them."""
    return max((n for t, n in connection_counts(probe_lines) if t0 <= t <= t1), default=None)


PLUGIN = TomcatPlugin()
