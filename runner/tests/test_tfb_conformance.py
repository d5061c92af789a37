"""TechEmpower's six test types (runner/CONTRACT.md, "TechEmpower's test types"), checked live against every
server with the run's own PostgreSQL: /json, /plaintext (pipelined too), /fortunes, /updates (clamping, rows really
stored), the headers every answer carries, and the query counts pg_stat_statements sees, with the same functions
the cells verify with (crossbench/tfb.py, crossbench/database/verify.py). nginx serves none of them: 404."""

from __future__ import annotations

import contextlib
import json
import socket

import pytest
from live_servers import build_missing_reason, request, running

from crossbench import tfb
from crossbench.database import Cluster, ensure_tables, psql
from crossbench.database.pgbouncer import SERVER_SETTINGS as BOUNCED
from crossbench.database.pgbouncer import PgBouncer
from crossbench.database.verify import VerifyFailed, check_answer, count_queries
from crossbench.endpoints import Request
from crossbench.servers import DB_ENDPOINTS, PLUGINS, TFB_ENDPOINTS

pytestmark = [
    pytest.mark.live,
    pytest.mark.shares_cores,  # answers and counts, no clock; every server and database its own
    pytest.mark.skipif(build_missing_reason() is not None, reason=str(build_missing_reason())),
]

SERVERS = ("tomcat", "tornado", "gunicorn", "uvicorn")
TYPES = ("/json", "/plaintext", "/db", "/queries?queries=5", "/fortunes", "/updates?queries=5")
# queries=value -> rows TechEmpower's rule answers (clamped to 1..500; missing or not an integer is 1)
CLAMPS = {"0": 1, "foo": 1, "": 1, "501": 500, "2": 2, "20": 20}


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    with Cluster(tmp_path_factory.mktemp("tfb-db")) as db:
        ensure_tables(db.url)
        yield db.url


# gunicorn as tfb.toml runs it: gthread workers keep connections open (its sync workers do not: see below)
SETTINGS = {"gunicorn": {"worker_class": "gthread", "threads": 4, "workers": 2}}


@pytest.fixture(scope="module")
def servers(database):
    with contextlib.ExitStack() as stack:
        yield {name: stack.enter_context(running(name, db_url=database, **SETTINGS.get(name, {}))) for name in SERVERS}


@pytest.fixture(scope="module")
def bounced(database, tmp_path_factory):
    """Every server behind PgBouncer in transaction mode, with the settings a pooled cell gives it (no named
    prepared statements: PgBouncer 1.18 cannot keep one for a client)."""
    with (
        PgBouncer(database, tmp_path_factory.mktemp("pgbouncer"), pool_size=4, max_clients=200) as bouncer,
        contextlib.ExitStack() as stack,
    ):
        yield {
            name: stack.enter_context(running(name, db_url=bouncer.url, **BOUNCED, **SETTINGS.get(name, {})))
            for name in SERVERS
        }


def pipelined(port: int, path: str, depth: int) -> bytes:
    """`depth` GETs written at once on one socket; what comes back until the answers are in or the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode() * depth)
        received = b""
        while received.count(b"Hello, World!") < depth:
            chunk = conn.recv(65536)
            if not chunk:
                break
            received += chunk
    return received


def get(server, path):
    return request(server.spec.port, "GET", path)


@pytest.mark.parametrize("name", SERVERS)
def test_every_server_declares_all_six_types(name):
    assert {"/json", "/plaintext", "/db", "/queries", "/fortunes", "/updates"} <= PLUGINS[name].endpoints
    assert not ({*TFB_ENDPOINTS, "/fortunes", "/updates"} & PLUGINS["nginx"].endpoints)
    assert {"/fortunes", "/updates"} <= set(DB_ENDPOINTS)


@pytest.mark.parametrize("path", TYPES)
@pytest.mark.parametrize("name", SERVERS)
def test_every_answer_carries_server_date_type_and_length(servers, name, path):
    status, headers, body = get(servers[name], path)
    assert status == 200, (name, path, body[:200])
    tfb.check_headers(headers, body, path)


@pytest.mark.parametrize("name", SERVERS)
def test_json_is_the_hello_world_object(servers, name):
    status, headers, body = get(servers[name], "/json")
    assert status == 200
    tfb.check_json(headers, body)


@pytest.mark.parametrize("name", SERVERS)
def test_plaintext_is_hello_world_also_sixteen_pipelined(servers, name):
    status, headers, body = get(servers[name], "/plaintext")
    assert status == 200
    tfb.check_plaintext(headers, body)
    received = pipelined(servers[name].spec.port, "/plaintext", 16)
    assert received.count(b"HTTP/1.1 200") == received.count(b"Hello, World!") == 16, received[:400]


def test_gunicorns_sync_worker_answers_one_pipelined_request_and_closes():
    """Why tfb runs gunicorn's gthread workers: a sync worker keeps no connection open (gunicorn's docs)."""
    with running("gunicorn", worker_class="sync", workers=1) as sync:
        received = pipelined(sync.spec.port, "/plaintext", 16)
    assert received.count(b"HTTP/1.1 200") == 1 and b"connection: close" in received.lower(), received[:400]


@pytest.mark.parametrize("name", SERVERS)
def test_fortunes_sorted_escaped_with_the_added_row_in_utf8(servers, name):
    status, headers, body = get(servers[name], "/fortunes")
    assert status == 200
    tfb.check_fortunes(headers, body)
    assert "フレームワークのベンチマーク".encode() in body  # UTF-8 bytes, not character references
    assert b"&lt;script&gt;" in body


@pytest.mark.parametrize("value, rows", sorted(CLAMPS.items()))
@pytest.mark.parametrize("name", SERVERS)
def test_updates_clamp_like_queries_and_store_what_they_answer(servers, database, name, value, rows):
    status, headers, body = get(servers[name], f"/updates?queries={value}")
    assert status == 200 and tfb.media_type(headers["content-type"])[0] == "application/json", (status, headers)
    answer = json.loads(body)
    assert len(answer) == rows, (name, value, len(answer))
    written = {row["id"]: row["randomNumber"] for row in answer}  # a row read twice: its last value
    found = psql(database, f"SELECT id, randomnumber FROM world WHERE id IN ({','.join(map(str, written))})")
    assert dict(tuple(map(int, line.split("|"))) for line in found.stdout.split()) == written


@pytest.mark.parametrize("name", SERVERS)
def test_updates_change_the_table(servers, database, name):
    before = psql(database, "SELECT id, randomnumber FROM world ORDER BY id").stdout
    get(servers[name], "/updates?queries=500")
    after = psql(database, "SELECT id, randomnumber FROM world ORDER BY id").stdout
    changed = sum(a != b for a, b in zip(before.split(), after.split()))
    assert changed > 400, f"{name}: 500 updates changed {changed} rows"  # ids repeat, a number may too


@pytest.mark.parametrize(
    "request_",
    [Request("/fortunes"), Request("/updates", queries=20), Request("/updates", queries=1)],
    ids=lambda r: r.path(),
)
@pytest.mark.parametrize("name", SERVERS)
def test_cells_verify_answers_and_count_statements(servers, database, name, request_):
    base = f"http://127.0.0.1:{servers[name].spec.port}"
    check_answer(base, request_, database)
    count = count_queries(base, request_, database)
    per_request = 2 * request_.queries if request_.endpoint == "/updates" else 1
    assert count.expected == count.counted == 20 * per_request


@pytest.mark.parametrize("name", SERVERS)
def test_updates_through_pgbouncer_store_what_they_answer_and_run_every_statement(bounced, database, name):
    """/updates behind PgBouncer (transaction mode): each update in its own transaction on whichever server
    connection the pooler lends, rows really stored, every read and write counted by PostgreSQL itself."""
    status, _, body = get(bounced[name], "/updates?queries=20")
    assert status == 200, (name, body[:200])
    written = {row["id"]: row["randomNumber"] for row in json.loads(body)}
    found = psql(database, f"SELECT id, randomnumber FROM world WHERE id IN ({','.join(map(str, written))})")
    assert dict(tuple(map(int, line.split("|"))) for line in found.stdout.split()) == written
    count = count_queries(f"http://127.0.0.1:{bounced[name].spec.port}", Request("/updates", queries=5), database)
    assert count.expected == count.counted == 20 * 2 * 5


def test_a_count_that_is_off_fails_verification(servers, database):
    """Requests that read but never write, counted as /updates?queries=2: the missing UPDATEs fail the cell."""
    reads_only = f"http://127.0.0.1:{servers['tornado'].spec.port}/queries?queries=2&then="
    with pytest.raises(VerifyFailed, match="ran 0 statements like 'UPDATE world"):
        count_queries(reads_only, Request("/updates", queries=2), database)


@pytest.mark.parametrize("path", ["/json", "/plaintext", "/fortunes", "/updates?queries=2"])
def test_nginx_serves_none_of_them(path):
    with running("nginx") as nginx:
        assert request(nginx.spec.port, "GET", path)[0] == 404
