"""A workload file (--workload, [run] workload): each bad input refused in one line naming the file, the request and
the key; its planning (a group per request kind and the mix, recorded with the requests); report.lua's table of
requests; the generators that cannot send a group's requests refused before the run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crossbench import workload, workload_answers
from crossbench.loadgen import wrk_requests
from crossbench.plan import experiment
from crossbench.plan.cellplan import plan_from_dict
from crossbench.plan.experiment_schema import ExperimentError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "workload-httpbin.toml"


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "w.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text, said",
    [
        ('[[request]]\npath = "/a"\ncolour = "red"\n', "request 1: colour: unknown key"),
        ('[[request]]\npath = "/a"\n[[request]]\nname = "b"\npath = "b"\n', "request 2 (b): path: a path starting"),
        ('[[request]]\nmethod = "GET"\n', "request 1: path: missing"),
        ('[[request]]\npath = "/a"\nbody = "x"\njson = { a = 1 }\n', "request 1: body: body and json both given"),
        ('[[request]]\npath = "/a"\nweight = 0\n', "request 1: weight: a number above 0, not 0"),
        ('[[request]]\npath = "/a"\nweight = -2.5\n', "request 1: weight: a number above 0"),
        ('[[request]]\nname = "h"\npath = "/a"\nheaders = "x"\n', "request 1 (h): headers: a table"),
        ('[[request]]\npath = "/a"\nheaders = { A = 1 }\n', "request 1: headers: 'A' = 1"),
        ('[[request]]\npath = "/a"\nbody = 3\n', "request 1: body: a string"),
        ('[[request]]\npath = "/a"\nmethod = "FETCH"\n', "request 1: method: one of GET"),
        ('[[request]]\npath = "/a"\nexpect = { status = "ok" }\n', "request 1: expect.status: an HTTP status"),
        ('[[request]]\npath = "/a"\nexpect = { code = 200 }\n', "request 1: expect.code: unknown key"),
        ('[[request]]\npath = "/a"\n[[request]]\npath = "/a"\n', "request 2: name: 'get-a' names an earlier"),
        ('title = "x"\n', "unknown key 'title'"),
        ("", "no [[request]] tables"),
        ("[[request]\n", "not TOML"),
    ],
)
def test_each_bad_request_is_one_line_naming_file_request_and_key(tmp_path, text, said):
    path = written(tmp_path, text)
    with pytest.raises(workload.WorkloadError) as e:
        workload.read(path)
    message = str(e.value)
    assert message.startswith(f"{path}: ") and said in message and "\n" not in message


def test_a_request_is_recorded_with_every_key_and_json_as_its_body_with_its_content_type(tmp_path):
    path = written(
        tmp_path,
        '[[request]]\nmethod = "post"\npath = "/api/orders?x=1"\njson = { item = 7 }\nweight = 2\n'
        'expect = { status = 201, json_key = "order.id" }\n',
    )
    [request] = workload.read(path)
    assert request == {
        "name": "post-api-orders-x-1",
        "method": "POST",
        "path": "/api/orders?x=1",
        "headers": {"Content-Type": "application/json"},
        "body": '{"item":7}',
        "weight": 2,
        "expect": {"status": 201, "body_contains": None, "json_key": "order.id"},
    }


def resolve(**overrides):
    return experiment.apply_overrides(experiment.load("seed002"), {"shuffle": False, "precision": False, **overrides})


def test_a_workload_is_a_group_per_request_kind_and_the_mix_each_cell_carrying_its_requests():
    resolved = resolve(workload_file=str(EXAMPLE), concurrency=[4], servers=["gunicorn"])
    requests = workload.read(EXAMPLE)
    assert resolved["run"]["requests"] == requests
    assert [g["name"] for g in resolved["group"]] == ["get", "post-json", "status", "mix"]
    cells = experiment.expand(resolved)
    by_group = {}
    for cell in cells:
        by_group.setdefault(cell.group, set()).add((cell.endpoint, cell.concurrency))
        assert workload.declared(cell.options) == ([r for r in requests if r["name"] == cell.group] or requests)
    assert by_group["post-json"] == {("/post", 1), ("/post", 4)}  # C=1 beside: each kind's service time
    assert by_group["mix"] == {("/*", 1), ("/*", 4)}
    again = plan_from_dict(json.loads(json.dumps(cells[0].to_dict())))  # a resumed run reads it back
    assert workload.declared(again.options) == workload.declared(cells[0].options)


def test_a_recorded_workload_reads_back_without_its_file():
    resolved = resolve(workload_file=str(EXAMPLE), servers=["gunicorn"])
    recorded = json.loads(json.dumps(dict(resolved)))
    assert experiment.recorded(recorded).groups[-1].name == "mix"


def test_an_experiment_file_names_its_workload_relative_to_itself(tmp_path):
    shutil.copy(EXAMPLE, tmp_path / "mine.toml")
    exp = tmp_path / "exp.toml"
    exp.write_text(
        '[run]\nservers = ["gunicorn"]\nworkload = "mine.toml"\nduration = "1s"\nwarmup = "1s"\n'
        '[[group]]\nname = "x"\nconcurrency = [2]\n'
    )
    resolved = experiment.apply_overrides(experiment.load(str(exp)), {"shuffle": False})
    assert [g["name"] for g in resolved["group"]] == ["get", "post-json", "status", "mix"]
    assert "workload" not in resolved["run"]


def test_a_workload_beside_a_path_is_refused_in_one_line():
    with pytest.raises(ExperimentError, match="--path and a workload file are both given"):
        resolve(workload_file=str(EXAMPLE), paths=["/a"], servers=["gunicorn"])


@pytest.mark.parametrize(
    "loadgen, refused",
    [
        ("oha", "--loadgen oha cannot send group mix's requests"),
        ("ab", "--loadgen ab cannot send group get's requests: it sends plain GETs only"),
        ("http_load", "--loadgen http_load cannot send group get's requests"),
    ],
)
def test_a_generator_that_cannot_send_a_group_s_requests_is_refused_naming_both(loadgen, refused):
    with pytest.raises(ExperimentError) as e:
        resolve(workload_file=str(EXAMPLE), loadgen=loadgen, servers=["gunicorn"])
    assert refused in str(e.value) and "\n" not in str(e.value)


def test_k6_sends_every_group_of_a_workload_the_mix_too():
    resolved = resolve(workload_file=str(EXAMPLE), loadgen="k6", servers=["gunicorn"])
    assert [g["name"] for g in resolved["group"]] == ["get", "post-json", "status", "mix"]


def test_oha_carries_one_kind_with_its_method_headers_and_body():
    from crossbench.loadgen import oha
    from crossbench.loadgen.base import LoadSpec

    [_, post, _] = workload.read(EXAMPLE)
    spec = LoadSpec(urls=("http://127.0.0.1:1/post",), concurrency=2, duration_s=1, timeout_s=2, requests=(post,))
    cmd = oha.build_command(spec)
    assert cmd[-7:] == [
        "-m",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-d",
        post["body"],
        "http://127.0.0.1:1/post",
    ]


def test_the_requests_table_quotes_every_byte_lua_would_read_otherwise():
    """Quote, backslash, newline, NUL and UTF-8 as three-digit escapes (the live wrk test sends them through)."""
    assert wrk_requests.lua_string('a"\\\n\x00é1') == '"a\\034\\092\\010\\000\\195\\1691"'
    chunk = wrk_requests.rendered([{"method": "PUT", "path": "/p", "headers": {"X-A": "v"}, "body": None, "weight": 2}])
    assert (
        chunk
        == 'return {\n  { method = "PUT", path = "/p", headers = { ["X-A"] = "v" }, body = nil, weight = 2.0 },\n}\n'
    )


def declared_answer(**expect) -> dict:
    return {
        "name": "order",
        "method": "POST",
        "path": "/o",
        "headers": {},
        "body": "{}",
        "weight": 1,
        "expect": {"status": None, "body_contains": None, "json_key": None, **expect},
    }


@pytest.mark.parametrize(
    "expect, status, body, said",
    [
        ({}, 503, b"busy" * 100, "order (POST /o) answered 503 where 2xx was declared; its body begins: '"),
        ({"status": 201}, 200, b"{}", "answered 200 where 201 was declared"),
        ({"body_contains": "id"}, 200, b"nothing", "answered 200 where a body containing 'id' was declared"),
        ({"json_key": "a.b"}, 200, b'{"a": {"c": 1}}', "where a JSON body with key 'a.b' was declared"),
        ({"json_key": "a"}, 200, b"not json", "where a JSON body with key 'a' was declared"),
    ],
)
def test_an_answer_not_as_declared_is_one_line_with_name_status_and_the_body_s_first_200_bytes(
    expect, status, body, said
):
    problem = workload_answers.problem(declared_answer(**expect), status, body, "")
    assert said in problem and "\n" not in problem
    assert problem.endswith(repr(body[:200].decode()))


def test_an_answer_as_declared_is_no_problem():
    body = b'{"a": {"b": [1]}, "id": 3}'
    assert workload_answers.problem(declared_answer(json_key="a.b", body_contains='"id"'), 200, body, "") is None
    assert workload_answers.problem(declared_answer(status=404), 404, b"", "") is None
    assert "got no answer (refused)" in workload_answers.problem(declared_answer(), None, b"", "refused")


def test_a_run_s_user_endpoints_are_its_paths_its_requests_and_the_mix():
    run = {"paths": ["/a"], "requests": workload.read(EXAMPLE)}
    assert workload.user_endpoints(run) == ["/a", "/get?source=crossbench", "/post", "/status/200", "/*"]
    assert workload.user_endpoints({"paths": ["/a"]}) == ["/a"]


def test_open_loop_cells_send_their_group_s_requests_as_declared():
    """An open-loop generator (--rates) turns the groups open: each cell still sends its group's requests (a kind's
    own, or the whole file for the mix), never a GET of its endpoint's name."""
    from crossbench.drivers import DRIVERS

    resolved = resolve(workload_file=str(EXAMPLE), loadgen="k6", rates=[50], concurrency=[4], servers=["gunicorn"])
    cells = {c.group: c for c in experiment.expand(resolved)}
    spec = DRIVERS["open_loop"].load_spec(cells["mix"], "http://127.0.0.1:1")
    assert [r["name"] for r in spec.requests] == ["get", "post-json", "status"]
    assert spec.urls == tuple("http://127.0.0.1:1" + r["path"] for r in spec.requests)
    post = DRIVERS["open_loop"].load_spec(cells["post-json"], "http://127.0.0.1:1")
    assert [(r["method"], r["path"]) for r in post.requests] == [("POST", "/post")] and post.rate == 50
