"""The check after the load (cell_checks.verify_after_load): a row a straggler rewrote between an /updates answer
and its read-back passes on the second check; a server that stopped storing fails both."""

from types import SimpleNamespace

import pytest

from crossbench.cell import cell_checks
from crossbench.cell.cell_checks import CellFailed, verify_after_load
from crossbench.database.verify import VerifyFailed

URL = "postgresql://crossbench@127.0.0.1:1/crossbench"


def checked(monkeypatch, outcomes):
    """verify_after_load on an /updates cell whose read-backs give `outcomes` in turn (None: the rows match)."""
    left = list(outcomes)
    calls = []

    def check_answers(url, requests, db_url):
        calls.append(db_url)
        outcome = left.pop(0)
        if outcome:
            raise VerifyFailed(outcome)

    monkeypatch.setattr(cell_checks, "check_answers", check_answers)
    monkeypatch.setattr(cell_checks, "wait_idle", lambda url, limit_s: True)
    monkeypatch.setattr(cell_checks, "verify", lambda front, plan: None)
    plan = SimpleNamespace(endpoint="/updates", requests=lambda: ["/updates?queries=15"])
    ctx = SimpleNamespace(database=SimpleNamespace(alive=lambda: True))
    verify_after_load(plan, SimpleNamespace(url="http://127.0.0.1:1"), URL, ctx)
    return calls


def test_a_row_a_straggler_rewrote_passes_on_the_second_check(monkeypatch):
    assert len(checked(monkeypatch, ["answered {2948: 6977}, the table holds {2948: 1759}", None])) == 2


def test_a_server_that_stopped_storing_fails_both_checks(monkeypatch):
    with pytest.raises(CellFailed, match="twice: answered"):
        checked(monkeypatch, ["answered {1: 2}, the table holds {1: 3}"] * 2)


def test_answers_that_match_are_read_once(monkeypatch):
    assert len(checked(monkeypatch, [None])) == 1
