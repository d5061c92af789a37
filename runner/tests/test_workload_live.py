"""The user's own requests as the workload, end to end: run_all.sh with --app httpbin:app (PyPI's httpbin, never
modified) and --workload examples/workload-httpbin.toml, one launch a point of 1 s windows. Each request kind is a
group of its own and the mix one more, every record counts its answers per status, and a request whose answer is
not the one it declares is refused before load in one line, with nothing left running."""

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
    pytest.mark.shares_cores,  # what the run did (groups, status counts, a refusal), one launch a point, no figure
    pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed"),
]

RUN_ALL = str(paths.RUNNER / "run_all.sh")
EXAMPLE = paths.RUNNER.parent / "examples" / "workload-httpbin.toml"
MARKER = "CROSSBENCH_TEST_WORKLOAD"


def run_all(tmp_path: Path, workload: Path, *extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    """The quick run of httpbin under gunicorn's sync workers on `workload` (and `extra` options); nothing of it
    left running."""
    folder, out, marker = tmp_path / "theirs", tmp_path / "run", uuid.uuid4().hex
    folder.mkdir(exist_ok=True)
    (folder / "requirements.txt").write_text("httpbin==0.10.4\n")
    done = subprocess.run(
        [RUN_ALL, "--app", "httpbin:app", "--app-dir", str(folder), "--workload", str(workload), "--quick"]
        + ["--concurrency", "1,4", "--duration", "1s", "--warmup", "0", "--repetitions", "1"]
        + ["--workers", "2", "--worker-class", "sync", "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=1500,  # a first run builds the app's environment from PyPI
        env={**os.environ, MARKER: marker},
        stdin=subprocess.DEVNULL,
    )
    assert not marked_processes(MARKER, marker)
    return done, out


def test_each_request_kind_is_a_group_and_the_mix_one_more_with_answers_counted_per_status(tmp_path):
    done, out = run_all(tmp_path, EXAMPLE)
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    assert all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
    assert {(r["group"], r["endpoint"], r["concurrency"]) for r in records} == {
        (group, endpoint, c)
        for group, endpoint in (("get", "/get?source=crossbench"), ("post-json", "/post"), ("status", "/status/200"))
        + (("mix", "/*"),)
        for c in (1, 4)
    }
    for record in records:
        assert record["loadgen_status_counts"] == {"200": record["requests"]} and record["requests"] > 0
    metadata = json.loads((out / "metadata.json").read_text())
    assert [r["name"] for r in metadata["config"]["run"]["requests"]] == ["get", "post-json", "status"]


def test_k6_reads_each_kind_inside_the_mix(tmp_path):
    """The mix alone under k6 (open loop: 50 req/s, each kind about 10 a second by its weight), each launch's
    record holding each kind's own answers and latency among the mix's."""
    done, out = run_all(tmp_path, EXAMPLE, "--loadgen", "k6", "--groups", "mix", "--rates", "50")
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    assert {(r["group"], r["concurrency"], r["status"]) for r in records} == {("mix", 1, "ok"), ("mix", 4, "ok")}
    for record in records:
        kinds = record["latency_by_kind"]
        assert list(kinds) == ["get", "post-json", "status"], kinds
        assert all(k["requests"] > 0 and k["non_2xx"] == 0 and k["latency_ms"]["p99"] for k in kinds.values()), kinds


def test_a_request_that_does_not_answer_as_declared_is_refused_before_load_in_one_line(tmp_path):
    workload = tmp_path / "w.toml"
    workload.write_text('[[request]]\nname = "teapot"\npath = "/status/418"\nexpect = { status = 200 }\n')
    done, out = run_all(tmp_path, workload)
    assert done.returncode != 0
    [line] = [line for line in done.stderr.splitlines() if "teapot" in line]
    assert "teapot (GET /status/418) answered 418 where 200 was declared; its body begins:" in line
    assert not (out / "cells.jsonl").exists() or not (out / "cells.jsonl").read_text().strip()
