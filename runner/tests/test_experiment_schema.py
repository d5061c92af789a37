"""Typed experiments: validation yields typed values (experiment_schema.py) and refuses unknown keys by name; a
point is a typed value (cellplan.Point) from which the point id and the cell ids derive."""

import pytest

from crossbench.plan import experiment
from crossbench.plan.cellplan import Point
from crossbench.plan.experiment_checks import validate
from crossbench.plan.experiment_schema import Experiment, ExperimentError, Group, RunSettings
from crossbench.record.record import point_of

FILE = '''name = "typed"
[run]
duration_s = 2
warmup_s = 1
servers = ["tomcat", "tornado"]
[tornado]
processes = 2
[[group]]
name = "hello"
endpoint = { tomcat = "/hello", tornado = "/hello" }
concurrency = [4, 8]
[[group]]
name = "slow"
endpoint = { tornado = "/db/slow" }
concurrency = [2]
delays_ms = [50]
db_pool_total = [4]
pooler = "pgbouncer"
pooler_pool = 3
[group.tornado]
processes = 1
'''


def loaded(tmp_path, text=FILE):
    path = tmp_path / "typed.toml"
    path.write_text(text)
    return experiment.load(str(path))


def test_validation_yields_typed_settings_and_groups(tmp_path):
    typed = validate(loaded(tmp_path))
    assert isinstance(typed, Experiment) and isinstance(typed.run, RunSettings)
    assert all(isinstance(group, Group) for group in typed.groups)
    assert (typed.name, typed.run.duration_s, typed.run.servers, typed.run.repetitions) == (
        "typed",
        2,
        ("tomcat", "tornado"),
        1,
    )
    hello, slow = typed.groups
    assert (hello.kind, hello.concurrency, hello.delays_ms, hello.pooler) == ("closed_loop", (4, 8), (0,), None)
    assert (slow.delays_ms, slow.db_pool_total, slow.pooler, slow.pooler_pool) == ((50,), (4,), "pgbouncer", 3)
    # each server's settings: the experiment's section with the group's own on top
    assert hello.sections["tornado"]["processes"] == 2 and slow.sections["tornado"]["processes"] == 1


@pytest.mark.parametrize(
    "text, message",
    [
        (
            FILE.replace("pooler_pool = 3\n", "pooler_pool = 3\nbogus = 1\n"),
            r"experiment typed: group slow: unknown keys \['bogus'\]",
        ),
        (FILE + '[frobnicator]\nx = 1\n', r"experiment typed: unknown sections \['frobnicator'\]"),
        (FILE + 'bogus = 1\n', r"group slow: \[tornado\]: unknown \[tornado\] keys \['bogus'\]"),
    ],
    ids=["group key", "section", "server key"],
)
def test_unknown_keys_are_refused_by_name(tmp_path, text, message):
    with pytest.raises(ExperimentError, match=message):
        validate(loaded(tmp_path, text))


@pytest.mark.parametrize(
    "old, new, message",
    [
        (
            'endpoint = { tomcat = "/hello", tornado = "/hello" }',
            'endpoint = "/hello"',
            r"group hello: endpoint is a table of server = endpoint, as endpoint = \{ tomcat",
        ),
        ("concurrency = [4, 8]", "concurrency = 4", r"group hello: concurrency is a list, as concurrency = \[4\]"),
        ("delays_ms = [50]", "delays_ms = 50", r"group slow: delays_ms is a list"),
        ('name = "hello"\n', "", r"every \[\[group\]\] needs a name"),
    ],
    ids=["endpoint", "concurrency", "delays", "name"],
)
def test_a_group_value_of_the_wrong_shape_is_refused_in_one_line(tmp_path, old, new, message):
    assert old in FILE
    with pytest.raises(ExperimentError, match=message):
        validate(loaded(tmp_path, FILE.replace(old, new, 1)))


def test_a_delay_endpoint_without_delays_is_refused_from_the_endpoint_table(tmp_path):
    with pytest.raises(ExperimentError, match="group slow: delay endpoints need delays_ms"):
        validate(loaded(tmp_path, FILE.replace("delays_ms = [50]\n", "")))


def test_a_point_id_and_its_cell_ids_derive_from_the_typed_point():
    point = Point(
        group="g",
        server="tornado",
        variant="-p2",
        endpoint="/db/slow",
        concurrency=8,
        delay_ms=50,
        proxy="nginx",
        pool_total=4,
        pooler="pgbouncer",
        pooler_pool=3,
        rate=120.0,
    )
    assert point.id == "g-tornado-p2-via-nginx-pool4-pgbouncer3-db_slow-c8-d50-q120"
    assert point.cell_id(2) == point.id + "-r2" and point_of(point.cell_id(2)) == point.id
    peak = Point(
        group="g", server="tomcat", variant="", endpoint="/static/*", concurrency=1, delay_ms=0, peak=True, share=0.25
    )
    assert peak.id == "g-peak-tomcat-static_mix-c1-d0-q25pct"


def test_the_planned_cells_carry_the_ids_of_their_points(tmp_path):
    cells = experiment.expand(experiment.apply_overrides(loaded(tmp_path), {"shuffle": False}))
    slow = next(c for c in cells if c.group == "slow")
    assert slow.point_id == "slow-tornado-pool4-pgbouncer3-db_slow-c2-d50"
    assert slow.cell_id == slow.point_id + "-r1"
    assert slow.settings["db_prepared"] is False  # PgBouncer 1.18's transaction mode keeps none
    assert slow.paths() == ["/db/slow?ms=50"] and slow.paths(delay_ms=0) == ["/db/slow?ms=0"]


def test_a_delay_above_the_contracts_cap_is_refused(tmp_path):
    with pytest.raises(ExperimentError, match="group slow: delays_ms must be integers from 1 to 60000, not 60001"):
        validate(loaded(tmp_path, FILE.replace("delays_ms = [50]", "delays_ms = [60001]")))
