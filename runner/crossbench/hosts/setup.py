"""`./runner/hosts.sh setup --hosts FILE`: gives every host of a hosts file what its roles need, over SSH, with the
project's own setup: this checkout as it is here (sources and what `mvn package` built: the same WAR and Tomcat,
not a rebuild) copied to the host's project_dir, then on the host the same prerequisites.sh (Debian packages,
as root) and python-env.sh (the pinned Python environment) a local run uses.

`./runner/hosts.sh check --hosts FILE` runs the preflight alone (reachable, tools, clock, RTT) and prints it."""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys

from .. import loadgen, paths, version
from .hostsfile import HostsError, load_hosts
from .preflight import check_hosts
from .scratch import send_tree
from .ssh import SshError, SshHost, open_masters

# what never goes to a host: Git's history, the local Python environment (made there), results, caches
EXCLUDED = (".git", ".venv", "results", "__pycache__", ".pytest_cache", "*.egg-info")
INSTALL_LIMIT_S = 1800.0
COPY_LIMIT_S = 600.0
ROLE_TOOLS = {"loadgen": loadgen.on_load_hosts("prerequisites"), "server": [], "db": [], "proxy": []}


def copy_checkout(ssh: SshHost) -> None:
    """This checkout (with its build output) into the host's project_dir, replacing what was there."""
    target = str(ssh.host.project_dir)
    if ssh.host.project_dir == paths.REPO and same_directory(ssh):
        return  # the host sees this very directory (a test namespace on this machine)
    send_tree(ssh, paths.REPO, target, EXCLUDED, COPY_LIMIT_S)


def same_directory(ssh: SshHost) -> bool:
    """Whether the host's project_dir is this checkout itself (a marker written here is visible there)."""
    marker = paths.REPO / ".crossbench-setup-probe"
    marker.write_text(str(id(ssh)))
    try:
        done = ssh.run(["cat", str(marker)], timeout_s=15)
        return done.returncode == 0 and done.stdout == str(id(ssh))
    finally:
        marker.unlink(missing_ok=True)


def install(ssh: SshHost, python_env: bool, open_loop: bool) -> None:
    """The host's Debian packages (prerequisites.sh), unless skipped its Python environment, and when asked
    (load hosts for open-loop cells and held windows) the pinned generators built into its tools cache."""
    runner = ssh.host.project_dir / "runner"
    script = f'source "{runner}/prerequisites.sh" && crossbench_install_missing setup'
    if python_env:
        script += f' && source "{runner}/python-env.sh"'
    if open_loop:
        script += f' && "{runner}/install-openloop.sh" {" ".join(loadgen.on_load_hosts("build"))}'
    done = ssh.run(["bash", "-c", script], timeout_s=INSTALL_LIMIT_S)
    if done.returncode != 0:
        raise SshError(f"{ssh.host.label}: setup failed:\n{(done.stderr or done.stdout).strip()[-2000:]}")


def setup(hosts_file, python_env: bool = True, open_loop: bool = False) -> list[str]:
    hosts = load_hosts(hosts_file)
    done = []
    with contextlib.ExitStack() as stack:
        for host, ssh in open_masters(hosts, stack).items():
            copy_checkout(ssh)
            install(ssh, python_env, open_loop and "loadgen" in hosts.roles_of(host))
            done.append(f"{host.label}: {', '.join(hosts.roles_of(host))} ready in {ssh.host.project_dir}")
    return done


def check(hosts_file, window_s: float) -> dict:
    hosts = load_hosts(hosts_file)
    return check_hosts(
        hosts,
        {role: ROLE_TOOLS[role] for role in ("loadgen", "server", "db", "proxy") if hosts.hosts_of(role)},
        window_s,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hosts.sh", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "action",
        choices=("setup", "check"),
        help="setup: prepare the hosts; check: their clocks and reachability, as JSON",
    )
    version.add_option(parser)
    parser.add_argument("--hosts", required=True, help="the hosts file (TOML)")
    parser.add_argument(
        "--no-python-env",
        dest="python_env",
        action="store_false",
        help="setup: leave the hosts' Python environment as it is",
    )
    parser.add_argument(
        "--open-loop",
        action="store_true",
        help=f"setup: also build the pinned {' and '.join(loadgen.on_load_hosts('build'))} on the load "
        "hosts (open-loop cells and held windows; needs cargo and go)",
    )
    parser.add_argument("--window", type=float, default=15.0, help="check: the window the clocks must bear (s)")
    args = parser.parse_args(argv)
    try:
        if args.action == "setup":
            print("\n".join(setup(args.hosts, args.python_env, args.open_loop)))
        else:
            print(json.dumps(check(args.hosts, args.window), indent=1))
    except (HostsError, subprocess.TimeoutExpired) as e:
        print(f"hosts.sh: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
