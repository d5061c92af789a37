"""A capacity search's answer in words (capacity_answer.py's outcome), as the terminal, findings and reports say it:
what held and for how long, the bracket up to the lowest failure, the estimate only where launches disagreed, the
ceiling the run knows, and how far the held rate moves between sittings."""

from __future__ import annotations

from crossbench.decide import capacity_spread
from crossbench.decide.capacity import ABOVE_CEILING, BRACKETED
from crossbench.figures import points
from crossbench.figures.points import sig


def label(out: dict) -> str:
    """A search's setting as findings name it: its server setting, and its clients' connections when they are
    not kept alive (the same server is searched both ways)."""
    return out["setting"] + (" (a new connection per request)" if out.get("keepalive") is False else "")


def sentence(out: dict) -> str:
    """One line: "tomcat maxThreads=20 /delay/sync 200 ms: p99 <= 300 ms holds 95.2 req/s for 60 s, fails at 100
    (for 60 s): bracket 95.2-100 req/s, ... (CPU 1.6 ms a request)"."""
    where = f"{label(out)} {out['endpoint']}" + (f" {out['delay_ms']} ms" if out["delay_ms"] else "")
    if out.get("generator"):
        return f"{where}: the load generator's ceiling, {generator_words(out)}"
    text = bracket_words(out)
    cpu = (out.get("cost") or {}).get("cpu_ms_per_request")
    if cpu:
        text += f" (CPU {points.fmt_interval(cpu, 'ms')} a request)"
    return f"{where}: {text}"


def window(seconds: float | None) -> str:
    return f"for {seconds:g} s" if seconds else "in its short launches"


def bracket_words(out: dict) -> str:
    """What the search showed: what held, the bracket to the lowest failure with what goes beside it, a plateau
    named as one, or how far it got."""
    target = f"p99 <= {out['target_p99_ms']:g} ms"
    status, low, high = out["status"], out.get("held_rps"), out.get("fails_rps")
    ended = "" if status == BRACKETED else f" ({status})"
    if status == ABOVE_CEILING:
        held = f", held at {low:g} req/s" if low else ""
        return f"{target}: capacity above the generator's ceiling of {out['ceiling_rps']:g} req/s{held}"
    if low is None and high is None:
        return f"{target}: no rate decided yet ({status})"
    if low is None:
        return f"{target} not shown at any rate tried (down to {high:g} req/s: {status})"
    beside = (
        estimate_words(out)
        + ceiling_words(out)
        + above_ceiling_words(out)
        + spread_words(out)
        + ended
        + confirmation_words(out)
    )
    if high is None:
        top = out.get("top_rps") or low
        return (
            f"{target} holds at least up to {low:g} req/s {window(out.get('held_s'))}"
            + (f"; no failure shown up to {top:g}" if top > low else ", the highest tried")
            + beside
        )
    flat = out.get("plateau")
    if flat:
        return (
            f"{target} is set by a tail that does not grow with the rate, not by a capacity: p99 "
            f"{flat['p99_ms'][0]:.0f}-{flat['p99_ms'][1]:.0f} ms from {flat['from_rps']:g} to {flat['to_rps']:g} "
            f"req/s, every offered request answered, CPU at most {flat['cpu_percent_max']:.0f} % (crossed "
            f"between {low:g} and {high:g} req/s){ended}"
        )
    return (
        f"{target} holds {low:g} req/s {window(out.get('held_s'))} and fails at {high:g} "
        f"{window(out.get('fails_s'))}: bracket {low:g}-{high:g} req/s" + beside
    )


def estimate_words(out: dict) -> str:
    """The estimate where launches disagreed, with its interval, else why there is none."""
    fitted = out.get("estimate")
    if not fitted:
        return f", no estimate ({out['estimate_why']})" if out.get("estimate_why") else ""
    mixed = ", ".join(f"{r:g}" for r in fitted.get("mixed_rps") or ())
    return (
        f", capacity {points.fmt_interval(fitted, 'req/s')} ({fitted['launches']} launches; they disagreed at "
        f"{mixed} req/s)"
    )


def ceiling_words(out: dict) -> str:
    """'; never above 1,000 req/s (its pool: 200 / 200 ms)', or '' where the run knows no ceiling."""
    if not out.get("known_ceiling_rps"):
        return ""
    return f"; never above {sig(out['known_ceiling_rps'], commas=True)} req/s ({out['known_ceiling']})"


def above_ceiling_words(out: dict) -> str:
    """Short launches that held above the ceiling the run knows, said and not counted ('' where none did)."""
    ceiling, passed = out.get("known_ceiling_rps"), out.get("passed_rps")
    if not (ceiling and passed and passed > ceiling):
        return ""
    return (
        f" (its short launches held up to {passed:g} req/s, above that ceiling: a queue that grows too slowly "
        "for a short window to show, not counted)"
    )


def spread_words(out: dict) -> str:
    """How far the held rate moves between sittings, and whether that is more than the bracket."""
    text = (
        f"; the held rate {capacity_spread.words(out.get('spread'))}"
        if out.get("spread")
        else f"; {capacity_spread.words(None)}"
    )
    if out.get("spread_wider"):
        width = out["fails_rps"] / out["held_rps"] - 1
        text += f", more than this bracket's {width * 100:.0f} %: another sitting may answer outside it"
    return text


def confirmation_words(out: dict) -> str:
    """The long launch that decided, and the ones above it that did not hold: "; confirmed by a long launch at 95
    req/s: p99 210 ms over 5700 requests in 60 s (not at 100 req/s: p99 392 ms over 6000 requests in 60 s)"."""
    check = out.get("confirmation")
    if not check:
        return ""
    above = [c for c in out.get("confirmations") or () if c["rate"] > check["rate"]]
    missed = "; ".join(f"{c['rate']:g} req/s: {c['why']}" for c in above)
    missed = f" (not at {missed})" if missed else ""
    return (
        f"; {'confirmed' if check['held'] else 'NOT confirmed'} by a long launch at {check['rate']:g} req/s: "
        f"{check['why']}{missed}"
    )


def generator_words(out: dict) -> str:
    """What a generator search found: the most it was shown to send on schedule, and where that stopped."""
    low, high, ceiling = out["passed_rps"], out["failed_rps"], out["ceiling_rps"]
    if not low:
        return f"not shown at any rate tried ({out['status']})"
    stop = (
        f"it fell behind its schedule at {ceiling:g}"
        if ceiling and (not high or ceiling <= high)
        else f"p99 over {out['target_p99_ms']:g} ms from {high:g}"
        if high
        else "the highest rate tried"
    )
    return f"sends on schedule up to {low:g} req/s ({stop}): no server search counts a rate above it"


def summary(found: list[dict]) -> str:
    return "\n".join(["capacity:"] + [f"  {sentence(out)}" for out in found]) if found else ""
