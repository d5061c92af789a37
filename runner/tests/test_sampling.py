"""ProcessTreeSampler against a real process tree; summarize(); the CSV round trip."""

from __future__ import annotations

import csv
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import psutil
import pytest
from testkit import kill_group, wait_until

from crossbench.sampling import ProcessTreeSampler, Sample, csv_header, read_samples_csv, summarize

FIXTURES = Path(__file__).parent / "fixtures"
N_THREADS = 5  # idle threads per child
ALLOC_MB = 50  # per child
INTERVAL = 0.1


class Tree:
    """tree_workload.py: parent + 2 children, driven through stdin."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, str(FIXTURES / "tree_workload.py"), str(N_THREADS), str(ALLOC_MB)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.strip())

    def expect(self, *prefixes: str, timeout: float = 10.0) -> dict[str, str]:
        """Wait for one line starting with each prefix; returns prefix -> line."""
        wanted, got = set(prefixes), {}
        deadline = time.monotonic() + timeout
        while wanted:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"workload: no line for {sorted(wanted)} in {timeout} s")
            for p in list(wanted):
                if line.startswith(p):
                    got[p] = line
                    wanted.discard(p)
        return got

    def send(self, cmd: str) -> None:
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        kill_group(self.proc)


@pytest.fixture
def tree():
    t = Tree()
    try:
        yield t
    finally:
        t.kill()


SAMPLES_DEADLINE_S = 30.0  # a sampler that stopped sampling fails the test instead of hanging it


def wait_samples(sampler: ProcessTreeSampler, n: int = 3) -> tuple[float, float]:
    """Let n fresh samples be taken; returns the (t0, t1) window that holds exactly them."""
    start = time.time()
    fresh = lambda: [s for s in sampler.samples() if s.t_epoch > start]  # noqa: E731
    wait_until(lambda: len(fresh()) >= n, SAMPLES_DEADLINE_S, f"{n} fresh samples")
    return fresh()[0].t_epoch, fresh()[n - 1].t_epoch


def wait_for_state(pid: int, status: str, timeout: float = 5.0) -> None:
    wait_until(lambda: psutil.Process(pid).status() == status, timeout, f"pid {pid} to become {status}")


@pytest.mark.spawns  # tree_workload.py
def test_sampler_on_a_real_process_tree(tree, tmp_path, report_figure):
    out_csv = tmp_path / "samples.csv"
    loadgen_pid = None
    sampler = ProcessTreeSampler(
        tree.proc.pid, loadgen_pid_fn=lambda: loadgen_pid, interval_s=INTERVAL, out_csv=out_csv
    )
    with sampler:
        forked = tree.expect("forked").get("forked").split()
        child0 = int(forked[1])
        tree.expect("ready 0", "ready 1")

        # 3 processes, 1 + 2 * (1 + N_THREADS) threads
        t0, t1 = wait_samples(sampler)
        base = summarize(sampler.samples(), t0, t1)
        assert base["samples"] == 3
        assert base["procs_peak"] == 3
        assert [s.procs for s in sampler.samples() if t0 <= s.t_epoch <= t1] == [3, 3, 3]
        assert abs(base["threads_mean"] - (1 + 2 * (1 + N_THREADS))) <= 1
        assert base["loadgen_cpu_percent"] is None  # no load generator yet
        assert base["cpu_percent"] < 30  # idle, but for start-up tails

        # each child allocates ALLOC_MB: the tree RSS rises by 2 * ALLOC_MB
        tree.send("alloc")
        tree.expect("allocated 0", "allocated 1")
        t0, t1 = wait_samples(sampler)
        grown = summarize(sampler.samples(), t0, t1)
        rise = grown["rss_peak_mb"] - base["rss_peak_mb"]
        assert 2 * ALLOC_MB * 0.8 <= rise <= 2 * ALLOC_MB * 1.3, rise

        # an exited, not yet reaped child is a zombie: not counted
        tree.send("zombie")
        zombie = int(tree.expect("zombie")["zombie"].split()[1])
        wait_for_state(zombie, psutil.STATUS_ZOMBIE)
        t0, t1 = wait_samples(sampler)
        assert summarize(sampler.samples(), t0, t1)["procs_peak"] == 3

        # child 0 spins one core; it is also the "load generator" for this test
        loadgen_pid = child0
        sampler.set_phase("measure")
        tree.send("burn 2.0")
        burned = tree.expect("burned 0", timeout=15)["burned 0"].split()
        sampler.set_phase("cooldown")
        b0, b1, burned_cpu = float(burned[2]), float(burned[3]), float(burned[4])
        truth = burned_cpu / (b1 - b0) * 100  # what the burner really got
        burn = summarize(sampler.samples(), b0 + 2 * INTERVAL, b1)
        assert burn["samples"] >= 10
        assert burn["cpu_percent"] == pytest.approx(truth, abs=15), (truth, burn)
        assert burn["loadgen_cpu_percent"] == pytest.approx(truth, abs=15), (truth, burn)
        if truth >= 90:  # it had a core to itself (the usual case)
            assert 75 <= burn["cpu_percent"] <= 125, burn
            assert 75 <= burn["loadgen_cpu_percent"] <= 125, burn
            assert sum(burn["cpu_per_core"].values()) >= 75, burn
        else:
            report_figure(
                f"test_sampling: the burner got only {truth:.0f} % of a core "
                "(machine busy); checked against that instead of 100 %"
            )
        assert set(burn["cpu_per_core"]) == {str(i) for i in range(psutil.cpu_count())}
        loadgen_pid = None

        # the tree goes away: the sampler goes on, reporting an empty tree
        tree.send("exit")
        tree.proc.wait(timeout=10)
        t_gone = time.time()
        wait_samples(sampler, 3)
        after = [s for s in sampler.samples() if s.t_epoch > t_gone + INTERVAL]
        assert after and all(s.procs == 0 and s.threads == 0 and s.rss_mb == 0 for s in after)
        assert sampler.running
        assert sampler.errors == 0, sampler.last_error
    assert not sampler.running

    samples = sampler.samples()
    phases = [s.phase for s in samples]
    assert phases[0] == "idle" and "measure" in phases and phases[-1] == "cooldown"
    first_measure = phases.index("measure")
    assert set(phases[first_measure : phases.index("cooldown")]) == {"measure"}

    # the CSV holds the same samples
    with open(out_csv, newline="") as f:
        header = next(csv.reader(f))
    assert header == csv_header(psutil.cpu_count())
    assert header[:6] == ["t_epoch", "phase", "procs", "threads", "rss_mb", "cpu_percent"]
    assert header[-4:] == ["loadgen_cpu_percent", "pool_current", "pool_busy", "tcp_passive_opens"]
    back = read_samples_csv(out_csv)
    assert len(back) == len(samples)
    for a, b in zip(samples, back):
        assert abs(a.t_epoch - b.t_epoch) < 0.001
        assert (a.phase, a.procs, a.threads) == (b.phase, b.procs, b.threads)
        assert abs(a.rss_mb - b.rss_mb) <= 0.051  # written with 1 decimal
        assert (a.cpu_percent is None) == (b.cpu_percent is None)
        assert (a.loadgen_cpu_percent is None) == (b.loadgen_cpu_percent is None)
        assert b.pool_current is None and b.pool_busy is None
        assert a.passive_opens == b.passive_opens and isinstance(b.passive_opens, int)  # /proc/net/snmp here
    assert back[0].cpu_percent is None  # no delta for the first sample

    # a window cut between samples keeps exactly the samples inside it, CSV or live
    i, j = 5, len(samples) - 5
    w0 = (samples[i - 1].t_epoch + samples[i].t_epoch) / 2
    w1 = (samples[j].t_epoch + samples[j + 1].t_epoch) / 2
    live, read = summarize(samples, w0, w1), summarize(back, w0, w1)
    assert live["samples"] == read["samples"] == j - i + 1
    assert live["threads_peak"] == read["threads_peak"] == max(s.threads for s in samples[i : j + 1])
    assert live["cpu_percent"] == pytest.approx(read["cpu_percent"], abs=0.1)


def _s(
    t, threads=10, cpu=50.0, cores=(10.0, 20.0), lg=None, cur=None, busy=None, rss=100.0, phase="measure", procs=1
) -> Sample:
    return Sample(
        t_epoch=t,
        phase=phase,
        procs=procs,
        threads=threads,
        rss_mb=rss,
        cpu_percent=cpu,
        cpu_cores=cores,
        loadgen_cpu_percent=lg,
        pool_current=cur,
        pool_busy=busy,
    )


def test_summarize_cuts_the_window():
    samples = [
        _s(99.9, threads=1000, cpu=900.0, rss=9999.0, cur=500, busy=500),  # before: out
        _s(100.0, threads=10, cpu=None, cores=(None, None)),  # t0: in
        _s(100.5, threads=20, cpu=40.0, cores=(50.0, 0.0), lg=80.0, cur=8, busy=3, rss=120.0),
        _s(101.0, threads=30, cpu=60.0, cores=(100.0, 20.0), lg=100.0, cur=10, busy=7),  # t1: in
        _s(101.1, threads=2000, cpu=999.0, rss=9999.0, cur=900, busy=900),  # after: out
    ]
    got = summarize(samples, 100.0, 101.0)
    assert got == {
        "samples": 3,
        "procs_peak": 1,
        "threads_peak": 30,
        "threads_mean": 20.0,
        "rss_peak_mb": 120.0,
        "cpu_percent": 50.0,
        "cpu_per_core": {"0": 75.0, "1": 10.0},
        "loadgen_cpu_percent": 90.0,
        "pool_current_peak": 10,
        "pool_busy_peak": 7,
        "tcp_opens_in_window": None,
    }
    empty = summarize(samples, 200.0, 300.0)
    assert empty["samples"] == 0 and empty["threads_peak"] is None
    assert empty["cpu_percent"] is None and empty["cpu_per_core"] == {}


def test_the_tail_waits_for_the_first_sample_after_the_window_and_no_longer():
    from crossbench.sampling.samples import PhasedSampler

    sampler = PhasedSampler()
    sampler._samples.append(_s(100.0))
    late = threading.Timer(0.2, lambda: sampler._samples.append(_s(time.time())))
    t1, sent = time.time(), time.monotonic()
    late.start()
    assert sampler.wait_past(t1, limit_s=5.0)
    assert 0.15 < time.monotonic() - sent < 4.0  # it waited for the late sample, not for the limit
    sent = time.monotonic()
    assert not sampler.wait_past(time.time() + 100, limit_s=0.1)  # none comes: the limit ends it
    assert time.monotonic() - sent >= 0.1


def test_connections_opened_inside_the_window_are_counted_between_its_first_and_last_sample():
    """The machine's accepted-connection counter in each sample: the window counts what it accepted between its
    first and last sample (a lower bound: its edges are left out), none without two readings."""
    opens = {99.9: 50, 100.0: 100, 100.5: 104, 101.0: 107, 101.1: 900}
    samples = [replace(_s(t), passive_opens=n) for t, n in opens.items()]
    assert summarize(samples, 100.0, 101.0)["tcp_opens_in_window"] == 7
    assert summarize(samples[:2], 99.95, 100.2)["tcp_opens_in_window"] is None


def test_csv_round_trip_keeps_empty_values_and_skips_a_cut_row(tmp_path):
    path = tmp_path / "s.csv"
    sampler = ProcessTreeSampler(os.getpid(), interval_s=0.05, out_csv=path)
    with sampler:
        sampler.set_phase("warmup")
        wait_until(lambda: len(sampler.samples()) >= 3, SAMPLES_DEADLINE_S, "3 samples")
    live = sampler.samples()
    with open(path, "a") as f:
        f.write("1700000000.000,measure,1,2")  # a row cut by a crash
    back = read_samples_csv(path)
    assert len(back) == len(live) >= 3
    assert back[0].cpu_percent is None and back[1].cpu_percent is not None
    assert all(s.procs == 1 and s.threads >= 1 and s.rss_mb > 5 for s in back)
    assert all(s.loadgen_cpu_percent is None and s.pool_busy is None for s in back)
    assert len(back[0].cpu_cores) == psutil.cpu_count()
    # appending to an existing file does not repeat the header
    with ProcessTreeSampler(os.getpid(), interval_s=0.05, out_csv=path) as again:
        wait_until(lambda: len(again.samples()) >= 2, SAMPLES_DEADLINE_S, "2 samples")
    lines = path.read_text().splitlines()
    assert sum(1 for line in lines if line.startswith("t_epoch")) == 1


@pytest.mark.spawns  # sh
def test_sampler_survives_process_churn_and_a_missing_root(tmp_path):
    # a shell forking short-lived children as fast as it can: processes vanish between
    # the /proc listing and the reads all the time
    churn = subprocess.Popen(["sh", "-c", "while :; do /bin/true; done"], start_new_session=True)
    try:
        sampler = ProcessTreeSampler(churn.pid, interval_s=0.02, out_csv=tmp_path / "c.csv")
        with sampler:  # CPU counts in ticks of 10 ms: on a busy machine a busy shell can read 0 for a while
            wait_until(
                lambda: len(sampler.samples()) >= 30 and max(s.cpu_percent or 0 for s in sampler.samples()) > 20,
                SAMPLES_DEADLINE_S,
                "30 samples of the churning tree, one with the shell busy",
            )
        samples = sampler.samples()
        assert sampler.errors == 0, sampler.last_error
        assert len(samples) >= 30
        assert all(1 <= s.procs <= 3 for s in samples)
        assert max(s.cpu_percent or 0 for s in samples) > 20  # the shell is busy
    finally:
        os.killpg(churn.pid, signal.SIGKILL)
        churn.wait()

    # a pid that no longer exists: an empty tree, no error
    with ProcessTreeSampler(churn.pid, interval_s=0.02, out_csv=tmp_path / "m.csv") as gone:
        wait_until(gone.samples, SAMPLES_DEADLINE_S, "a sample of the missing root")
    assert gone.errors == 0
    assert gone.samples() and all(s.procs == 0 for s in gone.samples())


def test_sampler_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError):
        ProcessTreeSampler(os.getpid(), interval_s=0, out_csv=tmp_path / "x.csv")
    with pytest.raises(ValueError):
        ProcessTreeSampler(os.getpid(), out_csv=None)
    s = ProcessTreeSampler(os.getpid(), out_csv=tmp_path / "x.csv")
    with pytest.raises(ValueError):
        s.set_phase("")


@pytest.mark.spawns  # a Python child
def test_the_load_client_sampled_is_a_tool_or_one_of_the_projects_own_clients():
    from crossbench.cell.cell import is_load_client, loadgen_pid

    class Seen:  # a process as the sampler reads it: its name, then maybe its command line
        def __init__(self, name, cmdline):
            self._name, self._cmdline = name, cmdline

        def name(self):
            return self._name

        def cmdline(self):
            return self._cmdline

    assert is_load_client(Seen("wrk", ["wrk", "-t1", "-c10", "http://127.0.0.1:8080/"]))
    holder = [sys.executable, "-m", "crossbench.clients.holder", "--port", "8080", "--connections", "500"]
    assert is_load_client(Seen("python3", holder))
    assert not is_load_client(Seen("python3", [sys.executable, "-m", "crossbench.run", "--experiment", "seed003"]))
    assert not is_load_client(Seen("java", ["java", "org.apache.catalina.startup.Bootstrap", "start"]))
    # a child that looks like the holder to the process table (-c ignores the arguments after it)
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()", "-m", "crossbench.clients.holder"], stdin=subprocess.PIPE
    )
    try:
        assert wait_until(loadgen_pid(), 10, "the holder-like child to be found") == child.pid
    finally:
        child.kill()
        child.wait()
