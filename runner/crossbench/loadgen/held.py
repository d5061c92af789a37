"""A held window: one closed-loop process runs the cell's own load before, through and after the window, and the
window is cut from its per-request rows, so it describes the steady state the concurrency makes however long the
queue. (An open-loop held window, a capacity search's, is simpler: its rate is the generator's, so the window is
the requests its schedule fired inside it, `from_window_start`; the load before it opens the connection pool.)

Why: a window that opens with a fresh generator opens on an empty queue. Tomcat with 200 threads under 1000 clients
at a 1 s delay then answers in waves of 200 at 1, 2, ... s, the first five with latencies of 1 to 5 s; a 10 s window
reads 180 req/s and a mean of 3.9 s (ratios 5.56 and 3.9) where the steady state is 200 req/s and 5 s (5.0 both).

The cut (`cut`):
- the cold start is over once every connection's first request has been answered (the first `concurrency` rows by
  send time: each connection sends its second only after its first is answered), and the queue has settled once
  every request sent before that has been answered too: from then on every request in flight was sent into a
  queue the load made, not the cold burst. The window opens at the later of that and the planned held time
  (LoadSpec.held_s), so it is observed, never only guessed. Opening at the first mark alone read Tomcat's 20
  threads under 100 clients at 200 ms as 4.56 for a truth of 5.0: Tomcat's keep-alive threads serve some
  connections ahead of the queue, and the burst's stragglers were still in flight;
- it closes a window's length later (at most a quarter of the way into the tail when it opened late), the load going on
  after it so that the requests sent inside it finish under the same load (the queue drains faster once nobody
  sends, which would read them short);
- throughput credits each request with the share of its life inside the window (an answer inside it counts 1, one
  straddling an edge its share), so connections moving in step do not make the count jump by a wave at the edge
  (Tornado's 100 clients at 250 ms: 400 answers a second by count in a 3 s window, 384 credited, for a latency of
  260 ms: Little's law's 385); latency is that of the requests sent inside it, each waited for. The window's edges
  cost no round trip.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import LoadResult
from .openloop import Request, latency, shifted

# A window shorter than this share of the one planned (the queue turned over late) is said in the record
SHORT_WINDOW_SHARE = 0.5
# How far a window that opened late may move into the tail: the rest (1.5 slowest answers behind a pool) is for
# its own requests to be answered under load, a pool's slowest in steady state being 1.2 of them (Tomcat's 20
# threads under 100 clients settled at 3.7 s for a planned 2.5 s; half the tail left 1.0, and 14 of 385 answers
# came after the load stopped)
INTO_TAIL = 0.25


@dataclass(frozen=True)
class HeldWindow:
    """The window cut from a held run: its rows and where it lay in the run (seconds from the run's start)."""

    opened_s: float  # the window's start: max(held_s, settled_s)
    closed_s: float  # a window later (at most a quarter of the way into the tail)
    turned_over_s: float | None  # when every connection's first request had been answered
    settled_s: float | None  # when every request sent before that had been answered too
    answered: list[Request]  # requests that ended inside the window (the record's count)
    credited: float  # requests credited with the share of their life inside it: the throughput
    sent: list[Request]  # requests sent inside it: the latency's samples, each waited for
    finished_after_load: int  # of `sent`, how many ended after the load stopped (their latency may read low)

    @property
    def length_s(self) -> float:
        return max(0.0, self.closed_s - self.opened_s)

    @property
    def rate(self) -> float:
        """Answers per second inside the window, credited by share of life."""
        return self.credited / self.length_s if self.length_s > 0 else 0.0

    def figures(self, planned_s: float, load_stopped_s: float) -> dict:
        """The window's account, for the record (held_window)."""
        return {
            "opened_s": round(self.opened_s, 3),
            "closed_s": round(self.closed_s, 3),
            "turned_over_s": None if self.turned_over_s is None else round(self.turned_over_s, 3),
            "settled_s": None if self.settled_s is None else round(self.settled_s, 3),
            "planned_s": planned_s,
            "load_stopped_s": round(load_stopped_s, 3),
            "answered": len(self.answered),
            "credited": round(self.credited, 2),
            "sent": len(self.sent),
            "finished_after_load": self.finished_after_load,
            "short": self.length_s < SHORT_WINDOW_SHARE * planned_s,
        }


def turned_over(rows: list[Request], concurrency: int) -> float | None:
    """When the first `concurrency` requests sent (each connection's first) had all been answered; None when
    fewer were answered (the queue never turned over within the run)."""
    if len(rows) < concurrency:
        return None
    first = sorted(rows, key=lambda r: r.start_s)[:concurrency]
    return max(r.end_s for r in first)


def settled(rows: list[Request], over: float | None) -> float | None:
    """When every request sent before the cold start was over (`over`) had been answered."""
    if over is None:
        return None
    return max([r.end_s for r in rows if r.start_s < over], default=over)


def cut(rows: list[Request], *, concurrency: int, held_s: float, window_s: float, load_stopped_s: float) -> HeldWindow:
    """The window of a held run (module docstring); rows' times are seconds from the run's start. A queue that
    settled after held_s moves the window later, into the tail, as far as a quarter of it (INTO_TAIL): the rest stays for the
    window's own requests to be answered under load."""
    over = turned_over(rows, concurrency)
    calm = settled(rows, over)
    latest_close = load_stopped_s - (1 - INTO_TAIL) * (load_stopped_s - held_s - window_s)
    opened = max(held_s, calm if calm is not None else load_stopped_s)
    closed = max(held_s + window_s, min(opened + window_s, latest_close))
    opened = min(opened, closed)
    answered = [r for r in rows if opened <= r.end_s < closed]
    sent = [r for r in rows if opened <= r.start_s < closed]
    late = sum(1 for r in sent if r.end_s > load_stopped_s)
    return HeldWindow(
        opened, closed, over, calm, answered, sum(share_inside(r, opened, closed) for r in rows), sent, late
    )


def share_inside(row: Request, opened: float, closed: float) -> float:
    """The share of a request's life (send to answer) inside [opened, closed)."""
    life = row.end_s - row.start_s
    if life <= 0:
        return 1.0 if opened <= row.end_s < closed else 0.0
    return max(0.0, min(row.end_s, closed) - max(row.start_s, opened)) / life


def from_window_start(rows: list[Request], held_s: float) -> list[Request]:
    """An open-loop held run's rows with their times from the window's start (the window is the requests its
    schedule fired inside it: nothing to settle, the rate is the generator's, and the pool's connections were
    opened by the load before it)."""
    return shifted(rows, -held_s)


def window_of(rows: list[Request], concurrency: int, spec: dict) -> tuple[HeldWindow, float, float]:
    """A held run's window (cut) as its spec file gives the run (held_s, window_s, tail_s), with the window planned
    and when the load stopped, seconds from the run's start."""
    held_s, window_s = float(spec.get("held_s") or 0.0), float(spec["window_s"])
    stopped = held_s + window_s + float(spec.get("tail_s") or 0.0)
    return (
        cut(rows, concurrency=concurrency, held_s=held_s, window_s=window_s, load_stopped_s=stopped),
        window_s,
        stopped,
    )


def run_figures(rows: list[Request], concurrency: int, spec: dict) -> dict:
    """A held run's window (cut) as a LoadResult's figures, for any generator that holds one (oha, k6): answers and
    bytes inside it, latency of the requests sent inside it, its account, and its bounds as this machine's epochs
    (the cell's samplers). `spec`: held_s, window_s, tail_s, and launched_at (the epoch the rows' times start at)."""
    window, window_s, stopped = window_of(rows, concurrency, spec)
    launched = float(spec.get("launched_at") or 0.0)
    return {
        "requests": len(window.answered),
        "duration_s": window.length_s,
        "rate": window.rate,
        "bytes": sum(r.bytes for r in window.answered),
        "latency_ms": latency(window.sent),
        "non_2xx": sum(1 for r in window.answered if not 200 <= r.status < 300),
        "extra": {
            "held_window": window.figures(window_s, stopped),
            "concurrency": concurrency,
            "run_requests": len(rows),
            "window_epoch": [launched + window.opened_s, launched + window.closed_s],
        },
    }


def load_result(
    figures: dict,
    *,
    tool: str,
    tool_version: str,
    errors: dict[str, int],
    latency_source: str,
    extra: dict,
    raw_files: tuple[str, ...],
    bytes: int | None = None,
) -> LoadResult:
    """A held closed-loop run's LoadResult from its window's figures (run_figures), for any generator that holds
    one: the answers, window, rate, bytes and latency of the cut; the errors the generator counted over the whole
    run, with the window's answers other than 2xx as non_2xx; the window's account and what the generator adds in
    extra. `bytes`: the generator's own count where its rows carry none (k6)."""
    return LoadResult(
        tool=tool,
        tool_version=tool_version,
        requests=figures["requests"],
        duration_s=figures["duration_s"],
        bytes=figures["bytes"] if bytes is None else bytes,
        errors={**errors, "non_2xx": figures["non_2xx"]},
        latency_ms=figures["latency_ms"],
        window_rate=figures["rate"],
        latency_source=latency_source,
        extra={**figures["extra"], **extra},
        raw_files=raw_files,
    )
