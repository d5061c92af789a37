"""Load generator adapters, registered by name.

Each adapter is a module exposing the same small surface:

    name                          the tool's name, as in --loadgen
    OPEN_LOOP (optional)          True for a generator that sends on a schedule (LoadSpec.rate)
    KEEPALIVE (optional)          False for a generator that opens one connection per request, always
    available() -> bool           the tool is on PATH (oha, k6: or built in the tools cache)
    version() -> str              the tool's own version string
    build_command(spec, out_dir)  the exact argv run() will execute (raises LoadgenError if refused)
    run(spec, out_dir)            run it bounded in time, keep its raw output in out_dir, parse it
    parse(out_dir or text)        a LoadResult from the raw output alone

See README.md in this folder for where each latency figure comes from.
"""
from __future__ import annotations

from types import ModuleType

from crossbench.loadgen import ab, http_load, k6, oha, wrk
from crossbench.loadgen.base import LoadgenError

ADAPTERS: dict[str, ModuleType] = {
    "wrk": wrk,
    "ab": ab,
    "http_load": http_load,
    "oha": oha,        # open loop (LoadSpec.rate): runner/install-openloop.sh builds it
    "k6": k6,          # open loop, the cross-check
}


def get(name: str) -> ModuleType:
    try:
        return ADAPTERS[name]
    except KeyError:
        raise LoadgenError(f"unknown load generator {name!r}; known: {', '.join(ADAPTERS)}") from None
