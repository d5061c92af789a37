"""A counting HTTP server for the live load generator tests (holds no tests itself).

A minimal HTTP/1.x server on tornado's TCPServer, on 127.0.0.1 and a free port, in its own thread.
It answers 200 on the paths it is given and 404 elsewhere, honours Connection: close / keep-alive,
and counts what the tools really sent: connections, requests per path, requests per method and path with their
bodies and the value of an X-Kind header, requests carrying Connection: close, and how many complete requests
each read from a socket held (pipelining).
"""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections import Counter
from dataclasses import dataclass, field

import pytest
from tornado.iostream import StreamClosedError
from tornado.netutil import bind_sockets
from tornado.tcpserver import TCPServer

from crossbench.loadgen.base import LoadSpec

BODY = b"Hello, world"


def open_loop_spec(**changes) -> LoadSpec:
    """The open-loop generators' (k6, oha) test spec: 200 req/s of /hello for 2 s, at most 10 in flight."""
    base = dict(urls=("http://127.0.0.1:8080/hello",), concurrency=10, duration_s=2, timeout_s=5, rate=200.0)
    return LoadSpec(**{**base, **changes})


def open_loop_against_tornado(adapter, rate: float, out_dir):
    """A live run of an open-loop adapter (k6, oha): `rate` req/s of /hello for 2 s, at most 10 in flight, against
    a real Tornado; the pinned build must be there and say its pinned version."""
    if not adapter.available():
        pytest.fail(
            f"{adapter.name} {adapter.VERSION} is not built: run runner/install-openloop.sh (runner/test.sh does)"
        )
    from live_servers import running

    with running("tornado") as server:
        result = adapter.run(open_loop_spec(urls=(server.url + "/hello",), rate=rate), out_dir)
    assert result.tool_version == adapter.VERSION
    return result


@dataclass
class Seen:
    connections: int = 0
    hits: Counter = field(default_factory=Counter)
    close_requests: int = 0
    batches: list[int] = field(default_factory=list)
    sent: Counter = field(default_factory=Counter)  # (method, path, body, X-Kind header) of each request

    @property
    def requests(self) -> int:
        return sum(self.hits.values())


class CountingServer(TCPServer):
    def __init__(self, paths: set[str]):
        super().__init__()
        self.paths = paths
        self.seen = Seen()

    async def handle_stream(self, stream, address):
        self.seen.connections += 1
        buffer = b""
        try:
            while True:
                buffer += await stream.read_bytes(65536, partial=True)
                heads = []
                while b"\r\n\r\n" in buffer:  # each request whole: its head and its Content-Length's body
                    head, rest = buffer.split(b"\r\n\r\n", 1)
                    length = content_length(head)
                    if len(rest) < length:
                        break
                    heads.append((head, rest[:length]))
                    buffer = rest[length:]
                if not heads:
                    continue
                self.seen.batches.append(len(heads))
                answers, keep = [], True
                for head, body in heads:
                    answer, keep = self.answer(head, body)
                    answers.append(answer)
                    if not keep:
                        break
                await stream.write(b"".join(answers))
                if not keep:
                    stream.close()
                    return
        except StreamClosedError:
            pass

    def answer(self, head: bytes, sent_body: bytes = b"") -> tuple[bytes, bool]:
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ")
        headers = {k.strip().lower(): v.strip().lower() for k, v in (h.split(":", 1) for h in lines[1:] if ":" in h)}
        self.seen.sent[(method, target.split("?", 1)[0], sent_body.decode("latin-1"), headers.get("x-kind"))] += 1
        connection = headers.get("connection", "")
        keep = "keep-alive" in connection if version == "HTTP/1.0" else "close" not in connection
        path = target.split("?", 1)[0]
        self.seen.hits[path] += 1
        self.seen.close_requests += "close" in connection
        status, body = (b"200 OK", BODY) if path in self.paths else (b"404 Not Found", b"not found")
        return (
            b"HTTP/1.1 "
            + status
            + b"\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: %s\r\n\r\n"
            % (len(body), b"keep-alive" if keep else b"close")
            + body
        ), keep


def content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0


class ServerThread:
    """CountingServer on its own asyncio loop in a daemon thread; .url(path), .seen, .stop()."""

    def __init__(self, paths: set[str]):
        self.server = CountingServer(paths)
        self._ready = threading.Event()
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("counting server did not start")

    async def _main(self):
        sockets = bind_sockets(0, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]
        self.server.add_sockets(sockets)
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        self._ready.set()
        await self._stop.wait()
        self.server.stop()

    @property
    def seen(self) -> Seen:
        return self.server.seen

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)


@pytest.fixture
def counting_server():
    server = ServerThread({"/a", "/b", "/c", "/hello"})
    yield server
    server.stop()


def need(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not on PATH")
