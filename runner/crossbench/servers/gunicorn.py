"""The gunicorn plug-in: gunicorn-app/ (a Flask WSGI app) under gunicorn's pre-forked workers, seed 004's sync
stack. A sync worker serves one request at a time, so /delay/sync bends at C = workers, as Tomcat's at maxThreads;
gthread workers serve `threads` each. A user's app (--app, python_app.py) is served instead of the suite's: a WSGI
one by sync or gthread workers, an ASGI one by uvicorn's workers."""

from __future__ import annotations

from .. import builtin_servers, paths
from ..builtin_servers import WORKER_CLASSES
from ..oskit import HOST
from . import python_app, python_runtime
from .base import DB_ENDPOINTS, STATIC_ENDPOINT, TFB_ENDPOINTS, SettingsError, Tool, database_env
from .lifecycle import ServerSpec

APP_DIR = paths.REPO / "gunicorn-app"
SUITE_APP = "crossbench_flask.app:app"
# the worker classes that serve each kind of app (the suite's own is Flask's: WSGI)
SERVING = {python_app.WSGI: ("sync", "gthread"), python_app.ASGI: ("uvicorn-worker",)}


class GunicornPlugin(python_runtime.PythonServer):
    facts = builtin_servers.GUNICORN
    summary = "a Flask app under gunicorn's pre-forked sync (or gthread) workers: seed 004's sync stack"
    endpoints = frozenset({STATIC_ENDPOINT, "/delay/sync", "/now", "/hello", *TFB_ENDPOINTS, *DB_ENDPOINTS})
    default_port = 8000
    tools = (
        Tool("python:gunicorn", "the project's venv: runner/python-env.sh (gunicorn-app/requirements.txt)"),
        Tool("python:flask", "the project's venv: runner/python-env.sh (gunicorn-app/requirements.txt)"),
    )
    distributions = ("gunicorn", "flask", "psycopg", "psycopg-pool")
    app_kinds = tuple(SERVING)
    app_distributions = ("gunicorn",)

    def variant_label(self, settings: dict) -> str:
        label = f"-w{settings['workers']}"
        if settings["worker_class"] == "gthread":
            label += f"-gthread{settings['threads']}"
        elif settings["worker_class"] == "uvicorn-worker":
            label += "-uvicornworker"
        return label + python_runtime.label(settings)

    def describe(self, settings: dict) -> str:
        threads = f" x {settings['threads']} threads" if settings["worker_class"] == "gthread" else ""
        return f"gunicorn {settings['workers']} {settings['worker_class']} workers{threads}" + python_runtime.words(
            settings
        )

    def parallel_limit(self, settings: dict, endpoint: str) -> int | None:
        if endpoint != "/delay/sync":
            return None
        threads = settings["threads"] if settings["worker_class"] == "gthread" else 1
        return settings["workers"] * threads

    def app_settings(self, kind: str) -> dict:
        return {"worker_class": list(SERVING[kind])}

    def preflight(self, settings: dict) -> None:
        """Its worker class serves the app's kind (uvicorn's workers an ASGI app, the others a WSGI one)."""
        kind = settings["app_kind"] if python_app.given(settings) else python_app.WSGI
        if kind and settings["worker_class"] not in SERVING.get(kind, ()):
            what = f"--app {settings['app']} ({kind})" if python_app.given(settings) else "the suite's Flask app (WSGI)"
            raise SettingsError(f"gunicorn: worker_class {settings['worker_class']} cannot serve {what}")
        super().preflight(settings)

    def spec(self, settings, port, work_dir, cpus=(), cell_dir=None, db_url=None, address=HOST) -> ServerSpec:
        argv = [
            python_runtime.executable(settings),
            "-m",
            "gunicorn",
            "--bind",
            f"{address}:{port}",
            "--workers",
            str(settings["workers"]),
            "--worker-class",
            WORKER_CLASSES[settings["worker_class"]],
            "--threads",
            str(settings["threads"]),
            "--backlog",
            str(settings["backlog"]),
            *app_place(settings),
            "--error-logfile",
            "-",  # no access log (gunicorn keeps none unless asked): it would be measured
            "--no-control-socket",  # gunicorn 27's control socket would live in $HOME, outside the cell
            # the worker watchdog must outlast the longest delay (60 s cap): a sync worker blocks through it
            "--timeout",
            "90",
            settings["app"] or SUITE_APP,
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
            work_dir / f"gunicorn-{port}.log",
            self.describe_start(settings),
            cpus,
            self.ready_timeout_s,
            **self.spec_extras(settings, work_dir, {"env": env, "address": address}),
        )


def app_place(settings: dict) -> list[str]:
    """Where the app is imported from: the user's folder (gunicorn starts in it and puts it first on the path),
    else the suite's (its shared rules: the crossbench_contract package)."""
    if python_app.given(settings):
        return ["--chdir", str(settings["app_dir"])]
    return ["--pythonpath", str(APP_DIR)]


PLUGIN = GunicornPlugin()
