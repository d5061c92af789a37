"""Server plug-ins, registered by name. Adding a server is one module here (a ServerPlugin, see base.py), one
app folder beside tornado-app/, and one section of that name in an experiment file: nothing else names it."""
from __future__ import annotations

from . import gunicorn, nginx, tomcat, tornado, uvicorn
from .base import (DB_ENDPOINTS, ENDPOINTS, STATIC_ENDPOINT, TFB_ENDPOINTS, CannotRunHere, Knob, ServerPlugin,
                   SettingsError, Tool, ToolMissing)
from .lifecycle import RunningServer, ServerFailed, ServerSpec

PLUGINS: dict[str, ServerPlugin] = {plugin.name: plugin for plugin in (
    tomcat.PLUGIN, tornado.PLUGIN, gunicorn.PLUGIN, uvicorn.PLUGIN, nginx.PLUGIN)}
DEFAULT_PAIR = ("tomcat", "tornado")    # the servers a run compares unless its experiment or --servers names others

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


def get(name: str) -> ServerPlugin:
    if name in UNAVAILABLE:
        raise UnknownServer(f"{name} is not available: {UNAVAILABLE[name]}")
    try:
        return PLUGINS[name]
    except KeyError:
        raise UnknownServer(f"unknown server {name!r}; known: {', '.join(PLUGINS)}") from None


__all__ = ["CannotRunHere", "DB_ENDPOINTS", "ENDPOINTS", "PLUGINS", "STATIC_ENDPOINT", "TFB_ENDPOINTS", "UNAVAILABLE", "Knob",
           "DEFAULT_PAIR", "RunningServer",
           "ServerFailed", "ServerPlugin", "ServerSpec", "SettingsError", "Tool", "ToolMissing", "UnknownServer",
           "get", "proxies", "proxy"]
