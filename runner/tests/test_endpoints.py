"""The endpoint table (crossbench/endpoints.py): every URL a cell sends is rendered from a typed request, with the
delay its caller wants; the query count's clamp is the contract's; CONTRACT.md and the servers' plug-ins agree
with the table."""

import re

import pytest

from crossbench import endpoints, paths, servers
from crossbench.endpoints import TABLE, Request
from crossbench_contract.db import MAX_QUERIES, query_count

CROSSBENCH_DIR = paths.RUNNER / "crossbench"


@pytest.mark.parametrize("endpoint", TABLE, ids=lambda e: e.path)
def test_each_endpoint_renders_its_url_with_the_delay_and_count_asked(endpoint):
    urls = [r.path() for r in endpoints.requests(endpoint.path, delay_ms=250, queries=7)]
    if endpoint.files:
        assert urls == [f"/static/{name}" for name in endpoint.files]
    elif endpoint.delay:
        assert urls == [f"{endpoint.path}?ms=250"]
    elif endpoint.queries:
        assert urls == [f"{endpoint.path}?queries=7"]
    else:
        assert urls == [endpoint.path]


def test_the_delay_endpoints_and_the_count_endpoints_are_what_the_table_says():
    assert {e.path for e in TABLE if e.delay} == {"/delay/sync", "/delay/async", "/db/slow"}
    assert {e.path for e in TABLE if e.queries} == {"/queries", "/updates"}
    assert {e.path for e in TABLE if e.database} == set(servers.DB_ENDPOINTS)


def test_a_request_takes_another_delay_without_touching_a_string():
    slow = Request("/db/slow", delay_ms=400)
    assert (slow.path(), slow.with_delay(0).path(), slow.with_delay(1).path()) == (
        "/db/slow?ms=400",
        "/db/slow?ms=0",
        "/db/slow?ms=1",
    )
    assert Request("/hello", delay_ms=400).path() == "/hello"  # no delay to take: the bare path
    assert Request("/queries", delay_ms=400, queries=3).with_delay(1).path() == "/queries?queries=3"


@pytest.mark.parametrize("asked, rows", [(0, 1), (1, 1), (2, 2), (20, 20), (500, 500), (501, 500), (900, 500)])
@pytest.mark.parametrize("path", ["/queries", "/updates"])
def test_the_count_is_clamped_as_the_contract_clamps_it(path, asked, rows):
    assert Request(path, queries=asked).queries_per_request == rows == query_count([str(asked)])
    assert Request("/db", queries=asked).queries_per_request == 1  # /db reads one row whatever is asked
    assert MAX_QUERIES == 500


def test_each_database_endpoint_names_the_statements_it_runs():
    from crossbench.database.checks import STATEMENTS

    for endpoint in TABLE:
        assert set(endpoint.statements) <= set(STATEMENTS), endpoint
    assert endpoints.endpoint("/updates").statements == ("world", "update")


def test_an_unknown_endpoint_is_refused_by_name():
    with pytest.raises(ValueError, match="no endpoint '/nope'"):
        Request("/nope").path()


def test_the_servers_serve_only_endpoints_of_the_table():
    served = {path for plugin in servers.PLUGINS.values() for path in plugin.endpoints}
    assert served == {e.path for e in TABLE}


def test_the_contract_page_covers_every_endpoint():
    page = (paths.RUNNER / "CONTRACT.md").read_text()
    documented = set(re.findall(r"^\| `(/[^`?]*)", page, re.MULTILINE))
    for endpoint in TABLE:
        wanted = f"{endpoint.path.rsplit('/', 1)[0]}/{endpoint.files[0]}" if endpoint.files else endpoint.path
        assert wanted in documented, f"runner/CONTRACT.md has no row for {wanted}"


def test_no_module_writes_or_patches_a_parameter_into_a_url_string():
    """URLs come from endpoints.Request: a `ms=` or `queries=` built or edited elsewhere is a second rule."""
    pattern = re.compile(r"""(?<![\w.])(ms|queries)=(["'{(]|\\d)|["'?&](ms|queries)=""")
    offenders = [
        f"{path.relative_to(CROSSBENCH_DIR)}:{number}"
        for path in sorted(CROSSBENCH_DIR.rglob("*.py"))
        if path.name != "endpoints.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []


def test_the_families_the_analysis_reads_come_from_the_table():
    assert endpoints.TECHEMPOWER == ("/json", "/plaintext", "/db", "/queries", "/fortunes", "/updates")
    assert set(endpoints.SEED004) <= set(endpoints.family("db")) and all(
        endpoints.endpoint(p) for p in endpoints.SEED004
    )
    assert [endpoints.is_static(p) for p in ("/static/index.html", "/static/*", "/delay/sync", None, "/staticx")] == [
        True,
        True,
        False,
        False,
        False,
    ]
