"""A record's setting in analysis (setting.py): the record's own words; for records older than the field (schema
1: Tomcat and Tornado), the words their plug-ins gave them then; a server's labels from its facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crossbench import known_servers
from crossbench.knobs import Knob
from crossbench.server_facts import ServerFacts
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


def test_schema_1s_words_follow_its_pool_and_processes():
    assert setting({"server": "tomcat", "executor": "virtual", "max_threads": None}) == "tomcat virtual"
    assert setting({"server": "tomcat", "executor": "platform", "max_threads": 20}) == "tomcat maxThreads=20"
    assert setting({"server": "tornado", "processes": 4}) == "tornado p4"
    assert setting({"server": "nobody-knows"}) == "nobody-knows"


def test_a_server_known_by_its_facts_labels_the_knobs_its_setting_leaves_out(monkeypatch):
    knobs = (Knob("lanes", 3, "lanes", sweep=True, label="lanes={}"), Knob("queue", 7, "queue", label="q={}"))
    monkeypatch.setitem(known_servers.FACTS, "toy", ServerFacts("toy", knobs))
    assert fixed_knobs({"server": "toy", "lanes": 5, "queue": 9}) == ["q=9"]
    assert fixed_knobs({"server": "nobody-knows", "queue": 9}) == []


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
