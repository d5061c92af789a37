"""What the machine did during a run, in words, for the report's header: the cores' speed before it (the noise
floor's fixed unit per core), and in the launches' windows the steal, the foreign CPU and the launches flagged
noisy_host; with a warning when any of it could move the headline figures.

The limits are the runner's own (metadata noise_floor.limits, crossbench/sampling/noise.py): a launch is flagged
when what foreign CPU and steal could take from its figures passes noise_impact_percent."""

from __future__ import annotations

from statistics import median

CORE_SPREAD_WARN = 0.15  # the fastest and slowest core's medians this far apart: launches differ by core
SHARED_BELOW = 0.9  # a core probe with less of its core than this measured sharing (sampling/core_speed.py)


def core_speed(meta: dict) -> tuple[str, float | None]:
    """'the cores timed a fixed unit at 6.8 and 6.3 ms (medians, 8 % apart)', and that spread (None: not timed)."""
    per_core = ((meta.get("noise_floor") or {}).get("core_speed") or {}).get("per_core") or {}
    medians = {core: c.get("median_ms") for core, c in sorted(per_core.items()) if c.get("median_ms")}
    if not medians:
        return "the cores' speed was not timed before the run", None
    spread = max(medians.values()) / min(medians.values()) - 1
    shown = " and ".join(f"{v:.1f}" for v in medians.values())
    shared = [
        f"core {core} had {c['core_share_percent']:.0f} % of its time"
        for core, c in sorted(per_core.items())
        if c.get("core_share_percent") is not None and c["core_share_percent"] < 100 * SHARED_BELOW
    ]
    said = (
        f"before the run, cores {', '.join(medians)} timed a fixed unit at {shown} ms (medians, "
        f"{100 * spread:.0f} % apart)"
    )
    if shared:
        return f"{said}, but the probe shared its core ({', '.join(shared)}): that spread is not the cores'", None
    return said, spread


def during(cells: list[dict]) -> tuple[str, int]:
    """'in the launches' windows steal at most 0.1 %, foreign CPU median 0.4 %, at most 12 % of a core; 0 of 108
    launches flagged noisy_host', and how many were flagged."""
    steal = [c["steal_percent"] for c in cells if c.get("steal_percent") is not None]
    foreign = [c["foreign_cpu_percent"] for c in cells if c.get("foreign_cpu_percent") is not None]
    noisy = sum(1 for c in cells if "noisy_host" in (c.get("flags") or []))
    parts = []
    if steal:
        parts.append(f"steal at most {max(steal):.1f} %")
    if foreign:
        parts.append(f"foreign CPU median {median(foreign):.1f} %, at most {max(foreign):.0f} % of a core")
    said = "in the launches' windows " + ", ".join(parts) if parts else "no noise figures in the launches' records"
    return f"{said}; {noisy} of {len(cells)} launches flagged noisy_host", noisy


def header(meta: dict, cells: list[dict]) -> dict:
    """{"text": the two sentences, "warning": why the headline figures could have moved, or ""}."""
    speed, spread = core_speed(meta)
    windows, noisy = during(cells)
    warnings = []
    if spread is not None and spread > CORE_SPREAD_WARN:
        warnings.append(
            f"the cores' speeds differed by {100 * spread:.0f} % before the run, so a figure may "
            "depend on the core a role ran on"
        )
    if noisy:
        warnings.append(
            f"{noisy} launch{'es' if noisy != 1 else ''} ran beside foreign work that could move their figures past the "
            "precision target: the points left them out and launched them again where they could"
        )
    return {"text": f"The machine: {speed}; {windows}.", "warning": "; ".join(warnings)}
