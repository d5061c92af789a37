"""wrk's coordinated-omission correction undone: known answers from a line-for-line port of wrk's stats_correct
(src/stats.c of wrk 4.1.0), and the real wrk's own output recovered to one sample per request."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from crossbench.loadgen import wrk, wrk_correction
from crossbench.loadgen.wrk_correction import Unrecoverable, check_count, interval_us, undone

FIXTURES = Path(__file__).parent / "fixtures" / "loadgen" / "wrk"


def stats_correct(histogram: dict[int, int], expected: int) -> dict[int, int]:
    """wrk's stats_correct over a dict of buckets, as its C loop runs (max unchanged, buckets read in order)."""
    data = dict(histogram)
    top = max(histogram)
    for n in range(expected * 2, top + 1):
        count = data.get(n, 0)
        m = n - expected
        while count and m > expected:
            data[m] = data.get(m, 0) + count
            m -= expected
    return data


def pairs(data: dict[int, int]) -> list[tuple[int, int]]:
    return sorted((v, c) for v, c in data.items() if c)


def test_the_interval_is_wrks_integer_arithmetic():
    assert interval_us(4_000_000, 8_590, 1) == 465  # 4e6 // 8590
    assert interval_us(10_000_000, 3_000, 400) == 1_428_571  # 3000 // 400 = 7 round trips each
    assert interval_us(1_000_000, 3, 4) is None  # fewer requests than connections: no correction
    with pytest.raises(Unrecoverable):
        interval_us(1_000_000, 3, 0)


def test_samples_above_two_intervals_gain_synthetic_samples_which_come_off():
    corrected = stats_correct({10: 5, 31: 1, 40: 2}, 10)  # 31 -> 21, 11; 40 -> 30, 20 (10 is not above 10)
    assert corrected == {10: 5, 11: 1, 20: 2, 21: 1, 30: 2, 31: 1, 40: 2}
    assert undone(pairs(corrected), 10) == [(10, 5), (31, 1), (40, 2)]


@pytest.mark.parametrize("seed", range(20))
def test_random_histograms_come_back_exactly(seed):
    rng = random.Random(seed)
    interval = rng.choice([1, 3, 50, 465, 1000])
    own = {}
    for _ in range(rng.randint(1, 400)):
        value = int(rng.lognormvariate(6, 1.5)) + 1  # a long tail: many buckets above 2 x interval
        own[value] = own.get(value, 0) + rng.randint(1, 5)
    corrected = stats_correct(own, interval)
    assert undone(pairs(corrected), interval) == pairs(own)
    assert sum(corrected.values()) >= sum(own.values())


def test_no_interval_means_nothing_was_added():
    assert undone([(5, 2), (900, 1)], None) == [(5, 2), (900, 1)]


def test_a_bucket_below_what_the_correction_added_is_unrecoverable():
    # 31 would have added one sample at 21; a histogram without it did not come from stats_correct
    with pytest.raises(Unrecoverable, match="bucket 21"):
        undone([(10, 5), (21, 0), (31, 1)], 10)
    with pytest.raises(Unrecoverable):
        undone([(10, 1), (21, 1), (31, 2)], 10)  # 31's two samples added two at 21


def test_the_counts_must_be_the_requests():
    check_count(100, requests=100, timeouts=0, pipeline=1, connections=4)
    check_count(98, requests=100, timeouts=2, pipeline=1, connections=4)  # two answers past --timeout
    check_count(24, requests=100, timeouts=0, pipeline=4, connections=4)  # a batch cut short by the window
    with pytest.raises(Unrecoverable, match="expected 100 to 100"):
        check_count(130, requests=100, timeouts=0, pipeline=1, connections=4)
    with pytest.raises(Unrecoverable):
        check_count(90, requests=100, timeouts=2, pipeline=1, connections=4)


def test_connections_are_read_from_wrks_stdout(tmp_path):
    assert wrk_correction.connections_from_stdout(FIXTURES / "two_urls" / "wrk.stdout") == 4
    assert wrk_correction.connections_from_stdout(tmp_path / "missing") is None


RECOVERED = sorted(d.name for d in FIXTURES.iterdir() if d.name.startswith("recovered_"))


def test_the_recovery_fixtures_are_there():
    assert {"recovered_c1_static", "recovered_c32_static", "recovered_pipeline4", "recovered_delay"} <= set(RECOVERED)


@pytest.mark.parametrize("case", RECOVERED)
def test_real_wrk_output_recovers_one_sample_per_request(case):
    data = json.loads((FIXTURES / case / "wrk.json").read_text())
    result = wrk.parse(FIXTURES / case)
    assert result.latency_method == "recovered", result.extra.get("latency_invalid")
    own = wrk.histogram_of(result)
    samples = sum(c for _, c in own)
    pipeline = data["pipeline"]
    assert -(-data["requests"] // pipeline) - data["connections"] <= samples <= -(-data["requests"] // pipeline)
    reported = sum(c for _, c in data["latency_us"]["histogram"])
    assert result.extra["synthetic_samples"] == reported - samples >= 0
    assert result.reported_latency_ms["mean"] == data["latency_us"]["mean"] / 1000
    assert result.latency_ms["max"] == data["latency_us"]["max"] / 1000  # the top bucket is always real
    # Little's law on one closed loop: no more in flight than connections x depth
    assert result.rps * result.latency_ms["mean"] / 1000 <= data["connections"] * pipeline * 1.02


def test_a_small_closed_loop_had_synthetic_samples_and_loses_them():
    """The case of the issue: one connection on a fast endpoint. wrk's own mean puts about two requests in flight
    on one connection; the recovered one at most one."""
    result = wrk.parse(FIXTURES / "recovered_c1_static")
    assert result.extra["synthetic_samples"] > 0
    assert result.rps * result.reported_latency_ms["mean"] / 1000 > 1.02
    assert result.rps * result.latency_ms["mean"] / 1000 <= 1.0
