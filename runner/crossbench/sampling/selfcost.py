"""Measure what the samplers cost: python -m crossbench.sampling.selfcost [options]

Against a JVM (a ThreadsHolder fixture with --threads platform threads, or --pid of a
running JVM such as Tomcat), for --seconds each:
  1. baseline: the target's own CPU with nothing attached;
  2. ProcessTreeSampler at --interval: CPU seconds of the sampler thread (thread_time);
  3. JvmProbe at --interval: the probe JVM's start-up CPU and wall time, its steady CPU,
     and the target's extra CPU serving the JMX reads; target threads before/after attach.
Prints one JSON object. Numbers are CPU seconds over the window and percent of one core.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import psutil

from .jvm_probe import JvmProbe
from .process_tree import ProcessTreeSampler

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "ThreadsHolder.java"


def _cpu(p: psutil.Process) -> float:
    c = p.cpu_times()
    return c.user + c.system


def measure(pid: int, seconds: float, interval_s: float, warm_s: float) -> dict:
    target = psutil.Process(pid)
    out: dict = {
        "target_pid": pid,
        "window_s": seconds,
        "interval_s": interval_s,
        "target_threads_before": target.num_threads(),
    }

    c0 = _cpu(target)
    time.sleep(seconds)
    out["baseline_target_cpu_s"] = round(_cpu(target) - c0, 3)

    with tempfile.TemporaryDirectory() as tmp:
        sampler = ProcessTreeSampler(pid, interval_s=interval_s, out_csv=Path(tmp) / "s.csv")
        w0 = time.monotonic()
        with sampler:
            time.sleep(seconds)
        wall = time.monotonic() - w0
    n = len(sampler.samples())
    out["sampler"] = {
        "samples": n,
        "errors": sampler.errors,
        "thread_cpu_s": round(sampler.self_cpu_s, 4),
        "percent_of_core": round(sampler.self_cpu_s / wall * 100, 2),
        "cpu_ms_per_sample": round(sampler.self_cpu_s / max(n, 1) * 1000, 3),
        "tree_threads": sampler.samples()[-1].threads if n else None,
    }

    w0 = time.monotonic()
    probe = JvmProbe(pid, interval_s=interval_s).start()
    try:
        startup_wall = time.monotonic() - w0
        pp = psutil.Process(probe.probe_pid)
        startup_cpu = _cpu(pp)
        time.sleep(warm_s)
        t0, p0, l0 = _cpu(target), _cpu(pp), probe.lines
        time.sleep(seconds)
        t1, p1, l1 = _cpu(target), _cpu(pp), probe.lines
        out["probe"] = {
            "java": probe.jvm_info.get("probe_java_version"),
            "startup_wall_s": round(startup_wall, 2),
            "startup_cpu_s": round(startup_cpu, 2),
            "warmup_s": warm_s,
            "lines": l1 - l0,
            "probe_cpu_s": round(p1 - p0, 3),
            "probe_percent_of_core": round((p1 - p0) / seconds * 100, 2),
            "probe_rss_mb": round(pp.memory_info().rss / 2**20, 1),
            "target_cpu_s": round(t1 - t0, 3),
            "target_extra_percent_of_core": round(((t1 - t0) - out["baseline_target_cpu_s"]) / seconds * 100, 2),
            "target_threads_with_probe": target.num_threads(),
        }
    finally:
        probe.stop()
    out["target_threads_after_probe"] = target.num_threads()
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pid", type=int, help="a running JVM (default: start ThreadsHolder)")
    ap.add_argument("--threads", type=int, default=200)
    ap.add_argument("--java", default="java", help="java for the ThreadsHolder fixture")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--interval", type=float, default=0.25)
    ap.add_argument("--probe-warmup", type=float, default=10.0, help="seconds the probe runs before its steady window")
    a = ap.parse_args(argv)
    holder = None
    try:
        pid = a.pid
        if pid is None:
            holder = subprocess.Popen(
                [a.java, str(FIXTURE), str(a.threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
            line = holder.stdout.readline()
            if not line.startswith("ready"):
                raise SystemExit(f"ThreadsHolder did not start: {line!r}")
            time.sleep(2.0)  # let its start-up JIT settle
            pid = holder.pid
        print(json.dumps(measure(pid, a.seconds, a.interval, a.probe_warmup), indent=2))
    finally:
        if holder is not None:
            holder.kill()
            holder.wait()


if __name__ == "__main__":
    main()
