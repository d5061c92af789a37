"""The runner end to end against the real servers and real wrk: the quick profile, Ctrl-C and --resume,
a server that dies mid-run. Each run is bounded (short cells) and leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import psutil
import pytest
from live_servers import build_missing_reason
from testkit import marked_processes, options, records, run_all_marked, wait_until

from crossbench import loadgen, paths, stats
from crossbench.figures.points import DISTURBED

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(build_missing_reason() is not None, reason=str(build_missing_reason())),
]

RUN_ALL = str(paths.RUNNER / "run_all.sh")


MARKER = "CROSSBENCH_TEST_RUN"


def marked_env(marker: str) -> dict:
    """Every process the run starts inherits this variable, so the ones left behind can be found."""
    return {**os.environ, MARKER: marker}


def test_quick_profile_end_to_end(tmp_path, report_figure):
    out = tmp_path / "quick"
    # The quick experiment's 30 cells, each 2 s after a 1 s warm-up instead of 4 s (saves ~60 s of the suite): 8
    # rounds of the 250 ms delay still fill the window, and the ratios below are per-request latencies.
    # A machine Tomcat never started on (a cache of its own): the run makes the class-data archive with one
    # unmeasured start, so that every measured launch maps it and keeps its JFR recording.
    env = {**marked_env(str(out)), "CROSSBENCH_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [RUN_ALL, "--quick", "--out", str(out), "--duration", "2s", "--warmup", "1s"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("made Tomcat's class-data archive") == 1, done.stderr[-3000:]
    meta = json.loads((out / "metadata.json").read_text())
    assert "30 cells (10 points x 3 rounds), 30 to run" in done.stderr
    cells = {r["cell_id"]: r for r in records(out)}
    # A launch the host disturbed (noisy_host: another process took the cores) or whose window was too short
    # (window_too_short) is kept but left out of its point, and launched again once after the three rounds
    # (decide/disturbed.py); CI met one such launch on a quiet machine. A launch far outside its siblings is
    # launched again once too, and stays in its point (points.outliers).
    relaunched = [r for r in cells.values() if r["repetition"] > 3]
    assert len(cells) == 30 + len(relaunched) and all(r["status"] == "ok" for r in cells.values())
    order = [r["point_id"] for r in records(out)][:30]
    assert set(order[:10]) == set(order[10:20]) == set(order[20:]) and len(set(order)) == 10  # round by round
    points = {p["point_id"]: p for p in map(json.loads, (out / "points.jsonl").read_text().splitlines())}
    # (counted, left out as disturbed, failed, launched again, flagged disturbed): a point whose every launch was
    # disturbed (a VM's steal through the whole run) counts them all, and is launched again at most once a round
    tally = {
        pid: (
            p["n"],
            p["disturbed_cells"],
            p["failed"],
            sum(r["point_id"] == pid for r in relaunched),
            sum(bool(DISTURBED.intersection(r["flags"])) for r in cells.values() if r["point_id"] == pid),
        )
        for pid, p in points.items()
    }
    assert len(points) == 10 and all(
        n >= 1 and n + len(disturbed) == 3 + again and again <= min(flagged + 1, 3) and failed == 0
        for n, disturbed, failed, again, flagged in tally.values()
    ), tally
    for point in points.values():
        for name, figure in point["figures"].items():  # one estimator, named; no bound below zero
            assert figure["estimator"] in (stats.GEOMETRIC, stats.INDICATIVE, stats.NOT_POSITIVE), (name, figure)
            assert figure["ci95_low"] is None or 0 < figure["ci95_low"] <= figure["value"] <= figure["ci95_high"]
            assert (figure["ci95_low"] is None) == (point["n"] < 3 or figure["estimator"] == stats.NOT_POSITIVE)
        p99 = point["figures"]["latency_ms.p99"]  # a percentile from its launches' own, like any figure
        assert p99["launches"] == [cells[c]["latency_ms"]["p99"] for c in point["cells"]]
    assert all(r["steal_percent"] is not None and r["tcp_passive_opens"] is not None for r in cells.values())
    assert meta["config"]["run"]["shuffle_seed"] and meta["noise_floor"]["cores"] >= 1
    speed = meta["noise_floor"]["core_speed"]
    assert set(speed["per_core"]) == {str(c) for c in os.sched_getaffinity(0)} and speed["cv_percent"] > 0
    assert meta["machine"]["cores"] and meta["versions"]["wrk"] and meta["versions"]["tomcat"]
    assert meta["config"]["name"] == "quick" and meta["wall_s"] > 0

    tomcat = cells["delay-tomcat-mt200-delay_sync-c400-d250-r1"]
    tornado = cells["delay-tornado-delay_async-c400-d250-r1"]
    for r in (tomcat, tornado):
        assert r["requests"] > 0 and r["error_total"] == 0
        # delayed cells hold their window: one vegeta process spans warm-up, window and tail (loadgen/held.py)
        assert r["loadgen"] == "vegeta" and r["held_window"] and not r["held_window"]["short"], r
        assert (out / r["series"]).is_file() and (out / "cells" / r["cell_id"] / "vegeta.csv").is_file()
    # Every figure from samples requests had, and Little's law on every closed-loop cell: no more in flight than
    # the connections (wrk's own histogram put 1.2 to 2.4 x C on the static mix)
    for r in cells.values():
        assert r["latency_method"] == ("recovered" if r["loadgen"] == "wrk" else "samples"), r["cell_id"]
        assert r["in_flight"] <= r["concurrency"] * 1.02 and "in_flight_over_concurrency" not in r["flags"], r
        assert r["loadgen"] == "vegeta" or (out / "cells" / r["cell_id"] / "wrk.json").is_file()
    # 400 clients on 200 threads: two rounds of the delay per answer, read alike by both ratios in a held
    # window; the event loop needs one.
    assert 1.7 < tomcat["latency_ratio"] < 2.4 and 1.7 < tomcat["efficiency_ratio"] < 2.4, tomcat
    assert tornado["latency_ratio"] < 1.5, tornado
    assert 200 < tomcat["threads_peak"] < 260 and tomcat["pool_busy_peak"] == 200
    assert tornado["threads_peak"] <= 2
    assert tomcat["jvm"]["available_processors"] == 1  # pinned to one core, and recorded
    for launch in (r for r in cells.values() if r["server"] == "tomcat"):
        assert "SharedArchiveFile" in launch["server_settings"]["class_data_sharing"], launch["cell_id"]
        assert launch["tomcat_jfr_unreadable"] is None and launch["tomcat_gc_pause_total_ms"] is not None, launch
    # where the harness's time goes, cell by cell (cell/phases.py): every phase of every launch accounted
    phases = [json.loads((out / "cells" / cid / "phases.json").read_text()) for cid in cells]
    assert all({"server_start", "verify", "warmup", "window", "server_stop", "record"} <= set(p) for p in phases)
    spent = {name: sum(p.get(name, 0.0) for p in phases) for name in phases[0]}
    report_figure(
        "quick profile, seconds per phase summed over its launches: "
        + ", ".join(f"{name} {s:.1f}" for name, s in sorted(spent.items(), key=lambda kv: -kv[1]))
    )
    report_figure(
        f"quick profile: {meta['wall_s']:.0f} s wall; tomcat C=400 250 ms ratio "
        f"{tomcat['efficiency_ratio']:.2f} (latency ratio {tomcat['latency_ratio']:.2f}, threads "
        f"{tomcat['threads_peak']}), tornado ratio {tornado['efficiency_ratio']:.2f} "
        f"(latency ratio {tornado['latency_ratio']:.2f}, threads {tornado['threads_peak']})"
    )
    if (paths.REPO / "analysis").is_dir():
        assert (out / "report.html").is_file()
    assert marked_processes(MARKER, str(out)) == []


def servers_quick(out: Path, *extra: str) -> subprocess.CompletedProcess:
    """servers-quick on gunicorn, uvicorn and nginx (Tomcat and Tornado are measured on the same static and delayed
    endpoints by the quick profile's test), marked, without the analysis."""
    return run_all_marked(
        MARKER, str(out), "--experiment", "servers-quick", "--out", str(out), "--no-analysis", *extra, timeout_s=300
    )


@pytest.mark.shares_cores
def test_every_server_is_measured_once(tmp_path):
    """servers-quick's static cells: each plug-in starts, is verified, measured, sampled and stopped. One 1 s
    window without a warm-up a server still starts, answers wrk and stops, which is what fails when a plug-in
    breaks; its Little's-law figures are test_a_sync_worker_pool_queues_as_littles_law_says's."""
    out = tmp_path / "servers"
    done = servers_quick(
        out, "--groups", "static", "--servers", "gunicorn,uvicorn,nginx", "--duration", "1s", "--warmup", "0"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cells = records(out)
    assert {r["server"] for r in cells} == {"gunicorn", "uvicorn", "nginx"} and len(cells) == 3
    assert all(r["status"] == "ok" and r["requests"] > 0 and r["error_total"] == 0 for r in cells), cells
    by_id = {r["cell_id"]: r for r in cells}
    assert by_id["static-gunicorn-w4-static_mix-c10-d0-r1"]["processes"] == 4
    assert by_id["static-nginx-static_mix-c10-d0-r1"]["processes"] == 1
    assert marked_processes(MARKER, str(out)) == []


def test_a_sync_worker_pool_queues_as_littles_law_says(tmp_path, report_figure):
    """servers-quick's delayed cells, and the plug-in's own prediction holds: 4 gunicorn sync workers answer 40
    req/s of a 100 ms delay, so 10 clients wait C / 4 = 2.5 delays per answer (Little's law), as Tomcat's clients
    do past maxThreads; uvicorn's event loop answers each in about one delay."""
    out = tmp_path / "servers"
    # 2 s windows (the file's 3 s are for users): 20 rounds of the 100 ms delay
    done = servers_quick(out, "--groups", "delay", "--servers", "gunicorn,uvicorn", "--duration", "2s")
    assert done.returncode == 0, done.stderr[-3000:]
    cells = records(out)
    assert {r["server"] for r in cells} == {"gunicorn", "uvicorn"} and len(cells) == 2
    assert all(r["status"] == "ok" and r["requests"] > 0 and r["error_total"] == 0 for r in cells), cells
    by_id = {r["cell_id"]: r for r in cells}
    gunicorn = by_id["delay-gunicorn-w4-delay_sync-c10-d100-r1"]
    assert gunicorn["parallel_limit"] == 4 and gunicorn["processes"] == 4
    assert 2.3 < gunicorn["latency_ratio"] < 2.9, gunicorn
    assert by_id["delay-uvicorn-delay_async-c10-d100-r1"]["latency_ratio"] < 1.3
    report_figure(
        "servers-quick delay C=10 latency ratio: " + ", ".join(f"{r['server']} {r['latency_ratio']:.2f}" for r in cells)
    )
    assert marked_processes(MARKER, str(out)) == []


# The generators a closed-loop window runs: wrk, or for a delayed cell's held window the one that holds it (oha, or
# vegeta for the quick profile: runner/README.md); a process is named after its adapter
LOAD_TOOLS = {"wrk"} | {name for name, generator in loadgen.ADAPTERS.items() if generator.holds_window}


def measuring_load(marker: str) -> list[psutil.Process]:
    """The run's load generator (small_run has no warm-up: a generator running is a measured window)."""
    found = []
    for proc in marked_processes(MARKER, marker):
        try:
            if proc.name() in LOAD_TOOLS:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def server_under_load(marker: str) -> psutil.Process | None:
    """The run's Tomcat while its load generator runs; None before."""
    if not measuring_load(marker):
        return None
    for proc in marked_processes(MARKER, marker):
        try:
            if "Bootstrap" in " ".join(proc.cmdline()):
                return proc
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return None


def small_run(out: Path, *extra: str) -> list[str]:
    """Two Tomcat cells of 1 s, one launch each: a test acts inside the second cell's window, or the first's, as
    soon as it sees the cell's load generator, which runs for the whole held window. No JFR recording: 0.6-1.0 s
    less per start here and 0.6 s less reading it (test_jfr.py and the quick profile check the recording)."""
    return [
        RUN_ALL,
        *options(
            [
                "--experiment",
                "quick",
                "--out",
                str(out),
                "--groups",
                "delay",
                "--servers",
                "tomcat",
                "--concurrency",
                "2,3",
                "--delays",
                "200ms",
                "--duration",
                "1s",
                "--warmup",
                "0",
                "--repetitions",
                "1",
                "--no-analysis",
                "--no-jfr",
            ],
            *extra,
        ),
    ]


@pytest.mark.shares_cores
def test_sigterm_keeps_finished_cells_and_resume_runs_only_the_rest(tmp_path):
    """Two cells are the least that leave one finished and one to run again: SIGTERM in the second cell's window
    still has to keep the first and stop the server, and --resume still has to run the second alone."""
    out = tmp_path / "interrupted"
    proc = subprocess.Popen(
        small_run(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=marked_env(str(out))
    )
    try:
        wait_until(lambda: records(out), 90, "the first cell to finish")
        # into the second cell: a server and its load generator are running
        wait_until(lambda: measuring_load(str(out)), 60, "the load generator measuring the second cell")
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "--resume" in stderr
    kept = [r["cell_id"] for r in records(out)]
    assert len(kept) == 1
    assert marked_processes(MARKER, str(out)) == []
    first_sitting = json.loads((out / "metadata.json").read_text())["wall_s"]
    assert first_sitting > 0, "the interrupted sitting's wall time is kept"

    done = run_all_marked(MARKER, str(out), "--resume", str(out), "--no-analysis", timeout_s=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "1 to run" in done.stderr
    assert json.loads((out / "metadata.json").read_text())["wall_s"] > first_sitting
    final = [r["cell_id"] for r in records(out)]
    assert final[: len(kept)] == kept and len(final) == len(set(final)) == 2
    assert marked_processes(MARKER, str(out)) == []


@pytest.mark.shares_cores
def test_a_server_that_dies_fails_its_cell_and_the_run_goes_on(tmp_path):
    """Two cells, the one whose server dies and one after it, are the least that show the run going on, and one
    launch a point leaves --retry-failed exactly one launch to add."""
    out = tmp_path / "dies"
    proc = subprocess.Popen(
        small_run(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=marked_env(str(out))
    )
    try:
        # measuring: now kill the server under it
        victim = wait_until(lambda: server_under_load(str(out)), 60, "the load generator measuring the first cell")
        os.kill(victim.pid, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    results = records(out)
    assert [r["status"] for r in results] == ["failed", "ok"], stderr
    assert results[0]["flags"] == ["server_died"], results[0]["error"]  # decided from the server process
    assert results[0]["valid"] is False and "exited with status" in results[0]["error"]

    # after the fault: a plain resume says what --retry-failed would do and runs nothing; --retry-failed launches
    # that point again, its failed launch kept beside the new one
    dead = results[0]["point_id"]
    first_wall = json.loads((out / "metadata.json").read_text())["wall_s"]
    plain = run_all_marked(MARKER, str(out), "--resume", str(out), "--no-analysis", timeout_s=120)
    assert plain.returncode == 0 and "1 point(s) have no launch that counted" in plain.stderr, plain.stderr[-2000:]
    assert len(records(out)) == 2
    done = run_all_marked(MARKER, str(out), "--resume", str(out), "--retry-failed", "--no-analysis", timeout_s=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (
        f"--retry-failed: 1 point(s) with no launch that counted, launched again (1 launch): {dead}" in done.stderr
        and "1 to run" in done.stderr
        and "x 1 rounds and 1 launch decided after them" in done.stderr
    )
    again = records(out)
    assert [r["cell_id"] for r in again[:2]] == [r["cell_id"] for r in results]
    assert again[2]["cell_id"] == f"{dead}-r2" and again[2]["status"] == "ok", again[2].get("error")
    [point] = [p for p in map(json.loads, (out / "points.jsonl").read_text().splitlines()) if p["point_id"] == dead]
    assert (point["n"], point["failed"], point["failed_cells"]) == (1, 1, [results[0]["cell_id"]])
    assert f"{dead}-r2" in [c["cell_id"] for c in json.loads((out / "plan.json").read_text())]
    assert json.loads((out / "metadata.json").read_text())["wall_s"] > first_wall  # the sittings added up
    assert marked_processes(MARKER, str(out)) == []


@pytest.mark.shares_cores
def test_bad_options_are_refused_before_anything_runs(tmp_path):
    """Each refusal starts no server and no load: nothing here measures."""
    for args, message in [
        (["--concurrency", "ten"], "expected integers"),
        (["--servers", "bogus"], "unknown server 'bogus'"),
        (["--server-cpus", "0", "--loadgen-cpus", "0"], "overlap"),
        (["--server-cpus", "64"], "not available here"),
        (["--loadgen", "http_load", "--concurrency", "2000"], "http_load"),
        (["--retry-failed"], "--retry-failed goes with --resume DIR"),
    ]:
        done = subprocess.run(
            [RUN_ALL, "--quick", "--out", str(tmp_path / "x"), *args], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)
        assert not (tmp_path / "x" / "cells.jsonl").exists()
