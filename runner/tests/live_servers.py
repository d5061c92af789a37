"""Starts the real servers for tests, on free ports, and always stops them."""
from __future__ import annotations

import contextlib
import http.client
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from threading import Barrier

from crossbench import paths
from crossbench.servers import PLUGINS, RunningServer, free_port


@contextlib.contextmanager
def running(server: str, db_url: str | None = None, **settings):
    """The server plug-in `server` with these knobs (the rest at their defaults; no per-cell artefacts), its
    database endpoints on `db_url` if given."""
    plugin = PLUGINS[server]
    with tempfile.TemporaryDirectory(prefix=f"test-{server}-") as work:
        spec = plugin.spec(plugin.settings(settings), free_port(), Path(work), db_url=db_url)
        with RunningServer(spec) as running_server:
            yield running_server


def build_missing_reason() -> str | None:
    try:
        paths.tomcat_home()
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


def timed_parallel(port: int, path: str, parallel: int) -> tuple[float, list[int]]:
    """Sends `parallel` GETs at once, each on its own connection; returns the wall time until the last answer."""
    barrier = Barrier(parallel + 1)

    def one():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.connect()
        barrier.wait()
        conn.request("GET", path)
        status = conn.getresponse().status
        conn.close()
        return status

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        futures = [pool.submit(one) for _ in range(parallel)]
        barrier.wait()
        start = time.perf_counter()
        statuses = [f.result() for f in futures]
        return time.perf_counter() - start, statuses
