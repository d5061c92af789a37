"""One declared request kind (LoadSpec.requests holding one) as the options of a generator that sends one method,
header set and body per run (oha's -m, -H, -d: LoadGenerator.sends "one"). The URL is the spec's own."""

from __future__ import annotations

from .base import LoadgenError, LoadSpec


def flags(spec: LoadSpec, tool: str) -> list[str]:
    """-m METHOD, one -H "Name: value" per header and -d BODY; [] for a spec without declared requests."""
    if not spec.requests:
        return []
    if len(spec.requests) != 1:
        raise LoadgenError(f"{tool} sends one request kind per run, not a mix of {len(spec.requests)}")
    request = spec.requests[0]
    found = ["-m", request["method"]]
    for header, value in request["headers"].items():
        found += ["-H", f"{header}: {value}"]
    if request["body"] is not None:
        found += ["-d", request["body"]]
    return found
