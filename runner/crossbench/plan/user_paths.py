"""`--path /api/orders` (repeatable): the user's own requests as the workload. The experiment's groups give way
to one group per path, each swept like the experiment's first group (its kind, concurrency and options) on every
server of the run, without delays (a user's endpoint has none). Each path's points take their ratios against the
same endpoint's C=1 point (figures/service_time.py), so every group measures C=1 whatever the concurrency asked.

`--workload FILE` (crossbench.workload) does the same per request kind, each group's cells sending that request
as declared (its method, headers and body), plus one group `mix` whose cells send the whole file, each request
chosen by its weight; the mix's endpoint is workload.MIX_ENDPOINT, a name that is no path (its ratios against the mix's
own C=1 point). Latency per request kind comes from the kinds' groups: the mix cell's figures are the mix's.

Its recorded form is the configuration's `[run] paths` or `[run] requests`, and these groups, each kind's request
(or the mix's requests) in its options (workload.OPTION): a resumed run and the analysis read them from there
(experiment_checks.declare_paths), and each cell's plan carries them."""

from __future__ import annotations

import re

from crossbench import workload
from crossbench.endpoints import SERVICE_CONCURRENCY

KEPT = ("kind", "concurrency", "options", "pipeline")  # what each path's group takes of the template


def group_name(path: str, taken: set[str]) -> str:
    """A group name from a path (or a request's name), as a cell id can carry it: /api/orders is api-orders, / is
    root; a second one that reads the same gets -2, -3."""
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
    template = first_closed(config)
    taken: set[str] = set()
    config["group"] = [swept(config, template, group_name(path, taken), path) for path in paths]


def measure_workload(config: dict, requests: list[dict]) -> None:
    """The configuration's groups replaced, in place, by one per request kind and the mix (the requests are
    checked by crossbench.workload; validation registers their paths), recorded as [run] requests."""
    template = first_closed(config)
    taken = {workload.MIX}
    made = []
    for request in requests:
        group = swept(config, template, group_name(request["name"], taken), request["path"])
        group["options"] = {**group.get("options", {}), workload.OPTION: [request]}
        made.append(group)
    mix = swept(config, template, workload.MIX, workload.MIX_ENDPOINT)
    mix["options"] = {**mix.get("options", {}), workload.OPTION: list(requests)}
    config["run"]["requests"] = list(requests)
    config["group"] = [*made, mix]


def first_closed(config: dict) -> dict:
    groups = config.get("group") or [{}]
    return next((g for g in groups if g.get("kind", "closed") == "closed"), groups[0])


def swept(config: dict, template: dict, name: str, endpoint: str) -> dict:
    """A group as the template sweeps it (and C=1 beside its concurrency) on `endpoint` on every server."""
    group = {key: template[key] for key in KEPT if key in template}
    group["concurrency"] = sorted({SERVICE_CONCURRENCY, *group.get("concurrency", [SERVICE_CONCURRENCY])})
    group["name"] = name
    group["endpoint"] = {server: endpoint for server in config["run"]["servers"]}
    return group
