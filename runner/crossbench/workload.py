"""A workload file (`--workload FILE`, or `[run] workload = "file.toml"` in an experiment file): the user's own
requests, each a `[[request]]` table, checked before anything starts and turned into the form a run records.

    [[request]]
    name = "order"                      # optional: from method and path otherwise ("post-api-orders")
    method = "POST"                     # default GET
    path = "/api/orders"                # required, starts with /
    headers = { Authorization = "Bearer t" }
    json = { item = 7 }                 # sent as JSON with its Content-Type; or body = "..." (not both)
    weight = 3                          # its share of the mix, default 1, above 0
    expect = { status = 201, body_contains = "id", json_key = "order.id" }   # status default: any 2xx

The recorded form (`requests`) is one dict per request with every key present: name, method, path, headers (a
dict), body (a string or None), weight (a number), expect (status, body_contains, json_key, each None when not
given). A resumed run and the analysis read the requests from there."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

KEYS = ("name", "method", "path", "headers", "body", "json", "weight", "expect")
EXPECT_KEYS = ("status", "body_contains", "json_key")
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
JSON_TYPE = "application/json"
MIX = "mix"  # the group whose cells send the whole file, each request chosen by its weight
MIX_ENDPOINT = "/*"  # the mix group's endpoint: every request of the file (a point id reads it as "mix")
OPTION = "declared_requests"  # the group option (and so the cell plan's) holding the requests its cells send


class WorkloadError(ValueError):
    """A workload file that cannot be used: one line naming the file, the request and the key."""


def read(path: Path | str) -> list[dict]:
    """The file's requests in their recorded form; WorkloadError in one line for the first thing wrong."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise WorkloadError(f"{path}: not TOML ({e})") from None
    except OSError as e:
        raise WorkloadError(f"{path}: cannot be read ({e.strerror})") from None
    return checked(data, str(path))


def checked(data: dict, source: str) -> list[dict]:
    """A parsed workload file's requests, each checked and normalised (see the module's docstring)."""
    unknown = sorted(set(data) - {"request"})
    if unknown:
        raise WorkloadError(f"{source}: unknown key {unknown[0]!r}: a workload file holds [[request]] tables only")
    given = data.get("request")
    if not isinstance(given, list) or not given or not all(isinstance(r, dict) for r in given):
        raise WorkloadError(f"{source}: no [[request]] tables: give at least one, each with a path")
    requests, names = [], set()
    for index, table in enumerate(given, start=1):
        request = normalised(table, RequestWhere(source, index, table))
        if request["name"] in names:
            raise RequestWhere(source, index, table).error("name", f"{request['name']!r} names an earlier request")
        names.add(request["name"])
        requests.append(request)
    return requests


class RequestWhere:
    """Where a request sits, for its one-line errors: the file, its index (from 1) and its name when it has one."""

    def __init__(self, source: str, index: int, table: dict):
        self.source, self.index = source, index
        self.name = table.get("name") if isinstance(table.get("name"), str) else None

    def error(self, key: str, problem: str) -> WorkloadError:
        named = f" ({self.name})" if self.name else ""
        return WorkloadError(f"{self.source}: request {self.index}{named}: {key}: {problem}")


def normalised(table: dict, where: RequestWhere) -> dict:
    for key in table:
        if key not in KEYS:
            raise where.error(key, f"unknown key; a request takes {', '.join(KEYS)}")
    path = table.get("path")
    if path is None:
        raise where.error("path", "missing: every request has a path, as path = \"/api/orders\"")
    if not isinstance(path, str) or not path.startswith("/") or any(c.isspace() for c in path) or "#" in path:
        raise where.error("path", f"a path starting with /, without spaces or #, not {path!r}")
    method = typed(table, "method", str, "a string such as \"POST\"", where, "GET").upper()
    if method not in METHODS:
        raise where.error("method", f"one of {', '.join(METHODS)}, not {method!r}")
    headers = typed(table, "headers", dict, "a table of header names to strings", where, {})
    for header, value in headers.items():
        if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+", header):
            raise where.error("headers", f"{header!r} = {value!r}: a header name and a string value")
    headers = dict(headers)
    if "body" in table and "json" in table:
        raise where.error("body", "body and json both given: keep one (json sends a table as JSON)")
    body = typed(table, "body", str, "a string (or json = { ... } for a JSON body)", where, None)
    if "json" in table:
        body = json.dumps(typed(table, "json", dict, "a table sent as JSON", where, {}), separators=(",", ":"))
        if not any(h.lower() == "content-type" for h in headers):
            headers["Content-Type"] = JSON_TYPE
    weight = table.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight > 0:
        raise where.error("weight", f"a number above 0, not {weight!r}")
    return {
        "name": typed(table, "name", str, "a string", where, None) or default_name(method, path),
        "method": method,
        "path": path,
        "headers": headers,
        "body": body,
        "weight": weight,
        "expect": expectation(table.get("expect", {}), where),
    }


def typed(table: dict, key: str, kind: type, wanted: str, where: RequestWhere, default):
    value = table.get(key, default)
    if key in table and not isinstance(value, kind):
        raise where.error(key, f"{wanted}, not {value!r}")
    return value


def expectation(expect: object, where: RequestWhere) -> dict:
    if not isinstance(expect, dict):
        raise where.error("expect", f"a table such as {{ status = 200 }}, not {expect!r}")
    for key in expect:
        if key not in EXPECT_KEYS:
            raise where.error(f"expect.{key}", f"unknown key; expect takes {', '.join(EXPECT_KEYS)}")
    status = expect.get("status")
    if status is not None and (isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599):
        raise where.error("expect.status", f"an HTTP status (100 to 599), not {status!r}")
    for key in ("body_contains", "json_key"):
        if key in expect and (not isinstance(expect[key], str) or not expect[key]):
            raise where.error(f"expect.{key}", f"a non-empty string, not {expect[key]!r}")
    return {"status": status, "body_contains": expect.get("body_contains"), "json_key": expect.get("json_key")}


def default_name(method: str, path: str) -> str:
    """A request's name from its method and path, as a group name can carry it: GET /api/orders is get-api-orders."""
    return f"{method.lower()}-{re.sub(r'[^A-Za-z0-9]+', '-', path).strip('-').lower() or 'root'}"


def declared(options: dict | None) -> list[dict]:
    """The requests a group's or cell's options declare (OPTION), [] for none."""
    return list((options or {}).get(OPTION) or [])


def plain_get(request: dict) -> bool:
    """A GET with no headers and no body: what every load generator can send."""
    return request["method"] == "GET" and not request["headers"] and request["body"] is None


def user_endpoints(run: dict) -> list[str]:
    """The endpoints a run's [run] paths and [run] requests name, to register as the user's
    (endpoints.declare_user): a planned run, a resumed one and the analysis alike."""
    requests = run.get("requests") or []
    found = [*(run.get("paths") or []), *(r["path"] for r in requests if isinstance(r, dict) and "path" in r)]
    return [*dict.fromkeys(found), *([MIX_ENDPOINT] if requests else [])]
