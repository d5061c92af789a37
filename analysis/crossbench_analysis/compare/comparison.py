"""What a comparison holds, whichever way its two sides were found (two runs, compare.py; two variants inside one
run, compare_within.py) and however it is shown (compare_render.py): a Row per point, with its verdicts, and the
Comparison that gathers them with the run-to-run spread and the margin in force."""

from __future__ import annotations

from dataclasses import dataclass, field

from crossbench_analysis.read.runinfo import Run

from . import compare_stats
from .compare_stats import Verdict


@dataclass
class Row:
    point_id: str
    label: str
    headline: str
    verdicts: dict[str, Verdict]
    flagged: bool
    launches: tuple[int, int]

    @property
    def verdict(self) -> Verdict:
        """The point's verdict: its headline figure's, the one held to the false discovery rate across points."""
        return self.verdicts[self.headline]


@dataclass
class Comparison:
    run_a: Run
    run_b: Run
    rows: list[Row]
    run_sd: dict  # compare_stats.run_sds: the run-to-run spreads in force
    margin: float = compare_stats.DEFAULT_MARGIN
    left_out_a: list[str] = field(default_factory=list)
    left_out_b: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    within: tuple[str, str] | None = None  # compare_within: the two variants of one run, A and B

    @property
    def sides(self) -> tuple[str, str]:
        """A and B in words: two runs, or two variants inside one run."""
        if self.within:
            return tuple(f"{variant} in run {self.run_a.run_id}" for variant in self.within)
        return f"run {self.run_a.run_id}", f"run {self.run_b.run_id}"

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for row in self.rows:
            found[row.verdict.word] = found.get(row.verdict.word, 0) + 1
        return found

    def called_changed(self) -> int:
        return sum(row.verdict.changed for row in self.rows)

    def expected_false(self) -> str:
        """How many of the changes and sames said to expect to be false: Benjamini-Hochberg on p values against
        the margin keeps the expected share of false ones among those said at or below q in each family."""
        called, q = self.called_changed(), compare_stats.FDR_Q
        same = sum(row.verdict.word == compare_stats.SAME for row in self.rows)
        return (
            f"{called} point(s) called faster or slower and {same} same after Benjamini-Hochberg at q = {q:g} "
            f"(p values against the {compare_stats.pct(self.margin)} margin) over "
            f"{sum(row.verdict.test is not None for row in self.rows)} tested: expect at most "
            f"{q * called:.2g} false changes and {q * same:.2g} false sames"
        )

    def method(self) -> str:
        m = compare_stats.pct(self.margin)
        verdicts = (
            f"faster or slower when the whole 95 % interval lies beyond +-{m} (symmetric on logs: B/A above "
            f"{1 + self.margin:.4g} or below 1/{1 + self.margin:.4g}); same within {m} when the 90 % "
            f"interval lies inside it (TOST, two one-sided tests at 5 %); inconclusive otherwise; a "
            f"headline change or same must also pass Benjamini-Hochberg at q = {compare_stats.FDR_Q:g} "
            f"across the points, on p values against the margin; fewer than {compare_stats.stats.MIN_LAUNCHES} launches on a side, or tied launches: "
            "cannot tell"
        )
        if self.within:
            return (
                f"B/A of each figure's launches paired by round, intervals by "
                f"{compare_stats.stats.PAIRED_METHOD}, no run-to-run variance (both variants ran in the same "
                f"shuffled rounds of one run, and the drift within it is paired out); {verdicts}"
            )
        return (
            f"B/A of each figure's launch values, intervals by Welch's t on log values with the run-to-run "
            "variance added (se^2 = s_a^2/n_a + s_b^2/n_b + 2 sigma_run^2; sigma_run "
            f"{compare_stats.run_sd_text(self.run_sd)}); {verdicts}"
        )
