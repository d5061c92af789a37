"""A server's settings as data: the Knob (a config key with its default, its kind and how its value reads in a
label), the database knobs every server with database endpoints shares, and the error a refused value raises.
A foundation module: a record's reader and the server plug-ins both stand on it."""

from __future__ import annotations

from dataclasses import dataclass

from .refusal import Refusal


class SettingsError(Refusal, ValueError):
    """A knob's value is refused (the message names the knob and what it accepts)."""


@dataclass(frozen=True)
class Knob:
    """One setting of a server. `kind`: "int" (positive integer), "choice" (one of `choices`), "text", "bool",
    "list" (list of strings). A `sweep` knob may be a list in an experiment file: one cell per value."""

    name: str
    default: object
    help: str
    kind: str = "int"
    choices: tuple[str, ...] = ()
    sweep: bool = False
    in_record: bool = True  # copied to the top level of each cell's record
    label: str = ""  # how a value reads in a chart's series label ("maxThreads={}"); "": not shown

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def check(self, value, server: str):
        def refuse(accepts: str):
            raise SettingsError(f"{server}: {self.name} must be {accepts}, not {value!r}")

        if value is None:
            return None
        if self.kind == "int" and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            refuse("a positive integer")
        if self.kind == "choice" and value not in self.choices:
            refuse("one of " + ", ".join(self.choices))
        if self.kind == "text" and not isinstance(value, str):
            refuse("a string")
        if self.kind == "bool" and not isinstance(value, bool):
            refuse("true or false")
        if self.kind == "list" and not (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)):
            refuse("a list of strings")
        return tuple(value) if self.kind == "list" else value


# Every server with database endpoints has it: PgBouncer's cells (group pooler) turn it off.
DB_PREPARED = Knob(
    "db_prepared",
    True,
    "server-side prepared statements (off: PgBouncer 1.18 in transaction mode cannot keep them)",
    kind="bool",
)
DB_WAIT_MS = Knob("db_wait_ms", 5000, "how long a request waits for a pooled connection before its 503")


def db_knobs(pool: int, pool_help: str) -> tuple[Knob, ...]:
    """The database knobs every server with database endpoints has: its pool, the wait, prepared statements."""
    return Knob("db_pool", pool, pool_help), DB_WAIT_MS, DB_PREPARED
