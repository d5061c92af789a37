"""Our TechEmpower figures beside TechEmpower's published ones (analysis/reference/techempower/): per test type,
each stack at its best level, the ratio between every two stacks with its 95 % interval (Welch's t on the logs of
the best levels' launches), the same ratio in each reference run between the entries mapping.toml names for them,
and a verdict: same order, reversed, within our noise, or not read (our figure at a ceiling, the reference
entries disagreeing among themselves, no entry). Computed, never typed: `./analysis/tfb_reference.sh RUN` writes
tfb-reference.md and tfb-reference.json into the run directory, and the tfb findings quote it.

Ratios, not throughput: TechEmpower's machines had 14 to 56 cores and their own load generator machine; ours has
the server on one core and wrk on another, so a figure at the generator's ceiling compares nothing, and a server
at its core's limit compares per-core throughput where TechEmpower compared whole machines."""

from __future__ import annotations

import csv
import itertools
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from crossbench.figures.points import GENERATOR_CEILING as SATURATED
from crossbench.figures.points import may_be_best
from crossbench_analysis.charts.tfb import is_tfb
from crossbench_analysis.read.runinfo import offered_rate

from .finding import comparison, confirmed_best_levels, figure, load_points, ratio_text, sig, split, value

REFERENCE_DIR = Path(__file__).resolve().parents[2] / "reference" / "techempower"
MAPPING = "mapping.toml"
# (name, file): the reference runs, oldest first (their README says what each is)
RUNS = (
    ("Round 21 (official run edd8ab2e, 2022)", "round21-citrine-edd8ab2e.csv"),
    ("continuous run de12400a (2023, before Round 22)", "continuous-citrine-2023-09-19-de12400a.csv"),
    ("Round 23 (run 91a66052, 2025; uvicorn only)", "round23-uvicorn-91a66052.csv"),
)
COLUMNS = ["framework", "test_type", "best_rps", "concurrency_or_level", "source"]
# our endpoint -> (TechEmpower's test type, mapping.toml's key)
TYPES = {
    "/json": ("json", "json"),
    "/plaintext": ("plaintext", "plaintext"),
    "/db": ("db", "db"),
    "/queries": ("query", "queries"),
    "/fortunes": ("fortune", "fortunes"),
    "/updates": ("update", "updates"),
}
REFERENCE_QUERIES = 20  # the query and update rows are TechEmpower's 20-queries sample
CPU_BOUND_SHARE = 0.9  # a server using this share of its cores is at their limit
JSON_FILE, MD_FILE = "tfb-reference.json", "tfb-reference.md"
NO_TFB = "has no cells of TechEmpower's types: run ./runner/run_all.sh --experiment tfb (or tfb-quick) first"
SAME, REVERSED, NOISE, NOT_READ = "same order", "reversed", "within our noise", "not read"


class NoTfbCells(ValueError):
    """A run without cells of TechEmpower's types asked for the comparison."""


@dataclass
class Reference:
    """One reference run: best requests/s by (entry, test type), and what was wrong with its file, if anything."""

    name: str
    file: str
    rps: dict = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def load_run(directory: Path, name: str, file: str) -> Reference:
    """A reference CSV; a missing file, another shape or a torn row is said in `problems`, the rest kept."""
    ref = Reference(name, file)
    path = directory / file
    if not path.is_file():
        ref.problems.append(f"{file} is missing from {directory}")
        return ref
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows or rows[0] != COLUMNS:
        ref.problems.append(
            f"{file} is not of the shape {','.join(COLUMNS)} (its header: {','.join(rows[0]) if rows else 'none'})"
        )
        return ref
    for number, row in enumerate(rows[1:], 2):
        try:
            ref.rps[(row[0], row[1])] = float(row[2])
        except (IndexError, ValueError):
            ref.problems.append(f"{file} line {number} is torn or not a number: {','.join(row)[:80]!r}")
    return ref


def load_mapping(directory: Path) -> tuple[dict, list[str]]:
    path = directory / MAPPING
    try:
        return tomllib.loads(path.read_text()), []
    except FileNotFoundError:
        return {}, [f"{MAPPING} is missing from {directory}: no stack is mapped to an entry"]
    except tomllib.TOMLDecodeError as e:
        return {}, [f"{MAPPING} cannot be read ({e}): no stack is mapped to an entry"]


def best_levels(points: list[dict]) -> tuple[dict, list[dict]]:
    """{test type: {server: its best point}} over the run's valid TechEmpower points, and those at the load
    generator's ceiling (queries and updates: the 20-rows groups where the run has them, as the reference rows
    are), and the left-out launches."""
    tfb = [p for p in points if p["records"] and is_tfb(p["records"][0]) and not offered_rate(p)]
    _, left = split(tfb)
    # a point at the generator's ceiling is still the stack's figure here: kept, and said (`ceiling`)
    good = [p for p in tfb if may_be_best(p)]
    left = [out for out in left if SATURATED not in out["reason"]]
    best: dict[str, dict[str, dict]] = {}
    for endpoint, (te_type, _) in TYPES.items():
        here = [p for p in good if p.get("endpoint") == endpoint and value(p, "rps") is not None]
        rows = {queries(p) for p in here}
        if REFERENCE_QUERIES in rows:
            here = [p for p in here if queries(p) == REFERENCE_QUERIES]
        if here:
            best[te_type] = confirmed_best_levels(here, lambda p: str(p.get("server")))
    return best, left


def queries(point: dict) -> int | None:
    options = point.get("options") or {}
    return options.get("queries") if point.get("endpoint") in ("/queries", "/updates") else None


def ceiling(point: dict) -> str | None:
    """What limits our figure besides the stack: the load generator, or the server's cores (None: neither)."""
    if any(SATURATED in (r.get("flags") or ()) for r in point["records"]):
        return "generator"
    cores = len(point.get("server_cpus") or ()) or None
    cpu = value(point, "cpu_percent")
    if cores and cpu is not None and cpu >= CPU_BOUND_SHARE * 100 * cores:
        return "cores"
    return None


def entries_of(mapping: dict, server: str, key: str) -> tuple[list[str], str]:
    """(entries, why) of one stack and type; ([], the reason) where the mapping names none."""
    section = mapping.get(server) or {}
    found = section.get(key)
    if isinstance(found, dict) and found.get("entries"):
        return list(found["entries"]), str(found.get("differs", ""))
    return [], str(section.get("none") or (found or {}).get("none", "") or f"no entry mapped for {server} {key}")


def reference_ratio(ref: Reference, te_type: str, entries_a: list[str], entries_b: list[str]) -> dict | None:
    """B / A in one reference run over every pair of their entries: {low, high, pairs}; None without both."""
    pairs = [
        (a, b, ref.rps[(b, te_type)] / ref.rps[(a, te_type)])
        for a in entries_a
        for b in entries_b
        if (a, te_type) in ref.rps and (b, te_type) in ref.rps
    ]
    if not pairs:
        return None
    ratios = [r for _, _, r in pairs]
    return {"low": min(ratios), "high": max(ratios), "pairs": [f"{b}/{a} {sig(r)}" for a, b, r in pairs]}


def verdict(ours: dict, theirs: dict | None, limits: tuple[str | None, str | None]) -> tuple[str, str]:
    """(verdict, why) of one pair in one reference run."""
    if theirs is None:
        return NOT_READ, "no entry of this run for both stacks"
    if limits == ("generator", "generator"):
        return NOT_READ, "both at the load generator's ceiling here: a ratio of two ceilings"
    if ours["low"] is None:
        return NOT_READ, "indicative here: fewer than three launches at a best level"
    if theirs["low"] < 1 < theirs["high"]:
        return NOT_READ, "the reference entries disagree among themselves"
    if ours["low"] <= 1 <= ours["high"]:
        return NOISE, "our interval holds 1"
    return (SAME, "") if (ours["ratio"] > 1) == (theirs["low"] > 1) else (REVERSED, "")


def compare(points: list[dict], directory: Path = REFERENCE_DIR) -> dict:
    """The comparison as tfb-reference.json holds it: per test type our best levels and every pair's ratios and
    verdicts, plus the reference files' problems. NoTfbCells for a run without TechEmpower cells."""
    best, left = best_levels(points)
    if not best:
        raise NoTfbCells(NO_TFB)
    refs = [load_run(directory, name, file) for name, file in RUNS]
    mapping, problems = load_mapping(directory)
    problems += [p for ref in refs for p in ref.problems]
    types = []
    for endpoint, (te_type, key) in TYPES.items():
        stacks = best.get(te_type)
        if not stacks:
            continue
        levels = {server: level(p) for server, p in stacks.items()}
        pairs = [
            pair(stacks[a], stacks[b], te_type, key, refs, mapping)
            for a, b in itertools.combinations(sorted(stacks), 2)
        ]
        types.append({"type": te_type, "endpoint": endpoint, "levels": levels, "pairs": pairs})
    return {
        "types": types,
        "problems": problems,
        "left_out": left,
        "references": [{"name": r.name, "file": r.file} for r in refs],
    }


def level(point: dict) -> dict:
    """A stack's best level: its throughput with the interval, and where its CPU went (the server's tree and the
    run's PostgreSQL, in % of a core, means over the launches), which says what set the figure here."""
    found = figure(point, "rps") or {}
    return {
        "point_id": point["point_id"],
        "concurrency": point.get("concurrency"),
        "rps": found.get("value"),
        "low": found.get("ci95_low"),
        "high": found.get("ci95_high"),
        "n": point["n"],
        "picked_by": point.get("picked_by"),
        "processes": point.get("processes"),
        "ceiling": ceiling(point),
        "cores": len(point.get("server_cpus") or ()) or None,
        "cpu_percent": value(point, "cpu_percent"),
        "db_cpu_percent": value(point, "db_cpu_percent"),
    }


def pair(a: dict, b: dict, te_type: str, key: str, refs: list[Reference], mapping: dict) -> dict:
    server_a, server_b = str(a.get("server")), str(b.get("server"))
    test = comparison(a, b, "rps")
    ours = {
        "ratio": test.ratio if test else value(b, "rps") / value(a, "rps"),
        "low": test.low if test else None,
        "high": test.high if test else None,
        "text": ratio_text(test) if test else f"{sig(value(b, 'rps') / value(a, 'rps'))} (indicative)",
    }
    entries_a, why_a = entries_of(mapping, server_a, key)
    entries_b, why_b = entries_of(mapping, server_b, key)
    limits = (ceiling(a), ceiling(b))
    runs = []
    for ref in refs:
        theirs = reference_ratio(ref, te_type, entries_a, entries_b)
        said, why = verdict(ours, theirs, limits)
        runs.append({"reference": ref.name, "ratio": theirs, "verdict": said, "why": why})
    return {
        "a": server_a,
        "b": server_b,
        "ours": ours,
        "limits": list(limits),
        "runs": runs,
        "entries": {server_a: entries_a, server_b: entries_b},
        "differs": {server_a: why_a, server_b: why_b},
    }


LIMIT_WORDS = {"generator": "wrk on one core was saturated", "cores": "the server used its cores fully"}
BOTH_AT_CORES = (
    "both used their cores fully, so ours compares the CPU a request costs each stack; "
    "TechEmpower's compared whole machines of many cores, where a stack's worker model decides how much "
    "of that it turns into throughput"
)


def cpu_words(lv: dict) -> str:
    """ "CPU: server 97 % of its 1 core, PostgreSQL 41 %" of a best level ('' without the figures)."""
    if lv.get("cpu_percent") is None:
        return ""
    cores = lv.get("cores")
    where = f" of its {cores} core{'s' * (cores != 1)}" if cores else ""
    db = f", PostgreSQL {sig(lv['db_cpu_percent'], 2)} %" if lv.get("db_cpu_percent") is not None else ""
    return f"; CPU: server {sig(lv['cpu_percent'], 2)} %{where}{db}"


def reversal_words(each: dict) -> str:
    """A reversed pair: what differs from the entries, and what the measurement here says about it."""
    said = "; ".join(f"{s}: {words}" for s, words in each["differs"].items())
    if each["limits"] == ["cores", "cores"]:
        return f"{said}. Here: {BOTH_AT_CORES}"
    return f"{said}. Which of these explains it, the measurement here cannot tell"


INTRO = (
    "Ratios between stacks at each one's best level: ours with their 95 % interval over the best levels' "
    "launches, TechEmpower's between the entries `analysis/reference/techempower/mapping.toml` names "
    "(a range where two entries bracket a stack). Computed by crossbench_analysis/findings/tfb_reference.py."
)


def tables(result: dict) -> dict:
    """The comparison as a reader sees it, for tfb-reference.md and the report alike: the reference runs' names,
    the reference files' problems, and per test type its best levels, one row a pair (B / A, ours, then one cell
    a reference run) and what each reversal says."""
    return {
        "intro": INTRO,
        "references": [ref["name"] for ref in result["references"]],
        "problems": list(result["problems"]),
        "types": [
            {
                "title": f"{t['type']} ({t['endpoint']})",
                "levels": [level_words(server, lv) for server, lv in t["levels"].items()],
                "rows": [
                    [f"{each['b']} / {each['a']}", each["ours"]["text"], *(run_words(run) for run in each["runs"])]
                    for each in t["pairs"]
                ],
                "alone": "" if t["pairs"] else alone_words(t),
                "reversals": [
                    f"{each['b']} / {each['a']} reversed: what differs from the entries: {reversal_words(each)}"
                    for each in t["pairs"]
                    if any(run["verdict"] == REVERSED for run in each["runs"])
                ],
            }
            for t in result["types"]
        ],
    }


def alone_words(t: dict) -> str:
    """A type where one stack alone has a best level its flags let count: no ratio, and why, in place of a table."""
    only = ", ".join(sorted(t["levels"]))
    return (
        f"No ratio to set beside TechEmpower's: {only} alone has a best level here; every launch of the other "
        "stacks was left out (the run's findings say why)."
    )


def level_words(server: str, lv: dict) -> str:
    shown = f"{sig(lv['rps'])} req/s" + (f" [{sig(lv['low'])}, {sig(lv['high'])}]" if lv["low"] else "")
    limit = f"; {LIMIT_WORDS[lv['ceiling']]}" if lv["ceiling"] else ""
    workers = f", {lv['processes']} processes" if (lv.get("processes") or 1) > 1 else ""
    launches = f"{lv['n']} launch{'es' * (lv['n'] != 1)}" + (
        " after the one that picked it" if lv.get("picked_by") else " (the one that picked it: reads high)"
    )
    return f"{server}: best at C={lv['concurrency']}{workers}, {shown}, {launches}{cpu_words(lv)}{limit}"


def run_words(run: dict) -> str:
    """One reference run's cell of a pair: its ratio (a range where entries bracket a stack) and verdict."""
    ratio = run["ratio"]
    shown = (
        "no entry"
        if ratio is None
        else (sig(ratio["low"]) if ratio["low"] == ratio["high"] else f"{sig(ratio['low'])}-{sig(ratio['high'])}")
    )
    return f"{shown}: {run['verdict']}" + (f" ({run['why']})" if run["why"] else "")


def markdown(run_id: str, result: dict) -> str:
    shown = tables(result)
    lines = [f"# TechEmpower's published figures beside run {run_id}", "", shown["intro"], ""]
    lines += [f"**Reference data:** {problem}." for problem in shown["problems"]]
    for t in shown["types"]:
        lines += ["", f"## {t['title']}", ""] + [f"- {words}" for words in t["levels"]]
        if not t["rows"]:
            lines += ["", t["alone"]]
            continue
        lines += [
            "",
            "| B / A | ours | " + " | ".join(shown["references"]) + " |",
            "|---|---|" + "---|" * len(shown["references"]),
        ]
        lines += ["| " + " | ".join(row) + " |" for row in t["rows"]]
        lines += [""] * bool(t["reversals"]) + [f"- {words}" for words in t["reversals"]]
    return "\n".join(lines).rstrip() + "\n"


def write(run_dir: Path, run_id: str, points: list[dict], directory: Path = REFERENCE_DIR) -> dict:
    """tfb-reference.json and tfb-reference.md in the run directory; NoTfbCells for a run without tfb cells."""
    result = compare(points, directory)
    (run_dir / JSON_FILE).write_text(json.dumps(result, indent=1, default=str) + "\n")
    (run_dir / MD_FILE).write_text(markdown(run_id, result))
    return result


def write_for(run) -> dict | None:
    """The analysis pipeline's call: the comparison's files for a run with TechEmpower cells, else nothing."""
    try:
        return write(run.path, run.run_id, load_points(run))
    except NoTfbCells:
        return None


def counts(result: dict) -> dict[str, dict[str, int]]:
    """{test type: {verdict: how many pairs x reference runs}} for the findings' one line a type."""
    out: dict[str, dict[str, int]] = {}
    for t in result["types"]:
        for each in t["pairs"]:
            for run in each["runs"]:
                if run["ratio"] is not None:
                    out.setdefault(t["type"], {}).setdefault(run["verdict"], 0)
                    out[t["type"]][run["verdict"]] += 1
    return out
