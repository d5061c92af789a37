"""The measured capacity per Tomcat setting beside what the pool-sizing models predict (capacity_models.py), for
the maxThreads advice: from a run with capacity searches (`--experiment capacity`: maxThreads 20 and 200 and
virtual threads at one target), each setting's bracket, Little's law and Erlang C, and where model and
measurement disagree; then what that means for the pool the advice sizes."""

from __future__ import annotations

import json
from pathlib import Path

from crossbench.decide import capacity, capacity_answer
from crossbench_analysis.judge import capacity_models
from crossbench_analysis.judge.capacity_marks import outcomes
from crossbench_analysis.read.runinfo import AnalysisError, Run, load_run

RUN_IT = "./runner/run_all.sh --experiment capacity"


class NoCapacity(ValueError):
    """The run given for capacity has no capacity search of Tomcat; the message says which experiment to run."""


def searches_of(source: Path | Run) -> tuple[str, list[dict], int]:
    """(run id, its capacity searches, the server's cores): from capacity.json, the searches as the run decided
    them (a committed reference result keeps only it, points and metadata), else from the run's records (a Run
    already loaded is not read again)."""
    run = source if isinstance(source, Run) else None
    run_dir = run.path if run else Path(source)
    meta_file = run_dir / "metadata.json"
    meta = run.metadata if run else json.loads(meta_file.read_text()) if meta_file.is_file() else {}
    cores = len(((meta.get("config") or {}).get("run") or {}).get("server_cpus") or [1])
    saved = run_dir / capacity.FILE
    if saved.is_file():
        return meta.get("run_id") or run_dir.name, json.loads(saved.read_text()), cores
    if run is None:
        try:
            run = load_run(run_dir)
        except AnalysisError as e:
            raise NoCapacity(f"{run_dir}: neither {capacity.FILE} nor a run's records ({e})") from e
    return run.run_id, outcomes(run), cores


def row(out: dict, cores: int) -> dict:
    """One setting: its bracket at its target (the highest rate held, over the long launch where one held, to
    the lowest shown to fail in any window) and the models beside it."""
    return {
        "setting": out["setting"],
        "max_threads": out["parallel_limit"],
        "delay_ms": out["delay_ms"],
        "target_p99_ms": out["target_p99_ms"],
        "status": out["status"],
        "passed_rps": capacity_answer.held_rps(out),
        "failed_rps": capacity_answer.fails(out),
        "ceiling_rps": out["ceiling_rps"],
        "long_launch_rps": capacity_answer.confirmed_rps(out),
        "long_launch_s": out.get("confirm_s"),
        "held_rps": capacity_answer.held_rps(out),
        "launches": [t["n"] for t in out["trials"]],
        "cpu_ms_per_request": out["cost"].get("cpu_ms_per_request"),
        **capacity_models.models(out, cores),
    }


def measured(capacity_dir: Path | Run, pool: int | None) -> dict:
    """advice.json's `capacity`: the rows, the settings where Little's law held and where it did not, and what
    they say of a pool of `pool` threads. NoCapacity when the run searched no Tomcat setting."""
    run_id, found, cores = searches_of(capacity_dir)
    tomcat = [out for out in found if out.get("server") == "tomcat"]
    if not tomcat:
        raise NoCapacity(
            f"run {run_id} has no capacity search of Tomcat (groups with rates = \"search\"): "
            f"run {RUN_IT} (about 20 min; --quick: about 4 min) and give its directory to --capacity"
        )
    rows = sorted((row(out, cores) for out in tomcat), key=lambda x: (x["max_threads"] is None, x["max_threads"] or 0))
    pools = [x for x in rows if x["max_threads"]]
    held = [x["max_threads"] for x in pools if x["little_where"] == capacity_models.INSIDE]
    missed = [x for x in pools if x["little_where"] not in (capacity_models.INSIDE, capacity_models.UNJUDGED)]
    where = capacity_dir.path if isinstance(capacity_dir, Run) else capacity_dir
    return {
        "run_id": run_id,
        "run_dir": str(where),
        "rows": rows,
        "model_held_at": held,
        "model_missed_at": [x["max_threads"] for x in missed],
        "for_pool": for_pool(pool, held, missed),
        "event_loops": [row(out, cores) for out in found if is_event_loop(out)],
    }


def is_event_loop(out: dict) -> bool:
    """A search of a server that waits without a worker (no parallel limit) on its kept connections, and is not
    Tomcat (whose virtual threads the rows hold): the event loops the advice sets beside the pool."""
    return (
        out.get("server") != "tomcat"
        and out.get("parallel_limit") is None
        and bool(out.get("keepalive"))
        and bool(out.get("delay_ms"))
    )


def for_pool(pool: int | None, held: list[int], missed: list[dict]) -> dict | None:
    """Whether the advised pool lies where the model was shown to hold on this machine: at or under the largest
    setting it held for and under the smallest it missed, past a setting it missed, or between the two."""
    if not pool:
        return None
    first_missed = min(missed, key=lambda x: x["max_threads"]) if missed else None
    if first_missed and pool >= first_missed["max_threads"]:
        return {
            "verdict": "past_a_miss",
            "setting": first_missed["setting"],
            "max_threads": first_missed["max_threads"],
            "passed_rps": first_missed["passed_rps"],
            "failed_rps": first_missed["failed_rps"],
            "little_rps": first_missed["little_rps"],
            "cpu_bound": first_missed["cpu_bound"],
        }
    if held and pool <= max(held):
        return {"verdict": "within_held", "max_threads": max(held)}
    return {
        "verdict": "unchecked",
        "held_up_to": max(held) if held else None,
        "missed_from": first_missed["max_threads"] if first_missed else None,
    }
