"""A standalone Tomcat as its owner declares it to the suite: the suite's pinned Tomcat started with `catalina.sh
run`, a CATALINA_BASE of the owner's whose server.xml reads the address, port and pool size from system properties,
and the suite's WAR deployed there as ROOT. Used by the live tests of declared JVM servers."""

from __future__ import annotations

import shutil
from pathlib import Path

from crossbench import paths

# A standalone Tomcat's server.xml as its owner writes it: Tomcat fills ${name} from system properties.
SERVER_XML = """<?xml version="1.0" encoding="UTF-8"?>
<Server port="-1" shutdown="SHUTDOWN">
  <Service name="Catalina">
    {pool}
    <Connector address="${{http.address}}" port="${{http.port}}" protocol="org.apache.coyote.http11.Http11NioProtocol"
               {threads} acceptCount="1024" />
    <Engine name="Catalina" defaultHost="localhost">
      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false" deployOnStartup="true" />
    </Engine>
  </Service>
</Server>
"""
OWN_POOL = {"pool": "", "threads": 'maxThreads="${max.threads}" minSpareThreads="1"'}
SHARED_EXECUTOR = {
    "pool": '<Executor name="tomcatThreadPool" maxThreads="${max.threads}" minSpareThreads="1" />',
    "threads": 'executor="tomcatThreadPool"',
}


def catalina_base(folder: Path, home: Path, pool: dict) -> Path:
    """A CATALINA_BASE of the user's own: Tomcat's conf files, the server.xml above, the suite's WAR as ROOT."""
    (folder / "conf" / "Catalina" / "localhost").mkdir(parents=True)
    for name in ("web.xml", "catalina.properties", "logging.properties"):
        shutil.copy(home / "conf" / name, folder / "conf" / name)
    (folder / "conf" / "server.xml").write_text(SERVER_XML.format(**pool))
    (folder / "conf" / "Catalina" / "localhost" / "ROOT.xml").write_text(f'<Context docBase="{paths.WEBAPP_DIR}" />\n')
    for empty in ("webapps", "logs", "temp", "work"):
        (folder / empty).mkdir()
    return folder


def declaration(name: str, home: Path, base: Path, max_threads: int, pool: str | None = None, like: str = "") -> str:
    """The [server.NAME] table of a Tomcat started from `base`, its pool size the knob max_threads (the pool on
    /delay/sync); `pool` names the MBean the JVM probe reads, `like` the built-in server whose endpoints it takes
    in groups that name none for it."""
    return f"""
[server.{name}]
command = ["{home}/bin/catalina.sh", "run"]
env = {{ CATALINA_BASE = "{base}", JAVA_OPTS = "-Dhttp.address={{host}} -Dhttp.port={{port}} -Dmax.threads={{max_threads}}" }}
runtime = "jvm"
{f'pool = "{pool}"' if pool else ""}
{f'like = "{like}"' if like else ""}
ready = {{ path = "/hello", timeout_s = 60 }}
parallel = {{ "/delay/sync" = "max_threads" }}
[server.{name}.knobs]
max_threads = {max_threads}
"""
