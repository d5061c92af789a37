"""The worker's pool is made once, however many of its gthread threads meet the first use together (each made
one of its own before: 3 workers x 8 threads ran PostgreSQL out of connections in tfb's 20-query cells)."""

from __future__ import annotations

import threading
import time

from crossbench_flask import db


class SlowPool:
    """Stands in for psycopg_pool.ConnectionPool here (no database): slow to make, as a pool opening its
    connections is, which is what let the threads race; it counts how many were made."""

    made = 0

    def __init__(self, *args, **kwargs):
        time.sleep(0.05)
        SlowPool.made += 1


def test_eight_threads_at_the_first_use_make_one_pool(monkeypatch):
    monkeypatch.setattr(db, "ConnectionPool", SlowPool)
    monkeypatch.setattr(db, "_pool", None)
    start = threading.Barrier(8)
    got = []

    def first_request():
        start.wait()
        got.append(db.pool())

    threads = [threading.Thread(target=first_request) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert SlowPool.made == 1 and len(got) == 8 and all(p is got[0] for p in got)
