"""How quiet the machine was during a cell's window, and what happened on the wire: two snapshots of the kernel's
counters (per-core CPU times with steal from /proc/stat through psutil, TCP passive opens from /proc/net/snmp,
the runner's own CPU), one as the window opens and one as it closes.

- steal: time the hypervisor gave this VM's cores to someone else; the figures of a cell with much of it are
  another tenant's as much as the server's.
- foreign CPU: the busy time of the cell's cores minus what the runner's own process tree (server, database,
  proxy, pooler, JVM probe, the runner itself) and the load generator used: another process of this machine
  competing with the measurement.
- noise impact: what that foreign CPU can do to the cell's figures, role by role (NOISE_IMPACT_LIMIT below).
- passive opens: TCP connections this machine accepted in the window (the server's, and nginx's when it stands
  in front), hence requests per connection: a keep-alive cell whose server closes every connection is really
  connection-per-request (gunicorn's sync workers answer each request with Connection: close).
"""

from __future__ import annotations

import functools
import gzip
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from crossbench.flags import NOISY_HOST, SERVER_CLOSED

from ..refusal import Refusal
from . import core_speed
from .proc_readers import passive_opens

STEAL_LIMIT_PERCENT = 2.0  # of the cell's cores' time: above it a cell whose roles share cores is flagged
# How much foreign CPU may move a cell's headline before the cell is flagged noisy_host: the precision target's
# default (5 %). A role (the server, the load generator) pinned to its own cores loses the foreign time that fell
# when it wanted its cores, times the share of them it needs. When it wanted them is read from how the time the
# foreign process left was split: the role's busy share over its busy and idle shares. A CPU-bound server (its core
# never idle) sharing its core with a process that takes 10 % of it answers about 10 % less, twice the target; a
# server waiting on a delay that uses 5 % of a core idle 45 % of the time barely notices a process taking 50 %
# (docs/methods.md: the planted-load study). Steal is time the vCPU wanted and did not get, so all of it counts,
# weighed by the share of the cores the role needs: steal on a core a waiting server barely uses does not flag it.
# noise_impact_percent is the larger of the two roles'.
NOISE_IMPACT_LIMIT = 5.0
FOREIGN_LIMIT_PERCENT = 10.0  # of one core over the cell's cores: the limit when the roles share cores
FLOOR_SECONDS = 2.0  # each of the floor's two parts (busy and steal, then core speed); $CROSSBENCH_NOISE_FLOOR_S
FLOOR_SECONDS_ENV = "CROSSBENCH_NOISE_FLOOR_S"
# A keep-alive client opens at most `concurrency` connections (plus the harness's one probe) while the server
# keeps them; a quarter more is past any such slack. An open-loop cell's concurrency is oha's cap (2000 in the
# openloop experiment): a server that closes idle connections (uvicorn after 5 s) makes an open-loop client open
# one per request at low rates, as many as its requests, which a bound of twice the cap would miss.
CLOSED_OPENS_SLACK = 1.25
# A cell that opened its pool before the window (an open-loop held window) opens none inside it while the server
# keeps them; a few, and a small share of the pool (the harness's probe), are slack, more is a window whose requests
# paid for new connections. A server that closes a connection after so many requests (Tomcat's
# maxKeepAliveRequests, 100) has its clients open another: that is the server's keep-alive, not the pool's failure,
# and it shows as many requests for each connection opened (Tomcat's 60 s confirmations: 133)
OPENED_IN_WINDOW = "connections_in_window"
OPENED_IN_WINDOW_SLACK = 0.02
OPENED_IN_WINDOW_FEW = 3
OPENED_IN_WINDOW_REUSED = 20  # requests for each connection opened in the window: the pool was reused


@dataclass(frozen=True)
class Snapshot:
    t: float
    cores: list[tuple[float, float, float]]  # per core: (total, busy, steal) seconds; busy as busy_seconds says
    passive_opens: int | None
    ours: dict[tuple[int, float], float]  # the runner and every process under it: CPU seconds by identity
    pinned: dict[tuple[int, float], tuple[int, ...]] = field(default_factory=dict)  # their cores, by identity

    @classmethod
    def take(cls) -> Snapshot:
        import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

        cores = []
        for times in psutil.cpu_times(percpu=True):
            total = sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
            cores.append((total, busy_seconds(times), getattr(times, "steal", 0.0)))
        ours, pinned = our_processes()
        return cls(time.monotonic(), cores, passive_opens(), ours, pinned)


def busy_seconds(times) -> float:
    """A core's busy time on the same footing as processes' CPU times: user, nice and system, and interrupt time
    when this kernel charges it to the process it interrupted (this_kernel_charges_interrupts). Our processes'
    times then hold the loopback work their packets cost, and the core's busy time must hold it too, or that work
    would hide as much foreign CPU."""
    busy = times.user + times.nice + times.system
    if this_kernel_charges_interrupts():
        busy += getattr(times, "irq", 0.0) + getattr(times, "softirq", 0.0)
    return busy


@functools.cache
def this_kernel_charges_interrupts() -> bool | None:
    """charges_interrupts of the running kernel's configuration (/proc/config.gz, else /boot/config-RELEASE);
    None when neither can be read."""
    return charges_interrupts(kernel_config())


def charges_interrupts(config: str | None) -> bool | None:
    """Whether a kernel built with this configuration charges interrupt time to the process it interrupted.
    Without CONFIG_IRQ_TIME_ACCOUNTING a tick that lands in an interrupt is added to the running process's system
    time and to the core's irq or softirq time, not its system time; with it, interrupt time is measured apart
    and charged to no process. When a core was idle the tick goes to the idle task: that share of interrupt time
    then reads as foreign (a few percent of a core on a cell of many small packets)."""
    if config is None:
        return None
    return "CONFIG_IRQ_TIME_ACCOUNTING=y" not in config.splitlines()


def kernel_config() -> str | None:
    try:
        with gzip.open("/proc/config.gz", "rt") as packed:
            return packed.read()
    except OSError:
        pass
    try:
        return Path(f"/boot/config-{os.uname().release}").read_text()
    except OSError:
        return None


def our_processes() -> tuple[dict[tuple[int, float], float], dict[tuple[int, float], tuple[int, ...]]]:
    """CPU seconds of the runner and every process under it (server, database, proxy, probe, ...), and the cores
    each may run on, keyed by (pid, start time) so a pid reused in the window is not mistaken for the same."""
    import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

    me = psutil.Process()
    found, pinned = {}, {}
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
            key = (process.pid, process.create_time())
            found[key] = times.user + times.system
            pinned[key] = tuple(process.cpu_affinity())
        except psutil.Error:
            continue
    return found, pinned


def window(before: Snapshot, after: Snapshot, cores: tuple[int, ...], loadgen_percent: float) -> dict:
    """steal_percent (of the cores' time) and foreign_cpu_percent (percent of one core, summed over the cores),
    over the cores the cell pinned (all cores when it pinned none). Foreign is the cores' user and system time
    less ours: every process of the runner's tree that lived through the window, and the load generator (from
    the sampler: it starts and ends inside the window). Interrupt time is in both or in neither (busy_seconds)."""
    wanted = cores or tuple(range(len(after.cores)))
    wall = after.t - before.t
    deltas = [tuple(b - a for a, b in zip(before.cores[c], after.cores[c])) for c in wanted if c < len(after.cores)]
    total = sum(d[0] for d in deltas)
    if wall <= 0 or total <= 0:
        return {"steal_percent": None, "foreign_cpu_percent": None, "harness_cpu_percent": None}
    busy_percent = sum(d[1] for d in deltas) / wall * 100
    ours_percent = sum(after.ours[k] - before.ours[k] for k in after.ours.keys() & before.ours.keys()) / wall * 100
    me = [k for k in after.ours if k[0] == os.getpid()]
    harness = sum(after.ours[k] - before.ours.get(k, after.ours[k]) for k in me) / wall * 100
    return {
        "steal_percent": round(sum(d[2] for d in deltas) / total * 100, 2),
        "foreign_cpu_percent": round(max(0.0, busy_percent - ours_percent - (loadgen_percent or 0.0)), 1),
        "harness_cpu_percent": round(harness, 1),
    }


def noise_impact(
    before: Snapshot, after: Snapshot, roles: dict[str, tuple[int, ...]], loadgen_percent: float
) -> float | None:
    """The most a role's figures can have lost to foreign CPU and steal, percent: for each role on cores of its
    own, the share of its cores taken from it times the share of them the role itself used; None when the roles
    share cores (no way to tell whose core the foreign time took). Taken: the foreign time (the cores' busy time
    less our processes pinned inside them and the load generator's own) times the chance the role wanted its cores
    then (its busy share over its busy and idle shares), and the time the hypervisor stole."""
    if not roles or len({c for cores in roles.values() for c in cores}) < sum(len(c) for c in roles.values()):
        return None
    wall = after.t - before.t
    if wall <= 0:
        return None
    impacts = []
    for role, cores in roles.items():
        cores = tuple(c for c in cores if c < len(after.cores))
        if not cores:
            continue
        busy = sum(after.cores[c][1] - before.cores[c][1] for c in cores) / wall * 100
        own = (
            sum(
                after.ours[k] - before.ours[k]
                for k in after.ours.keys() & before.ours.keys()
                if after.pinned.get(k) and set(after.pinned[k]) <= set(cores)
            )
            / wall
            * 100
        )
        own += loadgen_percent if role == "loadgen" else 0.0
        capacity = 100.0 * len(cores)
        foreign = max(0.0, busy - own) / capacity
        used, idle = min(1.0, own / capacity), idle_share(before, after, cores)
        wanted = used / (used + idle) if used + idle > 0 else 0.0
        taken = foreign * wanted + steal_share(before, after, cores)
        impacts.append(taken * used * 100)
    return round(max(impacts), 2) if impacts else None


def idle_share(before: Snapshot, after: Snapshot, cores: tuple[int, ...]) -> float:
    """The share of these cores' time nothing ran on them: their time less busy (as busy_seconds counts it) and
    steal. On a kernel that does not charge interrupts to processes their time counts as idle here (a few % of a
    core on network-heavy cells)."""
    total = sum(after.cores[c][0] - before.cores[c][0] for c in cores)
    idle = sum(
        (after.cores[c][0] - before.cores[c][0])
        - (after.cores[c][1] - before.cores[c][1])
        - (after.cores[c][2] - before.cores[c][2])
        for c in cores
    )
    return max(0.0, idle) / total if total > 0 else 0.0


def steal_share(before: Snapshot, after: Snapshot, cores: tuple[int, ...]) -> float:
    """The share of these cores' time the hypervisor gave to someone else in the window."""
    total = sum(after.cores[c][0] - before.cores[c][0] for c in cores)
    stolen = sum(after.cores[c][2] - before.cores[c][2] for c in cores)
    return max(0.0, stolen) / total if total > 0 else 0.0


def connections(before: Snapshot, after: Snapshot, requests: int | None) -> dict:
    if before.passive_opens is None or after.passive_opens is None:
        return {"tcp_passive_opens": None, "requests_per_connection": None}
    opened = after.passive_opens - before.passive_opens
    return {
        "tcp_passive_opens": opened,
        "requests_per_connection": round(requests / opened, 2) if requests and opened else None,
    }


def flags(figures: dict, keepalive: bool, concurrency: int, pool_before_window: bool = False) -> list[str]:
    """noisy_host; server_closed_connections; and, for a cell whose keep-alive connections were all opened
    before its window (`pool_before_window`: an open-loop held window), connections_in_window when the machine
    accepted more than a few inside it and the window's requests did not reuse them."""
    found = []
    if foreign_too_much(figures):
        found.append(NOISY_HOST)
    per_connection = figures.get("requests_per_connection")
    if (
        keepalive
        and per_connection is not None
        and per_connection < 2
        and (figures.get("tcp_passive_opens") or 0) > CLOSED_OPENS_SLACK * concurrency + 2
    ):
        found.append(SERVER_CLOSED)
    opened = figures.get("tcp_opens_in_window")
    if (
        keepalive
        and pool_before_window
        and SERVER_CLOSED not in found
        and opened is not None
        and opened > max(OPENED_IN_WINDOW_FEW, OPENED_IN_WINDOW_SLACK * concurrency)
        and (figures.get("requests") or 0) < OPENED_IN_WINDOW_REUSED * opened
    ):
        found.append(OPENED_IN_WINDOW)  # a server that closes every connection (gunicorn's sync workers) opens
    return found  # them itself: that is what it does, said by server_closed_connections


def foreign_too_much(figures: dict) -> bool:
    """Foreign CPU and steal that could move the headline past the precision target (noise_impact_percent, roles
    on cores of their own: a cell waiting on a delay is not flagged for steal a CPU-bound one would feel), or,
    when the roles share cores, foreign CPU past FOREIGN_LIMIT_PERCENT of a core or steal past
    STEAL_LIMIT_PERCENT of their time."""
    impact = figures.get("noise_impact_percent")
    if impact is not None:
        return impact > NOISE_IMPACT_LIMIT
    return (figures.get("foreign_cpu_percent") or 0) > FOREIGN_LIMIT_PERCENT or (
        figures.get("steal_percent") or 0
    ) > STEAL_LIMIT_PERCENT


class BadFloorLength(Refusal, ValueError):
    """$CROSSBENCH_NOISE_FLOOR_S is not a length the floor can use."""


def floor_seconds() -> float:
    """How long each part of the floor lasts: FLOOR_SECONDS, or $CROSSBENCH_NOISE_FLOOR_S (the tests' runs
    shorten it: they check the figures are there, not how quiet the machine is)."""
    text = os.environ.get(FLOOR_SECONDS_ENV)
    if text is None:
        return FLOOR_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0.1 <= seconds <= 60:
        raise BadFloorLength(f"{FLOOR_SECONDS_ENV}={text!r}: give the noise floor's length in seconds, 0.1 to 60")
    return seconds


def floor(seconds: float | None = None) -> dict:
    """The machine's own noise before the run (recorded in metadata.json as noise_floor): busy and steal
    percent of all cores with nothing of ours running, then how steady each core's speed is (core_speed.py),
    each for `seconds` (floor_seconds())."""
    seconds = floor_seconds() if seconds is None else seconds
    before = Snapshot.take()
    time.sleep(seconds)
    after = Snapshot.take()
    figures = window(before, after, (), 0.0)
    return {
        "seconds": seconds,
        "cores": len(after.cores),
        "steal_percent": figures["steal_percent"],
        "busy_cpu_percent": figures["foreign_cpu_percent"],
        "interrupts_charged_to_processes": this_kernel_charges_interrupts(),
        "impact_weighs_idle_room": True,  # noise_impact: foreign time counts as far as the role wanted its cores
        "limits": {
            "steal_percent": STEAL_LIMIT_PERCENT,
            "foreign_cpu_percent": FOREIGN_LIMIT_PERCENT,
            "noise_impact_percent": NOISE_IMPACT_LIMIT,
        },
        "core_speed": core_speed.measure(sorted(os.sched_getaffinity(0)), seconds),
    }
