"""The README's first screen, produced from committed reference runs like every other measured section: the answer
the seed002 reference gives (where Tomcat's pool bends, the ratios at 1,000 clients, Tornado's event loop beside
it) and what a quick run printed at its end (the summary table and the findings, as the terminal shows them)."""

from __future__ import annotations

import json
from pathlib import Path

from crossbench.figures import points

from ..judge import hinge, knees
from . import tables

ANSWER_BEGIN = "<!-- measured answer: produced by `python -m crossbench_analysis reference`; do not edit by hand -->"
ANSWER_END = "<!-- measured answer: end -->"
QUICK_BEGIN = (
    "<!-- measured quick-output: produced by `python -m crossbench_analysis reference`; do not edit by hand -->"
)
QUICK_END = "<!-- measured quick-output: end -->"
ANSWER_SET = "seed002"  # the reference set the answer is read from
QUICK_SET = "quick"  # the reference set whose newest run's terminal output the README shows
TOP_C = 1000
KNEE_DELAY_MS = 1000  # the delay whose sweep places the knee in the answer
FINDINGS_FILE = "findings.json"


def read_json(path: Path):
    return json.loads(path.read_text())


def run_points(results: Path, name: str) -> list[dict]:
    runs = sorted(p for p in (results / name / "runs").iterdir() if p.is_dir())
    return [p for run in runs for p in points.read_jsonl(run / points.POINTS_FILE)]


def figure(point: dict, name: str) -> dict:
    return point["figures"][name]


def ranged(fig: dict) -> str:
    return points.fmt_range(fig["value"], fig.get("ci95_low"), fig.get("ci95_high"))


def delayed(found: list[dict], server: str, endpoint: str) -> list[dict]:
    """The server's points on the delayed endpoint at the top concurrency, by delay."""
    return sorted(
        (
            p
            for p in found
            if p.get("server") == server and p.get("endpoint") == endpoint and p.get("concurrency") == TOP_C
        ),
        key=lambda p: p["delay_ms"],
    )


def delays_words(chosen: list[dict]) -> str:
    return ", ".join(f"{p['delay_ms'] / 1000:g}" for p in chosen) + " s"


def knee_words(found: list[dict], pool: int) -> str:
    """Where the hinge fitted over Tomcat's sweep at KNEE_DELAY_MS places its pool, from every launch's latency
    ratio, and what its overheads predict there (pool x a / a', knees.overheads: a request's share outside the pool
    is paid once, not per round of the queue); empty when the sweep cannot place it."""
    sweep = [
        p
        for p in found
        if p.get("server") == "tomcat" and p.get("endpoint") == "/delay/sync" and p.get("delay_ms") == KNEE_DELAY_MS
    ]
    launches = [(p["concurrency"], r) for p in sweep for r in figure(p, "latency_ratio").get("launches", [])]
    fitted = hinge.fit(launches)
    if fitted is None or fitted.low is None:
        return ""
    words = f" bend at C={points.fmt_range(fitted.n_best, fitted.low, fitted.high)}"
    predicted = knees.overheads(pool, [(p["concurrency"], figure(p, "latency_ratio")["value"]) for p in sweep])
    if predicted and fitted.low <= predicted.predicted <= fitted.high and not fitted.low <= pool <= fitted.high:
        words += (
            f", where the fit puts a pool of {pool} once a request's own overhead is counted "
            f"({pool} x a / a' = {predicted.predicted:.1f})"
        )
    return words


def render_answer(results: Path) -> str:
    found = run_points(results, ANSWER_SET)
    tomcat = delayed(found, "tomcat", "/delay/sync")
    tornado = delayed(found, "tornado", "/delay/async")
    pool = tomcat[0].get("max_threads", 200) if tomcat else 200
    lines = [
        ANSWER_BEGIN,
        f"Measured here (the committed seed002 reference run, 2-core VM, each figure with its 95 % interval): "
        f"Tomcat's {pool} threads{knee_words(found, pool)}; at {TOP_C:,} clients its latency ratio reads "
        f"{', '.join(ranged(figure(p, 'latency_ratio')) for p in tomcat)} and the seed's efficiency ratio "
        f"{', '.join(ranged(figure(p, 'efficiency_ratio')) for p in tomcat)} at {delays_words(tomcat)} "
        f"delays, the C / {pool} = {TOP_C / pool:g} rounds a pool of {pool} gives.",
        f"Tornado's one event loop does not bend: efficiency ratio "
        f"{', '.join(ranged(figure(p, 'efficiency_ratio')) for p in tornado)} at {TOP_C:,} clients and "
        f"{delays_words(tornado)} ([docs/found.md](docs/found.md) has every reference run).",
        ANSWER_END,
    ]
    return "\n".join(lines)


def newest_run(results: Path, name: str) -> Path | None:
    folder = results / name / "runs"
    runs = sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    return runs[-1] if runs else None


def render_quick(results: Path) -> str:
    run = newest_run(results, QUICK_SET)
    shown = tables.terminal(read_json(run / FINDINGS_FILE)) if run else "(no committed quick run)"
    source = f"`docs/results/{QUICK_SET}/runs/{run.name}/`" if run else "none"
    machine = (read_json(run / "metadata.json").get("machine") or {}) if run else {}
    where = f"on {machine.get('cpu_model', 'an unnamed CPU')}, {machine.get('cores', '?')} cores" if run else "here"
    return "\n".join(
        [QUICK_BEGIN, f"What `--quick` printed at its end {where} ({source}):", "```text", shown, "```", QUICK_END]
    )


SECTIONS = ((ANSWER_BEGIN, ANSWER_END, render_answer), (QUICK_BEGIN, QUICK_END, render_quick))
