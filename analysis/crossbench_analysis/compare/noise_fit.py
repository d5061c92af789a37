"""compare's noise model fitted from runs of one configuration: per kind of point (static, delayed), figure and
server, the run-to-run spread sigma_run on logs beyond what each run's launches explain (a one-way random-effects
estimate by moments), with the machine the runs ran on and the range of its cores' speed over them.

A run enters as a RunTable: its points' launch values by figure, read from cells.jsonl where the run has it, else
from the launches each figure of points.jsonl lists (a committed reference: the same counted launches), and its
cores' speed reading.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from crossbench.figures import points as point_data
from crossbench_analysis.read import points_run
from crossbench_analysis.read.runinfo import AnalysisError, Run

from . import compare, compare_stats
from .machine_check import core_speed_ms


@dataclass(frozen=True)
class RunTable:
    """One run as the noise model sees it: point_id -> (kind, server, {figure: launch values})."""

    run_id: str
    machine: str
    core_speed_ms: float | None
    points: dict[str, tuple[str, str, dict[str, list[float]]]]
    configuration: str = ""  # what was measured how (configuration_of): runs of one model share it


# Not part of what a run measures: its order of launches and its words.
NOT_MEASURED = ("shuffle_seed", "description")


def configuration_of(metadata: dict) -> str:
    """What a run measured and how: its record schema and its configuration but for its shuffle seed and its
    description. Runs whose records were measured another way (another window, another latency source) read
    other figures: a spread across them is not noise."""
    config = metadata.get("config") if isinstance(metadata.get("config"), dict) else {}
    kept = {k: v for k, v in config.items() if k not in NOT_MEASURED}
    kept["run"] = {k: v for k, v in (config.get("run") or {}).items() if k not in NOT_MEASURED}
    return json.dumps({"schema_version": metadata.get("schema_version"), "config": kept}, sort_keys=True)


def table_of(run: Run) -> RunTable:
    found = {}
    for point in point_data.load(run.path):
        figures = compare.judged_figures(point.get("headline") or "rps", point, point)
        found[point["point_id"]] = (
            compare_stats.kind_of(point),
            str(point.get("server")),
            {f: compare_stats.positive(compare.launch_values(run, point, f)) for f in figures},
        )
    return RunTable(run.run_id, run.machine_name, core_speed_ms(run.metadata), found, configuration_of(run.metadata))


def load_tables(run_dirs: list[Path]) -> list[RunTable]:
    """The runs' tables, each run once (a run committed in two reference sets counts once, by its run id)."""
    tables: dict[str, RunTable] = {}
    for run_dir in run_dirs:
        table = table_of(points_run.load_any(run_dir))
        tables.setdefault(table.run_id, table)
    return list(tables.values())


def run_mean(values: list[float]) -> tuple[float, float] | None:
    """The mean of the launches' logs and its variance from the launches (s^2 / n; 0 with one launch, which then
    counts its launch noise as run noise: an overstatement)."""
    if not values:
        return None
    logs = [math.log(v) for v in values]
    mean = sum(logs) / len(logs)
    within = sum((v - mean) ** 2 for v in logs) / (len(logs) - 1) / len(logs) if len(logs) > 1 else 0.0
    return mean, within


def per_point(tables: list[RunTable]) -> dict[tuple[str, str, str, str], list[tuple[float, float]]]:
    """(kind, figure, server, point_id) -> each run's (mean of logs, its launch variance)."""
    found: dict[tuple[str, str, str, str], list[tuple[float, float]]] = {}
    for table in tables:
        for pid, (kind, server, figures) in table.points.items():
            for figure, values in figures.items():
                if (mean := run_mean(values)) is not None:
                    found.setdefault((kind, figure, server, pid), []).append(mean)
    return found


def moments(rows: list[list[tuple[float, float]]]) -> dict:
    """The points' run means pooled: per point the variance of its run means and that minus their launch variance
    (the run level's share), averaged over the points; sigma_run its square root, floored at 0."""
    between, excess, within = [], [], []
    for per_run in rows:
        centre = sum(m for m, _ in per_run) / len(per_run)
        spread = sum((m - centre) ** 2 for m, _ in per_run) / (len(per_run) - 1)
        launches = sum(w for _, w in per_run) / len(per_run)
        between.append(spread)
        excess.append(spread - launches)
        within.append(launches)

    def mean(xs: list[float]) -> float:
        return sum(xs) / len(xs)

    return {
        "sd": round(math.sqrt(max(0.0, mean(excess))), 4),
        "points": len(rows),
        "run_means_variance": mean(between),
        "raw_variance": mean(excess),
        "launch_variance": mean(within),
    }


DIFFERS_AT = 0.05  # a server keeps a spread of its own where an F test tells its run means apart at this level


def server_moments(by_server: dict[tuple[str, str, str], list]) -> dict[tuple[str, str], dict[str, dict]]:
    """(kind, figure) -> server -> its own moments, and whether its run means' variance differs from the other
    servers' (two-sided F test at DIFFERS_AT, each side over its points' runs - 1 degrees of freedom: the points
    of a run share its level, so the runs, not the points, count)."""
    from scipy.stats import f as f_dist

    grouped: dict[tuple[str, str], dict[str, list]] = {}
    for (kind, server, figure), rows in by_server.items():
        grouped.setdefault((kind, figure), {})[server] = rows
    found: dict[tuple[str, str], dict[str, dict]] = {}
    for key, servers in grouped.items():
        for server, rows in servers.items():
            own = moments(rows)
            rest = [row for other, more in servers.items() if other != server for row in more]
            differs = False
            if rest:
                df_own, df_rest = min(len(r) for r in rows) - 1, min(len(r) for r in rest) - 1
                other = moments(rest)["run_means_variance"]
                if own["run_means_variance"] > 0 and other > 0 and df_own > 0 and df_rest > 0:
                    ratio = own["run_means_variance"] / other
                    p = 2 * min(f_dist.cdf(ratio, df_own, df_rest), f_dist.sf(ratio, df_own, df_rest))
                    differs = bool(p < DIFFERS_AT)
            found.setdefault(key, {})[server] = {**own, "differs": differs}
    return found


def check_one_set(tables: list[RunTable]) -> None:
    """AnalysisError, in one line, unless the runs are two or more of one configuration on one machine."""
    if len(tables) < 2:
        raise AnalysisError("a noise model takes two or more runs of one configuration")
    machines = {t.machine for t in tables}
    if len(machines) > 1:
        raise AnalysisError(f"runs of different machines ({', '.join(sorted(machines))}): a spread belongs to one")
    configurations = {t.configuration for t in tables}
    if len(configurations) > 1:
        groups = {c: [t.run_id for t in tables if t.configuration == c] for c in configurations}
        raise AnalysisError(
            "runs measured with different configurations or record schemas ("
            + "; ".join(", ".join(ids) for ids in groups.values())
            + "): a spread across them is not noise; fit each set apart"
        )


def fit(tables: list[RunTable]) -> dict:
    """The noise model of these runs: per kind and figure ("run_sd") the spread by moments, and per kind, server
    and figure ("by_server") a server's own where its run means vary differently from the others' (the detail
    holds every server's), run_df = runs - 1 (every point of a run shares its
    level), the machine and the range of the runs' core speed readings."""
    check_one_set(tables)
    machines = {t.machine for t in tables}
    pooled: dict[tuple[str, str], list] = {}
    by_server: dict[tuple[str, str, str], list] = {}
    for (kind, figure, server, _), per_run in per_point(tables).items():
        if len(per_run) >= 2:
            pooled.setdefault((kind, figure), []).append(per_run)
            by_server.setdefault((kind, server, figure), []).append(per_run)
    run_sd: dict[str, dict] = {}
    detail: dict[str, dict] = {}
    for (kind, figure), rows in sorted(pooled.items()):
        found = moments(rows)
        run_sd.setdefault(kind, {})[figure] = found["sd"]
        detail.setdefault(kind, {})[figure] = found
    servers: dict[str, dict] = {}
    for (kind, figure), own in sorted(server_moments(by_server).items()):
        for server, found in own.items():
            detail[kind][figure].setdefault("by_server", {})[server] = found
            if found["differs"]:
                servers.setdefault(kind, {}).setdefault(server, {})[figure] = found["sd"]
    speeds = [t.core_speed_ms for t in tables if t.core_speed_ms is not None]
    sees = {
        kind: {
            figure: round(smallest_seen_between(found["launch_variance"], found["sd"], len(tables) - 1), 4)
            for figure, found in figures.items()
        }
        for kind, figures in detail.items()
    }
    return {
        "measured_on": machines.pop(),
        "runs": [t.run_id for t in tables],
        "run_df": len(tables) - 1,
        "measured": True,
        "run_sd": run_sd,
        "by_server": servers,
        "sees": sees,
        "detail": detail,
        "core_speed_ms": [round(min(speeds), 3), round(max(speeds), 3)] if len(speeds) == len(tables) else None,
    }


def smallest_seen_between(
    launch_variance: float,
    run_sd: float,
    run_df: int,
    launches: int = compare_stats.stats.MIN_LAUNCHES,
    margin: float = compare_stats.DEFAULT_MARGIN,
) -> float:
    """The smallest change compare finds 80 % of the time between two runs of `launches` launches a side whose
    run means carry launch_variance each (s^2 / n, as fitted) and run_sd between runs: the test's standard error
    and its Welch-Satterthwaite degrees of freedom (changes.run_log_ratio) put into compare_stats.smallest_seen."""
    run_term = 2 * run_sd**2
    total = 2 * launch_variance + run_term
    if total <= 0:
        return margin
    df = total**2 / (2 * launch_variance**2 / (launches - 1) + run_term**2 / run_df)
    return compare_stats.smallest_seen(total**0.5, df, margin)


def model_table(model: dict, source: str) -> dict:
    """A fitted model as compare_stats.run_sds gives the spreads in force."""
    return {
        compare_stats.STATIC: model["run_sd"].get(compare_stats.STATIC, {}),
        compare_stats.DELAYED: model["run_sd"].get(compare_stats.DELAYED, {}),
        "by_server": model.get("by_server", {}),
        "default": compare_stats.floor_file()["default"],
        "run_df": model["run_df"],
        "measured": True,
        "measured_on": model["measured_on"],
        "core_speed_ms": model.get("core_speed_ms"),
        "source": source,
    }
