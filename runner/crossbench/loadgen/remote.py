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
import shlex
import subprocess
import time
import uuid
from pathlib import Path

from .. import paths
from ..hosts.ssh import SshHost, stop_tethered
from .base import LoadgenError, raw_path
from .process import Finished

COPY_LIMIT_S = 60.0
SETUP_LIMIT_S = 15.0


class LoadHost:
    """One load host: its SSH master (opened by the run), its clock offset (seconds to add to this machine's
    clock to read the host's), and the CPU figures of its last run."""

    def __init__(self, ssh: SshHost, clock_offset_s: float = 0.0):
        self.ssh = ssh
        self.clock_offset_s = clock_offset_s
        self.last_cpu_s: float | None = None
        self.last_wall_s: float | None = None
        self.last_start_s: float | None = None      # when the tool started, this machine's clock

    @property
    def label(self) -> str:
        return self.ssh.host.label

    def cpu_percent(self) -> float | None:
        """The tool's CPU over its last run (100 = one core), from the tether's report."""
        if self.last_cpu_s is None or not self.last_wall_s:
            return None
        return 100 * self.last_cpu_s / self.last_wall_s

    def translated(self, words: list[str], local_dir: Path, scratch: str) -> list[str]:
        """Words of a command or environment with this machine's paths as the host sees them."""
        repo, project = str(paths.REPO), str(self.ssh.host.project_dir)
        return [w.replace(str(local_dir), scratch).replace(repo, project) for w in words]

    def run_bounded(self, cmd: list[str], out_dir: Path, tool: str, limit_s: float, env: dict | None = None,
                    start_at: float | None = None) -> Finished:
        """As process.run_bounded, on the host; `start_at` (this machine's epoch) starts the tool then."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        scratch = f"/tmp/crossbench-load-{uuid.uuid4().hex[:12]}"
        self.call(["mkdir", "-p", scratch])
        try:
            self.upload_inputs(cmd, out_dir, scratch)
            return self._run(cmd, out_dir, tool, limit_s, env or {}, scratch, start_at)
        except BaseException:
            if self.ssh.master_answers():     # a lost connection leaves the scratch directory on the host
                self.call(["rm", "-rf", scratch], check=False)
            raise

    def _run(self, cmd, out_dir, tool, limit_s, env, scratch, start_at) -> Finished:
        setting = self.translated([f"{k}={v}" for k, v in env.items()], out_dir, scratch)
        argv = ["env", *setting, *self.translated(cmd, out_dir, scratch)]
        remote_start = start_at + self.clock_offset_s if start_at else None
        stdout, stderr = raw_path(out_dir, tool, "stdout"), raw_path(out_dir, tool, "stderr")
        report = raw_path(out_dir, tool, "tether.json")
        started = time.monotonic()
        with open(stdout, "wb") as out, open(stderr, "wb") as err:
            proc = self.ssh.start_tethered(argv, start_at=remote_start, report=f"{scratch}/.tether.json",
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
        self.copy_back(scratch, out_dir)
        self.read_report(out_dir / ".tether.json", report)
        return Finished(returncode, stdout, stderr, time.monotonic() - started)

    def upload_inputs(self, cmd: list[str], out_dir: Path, scratch: str) -> None:
        """Files of the cell's directory the command names (oha's list of URLs), copied to the scratch directory."""
        for word in cmd:
            local = Path(word.split("=", 1)[-1])
            if local.parent == out_dir and local.is_file():
                done = self.ssh.run(["sh", "-c", 'cat > "$1"', "sh", f"{scratch}/{local.name}"],
                                    timeout_s=SETUP_LIMIT_S, input=local.read_text())
                if done.returncode != 0:
                    raise LoadgenError(f"cannot copy {local.name} there: {done.stderr.strip()}")

    def copy_back(self, scratch: str, out_dir: Path) -> None:
        """Every file the tool wrote in the scratch directory, into the cell's directory (tar over the master);
        the scratch directory is removed on the host once packed."""
        pack = self.ssh.popen(["sh", "-c", 'tar -C "$1" -cf - . && rm -rf "$1"', "sh", scratch],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            unpack = subprocess.run(["tar", "-C", str(out_dir), "-xf", "-"], stdin=pack.stdout, capture_output=True,
                                    timeout=COPY_LIMIT_S)
            pack.stdout.close()
            pack.wait(timeout=COPY_LIMIT_S)
        except subprocess.TimeoutExpired:
            pack.kill()
            pack.wait()
            raise LoadgenError(f"copying the results back took over {COPY_LIMIT_S:.0f} s") from None
        if pack.returncode or unpack.returncode:
            raise LoadgenError(f"copying the results back failed: "
                               f"{pack.stderr.read().decode(errors='replace')}{unpack.stderr.decode(errors='replace')}")

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

    def call(self, argv: list[str], check: bool = True) -> None:
        done = self.ssh.run(argv, timeout_s=SETUP_LIMIT_S)
        if check and done.returncode != 0:
            raise LoadgenError(f"`{shlex.join(argv)}` failed: {done.stderr.strip()}")
