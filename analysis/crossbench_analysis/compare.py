"""Compare two runs point by point: B/A of each point's figures with its 95 % interval and a verdict (faster,
slower, no difference, cannot tell) from a named test (compare_stats.py); rendered by compare_render.py.

Points match on their point_id (what was measured with which settings, everything but the repetition; rates =
"auto" points carry their share of the peak in it, so they match by share, not by absolute rate). Refuses
(CompareRefused) when the experiments differ or the runs hold different points, unless force=True, which
compares the points both hold and says what was left out.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from crossbench import points as point_data

from . import compare_stats
from .compare_stats import Verdict
from .runinfo import AnalysisError, Run, load_run

BASE_FIGURES = ("rps", "latency_ms.p99")
SEED_FIGURES = ("efficiency_ratio",)     # judged beside the headline when a point has it (seed 002's own figure)


class CompareRefused(AnalysisError):
    """The two runs are not comparable as asked (exit status 2)."""


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
        """The point's verdict: its headline figure's (one test per point keeps false alarms at the test's 5 %)."""
        return self.verdicts[self.headline]


@dataclass
class Comparison:
    run_a: Run
    run_b: Run
    rows: list[Row]
    floors: dict
    left_out_a: list[str] = field(default_factory=list)
    left_out_b: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    within: tuple[str, str] | None = None     # compare_within: the two variants of one run, A and B

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

    def method(self) -> str:
        if self.within:
            return (f"B/A of each figure's launches paired by round, 95 % interval by "
                    f"{compare_stats.stats.PAIRED_METHOD}; a change counts when its interval leaves 1 (both "
                    "variants ran in the same shuffled rounds of one run, so the drift between runs that the noise "
                    "floor stands for is not in the comparison, and the drift within the run is paired out); "
                    "fewer than 2 rounds holding both: cannot tell")
        floor_text = ", ".join(f"{k} {v:.1%}" for k, v in self.floors.items() if k != "source")
        return (f"B/A of each figure's launch values, 95 % interval by {compare_stats.stats.WELCH_METHOD}; "
                f"a change counts when its interval leaves 1 and it exceeds the noise floor ({floor_text}; "
                f"{self.floors['source']}); fewer than 2 launches on a side: cannot tell")


def launch_values(run: Run, point: dict, figure: str) -> list[float]:
    return [v for cell_id in point["cells"]
            if isinstance(v := point_data.value_at(run.cell_by_id.get(cell_id, {}), figure), (int, float))]


def label_of(point: dict) -> str:
    """The point in words: its setting, endpoint, delay, concurrency and offered rate."""
    return f"{point.get('setting') or point.get('server')} {where_of(point)}"


def where_of(point: dict) -> str:
    """The point's load in words, its server left out: endpoint, delay, concurrency and offered rate."""
    endpoint = str(point.get("endpoint") or "")
    parts = ["static" if endpoint.startswith("/static") else endpoint.rstrip("/").split("/")[-1] or
             str(point.get("group"))]
    if point.get("delay_ms"):
        parts.append(f"{point['delay_ms'] / 1000:g}s")
    parts.append(f"C{point.get('concurrency')}")
    if point.get("rate_share") is not None:
        parts.append(f"{100 * point['rate_share']:g}% of peak")
    elif point.get("rate") is not None:
        parts.append(f"{point['rate']:g} req/s")
    return " ".join(parts)


def labels(points: list[dict]) -> dict[str, str]:
    plain = {p["point_id"]: label_of(p) for p in points}
    clash = {text for text in plain.values() if list(plain.values()).count(text) > 1}
    return {pid: f"{text} [{pid}]" if text in clash else text for pid, text in plain.items()}


def matched(run_a: Run, run_b: Run, force: bool) -> tuple[list[tuple[dict, dict]], list[str], list[str], list[str]]:
    notes = []
    if run_a.experiment != run_b.experiment:
        what = f"the experiments differ: {run_a.run_id} ran {run_a.experiment!r}, {run_b.run_id} ran {run_b.experiment!r}"
        if not force:
            raise CompareRefused(f"{what}; --force compares the points both runs hold")
        notes.append(f"--force: {what}")
    points_a = {p["point_id"]: p for p in point_data.load(run_a.path)}
    points_b = {p["point_id"]: p for p in point_data.load(run_b.path)}
    only_a, only_b = sorted(set(points_a) - set(points_b)), sorted(set(points_b) - set(points_a))
    if only_a or only_b:
        what = (f"{len(only_a)} point(s) only in A ({', '.join(only_a[:3])}{', ...' if len(only_a) > 3 else ''}), "
                f"{len(only_b)} only in B ({', '.join(only_b[:3])}{', ...' if len(only_b) > 3 else ''})")
        if not force:
            raise CompareRefused(f"the points differ: {what}; --force compares the points both runs hold")
        notes.append(f"--force: compared the points both runs hold; left out {what}")
    if run_a.machine.get("cpu_model") != run_b.machine.get("cpu_model") or \
            run_a.machine.get("cores") != run_b.machine.get("cores"):
        notes.append(f"the machines differ: A {run_a.machine_line()}; B {run_b.machine_line()}")
    speeds = [run.core_speed_cv for run in (run_a, run_b)]
    if any(v is not None for v in speeds):
        a, b = (f"{v:g} %" if v is not None else "not measured" for v in speeds)
        notes.append(f"the cores' speed before each run varied by {a} (A) and {b} (B) (a fixed unit of arithmetic "
                     "timed for 2 s on each core, steal not counted); a CPU-bound figure moves with it between runs")
    pairs = [(points_a[pid], points_b[pid]) for pid in points_a if pid in points_b]
    if not pairs:
        raise CompareRefused("the two runs have no point in common")
    return pairs, only_a, only_b, notes


def judged_figures(headline: str, a: dict, b: dict) -> tuple[str, ...]:
    """The figures judged for a matched pair of points: the headline first, seed 002's own figure when both have
    it, then rps and p99."""
    seed = tuple(f for f in SEED_FIGURES if f in a["figures"] and f in b["figures"])
    return tuple(dict.fromkeys((headline, *seed, *BASE_FIGURES)))


def compare_runs(run_a: Run, run_b: Run, force: bool = False, noise_floor: float | None = None) -> Comparison:
    pairs, only_a, only_b, notes = matched(run_a, run_b, force)
    models = cpu_models(run_a, run_b)
    floor_table = compare_stats.floors(noise_floor, models)
    if noise_floor is None:
        notes += floor_elsewhere(models)
    names = labels([a for a, _ in pairs])
    rows = []
    for a, b in pairs:
        headline = a.get("headline") or "rps"
        verdicts = {}
        for figure in judged_figures(headline, a, b):
            fa, fb = a["figures"].get(figure) or {}, b["figures"].get(figure) or {}
            verdicts[figure] = compare_stats.judge(
                figure, launch_values(run_a, a, figure), launch_values(run_b, b, figure), fa.get("value"),
                fb.get("value"), compare_stats.floor_of(figure, floor_table))
        rows.append(Row(a["point_id"], names[a["point_id"]], headline, verdicts,
                        not (a.get("valid") and b.get("valid")), (a["n"], b["n"])))
    return Comparison(run_a, run_b, rows, floor_table, only_a, only_b, notes)


def cpu_models(*runs: Run) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(run.machine.get("cpu_model")) for run in runs))


def floor_elsewhere(models: tuple[str, ...]) -> list[str]:
    """A note when noise_floor.toml holds no floors measured on the runs' machine (their CPU models)."""
    if compare_stats.floor_set(models) is not None:
        return []
    fallback, *others = compare_stats.floor_machines()
    also = f" (it also holds {', '.join(others)}'s)" if others else ""
    return [f"the noise floors were measured on another machine ({fallback}){also}; these runs ran on "
            f"{', '.join(models)}, whose run-to-run drift may be wider or narrower: measure its own "
            "(aa --observe-floor, runs of one configuration) and add it to noise_floor.toml or pass it with "
            "--noise-floor, or compare two variants inside one run (--within)"]


def compare(run_a_dir: Path, run_b_dir: Path, out: Path | None = None, force: bool = False,
            charts: bool = True, noise_floor: float | None = None) -> tuple[Comparison, Path, str]:
    """Compares two run directories; writes OUT/compare.html, OUT/compare.txt and OUT/charts/compare.png|svg
    (OUT defaults to RUN_B/compare-<run id of A>). Returns (comparison, html path, text table)."""
    from . import compare_render
    run_a, run_b = load_run(run_a_dir), load_run(run_b_dir)
    cmp = compare_runs(run_a, run_b, force=force, noise_floor=noise_floor)
    out = Path(out) if out else Path(run_b_dir) / f"compare-{run_a.run_id}"
    return cmp, *compare_render.write(cmp, out, charts)
