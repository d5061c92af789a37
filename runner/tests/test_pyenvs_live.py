"""--python end to end: a tiny run of Tornado's delayed endpoint on two interpreters this machine has, each in its own
environment, gives a series per interpreter in the records, the points, the summary and the charts, compare --within
pairs them, every record carries its interpreter and metadata.json the interpreters found and used. The environments are built on first use (a
minute or two each, from PyPI) and reused after."""

from __future__ import annotations

import json
import subprocess

import pytest
from testkit import records

from crossbench import paths, pyenvs
from crossbench.pyenvs import PythonNotHere

pytestmark = pytest.mark.live

RUN_ALL = str(paths.RUNNER / "run_all.sh")
WANTED = ("3.11", "3.12")


def present(version: str) -> bool:
    try:
        pyenvs.resolve(version)
        return True
    except PythonNotHere:
        return False


@pytest.mark.shares_cores
def test_two_interpreters_are_two_series_with_the_interpreter_in_every_record(tmp_path):
    """One 1 s launch without a warm-up at C=1 on each interpreter: what is checked is that each interpreter gets
    a venv, a series and its facts in every record, and compare pairs them, which any window that completes
    requests carries."""
    missing = [v for v in WANTED if not present(v)]
    if missing:
        pytest.skip(f"this machine has no Python {', '.join(missing)}")
    out = tmp_path / "run"
    done = subprocess.run(
        [
            RUN_ALL,
            "--quick",
            "--out",
            str(out),
            "--servers",
            "tornado",
            "--groups",
            "delay",
            "--concurrency",
            "1",
            "--delays",
            "100ms",
            "--duration",
            "1s",
            "--warmup",
            "0",
            "--repetitions",
            "1",
            "--python",
            ",".join(WANTED),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cells = list(records(out))
    assert len(cells) == 2 and all(r["status"] == "ok" for r in cells), [r.get("failure") for r in cells]
    by_setting = {}
    for record in cells:
        by_setting.setdefault(record["setting"], []).append(record)
    assert set(by_setting) == {f"tornado Python {v}" for v in WANTED}
    for version in WANTED:
        for record in by_setting[f"tornado Python {version}"]:
            facts = record["server_settings"]["python"]
            assert facts["version"].startswith(version + ".") and facts["asked"] == version, facts
            assert facts["implementation"] == "cpython" and facts["gil_enabled"] is not facts["free_threaded"]
            assert facts["packages"]["tornado"] == "6.5.2" and "jit" in facts
            assert f"-py{version.replace('.', '')}-" in record["cell_id"]
    points = [json.loads(line) for line in (out / "points.jsonl").read_text().splitlines()]
    assert sorted(p["setting"] for p in points) == sorted(f"tornado Python {v}" for v in WANTED)
    summary = done.stdout + done.stderr
    assert all(f"tornado Python {v}" in summary for v in WANTED), summary[-3000:]
    meta = json.loads((out / "metadata.json").read_text())
    assert all(any(used.startswith(v + ".") for used in meta["pythons"]["used"]) for v in WANTED), meta["pythons"]
    assert len(meta["pythons"]["used"]) == 2 and len(meta["pythons"]["found"]) >= 2
    series = [
        line.split("\t")[0]
        for line in (out / "charts" / "data" / "latency.dat").read_text().splitlines()
        if line.startswith('"')
    ]
    assert sorted(series) == [f'"tornado Python {v}"' for v in WANTED], series  # a series per interpreter
    within = subprocess.run(
        [str(paths.REPO / "analysis" / "compare.sh"), str(out), "--within", *(f"tornado Python {v}" for v in WANTED)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert within.returncode == 0 and "1 point(s) compared" in within.stdout, within.stdout + within.stderr


@pytest.mark.shares_cores
def test_the_interpreter_experiment_runs_every_interpreter_and_its_findings_say_what_each_moved(tmp_path):
    """The quick experiment at one launch a point without its warm-up: each interpreter's cells, the GIL as its
    servers saw it, a finding per compared point and the charts are what the run did, at any load; the paired
    comparison's figures are test_findings_interpreters.py's (analysis/tests)."""
    found = list(dict.fromkeys(i.label for i in pyenvs.installed() if i.minor >= pyenvs.lowest_supported()))
    if len(found) < 2:
        pytest.skip(f"this machine has fewer than two interpreters the suite supports: {found}")
    out = tmp_path / "run"
    done = subprocess.run(
        [RUN_ALL, "--experiment", "interpreters-quick", "--warmup", "0", "--repetitions", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    threaded = any(label.endswith("t") for label in found)
    assert "free-threaded" in done.stderr and (threaded or "no free-threaded Python build" in done.stderr)
    cells = list(records(out))
    assert all(r["status"] == "ok" for r in cells), [r.get("failure") for r in cells]
    assert {r["python"] for r in cells} == set(found)
    for record in cells:  # the GIL as the server's own processes saw it, beside the side interpreter's reading
        facts = record["server_settings"]["python"]
        said = facts["in_server"]
        assert said["gil_enabled"] is facts["gil_enabled"] and said["version"] == facts["version"], facts
        assert said["processes"] == (2 if record["server"] == "gunicorn" else 1), said
    findings = (out / "findings.md").read_text()
    moved = [line for line in findings.splitlines() if f"against {found[0]}," in line]
    # each newer interpreter against the oldest on every point both measured unflagged; a point the host
    # disturbed (another test beside this one) is left out, and one line names it
    assert len(moved) == compared(out, found[0]), findings
    assert compared(out, found[0]) == 3 * (len(found) - 1) or "left out of the comparisons" in findings, findings
    assert all(line[2].isdigit() and ("move" in line or "cannot" in line) for line in moved), moved
    assert "free-threaded" in findings
    drawn = " ".join(p.read_text() for p in (out / "charts" / "data").glob("*.dat"))
    assert all(f'"tornado Python {label}' in drawn for label in found), "a series per interpreter on the charts"
    report = (out / "report.html").read_text()
    assert all(f"tornado Python {label}" in report for label in found)


def compared(out, oldest: str) -> int:
    """The pairs the findings compare: each valid point on a newer interpreter whose point on `oldest` is valid."""
    valid: dict[tuple, set[str]] = {}
    for point in map(json.loads, (out / "points.jsonl").read_text().splitlines()):
        server, _, version = point["setting"].partition(" Python ")
        if point["valid"]:
            valid.setdefault((point["group"], server), set()).add(version)
    return sum(len(on) - 1 for on in valid.values() if oldest in on)
