"""run_all.sh --hosts with roles on hosts of their own: network namespaces running sshd (tests/netns_hosts.py).
The cells must read what a single-host run reads, several load hosts must merge into one cell (wrk, oha, ab, seed
000's background), every role may have its own host, the setup must copy the checkout there, and a lost SSH
connection or Ctrl-C must leave nothing running on any host.

The tests of what a run does (a lost connection, Ctrl-C, the setup's copy, every role placed, connections held from
a load host) share the cores: they assert no figure, launch each point once and look for what a run left only in
their own lab's namespaces. The ones that check figures against a truth (a delay's latency, an open loop's rate,
ab's answers, head-of-line blocking) run alone."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import psutil
import pytest
from live_servers import build_missing_reason
from netns_hosts import lab_or_skip
from testkit import descendants, measure_samples, options, records, seed003_quick_holding, wait_until

from crossbench import paths

pytestmark = pytest.mark.live
shares_cores = pytest.mark.shares_cores

EXAMPLE = paths.REPO / "examples" / "tornado-declared.toml"
CELL = [
    "--experiment",
    "quick",
    "--groups",
    "delay",
    "--servers",
    "tornado",
    "--concurrency",
    "40",
    "--delays",
    "250ms",
    "--warmup",
    "1s",
    "--repetitions",
    "1",
    "--no-analysis",
]


def run_all(out, *extra: str, timeout_s: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(paths.RUNNER / "run_all.sh"), *options(CELL, "--out", str(out), *extra)],
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


def running_load(namespace: str) -> list[str]:
    """The closed-loop generators running on a lab host: wrk, or oha or vegeta for a delayed cell's held window."""
    return [name for name in busy(namespace) if name in ("wrk", "oha", "vegeta")]


def sent_to(out: Path, record: dict) -> list[str]:
    """The words of a cell's load generator commands (one per load host) and of the URL files they read (vegeta's
    targets): where its load went."""
    commands = record["loadgen_command"]
    words = [w for c in commands for w in c] if commands and isinstance(commands[0], list) else list(commands)
    targets = (out / "cells" / record["cell_id"]).rglob("vegeta.targets")
    return words + [w for t in targets for w in t.read_text().split()]


@pytest.fixture(scope="module")
def lab():
    with lab_or_skip(["load1", "load2"]) as made:
        yield made


@shares_cores
def test_a_lost_ssh_connection_fails_the_cell_and_leaves_nothing_behind(lab, tmp_path):
    """No warm-up: the master is killed a second into the measured window, where the lost connection must fail
    the cell and leave neither the generator nor its tether on the load host; the window's length only outlasts
    the kill."""
    out = tmp_path / "lost"
    load_host = lab.hosts["load1"].namespace
    proc = subprocess.Popen(
        [
            str(paths.RUNNER / "run_all.sh"),
            *options(CELL, "--warmup", "0"),
            "--out",
            str(out),
            "--duration",
            "30s",
            "--hosts",
            str(lab.hosts_file({"loadgen": ["load1"]})),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: running_load(load_host), 30, "the load generator to start on the load host")
        wait_until(lambda: measure_samples(out) >= 4, 30, "a second into the measured window")
        masters = [
            p
            for p in descendants(proc.pid)
            if "-M" in (p.info["cmdline"] or []) and lab.hosts["load1"].destination in p.info["cmdline"]
        ]
        assert len(masters) == 1, [p.info["cmdline"] for p in masters]
        masters[0].send_signal(signal.SIGKILL)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    (record,) = records(out)
    assert record["status"] == "failed" and lab.hosts["load1"].address in record["error"], record
    assert "SSH connection was lost" in record["error"], record["error"]
    wait_until(lambda: not busy(load_host), 10, lambda: f"the load host to be left with nothing: {busy(load_host)}")


def test_the_quick_experiment_with_server_and_load_on_hosts_of_their_own_reads_the_delay(tmp_path, report_figure):
    """The delayed cells read what the delay makes, as a run on one host does: 40 clients on Tomcat's 200 threads
    or Tornado's loop wait one 250 ms each (latency ratio 1.0 plus the server's own cost; on one host CI read
    1.004-1.009 for Tomcat and 1.024-1.039 for Tornado, away 1.004-1.008 and 1.018-1.026). The truth, not a second
    run here, is the reference: that run cost 40 s of the test command and its figures only matched these."""
    with lab_or_skip(["server", "load1", "load2"]) as lab:
        hosts = lab.hosts_file({"server": "server", "loadgen": ["load1", "load2"]})
        out = tmp_path / "away"
        done = subprocess.run(
            [
                str(paths.RUNNER / "run_all.sh"),
                "--experiment",
                "quick",
                "--concurrency",
                "40",
                "--duration",
                "5s",
                "--warmup",
                "1s",
                "--repetitions",
                "1",
                "--no-analysis",
                "--out",
                str(out),
                "--hosts",
                str(hosts),
            ],
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        cells = {r["cell_id"]: r for r in records(out)}
        assert not busy(lab.hosts["server"].namespace), "left running on the server host"
    assert len(cells) == 4 and {r["server"] for r in cells.values()} == {"tomcat", "tornado"}
    for cell_id, away in cells.items():
        assert away["status"] == "ok" and away["error_total"] == 0, away.get("error")
        assert away["samples"] >= 15 and away["threads_peak"] >= 1 and away["rss_peak_mb"] > 10, away
        server_url = f"http://{lab.hosts['server'].address}:"
        assert any(word.startswith(server_url) for word in sent_to(out, away)), away["loadgen_command"]
        per_host = away["loadgen_hosts"]  # two load hosts, merged into one cell
        assert [h["host"] for h in per_host] == [lab.hosts["load1"].destination, lab.hosts["load2"].destination]
        assert away["requests"] == sum(h["requests"] for h in per_host) and all(h["requests"] for h in per_host)
        assert all(h["cpu_percent"] is not None and -5 < h["start_late_ms"] < 200 for h in per_host), per_host
        if away["delay_ms"]:  # not the efficiency ratio: a 5 s window takes or misses its last answers by
            # chance; the latency ratio has no such edge. 40 clients on the delay read it within a tenth (a reading
            # that counted the hosts' round trips or the ramp would not: twice the delay, or several times it)
            assert 1.0 <= away["latency_ratio"] < 1.10, (cell_id, away["latency_ratio"])
        else:
            assert away["rps"] > 100 and away["in_flight"] <= 40 * 1.02, away
        report_figure(
            f"server on its own host: {cell_id} "
            + (f"latency ratio {away['latency_ratio']:.3f}" if away["delay_ms"] else f"{away['rps']:.0f} req/s")
            + f"; threads peak {away['threads_peak']}"
        )
    jfr = [cell_id for cell_id in cells if (out / "cells" / cell_id / "tomcat.jfr").is_file()]
    assert len(jfr) == 2 and all("tomcat" in cell_id for cell_id in jfr)  # Tomcat's recordings came back
    blocking = cells[next(cell_id for cell_id in jfr if "delay" in cell_id)]  # the JVM probe, on its host
    assert blocking["tomcat_connection_count_peak"] >= 40 and blocking["pool_busy_peak"] >= 30, blocking
    found = json.loads((out / "metadata.json").read_text())["hosts"]
    assert set(found["hosts"]) == {lab.hosts[name].destination for name in ("server", "load1", "load2")}
    assert all(abs(h["clock_offset_s"]) < 0.05 and h["facts"]["cores"] for h in found["hosts"].values())
    assert len(found["network"]) == 2 and all(link["rtt_ms"] is not None for link in found["network"])


@shares_cores
def test_ctrl_c_leaves_nothing_on_the_server_and_load_hosts(tmp_path):
    """No warm-up: Ctrl-C comes once the server and wrk both run on their hosts, and must leave nothing on either;
    the window's length only outlasts the signal."""
    with lab_or_skip(["server", "load1"]) as lab:
        hosts = lab.hosts_file({"server": "server", "loadgen": ["load1"]})
        proc = subprocess.Popen(
            [
                str(paths.RUNNER / "run_all.sh"),
                *options(CELL, "--warmup", "0"),
                "--out",
                str(tmp_path / "stopped"),
                "--duration",
                "30s",
                "--hosts",
                str(hosts),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            namespaces = [lab.hosts[name].namespace for name in ("server", "load1")]
            wait_until(lambda: all(busy(ns) for ns in namespaces), 40, "the server and wrk to start on their hosts")
            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 130, stderr[-2000:]
        wait_until(
            lambda: not any(busy(ns) for ns in namespaces),
            10,
            lambda: f"the hosts to be left with nothing running: { ({ns: busy(ns) for ns in namespaces}) }",
        )


def busy(namespace: str) -> list[str]:
    """What runs in a namespace besides its sshd (and the sessions sshd keeps for our masters)."""
    pids = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True).stdout.split()
    names = []
    for pid in pids:
        try:
            names.append(psutil.Process(int(pid)).name())
        except psutil.NoSuchProcess:
            continue
    return [name for name in names if name != "sshd"]


@shares_cores
def test_setup_copies_the_checkout_and_the_run_uses_the_hosts_own_copy(tmp_path):
    """wrk's least window without a warm-up: the cell only has to run on the host's own copy of the Lua script
    and end ok, which a copy that is missing or not used fails at any length."""
    with lab_or_skip(["load1"]) as lab:
        project = tmp_path / "elsewhere"  # the host's project_dir: not this checkout
        hosts = lab.hosts_file({"loadgen": ["load1"]}, {"load1": str(project)})
        done = subprocess.run(
            [str(paths.RUNNER / "hosts.sh"), "setup", "--hosts", str(hosts), "--no-python-env"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert "loadgen ready in" in done.stdout
        assert (project / "runner" / "lua" / "report.lua").read_bytes() == (
            paths.RUNNER / "lua" / "report.lua"
        ).read_bytes()
        assert not (project / ".git").exists() and not (project / ".venv").exists()
        out = tmp_path / "run"
        # the static cell: wrk with the host's own copy of the project's Lua script (a delayed cell's held window
        # runs vegeta from the tools cache)
        done = run_all(out, "--duration", "1s", "--warmup", "0", "--hosts", str(hosts), "--groups", "static")
        assert done.returncode == 0, done.stderr[-2000:]
    (record,) = records(out)
    assert record["status"] == "ok", record.get("error")
    assert str(project / "runner" / "lua" / "report.lua") in record["loadgen_hosts"][0]["command"]


def test_database_server_proxy_and_load_each_on_a_host_of_their_own(tmp_path):
    """uvicorn alone, a stack whose groups reach every role (a pool starved on the database host, nginx on a
    host of its own, PgBouncer beside the server); the other stacks take the same roads on one host in
    test_seed004_live.py, so here they would add cells and no road. It runs alone: the starved pool's gauge is
    sampled, and beside another test its samples can go stale and read no active connection."""
    roles = ("server", "db", "proxy", "load1")
    with lab_or_skip(list(roles)) as lab:
        hosts = lab.hosts_file({"server": "server", "db": "db", "proxy": "proxy", "loadgen": ["load1"]})
        out = tmp_path / "db"
        done = subprocess.run(
            [
                str(paths.RUNNER / "run_all.sh"),
                "--experiment",
                "seed004-quick",
                "--groups",
                "pools,db-behind-nginx,db-pgbouncer",
                "--servers",
                "uvicorn",
                "--duration",
                "1s",  # 4 samples at 0.25 s: sampled on every host
                "--warmup",
                "0",
                "--no-analysis",
                "--out",
                str(out),
                "--hosts",
                str(hosts),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        for name in roles:
            assert not busy(lab.hosts[name].namespace), f"left running on {name}"
        proxy_address = lab.hosts["proxy"].address
    cells = {r["cell_id"]: r for r in records(out)}
    assert len(cells) == 4
    for r in cells.values():
        assert r["status"] == "ok" and r["error_total"] == 0, r.get("error")
        per_request = 20 if r["endpoint"] == "/queries" else 1
        assert r["queries_expected"] == r["queries_counted"] == 20 * per_request, r["cell_id"]  # on the db host
        assert r["db_cpu_percent"] is not None and r["db_rss_peak_mb"] > 10, r["cell_id"]
        assert (out / "cells" / r["cell_id"] / "db-samples.csv").is_file()
    proxied = [r for r in cells.values() if r["proxy"]]
    assert len(proxied) == 1
    for r in proxied:  # the load went to nginx on its host, sampled there
        assert f"http://{proxy_address}:" in r["loadgen_hosts"][0]["command"][-4], r["loadgen_hosts"]
        assert r["proxy_cpu_percent"] is not None and r["proxy_rss_peak_mb"] > 1, r["cell_id"]
    pooled = [r for r in cells.values() if r["pooler"]]  # PgBouncer beside the server, on its host
    assert len(pooled) == 1 and all(r["pooler_cpu_percent"] is not None for r in pooled), pooled
    starved = cells["pools-uvicorn-pool2-db_slow-c16-d5-r1"]
    assert starved["db_pool_active_peak"] == 2 and starved["db_pool_waiting_peak"] >= 8, starved
    network = {
        (link["from"].split()[0], link["to"].split()[0]): link
        for link in json.loads((out / "metadata.json").read_text())["hosts"]["network"]
    }
    assert set(network) == {("loadgen", "proxy"), ("proxy", "server"), ("server", "db")}
    assert all(link["rtt_ms"] is not None for link in network.values())


def test_an_open_loop_cell_from_two_load_hosts_offers_the_whole_rate_and_merges_every_request(lab, tmp_path):
    out = tmp_path / "open"
    done = run_all(
        out,
        "--duration",
        "4s",
        "--loadgen",
        "oha",
        "--rates",
        "100",
        "--hosts",
        str(lab.hosts_file({"loadgen": ["load1", "load2"]})),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (cell,) = records(out)
    assert cell["status"] == "ok" and cell["rate"] == 100, cell.get("error")
    per_host = cell["loadgen_hosts"]
    assert len(per_host) == 2 and cell["requests"] == sum(h["requests"] for h in per_host)
    assert all(190 <= h["requests"] <= 210 for h in per_host), per_host  # 50 req/s each for 4 s
    assert cell["rate_achieved"] == pytest.approx(100, rel=0.05) and "unsustainable" not in cell["flags"]
    assert 250 <= cell["latency_ms"]["p50"] <= 250 * 1.1 and cell["latency_ms"]["p99"] <= 250 * 1.2, cell


def test_an_ab_count_split_over_two_load_hosts_is_one_cell_of_the_whole_count(lab, tmp_path):
    out = tmp_path / "ab"
    done = subprocess.run(
        [
            str(paths.RUNNER / "run_all.sh"),
            "--experiment",
            "seed000-quick",
            "--groups",
            "ab_async",
            "--servers",
            "tornado",
            "--out",
            str(out),
            "--no-analysis",
            "--hosts",
            str(lab.hosts_file({"loadgen": ["load1", "load2"]})),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (cell,) = records(out)
    assert cell["status"] == "ok" and cell["requests"] == 40, cell.get("error")
    assert [h["requests"] for h in cell["loadgen_hosts"]] == [20, 20]
    assert all(abs(h["start_late_ms"]) < 50 for h in cell["loadgen_hosts"]), cell["loadgen_hosts"]
    assert 300 <= cell["latency_ms"]["p50"] <= 330 and cell["ab"]["startup_free"]["requests"] == 39, cell


def test_seed000s_probe_from_here_meets_the_background_from_two_load_hosts(lab, tmp_path):
    out = tmp_path / "hol"
    done = subprocess.run(
        [
            str(paths.RUNNER / "run_all.sh"),
            "--experiment",
            "seed000-quick",
            "--groups",
            "hol_sync,hol_async",
            "--servers",
            "tornado",
            "--out",
            str(out),
            "--no-analysis",
            "--hosts",
            str(lab.hosts_file({"loadgen": ["load1", "load2"]})),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    cells = {r["endpoint"]: r for r in records(out)}
    blocked, free = cells["/delay/sync"], cells["/delay/async"]
    assert all(len(r["loadgen_hosts"]) == 2 and r["background"]["rps"] > 2 for r in (blocked, free))
    assert free["latency_ms"]["p99"] < 50 < blocked["latency_ms"]["p50"], (free["latency_ms"], blocked["latency_ms"])


@shares_cores
def test_seed003s_connections_held_from_a_load_host_on_a_server_of_its_own(tmp_path):
    """One second held after the ramp and no idle warm-up: every connection is held, counted on the server's host
    and its series fetched back from the load host however long they are held; the held figures' truth is
    test_hold_live.py's seed003-quick run."""
    with lab_or_skip(["server", "load1"]) as lab:
        out = tmp_path / "hold"
        done = subprocess.run(
            [
                str(paths.RUNNER / "run_all.sh"),
                "--experiment",
                str(seed003_quick_holding(tmp_path, 1)),
                "--groups",
                "hold",
                "--servers",
                "tornado",
                "--warmup",
                "0",
                "--out",
                str(out),
                "--no-analysis",
                "--hosts",
                str(lab.hosts_file({"loadgen": ["load1"], "server": "server"})),
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert not busy(lab.hosts["server"].namespace) and not busy(lab.hosts["load1"].namespace)
    (cell,) = records(out)
    assert cell["status"] == "ok" and cell["connections_held_peak"] == 500, cell.get("error")
    assert cell["server_established_peak"] == 500  # the census, taken on the server's host
    assert cell["rss_per_connection_kb"] and cell["rss_per_connection_kb"] > 1, cell
    assert (out / "cells" / cell["cell_id"] / "holder.csv").is_file()  # came back from the load host


@shares_cores
def test_your_own_servers_run_on_a_server_host_and_one_the_host_lacks_is_refused(tmp_path):
    """At the least load, one cell each that ends ok on the server host, nothing left there:
    - the repository's Tornado declared as data (examples/tornado-declared.toml: a command relative to its working
      directory, found only if it starts there) with SIGINT as its stop signal;
    - a WAR given with --war (this suite's own, built by mvn package, deployed as a user's at /mine), its path
      checked before load from here, as a run on one host checks it.
    Then the declared server on a host whose copy of this checkout is elsewhere and empty: refused before any
    cell, naming the folder."""
    if build_missing_reason():
        pytest.skip(build_missing_reason())
    declared = EXAMPLE.read_text().replace('workdir = ".."', f"workdir = {json.dumps(str(paths.REPO))}")
    declared = declared.replace('signal = "TERM"', 'signal = "INT"')
    assert 'signal = "INT"' in declared and str(paths.REPO) in declared
    server_file = tmp_path / "declared.toml"
    server_file.write_text(declared)
    least = ("--duration", "1s", "--warmup", "0")
    chosen = ("--server-file", str(server_file), "--servers", "tornado_declared", *least)
    war = ("--war", str(paths.SERVLET_TARGET / "crossbench.war"), "--context", "/mine", "--path", "/mine/hello")
    with lab_or_skip(["server"]) as lab:
        hosts = ("--hosts", str(lab.hosts_file({"server": "server"})))
        declared_run = run_all(tmp_path / "declared", *chosen, *hosts)
        assert declared_run.returncode == 0, declared_run.stderr[-2000:]
        assert not busy(lab.hosts["server"].namespace), "left running on the server host"
        war_run = subprocess.run(
            [
                str(paths.RUNNER / "run_all.sh"),
                *war,
                "--quick",
                "--concurrency",
                "1",
                "--max-threads",
                "4",
                "--repetitions",
                "1",
                *least,
                "--no-analysis",
                "--out",
                str(tmp_path / "war"),
                *hosts,
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert war_run.returncode == 0, war_run.stderr[-2000:]
        assert not busy(lab.hosts["server"].namespace), "left running on the server host"
        elsewhere = tmp_path / "elsewhere"  # the host's project_dir: never set up
        refused = run_all(
            tmp_path / "refused",
            *chosen,
            "--hosts",
            str(lab.hosts_file({"server": "server"}, {"server": str(elsewhere)})),
        )
    server_url = f"http://{lab.hosts['server'].address}:"
    for out, server in ((tmp_path / "declared", "tornado_declared"), (tmp_path / "war", "tomcat")):
        (record,) = map(json.loads, (out / "cells.jsonl").read_text().splitlines())  # a declared one's contract:
        assert record["status"] == "ok" and record["server"] == server, record.get("error")  # test_declared_live
        assert any(word.startswith(server_url) for word in sent_to(out, record)), record["loadgen_command"]
        assert record["samples"] >= 2 and record["threads_peak"] >= 1, record  # sampled on its host
    assert refused.returncode != 0 and "lacks what the server reads here" in refused.stderr, refused.stderr[-2000:]
    assert str(elsewhere) in refused.stderr and not (tmp_path / "refused" / "cells.jsonl").exists()
