"""TechEmpower's test types as every Python server answers them (their published rules, our code): /json's
message, /plaintext's body, the fortunes page's rows and template, /updates' statement."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

PLAINTEXT = b"Hello, World!"
HTML_TYPE = "text/html; charset=utf-8"
TEMPLATES = Path(__file__).parent / "templates"  # fortunes.html, a Jinja2 template (autoescape on)
FORTUNE_TEMPLATE = "fortunes.html"
ADDED_FORTUNE = "Additional fortune added at request time."


class Fortune(NamedTuple):
    id: int
    message: str


def message() -> dict:
    """A new object on every request (TechEmpower's rule: nothing serialised once and reused)."""
    return {"message": "Hello, World!"}


def with_added(rows) -> list[Fortune]:
    """The table's rows plus the one added at request time, sorted by message."""
    return sorted([*(Fortune(*row) for row in rows), Fortune(0, ADDED_FORTUNE)], key=lambda f: f.message)


def new_numbers(rows: list[dict], new_number) -> list[tuple[int, int]]:
    """/updates: gives each row read a new random number (in place, so the answer shows it) and returns the
    (randomnumber, id) pairs to write, in id order so that concurrent requests cannot deadlock on each other."""
    for row in rows:
        row["randomNumber"] = new_number()
    return sorted(((row["randomNumber"], row["id"]) for row in rows), key=lambda pair: pair[1])
