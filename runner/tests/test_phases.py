"""A cell's wall time phase by phase (cell/phases.py): each mark ends the phase it names, a phase marked twice
adds up, and the file holds what was marked."""

import json

from crossbench.cell import phases as phases_module
from crossbench.cell.phases import Phases


def test_each_mark_ends_its_phase_and_a_phase_marked_twice_adds_up(tmp_path, monkeypatch):
    clock = iter([100.0, 101.5, 104.0, 104.25, 109.0])
    monkeypatch.setattr(phases_module.time, "monotonic", lambda: next(clock))
    spent = Phases()  # starts at 100.0
    spent.mark("server_start")  # 1.5
    spent.mark("window")  # 2.5
    spent.mark("server_start")  # 0.25 more
    spent.mark("record")  # 4.75
    spent.write(tmp_path)
    assert json.loads((tmp_path / phases_module.FILE).read_text()) == {
        "server_start": 1.75,
        "window": 2.5,
        "record": 4.75,
    }
