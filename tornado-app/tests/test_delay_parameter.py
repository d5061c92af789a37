import time

import pytest

from crossbench_contract.delay import parse_delay


@pytest.mark.parametrize("values, ms", [(["0"], 0), (["300"], 300), (["60000"], 60000), (["000300"], 300)])
def test_accepts(values, ms):
    assert parse_delay(values) == ms


@pytest.mark.parametrize(
    "values",
    [
        [],
        [""],
        ["-1"],
        ["+5"],
        [" 5"],
        ["1.5"],
        ["1e3"],
        ["60001"],
        ["999999"],
        ["99999999999999999999"],
        ["١٢٣"],
        ["1", "2"],
    ],
)
def test_rejects(values):
    with pytest.raises(ValueError, match="ms must be one integer from 0 to 60000"):
        parse_delay(values)


def test_the_async_wait_sleeps_again_when_the_timer_fires_early(monkeypatch):
    """On a clock of the test's own, which only the timer moves: a busy machine cannot make the first timer late
    enough to hide its being early (binary fractions: the sums are exact)."""
    import asyncio

    from crossbench_contract import delay

    real_sleep, calls, clock = asyncio.sleep, [], [1024.0]

    async def early_once(seconds):  # a timer that fires 2 ms early the first time, as uvloop's can
        calls.append(seconds)
        clock[0] += seconds - 2**-9 if len(calls) == 1 else seconds
        await real_sleep(0)

    monkeypatch.setattr(delay.asyncio, "sleep", early_once)
    monkeypatch.setattr(delay.time, "monotonic", lambda: clock[0])
    started = time.monotonic()
    asyncio.run(delay.sleep_at_least(2**-4))
    assert time.monotonic() - started >= 2**-4 and len(calls) >= 2 and calls[1] <= 0.003
