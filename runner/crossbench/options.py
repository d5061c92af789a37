"""What every command line of the project shares beyond argparse: an option given twice must agree."""

from __future__ import annotations

import argparse


def refuse_repeated(parser, argv: list[str], allowed: set[str]) -> None:
    """An option given twice with different values (or --shuffle beside --no-shuffle) is refused in one line, not
    settled silently by the last; `allowed` names the dests that collect (--slo)."""
    seen: dict[str, tuple[str, object]] = {}
    for i, token in enumerate(argv):
        if token == "--":
            return
        name, eq, inline = token.partition("=")
        action = parser._option_string_actions.get(name) if token.startswith("--") else None
        if action is None or action.dest in allowed or action.dest == "help":
            continue
        if action.nargs == 0:
            value = action.const if action.const is not None else not action.default
            if isinstance(action, argparse.BooleanOptionalAction):
                value = not name.startswith("--no-")
        else:
            raw = inline if eq else (argv[i + 1] if i + 1 < len(argv) else None)
            value = converted(action, raw)
        given = token if eq or action.nargs == 0 else f"{name} {raw}"
        first, first_value = seen.setdefault(action.dest, (given, value))
        if first_value != value:
            parser.error(f"{first} and {given} disagree: give the option once")


def converted(action, text):
    """An option's value as the run reads it (30 and 30s alike); as given when it does not convert (argparse
    then refuses it with its own message)."""
    try:
        return action.type(text) if action.type and text is not None else text
    except (argparse.ArgumentTypeError, TypeError, ValueError):
        return text
