"""What the runner refuses before its first cell or its one server starts: every such error derives from Refusal,
and the top floor (run/run.py, run/serve.py) turns one into a line on stderr and its exit status (exit_code: 2,
"refused, nothing ran"). A foundation module: it imports nothing."""

from __future__ import annotations


class Refusal(Exception):
    """Refused before anything ran; the message is the one line the user reads."""

    exit_code = 2


class Missing(Refusal):
    """Refused for something this machine lacks that a command brings (a tool, a package, the build), the command
    named in the message: a dry run lists each with the plan instead of stopping at the first."""
