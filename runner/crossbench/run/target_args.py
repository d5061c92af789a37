"""`--target URL` on run_all.sh's command line: a server the user started themselves, measured where it runs
(crossbench/servers/external.py). Without --experiment it runs the your-target sweep; its requests are --path's,
else the URL's own path. Refused before anything starts, one line each: a URL that is not http(s), a host that is
neither loopback nor one of --hosts, and an option that sets or pins a server, which the suite cannot do to a
server it did not start. What the plan says of such a server: its launches share one process."""

from __future__ import annotations

import argparse

from crossbench import servers
from crossbench.hosts.hostsfile import HostsError, load_hosts
from crossbench.plan.cellplan import CellPlan
from crossbench.refusal import Refusal
from crossbench.servers import external

TARGET_EXPERIMENT = "your-target"  # what --target runs unless --experiment names another
OWN_OPTIONS = {k.name for k in external.PLUGIN.knobs}  # --target, --target-pid, --target-name
# run_all's options that set where or how the server runs: meaningless for a server the suite did not start
PLACING_OPTIONS = {"server_cpus": "--server-cpus", "war": "--war"}


def external_target(p: argparse.ArgumentParser, args, given: list[str]) -> None:
    """--target's checks and what it decides: the run's one server is the user's, on --path's requests (else the
    URL's own) under the your-target sweep unless --experiment names another."""
    url = getattr(args, "target", None)
    others = [name for name in OWN_OPTIONS - {"target"} if getattr(args, name, None) is not None]
    if not url:
        if others:
            refuse(p, f"--{others[0].replace('_', '-')} goes with --target URL (the server you started)")
        return
    if problem := external.url_problem(url):
        refuse(p, f"--target: expected {problem}")
    if problem := external.host_problem(url, hosts_addresses(p, args.hosts)):
        refuse(p, f"--target {url}: {problem}")
    if knob := set_knob(args):
        refuse(
            p,
            f"--target {url}: {knob} sets a server the suite starts; the suite did not start yours, so it "
            "cannot set it (start your server with the setting you want, and measure each as a run)",
        )
    if args.servers and args.servers != [external.PLUGIN.name]:
        refuse(p, f"--target measures your server alone; --servers {','.join(args.servers)} does not go with it")
    args.servers = [external.PLUGIN.name]
    args.paths = args.paths or ([] if args.workload_file else [external.own_path(url)])
    if not any(word == "--experiment" or word.startswith("--experiment=") for word in given):
        args.experiment = TARGET_EXPERIMENT


def check_hosts(cells: list[CellPlan], hosts_file) -> None:
    """Every running server's URL in the plan, --target's or an experiment file's [external] target, on this
    machine's loopback or a host of --hosts: load sent elsewhere lands where the suite knows nothing of the other
    load. Raises a Refusal naming the first URL that is not."""
    urls = sorted({c.settings["target"] for c in cells if c.server == external.PLUGIN.name and c.settings["target"]})
    if not urls:
        return
    addresses = tuple(host.address for host in load_hosts(hosts_file).all()) if hosts_file else ()
    for url in urls:
        if problem := external.host_problem(url, addresses):
            raise Refusal(f"target {url}: {problem}")


def set_knob(args) -> str | None:
    """The first option given that sets or places a server the suite starts (--max-threads, --server-cpus), as
    written on the command line."""
    for plugin in servers.PLUGINS.values():
        for knob in plugin.knobs:
            if knob.name not in OWN_OPTIONS and getattr(args, knob.name, None) is not None:
                return knob.flag
    return next((flag for dest, flag in PLACING_OPTIONS.items() if getattr(args, dest, None) is not None), None)


def hosts_addresses(p: argparse.ArgumentParser, hosts_file) -> tuple[str, ...]:
    """The addresses of --hosts' machines, where a --target may also run; none without --hosts."""
    if hosts_file is None:
        return ()
    try:
        return tuple(host.address for host in load_hosts(hosts_file).all())
    except HostsError as e:
        refuse(p, str(e))


def refuse(p: argparse.ArgumentParser, message: str) -> None:
    p.exit(2, f"run_all: {message}\n")


def shared_process_note(cells: list[CellPlan]) -> str:
    """What the plan says of a server the suite did not start (--target): every launch measures its one running
    process, so launches are not independent starts, and nothing of it is started, set or stopped."""
    unstarted = sorted({c.plugin.describe(c.settings) for c in cells if not c.plugin.starts})
    if not unstarted:
        return ""
    return (
        f"; {', '.join(unstarted)}: your server, already running: every launch measures that one process (launches "
        "share it, so they are not independent starts as a started server's are); the suite starts, sets and "
        "stops nothing of it"
    )
