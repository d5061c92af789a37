"""Findings on a sweep of a user's own path under gunicorn's WSGI workers (--app): the ratios are taken against the
path's service time at C=1, and the findings say so where a delay's ratios say "delay"; what caps the requests
served at once is the workers (sync: one a worker; gthread: its threads), not "nothing". On a SYNTHETIC run whose
figures are known: a request costing 1 ms alone on a machine that serves one at a time (CPU-bound)."""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic_run import user_path_cell, write_user_run

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
    return user_path_cell(
        f"get-gunicorn-w{workers}-{worker_class}-get-c{c}-d0-r{rep}",
        "gunicorn",
        PATH,
        c,
        SERVICE_MS * c * (1 + 0.01 * rep),  # one at a time: C rounds of the service time
        group="get",
        setting=f"gunicorn {workers} {worker_class} workers" + (f" x {threads} threads" if threads > 1 else ""),
        worker_class=worker_class,
        workers=workers,
        threads=threads,
        processes=workers,
        repetition=rep,
        threads_peak=workers * threads + 2,
        rss_peak_mb=100.0,
    )


@pytest.fixture
def app_run(tmp_path) -> Path:
    cells = [app_cell(k, c, rep) for k in SETTINGS for c in (1, 5, 25, 100) for rep in (1, 2, 3)]
    return write_user_run(tmp_path / "SYNTHETIC-app", cells, [PATH], "your-app")


def test_a_user_path_s_ratios_are_said_against_its_service_time_and_gunicorn_s_workers_cap_it(app_run):
    assert cli.main(["findings", str(app_run)]) == 0
    text = (app_run / "findings.md").read_text()
    assert "(mean latency / its service time at C=1)" in text and "/ delay" not in text
    assert "past the 8 its workers serve at once, which alone would make C / 8 = 12 rounds" in text
    assert "past the 2 its workers serve at once, which alone would make C / 2 = 50 rounds" in text
    assert "nothing caps" not in text
