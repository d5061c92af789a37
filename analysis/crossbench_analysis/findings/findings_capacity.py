"""Capacity findings (groups with rates = "search", crossbench.decide.capacity): per server setting, the bracket at its
target with what a request cost there and, where a parallel limit predicts a capacity (maxThreads / delay), the
prediction beside it; then which settings hold more, ranked only where their capacities' intervals (the run-to-run
spread in them) are apart."""
from __future__ import annotations

from crossbench.decide import capacity, capacity_spread
from crossbench.figures import points
from crossbench_analysis.judge import capacity_models
from crossbench_analysis.judge.capacity_marks import outcomes
from crossbench_analysis.read.runinfo import Run

from .finding import Finding, sig

FAMILY = "capacity"


def findings(run: Run) -> list[Finding]:
    found = outcomes(run)
    return [bracket(out) for out in found] + ranking(found)


def bracket(out: dict) -> Finding:
    sentence = capacity.sentence(out) + capacity_models.sentence(out)
    cost = out["cost"]
    extras = [f"{label} {points.fmt_interval(cost[name], unit)}" for name, label, unit in
              (("rss_peak_mb", "RSS", "MB"), ("threads_peak", "threads", ""), ("db_connections_peak",
                                                                                "database connections", ""))
              if cost.get(name)]
    if extras:
        sentence += f"; at {sig(out['passed_rps'])} req/s: {', '.join(extras)}"
    tried = ", ".join(f"{sig(t['rate'])} {t['verdict']}" for t in out["trials"])
    finding = Finding(FAMILY, sentence + f" (rates tried: {tried})", label="held", unit="req/s",
                      chart="capacity", cells=[c for t in out["trials"] for c in t["cells"]])
    if out["passed_rps"]:
        check = out.get("confirmation")
        finding.figure = check["rate"] if check and check["held"] else out["passed_rps"]
        finding.basis = f"bracket {sig(out['passed_rps'])}-{sig(out['failed_rps'])} req/s" if out["failed_rps"] \
            else out["status"]
        if check:
            finding.basis = f"{'confirmed' if check['held'] else 'not confirmed'} by a long launch; {finding.basis}"
    return finding


def ranking(found: list[dict]) -> list[Finding]:
    """Which settings hold more at the same target and delay: one sentence per setting that holds more than others
    with their capacities' intervals apart, the run-to-run spread in them (an answer of "at least L" counts from
    L down the spread), and one for the pairs that are not told apart."""
    ranked = sorted((out for out in found if interval(out) and not out.get("generator")),
                    key=lambda out: interval(out)[0], reverse=True)
    above: dict[str, list[str]] = {}
    close: list[str] = []
    for i, high in enumerate(ranked):
        for low in ranked[i + 1:]:
            if (high["target_p99_ms"], high["delay_ms"]) != (low["target_p99_ms"], low["delay_ms"]):
                continue                  # capacities at different targets or delays are not ranked
            if interval(high)[0] > interval(low)[1]:
                above.setdefault(capacity.label(high), []).append(capacity.label(low))
            else:
                close.append(f"{capacity.label(high)} and {capacity.label(low)}")
    out = [Finding(FAMILY, f"{setting} holds more at its target than {', '.join(lows)} (capacities apart, the "
                           "run-to-run spread in them)", chart="capacity") for setting, lows in above.items()]
    if close:
        out.append(Finding(FAMILY, f"Not told apart (capacities within their intervals): {'; '.join(close)}",
                           chart="capacity"))
    return out


def interval(out: dict) -> tuple[float, float] | None:
    """A capacity's 95 % interval with the run-to-run spread; an answer that never failed, from its highest hold
    (less the spread) up; None without either."""
    fitted = out.get("estimate")
    if fitted:
        return fitted["ci95_low"], fitted["ci95_high"]
    if out["passed_rps"] and not out["failed_rps"] and out.get("spread"):
        return out["passed_rps"] / capacity_spread.Spread(**out["spread"]).factor(), float("inf")
    return None
