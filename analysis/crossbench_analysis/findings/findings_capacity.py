"""Capacity findings (groups with rates = "search", crossbench.decide.capacity_answer): per server setting, one
short sentence leading with the rate it held at its target (over the long launch where one held), the bracket to
the lowest rate shown to fail, an estimate only where launches disagreed, and how far the held rate moves between
sittings (the ceiling it knows, the cost, the models and the rates tried in its fold); and a summary table: per
setting, what it held, its bracket, the estimate, the spread between sittings, what limited it and which settings it
holds more than: those it held a rate they failed at, by more than either's spread between sittings."""

from __future__ import annotations

from crossbench.decide import capacity, capacity_words
from crossbench.decide.capacity_words import label
from crossbench.figures import points
from crossbench_analysis.judge import capacity_models
from crossbench_analysis.judge.capacity_marks import outcomes
from crossbench_analysis.read.runinfo import Run

from .finding import Finding, sig

FAMILY = "capacity"
COLUMNS = (
    "server setting",
    "workload",
    "holds (req/s)",
    "bracket (req/s)",
    "estimate [95 %]",
    "between sittings",
    "long launch",
    "limited by",
    "holds more than",
)
KEYS = ("setting", "workload", "holds", "bracket", "estimate", "sittings", "long_launch", "limited_by", "above")
INTRO = (
    "Per server setting: the rate it held at its latency target, the bracket to the lowest rate shown to fail, "
    "an estimate where launches disagreed, how far the held rate moved between sittings, what limited it and "
    "which settings it holds more than (the findings below say how each was computed)."
)
NOTE = (
    "Holds: the highest rate a long launch held (the short launches' where none ran), never above a rate that "
    "failed its long launch or a ceiling the run knows (a pool's size over its delay, the generator's). "
    "Bracket: up to the lowest rate shown to fail in any window. Estimate: only where launches at one rate "
    "disagreed. Between sittings: the held rates of independent searches of the setting on this machine. "
    "Settings not in each other's last column were not told apart."
)


def findings(run: Run) -> list[Finding]:
    return [bracket(out) for out in outcomes(run)]


def cores(run: Run, out: dict) -> int:
    """How many cores the search's server had (its first launch's server_cpus; 1 when unrecorded)."""
    first = next((c for t in out["trials"] for c in t["cells"]), None)
    return len(run.cell_by_id.get(first, {}).get("server_cpus") or ()) or 1


def bracket(out: dict) -> Finding:
    finding = Finding(
        FAMILY,
        short(out),
        label="held",
        unit="req/s",
        chart="capacity",
        leads=True,
        cells=[c for t in out["trials"] for c in t["cells"]],
        detail=detail(out),
    )
    if out["held_rps"]:
        finding.figure = out["held_rps"]
        finding.basis = (
            f"bracket {sig(out['held_rps'])}-{sig(out['fails_rps'])} req/s" if out["fails_rps"] else out["status"]
        )
        check = out.get("confirmation")
        if check:
            finding.basis = f"{'confirmed' if check['held'] else 'not confirmed'} by a long launch; {finding.basis}"
    return finding


def who(out: dict) -> str:
    return label(out) + (f", {out['delay_ms']} ms delay" if out.get("delay_ms") else "")


def short(out: dict) -> str:
    """One claim, the rate first: "tomcat maxThreads=20, 200 ms delay: holds 95.2 req/s at p99 <= 300 ms for 60 s;
    bracket 95.2-100 req/s; moves 5 % between sittings"."""
    target, low, high = f"p99 <= {out['target_p99_ms']:g} ms", out["held_rps"], out["fails_rps"]
    if out.get("generator"):
        return f"{who(out)}: the load generator {capacity_words.generator_words(out)}"
    if out["status"] == capacity.ABOVE_CEILING:
        return f"{who(out)}: above the load generator's ceiling of {sig(out['ceiling_rps'])} req/s" + (
            f"; held {sig(low)} req/s at {target}" if low else ""
        )
    if low is None:
        return f"{who(out)}: {target} held at no rate tried" + (f" (down to {sig(high)} req/s)" if high else "")
    flat = out.get("plateau")
    if flat:
        return (
            f"{who(out)}: p99 {flat['p99_ms'][0]:.0f}-{flat['p99_ms'][1]:.0f} ms from {sig(flat['from_rps'])} "
            f"to {sig(flat['to_rps'])} req/s: a tail that does not grow with the rate, not a capacity, sets the "
            f"{out['target_p99_ms']:g} ms target"
        )
    text = f"{who(out)}: holds {sig(low)} req/s at {target}{long_words(out)}"
    if high is None:
        top = out.get("top_rps") or low
        text += f"; no failure up to {sig(top)} req/s" if top > low else ""
    else:
        fitted = out.get("estimate")
        ended = "" if out["status"] == capacity.BRACKETED else f" ({out['status']})"
        text += f"; bracket {sig(low)}-{sig(high)} req/s{ended}" + (
            f", capacity {points.fmt_interval(fitted, 'req/s')}" if fitted else ""
        )
    return text + moves_words(out)


def moves_words(out: dict) -> str:
    """'; moves 5 % between sittings', '(more than the bracket)' where it is, '' where not measured."""
    spread = out.get("spread")
    if not spread:
        return ""
    wider = " (more than the bracket)" if out.get("spread_wider") else ""
    return f"; moves {spread['moves'] * 100:.0f} % between sittings{wider}"


def long_words(out: dict) -> str:
    """How the long launches went, in a few words: " for 60 s", or ", not for 60 s (tried down to 90)" when none
    held."""
    check, seconds = out.get("confirmation"), out.get("confirm_s")
    if not check:
        return ""
    span = f"{seconds:g} s" if seconds else "a long launch"
    if check["held"]:
        return f" for {span}"
    tried = out.get("confirmations") or [check]
    return f", not for {span}" + (f" (tried down to {sig(check['rate'])})" if len(tried) > 1 else "")


def detail(out: dict) -> str:
    """The fold: the search's whole answer as the runner says it, the models beside it, the cost at the rate that
    held and every rate tried."""
    text = capacity_words.sentence(out) + capacity_models.sentence(out)
    cost = out["cost"]
    extras = [
        f"{label} {points.fmt_interval(cost[name], unit)}"
        for name, label, unit in (
            ("rss_peak_mb", "RSS", "MB"),
            ("threads_peak", "threads", ""),
            ("db_connections_peak", "database connections", ""),
        )
        if cost.get(name)
    ]
    if extras:
        text += f"; at {sig(out['held_rps'])} req/s: {', '.join(extras)}"
    tried = ", ".join(f"{sig(t['rate'])} {t['verdict']}" for t in out["trials"])
    return text + f" (rates tried: {tried})"


def summary(run: Run) -> dict:
    """The summary table: a row per search, the highest rate held first (the generator's ceiling last)."""
    found = outcomes(run)
    above = ranking(found)
    ordered = sorted(found, key=lambda out: (bool(out.get("generator")), -(out["held_rps"] or 0)))
    rows = [row(out, cores(run, out), above.get(label(out), [])) for out in ordered]
    return {"columns": list(COLUMNS), "keys": list(KEYS), "rows": rows, "note": NOTE if rows else "", "intro": INTRO}


def row(out: dict, server_cores: int, below: list[str]) -> dict:
    fitted = out.get("estimate")
    return {
        "setting": label(out),
        "workload": workload(out),
        "holds": sig(out["held_rps"]) + (f" for {out['held_s']:g} s" if out.get("held_s") else "")
        if out["held_rps"]
        else "none",
        "bracket": bracket_text(out),
        "estimate": points.fmt_interval(fitted) if fitted else "none",
        "sittings": sittings_text(out),
        "long_launch": long_launch(out),
        "limited_by": limited_by(out, server_cores),
        "above": ", ".join(below) or "-",
    }


def bracket_text(out: dict) -> str:
    """'95.2-100', or how far the search got without one."""
    low, high = out["held_rps"], out["fails_rps"]
    if low and high:
        return f"{sig(low)}-{sig(high)}"
    if low:
        return f"none failed up to {sig(out.get('top_rps') or low)}"
    return f"fails down to {sig(high)}" if high else out["status"]


def sittings_text(out: dict) -> str:
    """'moves 5 % (3 sittings: 952-1,000)', the bracket named where the spread is wider, 'not measured'."""
    spread = out.get("spread")
    if out.get("generator") or not spread:
        return "not measured" if not out.get("generator") else "-"
    held = spread["held_rps"]
    text = f"moves {spread['moves'] * 100:.0f} % ({len(held)} sittings: {sig(min(held))}-{sig(max(held))})"
    return text + (", more than the bracket" if out.get("spread_wider") else "")


def workload(out: dict) -> str:
    delay = f" {out['delay_ms']} ms" if out.get("delay_ms") else ""
    return f"{out['endpoint']}{delay}, p99 <= {out['target_p99_ms']:g} ms"


def long_launch(out: dict) -> str:
    check = out.get("confirmation")
    if not check:
        return "none"
    missed = [tried["rate"] for tried in out.get("confirmations") or () if not tried["held"]]
    shown = f"held at {sig(check['rate'])}" if check["held"] else "not held"
    return shown + (f" (not at {', '.join(sig(r) for r in missed)})" if missed else "")


def limited_by(out: dict, server_cores: int) -> str:
    """What set the capacity: the load generator, a tail (a plateau), the pool (Little's law's rate inside the
    bracket), the server's cores (busy at the rate held), else its CPU there in words."""
    if out.get("generator") or out["status"] == capacity.ABOVE_CEILING:
        return "the load generator"
    if out.get("plateau"):
        return "a tail that does not grow with the rate"
    found = capacity_models.models(out, server_cores)
    if found["little_where"] == capacity_models.INSIDE:
        return f"its pool: {out['parallel_limit']} / {out['delay_ms']} ms = {sig(found['little_rps'])} req/s"
    share = found["cpu_share"]
    if share is None:
        return "not judged"
    busy = f"{share * 100:.0f} % CPU at {sig(out['held_rps'])} req/s"
    return f"its core ({busy})" if found["cpu_bound"] else f"not a pool or a full core ({busy})"


def ranking(found: list[dict]) -> dict[str, list[str]]:
    """Per setting, the settings it holds more than at the same target and delay: it held a rate the other was
    shown to fail at, and by more than either's spread between sittings (its held rate less its move still above
    the other's failure plus the other's move; a spread not measured counts as none)."""
    shown = [out for out in found if out.get("held_rps") and not out.get("generator")]
    above: dict[str, list[str]] = {}
    for high in sorted(shown, key=lambda out: out["held_rps"], reverse=True):
        for low in shown:
            same = (high["target_p99_ms"], high["delay_ms"]) == (low["target_p99_ms"], low["delay_ms"])
            if (
                same
                and low is not high
                and low.get("fails_rps")
                and high["held_rps"] / (1 + moves(high)) >= low["fails_rps"] * (1 + moves(low))
            ):
                above.setdefault(label(high), []).append(label(low))
    return above


def moves(out: dict) -> float:
    return (out.get("spread") or {}).get("moves") or 0.0
