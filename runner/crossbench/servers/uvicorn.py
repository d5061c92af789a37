"""The uvicorn plug-in: uvicorn-app/ (a Starlette ASGI app) on uvicorn with uvloop and httptools, seed 004's async
stack. One event loop per worker process: /delay/sync blocks its loop, as Tornado's does. A user's ASGI app
(--app, python_app.py) is served instead of the suite's, imported from its folder."""

from __future__ import annotations

from .. import builtin_servers, paths
from ..oskit import HOST
from . import python_app, python_runtime
from .base import Tool, database_env
from .event_loop import EventLoopPlugin
from .lifecycle import ServerSpec

APP_DIR = paths.REPO / "uvicorn-app"
SUITE_APP = "crossbench_starlette.app:app"
VENV_HINT = "the project's venv: runner/python-env.sh (uvicorn-app/requirements.txt)"


class UvicornPlugin(python_runtime.PythonServer, EventLoopPlugin):
    facts = builtin_servers.UVICORN
    summary = "a Starlette app on uvicorn (uvloop, httptools): one event loop per worker, seed 004's async stack"
    default_port = 8001
    tools = (
        Tool("python:uvicorn", VENV_HINT),
        Tool("python:starlette", VENV_HINT),
        Tool("python:uvloop", VENV_HINT),
        Tool("python:httptools", VENV_HINT),
    )
    distributions = ("uvicorn", "starlette", "uvloop", "httptools", "asyncpg")
    process_flag = "-w"
    app_kinds = (python_app.ASGI,)
    app_distributions = ("uvicorn", "uvloop", "httptools")  # its command line asks for uvloop and httptools

    def spec(self, settings, port, work_dir, cpus=(), cell_dir=None, db_url=None, address=HOST) -> ServerSpec:
        argv = [
            python_runtime.executable(settings),
            "-m",
            "uvicorn",
            *app_target(settings),
            "--host",
            address,
            "--port",
            str(port),
            "--workers",
            str(settings["workers"]),
            "--backlog",
            str(settings["backlog"]),
            "--loop",
            "uvloop",
            "--http",
            "httptools",
            "--no-access-log",
            "--log-level",
            "warning",
        ]
        env = {
            "CROSSBENCH_STATIC_DIR": str(paths.STATIC_DIR),
            **database_env(db_url, settings, cell_dir),
            **python_runtime.env_vars(settings, cell_dir),
        }
        return ServerSpec(
            self.name,
            port,
            argv,
            work_dir / f"uvicorn-{port}.log",
            self.describe_start(settings),
            cpus,
            self.ready_timeout_s,
            **self.spec_extras(settings, work_dir, {"env": env, "address": address}),
        )


def app_target(settings: dict) -> list[str]:
    """The app and the folder it is imported from: the user's (a factory, MODULE:NAME(), called by uvicorn's
    --factory), else the suite's."""
    if not python_app.given(settings):
        return [SUITE_APP, "--app-dir", str(APP_DIR)]
    factory = ["--factory"] if python_app.factory(settings["app"]) else []
    return [python_app.target(settings["app"]), *factory, "--app-dir", str(settings["app_dir"])]


PLUGIN = UvicornPlugin()
