"""Resources per group or delay: the server's CPU (and the load generator's), the CPU of each core, peak
memory and threads against concurrency. Drawn last: one chart per panel of the run."""

from __future__ import annotations

from pathlib import Path

from crossbench import known_servers
from crossbench_analysis.read.runinfo import Run, num

from .kit import ChartJob, against_concurrency, by_c, count, flagged, missing_note, panels, write_series
from .kit_files import write_blocks
from .kit_intervals import interval_key, with_intervals
from .kit_labels import panel_style

HEADINGS: dict[str, str] = {}  # one chart per panel, each with its own heading ("Resources: <panel>")
NOT_STARTED = "not read: the suite did not start this server"


def not_started(cells: list[dict]) -> bool:
    """Every cell's server one the suite did not start (--target): its process figures were not read."""
    facts = [known_servers.get(c.get("server")) for c in cells]
    return bool(facts) and all(f is not None and not f.starts for f in facts)


def jobs(run: Run, data_dir: Path) -> list[ChartJob]:
    return resources(run, data_dir, against_concurrency(run.cells))


def figures_of(cell: dict) -> list:
    return [
        cell.get("concurrency"),
        num(cell.get("cpu_percent")),
        num(cell.get("loadgen_cpu_percent")),
        num(cell.get("rss_peak_mb")),
        num(cell.get("threads_peak")),
    ]


def resources(run: Run, data_dir: Path, cells: list[dict]) -> list[ChartJob]:
    jobs = []
    for key, title, here, series, of_cell in panels(cells):
        name = f"resources_{key}"
        columns = [
            "concurrency",
            "cpu_percent",
            "loadgen_cpu_percent",
            "rss_peak_mb",
            "threads_peak",
            "valid",
            "repetition",
            "cell_id",
        ]
        write_series(
            data_dir / f"{name}.dat",
            f"resources, '{title}' (run {run.run_id})",
            columns,
            figures_of,
            here,
            series,
            of_cell,
            run.launch_rule,
        )
        files = [f"{name}.dat"]
        params: dict = {
            "panels": 1,
            "file_1": f"{name}.dat",
            "title_1": title,
            **interval_key(here),
            **panel_style(1, series, {}),
            "ncoreblocks": 0,
            "nflagged": flagged(here, "cpu_percent", "rss_peak_mb"),
            # the load generator's line is drawn from valid cells' means only: flagged ones alone draw nothing
            "values_cpu": count(here, "cpu_percent")
            + count([c for c in here if c.get("valid")], "loadgen_cpu_percent"),
            "values_rss": count(here, "rss_peak_mb"),
            "values_threads": count(here, "threads_peak"),
            "values_cores": sum(
                1
                for c in here
                for v in (c.get("cpu_per_core") or {}).values()
                if num(v) is not None and num(c.get("concurrency")) is not None
            ),
        }
        if not_started(here):
            params["no_values_why"] = NOT_STARTED
        cores = sorted(
            {str(k) for c in here for k in (c.get("cpu_per_core") or {})},
            key=lambda k: (num(k) is None, num(k) or 0, k),
        )
        if cores:
            blocks, colors, dashes = [], [], []
            for s in series:
                mine = [c for c in by_c(here) if of_cell[c["cell_id"]] is s]
                for i, core in enumerate(cores):
                    roles = sorted(
                        {
                            role
                            for c in mine
                            for role, cpus in (("server", "server_cpus"), ("load generator", "loadgen_cpus"))
                            if num(core) in [num(x) for x in c.get(cpus) or []]
                        }
                    )
                    blocks.append(
                        (
                            f"{s.label}: core {core}" + (f" ({', '.join(roles)})" if roles else ""),
                            with_intervals(
                                mine,
                                lambda c, core=core: [
                                    c.get("concurrency"),
                                    num((c.get("cpu_per_core") or {}).get(core)),
                                ],
                                run.launch_rule,
                            ),
                        )
                    )
                    colors.append(s.color)
                    dashes.append(str(1 + i % 5))
            write_blocks(
                data_dir / f"{name}_cores.dat",
                f"resources per core, '{title}' (run {run.run_id}); system-wide CPU of each core, 100 = the whole core",
                [
                    "concurrency",
                    "core_cpu_percent",
                    "valid",
                    "repetition",
                    "cell_id",
                    "core_cpu_percent_mean",
                    "core_cpu_percent_lo",
                    "core_cpu_percent_hi",
                ],
                blocks,
            )
            files.append(f"{name}_cores.dat")
            params.update(
                {
                    "corefile": f"{name}_cores.dat",
                    "ncoreblocks": len(blocks),
                    "corecolors": " ".join(colors),
                    "coredashes": " ".join(dashes),
                }
            )
        jobs.append(
            ChartJob(
                name,
                "resources.gp",
                f"Resources, {title}: server CPU, CPU per core, memory and threads vs concurrent clients",
                f"{title}: mean CPU of the server's process tree over the window (100 = one core; dashed: the "
                "load generator's), the system-wide CPU of each core (solid and dashed lines: the cores, named "
                "with their role), the server's peak resident memory and its peak thread count. Each figure is one "
                "number per launch (a window's mean or peak), so a point's launches average like any other figure: "
                "the lines join the points' means, the bars are their 95 % intervals over launches (none with one "
                "launch).",
                params,
                files,
                missing_note(here, "cpu_percent", "rss_peak_mb"),
                f"Resources: {title}",
            )
        )
    return jobs
