"""Before a run on several hosts: each host reachable, its tools and the project's checkout present, its clock
close enough to ours, and the network between the roles measured. Refuses (HostsError, every problem of a kind
at once) before anything starts; otherwise returns what the run's metadata records."""

from __future__ import annotations

import contextlib
import json
import select
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .hostsfile import Host, Hosts, HostsError
from .ssh import SshHost, open_masters, stop_tethered

COMMAND_TIMEOUT_S = 15.0
CLOCK_SAMPLES = 5
RTT_CONNECTS = 5
CLOCK_LIMIT_MIN_S = 0.05
CLOCK_LIMIT_SHARE = 0.01  # of the measurement window
ALWAYS_NEEDED = ("python3",)  # the tether, the facts and the round-trip timer run on the host's own python3
TETHER = Path("runner", "crossbench", "hosts", "tether.py")
FACTS = Path("runner", "crossbench", "hosts", "facts.py")  # standard library only: it runs alone on a host
PROJECT_MISSING = "@project"
MISSING_TOOLS = (
    'test -r "$1" || echo '
    + PROJECT_MISSING
    + '; shift; for tool in "$@"; do command -v "$tool" >/dev/null 2>&1 || echo "$tool"; done'
)
# Answers each line on stdin with the host's clock (python3, not `date`: no process start per reading).
CLOCK_ECHO = "import sys, time\nfor _ in sys.stdin:\n    print(repr(time.time()), flush=True)"
# Times TCP connects (SYN to SYN-ACK: the kernel answers, no server code) to a host and port; a refusal is a
# round trip too. Prints the samples in ms as JSON.
RTT_TIMER = """
import json, socket, sys, time
family, kind, proto, _, address = socket.getaddrinfo(sys.argv[1], int(sys.argv[2]), type=socket.SOCK_STREAM)[0]
samples = []
for _ in range(int(sys.argv[3])):
    with socket.socket(family, kind, proto) as sock:
        sock.settimeout(2)
        start = time.perf_counter()
        try:
            sock.connect(address)
        except ConnectionRefusedError:
            pass
        samples.append(round((time.perf_counter() - start) * 1000, 3))
print(json.dumps(samples))
"""


@dataclass(frozen=True)
class ClockReading:
    offset_s: float  # the host's clock minus ours
    uncertainty_s: float  # half the round trip of the reading kept
    round_trip_s: float


def clock_limit_s(window_s: float) -> float:
    return max(CLOCK_LIMIT_MIN_S, CLOCK_LIMIT_SHARE * window_s)


def check_hosts(
    hosts: Hosts, tools_by_role: dict[str, list[str]], window_s: float, connections: dict[Host, SshHost] | None = None
) -> dict:
    """Every check for every remote host. `tools_by_role` names the roles the run uses and the commands each
    needs on its host; `window_s` is the run's shortest measurement window (the clock limit scales with it).
    Opens (and closes) a master per host unless `connections` holds them already open."""
    with contextlib.ExitStack() as stack:
        if connections is None:
            connections = open_masters(hosts, stack)
        check_tools(hosts, connections, tools_by_role)
        clocks = {host: read_clock(connections[host]) for host in hosts.all()}
        check_clocks(clocks, window_s)
        return {
            "clock_limit_s": clock_limit_s(window_s),
            "hosts": {
                host.label: describe_host(hosts, host, connections[host], clocks[host], tools_by_role)
                for host in hosts.all()
            },
            "network": [measure_link(*link, connections) for link in links(hosts, tools_by_role)],
        }


def needed_tools(hosts: Hosts, host: Host, tools_by_role: dict[str, list[str]]) -> list[str]:
    tools = list(ALWAYS_NEEDED)
    for role in hosts.roles_of(host):
        tools += [tool for tool in tools_by_role.get(role, []) if tool not in tools]
    return tools


def check_tools(hosts: Hosts, connections: dict[Host, SshHost], tools_by_role: dict[str, list[str]]) -> None:
    problems = []
    for host in hosts.all():
        tether = str(host.project_dir / TETHER)
        done = run_checked(
            connections[host], ["sh", "-c", MISSING_TOOLS, "sh", tether, *needed_tools(hosts, host, tools_by_role)]
        )
        missing = done.stdout.split()
        if PROJECT_MISSING in missing:
            problems.append(
                f"{host.label}: no project checkout at {host.project_dir} (check it out there, or "
                f"say where it is under [project_dir] in the hosts file)"
            )
        tools = [tool for tool in missing if tool != PROJECT_MISSING]
        if tools:
            problems.append(f"{host.label} ({', '.join(hosts.roles_of(host))}): missing {', '.join(tools)}")
    if problems:
        raise HostsError("hosts lack what their roles need:\n  " + "\n  ".join(problems))


def run_checked(ssh: SshHost, argv: list[str]) -> subprocess.CompletedProcess:
    try:
        done = ssh.run(argv, timeout_s=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise HostsError(f"{ssh.host.label}: {argv[0]} took more than {COMMAND_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        said = " / ".join(done.stderr.strip().splitlines()[-3:])
        raise HostsError(f"{ssh.host.label}: {argv[0]} failed ({done.returncode}): {said or 'no message'}")
    return done


def read_clock(ssh: SshHost) -> ClockReading:
    """Readings over one session, so each round trip is the network's, not a new session's (a remote command
    costs a shell start, and the user's shell rc: 90 to 140 ms on the test machine). The reading with the
    shortest round trip is kept: its midpoint bounds best when the host read its clock."""
    proc = ssh.popen(
        ["python3", "-u", "-c", CLOCK_ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + COMMAND_TIMEOUT_S
    try:
        remote_time(proc, deadline, ssh)  # the first answer waits for the session and python's start-up
        readings = []
        for _ in range(CLOCK_SAMPLES):
            before = time.time()
            remote = remote_time(proc, deadline, ssh)
            after = time.time()
            readings.append(ClockReading(remote - (before + after) / 2, (after - before) / 2, after - before))
    finally:
        stop_tethered(proc, grace_s=0)  # not tethered, but ends the same way: at EOF; killed if it lingers
        proc.stdout.close()
        proc.stderr.close()
    return min(readings, key=lambda reading: reading.round_trip_s)


def remote_time(proc: subprocess.Popen, deadline: float, ssh: SshHost) -> float:
    """Asks the echo loop for the host's time.time() and waits (until `deadline`) for the answer."""
    proc.stdin.write(b"?\n")
    proc.stdin.flush()
    if not select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
        raise HostsError(f"{ssh.host.label}: no clock reading within {COMMAND_TIMEOUT_S:.0f} s")
    line = proc.stdout.readline()
    try:
        return float(line)
    except ValueError:
        proc.kill()
        raise HostsError(
            f"{ssh.host.label}: the clock reader said {line!r}: "
            f"{proc.stderr.read().decode(errors='replace').strip()[-300:]}"
        ) from None


def check_clocks(clocks: dict[Host, ClockReading], window_s: float) -> None:
    limit = clock_limit_s(window_s)
    off = [
        f"{host.label}: {reading.offset_s * 1000:+.1f} ms (+/- {reading.uncertainty_s * 1000:.1f} ms)"
        for host, reading in clocks.items()
        if abs(reading.offset_s) > limit
    ]
    if off:
        raise HostsError(
            f"clocks differ from this machine's by more than {limit * 1000:.0f} ms (the limit for a "
            f"{window_s:g} s window):\n  "
            + "\n  ".join(off)
            + "\nsynchronise them (chrony or systemd-timesyncd against the same NTP server on every "
            "host, e.g. `apt-get install chrony`), then check with `chronyc tracking`"
        )


def describe_host(
    hosts: Hosts, host: Host, ssh: SshHost, clock: ClockReading, tools_by_role: dict[str, list[str]]
) -> dict:
    return {
        "roles": hosts.roles_of(host),
        "ssh_open_s": round(ssh.open_s, 3),
        "clock_offset_s": round(clock.offset_s, 6),
        "clock_uncertainty_s": round(clock.uncertainty_s, 6),
        "facts": remote_facts(ssh, needed_tools(hosts, host, tools_by_role)[len(ALWAYS_NEEDED) :]),
    }


def remote_facts(ssh: SshHost, tools: list[str], timeout_s: float = 60.0) -> dict:
    """facts.py run on the host through its master, from the host's checkout (project_dir)."""
    script = ssh.host.project_dir / FACTS
    argv = ["python3", str(script)] + [arg for tool in tools for arg in ("--tool", tool)]
    done = ssh.run(argv, timeout_s=timeout_s)
    if done.returncode != 0:
        raise HostsError(f"{ssh.host.label}: {' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout)


def links(hosts: Hosts, tools_by_role: dict[str, list[str]]) -> list[tuple[str, Host | None, str, Host | None]]:
    """The paths requests take between the roles the run uses: load to the proxy (or the server), proxy to
    server, server to database. None is this machine; a link between two roles both here is not measured."""
    front = "proxy" if "proxy" in tools_by_role else "server"
    found = [
        ("loadgen", source, front, hosts.hosts_of(front)[0] if hosts.hosts_of(front) else None)
        for source in (hosts.loadgen or (None,))
    ]
    if front == "proxy":
        found.append(("proxy", hosts.proxy, "server", hosts.server))
    found.append(("server", hosts.server, "db", hosts.db))
    return [
        link
        for link in found
        if {link[0], link[2]} <= set(tools_by_role) and (link[1] is not None or link[3] is not None)
    ]


def measure_link(
    source_role: str, source: Host | None, target_role: str, target: Host | None, connections: dict[Host, SshHost]
) -> dict:
    """Measured on the source host. A failed measurement is recorded, not refused: it is the connection to the SSH
    port that failed, and the cell's own health check will say whether the service is reachable."""
    figure = {
        "from": f"{source_role} {source.label if source else 'local'}",
        "to": f"{target_role} {target.label if target else 'local'}",
    }
    try:
        address, port = target_address(source, target, connections)
        samples = connect_times(connections.get(source), address, port)
    except (HostsError, ValueError, subprocess.TimeoutExpired) as e:
        return {**figure, "rtt_ms": None, "error": str(e)}
    return {**figure, "target": f"{address}:{port}", "rtt_ms": statistics.median(samples), "samples_ms": samples}


def target_address(source: Host | None, target: Host | None, connections: dict[Host, SshHost]) -> tuple[str, int]:
    if target is not None:
        return connections[target].resolved_address()
    # this machine, seen from the source host: the client address of the source's SSH session
    done = run_checked(connections[source], ["sh", "-c", 'echo "$SSH_CONNECTION"'])
    fields = done.stdout.split()
    if len(fields) != 4:
        raise HostsError(f"{source.label}: SSH_CONNECTION is {done.stdout.strip()!r}; cannot tell our address")
    return fields[0], 22


def connect_times(ssh: SshHost | None, address: str, port: int) -> list[float]:
    """Milliseconds each of RTT_CONNECTS TCP connects to address:port took, from the SSH host (or here)."""
    argv = ["python3", "-c", RTT_TIMER, address, str(port), str(RTT_CONNECTS)]
    if ssh is not None:
        done = run_checked(ssh, argv)
    else:
        done = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
        if done.returncode != 0:
            said = " / ".join(done.stderr.strip().splitlines()[-1:])
            raise HostsError(f"local RTT measurement to {address}:{port} failed: {said}")
    return json.loads(done.stdout)
