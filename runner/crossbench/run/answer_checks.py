"""Before the first cell of a run with the user's own requests (--path, a workload file): one unmeasured start of
each server that serves them, where the run puts it, and each path sent once, each declared request as declared.
A server that started but says in its log that it did not deploy (a user's WAR Tomcat could not load: its first
SEVERE line), a path that answers other than 2xx and a declared request that does not answer as it declares (its
name, the status and the first bytes of its body) are refused in one line before any cell, with nothing left
running."""

from __future__ import annotations

import tempfile
from pathlib import Path

from crossbench import endpoints, oskit, servers, workload, workload_answers
from crossbench.plan.cellplan import CellPlan
from crossbench.workload_answers import BODY_SHOWN

from .run_checks import Refused

ANSWER_TIMEOUT_S = 30.0  # one request to a server that just started (a first JSP compiles, a cache fills)


def user_cells(cells: list[CellPlan]) -> dict[str, tuple[CellPlan, list]]:
    """Per server: its first cell on a user path (or with a user's WAR or app), and what those cells request, in
    plan order: each path as a GET, each declared request (a workload file's) once by its name."""
    found: dict[str, tuple[CellPlan, list]] = {}
    for cell in cells:
        if endpoints.is_user(cell.endpoint) or cell.settings.get("war") or cell.settings.get("app"):
            first, asked = found.setdefault(cell.server, (cell, []))
            for request in workload.declared(cell.options) or [cell.endpoint]:
                if request not in asked:
                    asked.append(request)
    return found


def check_answers(cells: list[CellPlan], placement) -> None:
    """Each server that serves user paths started once (its first setting: deploying does not depend on the
    knobs swept), its deploy checked, each path asked once; Refused on the first that fails."""
    host = placement.server_host
    with tempfile.TemporaryDirectory(prefix="crossbench-answers-") as work:
        for server, (cell, paths) in user_cells(cells).items():
            folder = Path(work) / server  # on a host of its own, copied there as a cell's folder is
            folder.mkdir()
            spec = cell.plugin.spec(
                cell.settings, host.free_port(), folder, cell.server_cpus, folder, address=host.address
            )
            try:
                with cell.plugin.running(spec, host, folder) as running:
                    refuse_undeployed(cell, spec.log_path)
                    for request in paths:
                        if isinstance(request, dict):
                            refuse_declared(server, request, running.url)
                        else:
                            refuse_answer(server, request, *answer(running.url + request))
            except (servers.ServerFailed, oskit.PortInUse) as e:
                raise Refused(
                    f"{server}: the start before load that checks the user's requests failed: {' '.join(str(e).split())[:400]}"
                ) from None


def refuse_undeployed(cell: CellPlan, log_path: Path) -> None:
    """Its plug-in reads its logs (a server on a host of its own has them there: its answers below still tell)."""
    if log_path.exists() and (problem := cell.plugin.deploy_problem(cell.settings, log_path)):
        raise Refused(problem)


def answer(url: str) -> tuple[int | None, bytes, str]:
    """One GET: its status and the first bytes of its body, or no status and why none came."""
    return workload_answers.fetch(url, ANSWER_TIMEOUT_S, BODY_SHOWN)


def refuse_declared(server: str, request: dict, base_url: str) -> None:
    sent = workload_answers.send(base_url, request, ANSWER_TIMEOUT_S)
    if problem := workload_answers.problem(request, *sent):
        raise Refused(f"{server}: before load, {problem}")


def refuse_answer(server: str, path: str, status: int | None, body: bytes, error: str) -> None:
    if status is None:
        raise Refused(f"{server}: GET {path} got no answer before load ({error}); each --path must answer 2xx")
    if not 200 <= status < 300:
        shown = body.decode("utf-8", errors="replace")
        raise Refused(
            f"{server}: GET {path} answered {status} before load; each --path must answer 2xx; its body "
            f"begins: {shown!r}"
        )
