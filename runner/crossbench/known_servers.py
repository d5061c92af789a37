"""The servers a run or a reader knows, by name: the built-in ones (builtin_servers.py) in the order legends and
tables show them, and those the run being made or read declares (`declare_recorded`; the runner's servers.declare
registers its own here too). Facts only (server_facts.py): nothing here starts a server."""

from __future__ import annotations

from .builtin_servers import ALL
from .declared_schema import SECTION, DeclarationError, check, refuse_taken
from .server_facts import ServerFacts, declared_facts

BUILT_IN: dict[str, ServerFacts] = {facts.name: facts for facts in ALL}
FACTS: dict[str, ServerFacts] = dict(BUILT_IN)  # and the servers the run being made or read declares


def get(name) -> ServerFacts | None:
    return FACTS.get(name)


def rank(name) -> int:
    """Where a server stands in legends and tables: its place in the registry, unknown ones last."""
    return list(FACTS).index(name) if name in FACTS else len(FACTS)


def knob_names() -> set[str]:
    """Every registered server's record knobs."""
    return {name for facts in FACTS.values() for name in facts.knob_names()}


def register(found: dict[str, ServerFacts]) -> None:
    FACTS.update(found)


def declare_recorded(config: dict, where: str) -> list[str]:
    """The servers a recorded configuration's [server] section declares, registered by their facts; their paths
    need not exist where the run is read. DeclarationError names `where` and the key."""
    tables = config.get(SECTION) or {}
    if not isinstance(tables, dict):
        raise DeclarationError(f"{where}: [{SECTION}] is a table of [{SECTION}.NAME] sections, not {tables!r}")
    refuse_taken(tables, where, BUILT_IN)
    found = {
        name: declared_facts(name, check(name, table, where, None, check_paths=False)) for name, table in tables.items()
    }
    register(found)
    return list(found)


def forget_declared() -> None:
    """Only the built-in servers registered again."""
    FACTS.clear()
    FACTS.update(BUILT_IN)
