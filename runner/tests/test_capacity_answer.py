"""A capacity search's answer (decide/capacity_answer.py, in words capacity_words.py), known answers on searches
driven against the simulated pool of test_capacity.py: nothing is stated above a rate that failed its long launch
nor above a pool's size over its delay, an estimate only where launches at one rate disagreed, and how far the held
rate moves between sittings said per setting."""

from __future__ import annotations

import random
import re

import pytest
from test_capacity import searched, simulated, tomcat_only

from crossbench.decide import capacity, capacity_answer, capacity_spread, capacity_words
from crossbench.plan import experiment

MACHINE = "Test CPU, 2 cores"


def numbers(text: str) -> list[float]:
    """Every req/s figure a sentence states ("1,000 req/s", "952-1000 req/s", "[940, 1000] req/s")."""
    found = []
    for span in re.findall(r"([\d,.\[\] -]+) req/s", text):
        found += [float(v.replace(",", "")) for v in re.findall(r"\d[\d,]*(?:\.\d+)?", span)]
    return found


def as_pool(records: list[dict], threads: int) -> list[dict]:
    """The simulated launches as a pool of `threads` workers reported them (its parallel limit)."""
    return [{**r, "parallel_limit": threads, "setting": f"tomcat maxThreads={threads}"} for r in records]


def test_a_setting_whose_long_launch_failed_at_1000_is_never_stated_above_1000():
    """A pool of 200 at 200 ms: short launches hold 1,000 req/s (the simulated server answers 1,010), the 60 s
    launch there does not, one step lower it does: the answer holds 952 for 60 s, its bracket ends at 1,000, and
    no figure passes 1,000."""
    config = tomcat_only(confirm_s=60, start_rate=1000)
    records, cells = searched(config, capacity_rps=1010)
    [out] = capacity_answer.outcomes(records, experiment.recorded(config), MACHINE)
    assert out["passed_rps"] == 1000 and out["confirmations"][0]["rate"] == 1000
    first = next(r for r in records if "-confirm-q1000" in r["cell_id"])
    first["latency_ms"] = {"p99": 343.0}  # the 60 s launch at 1,000 did not hold
    more = capacity.next_launches(cells, records, experiment.recorded(config))
    records += relaunched(more)
    [out] = capacity_answer.outcomes(as_pool(records, 200), experiment.recorded(config), MACHINE)
    assert (out["held_rps"], out["held_s"]) == (952, 60) and (out["fails_rps"], out["fails_s"]) == (1000, 60)
    assert out["estimate"] is None or out["estimate"]["ci95_high"] <= 1000
    words = capacity_words.sentence(out)
    assert "holds 952 req/s for 60 s and fails at 1000 for 60 s" in words
    assert max(numbers(words)) <= 1000, words


def relaunched(cells) -> list[dict]:
    """The long launch one step lower, against the same simulated server (it holds there)."""
    return [simulated(c, random.Random(3), capacity_rps=1010) for c in cells]


def test_a_pool_of_200_at_200_ms_is_never_stated_above_1000():
    """The simulated server answers 1,100 req/s in short windows, above what 200 workers holding 200 ms each can
    (Little's law: 1,000): what held, the estimate and every figure the answer states stay at or under 1,000."""
    config = tomcat_only(start_rate=500, max_launches=5)
    records, _ = searched(config, capacity_rps=1100)
    [out] = capacity_answer.outcomes(as_pool(records, 200), experiment.recorded(config), MACHINE)
    assert out["passed_rps"] > 1000  # the short launches held above the pool's ceiling
    assert out["known_ceiling_rps"] == 1000 and out["known_ceiling"] == "its pool: 200 / 200 ms"
    assert out["held_rps"] <= 1000
    assert out["estimate"] is None or out["estimate"]["ci95_high"] <= 1000
    words = capacity_words.sentence(out)
    assert "never above 1,000 req/s (its pool: 200 / 200 ms)" in words
    assert f"its short launches held up to {out['passed_rps']:g} req/s, above that ceiling" in words
    claims = words.split(" and fails at ")[0] + words.split(": bracket ")[-1].split("-", 1)[0]
    assert max(numbers(claims)) <= 1000, words


def test_an_estimate_only_where_launches_at_one_rate_disagreed():
    """Every launch below the capacity held and every one above failed: the bracket is the answer, no estimate.
    Launches that disagree at a rate (2 of 4) give one, inside the bracket, naming that rate."""
    config = tomcat_only()
    records, _ = searched(config)
    [clean] = capacity_answer.outcomes(records, experiment.recorded(config), MACHINE)
    assert not capacity_answer.mixed_rates([(t["rate"], i < t["held"]) for t in clean["trials"] for i in range(t["n"])])
    assert clean["estimate"] is None and "launches that disagree" in clean["estimate_why"]
    assert ", no estimate (no rate with launches that disagree" in capacity_words.sentence(clean)
    launches = [(90.0, True)] * 3 + [(95.0, True), (95.0, False), (95.0, True), (95.0, False)] + [(100.0, False)] * 3
    fitted, why = capacity_answer.estimate({"trials": [], "confirmations": []}, launches)
    assert why == "" and fitted["mixed_rps"] == [95.0] and 90 <= fitted["value"] <= 100


def test_the_spread_between_sittings_is_said_per_setting(tmp_path, monkeypatch):
    """Two settings measured on this machine, one not: each answer says its own setting's move, one wider than
    its bracket says so, the one not measured says none was; nothing widens the bracket."""
    config = tomcat_only()
    records, _ = searched(config)
    [series] = {capacity.series_of(r["point_id"], r["rate"]) for r in records}
    table = tmp_path / "spread.toml"
    monkeypatch.setattr(capacity_spread, "FILE", table)
    for held, moves, wider in (([95.0, 97.0, 96.0], "2 %", False), ([60.0, 97.0], "62 %", True)):
        table.write_text(
            f'[[machine]]\nmeasured_on = "{MACHINE}"\nsource = "three runs"\n'
            f'[[machine.setting]]\nseries = "{series}"\nheld_rps = {held}\n'
            f'[[machine.setting]]\nseries = "another"\nheld_rps = [10.0, 20.0]\n'
        )
        [out] = capacity_answer.outcomes(records, experiment.recorded(config), MACHINE)
        assert out["spread"]["held_rps"] == held and out["spread_wider"] is wider
        words = capacity_words.sentence(out)
        assert f"the held rate moves {moves} between sittings ({len(held)} on {MACHINE}" in words
        assert ("another sitting may answer outside it" in words) is wider
        assert (out["passed_rps"], out["failed_rps"]) == (out["held_rps"], out["fails_rps"])  # not widened
    [elsewhere] = capacity_answer.outcomes(records, experiment.recorded(config), "Other CPU, 2 cores")
    assert elsewhere["spread"] is None
    assert "not measured between sittings on this machine" in capacity_words.sentence(elsewhere)


@pytest.mark.parametrize("held, moves", [((100.0, 100.0, 95.2), 100 / 95.2 - 1), ((800.0, 2560.0), 2.2)])
def test_a_setting_moves_by_its_highest_held_rate_over_its_lowest(held, moves):
    spread = capacity_spread.SettingSpread("s", held, MACHINE, "")
    assert spread.moves == pytest.approx(moves)
