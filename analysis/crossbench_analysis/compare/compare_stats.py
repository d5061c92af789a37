"""compare's statistics: per matched point and figure, B/A from the launches of each run, its 95 % interval, the
test that gave it, and a verdict that says what was shown, nothing more.

- `cannot tell`: fewer than stats.MIN_LAUNCHES (3) launches on a side, or a side whose launches are tied (no
  spread: it would give p = 0). `no value`: a side has no figure at all.
- Otherwise a test on the log scale (a change in throughput or latency is a factor) judged against the
  equivalence margin m (default 5 %, symmetric on logs: B/A inside [1/(1+m), 1+m]) by
  crossbench.figures.changes.change_call:
  `faster` / `slower` when the whole 95 % interval lies beyond the margin (criterion's compare_to_threshold);
  `same within m` when the 90 % interval lies inside it (TOST, two one-sided tests at 5 %); `inconclusive`
  otherwise, with the interval's half width said. A change is a headline verdict only when it also survives
  Benjamini-Hochberg across the points of the compare (compare.py), else it reads `inconclusive`.
- Between runs, the run is the unit that varies (Kalibera and Jones): each run's mean carries one draw of the run's
  level, so the run-to-run spread sigma_run measured on this machine (noise_floor.toml, per figure and kind of
  point) enters the variance, se^2 = s_a^2/n_a + s_b^2/n_b + 2 sigma_run^2, instead of a threshold on the ratio.
- Two variants inside one run (judge_paired): launches paired by round, the paired t on the log values, no run
  variance (one run has no run-to-run drift, and the pairing takes out the drift within it).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from crossbench import stats
from crossbench.figures import changes

FLOOR_FILE = Path(__file__).with_name("noise_floor.toml")
DEFAULT_MARGIN = 0.05
FDR_Q = 0.05
# Figures where less is better; every other figure is better higher (throughput).
LOWER_IS_BETTER_PREFIXES = ("latency_ms.", "efficiency_ratio", "latency_ratio", "rss", "cpu", "threads")
FASTER, SLOWER, SAME, INCONCLUSIVE = "faster", "slower", "same", "inconclusive"
CANNOT_TELL, NO_VALUE = "cannot tell", "no value"
WORDS = (SAME, FASTER, SLOWER, INCONCLUSIVE, CANNOT_TELL, NO_VALUE)
STATIC, DELAYED = "static", "delayed"


@dataclass(frozen=True)
class Verdict:
    figure: str
    a: float | None  # the point's value in each run
    b: float | None
    ratio: float | None  # B/A of the launches' geometric means, shown even when nothing can be told
    test: changes.ChangeTest | None
    margin: float
    word: str
    why: str = ""  # cannot tell: the reason; inconclusive after BH: the adjusted p
    p_adjusted: float | None = None
    sees: float | None = None  # the smallest change (a share) found with POWER, from the spread and the launches
    about: str = ""  # what sees is of, in words ("static rps")

    @property
    def changed(self) -> bool:
        return self.word in (FASTER, SLOWER)

    @property
    def p_value(self) -> float | None:
        """The one-sided p its word rests on, against the margin: a same's TOST p, else that of a change beyond
        the margin (changes.ChangeTest); None untested."""
        if self.test is None:
            return None
        return self.test.p_same(self.margin) if self.word == SAME else self.test.p_change(self.margin)

    @property
    def said(self) -> str:
        """The verdict as printed: `same within 5 %`, `inconclusive (+-23 %)`, `cannot tell (...)`."""
        if self.word == SAME:
            return f"same within {pct(self.margin)}"
        if self.word == INCONCLUSIVE:
            width = f"interval +-{pct(math.exp(stats.t_quantile(stats.CONFIDENCE, self.test.df) * self.test.se) - 1)}"
            return f"inconclusive ({width}{'; ' + self.why if self.why else ''}{self.unseen})"
        if self.word == CANNOT_TELL:
            return f"cannot tell ({self.why}{self.unseen})"
        return self.word

    @property
    def unseen(self) -> str:
        """'; changes under 18 % cannot be seen on static rps on this machine' (untested: from the run-to-run
        spread alone, 'however many launches'), or '' where nothing says it."""
        if self.sees is None:
            return ""
        given = "however many launches, " if self.test is None else ""
        return f"; {given}changes under {pct(self.sees)} cannot be seen on {self.about or self.figure} on this machine"


def pct(share: float) -> str:
    return f"{100 * share:.3g} %"


def lower_is_better(figure: str) -> bool:
    return figure.startswith(LOWER_IS_BETTER_PREFIXES)


def kind_of(point: dict) -> str:
    """DELAYED for a point whose requests are held (delay_ms > 0: its throughput is set by the hold, which does
    not drift between runs), STATIC for every other (work bound by the CPU, which does)."""
    return DELAYED if point.get("delay_ms") else STATIC


def positive(values) -> list[float]:
    return [float(v) for v in values if isinstance(v, (int, float)) and v > 0]


def geometric_ratio(a: list[float], b: list[float]) -> float:
    return math.exp(sum(map(math.log, b)) / len(b) - sum(map(math.log, a)) / len(a))


def judge(
    figure: str,
    a_values,
    b_values,
    a_value,
    b_value,
    run_sd: float,
    margin: float = DEFAULT_MARGIN,
    run_df: float | None = None,
    kind: str = "",
) -> Verdict:
    """Two runs' launches of one figure: the test with the run-to-run variance (run_sd, on logs, estimated with
    run_df degrees of freedom; None: taken as known) added. Each tested verdict carries the smallest change it
    could have found (`sees`, smallest_seen); an untested one the smallest that the run-to-run spread alone
    leaves visible, however many launches were made."""
    a_values, b_values = positive(a_values), positive(b_values)
    about = f"{kind} {figure}".strip()
    if not a_values or not b_values:
        return Verdict(figure, a_value, b_value, None, None, margin, NO_VALUE)
    ratio = geometric_ratio(a_values, b_values)
    why = changes.untestable(a_values, b_values)
    if why:
        sees = smallest_seen(math.sqrt(2) * run_sd, run_df, margin) if run_sd > 0 else None
        return Verdict(figure, a_value, b_value, ratio, None, margin, CANNOT_TELL, why, sees=sees, about=about)
    test = changes.run_log_ratio(a_values, b_values, run_sd, run_df)
    verdict = verdict_of(figure, test, a_value, b_value, margin)
    return replace(verdict, sees=smallest_seen(test.se, test.df, margin), about=about)


POWER = 0.80  # the share of the time a change of `sees` is found


def smallest_seen(se: float, df: float | None, margin: float) -> float:
    """The smallest change (a share) a test of this standard error on the logs (df degrees of freedom; None:
    known) finds POWER of the time: its whole 95 % interval must clear the margin, so the change must pass
    log(1 + margin) + (t(0.975) + t(POWER)) se. A change under it is found less often than that."""
    from scipy.stats import t

    dof = df if df else 1e9
    return math.exp(math.log(1 + margin) + (float(t.ppf(0.975, dof)) + float(t.ppf(POWER, dof))) * se) - 1


def judge_paired(
    figure: str, pairs: list[tuple[float, float]], a_value, b_value, margin: float = DEFAULT_MARGIN
) -> Verdict:
    """Two variants launched in the same rounds of one run, (a, b) per round: the paired test, no run variance."""
    pairs = [(float(a), float(b)) for a, b in pairs if a and b and a > 0 and b > 0]
    if not pairs:
        return Verdict(figure, a_value, b_value, None, None, margin, NO_VALUE)
    diffs = [math.log(b / a) for a, b in pairs]
    ratio = math.exp(sum(diffs) / len(diffs))
    if len(pairs) < stats.MIN_LAUNCHES:
        why = f"{len(pairs)} round{'s' if len(pairs) != 1 else ''} holding both, fewer than {stats.MIN_LAUNCHES}"
        return Verdict(figure, a_value, b_value, ratio, None, margin, CANNOT_TELL, why)
    if len(set(diffs)) == 1:
        return Verdict(figure, a_value, b_value, ratio, None, margin, CANNOT_TELL, "the pairs' ratios are tied")
    return verdict_of(figure, changes.paired_change(pairs), a_value, b_value, margin)


CALLED = {changes.EQUIVALENT: SAME, changes.INCONCLUSIVE: INCONCLUSIVE}


def verdict_of(figure: str, test: changes.ChangeTest, a_value, b_value, margin: float) -> Verdict:
    call = changes.change_call(test, margin)
    if call in CALLED:
        word = CALLED[call]
    else:
        better = (call == changes.DECREASE) if lower_is_better(figure) else (call == changes.INCREASE)
        word = FASTER if better else SLOWER
    return Verdict(figure, a_value, b_value, test.ratio, test, margin, word)


def controlled(verdicts: list[Verdict], q: float = FDR_Q) -> list[Verdict]:
    """Benjamini-Hochberg across the points of one compare, on p values against the margin, each family over
    every point tested: the changes' (that a change is within the margin) and the sames' (TOST's, that it is
    beyond). A faster, slower or same whose adjusted p in its family is above q reads inconclusive, so at most a
    share q of the changes said, and of the sames said, are expected to be false. Every tested verdict carries
    the adjusted p of what it says (a change's for one that says none)."""
    tested = [i for i, v in enumerate(verdicts) if v.test is not None]
    changes_adjusted = changes.benjamini_hochberg([verdicts[i].test.p_change(verdicts[i].margin) for i in tested])
    sames_adjusted = changes.benjamini_hochberg([verdicts[i].test.p_same(verdicts[i].margin) for i in tested])
    out = list(verdicts)
    for i, p_change, p_same in zip(tested, changes_adjusted, sames_adjusted):
        p = p_same if out[i].word == SAME else p_change
        out[i] = replace(out[i], p_adjusted=p)
        if out[i].word in (FASTER, SLOWER, SAME) and p > q:
            out[i] = replace(
                out[i],
                word=INCONCLUSIVE,
                why=f"{out[i].said} by itself, not after Benjamini-Hochberg: adjusted p {p:.2g} > {q:g}",
            )
    return out


# --- the run-to-run spread (noise_floor.toml)


@cache
def floor_file() -> dict:
    """noise_floor.toml, read once."""
    return tomllib.loads(FLOOR_FILE.read_text())


def floor_set(machines: tuple[str, ...]) -> dict | None:
    """The noise_floor.toml machine every one of these runs ran on: its `measured_on` equal to each run's
    identity (compare.machine_of: the CPU model and its cores), never a part of it."""
    return next(
        (
            machine
            for machine in floor_file()["machine"]
            if machines and all(machine["measured_on"] == found for found in machines)
        ),
        None,
    )


def floor_machines() -> list[str]:
    """The CPU models noise_floor.toml holds spreads for, the fallback first."""
    return [machine["measured_on"] for machine in floor_file()["machine"]]


def run_sds(override: float | None = None, machines: tuple[str, ...] = ()) -> dict:
    """{"static": {figure: sd}, "delayed": {...}, "default": sd, "run_df": df or None, "measured": bool,
    "source": "..."}: the run-to-run spreads in force: an override for every figure (taken as known), else those
    measured on the runs' machine with their degrees of freedom, else none: the stated conservative default for
    every figure, never another machine's (compare says so)."""
    if override is not None:
        return {
            STATIC: {},
            DELAYED: {},
            "default": override,
            "run_df": None,
            "measured": True,
            "source": f"sigma_run {override:g} for every figure, given on the command line",
        }
    machine = floor_set(machines)
    if machine is None:
        default = floor_file()["unmeasured"]
        return {
            STATIC: {},
            DELAYED: {},
            "default": default,
            "run_df": None,
            "measured": False,
            "source": f"no spread measured on {', '.join(machines) or 'this machine'}: the conservative default "
            f"{pct(default)} for every figure",
        }
    spreads = machine.get("run_sd", {})
    return {
        STATIC: spreads.get(STATIC, {}),
        DELAYED: spreads.get(DELAYED, {}),
        "default": floor_file()["default"],
        "by_server": machine.get("by_server", {}),
        "run_df": machine.get("run_df"),
        "measured": bool(machine.get("measured")),
        "measured_on": machine["measured_on"],
        "core_speed_ms": machine.get("core_speed_ms"),
        "source": f"{machine['source']}, on {machine['measured_on']}",
    }


def observed_table(observed: dict) -> dict:
    """The spreads `aa --observe-floor` measured on some runs (its JSON), as run_sds gives them: to judge other
    runs by spreads they played no part in. Its `estimate` with its `run_df`, as noise_floor.toml holds them: its
    `run_sd` is the estimate's 95 % upper bound, and the degrees of freedom beside the bound would count the
    estimate's uncertainty twice (a file without `estimate` gives its `run_sd`)."""
    spreads = observed.get("estimate") or observed.get("run_sd") or {}
    runs = observed.get("runs")
    return {
        STATIC: spreads.get(STATIC, {}),
        DELAYED: spreads.get(DELAYED, {}),
        "default": floor_file()["default"],
        "by_server": observed.get("by_server", {}),
        "run_df": observed.get("run_df"),
        "measured": True,
        "measured_on": observed.get("measured_on"),
        "core_speed_ms": observed.get("core_speed_ms"),
        "source": f"aa --observe-floor over {len(runs) if isinstance(runs, list) else runs} other runs",
    }


def run_sd_of(figure: str, kind: str, table: dict, server: str | None = None) -> float:
    """The spread in force for a figure of a kind of point: the server's own where the model has one, else the
    kind's, else the default."""
    own = ((table.get("by_server") or {}).get(kind) or {}).get(str(server)) or {}
    return float(own.get(figure, table[kind].get(figure, table["default"])))


def run_sd_text(table: dict) -> str:
    """The spreads in force in words, for the method line."""
    parts = [
        f"{kind}: " + ", ".join(f"{f} {pct(v)}" for f, v in table[kind].items())
        for kind in (STATIC, DELAYED)
        if table[kind]
    ]
    parts += [
        f"{kind} {server}'s own: " + ", ".join(f"{f} {pct(v)}" for f, v in figures.items())
        for kind, servers in (table.get("by_server") or {}).items()
        for server, figures in servers.items()
    ]
    parts.append(f"any other figure {pct(table['default'])}")
    if table.get("core_speed_ms"):
        parts.append("measured on cores that timed the fixed unit at {:g} to {:g} ms".format(*table["core_speed_ms"]))
    state = "" if table["measured"] else "; NOT measured here"
    return f"{'; '.join(parts)} ({table['source']}{state})"
