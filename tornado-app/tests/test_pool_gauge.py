import asyncio
import csv
import os

import pytest
from testkit import wait_until

from crossbench_contract.asyncpg_queries import lend
from crossbench_contract.pool_gauge import INTERVAL_S, PoolGauge


class OnePool:
    """asyncpg.Pool's acquire/release with one connection (the real pool is exercised by the live seed004 tests)."""

    def __init__(self):
        self.free = asyncio.Semaphore(1)

    async def acquire(self, timeout):
        await asyncio.wait_for(self.free.acquire(), timeout)
        return "connection"

    async def release(self, connection):
        self.free.release()


def test_lend_counts_waiting_then_lent_and_gives_back_on_errors():
    gauge = PoolGauge(1)
    seen = []

    async def request(pool, fail=False):
        async with lend(pool, gauge, wait_s=1) as connection:
            seen.append((gauge.active, gauge.waiting_now))
            await asyncio.sleep(0.01)
            if fail:
                raise RuntimeError("query failed")
        return connection

    async def three():
        pool = OnePool()
        return await asyncio.gather(request(pool), request(pool, fail=True), request(pool), return_exceptions=True)

    results = asyncio.run(three())
    assert results[0] == results[2] == "connection" and isinstance(results[1], RuntimeError)
    assert seen == [(1, 2), (1, 1), (1, 0)]  # the first lent while two wait, then one by one
    assert (gauge.active, gauge.waiting_now) == (0, 0)


def test_a_wait_that_times_out_stops_counting():
    gauge = PoolGauge(1)

    async def starved():
        pool = OnePool()
        await pool.acquire(1)
        async with lend(pool, gauge, wait_s=0.05):
            pass

    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(starved())
    assert (gauge.active, gauge.waiting_now) == (0, 0)


@pytest.mark.spawns  # os.fork
def test_each_process_writes_its_own_file(tmp_path):
    gauge = PoolGauge(4, str(tmp_path))

    def rows_of(pid: int) -> int:  # the header and the rows written so far (line-buffered)
        path = tmp_path / f"{pid}.csv"
        return len(path.read_text().splitlines()) - 1 if path.exists() else 0

    with gauge.lent():
        gauge.start_log()
        child = os.fork()
        if child == 0:  # a forked worker: its own writer, its own file
            gauge.start_log()
            try:
                wait_until(lambda: rows_of(os.getpid()) >= 2, 10, "the worker's two rows")
            finally:
                os._exit(0 if rows_of(os.getpid()) >= 2 else 1)
        wait_until(lambda: rows_of(os.getpid()) >= 2, 10, "two rows")
        assert os.waitpid(child, 0)[1] == 0, "the worker wrote fewer than two rows"
    files = {p.stem: list(csv.DictReader(p.open())) for p in tmp_path.glob("*.csv")}
    assert set(files) == {str(os.getpid()), str(child)}
    mine = files[str(os.getpid())]
    assert len(mine) >= 2 and mine[0]["active"] == "1" and mine[0]["size"] == "4" and mine[0]["waiting"] == "0"
    assert float(mine[-1]["t_epoch"]) - float(mine[0]["t_epoch"]) >= INTERVAL_S * 0.9


def test_a_line_carries_the_most_at_once_since_the_previous_line():
    gauge = PoolGauge(2)
    with gauge.waiting(), gauge.waiting():
        with gauge.lent(), gauge.lent():
            pass
    assert (gauge.active, gauge.waiting_now) == (0, 0)
    first = gauge.line().rstrip().split(",")
    assert first[1:] == ["0", "0", "2", "2", "2"]  # none now; two lent and two waiting at once
    with gauge.lent():
        second = gauge.line().rstrip().split(",")
    assert second[1:] == ["1", "0", "2", "1", "0"]  # the most starts again from the counts then


def test_a_request_passing_to_a_free_connection_is_not_counted_as_waiting_for_one():
    gauge = PoolGauge(2)
    with gauge.waiting():  # a sync worker on its way to a free connection
        pass
    with gauge.lent():
        pass
    assert gauge.line().rstrip().split(",")[1:] == ["0", "0", "2", "1", "0"]
