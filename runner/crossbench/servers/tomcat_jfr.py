"""Reads a Tomcat cell's JFR recording after the cell, cut to its measured window: the JVM's own evidence.

    figures(cell_dir / "tomcat.jfr", jdk_home, t0, t1)   # the record's tomcat_jfr_* / tomcat_gc_* fields

The recording (`-XX:StartFlightRecording=...,settings=default`, dumped when Tomcat exits) is read with the JDK's
own `jfr print --json`, the tool of the JDK that wrote it (a newer one reads older recordings). Only events that
overlap the window [t0, t1] count; a duration is cut to the part inside the window. Reading happens after the
server has stopped, so it costs no measured time (about 1 s for a short cell here; the record keeps how long).

What the default settings record, and so what these figures can and cannot say:
- every garbage collection (jdk.GarbageCollection) and every GC pause (jdk.GCPhasePause), however short;
- every platform thread start (jdk.ThreadStart); virtual thread starts are off by default (jdk.VirtualThreadStart),
  so a virtual-thread cell counts only the platform threads it started (carriers, pollers);
- virtual threads pinned to their carrier for 20 ms or more (jdk.VirtualThreadPinned, JDK 21+; on JDK 24+
  `synchronized` no longer pins, so this is native frames and class initialisers);
- sleeps, parks and monitor waits of 20 ms or more (jdk.ThreadSleep, jdk.ThreadPark, jdk.JavaMonitorWait):
  shorter ones are not recorded at all, so the request threads' totals are lower bounds, and a cell whose delay
  is under 20 ms shows none. Request threads are the connector's (`http-nio-<port>-exec-<n>`) and the virtual
  executor's (`http-vt-<n>`); JDK 17 records no sleep of a virtual thread (it has none) and no pinning event.
A recording that is missing, torn (the JVM killed before its dump) or unreadable leaves every figure null and
says why in tomcat_jfr_unreadable; the cell itself stands, flagged jfr_unreadable (a recording that was off is no flag).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

from ..jdk import JdkError, select_jdk

RECORDING = "tomcat.jfr"
# The jfr tool's own JVM, C1 only: a half-second read compiles little worth C2, and on one core the same JSON
# came in 0.48 s instead of 1.3 s (a 530 kB recording of a quick cell, JDK 17), paid after every Tomcat cell.
TOOL_JVM_OPTS = ("-J-XX:TieredStopAtLevel=1",)
EVENTS = (
    "jdk.GarbageCollection",
    "jdk.GCPhasePause",
    "jdk.ThreadStart",
    "jdk.VirtualThreadPinned",
    "jdk.ThreadSleep",
    "jdk.ThreadPark",
    "jdk.JavaMonitorWait",
)
REQUEST_THREAD = re.compile(r"^http-(?:vt-\d+|nio-.+-exec-\d+)$")
WAITS = {
    "jdk.ThreadSleep": "tomcat_request_sleep_ms",
    "jdk.ThreadPark": "tomcat_request_park_ms",
    "jdk.JavaMonitorWait": "tomcat_request_monitor_wait_ms",
}
# The record fields read from the recording (the Tomcat plug-in declares them as its own: servers/tomcat.py).
FIELDS = {
    "tomcat_jfr_unreadable": "Tomcat: null when tomcat.jfr was read; else why not (missing, torn, jfr off); a "
    "recording that was on but could not be read also flags the cell jfr_unreadable",
    "tomcat_jfr_read_s": "Tomcat: seconds spent reading tomcat.jfr after the server stopped (not measured time)",
    "tomcat_gc_count": "Tomcat: garbage collections overlapping the window (jdk.GarbageCollection)",
    "tomcat_gc_pause_count": "Tomcat: GC pauses overlapping the window, however short (jdk.GCPhasePause)",
    "tomcat_gc_pause_total_ms": "Tomcat: their summed duration, ms (whole pauses)",
    "tomcat_gc_pause_max_ms": "Tomcat: the longest of them, ms",
    "tomcat_thread_starts": "Tomcat: platform threads started in the window (jdk.ThreadStart; virtual thread "
    "starts are not recorded by JFR's default settings)",
    "tomcat_vthread_pinned_count": "Tomcat: virtual threads pinned to their carrier for 20 ms or more "
    "(jdk.VirtualThreadPinned; shorter pinning is not recorded; JDK 21+)",
    "tomcat_vthread_pinned_max_ms": "Tomcat: the longest such pinning, ms; null when none",
    "tomcat_request_sleep_ms": "Tomcat: time request threads (http-nio-*-exec-*, http-vt-*) slept in the window, "
    "ms, counting only sleeps of 20 ms or more (jdk.ThreadSleep): /delay/sync's wait",
    "tomcat_request_park_ms": "Tomcat: the same for parks of 20 ms or more (jdk.ThreadPark); a platform pool's "
    "idle threads waiting for work count here too",
    "tomcat_request_monitor_wait_ms": "Tomcat: the same for Object.wait of 20 ms or more (jdk.JavaMonitorWait)",
}
FIGURES = tuple(name for name in FIELDS if name not in ("tomcat_jfr_unreadable", "tomcat_jfr_read_s"))
READ_TIMEOUT_S = 180.0
_DURATION = re.compile(r"^PT(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?[\d.]+)S)?$")


class JfrUnreadable(RuntimeError):
    """The recording is missing, torn, or the jfr tool could not read it."""


def epoch(timestamp: str) -> float:
    """'2026-11-24T04:31:22.686849153Z' (nanoseconds, which datetime cannot hold) -> seconds since the epoch."""
    whole, _, rest = timestamp.rstrip("Z").partition(".")
    seconds = datetime.fromisoformat(whole).replace(tzinfo=UTC).timestamp()
    return seconds + (float(f"0.{rest}") if rest else 0.0)


def seconds(duration: str | None) -> float:
    """An ISO-8601 duration as java.time.Duration prints it ('PT0.072S', 'PT1M2.5S') -> seconds."""
    match = _DURATION.match(duration or "")
    if not match:
        raise ValueError(f"not a JFR duration: {duration!r}")
    hours, minutes, secs = (float(g) if g else 0.0 for g in match.groups())
    return hours * 3600 + minutes * 60 + secs


def jfr_tool(jdk_home: str | Path | None) -> Path:
    """The jfr tool of the JDK that ran Tomcat; else (a server on another host, its JDK not here) the newest here."""
    if jdk_home and (Path(jdk_home) / "bin" / "jfr").is_file():
        return Path(jdk_home) / "bin" / "jfr"
    try:
        return select_jdk("newest", need_virtual_threads=False).jfr
    except JdkError as e:
        raise JfrUnreadable(f"no jfr tool: {e}") from None


def read_events(recording: Path, tool: Path, events=EVENTS, timeout_s: float = READ_TIMEOUT_S) -> list[dict]:
    """The recording's events of these types, as `jfr print --json` gives them (without stack traces)."""
    if not recording.is_file():
        raise JfrUnreadable(f"no recording: {recording.name} is missing (the JVM did not dump it at exit)")
    argv = [
        str(tool),
        *TOOL_JVM_OPTS,
        "print",
        "--json",
        "--stack-depth",
        "0",
        "--events",
        ",".join(events),
        str(recording),
    ]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise JfrUnreadable(f"jfr print took over {timeout_s:.0f} s") from None
    except OSError as e:
        raise JfrUnreadable(f"cannot run {tool}: {e}") from None
    if done.returncode != 0 or "could not read recording" in done.stderr:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise JfrUnreadable(f"jfr print failed (exit {done.returncode}): {said[-1] if said else 'no message'}")
    try:
        return json.loads(done.stdout)["recording"]["events"]
    except (ValueError, KeyError, TypeError) as e:
        raise JfrUnreadable(f"jfr print gave no readable JSON: {e}") from None


def in_window(events: list[dict], t0: float, t1: float) -> list[tuple[str, float, dict]]:
    """(type, seconds inside [t0, t1], values) of each event that overlaps the window; instants count as 0 s."""
    kept = []
    for event in events:
        values = event["values"]
        start = epoch(values["startTime"])
        end = start + (seconds(values["duration"]) if "duration" in values else 0.0)
        if end >= t0 and start <= t1:
            kept.append((event["type"], max(0.0, min(end, t1) - max(start, t0)), values))
    return kept


def window_figures(events: list[dict], t0: float, t1: float) -> dict:
    """The record's figures from the events (pure). A GC pause or a pinning that overlaps the window counts whole;
    a request thread's sleep, park or wait counts only its part inside the window."""
    kept = in_window(events, t0, t1)

    def of(kind):
        return [(inside, values) for k, inside, values in kept if k == kind]

    pauses = [seconds(v["duration"]) * 1000 for _, v in of("jdk.GCPhasePause")]
    pinned = [seconds(v["duration"]) * 1000 for _, v in of("jdk.VirtualThreadPinned")]
    out = {
        "tomcat_gc_count": len(of("jdk.GarbageCollection")),
        "tomcat_gc_pause_count": len(pauses),
        "tomcat_gc_pause_total_ms": round(sum(pauses), 3),
        "tomcat_gc_pause_max_ms": round(max(pauses, default=0), 3),
        "tomcat_thread_starts": len(of("jdk.ThreadStart")),
        "tomcat_vthread_pinned_count": len(pinned),
        "tomcat_vthread_pinned_max_ms": round(max(pinned), 3) if pinned else None,
    }
    for kind, field in WAITS.items():
        out[field] = round(1000 * sum(inside for inside, v in of(kind) if request_thread(v)), 1)
    return out


def request_thread(values: dict) -> bool:
    return bool(REQUEST_THREAD.match((values.get("eventThread") or {}).get("javaName") or ""))


def figures(recording: Path, jdk_home: str | Path | None, t0: float, t1: float) -> dict:
    """The record's fields; never raises for a bad recording (the figures are then null, with the reason)."""
    started = time.monotonic()
    try:
        read = window_figures(read_events(recording, jfr_tool(jdk_home)), t0, t1)
        reason = None
    except (JfrUnreadable, ValueError, KeyError, TypeError) as e:
        read, reason = dict.fromkeys(FIGURES), str(e)
    return {**read, "tomcat_jfr_unreadable": reason, "tomcat_jfr_read_s": round(time.monotonic() - started, 2)}
