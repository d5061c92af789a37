"""Durations as wrk, k6 and Go write them: a number with its unit, or several in a row (500ms, 1.5s, 2m, 1h, 1m30s).
A bare number is refused, its unit being ambiguous (seconds for a window, milliseconds for a delay), except 0,
which is 0 in any unit. Every command line and experiment file that takes a duration reads it here."""

from __future__ import annotations

import math
import re

UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
FORMS = "a number with its unit: 500ms, 1.5s, 30s, 2m, 1h, 1m30s"
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)")


class DurationError(ValueError):
    """A text that is no duration, or one out of the range asked for; the message is one line."""


def seconds(text: str, *, zero: bool = True) -> float:
    """`text` in seconds. `zero` False: 0 is refused too (a window must last). Raises DurationError."""
    raw = str(text).strip().lower()
    if re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)", raw):
        if float(raw) == 0:
            value = 0.0
        else:
            raise DurationError(f"{text!r} has no unit: write {raw}s, {raw}ms or {raw}m ({FORMS})")
    elif raw.startswith("-"):
        raise DurationError(f"{text!r}: a duration is not negative ({FORMS})")
    else:
        parts = _PART.findall(raw)
        if not parts or "".join(number + unit for number, unit in parts) != raw:
            raise DurationError(f"{text!r} is not a duration: give {FORMS}")
        value = sum(float(number) * UNITS[unit] for number, unit in parts)
    if not math.isfinite(value):
        raise DurationError(f"{text!r} is not a duration: give {FORMS}")
    if value == 0 and not zero:
        raise DurationError(f"{text!r}: give a duration above 0 ({FORMS})")
    return value


def whole_milliseconds(text: str, *, least: int = 0, most: int | None = None) -> int:
    """`text` in milliseconds, a whole number from `least` to `most`. Raises DurationError."""
    ms = seconds(text) * 1000
    rounded = round(ms)
    if abs(ms - rounded) > 1e-6:
        raise DurationError(f"{text!r} is not a whole number of milliseconds")
    if rounded < least or (most is not None and rounded > most):
        bound = f"from {least} ms" + (f" to {most} ms" if most is not None else "")
        raise DurationError(f"{text!r}: give a duration {bound} ({FORMS})")
    return rounded


def text(value_s: float) -> str:
    """Seconds as the shortest form `seconds` reads back: 0.5 -> '500ms', 90 -> '1m30s', 10 -> '10s'."""
    if value_s == 0:
        return "0s"
    if value_s < 1:
        return f"{value_s * 1000:g}ms"
    hours, rest = divmod(value_s, 3600)
    minutes, secs = divmod(rest, 60)
    found = (f"{hours:g}h" if hours else "") + (f"{minutes:g}m" if minutes else "") + (f"{secs:g}s" if secs else "")
    return found
