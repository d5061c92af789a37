"""Every figure of the README's measured section traces to a committed reference result: the section is what
crossbench_analysis.reference renders from docs/results, and this fails when the two disagree (a figure typed by
hand, a result changed without the README)."""
from pathlib import Path

from crossbench_analysis import reference

REPO = Path(__file__).resolve().parents[2]


def test_the_readme_states_what_its_reference_results_say():
    assert reference.update(REPO / "README.md", REPO / "docs" / "results", check=True), \
        "README.md's measured section is stale: python -m crossbench_analysis reference"


def test_a_figure_typed_by_hand_is_caught(tmp_path):
    readme = tmp_path / "README.md"
    text = (REPO / "README.md").read_text()
    start = text.index(reference.MEASURED_BEGIN)
    readme.write_text(text[:start] + text[start:].replace(" launches in all", " launches in all (about)", 1))
    assert not reference.update(readme, REPO / "docs" / "results", check=True)
    assert reference.update(readme, REPO / "docs" / "results") and \
        reference.update(readme, REPO / "docs" / "results", check=True)
