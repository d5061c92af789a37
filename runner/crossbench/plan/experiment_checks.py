"""An experiment's configuration checked before anything starts: the known sections and keys (an unknown one is
refused by name), each value's range, each server's settings by its plug-in, in one clear ExperimentError line on
the first fault. `validate` then types the configuration once (experiment_schema.typed)."""

from __future__ import annotations

from crossbench import endpoints, servers, workload
from crossbench.drivers import DEFAULT_KIND, DRIVERS, RATE_KIND
from crossbench.loadgen import ADAPTERS
from crossbench.servers import DB_ENDPOINTS, SettingsError
from crossbench.stats import MIN_LAUNCHES
from crossbench_contract.delay import MAX_DELAY_MS

from .experiment_schema import (
    ALL_ENDPOINTS,
    ANALYSIS_KEYS,
    AUTO_RATES,
    GROUP_KEYS,
    MAX_CONCURRENCY,
    PEAK_LOADGEN,
    POOLERS,
    PROXIES,
    RUN_KEYS,
    Experiment,
    ExperimentError,
    server_section,
    typed,
)
from .search_spec import SEARCH_RATES, SearchSpecError, check_target
from .search_spec import parse as parse_search


def validate(config: dict) -> Experiment:
    """The configuration checked (a clear one-line ExperimentError on the first fault), as typed values."""

    def fail(message):
        raise ExperimentError(f"experiment {config.get('name')}: {message}")

    servers.declare(config, f"experiment {config.get('name')}")
    declare_paths(config, fail)
    unknown = set(config) - {"name", "description", "run", "group", "analysis", "server", *servers.PLUGINS}
    if unknown:
        fail(
            f"unknown sections {sorted(unknown)}; known: run, group, analysis, server and one per server "
            f"({', '.join(servers.PLUGINS)})"
        )
    for section, allowed in (("run", RUN_KEYS), ("analysis", ANALYSIS_KEYS)):
        unknown = set(config.get(section, {})) - allowed
        if unknown:
            fail(f"unknown [{section}] keys {sorted(unknown)}; allowed: {sorted(allowed)}")
    run = config["run"]
    for key in ("duration_s", "warmup_s"):
        if not isinstance(run.get(key), (int, float)) or run[key] < 0 or (key == "duration_s" and run[key] == 0):
            fail(f"{key} must be a positive number of seconds, not {run.get(key)!r}")
    if run["loadgen"] not in ADAPTERS:
        fail(f"loadgen {run['loadgen']!r} unknown; known: {', '.join(ADAPTERS)}")
    if not run["servers"]:
        fail("servers is empty")
    for name in run["servers"]:
        try:
            servers.get(name)
        except servers.UnknownServer as e:
            fail(str(e))
    if not isinstance(run["repetitions"], int) or run["repetitions"] < 1:
        fail("repetitions must be a positive integer")
    validate_precision(run, fail)
    best = run.get("best_level_launches", 0)
    if isinstance(best, bool) or not isinstance(best, int) or best < 0 or best == 1:
        fail(f"best_level_launches is 0 (off) or the launches each stack's best level gets, 2 or more, not {best!r}")
    if not isinstance(run.get("relaunch_disturbed", False), bool):
        fail(f"relaunch_disturbed is true or false, not {run['relaunch_disturbed']!r}")
    if (
        isinstance(run["min_window_delays"], bool)
        or not isinstance(run["min_window_delays"], (int, float))
        or run["min_window_delays"] < 0
    ):
        fail(f"min_window_delays is a number of delays (0: off), not {run['min_window_delays']!r}")
    bias = run.get("max_window_bias", 0)
    if isinstance(bias, bool) or not isinstance(bias, (int, float)) or not 0 <= bias < 1:
        fail(f"max_window_bias is a share of a window's figures between 0 (off) and 1, not {bias!r}")
    validate_held_windows(run.get("held_windows", False), fail)
    if set(run["server_cpus"]) & set(run["loadgen_cpus"]):
        fail(
            f"server_cpus {run['server_cpus']} and loadgen_cpus {run['loadgen_cpus']} overlap; "
            "give them disjoint cores (or leave one empty to let the kernel place it)"
        )
    groups = config.get("group", [])
    if not groups:
        fail("no [[group]] to measure")
    for name, plugin in servers.PLUGINS.items():
        check_settings(plugin, config.get(name, {}), f"[{name}]", fail)
    if run.get("precision") and any(group.get("rates") == SEARCH_RATES for group in groups):
        fail(
            "a precision target and a capacity search (rates = \"search\") both decide launches: the search "
            "launches each rate until its interval decides it; run the search groups without --precision"
        )
    for group in groups:
        validate_group(group, fail)
        for name, plugin in servers.PLUGINS.items():
            check_settings(plugin, server_section(config, group, name), f"group {group['name']}: [{name}]", fail)
    for name in [n for n in run["servers"] if n not in servers.BUILT_IN]:
        if not any(name in group.get("endpoint", {}) for group in groups):
            fail(
                f"the declared server {name} is in no group: name its endpoint in a group's endpoint table, or "
                "declare like = \"<a built-in server>\" to take that server's endpoint in each group"
            )
    return typed(config)


def validate_precision(run: dict, fail) -> None:
    precision = run.get("precision")
    if (
        precision is not None
        and precision is not False
        and (isinstance(precision, bool) or not isinstance(precision, (int, float)) or not 0 < precision < 1)
    ):
        fail(f"precision is a share of the mean between 0 and 1 (0.03 = within 3 %), not {precision!r}")
    for key in ("min_launches", "max_launches"):
        if isinstance(run[key], bool) or not isinstance(run[key], int) or run[key] < 1:
            fail(f"{key} must be a positive integer, not {run[key]!r}")
    if run["min_launches"] < MIN_LAUNCHES and precision:
        fail(
            f"min_launches must be at least {MIN_LAUNCHES} with a precision target (the first stage that sets "
            "how many launches a point needs; fewer give no interval)"
        )
    if run["min_launches"] > run["max_launches"]:
        fail(f"min_launches {run['min_launches']} is above max_launches {run['max_launches']}")


def check_settings(plugin: servers.ServerPlugin, section: dict, where: str, fail) -> None:
    try:
        plugin.validate_section(section)
    except SettingsError as e:
        fail(f"{where}: {e}")


LIST_KEYS = ("concurrency", "delays_ms", "rate_shares", "db_pool_total")


def validate_group_shape(group: dict, fail) -> None:
    """The group's keys hold the kinds of value the checks below read (a string where a table belongs was a
    traceback)."""
    if not isinstance(group, dict):
        fail(f"each [[group]] is a table of keys, not {group!r}")
    if not isinstance(group.get("name"), str) or not group["name"]:
        fail(f"every [[group]] needs a name = \"...\", not {group.get('name')!r}")
    if not isinstance(group.get("endpoint", {}), dict):
        fail(
            f"group {group['name']}: endpoint is a table of server = endpoint, as endpoint = "
            f"{{ tomcat = \"/hello\", tornado = \"/hello\" }}, not {group['endpoint']!r}"
        )
    for key in LIST_KEYS:
        if key in group and not isinstance(group[key], list):
            fail(f"group {group['name']}: {key} is a list, as {key} = [{group[key]!r}], not {group[key]!r}")


def validate_group(group: dict, fail) -> None:
    validate_group_shape(group, fail)
    unknown = set(group) - GROUP_KEYS - set(servers.PLUGINS)
    if unknown:
        fail(f"group {group.get('name')}: unknown keys {sorted(unknown)}")
    if group.get("kind", DEFAULT_KIND) not in DRIVERS:
        fail(f"group {group.get('name')}: kind {group['kind']!r} unknown; known: {', '.join(DRIVERS)}")
    for server, endpoint in group.get("endpoint", {}).items():
        if server not in servers.PLUGINS or (endpoint not in ALL_ENDPOINTS and not endpoints.is_user(endpoint)):
            fail(
                f"group {group.get('name')}: endpoint {server} = {endpoint!r}; servers are "
                f"{', '.join(servers.PLUGINS)}, endpoints {', '.join(ALL_ENDPOINTS)} and [run] paths"
            )
        if not endpoints.is_user(endpoint) and endpoint not in servers.PLUGINS[server].endpoints:
            fail(
                f"group {group.get('name')}: {server} does not serve {endpoint} (it serves "
                f"{', '.join(sorted(servers.PLUGINS[server].endpoints))})"
            )
    for c in group.get("concurrency", []):
        if not isinstance(c, int) or not 1 <= c <= MAX_CONCURRENCY:
            fail(f"group {group['name']}: concurrency must be integers from 1 to {MAX_CONCURRENCY}, not {c!r}")
    if not group.get("concurrency"):
        fail(f"group {group['name']}: no concurrency levels")
    rates = group.get("rates")
    for rate in [] if rates in (None, AUTO_RATES, SEARCH_RATES) else rates if isinstance(rates, list) else [rates]:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate <= 0:
            fail(
                f"group {group['name']}: rates must be positive requests per second, \"auto\" or \"search\", "
                f"not {rate!r}"
            )
    validate_search(group, fail)
    for share in group.get("rate_shares", []):
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 5:
            fail(f"group {group['name']}: rate_shares are shares of the peak, above 0 and at most 5, not {share!r}")
    for total in group.get("db_pool_total", []):
        if total != "concurrency" and (isinstance(total, bool) or not isinstance(total, int) or total < 1):
            fail(f"group {group['name']}: db_pool_total takes connection counts or \"concurrency\", not {total!r}")
    if group.get("proxy") is not None and group["proxy"] not in PROXIES:
        fail(f"group {group['name']}: proxy must be one of {', '.join(PROXIES)}, not {group['proxy']!r}")
    validate_pooler(group, fail)
    pipeline = group.get("pipeline", 1)
    if isinstance(pipeline, bool) or not isinstance(pipeline, int) or pipeline < 1:
        fail(f"group {group['name']}: pipeline is the requests in flight per connection (1 or more), not {pipeline!r}")
    if not isinstance(group.get("worker_sweep", False), bool):
        fail(f"group {group['name']}: worker_sweep is true or false, not {group['worker_sweep']!r}")
    if (
        group.get("peak_loadgen", PEAK_LOADGEN) not in ADAPTERS
        or ADAPTERS[group.get("peak_loadgen", PEAK_LOADGEN)].open_loop
    ):
        fail(f"group {group['name']}: peak_loadgen must be a closed-loop generator, not {group['peak_loadgen']!r}")
    delays = group.get("delays_ms")
    is_delay = any(endpoints.takes_delay(e) for e in group.get("endpoint", {}).values())
    if is_delay and not delays:
        fail(f"group {group['name']}: delay endpoints need delays_ms")
    for d in delays or []:
        if not isinstance(d, int) or not 1 <= d <= MAX_DELAY_MS:  # the contract's cap on ms
            fail(f"group {group['name']}: delays_ms must be integers from 1 to {MAX_DELAY_MS}, not {d!r}")


def validate_search(group: dict, fail) -> None:
    """rates = "search" (a capacity search) takes an open-loop group and its search table (search_spec.py)."""
    searching = group.get("rates") == SEARCH_RATES
    if "search" in group and not searching:
        fail(
            f"group {group['name']}: a search table applies to rates = \"search\" only (rates is "
            f"{group.get('rates')!r})"
        )
    if not searching:
        return
    if group.get("kind") != RATE_KIND:
        fail(
            f"group {group['name']}: rates = \"search\" searches an open-loop rate: the group needs "
            f"kind = \"{RATE_KIND}\""
        )
    try:
        spec = parse_search(group.get("search"), f"group {group['name']}")
        check_target(spec, group.get("delays_ms") or [0], f"group {group['name']}")
    except SearchSpecError as e:
        fail(str(e))


def validate_pooler(group: dict, fail) -> None:
    if group.get("pooler") is None:
        if "pooler_pool" in group:
            fail(f"group {group['name']}: pooler_pool without a pooler (pooler = \"pgbouncer\")")
        return
    if group["pooler"] not in POOLERS:
        fail(f"group {group['name']}: pooler must be one of {', '.join(POOLERS)}, not {group['pooler']!r}")
    if any(e not in DB_ENDPOINTS for e in group.get("endpoint", {}).values()):
        fail(
            f"group {group['name']}: a pooler stands before the database: only database endpoints "
            f"({', '.join(DB_ENDPOINTS)})"
        )
    size = group.get("pooler_pool")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        fail(f"group {group['name']}: pooler_pool is a number of server connections, not {size!r}")


def declare_paths(config: dict, fail) -> None:
    """[run] paths, the user's own requests, checked and registered as endpoints (endpoints.declare_user)."""
    given = config.get("run", {}).get("paths") or []
    if not isinstance(given, list):
        fail(f"[run] paths is a list of request paths, as paths = [\"/api/orders\"], not {given!r}")
    for path in given:
        if problem := endpoints.user_path_problem(path):
            fail(f"[run] paths: each is {problem}")
    requests = config.get("run", {}).get("requests") or []
    if not isinstance(requests, list) or not all(isinstance(r, dict) and "path" in r for r in requests):
        fail("[run] requests is a recorded workload (a list of requests, each with its path): give --workload FILE")
    endpoints.declare_user(workload.user_endpoints(config.get("run", {})))
    for group in config.get("group", []):
        if problem := sendable(ADAPTERS.get(config.get("run", {}).get("loadgen")), group):
            fail(problem)


def sendable(generator, group: dict) -> str | None:
    """Why the run's generator cannot send a group's declared requests (LoadGenerator.sends), or None."""
    requests = workload.declared(group.get("options"))
    if generator is None or not requests or generator.sends == "mix":
        return None
    if generator.sends == "one" and len(requests) == 1:
        return None
    if generator.sends == "get" and all(workload.plain_get(r) for r in requests):
        return None
    can = {"one": "one request kind per run (its method, headers and body)", "get": "plain GETs only"}
    return (
        f"--loadgen {generator.name} cannot send group {group.get('name')}'s requests: it sends "
        f"{can[generator.sends]}; wrk sends every kind and the mix"
    )


def validate_held_windows(value, fail) -> None:
    """held_windows: true (the first generator that holds windows), false, or the name of one that does."""
    holders = [name for name, generator in ADAPTERS.items() if generator.holds_window]
    if not isinstance(value, bool) and value not in holders:
        fail(f"held_windows is true, false or a generator that holds windows ({', '.join(holders)}), not {value!r}")
