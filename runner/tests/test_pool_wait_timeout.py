"""A database request may wait db_wait_ms for a pooled connection before its 503: the load generator's timeout
lies above that wait, so a slow answer the server would have given is not counted as the generator's timeout
(tfb's 20-query cells at C=512 wait seconds for one of 10 connections); cells without a database keep theirs."""

from crossbench.drivers.closed_loop import load_spec
from crossbench.plan import experiment
from crossbench.record import metrics


def tfb_cells(**knobs):
    config = experiment.apply_overrides(experiment.load("tfb-quick"), {"shuffle": False, **knobs})
    return experiment.expand(config)


def test_the_generators_timeout_is_above_the_pools_wait_on_database_cells_only():
    cells = tfb_cells(db_wait_ms=30000)
    queries = next(c for c in cells if c.endpoint == "/queries" and c.server == "tomcat")
    json_cell = next(c for c in cells if c.endpoint == "/json" and c.server == "tomcat")
    assert queries.settings["db_wait_ms"] == 30000
    assert load_spec(queries, "http://127.0.0.1:1").timeout_s == metrics.loadgen_timeout_s(30.0) == 50.0
    assert load_spec(json_cell, "http://127.0.0.1:1").timeout_s == metrics.loadgen_timeout_s(0.0) == 10.0
