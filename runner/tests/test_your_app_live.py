"""Real third-party Python apps from PyPI, never modified, run by run_all.sh with --app on the quick your-app profile
at its least load (one launch a point, 1 s windows, no warm-up, C 1 and 5): httpbin's Flask app (httpbin:app,
WSGI) under gunicorn's sync and gthread workers, and prometheus_client's ASGI app (made by its function
make_asgi_app) under uvicorn and gunicorn's uvicorn workers. Each folder the test hands over holds only a
requirements file naming the package; the environment is built from it and the suite's pinned servers once, into
the tools cache. The records name the app and the path, there is a series per server setting, the summary or the
findings speak of each, the folder is as it was and nothing is left running."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from testkit import marked_processes

from crossbench import paths

pytestmark = [
    pytest.mark.live,
    pytest.mark.shares_cores,
    pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed"),
]

RUN_ALL = str(paths.RUNNER / "run_all.sh")
MARKER = "CROSSBENCH_TEST_APP"
# One launch of each setting at C=1 and one level above: the app's whole road through a run (its environment
# built, served by each worker class, verified, swept, its ratios taken against C=1, summarised) takes any
# window that completes requests.
LEAST_LOAD = ("--duration", "1s", "--warmup", "0", "--concurrency", "5")
LEVELS = {1, 5}  # --concurrency 5, and C=1 that every --path adds for its service time


def app_folder(tmp_path: Path, requirement: str) -> Path:
    folder = tmp_path / "theirs"
    folder.mkdir()
    (folder / "requirements.txt").write_text(requirement + "\n")
    return folder


def listing(folder: Path) -> list[tuple[str, bytes]]:
    return sorted((str(p.relative_to(folder)), p.read_bytes() if p.is_file() else b"") for p in folder.rglob("*"))


def run_app(app: str, folder: Path, path: str, out: Path) -> list[dict]:
    """The quick run of `app` on `path` at its least load: it succeeds, leaves nothing running and the folder as it
    was; its records."""
    before, marker = listing(folder), uuid.uuid4().hex
    done = subprocess.run(
        [RUN_ALL, "--app", app, "--app-dir", str(folder), "--path", path, "--quick", *LEAST_LOAD, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=1500,  # a first run builds the app's environment from PyPI
        env={**os.environ, MARKER: marker},
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert not marked_processes(MARKER, marker)
    assert listing(folder) == before
    records = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    assert all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
    assert {r["endpoint"] for r in records} == {path}
    assert {r["server_settings"]["app_dir"] for r in records} == {str(folder)}
    assert all(r["errors"]["non_2xx"] == 0 and r["rps"] > 0 for r in records)
    return records


def check_settings(out: Path, path: str, settings: set[str]) -> None:
    """Each setting has its summary row on the path, named with its service time, or (every launch of it left out
    on a busy host) a finding that says so."""
    found = json.loads((out / "findings.json").read_text())
    rows = {r["setting"]: r for r in found["summary"]["rows"]}
    sentences = [f["sentence"] for f in found["findings"]]
    for setting in settings:
        if setting in rows:
            assert (
                rows[setting]["workload"].startswith(f"{path}, ") and "service time at C=1" in rows[setting]["workload"]
            )
        else:
            assert any(setting in s and "left out" in s for s in sentences), (setting, rows, sentences)


def test_a_third_party_wsgi_app_runs_under_gunicorn_sync_and_gthread_workers(tmp_path):
    """One 1 s launch at C 1 and 5 a worker class: a worker class that is not started, not stopped or not named
    in the records shows in any of them."""
    folder, out = app_folder(tmp_path, "httpbin==0.10.4"), tmp_path / "run"
    records = run_app("httpbin:app", folder, "/get", out)
    assert {(r["server_settings"]["app"], r["server_settings"]["app_kind"]) for r in records} == {
        ("httpbin:app", "wsgi")
    }
    assert {(r["server"], r["worker_class"], r["concurrency"]) for r in records} == {
        ("gunicorn", w, c) for w in ("sync", "gthread") for c in LEVELS
    }
    check_settings(out, "/get", {"gunicorn 2 sync workers", "gunicorn 2 gthread workers x 2 threads"})


def test_a_third_party_asgi_app_runs_under_uvicorn_and_gunicorn_s_uvicorn_workers(tmp_path):
    """One 1 s launch at C 1 and 5 a server: an app factory not called, or a server not started, stopped or named
    in the records, shows in any of them."""
    folder, out = app_folder(tmp_path, "prometheus-client==0.26.0"), tmp_path / "run"
    records = run_app("prometheus_client:make_asgi_app", folder, "/metrics", out)
    made = {(r["server_settings"]["app"], r["server_settings"]["app_kind"]) for r in records}
    assert made == {("prometheus_client:make_asgi_app()", "asgi")}  # a function making the app
    assert {(r["server"], r.get("worker_class"), r["concurrency"]) for r in records} == {
        *(("uvicorn", None, c) for c in LEVELS),
        *(("gunicorn", "uvicorn-worker", c) for c in LEVELS),
    }
    check_settings(out, "/metrics", {"uvicorn w2", "gunicorn 2 uvicorn-worker workers"})
