"""Service-level targets for any run (`run_all.sh --slo 'p99<300ms' --slo 'errors<0.1%'`), judged point by point
as k6's thresholds judge a run, but saying how sure each judgement is:
- a latency percentile or throughput target is judged by the figure's 95 % interval (points.jsonl): `pass` when
  the whole interval is on the target's side, `fail` when the whole interval is on the other, `undecided` when it
  straddles the target. A figure of fewer than three launches has no interval: its launch values decide when
  they all fall on one side (said "indicative"), else it is undecided;
- an error target is judged on the errors of all the point's counted launches over their requests (a count, not
  a sampled figure: no interval to weigh).
The run prints the failures last and exits with EXIT_FAILED when any point fails, so a pipeline can gate on it."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from crossbench.refusal import Refusal

EXIT_FAILED = 99  # k6's exit code for a failed threshold: what a pipeline that gates on k6 expects
PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
PERCENTILES = {"p50": "latency_ms.p50", "p90": "latency_ms.p90", "p99": "latency_ms.p99", "p999": "latency_ms.p999"}
FORM = re.compile(
    r"^\s*(?P<name>p50|p90|p99|p999|rps|errors)\s*(?P<op><|>)\s*(?P<limit>[0-9]+(?:\.[0-9]+)?)"
    r"\s*(?P<unit>ms|s|%|req/s)?\s*$"
)
FORMS = "p50|p90|p99|p999<N ms or s, rps>N [req/s], errors<N %"


class SloError(Refusal, ValueError):
    """A target that cannot be judged or can never hold (refused before any cell runs)."""


@dataclass(frozen=True)
class Target:
    name: str  # p99, rps, errors
    figure: str  # the points.jsonl figure judged ("error_rate" for errors: a share of requests)
    op: str  # "<" or ">"
    limit: float  # in the figure's own unit: ms, req/s, a share of requests
    text: str  # as the user wrote it

    def holds(self, value: float) -> bool:
        return value < self.limit if self.op == "<" else value > self.limit


def parse(text: str) -> Target:
    """'p99<300ms' -> Target; SloError naming the forms understood for anything else."""
    found = FORM.match(text)
    if not found:
        raise SloError(f"--slo {text!r}: not a target this suite judges; the forms are {FORMS}")
    name, op, limit, unit = found["name"], found["op"], float(found["limit"]), found["unit"]
    if name in PERCENTILES:
        if op != "<" or unit not in ("ms", "s"):
            raise SloError(f"--slo {text!r}: a latency target is an upper bound with its unit, e.g. p99<300ms")
        limit *= 1000 if unit == "s" else 1
        figure = PERCENTILES[name]
    elif name == "rps":
        if op != ">" or unit not in (None, "req/s"):
            raise SloError(f"--slo {text!r}: a throughput target is a lower bound, e.g. rps>500")
        figure = "rps"
    else:
        if op != "<" or unit != "%" or limit >= 100:
            raise SloError(f"--slo {text!r}: an error target is an upper bound in percent under 100, e.g. errors<0.1%")
        limit, figure = limit / 100, "error_rate"
    if limit <= 0 and figure != "error_rate":
        raise SloError(f"--slo {text!r}: a target above zero, please")
    return Target(name, figure, op, limit, text.strip())


def check_reachable(targets: list[Target], delays_ms: set[int]) -> None:
    """A latency target at or below a delay the run asks of the server can never hold: refused."""
    longest = max(delays_ms, default=0)
    for target in targets:
        if target.figure in PERCENTILES.values() and longest and target.limit <= longest:
            raise SloError(
                f"--slo {target.text!r}: the run holds requests for {longest} ms, so no point with that "
                f"delay can answer within {target.limit:g} ms"
            )


@dataclass(frozen=True)
class Judgement:
    point_id: str
    target: str
    verdict: str
    value: float | None
    low: float | None
    high: float | None
    why: str


def judge(point: dict, launches: list[dict], target: Target) -> Judgement:
    """One point against one target (see the module's rules); `launches` are the point's counted records."""
    if target.figure == "error_rate":
        return judge_errors(point, launches, target)
    figure = (point.get("figures") or {}).get(target.figure)
    pid = point["point_id"]
    if not figure:
        return Judgement(pid, target.text, UNDECIDED, None, None, None, f"no {target.figure} figure")
    low, high, value = figure.get("ci95_low"), figure.get("ci95_high"), figure["value"]
    if low is not None and high is not None:
        bounds = (low, high)
        why = f"95 % interval [{low:.4g}, {high:.4g}]"
    else:
        bounds = tuple(figure.get("launches") or [value])
        why = f"indicative: {len(bounds)} launch{'es' if len(bounds) != 1 else ''}, no interval"
    if all(target.holds(v) for v in bounds):
        verdict = PASS
    elif not any(target.holds(v) for v in bounds):
        verdict = FAIL
    else:
        verdict = UNDECIDED
    return Judgement(pid, target.text, verdict, value, low, high, why)


def judge_errors(point: dict, launches: list[dict], target: Target) -> Judgement:
    requests = sum(r.get("requests") or 0 for r in launches)
    errors = sum(r.get("error_total") or 0 for r in launches)
    if not requests:
        return Judgement(point["point_id"], target.text, UNDECIDED, None, None, None, "no requests counted")
    rate = errors / requests
    return Judgement(
        point["point_id"],
        target.text,
        PASS if target.holds(rate) else FAIL,
        rate,
        None,
        None,
        f"{errors} errors in {requests} requests over {len(launches)} launch(es)",
    )


def evaluate(points: list[dict], records: list[dict], targets: list[Target]) -> list[Judgement]:
    """Every point against every target, in the points' order."""
    by_id = {r.get("cell_id"): r for r in records}
    return [
        judge(point, [by_id[c] for c in point.get("cells", []) if c in by_id], target)
        for point in points
        for target in targets
    ]


def summary(judgements: list[Judgement]) -> str:
    """Per target how many points passed, failed and were undecided, then every failure and undecided point."""
    lines = []
    for target in dict.fromkeys(j.target for j in judgements):
        mine = [j for j in judgements if j.target == target]
        counts = {word: sum(j.verdict == word for j in mine) for word in (PASS, FAIL, UNDECIDED)}
        lines.append(
            f"slo {target}: {counts[PASS]} pass, {counts[FAIL]} fail, {counts[UNDECIDED]} undecided "
            f"of {len(mine)} points"
        )
        lines += [f"  {j.verdict.upper()} {j.point_id}: {shown(j.value)} ({j.why})" for j in mine if j.verdict != PASS]
    return "\n".join(lines)


def shown(value: float | None) -> str:
    return "no value" if value is None else f"{value:.4g}"


def failed(judgements: list[Judgement]) -> bool:
    return any(j.verdict == FAIL for j in judgements)


def as_records(judgements: list[Judgement]) -> list[dict]:
    return [asdict(j) for j in judgements]
