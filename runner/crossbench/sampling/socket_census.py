"""The kernel's view of one listening port, sampled in the background into sockets.csv: connections the
server side has established, the accept queue (connections the kernel completed that the server has not
accepted yet) and its limit, SYNs dropped because that queue was full, and the kernel's TCP memory.

What a client cannot tell apart (a connection the server accepted vs one waiting in the queue) is told
apart here."""

from __future__ import annotations

import csv
import subprocess
import threading
import time
from pathlib import Path

COLUMNS = (
    "t_epoch",
    "server_established",
    "accept_queue",
    "accept_queue_limit",
    "syn_recv",
    "listen_overflows",
    "listen_drops",
    "tcp_mem_pages",
)
SS_TIMEOUT_S = 5.0


def ss_lines(*args: str) -> list[str]:
    done = subprocess.run(["ss", "-Htn", *args], capture_output=True, text=True, timeout=SS_TIMEOUT_S)
    return [line for line in done.stdout.splitlines() if line.strip()]


def listen_queue(port: int) -> tuple[int | None, int | None]:
    """(Recv-Q, Send-Q) of the listening socket: for a listener, the accept queue now and its limit."""
    for line in ss_lines("-l", f"sport = :{port}"):
        fields = line.split()
        return int(fields[1]), int(fields[2])
    return None, None


def tcp_ext(text: str) -> dict[str, int]:
    """The TcpExt counters of /proc/net/netstat (a header line, then a value line)."""
    lines = [line.split() for line in text.splitlines() if line.startswith("TcpExt:")]
    if len(lines) < 2:
        return {}
    return {name: int(value) for name, value in zip(lines[0][1:], lines[1][1:])}


def tcp_mem_pages(text: str) -> int | None:
    """The `mem` field of the TCP line of /proc/net/sockstat (pages of kernel socket buffers, all sockets)."""
    for line in text.splitlines():
        if line.startswith("TCP:"):
            fields = line.split()
            return int(fields[fields.index("mem") + 1]) if "mem" in fields else None
    return None


def census(port: int) -> list:
    queue, limit = listen_queue(port)
    established = len(ss_lines("state", "established", f"( sport = :{port} )"))
    syn_recv = len(ss_lines("state", "syn-recv", f"( sport = :{port} )"))
    ext = tcp_ext(Path("/proc/net/netstat").read_text())
    mem = tcp_mem_pages(Path("/proc/net/sockstat").read_text())
    return [
        f"{time.time():.3f}",
        established,
        queue,
        limit,
        syn_recv,
        ext.get("ListenOverflows"),
        ext.get("ListenDrops"),
        mem,
    ]


def rows_here(sampling: SocketCensus):
    """`census(port)` on this machine every interval until the census stops."""
    while not sampling.stopping.is_set():
        try:
            row = census(sampling.port)
        except (OSError, subprocess.SubprocessError, ValueError):
            row = None
        if row:
            yield row
        sampling.stopping.wait(sampling.interval_s)


class SocketCensus:
    """Samples the port's census every interval into out_csv until stopped; use as a context manager. `source`
    yields the rows: this machine's (rows_here), or streamed from beside a server on its host (hosts/remote.py),
    their times on this machine's clock."""

    def __init__(self, port: int, out_csv: Path, interval_s: float = 1.0, source=rows_here):
        self.port, self.out_csv, self.interval_s, self.source = port, out_csv, interval_s, source
        self.rows: list[list] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="socket-census", daemon=True)

    def _run(self) -> None:
        with open(self.out_csv, "w", newline="", buffering=1) as f:
            table = csv.writer(f)
            table.writerow(COLUMNS)
            for row in self.source(self):
                self.rows.append(row)
                table.writerow(row)

    def peak(self, column: str) -> int | None:
        i = COLUMNS.index(column)
        values = [r[i] for r in self.rows if r[i] is not None]
        return max(values) if values else None

    def delta(self, column: str) -> int | None:
        i = COLUMNS.index(column)
        values = [r[i] for r in self.rows if r[i] is not None]
        return values[-1] - values[0] if values else None

    def __enter__(self) -> SocketCensus:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.thread.join(timeout=SS_TIMEOUT_S * 3 + 1)


def parsed(line: str, clock_offset_s: float) -> list | None:
    """One streamed census row, its time moved onto this machine's clock; None for the header or a cut line."""
    fields = line.strip().split(",")
    if len(fields) != len(COLUMNS) or fields[0] == COLUMNS[0]:
        return None
    try:
        return [f"{float(fields[0]) - clock_offset_s:.3f}", *(int(v) if v else None for v in fields[1:])]
    except ValueError:
        return None


def main(argv: list[str] | None = None) -> int:
    """The census of one port as CSV on stdout (header first), every interval, until stopped."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="crossbench.sampling.socket_census")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--interval-s", type=float, default=1.0)
    args = parser.parse_args(argv)
    table = csv.writer(sys.stdout)
    table.writerow(COLUMNS)
    while True:
        try:
            table.writerow(census(args.port))
        except (OSError, subprocess.SubprocessError, ValueError):
            pass
        sys.stdout.flush()
        time.sleep(args.interval_s)


if __name__ == "__main__":
    raise SystemExit(main())
