"""A workload file's requests (LoadSpec.requests) as the Lua chunk runner/lua/report.lua loads: a table of
{ method, path, headers, body, weight } per request, every string quoted byte by byte so that any header value or
body (quotes, newlines, UTF-8) reaches wrk.format() as given."""

from __future__ import annotations

from pathlib import Path

FILE = "wrk-requests.lua"  # beside the cell's other raw files


def lua_string(text: str) -> str:
    """A Lua string literal of the text's UTF-8 bytes: printable ASCII as is (but quote and backslash), every
    other byte as a three-digit decimal escape (Lua 5.1's \\ddd, which no following digit can extend)."""
    out = []
    for byte in text.encode():
        char = chr(byte)
        out.append(f"\\{byte:03d}" if byte < 32 or byte > 126 or char in '"\\' else char)
    return '"' + "".join(out) + '"'


def lua_number(value: float) -> str:
    return repr(float(value))


def rendered(requests) -> str:
    """The chunk: `return { {...}, ... }`, one line per request."""
    lines = ["return {"]
    for request in requests:
        headers = ", ".join(f"[{lua_string(k)}] = {lua_string(v)}" for k, v in request["headers"].items())
        body = "nil" if request["body"] is None else lua_string(request["body"])
        lines.append(
            f"  {{ method = {lua_string(request['method'])}, path = {lua_string(request['path'])}, "
            f"headers = {{ {headers} }}, body = {body}, weight = {lua_number(request['weight'])} }},"
        )
    return "\n".join([*lines, "}"]) + "\n"


def written(requests, out_dir: Path) -> Path:
    """The chunk written as FILE in out_dir (wrk.build_command names it there)."""
    path = Path(out_dir) / FILE
    path.write_text(rendered(requests))
    return path
