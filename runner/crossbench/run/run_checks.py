"""Before the first cell: what can be known wrong is refused with one line (Refused), cells this machine cannot
run are skipped with a message, the runner is pinned to the load generator's cores, the run's database is
found or started (--db-url's, the db host's, else a cluster of its own), and what a server makes on its first
start is made by an unmeasured one (prime_servers)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from crossbench import loadgen, oskit, paths, pyvenv, servers
from crossbench.database import stack
from crossbench.database.stack import needs_database
from crossbench.drivers import DRIVERS
from crossbench.plan.cellplan import CellPlan, one_per_variant
from crossbench.plan.experiment_schema import RunSettings
from crossbench.record.rundir import RunDir
from crossbench.refusal import Refusal
from crossbench.sampling import noise

from .open_placement import Placement


class Refused(Refusal, RuntimeError):
    """A clear reason not to start, given before anything runs."""


def unbuilt_generators(cells: list[CellPlan]) -> dict[str, int]:
    """The pinned generators the cells need (LoadGenerator.binary: oha, k6) that the tools cache lacks, each with
    how many cells need it."""
    pinned = {name for name, generator in loadgen.ADAPTERS.items() if generator.binary is not None}
    missing = sorted(
        {cell.loadgen for cell in cells if cell.loadgen in pinned and not loadgen.get(cell.loadgen).available()}
    )
    return {tool: sum(cell.loadgen == tool for cell in cells) for tool in missing}


def build_generators(cells: list[CellPlan]) -> None:
    """The pinned generators the cells need built into the tools cache on first use, as run_all.sh installs Debian
    packages: the README's two commands are all the set-up any experiment needs. run_all.sh has started their
    build already (crossbench.run.unbuilt), and install-openloop.sh waits for it; it prints its progress and build
    time; Refused when it fails."""
    for tool, needing in unbuilt_generators(cells).items():
        print(
            f"run_all: {needing} cell(s) need {tool}, not built yet: building it once into the tools cache "
            "(runner/install-openloop.sh: minutes on 2 cores, reused after)",
            file=sys.stderr,
            flush=True,
        )
        script = paths.RUNNER / "install-openloop.sh"
        if (
            subprocess.run([str(script), tool], stdin=subprocess.DEVNULL).returncode != 0
            or not loadgen.get(tool).available()
        ):
            raise Refused(f"{tool} could not be built ({script} {tool} failed, its reason above)")


def build_python_envs(cells: list[CellPlan]) -> pyvenv.Builds:
    """The environments the cells' interpreters need (--python), built once into the tools cache before any cell;
    the builds that failed are in what it returns, with their reasons, for the checks that leave their cells out."""
    builds = pyvenv.Builds()
    wanted = {}
    for cell in one_per_variant(cells):
        env = environment_of(cell)
        if env is not None and not env.ready():
            wanted[env.path] = env
    for env in wanted.values():
        print(
            f"run_all: building the environment of Python {env.interpreter} once into the tools cache "
            f"({env.path}: a minute or two, from PyPI)",
            file=sys.stderr,
            flush=True,
        )
        builds.build(env)
    return builds


def environment_of(cell: CellPlan) -> pyvenv.PythonEnv | None:
    """The cell's environment of its own (--python), or None (the project's, or an interpreter this machine lacks:
    said by the preflight that follows)."""
    try:
        return cell.plugin.python_env(cell.settings)
    except servers.CannotRunHere:
        return None


def unbuilt(builds: pyvenv.Builds, cell: CellPlan) -> None:
    """CannotRunHere for a cell whose environment's build failed in this run, with the build's reason."""
    reason = builds.failure(environment_of(cell))
    if reason:
        raise servers.CannotRunHere(reason)


def preflight(run: RunSettings, cells: list[CellPlan]) -> None:
    """Everything that can be known wrong before the first cell, the missing generators and Python environments
    built first (a resumed run's too: its plan was checked when it began, on a cache that may have been cleared)."""
    build_generators(cells)
    builds = build_python_envs(cells)
    for cell in one_per_variant(cells):
        unbuilt(builds, cell)
    for check in checks(run, cells):
        check()


def checks(run: RunSettings, cells: list[CellPlan]) -> list[Callable[[], None]]:
    """The checks before the first cell, in the order they run, each raising a Refusal for what it finds wrong:
    each kind of cell's tools, each server variant's (its build, its JDK), the cores, the open-file limit, the
    database's binaries, the noise floor's setting. A dry run makes them all and lists what they refuse."""
    found = [partial(DRIVERS[cell.kind].preflight, cell) for cell in cells]
    found += [partial(cell.plugin.preflight, cell.settings) for cell in one_per_variant(cells)]
    found += [
        partial(check_cores, run),
        # RLIMIT_NOFILE is per process: the client and the server are separate processes and each holds one
        # end of a connection; both inherit the runner's limit.
        partial(oskit.raise_open_files, max(c.concurrency for c in cells)),
        partial(stack.preflight, cells, run.db_url),
        noise.floor_seconds,
    ]  # refuses a bad $CROSSBENCH_NOISE_FLOOR_S before anything runs
    return found


def check_cores(run: RunSettings) -> None:
    usable = os.sched_getaffinity(0)
    for key, cores in (("server_cpus", run.server_cpus), ("loadgen_cpus", run.loadgen_cpus)):
        missing = set(cores) - usable
        if missing:
            raise Refused(
                f"{key} {list(cores)}: cores {sorted(missing)} are not available here (usable: {sorted(usable)})"
            )


def without_unrunnable(cells: list[CellPlan], keep_refused: bool = False) -> list[CellPlan]:
    """Cells a server cannot run on this machine (virtual threads without JDK 21+): say so and run the rest.
    `keep_refused` (a dry run): a cell whose server refuses for another reason (its build or a tool missing) is
    kept, for the dry run to list that reason with the plan; a dry run builds no Python environment either."""
    builds = pyvenv.Builds() if keep_refused else build_python_envs(cells)
    runnable, reasons = [], {}
    for cell in cells:
        try:
            unbuilt(builds, cell)
            cell.plugin.preflight(cell.settings)
            runnable.append(cell)
        except servers.CannotRunHere as e:
            reasons[str(e)] = reasons.get(str(e), 0) + 1
        except Refusal:
            if not keep_refused:
                raise
            runnable.append(cell)
    if not runnable:
        raise Refused("; ".join(reasons))
    for reason, count in reasons.items():
        print(f"run_all: skipping {count} cells: {reason}", file=sys.stderr)
    return runnable


def pin_runner(run: RunSettings) -> None:
    """The runner (sampler, progress) shares the load generator's cores, never the server's."""
    if run.loadgen_cpus and run.server_cpus:
        os.sched_setaffinity(0, set(run.loadgen_cpus))


def run_database(run: RunSettings, cells: list[CellPlan], run_dir: RunDir, placement: Placement):
    """The database for the run's database cells: --db-url's (checked now), the db host's, else a cluster of
    its own here."""
    wanted = [c for c in cells if needs_database(c)]
    if not wanted:
        return None
    pools = max((c.settings.get("db_pool") or 0) * c.plugin.process_count(c.settings) for c in wanted)
    database = placement.db_host.database(run_dir.path, placement.db_clients, pools, run.db_url, run.server_cpus)
    database.check_existing()
    return database


def prime_servers(cells: list[CellPlan], placement: Placement) -> list[str]:
    """One unmeasured start of each server whose first start makes what later starts reuse (Tomcat's class-data
    archive), on its server cores, so that the first measured launch starts like the others. A start that fails
    is said and left to the cells, which record their own failures."""
    if not placement.server_is_here():
        return []
    done = []
    with tempfile.TemporaryDirectory(prefix="crossbench-prime-") as work:
        for cell in one_per_variant(cells):
            try:
                made = cell.plugin.prime(cell.settings, Path(work), cell.server_cpus, placement.server_host)
            except (servers.ServerFailed, oskit.PortInUse) as e:
                made = f"{cell.server}: the unmeasured first start failed: {str(e).splitlines()[0]}"
            if made:
                done.append(made)
    return done
