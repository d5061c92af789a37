"""The types of run_all.sh's option values (argparse `type=`): integers and lists of them, rates, shares, durations,
delays, request paths and names, each refusing a value with what it expected."""

from __future__ import annotations

import argparse

from crossbench import durations, endpoints
from crossbench.plan.experiment_schema import AUTO_RATES
from crossbench_contract.delay import MAX_DELAY_MS


def integers(least: int, many: bool):
    """An argparse type: an integer from `least` up (`many`: a comma-separated list of them)."""

    def parse(text: str):
        try:
            values = [int(v) for v in text.split(",") if v.strip()] if many else [int(text)]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'integers separated by commas' if many else 'an integer'}, not {text!r}"
            ) from None
        if not values or any(v < least for v in values):
            raise argparse.ArgumentTypeError(
                f"expected {'integers' if many else 'an integer'} from {least} up, not {text!r}"
            )
        return values if many else values[0]

    parse.__name__ = "integer list" if many else "integer"
    return parse


int_list = integers(0, many=True)  # cores: 0 is the first
positive_list = integers(1, many=True)  # concurrency: at least one connection
positive_int = integers(1, many=False)  # repetitions, launches, threads
count = integers(0, many=False)  # --best-level-launches: 0 is off


def rate_list(text: str) -> list[int] | str:
    """--rates 50,100,200, or --rates auto (shares of each cell's closed-loop peak, measured first)."""
    return AUTO_RATES if text.strip() == AUTO_RATES else positive_list(text)


def share(text: str) -> float | bool:
    """--precision 0.03, or --precision off (one launch a point unless --repetitions says more)."""
    if text.strip() == "off":
        return False
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, not {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a share between 0 and 1 (0.03 = within 3 %), not {text}")
    return value


def duration(zero: bool):
    """An argparse type: a duration (crossbench.durations) in seconds; `zero` False refuses 0 too."""

    def parse(text: str) -> float:
        try:
            return durations.seconds(text, zero=zero)
        except durations.DurationError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    parse.__name__ = "duration"
    return parse


window = duration(zero=False)  # --duration: a window of 0 measures nothing
span = duration(zero=True)  # --warmup, --keep-up: 0 is none


def delay_list(text: str) -> list[int]:
    """--delays 1s,3s,250ms: each a whole number of milliseconds from 1 to the endpoints' cap."""
    try:
        values = [durations.whole_milliseconds(v, least=1, most=MAX_DELAY_MS) for v in text.split(",") if v.strip()]
    except durations.DurationError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if not values:
        raise argparse.ArgumentTypeError(f"expected delays separated by commas, not {text!r}")
    return values


def user_path(text: str) -> str:
    """--path: a request path as sent (endpoints.user_path_problem says what it may not be)."""
    if problem := endpoints.user_path_problem(text):
        raise argparse.ArgumentTypeError(f"expected {problem}")
    return text


def name_list(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]
