"""What a run could not read of a server it did not start (`--target URL`): its process figures, said once per
server setting, so that an empty threads or memory column reads as not read, never as none."""

from __future__ import annotations

from crossbench import known_servers
from crossbench.servers.external import NOT_READ, NOT_READ_WITH_PID
from crossbench_analysis.read.runinfo import Run
from crossbench_analysis.read.setting import setting

from .finding import Finding

FAMILY = "your server"


def not_started(cell: dict) -> bool:
    facts = known_servers.get(cell.get("server"))
    return facts is not None and not facts.starts


def findings(run: Run) -> list[Finding]:
    """One line per setting of a server the suite did not start: what it did not read, and why."""
    by_setting: dict[str, list[dict]] = {}
    for cell in run.cells:
        if not_started(cell):
            by_setting.setdefault(setting(cell), []).append(cell)
    return [sentence(name, cells) for name, cells in by_setting.items()]


def sentence(name: str, cells: list[dict]) -> Finding:
    pids = sorted({c["target_pid"] for c in cells if c.get("target_pid") is not None})
    if pids:
        said = (
            f"{name}: {NOT_READ_WITH_PID} not read: the suite did not start it (its process {pids[0]}, named by "
            "--target-pid, sampled for CPU, memory and threads)"
        )
    else:
        said = (
            f"{name}: {NOT_READ} not read: the suite did not start it (--target-pid PID samples its CPU, "
            "memory and threads)"
        )
    return Finding(FAMILY, said, cells=[c["cell_id"] for c in cells if c.get("cell_id")])
