import time

import pytest

from crossbench_contract.delay import parse_delay


@pytest.mark.parametrize("values, ms", [(["0"], 0), (["300"], 300), (["60000"], 60000), (["000300"], 300)])
def test_accepts(values, ms):
    assert parse_delay(values) == ms


@pytest.mark.parametrize("values", [[], [""], ["-1"], ["+5"], [" 5"], ["1.5"], ["1e3"], ["60001"], ["999999"],
                                    ["99999999999999999999"], ["١٢٣"], ["1", "2"]])
def test_rejects(values):
    with pytest.raises(ValueError, match="ms must be one integer from 0 to 60000"):
        parse_delay(values)


def test_the_async_wait_sleeps_again_when_the_timer_fires_early(monkeypatch):
    """On a clock of the test's own (a busy machine cannot make the timer late and the test pass by luck)."""
    import asyncio
    from crossbench_contract import delay
    now, calls = [0.0], []

    async def early_once(seconds):          # a timer that fires early the first time, as uvloop's can
        calls.append(seconds)                # (binary fractions: the clock's sums are exact)
        now[0] += seconds - 0.125 if len(calls) == 1 else seconds
    monkeypatch.setattr(delay.asyncio, "sleep", early_once)
    monkeypatch.setattr(delay.time, "monotonic", lambda: now[0])
    asyncio.run(delay.sleep_at_least(0.5))
    assert now[0] == 0.5 and calls == [0.5, 0.125]
