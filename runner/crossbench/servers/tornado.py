"""The Tornado plug-in: tornado-app/server.py, one event loop per process (prefork workers when processes > 1).
A user's Tornado Application or a function making one (--app, python_app.py) is served by it the same way."""

from __future__ import annotations

from .. import builtin_servers, paths
from ..oskit import HOST
from . import python_app, python_runtime
from .base import Tool, pool_log_dir
from .event_loop import EventLoopPlugin
from .lifecycle import ServerSpec

APP = paths.REPO / "tornado-app" / "server.py"


class TornadoPlugin(python_runtime.PythonServer, EventLoopPlugin):
    facts = builtin_servers.TORNADO
    summary = "the Tornado app: one event loop per process (1 = the seeds' single core)"
    default_port = 8888
    tools = (Tool("python:tornado", "the project's venv: runner/python-env.sh"),)
    distributions = ("tornado", "asyncpg")
    process_flag = "-p"
    app_kinds = ("tornado",)  # a Tornado Application, or a function making one
    app_distributions = ("tornado",)

    def spec(self, settings, port, work_dir, cpus=(), cell_dir=None, db_url=None, address=HOST) -> ServerSpec:
        argv = [
            python_runtime.executable(settings),
            str(APP),
            "--address",
            address,
            "--port",
            str(port),
            "--processes",
            str(settings["processes"]),
            "--backlog",
            str(settings["backlog"]),
        ]
        if python_app.given(settings):
            argv += ["--app", settings["app"]]  # imported from its folder: spec_extras puts it on the path
        if db_url:
            argv += [
                "--db-url",
                db_url,
                "--db-pool",
                str(settings["db_pool"]),
                "--db-wait-ms",
                str(settings["db_wait_ms"]),
                "--db-prepared" if settings["db_prepared"] else "--no-db-prepared",
            ]
            if cell_dir:
                argv += ["--db-pool-log", str(pool_log_dir(cell_dir))]
        return ServerSpec(
            self.name,
            port,
            argv,
            work_dir / f"tornado-{port}.log",
            self.describe_start(settings),
            cpus,
            self.ready_timeout_s,
            **self.spec_extras(
                settings, work_dir, {"env": python_runtime.env_vars(settings, cell_dir), "address": address}
            ),
        )


PLUGIN = TornadoPlugin()
