"""A server declared as data (crossbench/servers/declared.py): each fault of its table is one line naming the file,
the key and what is wrong, before anything starts; a checked declaration is a plug-in like the built-in ones, in
an experiment file or a --server-file, recorded so that --resume and the analysis rebuild it. Starts no process."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from crossbench import oskit, paths, servers
from crossbench.declared_schema import check
from crossbench.hosts import load_hosts
from crossbench.plan import experiment
from crossbench.plan.experiment_schema import ExperimentError
from crossbench.run import run_args, serve, server_files
from crossbench.run.open_placement import refuse_unbuilt
from crossbench.servers import DeclarationError

EXAMPLE = paths.REPO / "examples" / "tornado-declared.toml"

SERVER = """
[server.mine]
command = ["{python}", "app.py", "--port", "{port}", "--threads", "{threads}"]
workdir = "."
runtime = "python"
endpoints = ["core"]
parallel = { "/delay/sync" = "threads" }
ready = { path = "/ready", timeout_s = 5 }
stop = { signal = "INT", grace_s = 3 }

[server.mine.knobs]
threads = [10, 50]
"""

EXPERIMENT = """
name = "declared"
[run]
duration_s = 1
warmup_s = 1
servers = ["mine"]

[[group]]
name = "delay"
endpoint = { mine = "/delay/sync" }
concurrency = [5]
delays_ms = [100]
"""


@pytest.fixture(autouse=True)
def only_built_in():
    """Each test starts and ends with the built-in plug-ins alone."""
    servers.forget_declared()
    yield
    servers.forget_declared()


def write(tmp_path: Path, text: str, name: str = "servers.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def declared(tmp_path: Path, text: str) -> list[str]:
    """A --server-file with `text`, loaded beside the quick experiment: the servers it declared."""
    config = experiment.load("quick", (str(write(tmp_path, text)),))
    return sorted(config.get("server", {}))


def refusal(tmp_path: Path, text: str) -> str:
    with pytest.raises(DeclarationError) as caught:
        declared(tmp_path, text)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(tmp_path / "servers.toml")), message
    return message


def test_a_declared_server_is_a_plugin_whose_command_is_its_placeholders_filled_in(tmp_path):
    assert declared(tmp_path, SERVER) == ["mine"]
    plugin = servers.get("mine")
    assert [k.name for k in plugin.knobs] == ["threads"] and plugin.endpoints == set(servers.ENDPOINTS)
    settings = plugin.variants({})
    assert settings == [{"threads": 10}, {"threads": 50}]  # the declared values, swept unless told
    assert plugin.variants({"threads": 20}) == [{"threads": 20}]
    assert plugin.parallel_limit(settings[1], "/delay/sync") == 50
    assert plugin.parallel_limit(settings[1], "/hello") is None
    spec = plugin.spec(settings[1], 8123, tmp_path, address="127.0.0.2")
    assert spec.argv == [sys.executable, "app.py", "--port", "8123", "--threads", "50"]
    assert spec.workdir == tmp_path.resolve() and spec.ready_path == "/ready" and spec.ready_timeout_s == 5
    assert spec.stop_signal == signal.SIGINT and spec.stop_grace_s == 3


def test_the_command_may_be_one_string_and_env_takes_placeholders(tmp_path):
    declared(
        tmp_path,
        """
[server.mine]
command = "serve --listen {host}:{port}"
env = { WORKERS = "{workers}" }
knobs = { workers = 2 }
""",
    )
    spec = servers.get("mine").spec({"workers": 2}, 9000, tmp_path)
    assert spec.argv == ["serve", "--listen", "127.0.0.1:9000"] and spec.env == {"WORKERS": "2"}


@pytest.mark.parametrize(
    "text, names",
    [
        (SERVER.replace('runtime = "python"', 'runtime = "python"\nthreads = 4'), ("threads", "unknown key")),
        (SERVER.replace("{threads}", "{thread}"), ("command", "placeholder {thread} is neither a knob")),
        (SERVER.replace('"--threads", "{threads}"', '"--threads", "8"'), ("knobs.threads", "never uses it")),
        (SERVER.replace('"--port", "{port}", ', ""), ("command", "never uses {port}")),
        (SERVER.replace('workdir = "."', 'workdir = "no-such-dir"'), ("workdir", "no-such-dir does not exist")),
        (SERVER.replace('runtime = "python"', 'runtime = "ruby"'), ("runtime", "one of jvm, python, other")),
        (SERVER.replace('runtime = "python"', 'runtime = "python"\npool = "http"'), ("pool", 'runtime = "jvm"')),
        (SERVER.replace('runtime = "python"', 'runtime = "jvm"\npool = 4'), ("pool", "part of a pool MBean's name")),
        (SERVER.replace('["core"]', '["/nope"]'), ("endpoints", "'/nope' is neither a family")),
        (SERVER.replace('path = "/ready"', 'path = "ready"'), ("ready.path", "starting with /")),
        (SERVER.replace('signal = "INT"', 'signal = "NOPE"'), ("stop.signal", "a signal's name")),
        (SERVER.replace("grace_s = 3", "grace_s = 0"), ("stop.grace_s", "positive number of seconds")),
        (SERVER.replace("threads = [10, 50]", "threads = 1.5"), ("knobs.threads", "positive integer or a string")),
        (
            SERVER.replace("threads = [10, 50]", "threads = { default = 5, values = [10, 50] }"),
            ("knobs.threads", "its default 5 is not one of its values [10, 50]"),
        ),
        (SERVER.replace('"--threads"', '"--threads={"'), ("command", "a placeholder is malformed")),
        (
            SERVER.replace('"/delay/sync" = "threads"', '"/delay/sync" = "workers"'),
            ("parallel./delay/sync", "names an integer knob"),
        ),
        (SERVER.replace('runtime = "python"', 'like = "apache"'), ("[server.mine] like", "one of tomcat, tornado")),
        (SERVER.replace("[server.mine]", "[server.Mine-1]"), ("[server.Mine-1] name", "lower-case letters")),
        (
            SERVER.replace("[server.mine]", "[server.tomcat]").replace("server.mine.knobs", "server.tomcat.knobs"),
            ("[server.tomcat] name", "a built-in server"),
        ),
    ],
)
def test_each_fault_is_one_line_naming_the_file_and_the_key(tmp_path, text, names):
    message = refusal(tmp_path, text)
    for part in names:
        assert part in message, message
    assert servers.PLUGINS.keys() == servers.BUILT_IN.keys()  # nothing declared by a refused file


def test_a_knob_bound_by_another_is_checked_in_the_declaration_and_in_each_cell(tmp_path):
    bounded = (
        SERVER.replace('"{threads}"', '"{threads}", "--spare", "{spare}"')
        + 'spare = { default = 10, at_most = "threads" }\n'
    )
    message = refusal(tmp_path, bounded.replace("default = 10", "values = [10, 20]"))
    assert "[server.mine] knobs.spare: 20 is above threads = 10" in message, message
    assert "knobs.spare.at_most" in refusal(tmp_path, bounded.replace('"threads" }', '"nothing" }'))
    config = experiment.load(str(write(tmp_path, EXPERIMENT, "declared.toml")), (str(write(tmp_path, bounded)),))
    with pytest.raises(
        ExperimentError,
        match=r"^experiment declared: \[mine\]: mine: spare = 10 is above "
        r"threads = 5 \(declared at_most = \"threads\"\)$",
    ):
        experiment.apply_overrides({**config, "mine": {"threads": [5, 50]}}, {})


def test_a_server_file_holds_server_sections_only_and_names_none_twice(tmp_path):
    assert "holds [server.NAME] sections only, not [run]" in refusal(tmp_path, SERVER + "[run]\nx = 1\n")
    assert "and this one has none" in refusal(tmp_path, "[server]\n")
    inline = write(tmp_path, EXPERIMENT + SERVER, "declared.toml")
    with pytest.raises(DeclarationError, match=r"\[server.mine\] name: mine is declared already \(by the experiment"):
        experiment.load(str(inline), (str(write(tmp_path, SERVER)),))


def test_an_experiment_declares_its_own_servers_and_plans_cells_of_them(tmp_path):
    config = experiment.apply_overrides(
        experiment.load(str(write(tmp_path, EXPERIMENT + SERVER, "declared.toml"))), {"threads": 20}
    )  # a command line's knob reaches a declared server too
    cells = experiment.expand(config)
    assert {c.server for c in cells} == {"mine"} and {c.settings["threads"] for c in cells} == {20}
    assert config["server"]["mine"]["workdir"] == str(tmp_path.resolve())  # recorded absolute, for --resume
    servers.forget_declared()
    resolved = experiment.recorded(config)  # a resumed run: its recorded configuration declares it again
    assert resolved.run.servers == ("mine",) and servers.get("mine").knob("threads").default == 10


def test_a_group_may_not_give_a_declared_server_an_endpoint_it_does_not_declare(tmp_path):
    text = EXPERIMENT.replace('mine = "/delay/sync"', 'mine = "/json"') + SERVER
    with pytest.raises(ExperimentError, match="mine does not serve /json"):
        experiment.apply_overrides(experiment.load(str(write(tmp_path, text, "declared.toml"))), {})


def test_a_recorded_declaration_read_where_its_paths_are_gone_still_names_its_server(tmp_path):
    table = check("mine", {"command": "serve {port}", "workdir": str(tmp_path / "gone")}, "m", None, check_paths=False)
    assert servers.declare({"server": {"mine": table}}, "metadata.json", check_paths=False) == ["mine"]
    with pytest.raises(DeclarationError, match=r"^m: \[server.mine\] workdir: .*gone does not exist"):
        check("mine", table, "m", None)


def test_the_example_declares_the_repositorys_tornado_app_as_the_built_in_plugin_starts_it(tmp_path):
    config = experiment.load("quick", (str(EXAMPLE),))
    plugin, built_in = servers.get("tornado_declared"), servers.get("tornado")
    settings = plugin.variants(config.get("tornado_declared", {}))[0]
    mine = plugin.spec(settings, 8123, tmp_path)
    theirs = built_in.spec(built_in.settings({}), 8123, tmp_path)
    assert Path(mine.workdir, mine.argv[1]).resolve() == Path(theirs.argv[1]).resolve()
    assert mine.argv[2:] == theirs.argv[2:] and mine.argv[0] == theirs.argv[0]
    assert plugin.endpoints <= built_in.endpoints and plugin.process_count({"processes": 2, "backlog": 1}) == 2


def test_a_group_that_names_no_endpoint_for_it_gives_it_its_like_servers(tmp_path):
    config = experiment.apply_overrides(
        experiment.load("quick", (str(EXAMPLE),)), {"servers": ["tornado", "tornado_declared"]}
    )
    cells = experiment.expand(config)
    ours = {(c.group, c.endpoint, c.concurrency) for c in cells if c.server == "tornado_declared"}
    assert ours == {(c.group, c.endpoint, c.concurrency) for c in cells if c.server == "tornado"} and ours
    assert all(g["endpoint"]["tornado_declared"] == g["endpoint"]["tornado"] for g in config["group"])  # recorded
    alone = SERVER.replace('runtime = "python"', 'like = "tornado"').replace('["core"]', '["/delay/sync"]')
    config = experiment.load(
        str(write(tmp_path, EXPERIMENT.replace('mine = "/delay/sync"', 'tornado = "/delay/async"'), "declared.toml")),
        (str(write(tmp_path, alone)),),
    )
    assert "mine" not in config["group"][0]["endpoint"]


def test_a_declared_server_is_placed_on_a_server_host_and_reads_its_folder_there(tmp_path):
    """What its host must have is checked over SSH (test_placement.py, test_hosts_run_live.py)."""
    hosts_file = write(tmp_path, '[roles]\nserver = "root@10.0.0.2"\n', "hosts.toml")
    cells = experiment.expand(
        experiment.apply_overrides(experiment.load("quick", (str(EXAMPLE),)), {"servers": ["tornado_declared"]})
    )
    assert cells
    refuse_unbuilt(load_hosts(hosts_file), cells)  # refuses none
    assert cells[0].plugin.reads(cells[0].settings) == (paths.REPO,)


def test_serve_takes_server_files_and_their_servers_knobs_are_its_options(tmp_path, capsys):
    files, rest = server_files.split(["--server-file", "a.toml", "mine", "--threads", "2", "--server-file=b.toml"])
    assert files == ["a.toml", "b.toml"] and rest == ["mine", "--threads", "2"]
    argv = ["--server-file", str(EXAMPLE), "tornado_declared", "--processes", "2"]
    server_files.declare(argv)
    args = serve.parse_args(argv)
    assert args.plugin is servers.get("tornado_declared") and args.settings == {"processes": 2, "backlog": 128}
    servers.forget_declared()
    bad = write(tmp_path, SERVER.replace("{threads}", "{thread}"))
    handlers = {sig: signal.getsignal(sig) for sig in oskit.STOP_SIGNALS}  # serve.main takes them over
    try:
        assert serve.main(["--server-file", str(bad), "mine"]) == 2
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert (
        capsys.readouterr().err == f"serve: {bad}: [server.mine] command: placeholder {{thread}} is neither a "
        "knob (knobs: threads) nor one of {port}, {host}, {python}\n"
    )


def test_run_all_takes_a_server_files_knobs_as_options_and_refuses_a_bad_file_in_one_line(tmp_path, capsys):
    args = run_args.parse_args(
        ["--server-file", str(write(tmp_path, SERVER)), "--servers", "mine", "--threads", "20,200"]
    )
    assert args.threads == [20, 200] and args.server_files == [str(tmp_path / "servers.toml")]
    config = experiment.apply_overrides(
        experiment.load(str(write(tmp_path, EXPERIMENT, "declared.toml")), tuple(args.server_files)), vars(args)
    )
    assert sorted({c.settings["threads"] for c in experiment.expand(config)}) == [20, 200]
    bad = write(tmp_path, SERVER.replace("{threads}", "{thread}"), "bad.toml")
    with pytest.raises(SystemExit) as stopped:
        run_args.parse_args(["--server-file", str(bad)])
    assert stopped.value.code == 2
    assert (
        capsys.readouterr().err == f"run_all: {bad}: [server.mine] command: placeholder {{thread}} is neither a "
        "knob (knobs: threads) nor one of {port}, {host}, {python}\n"
    )


def test_a_server_files_servers_join_the_experiments_and_one_in_no_group_is_refused(tmp_path):
    config = experiment.load("quick", (str(EXAMPLE),))
    assert config["run"]["servers"] == ["tomcat", "tornado", "tornado_declared"]
    assert experiment.RUN_DEFAULTS["servers"] == ["tomcat", "tornado"]
    named = write(
        tmp_path,
        EXPERIMENT.replace('servers = ["mine"]', 'servers = ["tornado_declared"]').replace(
            'mine = "/delay/sync"', 'tornado_declared = "/delay/sync"'
        ),
        "declared.toml",
    )
    assert experiment.load(str(named), (str(EXAMPLE),))["run"]["servers"] == ["tornado_declared"]  # once
    with pytest.raises(
        ExperimentError,
        match=r"^experiment quick: the declared server mine is in no group: name "
        r"its endpoint in a group's endpoint table, or declare like",
    ):
        experiment.apply_overrides(experiment.load("quick", (str(write(tmp_path, SERVER)),)), {})


def test_a_resumed_run_takes_its_declared_servers_from_its_record_not_from_a_server_file(tmp_path, capsys):
    with pytest.raises(SystemExit):
        run_args.parse_args(["--resume", str(tmp_path), "--server-file", str(EXAMPLE)])
    assert "--resume DIR continues that run with the declared servers it recorded" in capsys.readouterr().err
