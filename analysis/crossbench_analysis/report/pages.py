"""The HTML pages' one Jinja2 environment: templates/ (base.html and its blocks, macros.html), autoescaped, so
Python passes data and never builds HTML. Every page is one offline file: the CSS is inlined by base.html."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jinja2 import Environment

TEMPLATES = Path(__file__).resolve().parent / "templates"


@cache
def environment() -> Environment:
    # at its use: the command lines load without the Python environment (runner/README.md)
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(template: str, **context) -> str:
    """templates/<template> rendered with context; every value is escaped unless it is markupsafe.Markup."""
    return environment().get_template(template).render(**context)
