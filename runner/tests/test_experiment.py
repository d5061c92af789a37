import copy
from pathlib import Path

import pytest

from crossbench import durations, paths, pyenvs
from crossbench.plan import experiment
from crossbench.plan.cellplan import plan_from_dict
from crossbench.plan.experiment_schema import ExperimentError
from crossbench.record.record import point_of
from crossbench.servers import PLUGINS


def resolve(name="seed002", **overrides):
    """The experiment in plan order (shuffle=False) unless a test asks for its shuffled rounds."""
    return experiment.apply_overrides(experiment.load(name), {"shuffle": False, "precision": False, **overrides})


def test_seed002_is_the_seed_matrix_with_windows_that_grow_with_the_delay_and_three_launches_first():
    cells = experiment.expand(resolve(precision=0.05))
    assert len(cells) == 3 * (2 * 4 + 2 * 3 * 4 + 4)
    assert {c.delay_ms: c.duration_s for c in cells} == {0: 10, 1000: 10, 3000: 10, 10000: 30}
    assert {c.repetition for c in cells} == {1, 2, 3}
    # delayed closed-loop cells hold their window (one oha process: loadgen/held.py), the static mix stays on wrk
    assert {c.loadgen for c in cells if c.delay_ms} == {"oha"} and {c.loadgen for c in cells if not c.delay_ms} == {
        "wrk"
    }
    assert {c.loadgen for c in experiment.expand(resolve("seed002-protocol"))} == {"wrk"}  # the seed's own method


def test_maxthreads_quick_windows_hold_fifty_of_their_slowest_round_trips():
    """One round trip of each connection too many or too few moves a window's figures by round trip / window, so
    2 % asks 50 round trips: ceil(C / maxThreads) rounds of 200 ms past the pool, one round at or under it and on
    virtual threads; the file's 3 s where that is longer (nowhere here)."""
    windows = {
        (c.settings["executor"], c.settings["max_threads"], c.concurrency): c.duration_s
        for c in experiment.expand(resolve("maxthreads-quick"))
    }
    assert windows[("platform", 20, 100)] == 50.0  # 5 rounds of 200 ms
    assert windows[("platform", 20, 50)] == 30.0  # 3 rounds at worst (2.5 on average)
    assert windows[("platform", 50, 100)] == 20.0
    assert {w for (executor, pool, c), w in windows.items() if executor == "virtual" or c <= pool} == {10.0}
    assert {c.duration_s for c in experiment.expand(resolve("maxthreads-quick", max_window_bias=0))} == {3}
    loose = {
        c.concurrency: c.duration_s
        for c in experiment.expand(resolve("maxthreads-quick", max_window_bias=0.1))
        if c.settings["executor"] == "platform" and c.settings["max_threads"] == 20
    }
    assert loose == {10: 3, 20: 3, 50: 6.0, 100: 10.0}  # the file's 3 s where round trips ask less


def test_held_windows_leave_a_generator_the_run_names_alone():
    assert {c.loadgen for c in experiment.expand(resolve(loadgen="http_load"))} == {"http_load"}
    held = [c for c in experiment.expand(resolve()) if c.delay_ms]
    assert held and all(c.loadgen == "oha" for c in held)


def test_held_windows_name_the_generator_that_holds_them():
    """true keeps meaning oha; a generator's name holds the delayed cells' windows on it, the rest stay on wrk."""
    for value, holder in ((True, "oha"), ("oha", "oha"), ("k6", "k6")):
        cells = experiment.expand(resolve("quick", held_windows=value))
        assert {c.loadgen for c in cells if c.delay_ms} == {holder}, value
        assert {c.loadgen for c in cells if not c.delay_ms} == {"wrk"}, value
    assert {c.loadgen for c in experiment.expand(resolve("quick", held_windows=False))} == {"wrk"}


def test_seed002_protocol_is_the_seeds_own_matrix():
    cells = experiment.expand(resolve("seed002-protocol"))
    assert len(cells) == 2 * 4 + 2 * 3 * 4 + 4
    delay = [c for c in cells if c.group == "delay"]
    assert {(c.server, c.endpoint) for c in delay} == {("tomcat", "/delay/sync"), ("tornado", "/delay/async")}
    assert {(c.server, c.endpoint) for c in cells if c.group == "tomcat_async"} == {("tomcat", "/delay/async")}
    assert {c.delay_ms for c in delay} == {1000, 3000, 10000}
    assert {c.concurrency for c in cells} == {1, 10, 100, 1000}
    assert all(c.duration_s == 60 for c in cells)
    assert len({c.cell_id for c in cells}) == len(cells)


def test_quick_is_small_and_launches_every_point_three_times():
    cells = experiment.expand(resolve("quick"))
    run_s = sum(c.duration_s + c.warmup_s for c in cells)
    assert run_s <= 150 and {c.repetition for c in cells} == {1, 2, 3}


def test_overrides():
    cells = experiment.expand(
        resolve(
            servers=["tomcat"],
            concurrency=[5],
            delays_ms=[200],
            duration_s=3,
            max_threads=[20, 50],
            executor=["platform", "virtual"],
            groups=["delay"],
        )
    )
    assert [(c.settings["max_threads"], c.settings["executor"]) for c in cells] == [
        (20, "platform"),
        (50, "platform"),
        (None, "virtual"),
    ]
    assert all((c.concurrency, c.delay_ms, c.duration_s) == (5, 200, 3) for c in cells)
    assert [c.parallel_limit for c in cells] == [20, 50, None]  # virtual threads wait without a pool thread


def test_shuffle_is_reproducible_from_its_recorded_seed_and_complete():
    a = experiment.expand(resolve(shuffle=True, shuffle_seed=7))
    b = experiment.expand(resolve(shuffle=True, shuffle_seed=7))
    other = experiment.expand(resolve(shuffle=True, shuffle_seed=8))
    plain = experiment.expand(resolve(shuffle=False))
    assert [c.cell_id for c in a] == [c.cell_id for c in b]
    assert [c.cell_id for c in a] != [c.cell_id for c in plain]
    assert [c.cell_id for c in a] != [c.cell_id for c in other]
    assert sorted(c.cell_id for c in a) == sorted(c.cell_id for c in plain)


def test_a_run_draws_and_records_its_seed_when_none_is_given():
    config = experiment.apply_overrides(experiment.load("seed002"), {})
    assert isinstance(config["run"]["shuffle_seed"], int) and config["run"]["shuffle"] is True


def test_runs_go_in_rounds_every_point_once_then_again_each_round_in_its_own_order():
    cells = experiment.expand(resolve("quick", repetitions=3, shuffle=True, shuffle_seed=3))
    points = {c.point_id for c in cells}
    rounds = [cells[i * len(points) : (i + 1) * len(points)] for i in range(3)]
    for number, round_cells in enumerate(rounds, 1):
        assert {c.point_id for c in round_cells} == points and {c.repetition for c in round_cells} == {number}
    assert [c.point_id for c in rounds[0]] != [c.point_id for c in rounds[1]]
    assert all(c.cell_id == f"{c.point_id}-r{c.repetition}" for c in cells)


def test_the_point_id_is_everything_but_the_repetition():
    cells = experiment.expand(resolve("quick", repetitions=2))
    assert len({c.point_id for c in cells}) == len(cells) // 2
    assert point_of("static-tomcat-mt200-static_mix-c100-d0-r12") == "static-tomcat-mt200-static_mix-c100-d0"
    old = {**cells[0].to_dict(), "point_id": ""}  # a plan.json written before points had ids
    assert plan_from_dict(old).point_id == cells[0].point_id


def test_a_precision_target_plans_its_first_stage_of_three_rounds_first():
    cells = experiment.expand(resolve("quick", precision=0.05, repetitions=1))
    assert {c.repetition for c in cells} == {1, 2, 3}


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"servers": ["lighttpd"]}, "unknown server 'lighttpd'; known: tomcat, tornado"),
        ({"server_cpus": [0], "loadgen_cpus": [0]}, "overlap"),
        ({"concurrency": [0]}, "concurrency must be integers"),
        ({"delays_ms": [70000]}, "delays_ms must be integers"),
        ({"duration_s": 0}, "duration_s must be a positive"),
        ({"executor": ["green"]}, "executor must be one of platform, virtual, not 'green'"),
        ({"max_threads": [0]}, "max_threads must be a positive integer, not 0"),
        ({"groups": ["nothing"]}, "no group nothing"),
        ({"precision": 1.5}, "precision is a share of the mean between 0 and 1"),
        ({"precision": 0}, "precision is a share of the mean between 0 and 1"),
        ({"min_window_delays": -1}, "min_window_delays is a number of delays"),
        ({"max_window_bias": 1}, "max_window_bias is a share of a window's figures between 0 .off. and 1, not 1"),
        ({"max_window_bias": -0.02}, "max_window_bias is a share"),
        (
            {"held_windows": "wrk"},
            "held_windows is true, false or a generator that holds windows .oha, k6, vegeta., not 'wrk'",
        ),
        ({"precision": 0.05, "min_launches": 5, "max_launches": 3}, "min_launches 5 is above max_launches 3"),
        ({"precision": 0.05, "min_launches": 2}, "min_launches must be at least 3"),
    ],
)
def test_bad_overrides_are_refused_clearly(overrides, message):
    with pytest.raises(ExperimentError, match=message):
        resolve(**overrides)


def test_unknown_experiment_lists_the_known_ones():
    with pytest.raises(ExperimentError, match="known: .*seed002"):
        experiment.load("nope")


def test_unknown_keys_in_a_file_are_refused(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'name = "bad"\n[run]\nduration_s = 1\nwarmup_s = 0\ndurration = 5\n'
        '[[group]]\nname = "g"\nendpoint = { tornado = "/hello" }\nconcurrency = [1]\n'
    )
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
    path.write_text(
        'name = "groups"\n[run]\nduration_s = 1\nwarmup_s = 0\nshuffle = false\n[tomcat]\nmax_threads = [200]\n'
        '[[group]]\nname = "queue"\nendpoint = { tomcat = "/delay/sync", tornado = "/delay/sync" }\n'
        'concurrency = [50]\ndelays_ms = [100]\n'
        'tomcat = { max_threads = [5], accept_count = 3, max_connections = 10 }\n'
        'tornado = { processes = [1, 2], backlog = 16 }\n'
    )
    cells = experiment.expand(experiment.apply_overrides(experiment.load(str(path)), {}))
    assert [(c.server, c.settings) for c in cells] == [
        ("tomcat", {**PLUGINS["tomcat"].defaults(), "max_threads": 5, "accept_count": 3, "max_connections": 10}),
        ("tornado", {**PLUGINS["tornado"].defaults(), "processes": 1, "backlog": 16}),
        ("tornado", {**PLUGINS["tornado"].defaults(), "processes": 2, "backlog": 16}),
    ]
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


@pytest.mark.parametrize("name", sorted(p.stem for p in paths.EXPERIMENTS.glob("*.toml")))
def test_every_experiment_file_loads_checks_and_expands(name, monkeypatch):
    # python = "all" reads the interpreters found: two stand in for this machine's, none of them started
    found = tuple(pyenvs.Interpreter(Path(f"/opt/py/{v}/bin/python{v}"), f"{v}.0") for v in ("3.11", "3.13"))
    monkeypatch.setattr(pyenvs, "installed", lambda: found)
    cells = experiment.expand(experiment.apply_overrides(experiment.load(name), {}))
    assert cells and len({c.cell_id for c in cells}) == len(cells)


FILE_WITH_UNITS = """
[run]
{run}
servers = ["tomcat"]
[[group]]
name = "delay"
endpoint = {{ tomcat = "/delay/sync" }}
concurrency = [1]
{group}
"""


def file_with(tmp_path, run: str, group: str = 'delays = ["1s", "250ms"]'):
    path = tmp_path / "units.toml"
    path.write_text(FILE_WITH_UNITS.format(run=run, group=group))
    return str(path)


def test_an_experiment_file_writes_durations_with_their_unit_and_records_them_in_the_named_one(tmp_path):
    config = experiment.load(file_with(tmp_path, 'duration = "1m30s"\nwarmup = "0"'))
    assert (config["run"]["duration_s"], config["run"]["warmup_s"]) == (90.0, 0.0)
    assert config["group"][0]["delays_ms"] == [1000, 250] and "delays" not in config["group"][0]
    cells = experiment.expand(experiment.apply_overrides(config, {}))
    assert {(c.duration_s, c.delay_ms) for c in cells} == {(90.0, 1000), (90.0, 250)}
    named = experiment.load(file_with(tmp_path, "duration_s = 90\nwarmup_s = 0", "delays_ms = [1000, 250]"))
    assert named["run"] == config["run"] and named["group"] == config["group"]


@pytest.mark.parametrize(
    "run, group, said",
    [
        ('duration = "10"\nwarmup = "1s"', 'delays = ["1s"]', "has no unit"),
        ("duration = 10\nwarmup = \"1s\"", 'delays = ["1s"]', "with its unit in quotes"),
        ('duration = "0s"\nwarmup = "1s"', 'delays = ["1s"]', "above 0"),
        ('duration = "-5s"\nwarmup = "1s"', 'delays = ["1s"]', "not negative"),
        ('duration = "10s"\nwarmup = "1s"', 'delays = ["2m"]', "to 60000 ms"),
        ('duration = "10s"\nwarmup = "1s"', "delays = [1000]", "a list of durations"),
        ('duration = "10s"\nduration_s = 10\nwarmup = "1s"', 'delays = ["1s"]', "both duration and duration_s"),
    ],
)
def test_a_duration_in_a_file_that_does_not_read_is_refused_in_one_line(tmp_path, run, group, said):
    with pytest.raises(ExperimentError) as refused:
        experiment.load(file_with(tmp_path, run, group))
    assert said in str(refused.value) and "\n" not in str(refused.value), str(refused.value)


@pytest.mark.parametrize("seconds", [0, 0.5, 1.5, 10, 90, 3600, 5400, 0.25])
def test_a_duration_shown_reads_back_as_itself(seconds):
    assert durations.seconds(durations.text(seconds)) == seconds


def test_durations_take_units_as_wrk_and_k6_do_compound_ones_too():
    from crossbench.run import run_args

    args = run_args.parse_args(["--duration", "30s", "--warmup", "500ms", "--keep-up", "2m"])
    assert (args.duration_s, args.warmup_s, args.keep_up_s) == (30.0, 0.5, 120.0)
    assert run_args.parse_args(["--duration", "1m30s"]).duration_s == 90.0
    assert run_args.parse_args(["--duration", "1.5s"]).duration_s == 1.5
    assert run_args.parse_args(["--duration", "1h"]).duration_s == 3600.0
    assert run_args.parse_args(["--warmup", "0"]).warmup_s == 0.0  # 0 is 0 in any unit


@pytest.mark.parametrize("option", ["--duration", "--warmup", "--keep-up", "--delays"])
def test_a_bare_number_is_refused_where_its_unit_would_be_a_guess(option, capsys):
    from crossbench.run import run_args

    with pytest.raises(SystemExit) as refused:
        run_args.parse_args([option, "5"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert refused.value.code == 2 and option in err and "has no unit: write 5s, 5ms or 5m" in err, err


@pytest.mark.parametrize(
    "given",
    [
        ["--duration", "0"],
        ["--duration", "0s"],
        ["--duration", "-1s"],
        ["--warmup", "-2s"],
        ["--keep-up", "-1m"],
        ["--delays", "0ms"],
        ["--delays", "1s,-250ms"],
        ["--concurrency", "0"],
        ["--concurrency", "10,-1"],
        ["--repetitions", "0"],
        ["--max-launches", "-3"],
        ["--rates", "0"],
        ["--best-level-launches", "-1"],
        ["--loadgen-threads", "0"],
    ],
)
def test_zero_and_negative_are_refused_by_the_parser_itself(given, capsys):
    from crossbench.run import run_args

    with pytest.raises(SystemExit) as refused:
        run_args.parse_args(given)
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert refused.value.code == 2 and given[0] in err, err


@pytest.mark.parametrize("bad", ["30x", "fast", "s", "nan", "1e3s", "5 s"])
def test_a_duration_in_no_known_form_is_refused_in_one_line_that_names_the_forms(bad, capsys):
    from crossbench.run import run_args

    with pytest.raises(SystemExit) as refused:
        run_args.parse_args([f"--duration={bad}"])
    assert refused.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--duration" in err and "500ms, 1.5s, 30s, 2m, 1h, 1m30s" in err


def test_delays_take_a_unit_each():
    from crossbench.run import run_args

    assert run_args.parse_args(["--delays", "1s,3s"]).delays_ms == [1000, 3000]
    assert run_args.parse_args(["--delays", "1s,250ms,1m"]).delays_ms == [1000, 250, 60000]


@pytest.mark.parametrize("bad", ["1.5", "2x", "-5ms", "0.5ms", "2m"])
def test_a_delay_that_is_no_whole_millisecond_within_the_endpoints_cap_is_refused(bad, capsys):
    from crossbench.run import run_args

    with pytest.raises(SystemExit) as refused:
        run_args.parse_args([f"--delays={bad}"])
    assert refused.value.code == 2 and "--delays" in capsys.readouterr().err


def test_the_defaults_shown_are_the_experiment_s_that_will_run(capsys):
    """--help shows each matrix override's default as the experiment that will run sets it: seed002's by default,
    the named experiment's or the quick variant's when asked."""
    from crossbench.run import run_args

    def shown(*argv: str) -> str:
        with pytest.raises(SystemExit):
            run_args.parse_args([*argv, "--help"])
        return " ".join(capsys.readouterr().out.split())

    default = shown()
    assert "(default: seed002's 10s, at least 3 round trips of the delay)" in default
    assert "(default: seed002's 1,10,100,1000)" in default and "(default: seed002's 3)" in default  # max launches
    assert "(default: seed002's delay: 1s,3s,10s; tomcat_async: 1s)" in default
    assert "(default: seed002's tomcat 1024; else the server's own: tomcat 100)" in default  # acceptCount
    quick = shown("--quick")
    assert "(default: quick's 4s)" in quick and "seed002's" not in quick
    assert "(default: maxthreads-quick's " in shown("--experiment", "maxthreads", "--quick")


@pytest.mark.parametrize(
    "given",
    [
        ["--duration", "30s", "--duration", "20s"],
        ["--shuffle", "--no-shuffle"],
        ["--servers", "tomcat", "--servers=tornado"],
        ["--jfr", "--no-jfr"],
        ["--keep-up", "1s", "--hold-s", "2s"],
    ],
)
def test_an_option_given_twice_with_different_values_is_refused_in_one_line(given, capsys):
    from crossbench.run import run_args

    with pytest.raises(SystemExit) as refused:
        run_args.parse_args(given)
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert refused.value.code == 2 and "disagree: give the option once" in err, err


def test_an_option_given_twice_alike_and_slo_collected_are_accepted():
    from crossbench.run import run_args

    args = run_args.parse_args(["--duration", "30s", "--duration", "30s", "--slo", "p99<300ms", "--slo", "rps>5"])
    assert args.duration_s == 30.0 and len(args.slo) == 2


def test_every_run_all_option_has_help_and_no_server_default_poses_as_the_run_s(capsys):
    """Every option says what it does; a server knob's default names the experiment file first (the quick profile
    sets acceptCount 1024 where Tomcat's own is 100)."""
    from crossbench.run import run_args

    with pytest.raises(SystemExit) as done:
        run_args.parse_args(["--help"])
    assert done.value.code == 0
    parser_help = capsys.readouterr().out
    import argparse

    parser = run_args.build_parser()
    silent = [a.option_strings for a in parser._actions if a.option_strings and not a.help]
    assert not silent, silent
    assert "--accept-count" in parser_help and "(default: 100)" not in parser_help
    assert "else the server's own: tomcat 100" in " ".join(parser_help.split())
    assert argparse.SUPPRESS not in parser_help


def test_the_experiment_is_typed_once_when_resolved_and_passed_on(monkeypatch):
    """apply_overrides checks the configuration into its typed Experiment once; expand and recorded read that value
    instead of typing the dict again. A copy made to change is a plain dict, typed anew with its change."""
    from crossbench.plan import experiment_checks, experiment_schema

    calls, original = [], experiment_schema.typed

    def counted(config):
        calls.append(config["name"])
        return original(config)

    monkeypatch.setattr(experiment_schema, "typed", counted)
    monkeypatch.setattr(experiment_checks, "typed", counted)
    monkeypatch.setattr(experiment, "typed", counted)
    config = resolve("quick")
    cells = experiment.expand(config)
    typed = experiment.recorded(config)
    assert calls == ["quick"] and typed is config.experiment
    assert {c.duration_s for c in cells} == {typed.run.duration_s}
    changed = copy.deepcopy(config)
    changed["run"]["duration_s"] = typed.run.duration_s + 1
    assert type(changed) is dict and experiment.recorded(changed).run.duration_s == typed.run.duration_s + 1
    assert calls == ["quick", "quick"]
