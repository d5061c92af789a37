"""Capacity at a latency target (rates = "search"): the search's decisions from records alone, driven here against
a simulated server whose capacity is known, the verdict of one rate by its interval, and the experiment file's
refusals. The live search is test_capacity_live.py."""

import copy
import math
import random

import pytest

from crossbench.decide import capacity, capacity_answer, capacity_words
from crossbench.plan import experiment
from crossbench.plan.experiment_checks import validate
from crossbench.plan.experiment_schema import ExperimentError
from crossbench.plan.search_spec import SearchSpec

TRUE_CAPACITY = 97.0  # req/s the simulated Tomcat holds: 20 threads, each request ~206 ms


def resolve(name="capacity-quick", **overrides):
    return experiment.apply_overrides(experiment.load(name), {"shuffle": False, **overrides})


def simulated(cell, rng, capacity_rps=TRUE_CAPACITY, window_s=3.0, generator_ceiling=None, tail=None):
    """A launch of an open-loop cell against a pool that answers capacity_rps: under it p99 is the delay and a
    little; past it the queue grows for the whole window (p99 ~ delay + the queue's growth), with 3 % noise.
    `tail` (rate, below_ms, above_ms): a p99 set by a tail that steps from below_ms to above_ms at that rate,
    whatever the load (1 % noise)."""
    rate = cell.rate
    over = max(0.0, rate / capacity_rps - 1)
    p99 = (cell.delay_ms + 6 + 1000 * over * window_s) * math.exp(rng.gauss(0, 0.03))
    if tail:
        p99 = (tail[1] if rate < tail[0] else tail[2]) * math.exp(rng.gauss(0, 0.01))
    achieved = min(rate, capacity_rps) * math.exp(rng.gauss(0, 0.002))
    flags = ["unsustainable"] if over > 0.02 else []
    if generator_ceiling and rate > generator_ceiling:
        flags.append("loadgen_saturated")
    requests = round(min(rate, capacity_rps) * window_s)  # answered of those its window fired
    return {
        **cell.to_dict(),
        "status": "ok",
        "flags": flags,
        "latency_ms": {"p99": p99},
        "rate_achieved": achieved,
        "measured_s": window_s,
        "rps": achieved,
        "requests": requests,
        "error_total": 0,
        "cpu_percent": achieved * 0.04,
        "threads_peak": 40,
        "rss_peak_mb": 180.0,
        "setting": "tomcat maxThreads=20",
        "parallel_limit": 20,
    }


def searched(config, seed=1, **server):
    """Runs the searches of `config` to their end against the simulation, as run_loop does; returns the records
    and the cells planned."""
    rng = random.Random(seed)
    cells = experiment.expand(config)
    records = [simulated(c, rng, **server) for c in cells]
    for _ in range(100):
        more = capacity.next_launches(cells, records, experiment.recorded(config))
        if not more:
            return records, cells
        cells += more
        records += [simulated(c, rng, **server) for c in more]
    raise AssertionError("the search never ended")


def group_named(config: dict, name: str) -> dict:
    return next(group for group in config["group"] if group["name"] == name)


def tomcat_only(**search):
    """capacity-quick's Tomcat group searched as the full experiment searches: to 5 %, up to four launches a rate;
    no confirmation launch unless asked."""
    config = copy.deepcopy(resolve(groups=["tomcat"]))
    config["group"][0]["search"].pop("confirm_s", None)
    config["group"][0]["search"].update({"resolution": 0.05, "max_launches": 4, **search})
    validate(config)
    return config


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_bracket_holds_the_true_capacity_within_its_resolution(seed):
    config = tomcat_only()
    records, cells = searched(config, seed)
    [out] = capacity_answer.outcomes(records, experiment.recorded(config))
    assert out["status"] == capacity.BRACKETED, out
    assert out["passed_rps"] <= TRUE_CAPACITY * 1.02 and out["failed_rps"] > TRUE_CAPACITY
    # the bracket narrows to the group's 5 %: how far the held rate moves between sittings is said, not searched to
    assert out["resolution"] == 0.05
    assert out["failed_rps"] <= out["passed_rps"] * (1 + out["resolution"])
    assert out["held_rps"] == out["passed_rps"] and out["fails_rps"] == out["failed_rps"]
    assert len(out["trials"]) <= 8
    assert len({c.cell_id for c in cells}) == len(cells)  # no launch planned twice
    assert out["predicted_rps"] == 100 and out["target_p99_ms"] == 300


def test_the_search_starts_at_the_predicted_limit_halves_below_a_failure_then_bisects():
    config = tomcat_only()
    records, _ = searched(config)
    assert [r["rate"] for r in records[:4]] == [100, 100, 100, 50]  # 100 fails (the pool answers 97) ...
    [out] = capacity_answer.outcomes(records, experiment.recorded(config))
    assert 70.7 in [t["rate"] for t in out["trials"]]  # ... then the geometric middle of 50-100


def test_a_search_from_below_doubles_up_to_the_first_failure():
    config = tomcat_only(start_rate=20)
    records, _ = searched(config)
    [out] = capacity_answer.outcomes(records, experiment.recorded(config))
    assert [t["rate"] for t in out["trials"]][:3] == [20, 40, 80]
    assert out["status"] == capacity.BRACKETED


def test_the_cost_at_the_passing_rate_has_its_interval():
    config = tomcat_only()
    records, _ = searched(config)
    [out] = capacity_answer.outcomes(records, experiment.recorded(config))
    cpu = out["cost"]["cpu_ms_per_request"]
    assert cpu["value"] == pytest.approx(0.4, rel=0.02)  # 4 % of a core at ~100 req/s: 0.4 ms each
    assert cpu["ci95_low"] is not None and cpu["n"] >= 3
    assert out["cost"]["threads_peak"]["value"] == 40
    assert "CPU 0.4" in capacity_words.sentence(out)


def test_a_budget_too_small_leaves_the_bracket_it_has_and_says_so():
    config = tomcat_only(max_rates=2, start_rate=20)
    records, _ = searched(config)
    [out] = capacity_answer.outcomes(records, experiment.recorded(config))
    assert out["status"] == capacity.BUDGET and out["failed_rps"] is None and out["passed_rps"] == 40
    assert "budget reached" in capacity_words.sentence(out)


def test_a_generator_behind_its_schedule_says_capacity_above_its_ceiling_not_a_bracket():
    config = tomcat_only(start_rate=20)
    records, _ = searched(config, capacity_rps=1000, generator_ceiling=50)
    [out] = capacity_answer.outcomes(records, experiment.recorded(config))
    assert out["status"] == capacity.ABOVE_CEILING and out["ceiling_rps"] == 80 and out["passed_rps"] == 40
    assert "above the generator's ceiling of 80 req/s" in capacity_words.sentence(out)


def test_the_generators_ceiling_is_measured_first_and_no_search_counts_a_rate_above_it():
    """A `generator = true` search (against a server far faster than the generator) falls behind its schedule
    past 50 req/s; the server's own search, whose records never lag, would bracket ~1000 req/s alone."""
    config = tomcat_only(start_rate=20)
    generator = {**config["group"][0], "name": "generator"}
    generator["search"] = {**generator["search"], "generator": True}
    config["group"].append(generator)
    validate(config)
    rng = random.Random(1)

    def launch(cell):
        return simulated(cell, rng, capacity_rps=1000, generator_ceiling=50 if cell.group == "generator" else None)

    cells = experiment.expand(config)
    records = [launch(c) for c in cells]
    for _ in range(100):
        more = capacity.next_launches(cells, records, experiment.recorded(config))
        if not more:
            break
        cells += more
        records += [launch(c) for c in more]
    gen, server = sorted(
        capacity_answer.outcomes(records, experiment.recorded(config)), key=lambda out: out["group"] != "generator"
    )
    assert gen["generator"] and gen["passed_rps"] == 40 and gen["ceiling_rps"] == 80
    assert (
        "the load generator's ceiling, sends on schedule up to 40 req/s (it fell behind its schedule at 80)"
        in capacity_words.sentence(gen)
    )
    assert server["status"] == capacity.ABOVE_CEILING and server["passed_rps"] == 40
    assert "above the load generator's ceiling of 40 req/s" in server["trials"][-1]["why"]
    # measured first: the server's search tried nothing past its planned first rate until the generator's was over
    last_generator = max(i for i, r in enumerate(records) if r["group"] == "generator")
    assert all(r["rate"] == 20 for r in records[:last_generator] if r["group"] != "generator")


def test_without_a_generator_search_nothing_is_capped():
    config = tomcat_only(start_rate=500)
    records, _ = searched(config, capacity_rps=1000)
    [out] = capacity_answer.outcomes(records, experiment.recorded(config))
    assert out["status"] == capacity.BRACKETED and out["passed_rps"] > 900 and not out["generator"]


def test_one_launch_whose_generator_lagged_is_left_out_and_launched_again():
    spec = SearchSpec(p99_ms=300, max_launches=4)
    once = launches([210, 212, 211])
    once[1]["flags"] = ["loadgen_saturated"]
    assert capacity.judge({"rate": 100.0}, once, spec, 300)[0] == capacity.PENDING
    assert capacity.judge({"rate": 100.0}, once + launches([213]), spec, 300)[0] == capacity.PASS
    twice = launches([210, 212, 211, 209])
    twice[0]["flags"] = twice[2]["flags"] = ["loadgen_saturated"]
    assert capacity.judge({"rate": 100.0}, twice, spec, 300)[0] == capacity.CEILING


def test_a_resumed_search_decides_what_the_uninterrupted_one_did():
    """Decisions come from records alone: cut the records anywhere, the next launches are what came next."""
    config = tomcat_only()
    records, cells = searched(config)
    planned = len(experiment.expand(config))
    for cut in range(planned, len(cells)):
        if all(c.cell_id in {r["cell_id"] for r in records[:cut]} for c in cells[:cut]):
            more = capacity.next_launches(cells[:cut], records[:cut], experiment.recorded(config))
            assert [c.cell_id for c in more] == [c.cell_id for c in cells[cut : cut + len(more)]]


def launches(p99s, rate=100.0, flags=(), requests=300):
    return [
        {
            "latency_ms": {"p99": v},
            "rate_achieved": rate,
            "requests": requests,
            "measured_s": 300 / rate,
            "error_total": 0,
            "flags": list(flags),
        }
        for v in p99s
    ]


@pytest.mark.parametrize(
    "p99s, verdict",
    [
        ([210, 212, 211], capacity.PASS),
        ([900, 950, 920], capacity.FAIL),
        ([250, 330, 290], capacity.PENDING),  # launches that disagree, with launches to spare
        ([250, 330, 290, 310, 260], capacity.UNDECIDED),
        ([210, 212], capacity.PENDING),  # under three launches
    ],
)
def test_a_rate_passes_when_every_launch_held_and_fails_when_none_did(p99s, verdict):
    spec = SearchSpec(p99_ms=300, max_launches=5)
    got, why = capacity.judge({"rate": 100.0}, launches(p99s), spec, 300)
    assert got == verdict
    if len(p99s) >= 3:
        assert why.startswith(f"{sum(v <= 300 for v in p99s)} of {len(p99s)} launches held")


def test_a_launch_holds_on_its_own_requests():
    """p99 over its requests at or under the target, 99 % of the offer answered, errors within 0.1 %, a queue that
    did not grow: each one alone fails the launch."""
    spec = SearchSpec(p99_ms=300)
    [good] = launches([290])
    assert capacity.launch_holds(good, 100.0, spec, 300) is None
    assert capacity.launch_holds({**good, "latency_ms": {"p99": 301}}, 100.0, spec, 300) == "p99 301 ms"
    assert "answered 296 of 300" in capacity.launch_holds({**good, "requests": 296}, 100.0, spec, 300)
    assert capacity.launch_holds({**good, "requests": 297}, 100.0, spec, 300) is None
    assert "errors" in capacity.launch_holds({**good, "error_total": 1}, 100.0, spec, 300)
    assert "queue grew" in capacity.launch_holds({**good, "flags": ["unsustainable"]}, 100.0, spec, 300)


def test_a_rate_whose_queue_grew_in_every_launch_fails_however_low_its_p99():
    spec = SearchSpec(p99_ms=300)
    got, why = capacity.judge({"rate": 100.0}, launches([210, 212, 211], flags=["unsustainable"]), spec, 300)
    assert got == capacity.FAIL and "queue grew" in why


def test_errors_over_the_share_fail_a_launch():
    spec = SearchSpec(p99_ms=300)
    bad = launches([210, 212, 211])
    bad[0]["error_total"] = 5
    assert capacity.judge({"rate": 100.0}, bad, spec, 300)[0] == capacity.PENDING
    for launch in bad:
        launch["error_total"] = 5
    assert capacity.judge({"rate": 100.0}, bad, spec, 300)[0] == capacity.FAIL


def test_a_launch_that_opened_connections_in_its_window_is_left_out_and_launched_again():
    spec = SearchSpec(p99_ms=300, max_launches=4)
    opened = launches([210, 212, 211])
    opened[2]["flags"] = ["connections_in_window"]
    got, why = capacity.judge({"rate": 100.0}, opened, spec, 300)
    assert got == capacity.PENDING and "opened connections" in why


@pytest.mark.parametrize(
    "change, words",
    [
        ({"kind": "closed_loop"}, "needs kind = \"open_loop\""),
        ({"search": {"p99_ms": 200}}, "at or below the delay"),
        ({"search": {"p99": 300}}, "unknown search keys"),
        ({"search": {"p99_ms": 300, "resolution": 2}}, "search.resolution"),
        ({"search": {"p99_ms": 300, "generator": "yes"}}, "search.generator is true or false"),
        ({"search": {"p99_ms": 300, "max_launches": 2}}, "search.max_launches"),
        ({"rates": [100]}, "applies to rates = \"search\" only"),
    ],
)
def test_a_search_it_cannot_run_is_refused_in_one_line(change, words):
    config = experiment.load("capacity-quick")
    group_named(config, "tomcat").update(change)
    with pytest.raises(ExperimentError, match=words) as refused:
        experiment.apply_overrides(config, {})
    assert "\n" not in str(refused.value)


def test_a_precision_target_beside_a_search_is_refused_in_one_line():
    with pytest.raises(ExperimentError, match="a precision target and a capacity search") as refused:
        experiment.apply_overrides(experiment.load("capacity-quick"), {"precision": 0.05})
    assert "\n" not in str(refused.value)


def test_a_server_with_no_predicted_limit_needs_a_start_rate():
    config = experiment.load("capacity-quick")
    del group_named(config, "tornado")["search"]["start_rate"]
    with pytest.raises(ExperimentError, match="give search.start_rate"):
        experiment.expand(experiment.apply_overrides(config, {}))


def test_the_default_target_is_one_and_a_half_delays():
    assert SearchSpec().target_ms(200) == 300 and SearchSpec().target_ms(0) is None


def test_a_tail_that_does_not_grow_with_the_rate_is_named_a_plateau_not_a_capacity():
    """p99 285 ms up to 300 req/s and 310 ms past it, every request answered at 12 % CPU: the search brackets
    300 req/s, and the answer says the tail set the target."""
    config = tomcat_only(start_rate=100)
    records, _ = searched(config, capacity_rps=10000, tail=(300, 285, 310))
    [out] = capacity_answer.outcomes(records, experiment.recorded(config))
    assert out["status"] == capacity.BRACKETED and out["passed_rps"] < 300 <= out["failed_rps"]
    flat = out["plateau"]
    assert flat and flat["rise"] == pytest.approx(310 / 285, rel=0.05) and flat["from_rps"] == 100
    assert "set by a tail that does not grow with the rate, not by a capacity" in capacity_words.sentence(out)
    steep, _ = searched(tomcat_only())  # the pool's queue: p99 grows past capacity, no plateau
    [queue] = capacity_answer.outcomes(steep, experiment.recorded(tomcat_only()))
    assert queue["plateau"] is None and "bracket " in capacity_words.sentence(queue)
    assert queue["held_rps"] <= TRUE_CAPACITY * 1.02 < queue["fails_rps"]


def test_without_a_failure_the_answer_is_at_least_the_highest_hold():
    out = {
        "setting": "tornado",
        "endpoint": "/delay/async",
        "delay_ms": 200,
        "target_p99_ms": 300,
        "status": capacity.BUDGET,
        "passed_rps": 800.0,
        "failed_rps": None,
        "top_rps": 1600.0,
        "cost": {},
        "held_rps": 800.0,
        "fails_rps": None,
    }
    words = capacity_words.sentence(out)
    assert "holds at least up to 800 req/s in its short launches; no failure shown up to 1600" in words
    assert words.endswith("(budget reached)")


def test_a_search_with_confirm_s_ends_with_one_long_launch_at_the_rate_it_found():
    config = tomcat_only(confirm_s=60)
    records, cells = searched(config)
    [out] = capacity_answer.outcomes(records, experiment.recorded(config))
    [last] = [c for c in cells if "-confirm-q" in c.cell_id]
    assert cells[-1] is last and last.duration_s == 60 and last.rate == out["passed_rps"]
    assert out["confirmation"]["held"] and out["confirmation"]["rate"] == out["passed_rps"]
    assert "confirmed by a long launch at" in capacity_words.sentence(out)
    assert all(t["rate"] != last.rate or "-confirm" not in t["point_id"] for t in out["trials"])
    plain, _ = searched(tomcat_only())
    assert capacity_answer.outcomes(plain, experiment.recorded(tomcat_only()))[0]["confirmation"] is None


def test_a_confirmation_that_fails_is_tried_a_step_lower_and_says_so():
    """A critically loaded pool holds a short launch and not a long one: the long launch is tried again a
    resolution step lower, at most MAX_CONFIRMATIONS times, and the answer names the rates that did not hold."""
    config = tomcat_only(confirm_s=60)
    records, cells = searched(config)
    first = next(r for r in records if "-confirm-q" in r["cell_id"])
    first["latency_ms"] = {"p99": 450.0}
    more = capacity.next_launches(cells, records, experiment.recorded(config))
    [lower] = more
    assert "-confirm-q" in lower.cell_id and lower.duration_s == 60
    assert lower.rate == pytest.approx(first["rate"] / 1.05, rel=0.03) and lower.rate < first["rate"]
    held = simulated(lower, random.Random(5))
    [out] = capacity_answer.outcomes(records + [held], experiment.recorded(config))
    assert out["confirmation"]["held"] and out["confirmation"]["rate"] == lower.rate
    assert [c["rate"] for c in out["confirmations"]] == [first["rate"], lower.rate]
    words = capacity_words.sentence(out)
    assert f"confirmed by a long launch at {lower.rate:g} req/s" in words
    assert f"(not at {first['rate']:g} req/s: p99 450 ms" in words
    assert capacity.next_launches(cells + more, records + [held], experiment.recorded(config)) == []


def test_confirmations_that_never_hold_stop_after_max_confirmations_and_say_not_confirmed():
    config = tomcat_only(confirm_s=60)
    records, cells = searched(config)
    tried = []
    for _ in range(capacity.MAX_CONFIRMATIONS + 1):
        for r in records:
            if "-confirm-q" in r["cell_id"]:
                r["latency_ms"] = {"p99": 450.0}
        more = capacity.next_launches(cells, records, experiment.recorded(config))
        if not more:
            break
        cells += more
        records += [simulated(c, random.Random(7)) for c in more]
        tried += [c.rate for c in more]
    [out] = capacity_answer.outcomes(records, experiment.recorded(config))
    assert len(out["confirmations"]) == capacity.MAX_CONFIRMATIONS and len(tried) == capacity.MAX_CONFIRMATIONS - 1
    assert tried == sorted(tried, reverse=True) and not out["confirmation"]["held"]
    assert out["confirmation"]["rate"] == min(c["rate"] for c in out["confirmations"])
    words = capacity_words.sentence(out)
    assert "NOT confirmed by a long launch" in words and "p99 450 ms" in words


def test_an_undecided_rate_inside_the_bracket_splits_it_and_each_step_is_narrowed():
    """800 held, 1,600 undecided, 3,200 failed: the bracket is two steps, and the search goes on in them (the
    search once stopped there, its midpoint being the undecided rate, with a bracket four times wide)."""
    search = capacity.Search("s", "g", SearchSpec(p99_ms=300, resolution=0.05), 300.0)
    for rate, verdict in ((800, capacity.PASS), (1600, capacity.UNDECIDED), (3200, capacity.FAIL)):
        search.trials.append(capacity.Trial(rate, verdict, "", 3, {"point_id": f"s-q{rate}", "concurrency": 4000}))
    assert search.status() == capacity.RUNNING and search.next_rate() in (1130, 2260)
    for rate, verdict in ((1130, capacity.PASS), (2260, capacity.FAIL)):
        search.trials.append(capacity.Trial(rate, verdict, "", 3, {"point_id": f"s-q{rate}", "concurrency": 4000}))
    search.trials.sort(key=lambda t: t.rate)
    assert (search.passed.rate, search.failed.rate) == (1130, 2260) and search.next_rate() in (1340, 1900)
