"""Capacity findings (groups with rates = "search", crossbench.decide.capacity): per server setting, the bracket at its
target with what a request cost there and, where a parallel limit predicts a capacity (maxThreads / delay), the
prediction beside it; then which settings hold more, ranked only where their brackets do not overlap."""
from __future__ import annotations

from crossbench.decide import capacity
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
        finding.figure = out["passed_rps"]
        finding.basis = f"bracket {sig(out['passed_rps'])}-{sig(out['failed_rps'])} req/s" if out["failed_rps"] \
            else out["status"]
    return finding


def ranking(found: list[dict]) -> list[Finding]:
    """One sentence for the pairs whose brackets are apart (the higher one shown to hold at or above a rate the
    other was shown to fail: an undecided rate ranks nothing), one for those that are not."""
    done = [out for out in found if out["passed_rps"] and out["failed_rps"] and not out.get("generator")]
    done.sort(key=lambda out: out["passed_rps"], reverse=True)
    apart, overlap = [], []
    for i, high in enumerate(done):
        for low in done[i + 1:]:
            if (high["target_p99_ms"], high["delay_ms"]) != (low["target_p99_ms"], low["delay_ms"]):
                continue                  # capacities at different targets or delays are not ranked
            shown_to_fail = low.get("shown_to_fail_rps")
            (apart if shown_to_fail and high["passed_rps"] >= shown_to_fail else overlap).append((high, low))
    out = []
    if apart:
        pairs = "; ".join(f"{h['setting']} over {lo['setting']} (holds {sig(h['passed_rps'])} req/s, where "
                          f"{lo['setting']} failed from {sig(lo['shown_to_fail_rps'])})" for h, lo in apart)
        out.append(Finding(FAMILY, f"Holds more at its target, brackets apart: {pairs}", chart="capacity"))
    if overlap:
        pairs = "; ".join(f"{h['setting']} and {lo['setting']}" for h, lo in overlap)
        out.append(Finding(FAMILY, f"Not ranked (brackets overlap, or the lower one was never shown to fail): "
                                   f"{pairs}", chart="capacity"))
    return out
