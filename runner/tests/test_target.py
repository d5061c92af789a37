"""--target URL without a process of the suite's: the command line's checks (each refusal one line, before
anything starts), the requests it measures, a server it finds running left as it was, nothing listening said as
connection refused, a request answering 5xx refused with its body, and a sampler that reads no server process
leaving the server's figures empty rather than 0."""

from __future__ import annotations

import contextlib
import http.server
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from crossbench import endpoints, oskit, paths
from crossbench.cell.cell_record import noise_figures
from crossbench.hosts.placement import Placement
from crossbench.plan import experiment
from crossbench.run import answer_checks, run_args, target_args
from crossbench.run.run_checks import Refused
from crossbench.sampling.noise import Snapshot
from crossbench.sampling.process_tree import ProcessTreeSampler, read_samples_csv, summarize
from crossbench.servers import SettingsError
from crossbench.servers.external import PLUGIN as EXTERNAL
from crossbench.servers.lifecycle import ServerFailed


class Answers(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        status, body = (200, b"Hello") if self.path == "/hello" else (500, b"Internal: " + b"y" * 400)
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def theirs():
    """A server the user started: a thread of this process answering on loopback."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def no_user_paths():
    yield
    endpoints.USER.clear()


def refusal(capsys, argv: list[str]) -> str:
    """run_all's one line for argv, refused before anything starts."""
    with pytest.raises(SystemExit) as exited:
        run_args.parse_args(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("run_all: ")
    return err


def test_a_url_that_is_not_http_is_refused_in_one_line(capsys):
    assert "--target: expected an http:// or https:// URL, not 'ftp://127.0.0.1:21/x'" in refusal(
        capsys, ["--target", "ftp://127.0.0.1:21/x"]
    )
    assert "not 'localhost:8080'" in refusal(capsys, ["--target", "localhost:8080"])


def test_a_host_neither_loopback_nor_of_hosts_is_refused(capsys, tmp_path):
    err = refusal(capsys, ["--target", "http://10.1.2.3:8080/x"])
    assert "its host 10.1.2.3 is neither this machine's loopback (127.0.0.0/8, ::1, localhost) nor a host" in err
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('[roles]\nloadgen = ["root@10.1.2.4"]\n')
    assert "nor a host of --hosts (10.1.2.4)" in refusal(
        capsys, ["--target", "http://10.1.2.3:8080/x", "--hosts", str(hosts)]
    )
    hosts.write_text('[roles]\nloadgen = ["root@10.1.2.3"]\n')
    assert run_args.parse_args(["--target", "http://10.1.2.3:8080/x", "--hosts", str(hosts)]).servers == ["external"]
    for loopback in ("http://127.0.0.2:8080", "http://[::1]:8080", "https://localhost:8443"):
        assert run_args.parse_args(["--target", loopback]).target == loopback


def test_a_knob_of_a_server_the_suite_starts_is_refused_with_why(capsys):
    err = refusal(capsys, ["--target", "http://127.0.0.1:8080", "--max-threads", "10,50"])
    assert "--max-threads sets a server the suite starts; the suite did not start yours, so it cannot set it" in err
    assert "--server-cpus sets a server" in refusal(capsys, ["--target", "http://127.0.0.1:8080", "--server-cpus", "1"])
    assert "--servers tomcat does not go with it" in refusal(
        capsys, ["--target", "http://127.0.0.1:8080", "--servers", "tomcat"]
    )
    assert "--target-pid goes with --target URL" in refusal(capsys, ["--target-pid", "4242"])


def test_its_requests_are_path_s_else_the_url_s_own_under_the_your_target_sweep():
    args = run_args.parse_args(["--target", "http://127.0.0.1:8080/api/orders?id=7"])
    assert (args.experiment, args.paths, args.servers) == ("your-target", ["/api/orders?id=7"], ["external"])
    args = run_args.parse_args(["--target", "http://127.0.0.1:8080/api", "--path", "/a", "--path", "/b", "--quick"])
    assert (args.experiment, args.paths) == ("your-target-quick", ["/a", "/b"])
    assert run_args.parse_args(["--target", "http://127.0.0.1:8080"]).paths == ["/"]
    assert run_args.parse_args(["--target", "http://127.0.0.1:8080", "--experiment", "quick"]).experiment == "quick"


def test_the_plan_measures_its_paths_on_it_and_names_its_series_from_host_and_port():
    config = experiment.apply_overrides(
        experiment.load("your-target-quick"),
        {"target": "http://127.0.0.1:8080", "paths": ["/api/orders"], "servers": ["external"]},
    )
    cells = experiment.expand(config)
    assert {(c.server, c.endpoint) for c in cells} == {("external", "/api/orders")}
    assert sorted({c.concurrency for c in cells}) == [1, 5, 20, 50]
    assert {EXTERNAL.describe(c.settings) for c in cells} == {"127.0.0.1:8080"}
    assert EXTERNAL.describe({**cells[0].settings, "target_name": "shop"}) == "shop"
    assert EXTERNAL.process_count(cells[0].settings) is None


def test_nothing_listening_is_refused_as_connection_refused():
    port = oskit.free_port()  # bound and closed: nothing listens there
    settings = EXTERNAL.settings({"target": f"http://127.0.0.1:{port}/x"})
    with pytest.raises(SettingsError) as refused:
        EXTERNAL.preflight(settings)
    assert str(refused.value) == (
        f"--target http://127.0.0.1:{port}/x: nothing is listening at http://127.0.0.1:{port} (connection refused); "
        "start your server first, or give the URL it listens on"
    )
    with pytest.raises(SettingsError, match="no URL to measure: give --target URL"):
        EXTERNAL.preflight(EXTERNAL.settings({}))


def test_a_server_found_running_is_measured_and_left_running(theirs, tmp_path):
    settings = EXTERNAL.settings({"target": theirs + "/hello"})
    EXTERNAL.preflight(settings)
    spec = EXTERNAL.spec(settings, 0, tmp_path)
    with EXTERNAL.running(spec, host=None) as server:
        assert server.url == theirs and server.alive() and server.pid is None
    assert server.alive()  # leaving the with-block stopped nothing
    assert answer_checks.answer(theirs + "/hello")[0] == 200


def test_a_request_answering_5xx_before_load_is_refused_with_its_status_and_body(theirs):
    config = experiment.apply_overrides(
        experiment.load("your-target-quick"),
        {"target": theirs, "paths": ["/hello", "/broken"], "servers": ["external"]},
    )
    with pytest.raises(Refused) as refused:
        answer_checks.check_answers(experiment.expand(config), Placement())
    message = str(refused.value)
    assert message.startswith("external: GET /broken answered 500 before load") and "Internal: yyy" in message
    assert "\n" not in message and message.count("y") <= answer_checks.BODY_SHOWN + 20


def test_a_server_gone_is_not_entered(tmp_path):
    port = oskit.free_port()
    spec = EXTERNAL.spec(EXTERNAL.settings({"target": f"http://127.0.0.1:{port}"}), 0, tmp_path)
    with pytest.raises(ServerFailed, match=f"nothing is listening at http://127.0.0.1:{port}"):
        with EXTERNAL.running(spec, host=None):
            pass


def test_a_sampler_without_a_server_process_leaves_its_figures_empty_not_zero(tmp_path: Path):
    out = tmp_path / "samples.csv"
    with ProcessTreeSampler(None, interval_s=0.05, out_csv=out, phase="measure") as sampler:
        assert sampler.wait_past(0.0, 2.0)
        first = sampler.samples()[0]
        sampler.wait_past(first.t_epoch, 2.0)
    taken = sampler.samples()
    assert all(s.procs is None and s.threads is None and s.rss_mb is None and s.cpu_percent is None for s in taken)
    assert any(c is not None for s in taken for c in s.cpu_cores)  # the machine's cores are still read
    again = read_samples_csv(out)
    assert [(s.threads, s.rss_mb) for s in again] == [(None, None)] * len(taken)
    window = summarize(again, 0, float("inf"))
    assert window["threads_peak"] is None and window["rss_peak_mb"] is None and window["cpu_percent"] is None


def test_the_plan_says_its_launches_share_one_process():
    config = experiment.apply_overrides(
        experiment.load("your-target-quick"),
        {"target": "http://127.0.0.1:8080", "paths": ["/hello"], "servers": ["external"]},
    )
    note = target_args.shared_process_note(experiment.expand(config))
    assert note.startswith("; 127.0.0.1:8080: your server, already running: every launch measures that one process")
    assert "not independent starts" in note
    assert (
        target_args.shared_process_note(experiment.expand(experiment.apply_overrides(experiment.load("quick"), {})))
        == ""
    )


def test_foreign_cpu_is_unknown_where_the_server_s_own_cannot_be_told_from_another_s():
    """Its server is outside the runner's tree: its CPU would count as foreign. Taken out where its process was
    sampled (--target-pid), unknown where not; a server the suite started is in the runner's tree already."""
    before = Snapshot(0.0, [(0.0, 0.0, 0.0)] * 2, 0, {})
    after = Snapshot(1.0, [(1.0, 0.5, 0.0)] * 2, 100, {})  # both cores half busy: one core's worth
    measurement = SimpleNamespace(noise=(before, after), result=SimpleNamespace(extra={}))
    config = experiment.apply_overrides(
        experiment.load("your-target-quick"),
        {"target": "http://127.0.0.1:8080", "paths": ["/hello"], "servers": ["external"]},
    )
    ours = experiment.expand(config)[0]
    figures = {"loadgen_cpu_percent": 10.0, "requests": 1000}
    assert noise_figures(ours, None, measurement, {**figures, "cpu_percent": None})["foreign_cpu_percent"] is None
    assert noise_figures(ours, None, measurement, {**figures, "cpu_percent": 60.0})["foreign_cpu_percent"] == 30.0
    started = experiment.expand(experiment.apply_overrides(experiment.load("quick"), {"server_cpus": []}))[0]
    assert noise_figures(started, None, measurement, {**figures, "cpu_percent": 60.0})["foreign_cpu_percent"] == 90.0


def test_an_experiment_file_s_target_off_loopback_is_refused_as_target_s(tmp_path, capsys):
    """The same rule as --target's for a URL an experiment file gives ([external] target): refused before
    anything starts, a host of --hosts let through."""
    from crossbench.run import run as run_module

    experiment_file = tmp_path / "theirs.toml"
    experiment_file.write_text(
        (paths.EXPERIMENTS / "your-target-quick.toml").read_text() + '\n[external]\ntarget = "http://10.1.2.3:8080"\n'
    )
    args = run_args.parse_args(["--experiment", str(experiment_file), "--dry-run", "--out", str(tmp_path / "run")])
    assert run_module.run(args, contextlib.ExitStack()) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "run_all: target http://10.1.2.3:8080: its host 10.1.2.3 is neither this machine's loopback "
        "(127.0.0.0/8, ::1, localhost) nor a host of --hosts"
    ), err
    assert not (tmp_path / "run").exists()
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('[roles]\nloadgen = ["root@10.1.2.3"]\n')
    cells = experiment.expand(experiment.load(str(experiment_file)))
    target_args.check_hosts(cells, hosts)  # one of --hosts: let through
