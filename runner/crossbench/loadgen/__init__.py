"""Load generators, registered by name. Each adapter module (wrk.py, ab.py, http_load.py, oha.py, k6.py,
vegeta.py) declares one LoadGenerator (base.py: every attribute with its default and meaning) as its GENERATOR;
ADAPTERS holds them.

See README.md in this folder for where each latency figure comes from.
"""

from __future__ import annotations

from types import ModuleType

from crossbench.loadgen import ab, http_load, k6, oha, vegeta, wrk
from crossbench.loadgen.base import LoadGenerator, LoadgenError


def register(module: ModuleType, registry: dict[str, LoadGenerator] | None = None) -> LoadGenerator:
    """The adapter module's GENERATOR, added to `registry` (default ADAPTERS) under its name. TypeError for a
    module without one, one whose name differs from its GENERATOR's, or a name registered twice."""
    registry = ADAPTERS if registry is None else registry
    found = vars(module)
    generator = found.get("GENERATOR")
    if not isinstance(generator, LoadGenerator):
        raise TypeError(f"load generator module {module.__name__} declares no GENERATOR = LoadGenerator(...)")
    if found.get("name", generator.name) != generator.name:
        raise TypeError(
            f"load generator module {module.__name__}: its name {found['name']!r} is not its "
            f"GENERATOR's {generator.name!r}"
        )
    if generator.name in registry:
        raise TypeError(f"load generator {generator.name!r} registered twice ({module.__name__})")
    registry[generator.name] = generator
    return generator


ADAPTERS: dict[str, LoadGenerator] = {}
for _adapter in (
    wrk,
    ab,
    http_load,
    oha,  # open loop (LoadSpec.rate): runner/install-openloop.sh builds it
    k6,  # open loop, the cross-check
    vegeta,  # held windows only: builds in a minute (the quick profile's)
):
    register(_adapter)
DEFAULT = "wrk"  # a run's generator unless its experiment or --loadgen names another, and a peak cell's


def holding_window() -> str:
    """The generator that measures a held window (LoadGenerator.holds_window): the first registered."""
    return next(name for name, generator in ADAPTERS.items() if generator.holds_window)


def on_load_hosts(how: str) -> list[str]:
    """The generators load hosts get that way (LoadGenerator.on_load_hosts: "prerequisites" or "build")."""
    return [name for name, generator in ADAPTERS.items() if how == generator.on_load_hosts]


def get(name: str) -> LoadGenerator:
    try:
        return ADAPTERS[name]
    except KeyError:
        raise LoadgenError(f"unknown load generator {name!r}; known: {', '.join(ADAPTERS)}") from None
