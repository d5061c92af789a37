"""Capacity at a latency target (rates = "search"): the search's decisions from records alone, driven here against
a simulated server whose capacity is known, the verdict of one rate by its interval, and the experiment file's
refusals. The live search is test_capacity_live.py."""
import math
import random

import pytest

from crossbench.decide import capacity
from crossbench.plan import experiment
from crossbench.plan.experiment_schema import ExperimentError, validate
from crossbench.plan.search_spec import SearchSpec

TRUE_CAPACITY = 97.0            # req/s the simulated Tomcat holds: 20 threads, each request ~206 ms


def resolve(name="capacity-quick", **overrides):
    return experiment.apply_overrides(experiment.load(name), {"shuffle": False, **overrides})


def simulated(cell, rng, capacity_rps=TRUE_CAPACITY, window_s=3.0, generator_ceiling=None):
    """A launch of an open-loop cell against a pool that answers capacity_rps: under it p99 is the delay and a
    little; past it the queue grows for the whole window (p99 ~ delay + the queue's growth), with 3 % noise."""
    rate = cell.rate
    over = max(0.0, rate / capacity_rps - 1)
    p99 = (cell.delay_ms + 6 + 1000 * over * window_s) * math.exp(rng.gauss(0, 0.03))
    achieved = min(rate, capacity_rps) * math.exp(rng.gauss(0, 0.002))
    flags = ["unsustainable"] if over > 0.02 else []
    if generator_ceiling and rate > generator_ceiling:
        flags.append("loadgen_saturated")
    requests = int(achieved * window_s)
    return {**cell.to_dict(), "status": "ok", "flags": flags, "latency_ms": {"p99": p99}, "rate_achieved": achieved,
            "rps": achieved, "requests": requests, "error_total": 0, "cpu_percent": achieved * 0.04,
            "threads_peak": 40, "rss_peak_mb": 180.0, "setting": "tomcat maxThreads=20", "parallel_limit": 20}


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
    """capacity-quick's Tomcat group searched as the full experiment searches: to 5 %, up to four launches a rate."""
    config = resolve(groups=["tomcat"])
    config["group"][0]["search"].update({"resolution": 0.05, "max_launches": 4, **search})
    validate(config)
    return config


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_bracket_holds_the_true_capacity_within_its_resolution(seed):
    config = tomcat_only()
    records, cells = searched(config, seed)
    [out] = capacity.outcomes(records, experiment.recorded(config))
    assert out["status"] == capacity.BRACKETED, out
    assert out["passed_rps"] <= TRUE_CAPACITY * 1.02 and out["failed_rps"] > TRUE_CAPACITY
    assert out["failed_rps"] <= out["passed_rps"] * 1.05
    assert len(out["trials"]) <= 8
    assert len({c.cell_id for c in cells}) == len(cells)            # no launch planned twice
    assert out["predicted_rps"] == 100 and out["target_p99_ms"] == 300


def test_the_search_starts_at_the_predicted_limit_halves_below_a_failure_then_bisects():
    config = tomcat_only()
    records, _ = searched(config)
    assert [r["rate"] for r in records[:4]] == [100, 100, 100, 50]     # 100 fails (the pool answers 97) ...
    [out] = capacity.outcomes(records, experiment.recorded(config))
    assert 70.7 in [t["rate"] for t in out["trials"]]                  # ... then the geometric middle of 50-100


def test_a_search_from_below_doubles_up_to_the_first_failure():
    config = tomcat_only(start_rate=20)
    records, _ = searched(config)
    [out] = capacity.outcomes(records, experiment.recorded(config))
    assert [t["rate"] for t in out["trials"]][:3] == [20, 40, 80]
    assert out["status"] == capacity.BRACKETED


def test_the_cost_at_the_passing_rate_has_its_interval():
    config = tomcat_only()
    records, _ = searched(config)
    [out] = capacity.outcomes(records, experiment.recorded(config))
    cpu = out["cost"]["cpu_ms_per_request"]
    assert cpu["value"] == pytest.approx(0.4, rel=0.02)            # 4 % of a core at ~100 req/s: 0.4 ms each
    assert cpu["ci95_low"] is not None and cpu["n"] >= 3
    assert out["cost"]["threads_peak"]["value"] == 40
    assert "CPU 0.4" in capacity.sentence(out)


def test_a_budget_too_small_leaves_the_bracket_it_has_and_says_so():
    config = tomcat_only(max_rates=2, start_rate=20)
    records, _ = searched(config)
    [out] = capacity.outcomes(records, experiment.recorded(config))
    assert out["status"] == capacity.BUDGET and out["failed_rps"] is None and out["passed_rps"] == 40
    assert "budget reached" in capacity.sentence(out)


def test_a_generator_behind_its_schedule_says_capacity_above_its_ceiling_not_a_bracket():
    config = tomcat_only(start_rate=20)
    records, _ = searched(config, capacity_rps=1000, generator_ceiling=50)
    [out] = capacity.outcomes(records, experiment.recorded(config))
    assert out["status"] == capacity.ABOVE_CEILING and out["ceiling_rps"] == 80 and out["passed_rps"] == 40
    assert "above the generator's ceiling of 80 req/s" in capacity.sentence(out)


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
    gen, server = sorted(capacity.outcomes(records, experiment.recorded(config)), key=lambda out: out["group"] != "generator")
    assert gen["generator"] and gen["passed_rps"] == 40 and gen["ceiling_rps"] == 80
    assert "the load generator's ceiling, sends on schedule up to 40 req/s (it fell behind its schedule at 80)" \
        in capacity.sentence(gen)
    assert server["status"] == capacity.ABOVE_CEILING and server["passed_rps"] == 40
    assert "above the load generator's ceiling of 40 req/s" in server["trials"][-1]["why"]
    # measured first: the server's search tried nothing past its planned first rate until the generator's was over
    last_generator = max(i for i, r in enumerate(records) if r["group"] == "generator")
    assert all(r["rate"] == 20 for r in records[:last_generator] if r["group"] != "generator")


def test_without_a_generator_search_nothing_is_capped():
    config = tomcat_only(start_rate=500)
    records, _ = searched(config, capacity_rps=1000)
    [out] = capacity.outcomes(records, experiment.recorded(config))
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
            assert [c.cell_id for c in more] == [c.cell_id for c in cells[cut:cut + len(more)]]


def launches(p99s, rate=100.0, flags=(), achieved=None):
    return [{"latency_ms": {"p99": v}, "rate_achieved": achieved or rate, "requests": 300, "error_total": 0,
             "flags": list(flags)} for v in p99s]


@pytest.mark.parametrize("p99s, verdict", [
    ([210, 212, 211], capacity.PASS),
    ([900, 950, 920], capacity.FAIL),
    ([250, 330, 290], capacity.PENDING),           # straddles 300 ms with launches to spare
    ([250, 330, 290, 310, 260], capacity.UNDECIDED),
    ([210, 212], capacity.PENDING),                 # under three launches: no interval yet
])
def test_a_rate_passes_or_fails_only_when_its_interval_says_so(p99s, verdict):
    spec = SearchSpec(p99_ms=300, max_launches=5)
    got, _ = capacity.judge({"rate": 100.0}, launches(p99s), spec, 300)
    assert got == verdict


def test_a_rate_whose_queue_grew_in_every_launch_fails_however_low_its_p99():
    spec = SearchSpec(p99_ms=300)
    got, why = capacity.judge({"rate": 100.0}, launches([210, 212, 211], flags=["unsustainable"]), spec, 300)
    assert got == capacity.FAIL and "unsustainable" in why


def test_errors_over_the_share_fail_the_rate():
    spec = SearchSpec(p99_ms=300)
    bad = launches([210, 212, 211])
    bad[0]["error_total"] = 5
    assert capacity.judge({"rate": 100.0}, bad, spec, 300)[0] == capacity.FAIL


def test_each_look_at_a_rate_is_wider_than_a_single_95_percent_interval():
    assert capacity.look_confidence(SearchSpec(max_launches=5)) == pytest.approx(1 - 0.05 / 3)


@pytest.mark.parametrize("change, words", [
    ({"kind": "closed_loop"}, "needs kind = \"open_loop\""),
    ({"search": {"p99_ms": 200}}, "at or below the delay"),
    ({"search": {"p99": 300}}, "unknown search keys"),
    ({"search": {"p99_ms": 300, "resolution": 2}}, "search.resolution"),
    ({"search": {"p99_ms": 300, "generator": "yes"}}, "search.generator is true or false"),
    ({"search": {"p99_ms": 300, "max_launches": 2}}, "search.max_launches"),
    ({"rates": [100]}, "applies to rates = \"search\" only"),
])
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
