"""Serving on one shared listening socket from 1 or N processes, with no orphan ever left behind.

Tornado's own fork_processes restarts dead children and leaves them running when the parent is killed;
here the parent forwards SIGTERM/SIGINT to its workers, and each worker dies with its parent (PDEATHSIG).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

from tornado import httpserver, ioloop, netutil

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def serve_forever(app, sockets) -> None:
    server = httpserver.HTTPServer(app, xheaders=False)
    server.add_sockets(sockets)
    loop = ioloop.IOLoop.current()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: loop.add_callback_from_signal(loop.stop))
    loop.start()


def run(make_app, port: int, backlog: int, processes: int, address: str = "127.0.0.1") -> int:
    sockets = netutil.bind_sockets(port, address=address, backlog=backlog)
    if processes == 1:
        serve_forever(make_app(), sockets)
        return 0
    children = []
    for _ in range(processes):
        pid = os.fork()
        if pid == 0:
            die_with_parent()
            serve_forever(make_app(), sockets)
            os._exit(0)
        children.append(pid)
    return supervise(children)


def supervise(children: list[int]) -> int:
    """Waits for the workers; on a signal, or when one dies, stops them all."""

    def stop_all(*_):
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop_all)
    signal.signal(signal.SIGINT, stop_all)
    status = 0
    remaining = set(children)
    while remaining:
        try:
            pid, code = os.wait()
        except ChildProcessError:
            break
        remaining.discard(pid)
        if code != 0 and remaining:
            print(f"tornado worker {pid} exited with status {code}; stopping the others", file=sys.stderr)
            status = 1
            stop_all()
    return status
