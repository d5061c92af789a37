"""The progress line: cell i of N, what runs, its live figures (from the sampler), and the ETA."""

from __future__ import annotations

import sys
import threading
import time

CELL_OVERHEAD_GUESS_S = 5.0  # start, verify, stop: replaced by the measured mean once a cell has run


def fmt_duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600:d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class Progress:
    def __init__(self, total: int, planned_cell_s: float, stream=sys.stderr):
        self.total = total
        self.planned_cell_s = planned_cell_s  # warm-up + window of one cell
        self.stream = stream
        self.tty = stream.isatty()
        self.done = 0
        self.overheads: list[float] = []
        self._label = ""
        self._phase = ""
        self._phase_started = 0.0
        self._phase_length = 0.0
        self._sampler = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def eta_s(self, remaining_cells: int) -> float:
        overhead = sum(self.overheads) / len(self.overheads) if self.overheads else CELL_OVERHEAD_GUESS_S
        return remaining_cells * (self.planned_cell_s + overhead)

    def start_cell(self, index: int, label: str) -> None:
        self._label = f"[{index}/{self.total}] {label}"
        self._phase, self._sampler = "starting", None
        self._cell_started = time.monotonic()
        if not self._thread:
            self._thread = threading.Thread(target=self._loop, name="progress", daemon=True)
            self._thread.start()

    def phase(self, phase: str, sampler, length_s: float | None) -> None:
        """length_s None: the phase runs to a request count, not to a time."""
        self._phase, self._sampler = phase, sampler
        self._phase_started, self._phase_length = time.monotonic(), length_s

    def end_cell(self, summary: str) -> None:
        elapsed = time.monotonic() - self._cell_started
        self.overheads.append(max(0.0, elapsed - self.planned_cell_s))
        self.done += 1
        self._phase = ""
        self._write(f"{self._label}: {summary}", final=True)

    def line(self) -> str:
        parts = [self._label]
        if self._phase in ("warmup", "measure"):
            elapsed = time.monotonic() - self._phase_started
            parts.append(
                f"{self._phase} {elapsed:.0f}/{self._phase_length:.0f} s"
                if self._phase_length is not None
                else f"{self._phase} {elapsed:.0f} s, to its request count"
            )
        elif self._phase:
            parts.append(self._phase)
        sample = self._sampler.samples()[-1] if self._sampler and self._sampler.samples() else None
        if sample:
            cpu = f"{sample.cpu_percent:.0f}%" if sample.cpu_percent is not None else "-"
            lg = f"{sample.loadgen_cpu_percent:.0f}%" if sample.loadgen_cpu_percent is not None else "-"
            busy = f" busy {sample.pool_busy}" if sample.pool_busy is not None else ""
            threads = sample.threads if sample.threads is not None else "-"
            rss = f"{sample.rss_mb:.0f} MiB" if sample.rss_mb is not None else "-"
            parts.append(f"threads {threads}{busy} cpu {cpu} rss {rss} loadgen {lg}")
        parts.append(f"ETA {fmt_duration(self.eta_s(self.total - self.done) - self._in_cell_s())}")
        return " | ".join(parts)

    def _in_cell_s(self) -> float:
        return min(time.monotonic() - self._cell_started, self.planned_cell_s) if self._phase else 0.0

    def _loop(self) -> None:
        last_plain = 0.0
        while not self._stop.wait(1.0):
            if not self._phase:
                continue
            if self.tty:
                self._write(self.line())
            elif time.monotonic() - last_plain >= 15:  # logs and CI: a line now and then, not a flood
                last_plain = time.monotonic()
                self._write(self.line(), final=True)

    def _write(self, text: str, final: bool = False) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        self._stop.set()
