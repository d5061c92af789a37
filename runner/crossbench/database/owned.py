"""What the run's database and its pooler share: a process of the run's own, started in the foreground in a
session of its own, with a log file, stopped when the `with` block ends (or when its start fails)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..sampling.process_tree import ProcessTreeSampler


class OwnedProcess:
    """Subclasses set `process` and `log_path`, and give start() (returning self) and stop()."""

    process: subprocess.Popen | None = None
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def sampler(self, out_csv: Path, interval_s: float) -> ProcessTreeSampler | None:
        """Its process tree sampled into out_csv beside the server's; None once it has stopped."""
        return ProcessTreeSampler(self.pid, interval_s=interval_s, out_csv=out_csv) if self.alive() else None

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def start(self):
        raise NotImplementedError

    def stop(self) -> int | None:
        raise NotImplementedError

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()
