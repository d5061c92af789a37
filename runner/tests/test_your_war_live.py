"""A real third-party WAR on the suite's Tomcat: Jolokia's unsecured agent WAR (org.jolokia:jolokia-war-unsecured,
javax.servlet, from Maven Central; fetched by Maven, never committed) run by run_all.sh with --war, --context and
--path on the quick your-war profile over maxThreads 10 and 50. Its records name the WAR and the path, its points
carry their ratios against the path's C=1 service time, and the summary names each setting and where it bends.
The bad input: a WAR Tomcat cannot deploy and a path that answers 404, each refused in one line before any cell.
Nothing is left running after any of them."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
import zipfile
from pathlib import Path

import pytest
from testkit import marked_processes, run_all_marked

from crossbench_analysis.judge.knees import DECIDED

pytestmark = [
    pytest.mark.live,
    pytest.mark.shares_cores,
    pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed"),
    pytest.mark.skipif(shutil.which("mvn") is None, reason="mvn is not installed"),
]

ARTIFACT = "org.jolokia:jolokia-war-unsecured:1.7.2:war"
CONTEXT = "/jolokia"
PATH = "/jolokia/read/java.lang:type=Memory/HeapMemoryUsage/used"  # one MBean attribute read, as JSON
MARKER = "CROSSBENCH_TEST_WAR"


@pytest.fixture(scope="module")
def jolokia_war(tmp_path_factory) -> Path:
    """The WAR as Maven fetches it (from its local repository when it has it), copied into a folder of the test's."""
    folder = tmp_path_factory.mktemp("war")
    done = subprocess.run(
        ["mvn", "-B", "-q", "dependency:copy", f"-Dartifact={ARTIFACT}", f"-DoutputDirectory={folder}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    wars = list(folder.glob("*.war"))
    if done.returncode != 0 or not wars:
        pytest.skip(f"Maven could not fetch {ARTIFACT}: {done.stdout[-300:]}")
    return wars[0]


def run_all(*args: str, marker: str) -> subprocess.CompletedProcess:
    return run_all_marked(MARKER, marker, *args, timeout_s=900)


def test_a_third_party_war_is_swept_over_max_threads_on_its_own_request(tmp_path, jolokia_war):
    """The quick profile at its least load, one 1 s launch without a warm-up at C 1 and 5 for each maxThreads:
    what is checked is the WAR's road through a run (deployed, verified, swept over both pools, its ratios taken
    against C=1, summarised), which any window that completes requests takes; where the bends lie is the knee
    rule's (analysis/tests/test_knees.py holds its truths), and its "cannot tell" on two levels is accepted."""
    before = jolokia_war.read_bytes()
    marker, out = uuid.uuid4().hex, tmp_path / "run"
    done = run_all(
        "--war",
        str(jolokia_war),
        "--context",
        CONTEXT,
        "--path",
        PATH,
        "--max-threads",
        "10,50",
        "--quick",
        "--duration",
        "1s",
        "--warmup",
        "0",
        "--concurrency",
        "5",
        "--out",
        str(out),
        marker=marker,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert not marked_processes(MARKER, marker)
    assert jolokia_war.read_bytes() == before and sorted(p.name for p in jolokia_war.parent.iterdir()) == [
        jolokia_war.name
    ]
    records = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
    assert {r["endpoint"] for r in records} == {PATH} and {r["war"] for r in records} == {str(jolokia_war)}
    assert {(r["max_threads"], r["concurrency"]) for r in records} == {(t, c) for t in (10, 50) for c in (1, 5)}
    assert all(r["errors"]["non_2xx"] == 0 and r["rps"] > 0 for r in records)
    pts = [json.loads(line) for line in (out / "points.jsonl").read_text().splitlines()]
    for p in pts:
        service = p["figures"]["service_time_ms"]["value"]
        c1 = next(q for q in pts if q["max_threads"] == p["max_threads"] and q["concurrency"] == 1)
        assert service == pytest.approx(c1["figures"]["service_time_ms"]["value"])
        assert p["figures"]["efficiency_ratio"]["value"] > 0
    c1_ratios = [p["figures"]["latency_ratio"]["value"] for p in pts if p["concurrency"] == 1]
    assert c1_ratios == pytest.approx([1.0, 1.0])
    check_summary(out)


BENDS = ("C=", "C ", "not up to C=", "at or below C=")  # a fitted knee, a bracket, or past either end


def check_summary(out: Path) -> None:
    """Each setting has its summary row on the path, named with its service time, and says where it bends; where
    it cannot tell, the knees file says why (points left out, or a knee no hinge places). A setting whose every
    launch was left out (a host too busy to measure) has no row, and a finding says so."""
    found = json.loads((out / "findings.json").read_text())
    rows, sentences = found["summary"]["rows"], [f["sentence"] for f in found["findings"]]
    knees = {
        k["max_threads"]: k for k in map(json.loads, (out / "charts" / "data" / "knees.jsonl").read_text().splitlines())
    }
    for threads in (10, 50):
        setting = f"tomcat maxThreads={threads}"
        row = next((r for r in rows if r["setting"] == setting), None)
        if row is None:
            assert any(setting in s and "every cell of it was left out" in s for s in sentences), (rows, sentences)
            continue
        assert row["workload"].startswith(f"{PATH}, ") and "service time at C=1" in row["workload"]
        assert knees[threads]["endpoint"] == PATH and knees[threads]["ratio_used"] in (
            "latency_ratio",
            "efficiency_ratio",
        )
        if not row["bends_at"].startswith(BENDS):
            # the knee rule's own "cannot tell": points left out (a host too busy to measure), or no pool's hinge
            # fits (a request bound by one core rather than a pool can read so), or the launches fit any knee;
            # the knees file says which
            knee = knees[threads]
            assert row["bends_at"] == "cannot tell (see findings)", row
            assert (knee["left_out"] or knee["status"] not in DECIDED) and knee["text"], knee


def broken_war(folder: Path) -> Path:
    """A WAR whose web.xml names a listener class it does not hold: Tomcat starts, and cannot deploy it."""
    war = folder / "broken.war"
    with zipfile.ZipFile(war, "w") as z:
        z.writestr(
            "WEB-INF/web.xml",
            '<web-app xmlns="http://xmlns.jcp.org/xml/ns/javaee" version="3.1">'
            "<listener><listener-class>com.example.Missing</listener-class></listener>"
            "</web-app>",
        )
    return war


def test_a_war_that_does_not_deploy_is_refused_with_tomcat_s_first_severe_line(tmp_path):
    marker, out = uuid.uuid4().hex, tmp_path / "run"
    done = run_all("--war", str(broken_war(tmp_path)), "--path", "/x", "--quick", "--out", str(out), marker=marker)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "broken.war did not deploy; Tomcat's log says:" in last and " SEVERE " in last, done.stderr[-2000:]
    assert "com.example.Missing" in last
    assert not marked_processes(MARKER, marker) and not (out / "cells.jsonl").exists()


def test_a_path_that_answers_404_before_load_is_refused_with_its_status(tmp_path, jolokia_war):
    marker, out = uuid.uuid4().hex, tmp_path / "run"
    done = run_all(
        "--war",
        str(jolokia_war),
        "--context",
        CONTEXT,
        "--path",
        "/no-such-page",
        "--quick",
        "--out",
        str(out),
        marker=marker,
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "GET /no-such-page answered 404 before load; each --path must answer 2xx" in last, done.stderr[-2000:]
    assert not marked_processes(MARKER, marker) and not (out / "cells.jsonl").exists()
