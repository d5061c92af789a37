"""The Tornado plug-in: tornado-app/server.py, one event loop per process (prefork workers when processes > 1).
A user's Tornado Application or a function making one (--app, python_app.py) is served by it the same way."""

from __future__ import annotations

from .. import paths
from ..oskit import HOST
from . import python_app, python_runtime
from .base import Knob, Tool, db_knobs, pool_log_dir
from .event_loop import EventLoopPlugin
from .lifecycle import ServerSpec

APP = paths.REPO / "tornado-app" / "server.py"


class TornadoPlugin(python_runtime.PythonServer, EventLoopPlugin):
    name = "tornado"
    summary = "the Tornado app: one event loop per process (1 = the seeds' single core)"
    default_port = 8888
    tools = (Tool("python:tornado", "the project's venv: runner/python-env.sh"),)
    distributions = ("tornado", "asyncpg")
    process_knob, process_flag = "processes", "-p"
    app_kinds = ("tornado",)  # a Tornado Application, or a function making one
    app_distributions = ("tornado",)
    # its charts' colours: its own, then a ramp from lighter to darker for its settings in order
    palette = ("#1f78b4", "#84b5d6", "#67a3cc", "#4a92c2", "#2d81b9", "#1d70a8", "#196191", "#15517a", "#114263")
    knobs = (
        Knob("processes", 1, "worker processes (forked; 1 = one event loop)", sweep=True),
        Knob("backlog", 128, "listen backlog (Tornado's own default is 128)"),
        *db_knobs(10, "asyncpg pool size per process (asyncpg's default max_size 10; fixed size)"),
        python_runtime.KNOB,
        *python_app.APP_KNOBS,
    )

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
