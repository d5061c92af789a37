"""Whether a noise model holds for the runs compared: it was measured on one machine (its CPU model and cores) over
a range of its cores' speed readings (the fixed unit of arithmetic each run times before its first cell), and a
VM's cores can change speed between days, which moves every CPU-bound figure with it.

- A run whose reading lies inside the model's range: the model's spreads as they are.
- Outside it by a factor f up to REFUSE_FACTOR: the static (CPU-bound) figures' spread widened by log f in
  quadrature (a CPU-bound figure moves by about the speed's factor), the delayed ones' kept (a hold sets their
  throughput), said in one line.
- Farther than that: compare refuses in one line (a spread measured elsewhere says nothing there), unless the
  spread is given (--noise-floor).
- A run with no reading: said, not checked.
"""

from __future__ import annotations

import math

from crossbench_analysis.read.runinfo import AnalysisError

from . import compare_stats

REFUSE_FACTOR = 2.0


class MachineDiffers(AnalysisError):
    """A run's cores ran too far from the speeds the noise model was measured over (exit status 2)."""


def core_speed_ms(metadata: dict) -> float | None:
    """A run's cores' speed reading: the mean over its cores of the median time of the fixed unit timed before the
    run (metadata noise_floor.core_speed.per_core); None where the run did not time it."""
    per_core = ((metadata.get("noise_floor") or {}).get("core_speed") or {}).get("per_core") or {}
    medians = [c["median_ms"] for c in per_core.values() if isinstance(c, dict) and c.get("median_ms")]
    return sum(medians) / len(medians) if medians else None


def outside(reading: float, low: float, high: float) -> float:
    """How far a reading lies outside [low, high], as a factor (1: inside)."""
    return max(1.0, low / reading, reading / high)


def checked(table: dict, readings: dict[str, float | None]) -> tuple[dict, list[str]]:
    """The spreads in force for runs of these core speed readings (run name -> ms), and the notes that say why
    they were widened or not checked; MachineDiffers when a reading is beyond REFUSE_FACTOR of the range."""
    span = table.get("core_speed_ms")
    if not span or not table.get("measured"):
        return table, []
    low, high = span
    notes = [
        f"{name} did not time its cores before the run: whether the noise model (cores at {low:g}-{high:g} "
        "ms a unit) holds for it is not checked"
        for name, ms in readings.items()
        if ms is None
    ]
    factors = {name: outside(ms, low, high) for name, ms in readings.items() if ms is not None}
    worst = max(factors, key=factors.get, default=None)
    if worst is None or factors[worst] == 1.0:
        return table, notes
    said = (
        f"{worst}'s cores timed the fixed unit at {readings[worst]:.3g} ms, {factors[worst]:.2f} times outside "
        f"the {low:g}-{high:g} ms the noise model of {table.get('measured_on')} was measured over"
    )
    if factors[worst] > REFUSE_FACTOR:
        raise MachineDiffers(
            f"{said}, more than {REFUSE_FACTOR:g} times: its spreads say nothing there; measure "
            "this machine's again (aa --observe-floor) or give one with --noise-floor SD"
        )
    extra = math.log(factors[worst])
    widened = {figure: round(math.sqrt(sd**2 + extra**2), 4) for figure, sd in table[compare_stats.STATIC].items()}
    servers = {
        server: {figure: round(math.sqrt(sd**2 + extra**2), 4) for figure, sd in figures.items()}
        for server, figures in ((table.get("by_server") or {}).get(compare_stats.STATIC) or {}).items()
    }
    by_server = {**(table.get("by_server") or {}), compare_stats.STATIC: servers}
    notes.append(
        f"{said}: the static (CPU-bound) figures' spread widened by log {factors[worst]:.2f} = "
        f"{extra:.3f} in quadrature, the delayed ones' kept"
    )
    return {
        **table,
        compare_stats.STATIC: widened,
        "by_server": by_server,
        "source": f"{table['source']}; static widened for the cores' speed",
    }, notes
