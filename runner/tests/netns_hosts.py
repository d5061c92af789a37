"""Test hosts made on this machine: one Linux network namespace per host, joined by a bridge through veth pairs,
each running Debian's sshd in the foreground with keys made for the test. Everything is removed on the way out,
also on failure or Ctrl-C. Needs root, `ip netns` and /usr/sbin/sshd (openssh-server); skips otherwise.

    with NetnsLab(["server", "load"], without_sshd=["down"]) as lab:
        hosts_toml = lab.hosts_file({"server": "server", "loadgen": ["load"]})

The namespaces share this machine's processes and files: a process started over SSH in a namespace is visible
here (psutil), and the project's checkout is at the same path in every namespace."""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import json
import os
import shutil
import socket
import string
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from testkit import alive, wait_until

from crossbench import oskit

SSHD = Path("/usr/sbin/sshd")
PRIVSEP_DIR = Path("/run/sshd")  # sshd refuses to start without it; the service unit normally makes it
SSH_PORT = 22
READY_LIMIT_S = 10.0
COMMAND_TIMEOUT_S = 10.0
SUBNET_CANDIDATES = range(200, 255)  # 10.N.0.0/24
LAB_LETTERS = itertools.cycle(string.ascii_lowercase)

SSHD_CONFIG = """\
ListenAddress {address}
Port {port}
HostKey {host_key}
AuthorizedKeysFile {authorized_keys}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
Subsystem sftp internal-sftp
"""
CLIENT_CONFIG = """\
Host {addresses}
  User root
  IdentityFile {key}
  IdentitiesOnly yes
  UserKnownHostsFile {known_hosts}
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking accept-new
  LogLevel ERROR
"""


def sh(*argv: str) -> str:
    """A setup command that must work; its stderr goes into the exception."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def skip_reason() -> str | None:
    """Why this machine cannot make namespace hosts, or None."""
    if os.geteuid() != 0:
        return "namespace hosts need root (ip netns, veth, a bridge)"
    if not SSHD.exists():
        return f"{SSHD} is missing: apt-get install openssh-server"
    if shutil.which("ip") is None or shutil.which("ssh") is None:
        return "ip (iproute2) or ssh (openssh-client) is missing"
    probe = f"cbprobe{os.getpid()}"
    try:
        sh("ip", "netns", "add", probe)
    except RuntimeError as e:
        return f"`ip netns add` is not permitted here: {e}"
    sh("ip", "netns", "del", probe)
    return None


def claim_subnet() -> tuple[int, str]:
    """N for 10.N.0.0/24, clear of every route and address this machine has, and the bridge named after it.
    Making that bridge is the claim: a name exists once on the machine, so two labs built at the same time (two
    test processes) never take the same subnet."""
    taken = [
        ipaddress.ip_network(line.split()[0], strict=False)
        for line in sh("ip", "-4", "route", "show", "table", "all").splitlines()
        if line and line.split()[0][0].isdigit()
    ]
    taken += [
        ipaddress.ip_interface(word).network
        for line in sh("ip", "-4", "-o", "addr").splitlines()
        for word in line.split()[3:4]
    ]
    for n in SUBNET_CANDIDATES:
        subnet = ipaddress.ip_network(f"10.{n}.0.0/24")
        if any(subnet.overlaps(other) for other in taken):
            continue
        bridge = f"cbnet{n}"
        made = subprocess.run(
            ["ip", "link", "add", bridge, "type", "bridge"], capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S
        )
        if made.returncode == 0:
            return n, bridge
        if "exists" not in made.stderr:
            raise RuntimeError(f"ip link add {bridge} type bridge failed ({made.returncode}): {made.stderr.strip()}")
    raise RuntimeError("no free 10.N.0.0/24 for the test hosts")


def wait_until_listening(address: str, port: int, sshd: subprocess.Popen, log: Path) -> None:
    def listening() -> bool:
        if sshd.poll() is not None:
            raise RuntimeError(f"sshd on {address} exited ({sshd.returncode}): {log.read_text().strip()}")
        with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=1):
            return True
        return False

    wait_until(listening, READY_LIMIT_S, lambda: f"sshd on {address}:{port} to listen: {log.read_text()}")


@dataclass
class NetnsHost:
    name: str
    namespace: str
    address: str
    veth_outside: str
    veth_inside: str
    sshd: subprocess.Popen | None = None

    @property
    def destination(self) -> str:
        return f"root@{self.address}"


class NetnsLab:
    """Namespaces `names` (sshd in each but `without_sshd`) on a fresh bridge. Use as a context manager."""

    def __init__(self, names: list[str], without_sshd: tuple[str, ...] | list[str] = ()):
        # the whole pid (at most 7 digits): labs of two test processes never share a name; links add <= 3 (<= 15)
        self.prefix = f"cb{os.getpid()}{next(LAB_LETTERS)}"
        self.names = [*names, *without_sshd]
        self.without_sshd = set(without_sshd)
        self.bridge: str | None = None
        self.bridge_index: int | None = None  # the name passes to another lab once freed; the index is not reused
        self.subnet: int | None = None
        self.work: Path | None = None
        self.hosts: dict[str, NetnsHost] = {}
        self.netns_inodes: set[int] = set()  # what the lab's processes, sshd and its sessions among them, run in

    def __enter__(self) -> NetnsLab:
        try:
            self.build()
        except BaseException:
            self.teardown()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.teardown()

    @property
    def client_key(self) -> Path:
        return self.work / "client_key"

    @property
    def ssh_config(self) -> Path:
        return self.work / "ssh_config"

    def build(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="cbnetns-"))
        self.subnet, self.bridge = claim_subnet()
        self.bridge_index = int(Path("/sys/class/net", self.bridge, "ifindex").read_text())
        sh("ip", "addr", "add", f"10.{self.subnet}.0.1/24", "dev", self.bridge)
        sh("ip", "link", "set", self.bridge, "up")
        for index, name in enumerate(self.names, start=2):
            self.add_namespace(name, index)
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "crossbench-test", "-f", str(self.client_key))
        self.ssh_config.write_text(
            CLIENT_CONFIG.format(
                addresses=" ".join(host.address for host in self.hosts.values()),
                key=self.client_key,
                known_hosts=self.work / "known_hosts",
            )
        )
        PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
        for name, host in self.hosts.items():
            if name not in self.without_sshd:
                self.start_sshd(host)

    def add_namespace(self, name: str, index: int) -> None:
        host = NetnsHost(
            name,
            f"{self.prefix}-{name}",
            f"10.{self.subnet}.0.{index}",
            f"{self.prefix}h{index}",
            f"{self.prefix}n{index}",
        )
        sh("ip", "netns", "add", host.namespace)
        self.hosts[name] = host  # from here on, teardown removes it
        self.netns_inodes.add(Path("/run/netns", host.namespace).stat().st_ino)
        sh("ip", "link", "add", host.veth_outside, "type", "veth", "peer", "name", host.veth_inside)
        sh("ip", "link", "set", host.veth_inside, "netns", host.namespace)
        sh("ip", "link", "set", host.veth_outside, "master", self.bridge, "up")
        sh("ip", "-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", host.veth_inside)
        sh("ip", "-n", host.namespace, "link", "set", host.veth_inside, "up")
        sh("ip", "-n", host.namespace, "link", "set", "lo", "up")

    def start_sshd(self, host: NetnsHost) -> None:
        own = self.work / host.name
        own.mkdir()
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(own / "host_key"))
        config = own / "sshd_config"
        config.write_text(
            SSHD_CONFIG.format(
                address=host.address, port=SSH_PORT, host_key=own / "host_key", authorized_keys=f"{self.client_key}.pub"
            )
        )
        log = own / "sshd.log"
        with log.open("wb") as log_file:
            host.sshd = subprocess.Popen(
                [
                    *oskit.pdeathsig_prefix(),
                    "ip",
                    "netns",
                    "exec",
                    host.namespace,
                    str(SSHD),
                    "-D",
                    "-e",
                    "-f",
                    str(config),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                start_new_session=True,
            )
        wait_until_listening(host.address, SSH_PORT, host.sshd, log)

    def add_delay(self, name: str, delay_ms: float) -> None:
        """netem on the host's side of the link: every packet it sends waits `delay_ms` (RTT + delay_ms)."""
        host = self.hosts[name]
        sh(
            "ip",
            "netns",
            "exec",
            host.namespace,
            "tc",
            "qdisc",
            "add",
            "dev",
            host.veth_inside,
            "root",
            "netem",
            "delay",
            f"{delay_ms:g}ms",
        )

    def hosts_file(self, roles: dict[str, str | list[str]], project_dirs: dict[str, str] | None = None) -> Path:
        """A hosts TOML mapping each role to the lab's host(s) of that name, with the lab's ssh_config."""
        quoted = json.dumps  # a JSON string is a TOML basic string
        lines = ['ssh_config = "ssh_config"', "[roles]"]
        for role, names in roles.items():
            if isinstance(names, list):
                lines.append(f"{role} = [{', '.join(quoted(self.hosts[n].destination) for n in names)}]")
            else:
                lines.append(f"{role} = {quoted(self.hosts[names].destination)}")
        if project_dirs:
            lines.append("[project_dir]")
            lines += [
                f"{quoted(self.hosts[name].destination)} = {quoted(directory)}"
                for name, directory in project_dirs.items()
            ]
        path = self.work / "hosts.toml"
        path.write_text("\n".join(lines) + "\n")
        return path

    def teardown(self) -> None:
        """sshd (and its sessions), whatever still runs in a namespace, the veth pairs, the namespaces, the
        bridge, the files; what is already gone (or never made) is passed over."""
        for host in self.hosts.values():
            if host.sshd is not None:
                oskit.stop_group(host.sshd, grace_s=3)
        for host in self.hosts.values():
            kill_everything_in(host.namespace)
            # the kernel frees a deleted namespace's links later, asynchronously: delete the pair ourselves
            subprocess.run(["ip", "link", "del", host.veth_outside], capture_output=True, timeout=COMMAND_TIMEOUT_S)
            subprocess.run(["ip", "netns", "del", host.namespace], capture_output=True, timeout=COMMAND_TIMEOUT_S)
        if self.bridge is not None:
            subprocess.run(["ip", "link", "del", self.bridge], capture_output=True, timeout=COMMAND_TIMEOUT_S)
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)

    def leftovers(self) -> list[str]:
        """What of this lab still exists: namespaces, links (its bridge among them), processes still in one of its
        namespaces (sshd or its sessions, what ran over SSH), files. Empty after teardown. Only the lab's own
        names and namespaces are looked at, so another lab built beside it is never counted."""
        found = [line for line in sh("ip", "netns", "list").splitlines() if line.startswith(self.prefix)]
        for line in sh("ip", "-o", "link").splitlines():
            index, link = int(line.split(":")[0]), line.split(":")[1].strip().split("@")[0]
            if link.startswith(self.prefix) or (index, link) == (self.bridge_index, self.bridge):
                found.append(link)
        found += processes_in(self.netns_inodes)
        return found + ([str(self.work)] if self.work and self.work.exists() else [])


def processes_in(netns_inodes: set[int]) -> list[str]:
    """The live processes whose network namespace is one of these (a zombie has none to read, and runs nothing)."""
    found = []
    for proc in psutil.process_iter(["name"]):
        try:
            link = os.readlink(f"/proc/{proc.pid}/ns/net")  # "net:[inode]"
        except OSError:
            continue
        if int(link.split("[")[1].rstrip("]")) in netns_inodes:
            found.append(f"{proc.info['name']} pid {proc.pid}")
    return found


def kill_everything_in(namespace: str) -> None:
    listed = subprocess.run(
        ["ip", "netns", "pids", namespace], capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S
    )
    processes = []
    for pid in listed.stdout.split():
        with contextlib.suppress(psutil.NoSuchProcess):
            processes.append(psutil.Process(int(pid)))
            processes[-1].kill()
    with contextlib.suppress(AssertionError):  # a clean-up: what is still there is the next test's finding
        wait_until(lambda: not any(alive(p) for p in processes), 3, f"the processes of {namespace} to end")


def gone_within(proc: psutil.Process, seconds: float = 5.0) -> bool:
    """True once the process is gone (a zombie counts); fails the test naming it when it outlives `seconds`."""
    return wait_until(lambda: not alive(proc), seconds, f"process {proc.pid} to end")


def lab_or_skip(names: list[str], without_sshd: tuple[str, ...] | list[str] = ()) -> NetnsLab:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    return NetnsLab(names, without_sshd)


@pytest.fixture(scope="module")
def netns_lab():
    """Three hosts with sshd (server, db, load) and one without (down)."""
    with lab_or_skip(["server", "db", "load"], without_sshd=["down"]) as lab:
        yield lab
    assert lab.leftovers() == []
