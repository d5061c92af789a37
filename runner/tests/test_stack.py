"""Database cells and the proxy in the plan: pool totals split over processes, nginx in front, bad keys refused."""
from __future__ import annotations

import pytest

from crossbench.experiment import ExperimentError, apply_overrides, expand, load
from crossbench.stack import database_figures, needs_database
from crossbench.database.verify import QueryCount, queries_per_request, statement_of


def seed004_cells(**group_changes):
    config = load("seed004-quick")
    if group_changes:
        config["group"] = [{**g, **group_changes} for g in config["group"]]
    return expand(apply_overrides(config, {}))


def test_pool_totals_are_equal_across_stacks_whatever_their_processes():
    pools = {(c.server, c.cell_id.split("-pool")[1].split("-")[0]): c.settings["db_pool"]
             for c in seed004_cells() if c.group == "pools"}
    assert pools[("gunicorn", "2")] == 1 and pools[("gunicorn", "16")] == 8        # 2 workers share the total
    assert pools[("uvicorn", "2")] == 2 and pools[("tomcat", "16")] == 16
    cell = next(c for c in seed004_cells() if c.cell_id == "pools-gunicorn-w2-pool16-db_slow-c16-d5-r1")
    assert database_figures(cell, QueryCount(20, 20))["db_connections_total"] == 16


def test_a_proxied_group_puts_nginx_in_front_with_its_settings():
    proxied = [c for c in seed004_cells() if c.proxy]
    assert {c.server for c in proxied} == {"gunicorn", "uvicorn"}
    assert all("-via-nginx-" in c.cell_id and c.proxy["worker_processes"] == 1 for c in proxied)
    assert all(needs_database(c) for c in seed004_cells())


@pytest.mark.parametrize("change, message", [({"proxy": "haproxy"}, "proxy must be one of nginx"),
                                             ({"db_pool_total": [0]}, "db_pool_total takes"),
                                             ({"db_pool_total": ["all"]}, "db_pool_total takes")])
def test_bad_stack_keys_are_refused(change, message):
    with pytest.raises(ExperimentError, match=message):
        seed004_cells(**change)


def test_each_endpoint_counts_its_own_statement():
    assert queries_per_request("/queries?queries=20") == 20 and queries_per_request("/queries?queries=900") == 500
    assert queries_per_request("/db") == 1 and statement_of("/db/kv") == "FROM kv WHERE a"
    assert statement_of("/db/slow?ms=5") == "pg_sleep" and statement_of("/queries?queries=3") == "FROM world WHERE id"
