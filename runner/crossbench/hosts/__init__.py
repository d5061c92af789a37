"""Where the run's processes run. Two hosts, one surface (a free port, a server, a bounded command, samplers beside
a process, PgBouncer, the clock offset, the address the others reach it at):

    LocalHost    this machine (local.py)
    RemoteHost   a machine of its own, over its SSH master, every process under the tether (remote.py); its
                 database and PgBouncer (remote_database.py), its process trees sampled there and read back
                 (remote_sampler.py)

The surface both offer is declared once: the Host protocol (protocol.py, not the hosts file's `Host`).

`Placement` (placement.py) says which host plays each role of a run: the hosts file's roles on RemoteHosts,
every other role on a LocalHost. Beneath them: `Hosts` and `Host`, the hosts file and one entry of it
(hostsfile.py); `SshHost`, one master connection (ssh.py); the tether (tether.py, run on the host as a script),
a role's scratch directory (scratch.py), the preflight (preflight.py) and each host's facts (facts.py)."""

from .hostsfile import Host, Hosts, HostsError, load_hosts
from .preflight import check_hosts
from .ssh import SshError, SshHost, open_masters, stop_tethered

__all__ = [
    "Host",
    "Hosts",
    "HostsError",
    "SshError",
    "SshHost",
    "check_hosts",
    "load_hosts",
    "open_masters",
    "stop_tethered",
]
