"""Findings on a sweep of a user's own path under gunicorn's WSGI workers (--app): the ratios are taken against the
path's service time at C=1, and the findings say so where a delay's ratios say "delay"; what caps the requests
served at once is the workers (sync: one a worker; gthread: its threads), not "nothing". On a SYNTHETIC run whose
figures are known: a request costing 1 ms alone on a machine that serves one at a time (CPU-bound)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crossbench import endpoints
from crossbench_analysis import cli

PATH = "/get"
SERVICE_MS = 1.0
SETTINGS = {"sync": (2, 1), "gthread": (2, 4)}  # worker class: (workers, threads)


@pytest.fixture(autouse=True)
def no_user_paths():
    yield
    endpoints.USER.clear()


def app_cell(worker_class: str, c: int, rep: int) -> dict:
    workers, threads = SETTINGS[worker_class]
    mean = SERVICE_MS * c * (1 + 0.01 * rep)  # one at a time: C rounds of the service time
    return {
        "cell_id": f"get-gunicorn-w{workers}-{worker_class}-get-c{c}-d0-r{rep}",
        "group": "get",
        "server": "gunicorn",
        "setting": f"gunicorn {workers} {worker_class} workers" + (f" x {threads} threads" if threads > 1 else ""),
        "endpoint": PATH,
        "worker_class": worker_class,
        "workers": workers,
        "threads": threads,
        "processes": workers,
        "concurrency": c,
        "repetition": rep,
        "delay_ms": 0,
        "kind": "closed_loop",
        "status": "ok",
        "flags": [],
        "valid": True,
        "efficiency_ratio": None,
        "latency_ratio": None,
        "rps": c / (mean / 1000),
        "cpu_percent": 99.0,
        "threads_peak": workers * threads + 2,
        "rss_peak_mb": 100.0,
        "latency_ms": {"mean": mean, "p50": mean, "p99": mean + 1},
        "server_cpus": [1],
        "error_total": 0,
    }


@pytest.fixture
def app_run(tmp_path) -> Path:
    run = tmp_path / "SYNTHETIC-app"
    run.mkdir()
    cells = [app_cell(k, c, rep) for k in SETTINGS for c in (1, 5, 25, 100) for rep in (1, 2, 3)]
    (run / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells))
    meta = {
        "run_id": run.name,
        "experiment": "your-app",
        "machine": {"cpu_model": "SYNTHETIC", "somaxconn": "4096"},
        "config": {"run": {"paths": [PATH]}},
    }
    (run / "metadata.json").write_text(json.dumps(meta))
    return run


def test_a_user_path_s_ratios_are_said_against_its_service_time_and_gunicorn_s_workers_cap_it(app_run):
    assert cli.main(["findings", str(app_run)]) == 0
    text = (app_run / "findings.md").read_text()
    assert "(mean latency / its service time at C=1)" in text and "/ delay" not in text
    assert "past the 8 its workers serve at once, which alone would make C / 8 = 12 rounds" in text
    assert "past the 2 its workers serve at once, which alone would make C / 2 = 50 rounds" in text
    assert "nothing caps" not in text
