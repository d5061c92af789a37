"""Server plug-ins, registered by name. Adding a server is one module here (a ServerPlugin, see base.py), one
app folder beside tornado-app/, and one section of that name in an experiment file: nothing else names it. A
server declared as data (declared.py) is registered beside them for the run that declares it (declare()): the run's
recorded configuration holds its declaration, so a resumed run and the analysis register it again."""

from __future__ import annotations

from .. import known_servers
from ..declared_schema import DeclarationError
from . import declared, external, gunicorn, nginx, tomcat, tornado, uvicorn
from .base import (
    DB_ENDPOINTS,
    ENDPOINTS,
    STATIC_ENDPOINT,
    TFB_ENDPOINTS,
    CannotRunHere,
    Knob,
    ServerPlugin,
    SettingsError,
    Tool,
    ToolMissing,
)
from .lifecycle import RunningServer, ServerFailed, ServerSpec
from .python_runtime import PythonServer

BUILT_IN: dict[str, ServerPlugin] = {  # in the order of their facts (builtin_servers.ALL)
    plugin.name: plugin
    for plugin in (tomcat.PLUGIN, tornado.PLUGIN, gunicorn.PLUGIN, uvicorn.PLUGIN, nginx.PLUGIN, external.PLUGIN)
}
PLUGINS: dict[str, ServerPlugin] = dict(BUILT_IN)  # and the servers this process's run declares
DEFAULT_PAIR = ("tomcat", "tornado")  # the servers a run compares unless its experiment or --servers names others

# Seed 001's fastest servers, tried on the project's Python and refused with what happened (README: Servers).
UNAVAILABLE: dict[str, str] = {
    "japronto": "tried on Python 3.11.7 on 2026-11-22: `pip install japronto` finds no distribution on PyPI "
    "(\"No matching distribution found for japronto\"); the project has published nothing installable "
    "for current Pythons",
    "meinheld": "tried meinheld 1.0.2 on Python 3.11.7 on 2026-11-22: it pins greenlet<0.5, and greenlet 0.4.17 does "
    "not compile against Python 3.11 (greenlet.c: '_PyErr_StackItem' has no member named 'exc_type')",
}


class UnknownServer(ValueError):
    pass


def proxies() -> tuple[str, ...]:
    """The plug-ins a group may put in front of its server (`proxy = "<name>"`)."""
    return tuple(name for name, plugin in PLUGINS.items() if plugin.proxies)


def proxy() -> ServerPlugin:
    """The proxy plug-in (a plan carries its settings, not its name: there is one so far)."""
    return PLUGINS[proxies()[0]]


def declare(config: dict, where: str, check_paths: bool = True) -> list[str]:
    """The servers a checked configuration's [server] section declares (its tables as declared.normalised left
    them), registered by name; a name of a built-in plug-in is refused. Declaring a name again replaces it.
    check_paths=False: a recorded run read where its paths need not exist (the analysis of a copied run)."""
    tables = config.get(declared.SECTION) or {}
    declared.refuse_taken(tables, where, BUILT_IN)
    found = declared.plugins(tables, where, check_paths)
    PLUGINS.update(found)
    known_servers.register({name: plugin.facts for name, plugin in found.items()})
    return list(found)


def forget_declared() -> None:
    """Only the built-in plug-ins registered again (a test that declared servers leaves none behind)."""
    PLUGINS.clear()
    PLUGINS.update(BUILT_IN)
    known_servers.forget_declared()


def get(name: str) -> ServerPlugin:
    if name in UNAVAILABLE:
        raise UnknownServer(f"{name} is not available: {UNAVAILABLE[name]}")
    try:
        return PLUGINS[name]
    except KeyError:
        raise UnknownServer(f"unknown server {name!r}; known: {', '.join(PLUGINS)}") from None


__all__ = [
    "BUILT_IN",
    "DeclarationError",
    "declare",
    "forget_declared",
    "CannotRunHere",
    "DB_ENDPOINTS",
    "ENDPOINTS",
    "PLUGINS",
    "STATIC_ENDPOINT",
    "TFB_ENDPOINTS",
    "UNAVAILABLE",
    "Knob",
    "DEFAULT_PAIR",
    "PythonServer",
    "RunningServer",
    "ServerFailed",
    "ServerPlugin",
    "ServerSpec",
    "SettingsError",
    "Tool",
    "ToolMissing",
    "UnknownServer",
    "get",
    "proxies",
    "proxy",
]
