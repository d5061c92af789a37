"""--war and --path without a process: the user's WAR rendered into a CATALINA_BASE of its own (its file read
where it lies, never changed), the command line's checks, one group per path with C=1 among its levels, the
ratios of a user's endpoint against its own C=1 latency, and the refusals of a WAR that did not deploy and of a
path that does not answer 2xx."""

from __future__ import annotations

import hashlib
import http.server
import math
import threading
import zipfile
from pathlib import Path

import pytest

from crossbench import endpoints, servers, stats
from crossbench.figures import points, service_time
from crossbench.plan import experiment, user_paths
from crossbench.run import answer_checks, run_args
from crossbench.run.run_checks import Refused
from crossbench.servers import tomcat_config
from crossbench.servers.tomcat import PLUGIN as TOMCAT


@pytest.fixture
def user_war(tmp_path: Path) -> Path:
    folder = tmp_path / "theirs"
    folder.mkdir()
    war = folder / "shop.war"
    with zipfile.ZipFile(war, "w") as z:
        z.writestr("WEB-INF/web.xml", "<web-app/>")
    return war


@pytest.fixture(autouse=True)
def no_user_paths():
    yield
    endpoints.USER.clear()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_war_is_deployed_from_where_it_lies_in_a_base_of_its_own(tmp_path, user_war):
    before, listing = digest(user_war), sorted(user_war.parent.iterdir())
    home = tmp_path / "apache-tomcat-9.0.0"
    (home / "conf").mkdir(parents=True)
    for name in ("web.xml", "catalina.properties", "logging.properties"):
        (home / "conf" / name).write_text("")
    config = tomcat_config.TomcatConfig(port=8080, war=user_war, context="/shop")
    base = tomcat_config.prepare_base(config, tmp_path / "base", home)
    contexts = sorted(p.name for p in (base / "conf" / "Catalina" / "localhost").iterdir())
    assert contexts == ["shop.xml"]  # the suite's webapp is not deployed beside it
    text = (base / "conf" / "Catalina" / "localhost" / "shop.xml").read_text()
    assert f'docBase="{user_war}"' in text
    assert "JarScanFilter" not in text  # its jars are scanned as Tomcat would (their TLDs)
    assert digest(user_war) == before and sorted(user_war.parent.iterdir()) == listing


def test_without_a_war_the_suite_s_webapp_is_at_the_root(tmp_path):
    home = tmp_path / "apache-tomcat-9.0.0"
    (home / "conf").mkdir(parents=True)
    for name in ("web.xml", "catalina.properties", "logging.properties"):
        (home / "conf" / name).write_text("")
    base = tomcat_config.prepare_base(tomcat_config.TomcatConfig(port=8080), tmp_path / "base", home)
    assert [p.name for p in (base / "conf" / "Catalina" / "localhost").iterdir()] == ["ROOT.xml"]


@pytest.mark.parametrize("context, name", [("/", "ROOT.xml"), ("/app", "app.xml"), ("/a/b", "a#b.xml")])
def test_context_files_are_named_as_tomcat_names_them(context, name):
    assert tomcat_config.context_file(context) == name


def test_a_war_that_is_not_there_or_a_bad_context_is_refused_in_one_line(tmp_path, user_war):
    with pytest.raises(servers.SettingsError, match="neither a .war file nor an exploded WAR"):
        TOMCAT.preflight(TOMCAT.settings({"war": str(tmp_path / "missing.war")}))
    for context in ("app", "/app/", "//app"):
        with pytest.raises(servers.SettingsError, match="context must be a path"):
            TOMCAT.preflight(TOMCAT.settings({"war": str(user_war), "context": context}))


def test_war_needs_its_requests_and_runs_the_your_war_sweep(user_war, capsys, monkeypatch):
    with pytest.raises(SystemExit):
        run_args.parse_args(["--war", str(user_war)])
    assert "--war: name the requests to measure with --path" in capsys.readouterr().err
    args = run_args.parse_args(["--war", str(user_war), "--path", "/shop/a", "--path", "/shop/b"])
    assert (args.experiment, args.paths, args.war) == ("your-war", ["/shop/a", "/shop/b"], str(user_war))
    quick = run_args.parse_args(["--war", str(user_war), "--path", "/shop/a", "--quick"])
    assert quick.experiment == "your-war-quick"
    monkeypatch.chdir(user_war.parent)
    assert run_args.parse_args(["--war", user_war.name, "--path", "/a"]).war == str(user_war)
    with pytest.raises(SystemExit):
        run_args.parse_args(["--path", "shop/a"])
    assert "a path starting with /" in capsys.readouterr().err


def test_each_path_is_a_group_swept_from_c1_on_every_server(user_war):
    config = experiment.apply_overrides(
        experiment.load("your-war-quick"),
        {"paths": ["/shop/a", "/shop/b?x=1"], "concurrency": [10, 40], "war": str(user_war)},
    )
    groups = [(g["name"], g["endpoint"], g["concurrency"]) for g in config["group"]]
    assert groups == [
        ("shop-a", {"tomcat": "/shop/a"}, [1, 10, 40]),
        ("shop-b-x-1", {"tomcat": "/shop/b?x=1"}, [1, 10, 40]),
    ]
    cells = experiment.expand(config)
    assert {c.endpoint for c in cells} == {"/shop/a", "/shop/b?x=1"}
    assert {c.concurrency for c in cells} == {1, 10, 40} and all(c.delay_ms == 0 for c in cells)
    assert [r.path() for r in cells[0].requests()] == [cells[0].endpoint]
    endpoints.USER.clear()  # a resumed run or the analysis registers them again
    assert experiment.recorded(config).run.paths == ("/shop/a", "/shop/b?x=1")
    assert endpoints.is_user("/shop/a")


def test_a_group_on_a_path_the_run_does_not_name_is_refused():
    config = experiment.load("your-war-quick")
    config["group"][0]["endpoint"] = {"tomcat": "/shop/a"}
    with pytest.raises(experiment.ExperimentError, match="endpoints .* and \\[run\\] paths"):
        experiment.apply_overrides(config, {})


def record(cell: str, setting: int, concurrency: int, rps: float, mean_ms: float, endpoint="/shop/a", delay=0):
    return {
        "cell_id": cell,
        "point_id": cell,
        "group": "g",
        "server": "tomcat",
        "endpoint": endpoint,
        "setting": f"mt{setting}",
        "max_threads": setting,
        "concurrency": concurrency,
        "delay_ms": delay,
        "status": "ok",
        "flags": [],
        "rps": rps,
        "latency_ms": {"mean": mean_ms},
        "efficiency_ratio": None,
        "latency_ratio": None,
    }


def test_a_user_endpoint_s_ratios_are_against_its_own_c1_latency_per_setting():
    endpoints.declare_user(["/shop/a"])
    records = [
        record("a1", 10, 1, 100.0, 10.0),
        record("a20", 10, 20, 500.0, 40.0),
        record("b1", 50, 1, 50.0, 20.0),
        record("b20", 50, 20, 500.0, 40.0),
        record("contract", 10, 20, 90.0, 220.0, endpoint="/delay/sync", delay=200),
    ]
    by_cell = {r["cell_id"]: r for r in service_time.with_ratios(records, points.IDENTITY, points.counted)}
    assert by_cell["a20"]["service_time_ms"] == 10.0
    assert by_cell["a20"]["efficiency_ratio"] == pytest.approx((20 / 500) / 0.010)  # 4.0
    assert by_cell["a20"]["latency_ratio"] == pytest.approx(4.0)
    assert by_cell["b20"]["latency_ratio"] == pytest.approx(2.0)  # its own setting's C=1
    assert by_cell["a1"]["latency_ratio"] == pytest.approx(1.0)
    again = records + [{**record("a1", 10, 1, 100.0, 14.0), "cell_id": "a1-r2", "repetition": 2}]
    by_cell = {r["cell_id"]: r for r in service_time.with_ratios(again, points.IDENTITY, points.counted)}
    assert by_cell["a20"]["service_time_ms"] == pytest.approx(12.0)  # the mean of the C=1 launches
    assert [by_cell[c]["service_time_ms"] for c in ("a1", "a1-r2")] == [10.0, 14.0]  # each its own
    assert by_cell["contract"] is records[4]  # left as it was
    point = next(p for p in points.aggregate(records) if p["point_id"] == "a20")
    assert point["figures"]["efficiency_ratio"]["value"] == pytest.approx(4.0)


def test_a_ratio_s_interval_carries_its_service_time_s():
    """Three launches at C=1 (9, 10, 11 ms) and three at C=20 (ratios 4.0, 4.4, 3.6 against their mean, 10 ms):
    the C=20 latency ratio's half-width on logs is its own and the service time's added in quadrature; with one
    launch at C=1 the service time has no interval and the ratio keeps its own, saying so."""
    endpoints.declare_user(["/shop/a"])
    c1 = [
        {**record("a1", 10, 1, 100.0, ms), "cell_id": f"a1-r{i}", "repetition": i}
        for i, ms in enumerate((9, 10, 11), 1)
    ]
    c20 = [
        {**record("a20", 10, 20, 500.0, ms), "cell_id": f"a20-r{i}", "repetition": i}
        for i, ms in enumerate((40.0, 44.0, 36.0), 1)
    ]
    own, service = stats.estimate([4.0, 4.4, 3.6]), stats.estimate([9.0, 10.0, 11.0])
    half = math.hypot(
        max(math.log(own.high / own.value), math.log(own.value / own.low)),
        max(math.log(service.high / service.value), math.log(service.value / service.low)),
    )
    ratio = next(p for p in points.aggregate(c1 + c20) if p["point_id"] == "a20")["figures"]["latency_ratio"]
    assert ratio["value"] == pytest.approx(own.value) and ratio[service_time.CARRIED]
    assert ratio["ci95_low"] == pytest.approx(own.value * math.exp(-half))
    assert ratio["ci95_high"] == pytest.approx(own.value * math.exp(half))
    assert ratio["ci95_high"] - ratio["ci95_low"] > own.high - own.low
    alone = next(p for p in points.aggregate(c1[:1] + c20) if p["point_id"] == "a20")["figures"]["latency_ratio"]
    assert not alone[service_time.CARRIED] and alone["ci95_low"] == pytest.approx(own.low * 10 / 9)


def test_a_war_tomcat_did_not_deploy_is_said_with_the_cause_from_its_logs(tmp_path, user_war):
    logs = tmp_path / "logs"
    logs.mkdir()
    console = logs / "console.log"
    console.write_text(
        "02-Dec-2026 01:00:00.000 INFO [main] org.apache.catalina.startup.Catalina.load Server "
        "initialized\n02-Dec-2026 01:00:01.100 SEVERE [main] org.apache.catalina.core.StandardContext."
        "startInternal One or more listeners failed to start. Full details will be found in the "
        "appropriate container log file\n"
    )
    settings = TOMCAT.settings({"war": str(user_war)})
    said = TOMCAT.deploy_problem(settings, console)  # the container's log not there: the console's
    assert said == (
        f"tomcat: {user_war} did not deploy; Tomcat's log says: 02-Dec-2026 01:00:01.100 SEVERE [main] "
        "org.apache.catalina.core.StandardContext.startInternal One or more listeners failed to start. "
        "Full details will be found in the appropriate container log file"
    )
    (logs / "localhost.2026-12-02.log").write_text(
        "02-Dec-2026 01:00:01.000 SEVERE [main] org.apache.catalina.core.StandardContext.listenerStart Error "
        "configuring application listener of class [com.example.Missing]\n\tjava.lang.ClassNotFoundException\n"
    )
    said = TOMCAT.deploy_problem(settings, console)  # the cause, where Tomcat writes it
    assert said.endswith("listenerStart Error configuring application listener of class [com.example.Missing]")
    assert TOMCAT.deploy_problem(TOMCAT.settings({}), console) is None  # the suite's own webapp: not asked
    for log in logs.iterdir():
        log.write_text(log.read_text().replace("SEVERE", "INFO"))
    assert TOMCAT.deploy_problem(settings, console) is None


class Answers(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        status = 200 if self.path == "/ok" else 404
        body = b"fine" if status == 200 else b"<html>Not Found: " + b"x" * 400
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_path_that_does_not_answer_2xx_is_refused_with_its_status_and_body():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        answer_checks.refuse_answer("tomcat", "/ok", *answer_checks.answer(url + "/ok"))
        with pytest.raises(Refused) as refused:
            answer_checks.refuse_answer("tomcat", "/missing", *answer_checks.answer(url + "/missing"))
    finally:
        server.shutdown()
        server.server_close()
    message = str(refused.value)
    assert "GET /missing answered 404 before load" in message and "Not Found: xxx" in message
    assert "\n" not in message and message.count("x") <= answer_checks.BODY_SHOWN


def test_user_path_groups_are_named_apart():
    taken: set[str] = set()
    assert [user_paths.group_name(p, taken) for p in ("/", "/a/b", "/a-b", "/A_B")] == ["root", "a-b", "a-b-2", "a-b-3"]


def test_a_path_the_contract_also_names_is_the_user_s_exact_request():
    endpoints.declare_user(["/delay/sync"])
    assert endpoints.is_user("/delay/sync") and not endpoints.endpoint("/delay/sync").delay
    assert [r.path() for r in endpoints.requests("/delay/sync", delay_ms=200)] == ["/delay/sync"]
    endpoints.USER.clear()
    assert endpoints.endpoint("/delay/sync").delay
