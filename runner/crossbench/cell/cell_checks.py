"""What fails a cell besides its load: the answers checked before the load and again after it (every URL
answers 200, TechEmpower's rules, the database endpoints from the real tables), the server process alive, the
run's database alive. The cell lifecycle (cell.py) calls these; each raises CellFailed or returns a flag."""

from __future__ import annotations

import urllib.request

from crossbench import servers, tfb, workload, workload_answers
from crossbench.database import stack
from crossbench.database.checks import wait_idle
from crossbench.database.verify import VerifyFailed, check_answers, verify_database_cell
from crossbench.plan.cellplan import CellPlan
from crossbench.servers import RunningServer

from .cell_context import CellContext

AFTER_LOAD_IDLE_LIMIT_S = 15.0  # how long the check after the load waits for the window's stragglers to finish


class CellFailed(RuntimeError):
    """The cell could not be measured; the record says why and the run goes on."""


class ServerDied(CellFailed):
    """The server process exited while the cell ran."""


def verify(server: RunningServer, plan: CellPlan) -> None:
    """Every URL of the cell answers 200 before anything is measured (delay endpoints at ms=0); /json and
    /plaintext as TechEmpower's rules say (tfb.py); a workload file's requests each as they declare."""
    declared = workload.declared(plan.options)
    for request in declared:
        if problem := workload_answers.problem(request, *workload_answers.send(server.url, request, 10)):
            raise CellFailed(f"verify: {problem}")
    for path in () if declared else plan.paths(delay_ms=0):
        try:
            with urllib.request.urlopen(server.url + path, timeout=10) as response:
                body = response.read()
                if response.status != 200 or not body:
                    raise CellFailed(f"verify: {path} answered {response.status} with {len(body)} bytes")
                tfb.check_answer(path, {k.lower(): v for k, v in response.headers.items()}, body)
        except tfb.RuleBroken as e:
            raise CellFailed(f"verify: {e}") from e
        except OSError as e:
            raise CellFailed(f"verify: {path} failed: {e}") from e


def verify_database(plan: CellPlan, front: RunningServer, db_url: str) -> dict:
    """The database endpoints answer from the real tables, one query per row (counted by the database)."""
    try:
        count = verify_database_cell(front.url, plan.requests(), db_url)
    except (VerifyFailed, OSError, ValueError) as e:
        raise CellFailed(f"verify: {e}") from e
    return stack.database_figures(plan, count)


def verify_after_load(plan: CellPlan, front: RunningServer, db_url: str | None, ctx: CellContext) -> None:
    """The answers are still right after the load (an update that stopped storing, a page that lost its escaping
    under pressure): the cell fails rather than report figures for wrong answers. TechEmpower's types and the
    database endpoints only; query counts before the load only (requests still queued from the window would
    run statements of their own). Requests still queued in the server when the load stopped are let finish
    first: one that rewrote a row between an /updates answer and its read-back failed sound cells. The database
    cannot see requests still queued in the server (Tomcat's 200 threads behind a pool of 10 at C=512), so the
    answers are checked twice before the cell fails: a straggler rewrites a row once, a server that stopped
    storing fails both."""
    if plan.endpoint not in (*servers.TFB_ENDPOINTS, *servers.DB_ENDPOINTS) or database_flags(ctx, db_url):
        return  # a database that died in the window: its 503s are the outage, flagged database_died
    idle = wait_idle(db_url, AFTER_LOAD_IDLE_LIMIT_S) if db_url else True
    verify(front, plan)
    if not db_url:
        return
    for attempt in (1, 2):
        try:
            check_answers(front.url, plan.requests(), db_url)
            return
        except (VerifyFailed, OSError, ValueError) as e:
            if attempt == 2:
                busy = (
                    "" if idle else f" (other requests were still running {AFTER_LOAD_IDLE_LIMIT_S:g} s after the load)"
                )
                raise CellFailed(f"verify after the load, twice: {e}{busy}") from e
            idle = wait_idle(db_url, AFTER_LOAD_IDLE_LIMIT_S)


def database_flags(ctx: CellContext, db_url: str | None) -> list[str]:
    """A database cell whose database went away during the cell: its errors (503s) are the outage, not the
    server; the run starts the database again before the next cell."""
    return ["database_died"] if db_url and ctx.database and not ctx.database.alive() else []


def died(plan: CellPlan, server: RunningServer) -> ServerDied | None:
    """Decided from the server process itself: a load generator's own failure is never the server dying."""
    if server.alive():
        return None
    return ServerDied(f"{plan.server} {server.exit_note()} during the cell:\n{server.log_tail()}")
