"""`--path /api/orders` (repeatable): the user's own requests as the workload. The experiment's groups give way
to one group per path, each swept like the experiment's first group (its kind, concurrency and options) on every
server of the run, without delays (a user's endpoint has none). Each path's points take their ratios against the
same endpoint's C=1 point (figures/service_time.py), so every group measures C=1 whatever the concurrency asked.

Its recorded form is the configuration's `[run] paths` and these groups: a resumed run and the analysis read the
paths from there (experiment_checks.declare_paths)."""

from __future__ import annotations

import re

from crossbench.endpoints import SERVICE_CONCURRENCY

KEPT = ("kind", "concurrency", "options", "pipeline")  # what each path's group takes of the template


def group_name(path: str, taken: set[str]) -> str:
    """A group name from a path, as a cell id can carry it: /api/orders is api-orders, / is root; a second path
    that reads the same gets -2, -3."""
    base = re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-").lower() or "root"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def measure(config: dict, paths: list[str]) -> None:
    """The configuration's groups replaced, in place, by one per path on every server of its [run] (the paths
    themselves are checked by validation, which registers them)."""
    groups = config.get("group") or [{}]
    template = next((g for g in groups if g.get("kind", "closed") == "closed"), groups[0])
    taken: set[str] = set()
    made = []
    for path in paths:
        group = {key: template[key] for key in KEPT if key in template}
        group["concurrency"] = sorted({SERVICE_CONCURRENCY, *group.get("concurrency", [SERVICE_CONCURRENCY])})
        group["name"] = group_name(path, taken)
        group["endpoint"] = {server: path for server in config["run"]["servers"]}
        made.append(group)
    config["group"] = made
