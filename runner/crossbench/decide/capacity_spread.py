"""How far one setting's held rate moves between sittings (capacity_spread.toml): per machine and per search, the
rate each independent search of it held, as `python -m crossbench_analysis capacity-aa` measured them. The answer
says it beside the bracket ("moves 5 % between sittings"), and says so where it is wider than the bracket; it
widens nothing, and a setting or a machine not measured gets no figure, never another's."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from crossbench.figures.points import sig
from crossbench.hosts.facts import cpu_model

FILE = Path(__file__).with_name("capacity_spread.toml")


@dataclass(frozen=True)
class SettingSpread:
    series: str
    held_rps: tuple[float, ...]  # the rate each sitting's search held, one a sitting
    machine: str
    source: str

    @property
    def moves(self) -> float:
        """The highest held rate over the lowest, less one: how far another sitting placed it."""
        return max(self.held_rps) / min(self.held_rps) - 1

    def words(self) -> str:
        """'moves 5 % between sittings (3 on AMD EPYC, 2 cores: held 952-1,000 req/s)'."""
        low, high = min(self.held_rps), max(self.held_rps)
        return (
            f"moves {self.moves * 100:.0f} % between sittings ({len(self.held_rps)} on {self.machine}: held "
            f"{sig(low, commas=True)}-{sig(high, commas=True)} req/s)"
        )

    def as_dict(self) -> dict:
        return {
            "moves": round(self.moves, 4),
            "held_rps": list(self.held_rps),
            "machine": self.machine,
            "source": self.source,
        }


def this_machine() -> str:
    return f"{cpu_model()}, {os.cpu_count()} cores"


def for_setting(series: str, machine: str | None = None, path: Path | None = None) -> SettingSpread | None:
    """The spread measured for search `series` on `machine` (default: this one); None where it was not measured
    there in two sittings or more (a machine is named as compare names one: equal, never a part of a name)."""
    machine = machine or this_machine()
    for entry in tomllib.loads((path or FILE).read_text()).get("machine", []):
        if entry.get("measured_on") != machine:
            continue
        for setting in entry.get("setting", []):
            if setting.get("series") == series and len(setting.get("held_rps", [])) >= 2:
                return SettingSpread(
                    series, tuple(float(v) for v in setting["held_rps"]), machine, entry.get("source", "")
                )
    return None


def words(spread: dict | None) -> str:
    """An outcome's `spread` in words, or that none was measured."""
    if not spread:
        return "not measured between sittings on this machine"
    return SettingSpread("", tuple(spread["held_rps"]), spread["machine"], spread.get("source", "")).words()
