"""A role's working directory on its host: a scratch directory there standing for a directory here. Commands are
rewritten to it (and this checkout to the host's), files go there before a run and come back after it, by tar
through the host's SSH master."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

from .. import paths
from .ssh import SshError, SshHost

COPY_LIMIT_S = 120.0
CALL_LIMIT_S = 15.0


class Scratch:
    def __init__(self, ssh: SshHost, local_dir: Path, kind: str):
        self.ssh = ssh
        self.local_dir = Path(local_dir)
        self.remote = f"/tmp/crossbench-{kind}-{uuid.uuid4().hex[:12]}"

    def translated(self, words: list[str]) -> list[str]:
        """Words of a command or an environment with this machine's paths as the host sees them."""
        repo, project = str(paths.REPO), str(self.ssh.host.project_dir)
        return [w.replace(str(self.local_dir), self.remote).replace(repo, project) for w in words]

    def create(self, upload: bool = False) -> None:
        """The directory on the host; with `upload`, holding a copy of the local directory's files."""
        if upload:
            send_tree(self.ssh, self.local_dir, self.remote)
        else:
            self.call(["mkdir", "-p", self.remote])

    def copy_back(self, remove: bool = True, keep_newer: bool = False) -> None:
        """Every file in the directory on the host, into the local directory; then (`remove`) gone from the host.
        `keep_newer`: a local file changed since the upload (a log streamed here) is not replaced."""
        script = 'tar -C "$1" -cf - .' + (' && rm -rf "$1"' if remove else "")
        pack = self.ssh.popen(
            ["sh", "-c", script, "sh", self.remote],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            keep = ["--keep-newer-files"] if keep_newer else []
            unpack = subprocess.run(
                ["tar", "-C", str(self.local_dir), *keep, "-xf", "-"],
                stdin=pack.stdout,
                capture_output=True,
                timeout=COPY_LIMIT_S,
            )
            pack.stdout.close()
            pack.wait(timeout=COPY_LIMIT_S)
        except subprocess.TimeoutExpired:
            pack.kill()
            pack.wait()
            raise SshError(
                f"{self.ssh.host.label}: copying {self.remote} back took over {COPY_LIMIT_S:.0f} s"
            ) from None
        if pack.returncode or unpack.returncode:
            raise SshError(
                f"{self.ssh.host.label}: copying {self.remote} back failed: "
                f"{pack.stderr.read().decode(errors='replace')}{unpack.stderr.decode(errors='replace')}"
            )

    def remove(self) -> None:
        """Best effort: a lost connection leaves the directory on the host (in /tmp)."""
        if self.ssh.master_answers():
            self.call(["rm", "-rf", self.remote], check=False)

    def read(self, name: str) -> str:
        done = self.call(["cat", f"{self.remote}/{name}"])
        return done.stdout

    def call(self, argv: list[str], check: bool = True) -> subprocess.CompletedProcess:
        done = self.ssh.run(argv, timeout_s=CALL_LIMIT_S)
        if check and done.returncode != 0:
            raise SshError(f"{self.ssh.host.label}: `{' '.join(argv)}` failed: {done.stderr.strip()}")
        return done


TAR_FILE_CHANGED = 1  # GNU tar --create: some files changed while they were read


def send_tree(
    ssh: SshHost, local_dir: Path, remote_dir: str, excludes: tuple[str, ...] = (), limit_s: float = COPY_LIMIT_S
) -> None:
    """The files of local_dir into remote_dir on the host (made if missing), by tar through the host's master."""
    # A file that changes while it is read (a run writing into the checkout beside the copy) is copied as tar read
    # it: GNU tar then exits 1, which is not a failed copy
    pack = subprocess.Popen(
        [
            "tar",
            "-C",
            str(local_dir),
            *(f"--exclude={e}" for e in excludes),
            "--warning=no-file-changed",
            "-cf",
            "-",
            ".",
        ],
        stdout=subprocess.PIPE,
    )
    unpack = ssh.popen(
        ["sh", "-c", 'mkdir -p "$1" && tar -C "$1" -xf -', "sh", remote_dir],
        stdin=pack.stdout,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    pack.stdout.close()
    try:
        unpack.wait(timeout=limit_s)
        pack.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        for proc in (pack, unpack):
            proc.kill()
            proc.wait()
        raise SshError(f"{ssh.host.label}: copying {local_dir} to {remote_dir} took over {limit_s:.0f} s") from None
    if unpack.returncode or pack.returncode not in (0, TAR_FILE_CHANGED):
        raise SshError(
            f"{ssh.host.label}: copying {local_dir} to {remote_dir} failed: "
            f"{unpack.stderr.read().decode(errors='replace').strip()}"
        )
