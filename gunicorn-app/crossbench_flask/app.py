"""The Flask (WSGI) app of the contract, run by gunicorn's pre-forked workers (seed 004's sync stack).

Every path is first normalised from the raw request line as Tomcat's connector does (crossbench_contract, from
python-contract/), so traversal answers the same on every server. Serves /static/*, /delay/sync, /now, /hello and
the database endpoints, and TechEmpower's /json, /plaintext, /fortunes (a Jinja2 template, as Flask renders them)
and /updates; /delay/async is not a sync stack's endpoint and is 404.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from flask import Flask, Response, abort, jsonify, request, send_from_directory
from werkzeug.exceptions import HTTPException

from crossbench_contract import HELLO, OK, TEXT_TYPE, paths, runtime, tfb
from crossbench_contract.delay import parse_delay
from crossbench_contract.static import STATIC_DIR, served_files

from . import db

SERVED = served_files(STATIC_DIR)
app = Flask(__name__, static_folder=None, template_folder=str(tfb.TEMPLATES))  # .html: autoescape on
app.json.compact = True
runtime.report()  # imported in each worker: each says which interpreter and GIL it runs with


def text(body: bytes, status: int = 200) -> Response:
    return Response(body, status=status, content_type=TEXT_TYPE)


@app.errorhandler(HTTPException)
def plain_error(error: HTTPException) -> Response:
    response = text(f"{error.name.lower()}\n".encode(), error.code)
    if error.code == 405:
        response.headers["Allow"] = ", ".join(error.valid_methods or ())
    return response


@app.get("/hello")
def hello() -> Response:
    return text(HELLO)


@app.get("/now")
def now() -> Response:
    return text(OK)


@app.get("/json")
def json_message() -> Response:
    return jsonify(tfb.message())


@app.get("/plaintext")
def plaintext() -> Response:
    return text(tfb.PLAINTEXT)


def delay_ms() -> int:
    try:
        return parse_delay(request.args.getlist("ms"))
    except ValueError as e:
        abort(text(f"{e}\n".encode(), 400))


@app.get("/delay/sync")
def delay_sync() -> Response:
    """Blocks this worker for the delay: a sync worker serves nobody else meanwhile."""
    time.sleep(delay_ms() / 1000)
    return text(OK)


@app.get("/static/<name>")
def static_file(name: str) -> Response:
    if name not in SERVED:
        abort(404)
    return send_from_directory(STATIC_DIR, name, conditional=True, etag=True, max_age=None)


db.register(app, delay_ms, text)


class TomcatPaths:
    """WSGI middleware: PATH_INFO from the raw request path, normalised as Tomcat's connector does (400 when it
    climbs above the root, encodes a separator or NUL); WSGI servers hand apps an already decoded path."""

    def __init__(self, wsgi_app):
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        raw = environ.get("RAW_URI") or environ.get("REQUEST_URI") or environ.get("PATH_INFO", "/")
        try:
            path = paths.normalize(urlsplit(raw).path or "/")
        except paths.InvalidPath:
            start_response("400 Bad Request", [("Content-Type", TEXT_TYPE), ("Content-Length", "12")])
            return [b"bad request\n"]
        environ["PATH_INFO"] = path.encode("utf-8").decode("latin-1")
        return self.wsgi_app(environ, start_response)


app.wsgi_app = TomcatPaths(app.wsgi_app)
