import pytest

from crossbench import experiment
from crossbench.servers import PLUGINS
from crossbench.experiment import ExperimentError


def resolve(name="seed002", **overrides):
    return experiment.apply_overrides(experiment.load(name), overrides)


def test_seed002_is_the_seed_matrix():
    cells = experiment.expand(resolve())
    assert len(cells) == 2 * 4 + 2 * 3 * 4 + 4
    delay = [c for c in cells if c.group == "delay"]
    assert {(c.server, c.endpoint) for c in delay} == {("tomcat", "/delay/sync"), ("tornado", "/delay/async")}
    assert {(c.server, c.endpoint) for c in cells if c.group == "tomcat_async"} == {("tomcat", "/delay/async")}
    assert {c.delay_ms for c in delay} == {1000, 3000, 10000}
    assert {c.concurrency for c in cells} == {1, 10, 100, 1000}
    assert all(c.duration_s == 60 for c in cells)
    assert len({c.cell_id for c in cells}) == len(cells)


def test_quick_is_small():
    cells = experiment.expand(resolve("quick"))
    run_s = sum(c.duration_s + c.warmup_s for c in cells)
    assert run_s <= 120


def test_overrides():
    cells = experiment.expand(resolve(servers=["tomcat"], concurrency=[5], delays_ms=[200], duration_s=3,
                                      max_threads=[20, 50], executor=["platform", "virtual"], groups=["delay"]))
    assert [(c.settings["max_threads"], c.settings["executor"]) for c in cells] == [(20, "platform"), (50, "platform"), (None, "virtual")]
    assert all((c.concurrency, c.delay_ms, c.duration_s) == (5, 200, 3) for c in cells)
    assert [c.parallel_limit for c in cells] == [20, 50, None]     # virtual threads wait without a pool thread


def test_shuffle_is_reproducible_and_complete():
    a = experiment.expand(resolve(shuffle=True))
    b = experiment.expand(resolve(shuffle=True))
    plain = experiment.expand(resolve())
    assert [c.cell_id for c in a] == [c.cell_id for c in b]
    assert [c.cell_id for c in a] != [c.cell_id for c in plain]
    assert sorted(c.cell_id for c in a) == sorted(c.cell_id for c in plain)


@pytest.mark.parametrize("overrides, message", [
    ({"servers": ["lighttpd"]}, "unknown server 'lighttpd'; known: tomcat, tornado"),
    ({"server_cpus": [0], "loadgen_cpus": [0]}, "overlap"),
    ({"concurrency": [0]}, "concurrency must be integers"),
    ({"delays_ms": [70000]}, "delays_ms must be integers"),
    ({"duration_s": 0}, "duration_s must be a positive"),
    ({"executor": ["green"]}, "executor must be one of platform, virtual, not 'green'"),
    ({"max_threads": [0]}, "max_threads must be a positive integer, not 0"),
    ({"groups": ["nothing"]}, "no group nothing"),
])
def test_bad_overrides_are_refused_clearly(overrides, message):
    with pytest.raises(ExperimentError, match=message):
        resolve(**overrides)


def test_unknown_experiment_lists_the_known_ones():
    with pytest.raises(ExperimentError, match="known: .*seed002"):
        experiment.load("nope")


def test_unknown_keys_in_a_file_are_refused(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\n[run]\nduration_s = 1\nwarmup_s = 0\ndurration = 5\n'
                   '[[group]]\nname = "g"\nendpoint = { tornado = "/hello" }\nconcurrency = [1]\n')
    with pytest.raises(ExperimentError, match="unknown \\[run\\] keys \\['durration'\\]"):
        experiment.apply_overrides(experiment.load(str(bad)), {})


def test_http_load_means_one_connection_per_fetch():
    config = resolve(loadgen="http_load")
    assert config["run"]["keepalive"] is False


def test_cell_paths():
    cells = experiment.expand(resolve("quick"))
    static = next(c for c in cells if c.group == "static")
    delay = next(c for c in cells if c.group == "delay")
    assert static.paths() == ["/static/index.html", "/static/big.jpg", "/static/small.png"]
    assert delay.paths() == [f"{delay.endpoint}?ms=250"]


def test_group_sections_override_the_experiment_and_the_command_line_overrides_both(tmp_path):
    path = tmp_path / "groups.toml"
    path.write_text('name = "groups"\n[run]\nduration_s = 1\nwarmup_s = 0\n[tomcat]\nmax_threads = [200]\n'
                    '[[group]]\nname = "queue"\nendpoint = { tomcat = "/delay/sync", tornado = "/delay/sync" }\n'
                    'concurrency = [50]\ndelays_ms = [100]\n'
                    'tomcat = { max_threads = [5], accept_count = 3, max_connections = 10 }\n'
                    'tornado = { processes = [1, 2], backlog = 16 }\n')
    cells = experiment.expand(experiment.apply_overrides(experiment.load(str(path)), {}))
    assert [(c.server, c.settings) for c in cells] == [
        ("tomcat", {**PLUGINS["tomcat"].defaults(), "max_threads": 5, "accept_count": 3, "max_connections": 10}),
        ("tornado", {**PLUGINS["tornado"].defaults(), "processes": 1, "backlog": 16}),
        ("tornado", {**PLUGINS["tornado"].defaults(), "processes": 2, "backlog": 16})]
    assert cells[2].cell_id == "queue-tornado-p2-delay_sync-c50-d100-r1"
    cli = experiment.expand(experiment.apply_overrides(experiment.load(str(path)), {"max_threads": [7]}))
    assert [c.settings.get("max_threads") for c in cli] == [7, None, None]


def test_jdk_selection():
    from crossbench.jdk import JdkError, installed_jdks, select_jdk
    jdks = installed_jdks()
    assert select_jdk("newest", need_virtual_threads=False) == jdks[-1]
    with pytest.raises(JdkError, match="no JDK 3 installed"):
        select_jdk("3", need_virtual_threads=False)
    old = [j for j in jdks if not j.has_virtual_threads]
    if old:
        with pytest.raises(JdkError, match="needs JDK 21"):
            select_jdk(str(old[0].home), need_virtual_threads=True)
