"""The `ms` rule of /delay/* and /db/slow: exactly one value, plain ASCII digits, 0 to the cap; and the async
wait that never answers before the delay is over."""

from __future__ import annotations

import asyncio
import time

MAX_DELAY_MS = 60_000
DELAY_RULE = f"ms must be one integer from 0 to {MAX_DELAY_MS}"


def parse_delay(values: list[str]) -> int:
    """The delay in ms, or ValueError whose message is the 400 body."""
    if not values:
        raise ValueError(f"missing ms; {DELAY_RULE}")
    if len(values) > 1:
        raise ValueError(f"ms given {len(values)} times; {DELAY_RULE}")
    value = values[0]
    if not (1 <= len(value) <= 6 and value.isascii() and value.isdigit()):
        raise ValueError(f"ms is not a non-negative integer; {DELAY_RULE}")
    if int(value) > MAX_DELAY_MS:
        raise ValueError(f"ms above the cap; {DELAY_RULE}")
    return int(value)


async def sleep_at_least(seconds: float) -> None:
    """asyncio.sleep that never returns early. uvloop's timers run on libuv's loop clock, cached and counted in
    whole milliseconds, so a 300 ms timer fired after 299.9 ms here (a client measured the whole request at
    0.29991 s); the remainder is slept again."""
    deadline = time.monotonic() + seconds
    await asyncio.sleep(seconds)
    while (left := deadline - time.monotonic()) > 0:
        await asyncio.sleep(left)
