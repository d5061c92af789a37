"""A workload file's mix read per request kind: where the generator measured each request's own latency (k6's
tagged samples, the record's `latency_by_kind`), one finding per mix point saying each kind's p99 while the kinds
loaded the server together, beside the mix's own figures (each kind's own group measures it alone)."""

from __future__ import annotations

from crossbench import workload
from crossbench.figures import points as points_module

from .finding import LAUNCH_RULE, Finding, aggregate, sig, who

METHOD = (
    "each launch's p99 over the mix's requests of that kind (the requests its latency is taken over), from the "
    "generator's per-request samples; over the counted launches by the run's estimator"
)


def kinds_in_mix(family: str, points: list[dict]) -> list[Finding]:
    out = []
    for p in points:
        if p.get("endpoint") != workload.MIX_ENDPOINT or not p.get("valid"):
            continue
        counted = points_module.counted(p["records"])
        names = next((list(r["latency_by_kind"]) for r in counted if r.get("latency_by_kind")), [])
        if not names:
            continue
        shown = []
        for name in names:
            figure = aggregate([p99(r, name) for r in counted], p[LAUNCH_RULE])
            shown.append(f"{name} {sig(figure['value'])} ms" if figure else f"{name} none answered")
        out.append(
            Finding(
                family,
                f"p99 per request kind inside the mix at C={p.get('concurrency')}, {who(p)}: {', '.join(shown)}.",
                cells=p["cells"],
                n=len(counted),
                method=METHOD,
            )
        )
    return out


def p99(record: dict, name: str) -> float | None:
    kind = (record.get("latency_by_kind") or {}).get(name) or {}
    return (kind.get("latency_ms") or {}).get("p99")
