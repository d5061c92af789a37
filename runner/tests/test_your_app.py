"""--app MODULE:CALLABLE --app-dir DIR without a load: its command line's checks and refusals (each one line, before
anything starts), the kind read by importing the app once (a WSGI app, an ASGI one, a Tornado Application or a
function making one), the servers and gunicorn workers each kind runs under, the environment it runs in (its
own, keyed by its requirements, the suite's server pins and the interpreter) and the command lines that serve it
from its folder, where nothing is written."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from crossbench import endpoints, pyenvs
from crossbench.run import run_args
from crossbench.servers import SettingsError, python_app, python_runtime
from crossbench.servers.gunicorn import PLUGIN as GUNICORN
from crossbench.servers.tornado import PLUGIN as TORNADO
from crossbench.servers.uvicorn import PLUGIN as UVICORN

APPS = {
    "wsgi_app.py": "def app(environ, start_response):\n"
    "    start_response('200 OK', [('Content-Type', 'text/plain')])\n"
    "    return [b'hi']\n",
    "asgi_app.py": "async def app(scope, receive, send):\n"
    "    await send({'type': 'http.response.start', 'status': 200, 'headers': []})\n"
    "    await send({'type': 'http.response.body', 'body': b'hi'})\n",
    "tornado_app.py": "from tornado import web\n"
    "class Hello(web.RequestHandler):\n"
    "    def get(self):\n"
    "        self.write('hi')\n"
    "def make_app():\n"
    "    return web.Application([(r'/', Hello)])\n"
    "application = make_app()\n",
    "broken.py": "import no_such_module_anywhere\n",
}


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "theirs"
    folder.mkdir()
    for name, text in APPS.items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture(autouse=True)
def no_user_paths():
    yield
    endpoints.USER.clear()


def listing(folder: Path) -> list[tuple[str, bytes]]:
    return sorted((str(p.relative_to(folder)), p.read_bytes() if p.is_file() else b"") for p in folder.rglob("*"))


def refusal(capsys, argv: list[str]) -> str:
    """The one line run_all says when it refuses argv before anything starts."""
    with pytest.raises(SystemExit) as stopped:
        run_args.parse_args(argv)
    assert stopped.value.code != 0
    lines = capsys.readouterr().err.strip().splitlines()
    return lines[-1]


def test_bad_app_options_are_refused_in_one_line_before_anything_starts(capsys, app_dir, tmp_path):
    base = ["--path", "/", "--app-dir", str(app_dir)]
    assert "expected MODULE:CALLABLE" in refusal(capsys, ["--app", "wsgi_app", *base])
    assert refusal(capsys, ["--app", "wsgi_app:app", "--app-dir", str(tmp_path / "nope"), "--path", "/"]) == (
        f"run_all: --app-dir {tmp_path / 'nope'}: no such folder"
    )
    missing = tmp_path / "requirements.txt"
    assert refusal(capsys, ["--app", "wsgi_app:app", *base, "--requirements", str(missing)]) == (
        f"run_all: --requirements {missing}: no such file"
    )
    assert "--app: name the requests to measure with --path" in refusal(
        capsys, ["--app", "wsgi_app:app", "--app-dir", str(app_dir)]
    )
    assert "--app-dir goes with --app" in refusal(capsys, base)
    assert "--app-kind flask: one of asgi, tornado, wsgi" in refusal(
        capsys, ["--app", "wsgi_app:app", *base, "--app-kind", "flask"]
    )


@pytest.mark.parametrize(
    "kind, servers, worker_classes",
    [("wsgi", ["gunicorn"], ["sync", "gthread"]), ("asgi", ["gunicorn", "uvicorn"], ["uvicorn-worker"])],
)
def test_the_app_s_kind_sets_its_servers_and_gunicorn_s_workers(app_dir, kind, servers, worker_classes):
    args = run_args.parse_args(["--app", "wsgi_app:app", "--app-dir", str(app_dir), "--path", "/", "--app-kind", kind])
    assert (args.servers, args.worker_class, args.experiment) == (servers, worker_classes, "your-app")
    quick = run_args.parse_args(
        ["--app", "wsgi_app:app", "--app-dir", str(app_dir), "--path", "/", "--app-kind", kind, "--quick"]
    )
    assert quick.experiment == "your-app-quick"


def test_a_tornado_app_runs_under_tornado_and_a_server_that_cannot_serve_a_kind_is_refused(capsys, app_dir):
    base = ["--app", "tornado_app:make_app", "--app-dir", str(app_dir), "--path", "/"]
    assert run_args.parse_args([*base, "--app-kind", "tornado"]).servers == ["tornado"]
    assert "--servers uvicorn: a wsgi app is served by gunicorn" in refusal(
        capsys, [*base, "--app-kind", "wsgi", "--servers", "uvicorn"]
    )
    settings = GUNICORN.settings(
        {"app": "asgi_app:app", "app_dir": str(app_dir), "app_kind": "asgi", "worker_class": "sync"}
    )
    with pytest.raises(SettingsError, match="gunicorn: worker_class sync cannot serve --app asgi_app:app \\(asgi\\)"):
        GUNICORN.preflight(settings)
    with pytest.raises(SettingsError, match="cannot serve the suite's Flask app"):
        GUNICORN.preflight(GUNICORN.settings({"worker_class": "uvicorn-worker"}))


@pytest.mark.spawns
@pytest.mark.parametrize(
    "app, kind, factory",
    [
        ("wsgi_app:app", "wsgi", False),
        ("asgi_app:app", "asgi", False),
        ("tornado_app:application", "tornado", False),
        ("tornado_app:make_app", "tornado", True),
    ],
)
def test_an_app_s_kind_is_read_by_importing_it_once_and_nothing_is_written_in_its_folder(
    app_dir, app, kind, factory, monkeypatch
):
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # a user's shell need not set it
    before = listing(app_dir)
    assert python_app.kind({"app": app, "app_dir": str(app_dir)}, sys.executable) == (kind, factory)
    assert listing(app_dir) == before  # no __pycache__


@pytest.mark.spawns
@pytest.mark.parametrize(
    "app, said",
    [
        ("broken:app", "--app broken:app: broken does not import: ModuleNotFoundError: No module named "),
        ("wsgi_app:nope", "--app wsgi_app:nope: wsgi_app imports, but has no nope"),
        ("tornado_app:Hello", "--app tornado_app:Hello: tornado_app:Hello is neither a WSGI app, an ASGI app nor"),
    ],
)
def test_an_app_that_cannot_be_served_is_refused_with_the_line_that_says_why(app_dir, app, said):
    with pytest.raises(python_app.AppRefused) as refused:
        python_app.kind({"app": app, "app_dir": str(app_dir)}, sys.executable)
    assert str(refused.value).startswith(said) and "\n" not in str(refused.value)


@pytest.mark.spawns
def test_a_requirements_build_that_fails_is_refused_with_pip_s_last_line(capsys, app_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("CROSSBENCH_TOOLS", str(tmp_path / "tools"))
    bad = app_dir / "requirements.txt"
    bad.write_text("this is not a requirement ===\n")
    line = refusal(capsys, ["--app", "wsgi_app:app", "--app-dir", str(app_dir), "--path", "/"])
    assert line.startswith("run_all: --app wsgi_app:app: Python ") and "building its environment failed: " in line
    assert "Invalid requirement" in line, line
    assert bad.read_text() == "this is not a requirement ===\n"


def test_the_app_s_environment_is_its_own_keyed_by_its_requirements_the_server_pins_and_the_interpreter(
    app_dir, tmp_path, monkeypatch
):
    monkeypatch.setenv("CROSSBENCH_TOOLS", str(tmp_path / "tools"))
    interpreter = pyenvs.Interpreter(Path(sys.executable), "3.11.7")
    monkeypatch.setattr(python_app, "own_interpreter", lambda: interpreter)
    settings = GUNICORN.settings({"app": "wsgi_app:app", "app_dir": str(app_dir)})
    env = python_app.environment(settings)
    pins = {line.split("==")[0] for line in env.pins}
    assert {"gunicorn", "uvicorn", "uvloop", "httptools", "tornado"} <= pins and "flask" not in pins
    assert env.requirements == () and env.path.parent == tmp_path / "tools" / "python-envs"
    (app_dir / "requirements.txt").write_text("httpbin==0.10.4\n")  # found in its folder without --requirements
    with_file = python_app.environment(settings)
    key = with_file.key
    assert with_file.requirements == (app_dir / "requirements.txt",) and key != env.key
    (app_dir / "requirements.txt").write_text("httpbin==0.10.3\n")
    assert python_app.environment(settings).key != key
    other = pyenvs.Interpreter(Path(sys.executable), "3.13.0")  # --python 3.13: an environment of its own
    monkeypatch.setattr(python_app, "resolve", lambda request: other if request == "3.13" else None)
    assert python_app.environment({**settings, "python": "3.13"}).key.startswith("cpython-3.13.0-")


def test_each_server_serves_the_app_from_its_folder_writing_nothing_there(app_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(python_app, "own_interpreter", lambda: pyenvs.Interpreter(Path(sys.executable), "3.11.7"))
    monkeypatch.setattr(python_runtime, "interpreter_facts", lambda *_: ())  # the record's facts: read live elsewhere
    common = {"app_dir": str(app_dir), "python": None}
    gunicorn = GUNICORN.spec(
        GUNICORN.settings({**common, "app": "asgi_app:app", "app_kind": "asgi", "worker_class": "uvicorn-worker"}),
        8000,
        tmp_path,
    )
    argv = gunicorn.argv
    assert argv[argv.index("--chdir") + 1] == str(app_dir) and argv[-1] == "asgi_app:app"
    assert argv[argv.index("--worker-class") + 1] == "uvicorn.workers.UvicornWorker"
    uvicorn = UVICORN.spec(UVICORN.settings({**common, "app": "asgi_app:make()", "app_kind": "asgi"}), 8001, tmp_path)
    assert uvicorn.argv[3:7] == ["asgi_app:make", "--factory", "--app-dir", str(app_dir)]
    tornado = TORNADO.spec(TORNADO.settings({**common, "app": "tornado_app:make_app()"}), 8888, tmp_path)
    assert tornado.argv[-2:] == ["--app", "tornado_app:make_app()"]
    for spec in (gunicorn, uvicorn, tornado):
        assert spec.workdir == app_dir and spec.ready_any_answer
        assert spec.env["PYTHONPATH"].split(os.pathsep)[0] == str(app_dir)
        assert Path(spec.env["PYTHONPYCACHEPREFIX"]).parent == tmp_path
