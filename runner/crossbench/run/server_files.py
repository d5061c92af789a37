"""`--server-file PATH` on run_all.sh and serve.sh: the servers a TOML file declares as data
(crossbench/servers/declared.py), registered before either command line is parsed, so that their names are
servers to choose and their knobs are options."""

from __future__ import annotations

from pathlib import Path

from crossbench import servers
from crossbench.plan import experiment
from crossbench.servers import declared

OPTION = "--server-file"


def split(argv: list[str]) -> tuple[list[str], list[str]]:
    """The paths of each --server-file PATH (or =PATH) in argv, and the rest of argv."""
    files, rest, words = [], [], iter(argv)
    for word in words:
        if word == OPTION:
            files.append(next(words, ""))
        elif word.startswith(OPTION + "="):
            files.append(word.split("=", 1)[1])
        else:
            rest.append(word)
    return files, rest


def declare(argv: list[str]) -> None:
    """Each --server-file's servers registered by name (a Refusal names the file and the key at fault)."""
    for path in split(argv)[0]:
        tables = experiment.declared_in(Path(path), set(servers.PLUGINS) - set(servers.BUILT_IN))
        servers.declare({declared.SECTION: tables}, path)
