"""Tomcat: a fresh CATALINA_BASE per start, rendered from runner/tomcat/*.template, and the JVM command line."""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

from . import paths
from .jdk import Jdk, select_jdk

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
    max_threads: int = DEFAULT_MAX_THREADS
    accept_count: int = DEFAULT_ACCEPT_COUNT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    executor: str = "platform"
    jdk: str | None = None            # JDK home or feature version; None = default (newest with VTs for virtual)
    heap: str | None = None           # -Xmx value such as "1g"; None = the JVM's default
    jfr_file: Path | None = None      # a JFR recording of the whole run, dumped on exit
    jvm_options: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self):
        if self.executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not {self.executor!r}")
        for name in ("max_threads", "accept_count", "max_connections"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name.replace('_', '-')} must be at least 1")

    def resolve_jdk(self) -> Jdk:
        return select_jdk(self.jdk, need_virtual_threads=self.executor == "virtual")


def render_server_xml(config: TomcatConfig) -> str:
    if config.executor == "virtual":
        executor_element, pool = VIRTUAL_EXECUTOR, 'executor="virtualThreads"'
    else:
        executor_element, pool = "", f'maxThreads="{config.max_threads}"'
    template = Template((paths.TOMCAT_TEMPLATES / "server.xml.template").read_text())
    return template.substitute(
        executor_element=executor_element, pool_attributes=pool, port=config.port,
        accept_count=config.accept_count, max_connections=config.max_connections)


def prepare_base(config: TomcatConfig, base: Path, home: Path) -> Path:
    """Writes a CATALINA_BASE under `base` (which must not exist yet) and returns it."""
    for sub in ("conf/Catalina/localhost", "logs", "temp", "work", "webapps"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    for name in ("web.xml", "catalina.properties", "logging.properties"):
        shutil.copy2(home / "conf" / name, base / "conf" / name)
    (base / "conf" / "server.xml").write_text(render_server_xml(config))
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
    options += list(config.jvm_options)
    classpath = f"{home / 'bin' / 'bootstrap.jar'}:{home / 'bin' / 'tomcat-juli.jar'}"
    return [str(jdk.java), *options, "-classpath", classpath, "org.apache.catalina.startup.Bootstrap", "start"]
