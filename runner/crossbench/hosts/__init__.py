"""Roles on other machines over OpenSSH: the hosts file, one master connection per host, the tether that makes
a remote process die with its session, the preflight checks and each host's facts. A role the hosts file leaves
out runs on this machine, as without --hosts."""
import importlib

# Imported on first use, so that `python -m crossbench.hosts.tether` (or .facts) does not import itself twice.
_EXPORTED_FROM = {
    "Host": "hostsfile", "Hosts": "hostsfile", "HostsError": "hostsfile", "load_hosts": "hostsfile",
    "SshError": "ssh", "SshHost": "ssh", "open_masters": "ssh", "stop_tethered": "ssh",
    "check_hosts": "preflight",
}
__all__ = sorted(_EXPORTED_FROM)


def __getattr__(name: str):
    if name not in _EXPORTED_FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTED_FROM[name]}", __name__), name)
