"""Every figure of the measured sections of the README and docs/ traces to a committed reference result: each section
is what crossbench_analysis.report.reference renders from docs/results, and this fails when the two disagree (a figure
typed by hand, a result changed without its document)."""
from pathlib import Path

from crossbench_analysis.report import reference

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"


def test_the_docs_state_what_their_reference_results_say():
    assert reference.update_all(REPO, RESULTS, check=True) == [], \
        "a measured section is stale: python -m crossbench_analysis reference"


def test_every_reference_set_is_rendered_somewhere():
    text = "".join(doc.read_text() for doc in reference.documents(REPO) if doc.is_file())
    assert reference.MEASURED_BEGIN in text
    for folder in RESULTS.iterdir():
        if (folder / "runs").is_dir() and folder.name not in ("quick-aa", "quick-disturbed"):
            assert reference.run_begin(folder.name) in text, f"docs/results/{folder.name} is rendered nowhere"


def test_a_figure_typed_by_hand_is_caught(tmp_path):
    [source] = [doc for doc in reference.documents(REPO) if doc.is_file() and reference.MEASURED_BEGIN in
                doc.read_text()]
    doc = tmp_path / "doc.md"
    text = source.read_text()
    start = text.index(reference.MEASURED_BEGIN)
    doc.write_text(text[:start] + text[start:].replace(" launches in all", " launches in all (about)", 1))
    assert not reference.update(doc, RESULTS, check=True)
    assert reference.update(doc, RESULTS) and reference.update(doc, RESULTS, check=True)
