"""Database cells and the proxy in the plan: pool totals split over processes, nginx in front, bad keys refused."""

from __future__ import annotations

import pytest

from crossbench.database import DatabaseError
from crossbench.database.checks import STATEMENTS
from crossbench.database.stack import database_figures, needs_database
from crossbench.database.verify import QueryCount
from crossbench.endpoints import Request
from crossbench.plan.experiment import apply_overrides, expand, load
from crossbench.plan.experiment_schema import ExperimentError


def seed004_cells(**group_changes):
    config = load("seed004-quick")
    if group_changes:
        config["group"] = [{**g, **group_changes} for g in config["group"]]
    return expand(apply_overrides(config, {}))


def of_server(cells) -> dict[str, list]:
    """The cells by server, in plan order."""
    found: dict[str, list] = {}
    for c in cells:
        found.setdefault(c.server, []).append(c)
    return found


def test_pool_totals_are_equal_across_stacks_whatever_their_processes():
    pools = {
        (c.server, c.cell_id.split("-pool")[1].split("-")[0]): c.settings["db_pool"]
        for c in seed004_cells()
        if c.group == "pools"
    }
    assert pools[("gunicorn", "2")] == 1 and pools[("gunicorn", "16")] == 8  # 2 workers share the total
    assert pools[("uvicorn", "2")] == 2 and pools[("tomcat", "16")] == 16
    cell = next(c for c in seed004_cells() if c.cell_id == "pools-gunicorn-w2-pool16-db_slow-c16-d5-r1")
    assert database_figures(cell, QueryCount(20, 20))["db_connections_total"] == 16


def test_a_proxied_group_puts_nginx_in_front_with_its_settings():
    proxied = [c for c in seed004_cells() if c.proxy]
    assert {c.server for c in proxied} == {"gunicorn", "uvicorn"}
    assert all("-via-nginx-" in c.cell_id and c.proxy["worker_processes"] == 1 for c in proxied)
    assert all(needs_database(c) for c in seed004_cells())


def test_a_pooled_group_puts_pgbouncer_before_the_database_and_prepares_nothing():
    pooled = [c for c in seed004_cells() if c.pooler]
    assert {c.server for c in pooled} == {"tomcat", "tornado", "gunicorn", "uvicorn"}
    assert all("-pgbouncer-" in c.cell_id and c.settings["db_prepared"] is False for c in pooled)
    assert all(c.settings["db_prepared"] for c in seed004_cells() if not c.pooler)
    cell = of_server(pooled)["gunicorn"][0]
    assert database_figures(cell, QueryCount(20, 20))["pooler_connections"] == 4  # 2 workers x 2
    sized = of_server(seed004_cells(pooler="pgbouncer", pooler_pool=3))["tomcat"][0]
    assert sized.pooler == {"name": "pgbouncer", "pool_size": 3} and "-pgbouncer3-" in sized.cell_id


def test_pgbouncer_config_is_transaction_mode_on_loopback(tmp_path):
    from crossbench.database.pgbouncer import render_ini, settings

    values = settings(6432, "postgresql://crossbench@127.0.0.1:5555/crossbench", 4, 30, tmp_path / "users")
    assert values["databases"]["crossbench"] == "host=127.0.0.1 port=5555 dbname=crossbench user=crossbench"
    ini = render_ini(values)
    for line in (
        "pool_mode = transaction",
        "listen_addr = 127.0.0.1",
        "listen_port = 6432",
        "default_pool_size = 4",
        "max_client_conn = 30",
        "unix_socket_dir = \n",
    ):
        assert line in ini, line


@pytest.mark.parametrize(
    "change, message",
    [
        ({"proxy": "haproxy"}, "proxy must be one of nginx"),
        ({"db_pool_total": [0]}, "db_pool_total takes"),
        ({"db_pool_total": ["all"]}, "db_pool_total takes"),
        ({"pooler": "pgpool"}, "pooler must be one of pgbouncer"),
        ({"pooler": "pgbouncer", "pooler_pool": 0}, "pooler_pool is a number"),
        ({"pooler_pool": 4}, "pooler_pool without a pooler"),
    ],
)
def test_bad_stack_keys_are_refused(change, message):
    with pytest.raises(ExperimentError, match=message):
        seed004_cells(**change)


def test_each_endpoint_counts_its_own_statement():
    def statement_of(request):
        return STATEMENTS[request.statements[0]]

    assert Request("/queries", queries=20).queries_per_request == 20
    assert Request("/queries", queries=900).queries_per_request == 500
    assert Request("/db").queries_per_request == 1 and statement_of(Request("/db/kv")) == "FROM kv WHERE a"
    assert statement_of(Request("/db/slow", delay_ms=5)) == "pg_sleep"
    assert statement_of(Request("/queries", queries=3)) == "FROM world WHERE id"


def test_a_pooled_run_without_pgbouncer_is_refused_before_anything_runs(monkeypatch):
    from crossbench.database import stack

    monkeypatch.setattr(stack.shutil, "which", lambda name: None)
    with pytest.raises(DatabaseError, match="apt-get install pgbouncer"):
        stack.preflight(seed004_cells(), None)
    stack.preflight([c for c in seed004_cells() if not c.pooler], None)  # the rest needs no pgbouncer


def sweep_cells(**run):
    config = load("seed004-quick")
    config["group"] = [{**next(g for g in config["group"] if g["name"] == "db"), "worker_sweep": True}]
    config["run"].update(run)
    return expand(apply_overrides(config, {}))


def test_a_worker_sweep_steps_each_process_knob_up_to_twice_the_cores_plus_one():
    cells = sweep_cells(server_cpus=[1])
    steps = {}
    for c in cells:
        steps.setdefault((c.server, c.sweep), []).append(c.sweep_step)
    assert steps[("gunicorn", "db-gunicorn-wN-db-c16-d0")] == [1, 2, 3]  # 2 x 1 core + 1
    assert steps[("tornado", "db-tornado-pN-db-c16-d0")] == [1, 2, 3]
    assert steps[("uvicorn", "db-uvicorn-wN-db-c16-d0")] == [1, 2, 3]
    assert steps[("tomcat", None)] == [None]  # one JVM: measured once
    assert [c.settings["workers"] for c in of_server(cells)["gunicorn"]] == [1, 2, 3]
    assert len({c.cell_id for c in cells}) == len(cells)
    assert max(c.sweep_step for c in sweep_cells(server_cpus=[0, 1], loadgen_cpus=[]) if c.sweep) == 5


def test_a_sweep_measured_once_stops_after_two_drops_in_a_row_and_only_then():
    cells = of_server(sweep_cells(server_cpus=[0, 1], loadgen_cpus=[]))["uvicorn"]

    def records(*rps):
        return {
            c.cell_id: {"sweep": c.sweep, "sweep_step": c.sweep_step, "status": "ok", "rps": r}
            for c, r in zip(cells, rps)
        }

    from crossbench.decide.between_cells import sweep_stopped

    assert sweep_stopped(cells[3], records(100, 90, 95), single_launch=True) is None  # a drop, then a rise
    assert "two steps in a row" in sweep_stopped(cells[3], records(100, 90, 80), single_launch=True)
    assert sweep_stopped(cells[4], records(100, 120, 110, 130), single_launch=True) is None
    assert sweep_stopped(cells[2], records(100, 90), single_launch=True) is None  # one drop so far
    assert sweep_stopped(cells[3], records(100, 90, 80)) is None  # launched once: no interval, no drop


def test_a_sweep_with_launches_stops_only_on_drops_beyond_the_intervals():
    cells = of_server(sweep_cells(server_cpus=[0, 1], loadgen_cpus=[]))["uvicorn"]

    def records(*launches):
        return {
            f"{c.cell_id}-{i}": {"sweep": c.sweep, "sweep_step": c.sweep_step, "status": "ok", "rps": r}
            for c, rps in zip(cells, launches)
            for i, r in enumerate(rps)
        }

    from crossbench.decide.between_cells import sweep_stopped

    clear = records((100, 102), (90, 91), (80, 81))  # B/A 0.896 [0.840, 0.956], then 0.889 [0.858, 0.922]
    assert "beyond their 95 % intervals two steps in a row (101, 90, 80 req/s)" in sweep_stopped(cells[3], clear)
    overlapping = records((100, 102), (90, 100), (80, 81))  # 0.939 [0.524, 1.684]: the first drop is within the noise
    assert sweep_stopped(cells[3], overlapping) is None
    a_tie = records((100, 102), (90, 91), (89, 92))
    assert sweep_stopped(cells[3], a_tie) is None


def test_a_shuffled_sweep_keeps_each_series_together_and_in_step_order():
    cells = sweep_cells(shuffle=True, shuffle_seed=5)
    for series in {c.sweep for c in cells if c.sweep}:
        positions = [i for i, c in enumerate(cells) if c.sweep == series]
        assert positions == list(range(positions[0], positions[0] + len(positions)))
        assert [cells[i].sweep_step for i in positions] == sorted(cells[i].sweep_step for i in positions)


def test_seed004_runs_the_articles_protocol_with_swept_workers_and_techempowers_range():
    cells = expand(apply_overrides(load("seed004"), {"shuffle": False, "precision": False}))
    article = [c for c in cells if c.group == "article"]
    assert all(
        c.kind == "fixed_count"
        and c.options["requests"] == 100_000
        and c.concurrency == 100
        and not c.options["keepalive"]
        and c.proxy
        and c.endpoint == "/db/kv"
        for c in article
    )
    assert sorted(c.sweep_step for c in of_server(article)["gunicorn"]) == [1, 2, 3]  # server on one core
    assert [c.concurrency for c in of_server(cells)["uvicorn"] if c.group == "techempower"] == [
        1,
        16,
        32,
        64,
        128,
        256,
        512,
        1000,
    ]
    totals = {c.cell_id.split("-pool")[1].split("-")[0] for c in cells if c.group == "pools"}
    assert totals == {"2", "4", "8", "64"}
    assert {c.server for c in cells if c.pooler} == {"tomcat", "tornado", "gunicorn", "uvicorn"}


def test_tomcats_pool_peaks_read_the_hikari_mbean_inside_the_window(tmp_path):
    import json as _json

    from crossbench.sampling import db_pool
    from crossbench.sampling.jvm_probe import db_pool_counts

    def db_pool_peaks(path, t0, t1):
        return db_pool.peaks(db_pool_counts(path), t0, t1)

    def line(t, active, waiting):
        return _json.dumps(
            {
                "type": "pool",
                "t_epoch": t,
                "pools": [],
                "db_pools": [
                    {"name": "Pool (crossbench)", "active": active, "idle": 0, "total": 2, "waiting": waiting}
                ],
            }
        )

    lines = [
        _json.dumps({"type": "jvm"}),
        line(9.0, 2, 30),
        line(10.0, 1, 0),
        line(11.0, 2, 14),
        "not json",
        line(12.0, -1, -1),
        line(14.0, 2, 40),
        _json.dumps({"type": "pool", "t_epoch": 10.5, "pools": []}),
    ]
    (tmp_path / "probe.jsonl").write_text("\n".join(lines) + "\n")
    assert db_pool_peaks(tmp_path / "probe.jsonl", 10.0, 13.0) == {"db_pool_active_peak": 2, "db_pool_waiting_peak": 14}
    assert db_pool_peaks(tmp_path / "missing.jsonl", 0, 1) == {
        "db_pool_active_peak": None,
        "db_pool_waiting_peak": None,
    }


def test_the_articles_ab_run_has_time_for_its_count_and_a_bounded_warm_up():
    from crossbench.drivers.fixed_count import WARMUP_MAX_REQUESTS, ab_options

    article = next(c for c in expand(apply_overrides(load("seed004"), {})) if c.group == "article")
    assert ab_options(article, 0).wall_limit_s >= 100_000 * 0.005  # 200 answers a second, one by one
    assert ab_options(article, 0, WARMUP_MAX_REQUESTS).requests == 10_000


def test_the_plain_rule_is_kept_for_runs_that_launch_each_point_once():
    from crossbench.plan import experiment
    from crossbench.run.run_loop import launched_once

    def run_of(name: str, **run):
        return experiment.recorded(experiment.apply_overrides(experiment.load(name), run)).run

    assert launched_once(run_of("quick", repetitions=1))
    assert not launched_once(run_of("quick"))  # three rounds
    assert not launched_once(run_of("quick", repetitions=1, precision=0.05))
    assert launched_once(run_of("tfb"))  # TechEmpower's protocol
    assert not launched_once(run_of("seed004"))  # a precision target
