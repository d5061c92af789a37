"""The JVM probe of a declared server whose runtime is "jvm": the probe Tomcat's cells use (tomcat_probe.py), attached
to the JVM the declared command runs, reading the pool its declaration names, and saying in the record what it
could not read instead of leaving the pool's figures empty without a word.

The JVM is the process the command started when that is java; a command that starts it through a launcher (a shell
script such as catalina.sh, a build tool) has it below, found once the server answers."""

from __future__ import annotations

from pathlib import Path

from ..sampling import db_pool
from ..sampling.jvm_lines import pick_pool_or_executor
from .tomcat_probe import BackgroundJvmProbe

FIELDS = {
    "jvm": "declared JVM: the JVM as its probe saw it (collector, processors)",
    "jvm_pool": "declared JVM: the ThreadPool or Executor MBean whose threads the pool figures are",
    "jvm_pool_unread": "declared JVM: why the pool's figures are empty (no MBean matched, no JVM found), else null",
}
# What Spring Boot's embedded Tomcat and a few others need before a pool MBean exists, said where none matched.
NO_POOL_HINT = (
    "Tomcat registers them when its MBean registry is on (Spring Boot: server.tomcat.mbeanregistry.enabled=true)"
)


class DeclaredJvmProbe:
    """The Probe of a declared "jvm" server (servers/probe.py's protocol); `pool` is the declaration's pool key."""

    def __init__(self, pid: int, cell_dir: Path, host, pool: str):
        self.pid, self.cell_dir, self.host, self.pool = pid, cell_dir, host, pool
        self.inner: BackgroundJvmProbe | None = None
        self.unread: str | None = None
        if is_java(host, pid):
            self.inner = self.attach(pid)

    def attach(self, pid: int) -> BackgroundJvmProbe:
        return BackgroundJvmProbe(pid, self.cell_dir, self.host, pool_match=self.pool, pool_pick=pick_pool_or_executor)

    def find_jvm(self) -> None:
        """The JVM below a launcher, once: the first java process in the command's tree."""
        if self.inner is not None or self.unread is not None:
            return
        jvm = next((p.pid for p in self.host.tree(self.pid) if is_java_process(p)), None)
        if jvm is None:
            self.unread = "no java process under the declared command: nothing to attach the JVM probe to"
        else:
            self.inner = self.attach(jvm)

    def server_ready(self) -> None:
        if self.inner is None:
            self.find_jvm()
        else:
            self.inner.server_ready()

    def latest(self):
        return self.inner.latest() if self.inner else None

    def wait_attached(self, timeout_s: float) -> None:
        self.find_jvm()
        if self.inner is not None:
            self.inner.wait_attached(timeout_s)

    def waiting_now(self) -> int | None:
        return self.inner.waiting_now() if self.inner else None

    def stop(self) -> None:
        if self.inner is not None:
            self.inner.stop()

    def figures(self, t0: float, t1: float) -> dict:
        if self.inner is None:
            return {"jvm": None, "jvm_pool": None, "jvm_pool_unread": self.unread, **db_pool.peaks([], 0, 0)}
        found = self.inner.figures(t0, t1)
        reading = self.inner.latest()
        return {
            "jvm": found["jvm"],
            "jvm_pool": reading.name if reading else None,
            "jvm_pool_unread": None if reading else self.why_no_pool(),
            **{key: value for key, value in found.items() if key.startswith("db_pool_")},
        }

    def why_no_pool(self) -> str:
        if self.inner.failed:
            return f"the JVM probe could not attach: {self.inner.probe.error or 'see jvm-probe.error'}"
        return (
            f"no ThreadPool or Executor MBean named like {self.pool!r} in the JVM (pool in the declaration): "
            + NO_POOL_HINT
        )


def is_java(host, pid: int) -> bool:
    """pid runs java; where its host cannot tell (a host whose sampler reads the tree itself), taken as so."""
    tree = host.tree(pid)
    return not tree or is_java_process(tree[0])


def is_java_process(process) -> bool:
    try:
        return Path(process.exe()).name == "java" or process.name() == "java"
    except Exception:  # gone, or not ours to read: not the JVM to attach to
        return False
