"""A server on a host of its own (--hosts, role server; hosts/remote.py RemoteHost.server): the plug-in's command
line as for this machine, run on the host under the tether in a scratch directory holding a copy of the cell's
directory as it is at the start (Tomcat's rendered CATALINA_BASE), its console streamed back into the local log;
answers are checked from here, its process tree is sampled beside it (crossbench.sampling.stream) and what it
wrote there (Tomcat's logs, a JFR recording) comes back when it stops."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

from .. import oskit
from ..hosts.scratch import Scratch
from ..hosts.ssh import SshError, stop_tethered
from .lifecycle import RunningServer, ServerFailed, ServerSpec

PID_FILE = ".server.pid"
PID_WAIT_S = 10.0


class RemoteServer(RunningServer):
    """RunningServer's interface; `process` is the local ssh client of the tethered server (alive while it is)."""

    def __init__(self, spec: ServerSpec, host, cell_dir: Path):
        super().__init__(spec)
        self.host = host
        self.scratch = Scratch(host.ssh, cell_dir, "server")
        self.remote_pid: int | None = None
        self.log = None

    @property
    def pid(self) -> int:
        """The server's process id on its host (not on this machine)."""
        return self.remote_pid

    def start(self) -> "RemoteServer":
        self.scratch.create(upload=True)
        env = [f"{k}={v}" for k, v in self.spec.env.items()]
        argv = ["env", *self.scratch.translated(env), *oskit.taskset_prefix(self.spec.cpus),
                *self.scratch.translated(self.spec.argv)]
        self.spec.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log = open(self.spec.log_path, "ab")
        self.process = self.host.ssh.start_tethered(argv, pid_file=f"{self.scratch.remote}/{PID_FILE}",
                                                    stdout=self.log, stderr=subprocess.STDOUT)
        self.remote_pid = self.wait_for_pid()
        return self

    def wait_for_pid(self) -> int:
        deadline = time.monotonic() + PID_WAIT_S
        while time.monotonic() < deadline and self.process.poll() is None:
            done = self.scratch.call(["cat", f"{self.scratch.remote}/{PID_FILE}"], check=False)
            if done.returncode == 0 and done.stdout.strip():
                return int(done.stdout)
            time.sleep(0.1)
        raise ServerFailed(f"{self.spec.name} on {self.host.ssh.host.label} did not start:\n{self.log_tail()}")

    def sampler(self, out_csv: Path, interval_s: float, phase: str = "idle", pool_source=None,
                loadgen_pid_fn=None):
        """Its process tree sampled beside it on its host (no load generator runs there to sample)."""
        return self.host.sampler(self.remote_pid, out_csv, interval_s, phase, pool_source)

    def tree(self) -> list:
        return []            # on another host: its sampler says what the tree holds

    def stop(self, grace_s: float = 15.0) -> int | None:
        if self.process is None:
            return None
        returncode = stop_tethered(self.process, grace_s)
        if self.log:
            self.log.close()
        try:
            self.scratch.copy_back(keep_newer=True)
        except SshError as e:
            self.spec.log_path.with_suffix(".copy-back.error").write_text(str(e))
        return returncode
