"""Every record field in one list, and a record checked against it: a record carries exactly the fields declared
for its kind, server and status (record.py says who declares what), no more, no fewer.

    python -m crossbench.cell.fields          # every field with its line of documentation, grouped by who writes it
    problems(record)                     # what is wrong with one record, each naming the field and the cell
"""

from __future__ import annotations

import sys

from crossbench import servers
from crossbench.drivers import DRIVERS
from crossbench.record import record


def owners() -> dict[str, dict[str, str]]:
    """Who declares which fields, each with its documentation: the cell lifecycle's groups, each driver's FIELDS,
    each server plug-in's knobs and FIELDS."""
    found = {
        "every record (cell lifecycle)": record.PLANNED,
        "every measured record (cell lifecycle)": record.MEASURED,
        "database cells (cell lifecycle)": record.DATABASE,
        "failed cells (cell lifecycle)": record.FAILURE,
        "every record, null unless its driver writes them": record.DRIVER_DEFAULTS,
    }
    for kind, driver in DRIVERS.items():
        found[f"driver {kind}"] = driver.FIELDS
    for name, plugin in servers.PLUGINS.items():
        found[f"server {name}"] = {**{k.name: k.help for k in plugin.knobs if k.in_record}, **plugin.FIELDS}
    return found


def expected(rec: dict) -> dict[str, str]:
    """The fields `rec` must carry, each with who declares it; raises ValueError for an unknown kind or server."""
    kind, server = rec.get("kind"), rec.get("server")
    if kind not in DRIVERS or server not in servers.PLUGINS:
        raise ValueError(f"{rec.get('cell_id')}: unknown kind {kind!r} or server {server!r}")
    plugin = servers.PLUGINS[server]
    groups = {
        "every record": record.PLANNED,
        "every record, null unless its driver writes them": record.DRIVER_DEFAULTS,
        f"server {server}'s knobs": {k.name: "" for k in plugin.knobs if k.in_record},
    }
    if rec.get("status") == "failed":
        groups |= {"failed cells": {**dict.fromkeys(record.FAILED_MEASURED, ""), **record.FAILURE}}
    else:
        groups |= {
            "every measured record": record.MEASURED,
            f"driver {kind}": DRIVERS[kind].FIELDS,
            f"server {server}": plugin.FIELDS,
        }
        if rec.get("endpoint") in servers.DB_ENDPOINTS:
            groups |= {"database cells": record.DATABASE}
    return {name: owner for owner, fields in groups.items() for name in fields}


def problems(rec: dict) -> list[str]:
    """Each declared field `rec` lacks and each field it carries that nothing declares for it, naming the cell."""
    want = expected(rec)
    cell = f"{rec.get('cell_id')} ({rec.get('kind')}, {rec.get('server')}, {rec.get('status')})"
    return [f"{cell}: declared field {name!r} ({want[name]}) is missing" for name in sorted(set(want) - set(rec))] + [
        f"{cell}: field {name!r} is declared nowhere for this record (record.py, its driver's or its server's FIELDS)"
        for name in sorted(set(rec) - set(want))
    ]


def main(argv: list[str]) -> int:
    if argv:
        print("usage: python -m crossbench.cell.fields   (every record field with its documentation)", file=sys.stderr)
        return 2
    for owner, fields in owners().items():
        print(f"\n{owner}:" if fields else f"\n{owner}: (none of its own)")
        for name, doc in fields.items():
            print(f"  {name}: {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
