"""Compare two runs point by point: B/A of each point's figures with its 95 % interval and a verdict (faster,
slower, same within the margin, inconclusive, cannot tell, no value) from a named test (compare_stats.py), the
headline verdicts held to a false discovery rate across the points; rendered by compare_render.py.

Points match on their point_id (what was measured with which settings, everything but the repetition; rates =
"auto" points carry their share of the peak in it, so they match by share, not by absolute rate). Refuses
(CompareRefused) when the experiments differ or the runs hold different points, naming what differs and the
points it could not pair, unless force=True, which compares the points both hold and says what was left out.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from crossbench.figures import points as point_data
from crossbench_analysis.read.runinfo import AnalysisError, Run, load_run
from crossbench_analysis.read.setting import label_of

from . import compare_render, compare_stats, machine_check
from .comparison import Comparison, Row

BASE_FIGURES = ("rps", "latency_ms.p99")
# Not judged: the seed's efficiency ratio, (C / rps) / delay, counts the answers its window happens to hold, so it
# reads about 5 % high at C=1 in a 5 s window (1.055 against a latency ratio of 1.008) and that bias moves with the
# window's length: a derived figure, shown in the points and the report, that feeds no verdict. A delayed point's
# headline is the latency ratio (mean latency / delay), which has no window edge.


class CompareRefused(AnalysisError):
    """The two runs are not comparable as asked (exit status 2)."""


def launch_values(run: Run, point: dict, figure: str) -> list[float]:
    return [
        v
        for cell_id in point["cells"]
        if isinstance(v := point_data.value_at(run.cell_by_id.get(cell_id, {}), figure), (int, float))
    ]


def labels(points: list[dict]) -> dict[str, str]:
    plain = {p["point_id"]: label_of(p) for p in points}
    clash = {text for text in plain.values() if list(plain.values()).count(text) > 1}
    return {pid: f"{text} [{pid}]" if text in clash else text for pid, text in plain.items()}


def listed(point_ids: list[str], shown: int = 8) -> str:
    more = f", and {len(point_ids) - shown} more" if len(point_ids) > shown else ""
    return ", ".join(point_ids[:shown]) + more


def mismatches(run_a: Run, run_b: Run, only_a: list[str], only_b: list[str]) -> list[str]:
    """What does not match between the two runs, in words: the experiments, the machines, the points."""
    found = []
    if run_a.experiment != run_b.experiment:
        found.append(
            f"the experiments differ: A ({run_a.run_id}) ran {run_a.experiment!r}, B ({run_b.run_id}) "
            f"ran {run_b.experiment!r}"
        )
    if run_a.machine.get("cpu_model") != run_b.machine.get("cpu_model") or run_a.machine.get(
        "cores"
    ) != run_b.machine.get("cores"):
        found.append(f"the machines differ: A {run_a.machine_line()}; B {run_b.machine_line()}")
    if only_a or only_b:
        found.append(
            f"the points differ: {len(only_a)} point(s) only in A could not be paired"
            f"{': ' + listed(only_a) if only_a else ''}; {len(only_b)} only in B"
            f"{': ' + listed(only_b) if only_b else ''}"
        )
    return found


def generators_differ(pairs: list[tuple[dict, dict]]) -> list[str]:
    """A note when paired points were measured by different load generators (the quick profile held its windows
    with oha until it moved to vegeta): the instrument changed with whatever else did."""
    differing = sorted({(a.get("loadgen"), b.get("loadgen")) for a, b in pairs if a.get("loadgen") != b.get("loadgen")})
    if not differing:
        return []
    count = sum(1 for a, b in pairs if a.get("loadgen") != b.get("loadgen"))
    which = ", ".join(f"{a} in A, {b} in B" for a, b in differing)
    return [f"the load generators differ on {count} of {len(pairs)} pair(s) ({which}): a change is theirs too"]


def matched(run_a: Run, run_b: Run, force: bool) -> tuple[list[tuple[dict, dict]], list[str], list[str], list[str]]:
    """The pairs of points both runs hold, what each holds alone, and the notes. Refused, naming every mismatch,
    when the experiments or the points differ and force is off; different machines are noted, not refused (the
    machine is often what is compared), and the run-to-run spread then comes from neither's."""
    points_a = {p["point_id"]: p for p in point_data.load(run_a.path)}
    points_b = {p["point_id"]: p for p in point_data.load(run_b.path)}
    only_a, only_b = sorted(set(points_a) - set(points_b)), sorted(set(points_b) - set(points_a))
    found = mismatches(run_a, run_b, only_a, only_b)
    pairs = [(points_a[pid], points_b[pid]) for pid in points_a if pid in points_b]
    refusing = [m for m in found if not m.startswith("the machines")]
    if refusing and not force:
        raise CompareRefused(f"{'; '.join(found)}; --force compares the {len(pairs)} point(s) both runs hold")
    if not pairs:
        raise CompareRefused(f"the two runs have no point in common{': ' + '; '.join(found) if found else ''}")
    notes = [f"--force: {m}" if m in refusing else m for m in found] + generators_differ(pairs)
    speeds = [run.core_speed_cv for run in (run_a, run_b)]
    if any(v is not None for v in speeds):
        a, b = (f"{v:g} %" if v is not None else "not measured" for v in speeds)
        notes.append(
            f"the cores' speed before each run varied by {a} (A) and {b} (B) (a fixed unit of arithmetic "
            "timed for 2 s on each core, steal not counted); a CPU-bound figure moves with it between runs"
        )
    return pairs, only_a, only_b, notes


def judged_figures(headline: str, a: dict, b: dict) -> tuple[str, ...]:
    """The figures judged for a matched pair of points: the headline first, then rps and p99 (never the seed's
    efficiency ratio: see above)."""
    return tuple(dict.fromkeys((headline, *BASE_FIGURES)))


def checked_margin(margin: float) -> float:
    """The equivalence margin, a share in (0, 1): 0.05 is 5 %."""
    if not 0 < margin < 1:
        raise CompareRefused(f"--margin {margin:g}: the margin is a share between 0 and 1 (0.05 is 5 %)")
    return margin


def compare_runs(
    run_a: Run,
    run_b: Run,
    force: bool = False,
    run_sd: float | None = None,
    margin: float = compare_stats.DEFAULT_MARGIN,
    spreads: dict | None = None,
) -> Comparison:
    """The two runs' matched points judged; run_sd overrides noise_floor.toml's run-to-run spread (on logs) for
    every figure, spreads (aa --observe-floor's output, measured on other runs) per kind and figure."""
    margin = checked_margin(margin)
    pairs, only_a, only_b, notes = matched(run_a, run_b, force)
    machines = machines_of(run_a, run_b)
    table = compare_stats.observed_table(spreads) if spreads else compare_stats.run_sds(run_sd, machines)
    if run_sd is None and not spreads:
        notes += floor_elsewhere(machines) + floor_unmeasured(table)
    if run_sd is None:
        table, said = machine_checked(table, run_a, run_b)
        notes += said
    names = labels([a for a, _ in pairs])
    rows = []
    for a, b in pairs:
        headline = a.get("headline") or "rps"
        verdicts = {}
        for figure in judged_figures(headline, a, b):
            fa, fb = a["figures"].get(figure) or {}, b["figures"].get(figure) or {}
            verdicts[figure] = compare_stats.judge(
                figure,
                launch_values(run_a, a, figure),
                launch_values(run_b, b, figure),
                fa.get("value"),
                fb.get("value"),
                compare_stats.run_sd_of(figure, compare_stats.kind_of(a), table, a.get("server")),
                margin,
                table.get("run_df"),
                compare_stats.kind_of(a),
            )
        rows.append(
            Row(
                a["point_id"],
                names[a["point_id"]],
                headline,
                verdicts,
                not (a.get("valid") and b.get("valid")),
                (a["n"], b["n"]),
            )
        )
    rows = fdr_controlled(rows)
    return Comparison(run_a, run_b, rows, table, margin, only_a, only_b, notes + launch_more(rows))


def machine_checked(table: dict, run_a: Run, run_b: Run) -> tuple[dict, list[str]]:
    """The spreads in force once the runs' core speed readings are held against the model's range
    (machine_check.py): widened with a note, or refused in one line."""
    readings = {
        f"{side} ({run.run_id})": machine_check.core_speed_ms(run.metadata)
        for side, run in (("A", run_a), ("B", run_b))
    }
    try:
        return machine_check.checked(table, readings)
    except machine_check.MachineDiffers as e:
        raise CompareRefused(str(e)) from None


def fdr_controlled(rows: list[Row]) -> list[Row]:
    """The rows with their headline verdicts held to the false discovery rate across the points."""
    headlines = compare_stats.controlled([row.verdict for row in rows])
    return [replace(row, verdicts={**row.verdicts, row.headline: verdict}) for row, verdict in zip(rows, headlines)]


def launch_more(rows: list[Row]) -> list[str]:
    """A note when points could not be told for want of launches: what to run instead."""
    few = sum(row.verdict.word == compare_stats.CANNOT_TELL and "fewer than" in row.verdict.why for row in rows)
    if not few:
        return []
    need = compare_stats.stats.MIN_LAUNCHES
    return [
        f"{few} of {len(rows)} point(s) have fewer than {need} launches on a side (or rounds holding both): "
        f"cannot tell; launch more (--repetitions {need} or more) to compare them"
    ]


def machine_of(run: Run) -> str:
    """A run's machine as noise_floor.toml names it: its CPU model and cores ('AMD EPYC, 2 cores')."""
    return run.machine_name


def machines_of(*runs: Run) -> tuple[str, ...]:
    return tuple(dict.fromkeys(machine_of(run) for run in runs))


def floor_elsewhere(machines: tuple[str, ...]) -> list[str]:
    """A note when noise_floor.toml holds no run-to-run spread measured on the runs' machine."""
    if compare_stats.floor_set(machines) is not None:
        return []
    held = ", ".join(compare_stats.floor_machines()) or "none"
    return [
        f"no run-to-run spread was measured on {', '.join(machines)} (noise_floor.toml holds {held}): compare "
        f"uses the conservative default {compare_stats.pct(compare_stats.floor_file()['unmeasured'])} for every "
        "figure, never another machine's; measure this machine's own (aa --observe-floor over runs hours "
        "apart) and add it to noise_floor.toml, pass one with --noise-floor, or compare two variants inside "
        "one run (--within)"
    ]


def floor_unmeasured(table: dict) -> list[str]:
    if table["measured"] or "conservative default" in table["source"]:
        return []
    return [
        "the run-to-run spread in force was converted from an older, threshold-style floor, not measured as "
        "a spread: re-measure it (aa --observe-floor) before trusting a same or a change between runs"
    ]


def compare(
    run_a_dir: Path,
    run_b_dir: Path,
    out: Path | None = None,
    force: bool = False,
    charts: bool = True,
    noise_floor: float | None = None,
    margin: float = compare_stats.DEFAULT_MARGIN,
    run_sd: float | None = None,
) -> tuple[Comparison, Path, str]:
    """Compares two run directories; writes OUT/compare.html, OUT/compare.txt and OUT/charts/compare.png|svg
    (OUT defaults to RUN_B/compare-<run id of A>). Returns (comparison, html path, text table). run_sd (or its
    older name noise_floor, --noise-floor) overrides the run-to-run spread sigma_run, on logs, for every figure;
    margin is the equivalence margin (--margin)."""
    run_a, run_b = load_run(run_a_dir), load_run(run_b_dir)
    cmp = compare_runs(run_a, run_b, force=force, run_sd=noise_floor if run_sd is None else run_sd, margin=margin)
    out = Path(out) if out else Path(run_b_dir) / f"compare-{run_a.run_id}"
    return cmp, *compare_render.write(cmp, out, charts)
