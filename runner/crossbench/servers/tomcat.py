"""The Tomcat plug-in: the WAR on the pinned Tomcat 9, a fresh CATALINA_BASE per start rendered from
runner/tomcat/*.template, the JVM command line (tomcat_config.py), and the JVM probe (connector pool,
connections) while a cell runs (tomcat_probe.py)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .. import builtin_servers, paths
from ..flags import JFR_UNREADABLE
from ..jdk import Jdk, JdkError, select_jdk
from ..oskit import HOST, free_port
from . import tomcat_jfr as jfr
from .base import (
    DB_ENDPOINTS,
    ENDPOINTS,
    TFB_ENDPOINTS,
    CannotRunHere,
    ServerPlugin,
    SettingsError,
    Tool,
)
from .lifecycle import RunningServer, ServerSpec
from .tomcat_config import (
    ADD_OPENS,
    DEFAULT_ACCEPT_COUNT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_THREADS,
    EXECUTORS,
    VIRTUAL_EXECUTOR,
    CdsArchive,
    TomcatConfig,
    cds_text,
    command,
    database_options,
    jdbc_url,
    making_archive,
    prepare_base,
    render_server_xml,
    tomcat_home,
    tomcat_version,
)
from .tomcat_probe import BackgroundJvmProbe, connections_peak

__all__ = [
    "ADD_OPENS",
    "DEFAULT_ACCEPT_COUNT",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_THREADS",
    "EXECUTORS",
    "PLUGIN",
    "VIRTUAL_EXECUTOR",
    "BackgroundJvmProbe",
    "CdsArchive",
    "TomcatConfig",
    "TomcatPlugin",
    "command",
    "connections_peak",
    "database_options",
    "jdbc_url",
    "named_jdk",
    "prepare_base",
    "render_server_xml",
    "settings_jdk",
    "tomcat_home",
    "tomcat_version",
]


CONTAINER_LOG_WAIT_S = 1.0  # how long a failed deploy's cause may take to reach localhost.*.log


def settings_jdk(settings: dict) -> Jdk:
    """The JDK a cell's settings ask for; CannotRunHere (the runner skips the cell) when this machine has none."""
    try:
        return select_jdk(settings["jdk"], need_virtual_threads=settings["executor"] == "virtual")
    except JdkError as e:
        raise CannotRunHere(str(e)) from None


class TomcatPlugin(ServerPlugin):
    facts = builtin_servers.TOMCAT
    summary = "the servlet WAR on the pinned Apache Tomcat 9 (thread per request; virtual threads on JDK 21+)"
    endpoints = frozenset({*ENDPOINTS, *TFB_ENDPOINTS, *DB_ENDPOINTS})
    default_port = 8080
    ready_timeout_s = 60.0
    tools = (Tool("taskset", "apt-get install util-linux"),)
    FIELDS = {  # Tomcat's records alone carry these: the JVM probe's (BackgroundJvmProbe.figures) and the JFR's
        "jvm": "Tomcat: the JVM as its probe saw it (collector, processors)",
        "tomcat_connection_count_peak": "Tomcat: most connections held at once in the window (connector count)",
        **jfr.FIELDS,
    }

    def variants(self, section: dict) -> list[dict]:
        found = []
        for settings in super().variants(section):
            if settings["executor"] == "virtual":  # maxThreads does not apply: one virtual variant
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
        check_war(settings)
        settings_jdk(settings)  # before the build: a cell this machine cannot run is skipped, built or not
        tomcat_home()

    def config(
        self,
        settings: dict,
        port: int,
        jfr_file: Path | None = None,
        cds: CdsArchive | None = None,
        address: str = HOST,
        cpus: tuple[int, ...] = (),
    ) -> TomcatConfig:
        return TomcatConfig(
            port=port,
            address=address,
            max_threads=settings["max_threads"] or DEFAULT_MAX_THREADS,
            executor=settings["executor"],
            accept_count=settings["accept_count"],
            max_connections=settings["max_connections"],
            jdk=settings["jdk"],
            heap=settings["heap"],
            jvm_options=tuple(settings["jvm_options"]),
            jfr_file=jfr_file,
            cds=cds,
            processors=len(cpus) or None,
            war=Path(settings["war"]).resolve() if settings["war"] else None,
            context=settings["context"],
        )

    def prime(self, settings: dict, work_dir: Path, cpus: tuple[int, ...], host) -> str | None:
        """The class-data archive, made by one unmeasured start when it is missing: the start that makes it is
        slower and runs without JFR (the JVM turns JFR off while it archives), so it is not a measured launch."""
        if not settings["class_data_sharing"]:
            return None
        jdk = settings_jdk(settings)
        archive = CdsArchive.for_start(tomcat_version(tomcat_home()), jdk)
        if archive.path.is_file():
            return None
        if not archive.make_base(jdk):
            return (
                f"could not make a base class-data archive for {jdk.home} (java -Xshare:dump): Tomcat starts "
                "without class-data sharing"
            )
        with RunningServer(self.spec(settings, free_port(), work_dir, cpus), host):
            pass
        made = "made" if archive.path.is_file() else "could not make"
        return f"{made} Tomcat's class-data archive {archive.path} with one unmeasured start"

    def spec(self, settings, port, work_dir, cpus=(), cell_dir=None, db_url=None, address=HOST) -> ServerSpec:
        jfr_file = (cell_dir / jfr.RECORDING).resolve() if cell_dir and settings["jfr"] else None
        if db_url:
            settings = {**settings, "jvm_options": (*settings["jvm_options"], *database_options(db_url, settings))}
        home = tomcat_home()
        jdk = settings_jdk(settings)
        cds = CdsArchive.for_start(tomcat_version(home), jdk) if settings["class_data_sharing"] else None
        config = self.config(settings, port, jfr_file, cds, address, tuple(cpus))
        base = prepare_base(config, Path(tempfile.mkdtemp(prefix="catalina-base-", dir=work_dir)), home)
        describe = {
            "tomcat": tomcat_version(home),
            "jdk": jdk.version,
            "jdk_home": str(jdk.home),
            "max_threads": config.max_threads if config.executor == "platform" else None,
            "executor": config.executor,
            "accept_count": config.accept_count,
            "max_connections": config.max_connections,
            "heap": config.heap,
            "jvm_options": list(config.jvm_options),
            "catalina_base": str(base),
            "war": str(config.war) if config.war else None,
            "context": config.context,
        }
        argv = command(config, jdk, home, base)
        describe["class_data_sharing"] = cds_text(argv) if config.cds else None
        # A user's WAR need not answer /hello: once the connector answers at all, Tomcat has deployed it (it
        # starts its connector after its webapps), and whether it deployed is its log's (deploy_problem).
        return ServerSpec(
            self.name,
            port,
            argv,
            base / "logs" / "console.log",
            describe,
            cpus,
            self.ready_timeout_s,
            after_stop=cds.keep if cds else None,
            address=address,
            pinned_once_ready=bool(cpus),
            ready_any_answer=bool(config.war),
        )

    def reads(self, settings: dict) -> tuple[Path, ...]:
        """Its JDK, and a user's WAR."""
        war = (Path(settings["war"]).resolve(),) if settings["war"] else ()
        return (settings_jdk(settings).home, *war)

    def deploy_problem(self, settings: dict, log_path: Path) -> str | None:
        """A user's WAR that did not deploy: Tomcat still starts and answers 404, so its logs say it. The first
        SEVERE line of the container's log (localhost.*.log: the cause, a listener class missing, a web.xml it
        cannot parse), else of the console (where Tomcat says only that the context failed)."""
        if not settings["war"]:
            return None
        severe = first_severe(sorted(log_path.parent.glob("localhost.*.log")))
        if severe is None and first_severe([log_path]) is not None:
            time.sleep(CONTAINER_LOG_WAIT_S)  # the container's log is written by a thread of its own
            severe = first_severe(sorted(log_path.parent.glob("localhost.*.log"))) or first_severe([log_path])
        return f"tomcat: {settings['war']} did not deploy; Tomcat's log says: {severe}" if severe else None

    def versions(self) -> dict:
        try:
            return {"tomcat": tomcat_version(tomcat_home())}
        except paths.BuildMissing:
            return {"tomcat": None}

    def stopped_figures(self, settings: dict, cell_dir: Path, describe: dict, t0: float, t1: float) -> dict:
        """The JFR recording the JVM dumped at exit, read for the window (tomcat_jfr.py)."""
        if not settings["jfr"]:
            return {
                **dict.fromkeys(jfr.FIGURES),
                "tomcat_jfr_unreadable": "no recording: the cell ran with jfr off",
                "tomcat_jfr_read_s": None,
            }
        figures = jfr.figures(cell_dir / jfr.RECORDING, describe.get("jdk_home"), t0, t1)
        if making_archive(describe.get("class_data_sharing")) and figures.get("tomcat_jfr_unreadable"):
            figures["tomcat_jfr_unreadable"] = (
                "no recording: this start made the class-data archive, and the JVM "
                "turns JFR off while it does (the next starts use the archive)"
            )
        return figures

    def stopped_flags(self, settings: dict, figures: dict) -> list[str]:
        """jfr_unreadable: the cell ran with a recording that is missing, torn or unreadable (its figures null)."""
        return [JFR_UNREADABLE] if settings["jfr"] and figures.get("tomcat_jfr_unreadable") else []

    def probe(self, pid: int, cell_dir: Path, host) -> BackgroundJvmProbe:
        """The JVM probe beside the Tomcat on its host."""
        return BackgroundJvmProbe(pid, cell_dir, host)


def first_severe(logs: list[Path]) -> str | None:
    """The first SEVERE line of the first log that has one."""
    for log in logs:
        try:
            lines = log.read_text(errors="replace").splitlines()
        except OSError:
            continue
        found = next((line.strip() for line in lines if " SEVERE " in f" {line} "), None)
        if found:
            return found
    return None


def check_war(settings: dict) -> None:
    """A --war that is not there, or a context path Tomcat cannot name, refused before anything starts."""
    war, context = settings["war"], settings["context"]
    if war is not None and not (Path(war).is_file() or (Path(war) / "WEB-INF").is_dir()):
        raise SettingsError(f"tomcat: war {war!r} is neither a .war file nor an exploded WAR (a folder with WEB-INF)")
    if not context.startswith("/") or "//" in context or (context != "/" and context.endswith("/")):
        raise SettingsError(f"tomcat: context must be a path such as / or /app, not {context!r}")


def named_jdk(settings: dict) -> bool:
    """A JDK asked for by feature version ("17", "25"): part of the cell's name, so a run can set one against
    another. The default, "newest" and a path are not (the version used is in the record either way)."""
    return str(settings["jdk"] or "").isdigit()


PLUGIN = TomcatPlugin()
