"""One declared request (crossbench.workload's recorded form) sent once, and its answer judged against what it
declares it answers: its status (any 2xx when none is given), a substring of its body, a key of its JSON body
(dotted for nested objects, "a.b"). Before load (run/answer_checks.py) and before each cell (cell/cell_checks.py)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

BODY_SHOWN = 200  # bytes of a refused answer's body the refusal quotes
READ_LIMIT = 1 << 20  # the most of a body read to judge it (a JSON key, a substring)


def send(base_url: str, request: dict, timeout_s: float) -> tuple[int | None, bytes, str]:
    """The request sent as declared: its status and body (up to READ_LIMIT), or no status and why none came."""
    body = request["body"].encode() if request["body"] is not None else None
    sent = urllib.request.Request(
        base_url + request["path"], data=body, headers=request["headers"], method=request["method"]
    )
    return fetch(sent, timeout_s, READ_LIMIT)


def fetch(sent: urllib.request.Request | str, timeout_s: float, limit: int) -> tuple[int | None, bytes, str]:
    """One request (a URL is a GET): its status and the first `limit` bytes of its body, an error status's too, or
    no status and why none came."""
    try:
        with urllib.request.urlopen(sent, timeout=timeout_s) as response:
            return response.status, response.read(limit), ""
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read(limit), ""
    except (urllib.error.URLError, OSError) as e:
        return None, b"", str(getattr(e, "reason", e))


def problem(request: dict, status: int | None, body: bytes, error: str) -> str | None:
    """Why the answer is not the one the request declares, in one line with its name, the status and the first
    BODY_SHOWN bytes of the body; None when it is."""
    said = f"{request['name']} ({request['method']} {request['path']})"
    if status is None:
        return f"{said} got no answer ({error})"
    expect = request["expect"]
    shown = body[:BODY_SHOWN].decode("utf-8", errors="replace")
    if expect["status"] is not None and status != expect["status"]:
        wanted = f"{expect['status']}"
    elif expect["status"] is None and not 200 <= status < 300:
        wanted = "2xx"
    elif expect["body_contains"] is not None and expect["body_contains"] not in body.decode("utf-8", "replace"):
        wanted = f"a body containing {expect['body_contains']!r}"
    elif expect["json_key"] is not None and not has_key(body, expect["json_key"]):
        wanted = f"a JSON body with key {expect['json_key']!r}"
    else:
        return None
    return f"{said} answered {status} where {wanted} was declared; its body begins: {shown!r}"


def has_key(body: bytes, dotted: str) -> bool:
    """The JSON body holds the key: each part of a dotted key an object's key inside the previous one's value."""
    try:
        value = json.loads(body)
    except ValueError:
        return False
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    return True
