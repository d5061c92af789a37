"""A record's setting in analysis (setting.py): the record's own words; for records older than the field, the
words of its server plug-in, so a plug-in registered in a test labels its own old records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crossbench.servers import PLUGINS, ServerPlugin
from crossbench.servers.base import Knob
from crossbench_analysis.read.setting import fixed_knobs, pool_size, setting, setting_order, sweeps_pool

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_records_own_setting_is_the_label():
    for cell in records(FIXTURES / "runs" / "seed004-quick" / "cells.jsonl"):
        assert setting(cell) == cell["setting"]
    assert {setting(c) for c in records(FIXTURES / "runs" / "seed004-quick" / "cells.jsonl")} >= {
        "tomcat maxThreads=200",
        "tornado p2",
        "gunicorn 2 sync workers",
        "uvicorn w3",
    }


def test_a_schema_1_record_gets_its_plug_ins_words():
    cells = records(FIXTURES / "seeds" / "seed001" / "cells.jsonl")
    assert not any("setting" in c for c in cells)
    assert sorted(setting(c) for c in cells) == ["tomcat maxThreads=200", "tornado", "tornado p2"]


def test_a_plug_in_registered_in_a_test_labels_its_old_records(monkeypatch):
    class Toy(ServerPlugin):
        name = "toy"
        knobs = (Knob("lanes", 3, "lanes", sweep=True, label="lanes={}"), Knob("queue", 7, "queue", label="q={}"))

        def describe(self, settings: dict) -> str:
            return f"toy on {settings['lanes']} lanes"

    monkeypatch.setitem(PLUGINS, "toy", Toy())
    assert setting({"server": "toy", "lanes": 5}) == "toy on 5 lanes"
    assert setting({"server": "toy"}) == "toy on 3 lanes"
    assert fixed_knobs({"server": "toy", "lanes": 5, "queue": 9}) == ["q=9"]
    assert setting({"server": "nobody-knows"}) == "nobody-knows"


def test_settings_read_in_numeric_order_then_by_text():
    labels = [
        "tomcat virtual",
        "tomcat maxThreads=200",
        "tomcat maxThreads=20",
        "tomcat maxThreads=50, pool16",
        "tomcat maxThreads=50, pool2",
    ]
    assert sorted(labels, key=setting_order) == [
        "tomcat maxThreads=20",
        "tomcat maxThreads=50, pool2",
        "tomcat maxThreads=50, pool16",
        "tomcat maxThreads=200",
        "tomcat virtual",
    ]


@pytest.mark.parametrize(
    "record, pooled, size",
    [
        ({"server": "tomcat", "executor": "platform", "max_threads": 50}, True, 50),
        ({"server": "tomcat", "executor": "virtual", "max_threads": None}, True, None),
        ({"server": "tornado", "processes": 2}, False, None),
    ],
)
def test_the_pool_the_maxthreads_family_sweeps(record, pooled, size):
    assert sweeps_pool(record) is pooled and pool_size(record) == size
