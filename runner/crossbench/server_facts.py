"""What is known of a server without starting it: its name, its knobs, its charts' shades, the knob that counts its
processes, the knob that sizes the one pool serving each blocking endpoint, whether the suite starts it and whether
it runs on Python. A record's reader needs no more of a server than this, so reading a run loads no code that
starts one; each server plug-in (crossbench/servers/) is built on its facts (builtin_servers.py, or a declared
server's table through `declared_facts`), and known_servers.py registers them by name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .knobs import Knob

PYTHON_KNOB = "python"  # the Python servers' interpreter (builtin_servers.PYTHON)

# A declared server's shades: magentas, its own colour, then a ramp from lighter to darker for its settings.
DECLARED_PALETTE = ("#c51b7d", "#df82b8", "#d864a7", "#d04796", "#c92a85", "#b81975", "#9f1665", "#861255", "#6c0f45")


@dataclass(frozen=True)
class ServerFacts:
    name: str
    knobs: tuple[Knob, ...] = ()
    palette: tuple[str, ...] = ()  # its own colour first, then its settings' shades in setting order
    process_knob: str | None = None  # the knob that sets how many processes serve (worker sweeps)
    pools: Mapping[str, str] = field(default_factory=dict)  # endpoint -> the knob sizing the pool that serves it
    starts: bool = True  # False: a server the user started and keeps running (--target)

    def knob_names(self) -> set[str]:
        """The knobs its records carry at the top level."""
        return {k.name for k in self.knobs if k.in_record}

    @property
    def python(self) -> bool:
        """It runs on an interpreter the run chooses, and its records say which (the `python` knob)."""
        return PYTHON_KNOB in self.knob_names()


def declared_facts(name: str, declaration: dict) -> ServerFacts:
    """A declared server's facts from its checked table (declared_schema.check): each knob swept, a label
    name=value; `parallel` names its pools."""
    knobs = tuple(
        Knob(
            knob_name,
            knob["default"],
            f"declared knob {{{knob_name}}}",
            kind="int" if isinstance(knob["default"], int) else "text",
            sweep=True,
            label=f"{knob_name}={{}}",
        )
        for knob_name, knob in declaration["knobs"].items()
    )
    return ServerFacts(
        name,
        knobs,
        palette=DECLARED_PALETTE,
        process_knob=declaration["processes"],
        pools=dict(declaration["parallel"]),
    )
