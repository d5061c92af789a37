"""One finding: a sentence computed from a run's points, with its figure, the figure's interval, the chart and
the cells it rests on, and the cells that were left out and why. The helpers the finding families share: which
points count (valid ones; flagged and failed ones are left out with their reasons), a figure of a point, and
numbers in words.

Points come from `crossbench.figures.points` (points.jsonl, or computed from cells.jsonl for older runs): a figure is
its `value` with the 95 % interval over launches, or "(1 launch)"."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from crossbench import stats
from crossbench.figures import points, service_time
from crossbench.figures.points import fmt_interval, fmt_range
from crossbench.flags import SERVER_CLOSED
from crossbench_analysis.read.runinfo import Run, get, num
from crossbench_analysis.read.setting import setting

THRESHOLD = 1.1  # the bend: a delay sweep's ratio above this for good
# The ratios a delay sweep is judged by, in the knees' order of preference (knees.RATIO_FIELDS), and their words.
RATIO_WORDS = {
    "latency_ratio": "latency ratio (mean latency / delay)",
    "efficiency_ratio": "efficiency ratio ((C / rps) / delay)",
}
SERVICE_TIME_WORDS = "its service time at C=1"  # what a user path's ratios divide by in place of the delay


def ratio_words(ratio: str, point: dict) -> str:
    """A ratio's words for a point: against its delay, or for a user path its service time."""
    words = RATIO_WORDS[ratio]
    return words.replace("delay", SERVICE_TIME_WORDS) if service_time.is_user_record(point) else words


@dataclass
class Finding:
    family: str  # the section it belongs to (the experiment family)
    sentence: str
    label: str = ""  # what the figure is ("efficiency ratio at C=400")
    figure: float | None = None
    unit: str = ""
    interval: list | None = None  # [low, high], 95 %, over launches; None under three launches
    n: int | None = None  # launches behind the figure
    launches: list | None = None  # the launch values, shown instead of an interval under three launches
    method: str = ""
    basis: str = ""  # what the figure rests on when it is not launches of one point
    digits: int = 3  # significant figures of a figure without an interval
    chart: str | None = None  # a chart name (charts/<chart>.png)
    cells: list[str] = field(default_factory=list)
    left_out: list[dict] = field(default_factory=list)  # [{"cell": id, "reason": "flags"}]
    leads: bool = False  # the sentence opens with its figure: the figure text is not repeated after it
    detail: str = ""  # how it was computed, beyond the method: the fold under the sentence

    @property
    def figure_text(self) -> str:
        if self.figure is None:
            return ""
        unit = f" {self.unit}" if self.unit else ""
        label = f"{self.label}: " if self.label else ""
        if self.interval and None not in self.interval:
            shown = points.fmt_range(self.figure, *self.interval, self.unit)
            if "[" in shown:
                return f"{label}{shown} (95 %, {self.basis or f'{self.n} launches'})"
            if self.n and not self.basis:  # launches that tie (but for rounding): no interval of zero width
                return f"{label}{points.short(self.figure)}{unit} (all {self.n} launches)"
        if not self.basis and self.launches and len(self.launches) > 1:
            values = ", ".join(sig(v, self.digits) for v in self.launches)
            return f"{label}{len(self.launches)} launches: {values}{unit} (indicative, no interval)"
        launches = self.basis or (f"{self.n} launch" + ("es" if self.n != 1 else "") if self.n else "launches unknown")
        return f"{label}{sig(self.figure, self.digits)}{unit} ({launches})"

    def to_dict(self, charts: set[str]) -> dict:
        """findings.json's record; the chart as its file, or None when the run has no such chart."""
        out = asdict(self)
        out["chart"] = f"charts/{self.chart}.png" if self.chart in charts else None
        out["chart_name"] = self.chart if self.chart in charts else None
        out["figure_text"] = self.figure_text
        return out


def sig(value: float | None, figures: int = 3) -> str:
    """A number as the findings write it: points.sig with thousands separated (2710.4 -> '2,710')."""
    return points.sig(value, figures, commas=True)


# ---------------------------------------------------------------------------------------------- points


# The key under which a point read for findings carries its run's launch rule (points.LaunchRule): a value in
# memory, never written to points.jsonl or findings.json.
LAUNCH_RULE = "launch_rule"


def aggregate(values: list[float], rule: points.LaunchRule) -> dict | None:
    """A figure points.jsonl does not state (loadgen CPU, probes, held connections...) over the counted launches,
    from the points' own estimator under the run's launch rule (points.figure_of), in the same shape."""
    return points.figure_of([float(v) for v in values if v is not None], rule)


def load_points(run: Run) -> list[dict]:
    """The run's points (crossbench.figures.points: points.jsonl, or computed from cells.jsonl for older runs), each
    with its launches' records under "records" (counted and failed), the cells findings also read, and the
    launches it left out of its figures as disturbed (noisy_host) under "disturbed_records", and the run's launch
    rule under LAUNCH_RULE, by which a figure the point does not state is computed from its launches (`figure`)."""
    by_id = run.cell_by_id
    stored = (run.path / points.POINTS_FILE).is_file()
    out = []  # without points.jsonl, from the cells analysis read (a torn last line of cells.jsonl left out)
    for point in points.load(run.path) if stored else points.aggregate(run.cells, run.precision):
        ids = [*point.get("cells", []), *point.get("failed_cells", [])]
        out.append(
            {
                **point,
                "records": [by_id[i] for i in ids if i in by_id],
                "disturbed_records": [by_id[i] for i in point.get("disturbed_cells", []) if i in by_id],
                LAUNCH_RULE: run.launch_rule,
            }
        )
    return [p for p in out if p["records"]]


def confirmed_best_levels(found: list[dict], stack_of) -> dict:
    """{stack: its best level}, picked by each level's first launch (points.best_throughput) and estimated from
    the launches after that one where it has any (points.confirming), so its figure and interval carry no pick's
    luck; its records are then those launches' (and the failed ones')."""
    best = {}
    for stack, point in points.best_throughput(found, stack_of).items():
        again = points.confirming(point, point["records"])
        kept = {*again["cells"], *again.get("failed_cells", [])}
        best[stack] = {**again, "records": [r for r in point["records"] if r["cell_id"] in kept]}
    return best


def figure(point: dict, name: str) -> dict | None:
    """A point's figure: from points' figures, else the mean of its counted launches' field `name`."""
    found = point["figures"].get(name)
    if found is not None:
        return found
    return aggregate([num(get(c, name)) for c in points.counted(point["records"])], point[LAUNCH_RULE])


def value(point: dict, name: str) -> float | None:
    found = figure(point, name)
    return found["value"] if found else None


def sweep_ratio(pts: list[dict]) -> str:
    """The ratio a delay sweep is judged by, as the knees and a delayed point's headline judge it: mean latency /
    delay when every point has it, else the seed's (C / rps) / delay; one ratio for the whole sweep, never a mix.
    (The seed's ratio also counts the window's edge: an answer due just after the window closes is missed.)"""
    return "latency_ratio" if pts and all(value(p, "latency_ratio") is not None for p in pts) else "efficiency_ratio"


def comparison(a: dict, b: dict, name: str) -> stats.RatioTest | None:
    """b / a of a figure between two points of one run: Welch's t on the logs of their counted launches
    (stats.log_ratio); None when a side has fewer than stats.MIN_LAUNCHES launches or no positive values: an
    indicative figure feeds no comparison."""
    values = [[v for v in (figure(point, name) or {}).get("launches") or [] if v > 0] for point in (a, b)]
    if any(len(v) < stats.MIN_LAUNCHES for v in values):
        return None
    return stats.log_ratio(*values)


def separated(test: stats.RatioTest | None) -> bool:
    """The comparison's 95 % interval leaves 1 (and the launches have a spread to judge it by)."""
    return bool(test and test.low is not None and test.low != test.high and (test.low > 1 or test.high < 1))


def ratio_text(test: stats.RatioTest) -> str:
    """'1.8 [1.4, 2.4]': a ratio with its 95 % interval, to the digits the interval supports (fmt_interval), or the
    ratio alone when it has none."""
    if test.low is None or test.high is None:
        return sig(test.ratio)
    return fmt_range(test.ratio, test.low, test.high)


def quoted(point: dict, name: str, unit: str = "") -> str:
    """A figure a sentence quotes beside its main one: "5193 ± 120 req/s" (value ± half-width of its 95 %
    interval), or "5190 req/s" as sig gives it with one launch."""
    found = figure(point, name)
    if found and found.get("ci95_low") is not None and found.get("ci95_high") is not None:
        return points.fmt_interval(found, unit)
    return f"{sig(found['value'] if found else None)}" + (f" {unit}" if unit else "")


def split(points: list[dict]) -> tuple[list[dict], list[dict]]:
    """(valid points, left-out records [{cell, reason}]): flagged points, failed launches and the disturbed
    launches a point left out of its figures (points.DISTURBED) are left out."""
    good = [p for p in points if p["valid"]]
    left = []
    for p in points:
        for c in p.get("disturbed_records", []):
            left.append({"cell": c["cell_id"], "reason": ", ".join(str(f) for f in c.get("flags") or [])})
        for c in p["records"]:
            if c.get("status") != "ok":
                left.append({"cell": c["cell_id"], "reason": f"failed: {c.get('error') or c.get('status')}"})
            elif not p["valid"]:
                left.append(
                    {
                        "cell": c["cell_id"],
                        "reason": ", ".join(str(f) for f in c.get("flags") or []) or ", ".join(p["flags"]),
                    }
                )
    return good, left


def cells_of(points: list[dict]) -> list[str]:
    return [cid for p in points for cid in p["cells"]]


def with_figure(finding: Finding, point: dict, name: str, unit: str = "", label: str = "", digits: int = 3) -> Finding:
    """Sets the finding's figure from a point's figure `name`: its value, interval, launches and method."""
    found = figure(point, name)
    finding.label, finding.digits = label, digits
    if found:
        finding.figure, finding.n, finding.method, finding.unit = (
            found["value"],
            found.get("n"),
            found.get("estimator", ""),
            unit,
        )
        low, high = found.get("ci95_low"), found.get("ci95_high")
        finding.interval = [low, high] if low is not None and high is not None else None
        finding.launches = found.get("launches")
    return finding


def left_note(left: list[dict]) -> str:
    """' (2 launches left out: timeouts)' or '': which flags, the counts per flag in findings.json's left_out."""
    if not left:
        return ""
    flags = sorted(
        {r for entry in left if not entry["reason"].startswith("failed") for r in entry["reason"].split(", ") if r}
    )
    failed = "failed" if any(entry["reason"].startswith("failed") for entry in left) else ""
    return f" ({len(left)} launch{'es' if len(left) != 1 else ''} left out: {', '.join([*flags, failed] if failed else flags)})"


def caveat_note(counted: list[dict]) -> str:
    """' (gunicorn 4 sync workers closed every connection: one request per connection)' for counted points
    whose server answered without keep-alive (points.CAVEATS), or ''."""
    closing = dict.fromkeys(who(p) for p in counted if SERVER_CLOSED in p["flags"])
    return "".join(f" ({name} closed every connection: one request per connection)" for name in closing)


def reasons(left: list[dict]) -> str:
    """'flagged few_completions (1), ratio_disagreement (2); failed (1)': each flag once, with how many cells
    had it (counts only when more than one cell was left out)."""
    counts: dict[str, int] = {}
    failed = [entry for entry in left if entry["reason"].startswith("failed")]
    for entry in left:
        if entry not in failed:
            for reason in entry["reason"].split(", "):
                counts[reason] = counts.get(reason, 0) + 1
    parts = (
        ["flagged " + ", ".join(f"{r} ({n})" if len(left) > 1 else r for r, n in sorted(counts.items()))]
        if counts
        else []
    )
    if failed:
        parts.append(f"failed ({len(failed)})" if len(left) > 1 else failed[0]["reason"])
    return "; ".join(parts)


def all_flagged(family: str, what: str, left: list[dict], chart: str | None) -> Finding:
    """The finding a topic gets when every one of its cells was left out: it says so instead of vanishing."""
    return Finding(
        family,
        f"{what}: no figure, every cell of it was left out ({len(left)}, {reasons(left)}).",
        chart=chart,
        left_out=left,
    )


def against_second(ranked: list[dict], name: str, label=None) -> str:
    """How the first of a ranking by `name` stands against the second, by their ratio's 95 % interval (Welch's t
    on the launches' logs): '; 1.4 [1.2, 1.6] times X', '; not told apart from X (...)', or the order untested;
    '' with one. `label` names a point (who by default)."""
    if len(ranked) < 2:
        return ""
    label = label or who
    test = comparison(ranked[1], ranked[0], name)
    if test is None:
        return "; the order is untested (under 3 launches a point)"
    if not separated(test):
        return f"; not told apart from {label(ranked[1])} ({ratio_text(test)})"
    return f"; {ratio_text(test)} times {label(ranked[1])}" + ("'s" if name.startswith("latency") else "")


def most_rps(family: str, chart: str, ranked: list[dict], left: list[dict], claim: str, detail: str, label: str = ""):
    """The finding that leads with the highest throughput of `ranked` (points by req/s, highest first): "2,710
    req/s: <claim>", how the leader stands against the second (against_second), the launches left out; the leader's
    rps is its figure (labelled `label`, who by default) and every ranked point's launches its cells."""
    top = ranked[0]
    text = f"{sig(value(top, 'rps'))} req/s: {claim}" + against_second(ranked, "rps") + "." + left_note(left)
    finding = Finding(family, text, chart=chart, cells=cells_of(ranked), left_out=left, leads=True, detail=detail)
    return with_figure(finding, top, "rps", "req/s", label or who(top))


def interval_verdict(test, bound: float, above: str, below: str, nothing: str) -> str:
    """What a ratio's 95 % interval claims against a bound: `above` when all of it is above, `below` when all of it
    is below, else (it straddles the bound, or there is no interval) that no claim is made."""
    if test is None or test.low is None:
        return f"under 3 launches a point, so no claim {nothing}"
    if test.low > bound:
        return above
    if test.high < bound:
        return below
    return f"its interval straddles {bound:g}, so no claim {nothing}"


def figure_of(point: dict, name: str, unit: str = "") -> str:
    """A point's figure in the one notation (points.fmt_interval), the way a sentence that leads with it says it:
    '5.003 [4.991, 5.015]', '229 threads (all 3 launches)'."""
    return fmt_interval(figure(point, name), unit)


def sweep_name(point: dict) -> str:
    """A delay sweep in words: 'tomcat maxThreads=200 (/delay/sync, 1 s)'."""
    return f"{who(point)} ({point.get('endpoint')}, {delay_text(point)})"


def who(point: dict) -> str:
    """The server's setting in words, e.g. 'tomcat maxThreads=200' or 'tornado' (setting.py: the record's
    `setting`, or its plug-in's words for an older record)."""
    return str(point.get("setting") or setting(point["records"][0]))


def delay_text(point: dict) -> str:
    """The delay a sweep's ratios divide by: the endpoint's own, or for a user's request (--path) its service
    time, the latency it had at C=1 (crossbench.figures.service_time)."""
    delay = num(point.get("delay_ms")) or 0
    service = value(point, service_time.FIELD) if not delay else None
    if service is not None:
        return f"{sig(service)} ms service time at C=1"
    return f"{delay / 1000:g} s" if delay >= 1000 else f"{delay:g} ms"
