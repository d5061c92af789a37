"""Our TechEmpower ratios beside the published ones (tfb_reference.py), on a SYNTHETIC tfb run (nothing measured)
against the committed reference data, and what a missing or torn reference file, or a run without TechEmpower
cells, does."""

from __future__ import annotations

import json
import shutil

import pytest
from test_findings_tfb import tfb_run

import crossbench_analysis
from crossbench.endpoints import TECHEMPOWER
from crossbench_analysis import cli
from crossbench_analysis.findings import findings, tfb_reference
from crossbench_analysis.findings.finding import load_points
from crossbench_analysis.read.runinfo import load_run


def json_pairs(result):
    [json_type] = [t for t in result["types"] if t["type"] == "json"]
    return {(p["b"], p["a"]): p for p in json_type["pairs"]}


def verdicts(pair):
    return [run["verdict"] for run in pair["runs"]]


def test_ratios_between_our_stacks_are_judged_against_each_reference_run(tmp_path):
    run = load_run(tfb_run(tmp_path / "run"))
    result = tfb_reference.compare(load_points(run))
    assert result["problems"] == []
    pairs = json_pairs(result)
    # tornado / tomcat here 0.27, its interval far from 1; Round 21: tornado-py3 over servlet3-sync 0.631 and
    # over hexagon-tomcat 0.193, both below 1: the same order. Round 23 has uvicorn only: no entry.
    slower = pairs[("tornado", "tomcat")]
    assert slower["ours"]["high"] < 1
    r21 = slower["runs"][0]
    assert r21["ratio"]["low"] == pytest.approx(40639.99 / 210228.98) and r21["ratio"]["high"] == pytest.approx(
        40639.99 / 64410.64
    )
    assert verdicts(slower) == [tfb_reference.SAME, tfb_reference.SAME, tfb_reference.NOT_READ]
    # uvicorn / tomcat: a tie here (1.00 [0.95, 1.05]); in Round 21 starlette and uvicorn over servlet3-sync and
    # hexagon-tomcat run from 0.34 to 5.4: the entries disagree, so nothing is read
    tie = pairs[("uvicorn", "tomcat")]
    assert tie["ours"]["low"] < 1 < tie["ours"]["high"]
    assert tie["runs"][0]["verdict"] == tfb_reference.NOT_READ and "disagree" in tie["runs"][0]["why"]
    # uvicorn / tornado: 3.75 here, 1.77 to 8.6 in Round 21: the same order
    assert pairs[("uvicorn", "tornado")]["runs"][0]["verdict"] == tfb_reference.SAME


def test_a_reversed_order_names_what_differs_from_the_entries(tmp_path):
    reference = tmp_path / "reference"
    shutil.copytree(tfb_reference.REFERENCE_DIR, reference)
    csv = reference / "round21-citrine-edd8ab2e.csv"
    # a made-up reference in which Tornado beats both Tomcat entries
    csv.write_text(csv.read_text().replace("tornado-py3,json,40639.99", "tornado-py3,json,999999.0"))
    run = load_run(tfb_run(tmp_path / "run"))
    result = tfb_reference.compare(load_points(run), reference)
    assert json_pairs(result)[("tornado", "tomcat")]["runs"][0]["verdict"] == tfb_reference.REVERSED
    text = tfb_reference.markdown("tfb-synthetic", result)
    assert "tornado / tomcat reversed: what differs from the entries" in text and "servlet3-sync" in text


def test_a_reversal_says_what_the_measurement_here_tells_of_it(tmp_path):
    reference = tmp_path / "reference"
    shutil.copytree(tfb_reference.REFERENCE_DIR, reference)
    csv = reference / "round21-citrine-edd8ab2e.csv"
    csv.write_text(csv.read_text().replace("tornado-py3,json,40639.99", "tornado-py3,json,999999.0"))
    run_dir = tfb_run(tmp_path / "run")
    text = tfb_reference.markdown("tfb-synthetic", tfb_reference.compare(load_points(load_run(run_dir)), reference))
    assert "Which of these explains it, the measurement here cannot tell" in text  # no CPU figures: no limit
    cells = [json.loads(line) for line in (run_dir / "cells.jsonl").read_text().splitlines()]
    for cell in cells:  # every server used its one core; PostgreSQL beside it
        cell.update(server_cpus=[1], cpu_percent=97.0, db_cpu_percent=41.0)
    (run_dir / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells))
    result = tfb_reference.compare(load_points(load_run(run_dir)), reference)
    pair = json_pairs(result)[("tornado", "tomcat")]
    assert pair["limits"] == ["cores", "cores"] and pair["runs"][0]["verdict"] == tfb_reference.REVERSED
    text = tfb_reference.markdown("tfb-synthetic", result)
    assert "tornado / tomcat reversed: what differs from the entries: " in text
    assert f"Here: {tfb_reference.BOTH_AT_CORES}" in text and "cannot tell" not in text
    assert "CPU: server 97 % of its 1 core, PostgreSQL 41 %; the server used its cores fully" in text


def test_ratios_of_two_generator_ceilings_are_not_read(tmp_path):
    run_dir = tfb_run(tmp_path / "run")
    cells = [json.loads(line) for line in (run_dir / "cells.jsonl").read_text().splitlines()]
    for cell in cells:
        if cell["server"] in ("tomcat", "uvicorn"):
            cell["flags"] = ["loadgen_saturated"]
    (run_dir / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells))
    # flagged, yet still the stack's figure here: kept at its ceiling, not left out
    pair = json_pairs(tfb_reference.compare(load_points(load_run(run_dir))))[("uvicorn", "tomcat")]
    assert pair["limits"] == ["generator", "generator"]
    assert {run["why"] for run in pair["runs"] if run["ratio"]} == {
        "both at the load generator's ceiling here: a ratio of two ceilings"
    }


def test_the_report_shows_each_types_ratios_beside_the_reference_runs(tmp_path):
    run_dir = tfb_run(tmp_path / "run")
    crossbench_analysis.analyze(run_dir, charts=False)  # no gnuplot: the table and findings only
    html = (run_dir / "report.html").read_text()
    section = html[html.index('id="tfb-reference"') :]
    assert "<h3>json (/json)</h3>" in section and "tornado: best at C=64" in section
    assert "3,250 req/s [3,128, 3,376], 3 launches after the one that picked it" in section
    pair = section[section.index("<td>tornado / tomcat</td>") :].split("</tr>")[0]
    # ours with its interval, then each reference run's ratio and verdict (Round 21: tornado-py3 over the two
    # Tomcat entries, 0.193 to 0.631: the same order)
    assert "<td>0.266 [" in pair  # 3,250 / 12,199 req/s, geometric means of the launches
    assert "0.193-0.631: same order" in pair and "no entry: not read" in pair
    assert (run_dir / tfb_reference.MD_FILE).is_file()


def test_a_missing_or_torn_reference_file_is_named_and_the_rest_still_compared(tmp_path):
    reference = tmp_path / "reference"
    shutil.copytree(tfb_reference.REFERENCE_DIR, reference)
    (reference / "continuous-citrine-2023-09-19-de12400a.csv").unlink()
    torn = reference / "round23-uvicorn-91a66052.csv"
    torn.write_text(torn.read_text() + "uvicorn,db,not-a-number\n")
    shape = reference / "round21-citrine-edd8ab2e.csv"
    shape.write_text("entry,rps\nservlet3-sync,1\n")
    run = load_run(tfb_run(tmp_path / "run"))
    result = tfb_reference.compare(load_points(run), reference)
    problems = " | ".join(result["problems"])
    assert "continuous-citrine-2023-09-19-de12400a.csv is missing" in problems
    assert "round23-uvicorn-91a66052.csv line 4 is torn" in problems
    assert "round21-citrine-edd8ab2e.csv is not of the shape framework,test_type,best_rps" in problems
    assert result["types"] and "**Reference data:**" in tfb_reference.markdown("x", result)


def test_a_run_without_tfb_cells_gets_one_line_naming_the_experiment(tmp_path, capsys):
    run_dir = tfb_run(tmp_path / "run")
    cells = [json.loads(line) for line in (run_dir / "cells.jsonl").read_text().splitlines()]
    (run_dir / "cells.jsonl").write_text(
        "".join(json.dumps({**c, "endpoint": "/hello", "experiment": "x"}) + "\n" for c in cells)
    )
    assert cli.main(["tfb-reference", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert "--experiment tfb" in err and "\n" not in err


def test_the_comparison_is_written_and_quoted_by_the_findings(tmp_path):
    run_dir = tfb_run(tmp_path / "run")
    assert cli.main(["tfb-reference", str(run_dir)]) == 0
    assert "| tornado / tomcat |" in (run_dir / tfb_reference.MD_FILE).read_text()
    assert json.loads((run_dir / tfb_reference.JSON_FILE).read_text())["types"][0]["type"] == "json"
    sentences = [f.sentence for f in findings.compute(load_run(run_dir))]
    assert any(s.startswith("json against TechEmpower's published runs") and "same order" in s for s in sentences)


def test_every_stack_the_suite_runs_tfb_on_is_mapped_or_says_why_not():
    mapping, problems = tfb_reference.load_mapping(tfb_reference.REFERENCE_DIR)
    assert problems == []
    for server in ("tomcat", "tornado", "gunicorn", "uvicorn"):
        for _, key in tfb_reference.TYPES.values():
            entries, why = tfb_reference.entries_of(mapping, server, key)
            assert entries and why, (server, key)
    assert tfb_reference.entries_of(mapping, "nginx", "json")[0] == []
    assert "not an entry" in tfb_reference.entries_of(mapping, "nginx", "json")[1]


def test_every_techempower_type_of_the_endpoint_table_is_mapped():
    assert set(tfb_reference.TYPES) == set(TECHEMPOWER)


def test_a_type_with_one_stack_says_why_it_has_no_ratio_instead_of_an_empty_table(tmp_path):
    """Where every launch of the other stacks was left out (the 20-row queries of 2026-11-26's run), one stack is
    left: no ratio, so no table under the header, and a sentence saying why."""
    run = load_run(tfb_run(tmp_path / "run"))
    tomcat_only = [p for p in load_points(run) if p.get("server") == "tomcat"]
    text = tfb_reference.markdown("run", tfb_reference.compare(tomcat_only))
    section = text[text.index("## json (/json)") :]
    assert "| B / A |" not in section
    assert "No ratio to set beside TechEmpower's: tomcat alone has a best level here" in section
