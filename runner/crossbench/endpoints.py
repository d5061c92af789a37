"""Every endpoint a cell can measure, in one table (runner/CONTRACT.md says what each answers): its path, the
parameters its URL takes (a delay in ms, a query count), the database statements it runs, and the files of the
static mix. A URL is rendered from a typed Request with the delay the caller wants; no code edits `ms=` or
`queries=` in a URL string or parses them back. The query-count clamp is the contract's (crossbench_contract)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from crossbench_contract.db import query_count

STATIC_FILES = ("index.html", "big.jpg", "small.png")
DEFAULT_QUERIES = 20  # /queries and /updates when the group's options give no `queries`


@dataclass(frozen=True)
class Endpoint:
    path: str
    family: str  # "core" (every server's), "tfb" (TechEmpower's without a database), "db"
    delay: bool = False  # takes ?ms=N (the contract's delay rule)
    queries: bool = False  # takes ?queries=N (clamped by the server: 1..500)
    statements: tuple[str, ...] = ()  # what each request runs in the database (database/checks.STATEMENTS)
    files: tuple[str, ...] = ()  # a mix: one URL per file, under the path's directory
    techempower: bool = False  # one of TechEmpower's six test types

    @property
    def database(self) -> bool:
        return bool(self.statements)


TABLE = (
    Endpoint("/static/*", "core", files=STATIC_FILES),
    Endpoint("/delay/sync", "core", delay=True),
    Endpoint("/delay/async", "core", delay=True),
    Endpoint("/hello", "core"),
    Endpoint("/now", "core"),
    Endpoint("/json", "tfb", techempower=True),
    Endpoint("/plaintext", "tfb", techempower=True),
    Endpoint("/db", "db", statements=("world",), techempower=True),
    Endpoint("/queries", "db", queries=True, statements=("world",), techempower=True),
    Endpoint("/db/kv", "db", statements=("kv",)),
    Endpoint("/db/slow", "db", delay=True, statements=("slow",)),
    Endpoint("/fortunes", "db", statements=("fortune",), techempower=True),
    Endpoint("/updates", "db", queries=True, statements=("world", "update"), techempower=True),
)
BY_PATH = {e.path: e for e in TABLE}
STATIC_ENDPOINT = TABLE[0].path
TECHEMPOWER = tuple(e.path for e in TABLE if e.techempower)
SEED004 = ("/db", "/queries", "/db/kv", "/db/slow")  # the database endpoints seed 004's article measures


USER_FAMILY = "user"
# The concurrency whose latency is a user's request's service time: every --path group measures it, and the
# request's ratios are taken against it (figures/service_time.py).
SERVICE_CONCURRENCY = 1
# The user's own requests (--path, a run's [run] paths): GETs of paths the suite's contract does not know, with no
# configured delay. Registered for the run that names them (declare_user), as declared servers are: the run's
# recorded configuration holds them, so a resumed run and the analysis register them again.
USER: dict[str, Endpoint] = {}


def family(name: str) -> tuple[str, ...]:
    return tuple(e.path for e in TABLE if e.family == name)


def endpoint(path: str) -> Endpoint:
    try:
        return USER.get(path) or BY_PATH[path]
    except KeyError:
        raise ValueError(f"no endpoint {path!r}; known: {', '.join([*BY_PATH, *USER])}") from None


def user_path_problem(path: object) -> str | None:
    """Why `path` cannot be a user's request path (one GET, as sent on the wire), or None."""
    if not isinstance(path, str) or not path.startswith("/"):
        return f"a path starting with /, not {path!r}"
    if any(c.isspace() for c in path) or "#" in path:
        return f"a path without spaces or #, not {path!r}"
    return None


def declare_user(paths) -> list[str]:
    """The user's paths registered as endpoints; returns them. A path the contract also names is the user's in
    the run that names it: exactly that GET, no delay or query added, its ratios against its own C=1 latency."""
    for path in paths:
        USER[path] = Endpoint(path, USER_FAMILY)
    return list(paths)


def is_user(path: str | None) -> bool:
    return path in USER


def is_static(path: str | None) -> bool:
    """A URL of the static mix (/static/index.html, ...) or the mix itself."""
    return str(path or "").startswith(STATIC_ENDPOINT.rstrip("*"))


def takes_delay(path: str) -> bool:
    return endpoint(path).delay


@dataclass(frozen=True)
class Request:
    """One URL of a cell: the endpoint, the delay it asks for (ignored by an endpoint without one), the query
    count as asked (the server clamps it), and for the static mix the file."""

    endpoint: str
    delay_ms: int = 0
    queries: int = DEFAULT_QUERIES
    file: str | None = None

    @property
    def spec(self) -> Endpoint:
        return endpoint(self.endpoint)

    def path(self) -> str:
        if self.file is not None:
            return f"{self.endpoint.rsplit('/', 1)[0]}/{self.file}"
        spec = self.spec
        if spec.delay:
            return f"{self.endpoint}?ms={self.delay_ms}"
        if spec.queries:
            return f"{self.endpoint}?queries={self.queries}"
        return self.endpoint

    def with_delay(self, delay_ms: int) -> Request:
        return replace(self, delay_ms=delay_ms)

    @property
    def queries_per_request(self) -> int:
        """Rows (and queries) one request reads: the contract's clamp of the count asked, 1 without one."""
        return query_count([str(self.queries)]) if self.spec.queries else 1

    @property
    def statements(self) -> tuple[str, ...]:
        return self.spec.statements


def requests(path: str, *, delay_ms: int = 0, queries: int = DEFAULT_QUERIES) -> list[Request]:
    """The requests a cell on this endpoint sends: one per file of a mix, else one."""
    files = endpoint(path).files
    if files:
        return [Request(path, delay_ms, queries, file) for file in files]
    return [Request(path, delay_ms, queries)]
