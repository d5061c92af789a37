"""Starts the real servers for tests, on free ports, and always stops them."""

from __future__ import annotations

import contextlib
import http.client
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from threading import Barrier, Event

from crossbench import paths
from crossbench.hosts.local import HERE
from crossbench.oskit import free_port
from crossbench.servers import PLUGINS, RunningServer, tomcat


@contextlib.contextmanager
def running(server: str, db_url: str | None = None, **settings):
    """The server plug-in `server` with these knobs (the rest at their defaults; no per-cell artefacts), its
    database endpoints on `db_url` if given."""
    plugin = PLUGINS[server]
    with tempfile.TemporaryDirectory(prefix=f"test-{server}-") as work:
        spec = plugin.spec(plugin.settings(settings), free_port(), Path(work), db_url=db_url)
        with RunningServer(spec, HERE) as running_server:
            yield running_server


def build_missing_reason() -> str | None:
    try:
        tomcat.tomcat_home()
        return None
    except paths.BuildMissing as e:
        return str(e)


def request(port: int, method: str, path: str, headers: dict | None = None, timeout: float = 30.0):
    """One request with the path sent exactly as given (no client-side normalisation)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        conn.endheaders()
        response = conn.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        conn.close()


@dataclass(frozen=True)
class Timed:
    """One request's times, read on the thread that sent it (perf_counter: one clock for every thread)."""

    sent: float  # just before its bytes went out (sent apart: before its connection was opened)
    answered: float  # after the whole answer was read
    status: int


def timed_requests(port: int, path: str, count: int, apart_s: float = 0.0) -> list[Timed]:
    """`count` GETs, each on its own connection. Together (apart_s=0: connections opened beforehand, the requests
    released at once), or each sent `apart_s` after the one before it was sent, on a connection opened then (which
    process of a prefork server accepts it is part of what such a test measures). The clock starts on the sending
    thread as the request goes out: a thread the machine schedules late cannot shorten what is measured."""
    ready = Barrier(count, timeout=60)
    sent_events = [Event() for _ in range(count)]
    sent_at = [0.0] * count

    def one(i: int) -> Timed:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            if not apart_s:
                conn.connect()
                ready.wait()
            elif i:
                sent_events[i - 1].wait()
                time.sleep(max(0.0, sent_at[i - 1] + apart_s - time.perf_counter()))
            sent_at[i] = time.perf_counter()
            sent_events[i].set()
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            return Timed(sent_at[i], time.perf_counter(), response.status)
        finally:
            sent_events[i].set()  # a failed send must not leave the next request waiting for ever
            conn.close()

    with ThreadPoolExecutor(max_workers=count) as pool:
        return [f.result() for f in [pool.submit(one, i) for i in range(count)]]


def span_s(timed: list[Timed]) -> float:
    """From the first request sent to the last answer read."""
    return max(t.answered for t in timed) - min(t.sent for t in timed)


def timed_parallel(port: int, path: str, parallel: int) -> tuple[float, list[int]]:
    """Sends `parallel` GETs at once, each on its own connection; returns the time from the first request sent
    to the last answer read, and the statuses."""
    timed = timed_requests(port, path, parallel)
    return span_s(timed), [t.status for t in timed]
