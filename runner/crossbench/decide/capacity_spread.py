"""A capacity search's run-to-run spread, per machine (capacity_spread.toml): what it is, and what it does to an
answer: the bracket stops narrowing below it, and a capacity's interval is at least its width."""
from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from crossbench.hosts.facts import cpu_model

FILE = Path(__file__).with_name("capacity_spread.toml")
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Spread:
    run_sd: float                 # on logs: between runs of one setting's search
    run_df: int | None            # degrees of freedom it rests on; None for the stated default
    machine: str
    measured: bool
    source: str

    def factor(self) -> float:
        """How far either way a second run may place a capacity (95 %): exp(t x run_sd)."""
        from scipy import stats as scipy_stats    # here: 1.3 s to import, paid by every run_all.sh start otherwise
        t = scipy_stats.t.ppf(0.5 + CONFIDENCE / 2, self.run_df) if self.run_df else \
            scipy_stats.norm.ppf(0.5 + CONFIDENCE / 2)
        return math.exp(t * self.run_sd)

    def words(self) -> str:
        if self.measured:
            return f"run-to-run spread {self.run_sd:.1%} (measured on {self.machine}, {self.run_df} df)"
        return f"run-to-run spread {self.run_sd:.0%} (a stated default: none measured on {self.machine})"

    def as_dict(self) -> dict:
        return {"run_sd": self.run_sd, "run_df": self.run_df, "machine": self.machine, "measured": self.measured,
                "source": self.source}


def this_machine() -> str:
    return f"{cpu_model()}, {os.cpu_count()} cores"


def for_machine(machine: str | None = None, path: Path = FILE) -> Spread:
    """The spread measured on `machine` (default: this one), else the file's stated `unmeasured`."""
    machine = machine or this_machine()
    table = tomllib.loads(path.read_text())
    for entry in table.get("machine", []):
        if entry.get("measured_on") == machine:
            return Spread(float(entry["run_sd"]), int(entry["run_df"]), machine, True, entry.get("source", ""))
    return Spread(float(table["unmeasured"]), None, machine, False, "unmeasured: the stated default")


def widened(value: float, low: float, high: float, spread: Spread) -> tuple[float, float]:
    """A capacity's interval with the run-to-run spread in it: at least value / factor to value x factor."""
    factor = spread.factor()
    return min(low, value / factor), max(high, value * factor)
