"""TechEmpower's rules for an answer of its six test types, as their verification states them (toolset/test_types/
in their repository, read, not copied): the headers every answer carries, /json's object, /plaintext's body, the
fortunes page (the table's twelve rows and the one added at request time, sorted by message, escaped, UTF-8).
Pure functions of an answer; the cells (database/verify.py, cell.py) and the contract suite apply them."""

from __future__ import annotations

import json
from html.parser import HTMLParser

# TechEmpower's fortune rows, as their PostgreSQL setup inserts them: a quote, a markup-injection attempt that must
# come out escaped, and a Japanese one that must come out as UTF-8.
FORTUNES = (
    "fortune: No such file or directory",
    "A computer scientist is someone who fixes things that aren't broken.",
    "After enough decimal places, nobody gives a damn.",
    "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
    "A computer program does what you tell it to do, not what you want it to do.",
    "Emacs is a nice operating system, but I prefer UNIX. \u2014 Tom Christaensen",
    "Any program that runs right is obsolete.",
    "A list is only as strong as its weakest link. \u2014 Donald Knuth",
    "Feature: A bug with seniority.",
    "Computers make very fast, very accurate mistakes.",
    '<script>alert("This should not be displayed in a browser alert box.");</script>',
    "\u30d5\u30ec\u30fc\u30e0\u30ef\u30fc\u30af\u306e\u30d9\u30f3\u30c1\u30de\u30fc\u30af",
)

REQUIRED_HEADERS = ("server", "date", "content-type", "content-length")
ADDED_FORTUNE = "Additional fortune added at request time."
EXPECTED_FORTUNES = sorted([*enumerate(FORTUNES, start=1), (0, ADDED_FORTUNE)], key=lambda row: row[1])


class RuleBroken(ValueError):
    """An answer breaks one of TechEmpower's rules; the message says which and shows what came."""


def media_type(value: str) -> tuple[str, str | None]:
    """('text/html', 'utf-8') from 'text/html;charset=UTF-8'."""
    kind, *params = [part.strip() for part in value.split(";")]
    charset = next((p.split("=", 1)[1].strip().lower() for p in params if p.lower().startswith("charset=")), None)
    return kind.lower(), charset


def check_headers(headers: dict, body: bytes, path: str) -> None:
    """Server, Date, Content-Type and an exact Content-Length (headers with lower-case names)."""
    missing = [name for name in REQUIRED_HEADERS if name not in headers]
    if missing:
        raise RuleBroken(f"{path}: no {', '.join(missing)} header")
    if int(headers["content-length"]) != len(body):
        raise RuleBroken(f"{path}: Content-Length {headers['content-length']} for a body of {len(body)} bytes")


def check_json(headers: dict, body: bytes, path: str = "/json") -> None:
    if media_type(headers.get("content-type", ""))[0] != "application/json":
        raise RuleBroken(f"{path}: Content-Type {headers.get('content-type')!r}, not application/json")
    try:
        answer = json.loads(body)
    except ValueError as e:
        raise RuleBroken(f"{path}: not JSON ({e}): {body[:200]!r}") from e
    if answer != {"message": "Hello, World!"}:
        raise RuleBroken(f"{path}: {answer!r} is not {{'message': 'Hello, World!'}}")


def check_plaintext(headers: dict, body: bytes, path: str = "/plaintext") -> None:
    if media_type(headers.get("content-type", ""))[0] != "text/plain":
        raise RuleBroken(f"{path}: Content-Type {headers.get('content-type')!r}, not text/plain")
    if body != b"Hello, World!":
        raise RuleBroken(f"{path}: body {body[:200]!r}, not b'Hello, World!'")


class _Table(HTMLParser):
    """The cells of the page's table, each row's text with character references resolved."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.in_cell = False

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.in_cell = True
            self.rows[-1].append("")

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.in_cell = False

    def handle_data(self, data):
        if self.in_cell:
            self.rows[-1][-1] += data


def fortune_rows(body: bytes) -> list[tuple[int, str]]:
    """The page's rows (id, message) after its header row, as a browser would show them."""
    table = _Table()
    table.feed(body.decode("utf-8"))
    if not table.rows or [cell.strip().lower() for cell in table.rows[0]] != ["id", "message"]:
        raise RuleBroken(f"/fortunes: no header row <th>id</th><th>message</th>: {body[:200]!r}")
    return [(int(row[0]), row[1]) for row in table.rows[1:]]


def check_fortunes(headers: dict, body: bytes, path: str = "/fortunes") -> None:
    """All twelve rows and the added one, sorted by message, escaped (no markup from the table survives), UTF-8."""
    if media_type(headers.get("content-type", "")) != ("text/html", "utf-8"):
        raise RuleBroken(f"{path}: Content-Type {headers.get('content-type')!r}, not text/html; charset=utf-8")
    try:
        rows = fortune_rows(body)
    except (UnicodeDecodeError, ValueError, IndexError) as e:
        raise RuleBroken(f"{path}: not a fortunes table ({e}): {body[:200]!r}") from e
    if not body.lstrip().lower().startswith(b"<!doctype html>"):
        raise RuleBroken(f"{path}: does not start with <!DOCTYPE html>")
    if b"<script>" in body:
        raise RuleBroken(f"{path}: the <script> fortune went out unescaped")
    if rows != EXPECTED_FORTUNES:
        raise RuleBroken(f"{path}: rows {rows!r} are not the table's twelve and the added one sorted by message")


CHECKS = {"/json": check_json, "/plaintext": check_plaintext}


def check_answer(path: str, headers: dict, body: bytes) -> None:
    """A /json or /plaintext answer held to all its rules (headers included); other paths are not checked here."""
    check = CHECKS.get(path.split("?", 1)[0])
    if check:
        check_headers(headers, body, path)
        check(headers, body, path)
