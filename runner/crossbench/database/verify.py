"""Verified before measured (database cells): every database endpoint answers well-formed JSON from the real
tables (/fortunes its HTML page, /updates rows the table then holds), and N requests run exactly N queries (N x
queries for /queries; N x queries reads and as many UPDATEs for /updates), counted by pg_stat_statements, as
TechEmpower's verification counts them. A cell that fails either is not measured."""

from __future__ import annotations

import json
import re
import urllib.request
from dataclasses import dataclass

from .. import tfb
from ..endpoints import Request
from .checks import STATEMENTS, reset_statements, statement_calls
from .cluster import psql

COUNT_REQUESTS = 20
VERIFY_DELAY_MS = 1  # /db/slow's delay while verifying: the statement still sleeps, briefly
WORLD_ROWS = 10_000
KV_KEY = re.compile(r"^\d{10}$")
KV_VALUE = re.compile(r"^[A-Za-z]{20}$")


class VerifyFailed(RuntimeError):
    pass


@dataclass(frozen=True)
class QueryCount:
    expected: int
    counted: int


def fetch(url: str) -> tuple[dict, bytes]:
    """A 200 answer's headers (lower-case names) and body, its headers held to TechEmpower's rule."""
    with urllib.request.urlopen(url, timeout=10) as response:
        headers = {name.lower(): value for name, value in response.headers.items()}
        body = response.read()
    if response.status != 200:
        raise VerifyFailed(f"{url}: {response.status}")
    try:
        tfb.check_headers(headers, body, url)
    except tfb.RuleBroken as e:
        raise VerifyFailed(str(e)) from e
    return headers, body


def get_json(url: str):
    headers, body = fetch(url)
    if "application/json" not in headers.get("content-type", ""):
        raise VerifyFailed(f"{url}: Content-Type {headers.get('content-type')}")
    return json.loads(body)


def check_fortunes(url: str) -> None:
    try:
        tfb.check_fortunes(*fetch(url), url)
    except tfb.RuleBroken as e:
        raise VerifyFailed(str(e)) from e


def check_stored(rows: list[dict], db_url: str, path: str) -> None:
    """/updates: the table holds what the answer says was written (a row read twice: its last value)."""
    written = {row["id"]: row["randomNumber"] for row in rows}
    found = psql(
        db_url, f"SELECT id, randomnumber FROM world WHERE id IN ({','.join(str(int(i)) for i in written)})"
    ).stdout.split()
    stored = {int(i): int(n) for i, n in (line.split("|") for line in found)}
    if stored != written:
        raise VerifyFailed(f"{path}: answered {written}, the table holds {stored}")


def check_world(row, where: str) -> None:
    if not (
        isinstance(row, dict)
        and set(row) == {"id", "randomNumber"}
        and 1 <= row["id"] <= WORLD_ROWS
        and 1 <= row["randomNumber"] <= WORLD_ROWS
    ):
        raise VerifyFailed(f"{where}: not a world row: {row!r}")


def check_answer(base_url: str, request: Request, db_url: str) -> None:
    """One answer of the endpoint, checked against the contract and, for /db/kv, against the table itself."""
    path = request.path()
    if request.endpoint == "/fortunes":
        return check_fortunes(base_url + path)
    answer = get_json(base_url + path)
    if request.spec.queries:
        wanted = request.queries_per_request
        if not isinstance(answer, list) or len(answer) != wanted:
            raise VerifyFailed(f"{path}: expected a list of {wanted} rows, got {str(answer)[:200]}")
        for row in answer:
            check_world(row, path)
        if "update" in request.statements:
            check_stored(answer, db_url, path)
    elif request.endpoint == "/db/kv":
        if not (
            isinstance(answer, dict) and KV_KEY.match(str(answer.get("a"))) and KV_VALUE.match(str(answer.get("b")))
        ):
            raise VerifyFailed(f"{path}: not a kv row: {answer!r}")
        stored = psql(db_url, f"SELECT b FROM kv WHERE a = {int(answer['a'])}").stdout.strip()
        if stored != answer["b"]:
            raise VerifyFailed(f"{path}: a={answer['a']} answered b={answer['b']!r}, the table holds {stored!r}")
    else:
        check_world(answer, path)


def count_queries(base_url: str, request: Request, db_url: str, times: int = COUNT_REQUESTS) -> QueryCount:
    """Resets pg_stat_statements, sends the request `times` times, reads how many of the endpoint's statements
    ran: each of them once per row (endpoints.py's table says which; the count's clamp is the contract's)."""
    path = request.path()
    reset_statements(db_url)
    for _ in range(times):
        with urllib.request.urlopen(base_url + path, timeout=10) as response:
            response.read()
    wanted = times * request.queries_per_request
    counted = {STATEMENTS[name]: statement_calls(db_url, STATEMENTS[name]) for name in request.statements}
    for statement, calls in counted.items():
        if calls != wanted:
            raise VerifyFailed(
                f"{path}: {times} requests ran {calls} statements like '{statement}', expected "
                f"{wanted} (a cache, or queries the endpoint should not make)"
            )
    return QueryCount(wanted * len(counted), sum(counted.values()))


def check_answers(base_url: str, requests: list[Request], db_url: str) -> None:
    """Three answers of every request, each checked (delays cut to 1 ms for /db/slow)."""
    for request in requests:
        for _ in range(3):
            check_answer(base_url, request.with_delay(VERIFY_DELAY_MS), db_url)


def verify_database_cell(base_url: str, requests: list[Request], db_url: str) -> QueryCount:
    """Checks every request's answers, then counts the first one's queries (delays cut to 1 ms for /db/slow)."""
    check_answers(base_url, requests, db_url)
    return count_queries(base_url, requests[0].with_delay(VERIFY_DELAY_MS), db_url)
