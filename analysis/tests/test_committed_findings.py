"""Every committed findings.md under docs/results is today's: its findings.json has the summary table, each claim
(a finding's sentence, not the fold that says how it was computed) is at most 300 characters, the Markdown is what
today's findings render from that findings.json, and its tables fit 100 columns."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from crossbench_analysis.findings import findings
from crossbench_analysis.report import tables

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
WRITTEN = sorted(RESULTS.glob("**/findings.json"))
CLAIM_CHARS = 300


def name(path: Path) -> str:
    return str(path.parent.relative_to(RESULTS))


def test_the_references_have_findings():
    assert len(WRITTEN) > 20 and any("quick-aa" in name(p) for p in WRITTEN)


@pytest.mark.parametrize("written", WRITTEN, ids=name)
def test_a_committed_findings_json_is_todays_format_with_short_claims(written):
    said = json.loads(written.read_text())
    assert "keys" in (said.get("summary") or {}), (
        f"{name(written)}: findings of the format before the summary table; "
        f"python -m crossbench_analysis findings {written.parent}"
    )
    long = [r["sentence"] for r in said["findings"] if len(r["sentence"]) > CLAIM_CHARS]
    assert not long, f"{name(written)}: {len(long)} claims over {CLAIM_CHARS} characters, the first: {long[0]}"


@pytest.mark.parametrize("written", WRITTEN, ids=name)
def test_a_committed_findings_md_is_what_its_findings_json_renders_today(written):
    said = json.loads(written.read_text())
    run = SimpleNamespace(run_id=said["run_id"])
    md = (written.parent / findings.FILE_MD).read_text()
    assert md == findings.markdown(run, said["findings"], said["summary"]), (
        f"{name(written)}: findings.md is stale; python -m crossbench_analysis findings {written.parent}"
    )
    wide = [line for line in md.splitlines() if line.startswith("|") and len(line) > tables.WIDTH]
    assert not wide, f"{name(written)}: a table row of {len(wide[0])} columns: {wide[0]}"
