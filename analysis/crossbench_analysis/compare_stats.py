"""compare's statistics: per matched point and figure, B/A from the launches of each run, its 95 % interval, the
test that gave it, and a verdict a statistician would sign.

- A figure with fewer than two launches on a side: "cannot tell" (one launch has no error to weigh a change
  against), never a fixed threshold posing as a test.
- Otherwise Welch's t on the log values (crossbench.stats.log_ratio: a change in throughput or latency is a
  factor): when the 95 % interval of B/A leaves 1 and the change is larger than the noise floor, B is "faster"
  or "slower"; else "no difference".
- The noise floor: two runs differ by more than the launches within each vary (the machine drifts between
  runs), so a change below the run-to-run floor measured on this machine is "no difference" even when its
  interval leaves 1, as criterion's noise threshold does. The floors are data (noise_floor.toml, with how they
  were measured); --noise-floor overrides them.
- Two variants inside one run (compare_within.py, judge_paired): launches paired by round, the paired t on the
  log values, no floor (one run has no run-to-run drift, and the pairing takes out the drift within it).
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from crossbench import stats

FLOOR_FILE = Path(__file__).with_name("noise_floor.toml")
# Figures where less is better; every other figure is better higher (throughput).
LOWER_IS_BETTER_PREFIXES = ("latency_ms.", "efficiency_ratio", "latency_ratio", "rss", "cpu", "threads")
FASTER, SLOWER, SAME, CANNOT_TELL, NO_VALUE = "faster", "slower", "no difference", "cannot tell", "no value"


@dataclass(frozen=True)
class Verdict:
    figure: str
    a: float | None            # the point's value in each run
    b: float | None
    test: stats.RatioTest | None
    floor: float
    word: str

    @property
    def ratio(self) -> float | None:
        return self.test.ratio if self.test else None

    @property
    def changed(self) -> bool:
        return self.word in (FASTER, SLOWER)


def floors(override: float | None = None, cpu_models: tuple[str, ...] = ()) -> dict:
    """{"default": f, figure: f, ..., "source": "..."}: the noise floors in force: --noise-floor, else those
    measured on the runs' CPU model, else the first machine's in noise_floor.toml (compare notes that)."""
    if override is not None:
        return {"default": override, "source": f"--noise-floor {override:g}"}
    machine = floor_set(cpu_models) or floor_file()["machine"][0]
    return {"default": floor_file()["default"], **machine.get("figures", {}),
            "source": f"{machine['source']}, on {machine['measured_on']}"}


@cache
def floor_file() -> dict:
    """noise_floor.toml, read once."""
    return tomllib.loads(FLOOR_FILE.read_text())


def floor_set(cpu_models: tuple[str, ...]) -> dict | None:
    """The noise_floor.toml machine whose CPU model (a part of its name) every one of these runs ran on."""
    return next((machine for machine in floor_file()["machine"]
                 if cpu_models and all(machine["measured_on"] in model for model in cpu_models)), None)


def floor_machines() -> list[str]:
    """The CPU models noise_floor.toml holds floors for, the fallback first."""
    return [machine["measured_on"] for machine in floor_file()["machine"]]


def floor_of(figure: str, floor_table: dict) -> float:
    return float(floor_table.get(figure, floor_table["default"]))


def lower_is_better(figure: str) -> bool:
    return figure.startswith(LOWER_IS_BETTER_PREFIXES)


def judge(figure: str, a_values: list[float], b_values: list[float], a_value, b_value, floor: float) -> Verdict:
    a_values = [v for v in a_values if v and v > 0]
    b_values = [v for v in b_values if v and v > 0]
    if not a_values or not b_values:
        return Verdict(figure, a_value, b_value, None, floor, NO_VALUE)
    return verdict_of(figure, stats.log_ratio(a_values, b_values), a_value, b_value, floor)


def judge_paired(figure: str, pairs: list[tuple[float, float]], a_value, b_value) -> Verdict:
    """Two variants launched in the same rounds of one run, (a, b) per round: the paired test, and no noise
    floor (the floor stands for the drift between runs, which one run does not have)."""
    pairs = [(a, b) for a, b in pairs if a and b and a > 0 and b > 0]
    if not pairs:
        return Verdict(figure, a_value, b_value, None, 0.0, NO_VALUE)
    return verdict_of(figure, stats.paired_log_ratio(pairs), a_value, b_value, 0.0)


def verdict_of(figure: str, test: stats.RatioTest, a_value, b_value, floor: float) -> Verdict:
    if test.low is None:
        return Verdict(figure, a_value, b_value, test, floor, CANNOT_TELL)
    beyond_noise = (test.low > 1 or test.high < 1) and abs(test.ratio - 1) > floor
    if not beyond_noise:
        return Verdict(figure, a_value, b_value, test, floor, SAME)
    better = (test.ratio < 1) if lower_is_better(figure) else (test.ratio > 1)
    return Verdict(figure, a_value, b_value, test, floor, FASTER if better else SLOWER)
