"""A load generator on a load host of its own, over the host's SSH master (crossbench.hosts).

The adapter builds its command as for this machine; `LoadHost.run_bounded` runs it on the host under the tether
(it dies with its SSH session: a Ctrl-C here, a lost connection), in a scratch directory there that stands for
the cell's directory here. Paths into the cell's directory and into this checkout are rewritten to the scratch
directory and the host's checkout; stdout and stderr stream back into the cell's raw files; the files the tool
wrote (wrk.json, oha.sqlite...) are copied back when it ends, and the scratch directory is removed. The tether
reports the tool's own CPU time, from which the host's CPU percent over the run is taken."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from ..hosts.scratch import COPY_LIMIT_S, Scratch
from ..hosts.ssh import SshError, SshHost, stop_tethered
from .base import LoadgenError, raw_path
from .process import Finished


class LoadHost:
    """One load host: its SSH master (opened by the run), its clock offset (seconds to add to this machine's
    clock to read the host's), and the CPU figures of its last run."""

    def __init__(self, ssh: SshHost, clock_offset_s: float = 0.0):
        self.ssh = ssh
        self.clock_offset_s = clock_offset_s
        self.last_cpu_s: float | None = None
        self.last_wall_s: float | None = None
        self.last_start_s: float | None = None      # when the tool started, this machine's clock
        self.last_argv: list[str] | None = None     # the command as the host ran it (its paths)

    @property
    def label(self) -> str:
        return self.ssh.host.label

    def cpu_percent(self) -> float | None:
        """The tool's CPU over its last run (100 = one core), from the tether's report."""
        if self.last_cpu_s is None or not self.last_wall_s:
            return None
        return 100 * self.last_cpu_s / self.last_wall_s

    def run_bounded(self, cmd: list[str], out_dir: Path, tool: str, limit_s: float, env: dict | None = None,
                    start_at: float | None = None) -> Finished:
        """As process.run_bounded, on the host; `start_at` (this machine's epoch) starts the tool then."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        scratch = Scratch(self.ssh, out_dir, "load")
        try:
            scratch.create()
            self.upload_inputs(cmd, out_dir, scratch.remote)
            finished = self._run(cmd, out_dir, tool, limit_s, env or {}, scratch, start_at)
            scratch.copy_back()
        except SshError as e:
            scratch.remove()
            raise LoadgenError(str(e)) from e
        except BaseException:
            scratch.remove()
            raise
        self.read_report(out_dir / ".tether.json", raw_path(out_dir, tool, "tether.json"))
        return finished

    def _run(self, cmd, out_dir, tool, limit_s, env, scratch: Scratch, start_at) -> Finished:
        argv = ["env", *scratch.translated([f"{k}={v}" for k, v in env.items()]), *scratch.translated(cmd)]
        self.last_argv = argv
        remote_start = start_at + self.clock_offset_s if start_at else None
        stdout, stderr = raw_path(out_dir, tool, "stdout"), raw_path(out_dir, tool, "stderr")
        started = time.monotonic()
        with open(stdout, "wb") as out, open(stderr, "wb") as err:
            proc = self.ssh.start_tethered(argv, start_at=remote_start, report=f"{scratch.remote}/.tether.json",
                                           stdout=out, stderr=err)
            try:
                returncode = proc.wait(timeout=limit_s + (max(0.0, start_at - time.time()) if start_at else 0))
            except subprocess.TimeoutExpired:
                stop_tethered(proc)
                raise LoadgenError(f"{tool} still running after its {limit_s:.0f} s bound; "
                                   f"stopped through its tether (raw output in {out_dir})") from None
            except BaseException:
                stop_tethered(proc)
                raise
        if returncode == 255 and not self.ssh.master_answers():
            raise LoadgenError(f"{tool}: the SSH connection was lost during the run")
        return Finished(returncode, stdout, stderr, time.monotonic() - started)

    def upload_inputs(self, cmd: list[str], out_dir: Path, remote_dir: str) -> None:
        """Files of the cell's directory the command names (oha's list of URLs), copied to the scratch directory."""
        for word in cmd:
            local = Path(word.split("=", 1)[-1])
            if local.parent == out_dir and local.is_file():
                done = self.ssh.run(["sh", "-c", 'cat > "$1"', "sh", f"{remote_dir}/{local.name}"],
                                    timeout_s=COPY_LIMIT_S, input=local.read_text())
                if done.returncode != 0:
                    raise LoadgenError(f"cannot copy {local.name} there: {done.stderr.strip()}")

    def read_report(self, copied: Path, keep_as: Path) -> None:
        self.last_cpu_s = self.last_wall_s = self.last_start_s = None
        if not copied.exists():
            return
        os.replace(copied, keep_as)
        try:
            report = json.loads(keep_as.read_text())
            self.last_cpu_s, self.last_wall_s = float(report["cpu_s"]), float(report["wall_s"])
            self.last_start_s = float(report["started_epoch"]) - self.clock_offset_s
        except (ValueError, KeyError, TypeError):
            pass
