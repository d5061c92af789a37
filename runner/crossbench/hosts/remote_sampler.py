"""A process tree sampled on a host of its own (RemoteHost), read back here: the stream sampler
(`python -m crossbench.sampling.stream`, sampling/stream.py) runs beside the process there under the tether and
writes its CSV rows to stdout; RemoteTreeSampler reads them back, moves their times onto this machine's clock and
labels them with the cell's phase as they arrive, with ProcessTreeSampler's interface."""

from __future__ import annotations

import csv
import io
import subprocess
import threading
from pathlib import Path

from ..sampling.process_tree import Sample, read_samples, sample_to_row
from ..sampling.samples import PhasedSampler
from .ssh import stop_tethered

POOL_MAX_AGE_S = 3.0  # as the local sampler: an older pool reading is not this sample's


class RemoteTreeSampler(PhasedSampler):
    """ProcessTreeSampler's interface (start/stop, set_phase, samples) over the lines of a remote stream."""

    def __init__(self, lines, clock_offset_s: float, out_csv: Path, phase: str = "idle", pool_source=None):
        self.lines = lines  # the remote stream's stdout, text lines
        self.clock_offset_s = clock_offset_s
        self.pool_source = pool_source  # the JVM probe beside the server: its connector pool, as here
        self.out_csv = Path(out_csv)
        super().__init__(phase)
        self._thread: threading.Thread | None = None

    def start(self) -> RemoteTreeSampler:
        self._thread = threading.Thread(target=self._read, name="remote-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        if self._thread:
            self._thread.join(timeout=timeout_s)

    def _read(self) -> None:
        header = None
        with open(self.out_csv, "a", newline="") as out:
            writer = csv.writer(out)
            for line in self.lines:
                if header is None:
                    header = line
                    out.write(line)
                    continue
                sample = self.parsed(header, line)
                if sample is None:
                    continue
                with self._lock:
                    self._samples.append(sample)
                writer.writerow(sample_to_row(sample))
                out.flush()

    def parsed(self, header: str, line: str) -> Sample | None:
        """One remote row on this machine's clock, with the phase the cell is in now."""
        rows = read_samples(io.StringIO(header + line), "the remote sampler")
        if not rows:
            return None
        remote = rows[0]
        phase = self.phase
        reading = self.pool_source.latest() if self.pool_source else None
        t_epoch = remote.t_epoch - self.clock_offset_s
        fresh = reading is not None and abs(t_epoch - reading.t_epoch) <= POOL_MAX_AGE_S
        return Sample(
            **{
                **remote.__dict__,
                "t_epoch": t_epoch,
                "phase": phase,
                "pool_current": reading.current if fresh else None,
                "pool_busy": reading.busy if fresh else None,
            }
        )


class TetheredSampler(RemoteTreeSampler):
    """The stream sampler started beside a process on its host (`host`: ssh, clock_offset_s), read back here."""

    def __init__(self, host, pid: int, out_csv: Path, interval_s: float, phase: str, pool_source=None):
        argv = host.ssh.host.module_argv(
            "crossbench.sampling.stream", "--pid", str(pid), "--interval-s", f"{interval_s:g}"
        )
        self.proc = host.ssh.start_tethered(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        super().__init__(
            io.TextIOWrapper(self.proc.stdout, encoding="utf-8"), host.clock_offset_s, out_csv, phase, pool_source
        )

    def stop(self, timeout_s: float = 5.0) -> None:
        stop_tethered(self.proc)
        super().stop(timeout_s)
