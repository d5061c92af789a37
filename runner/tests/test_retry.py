"""--retry-failed (crossbench/decide/retry.py): which points a resume launches again, how many launches and in which
order, decided from the records alone."""

from crossbench.decide import retry
from crossbench.plan.experiment import apply_overrides, expand, load, recorded


def record(cell, status="ok", rps=100.0):
    return {
        "cell_id": cell.cell_id,
        "point_id": cell.point_id,
        "repetition": cell.repetition,
        "status": status,
        "flags": [],
        "rps": rps if status == "ok" else None,
        "kind": cell.kind,
        "delay_ms": cell.delay_ms,
        "latency_ms": {"p50": 1.0, "p99": 2.0},
        "server": cell.server,
        "concurrency": cell.concurrency,
    }


def planned(name: str, **run):
    config = apply_overrides(load(name), {"shuffle": False, **run})
    return recorded(config).run, expand(config)


def by_point(cells):
    found = {}
    for cell in cells:
        found.setdefault(cell.point_id, []).append(cell)
    return list(found.values())


def test_only_a_point_whose_launches_all_failed_and_all_ran_is_launched_again():
    run, cells = planned("quick", repetitions=2)  # two rounds, no precision target
    dead, half, fine, waiting = by_point(cells)[:4]
    records = (
        [record(c, "failed") for c in dead]
        + [record(half[0], "failed"), record(half[1])]
        + [record(c) for c in fine]
        + [record(waiting[0], "failed")]
    )  # waiting's second launch not run yet
    again = retry.retries(cells, records, run)
    assert [c.cell_id for c in again] == [f"{dead[0].point_id}-r3", f"{dead[0].point_id}-r4"]
    assert all(c.point_id == dead[0].point_id and c.settings == dead[0].settings for c in again)
    assert "1 point(s) with no launch that counted, launched again (2 launches)" in retry.summary(again)
    records += [record(c) for c in again]
    assert retry.retries(cells + again, records, run) == []  # counted now: nothing more
    assert retry.summary([]).endswith("nothing to launch again")


def test_with_a_precision_target_the_first_rounds_are_its_minimum():
    run, cells = planned("quick", precision=0.05, min_launches=3, max_launches=4)
    [dead] = by_point(cells)[:1]
    again = retry.retries(cells, [record(c, "failed") for c in dead], run)
    assert len(dead) == 3 and [c.repetition for c in again] == [4, 5, 6]


def test_a_peak_point_is_launched_again_before_the_shares_that_take_their_rate_from_it():
    run, cells = planned("openloop-quick", shuffle=True, shuffle_seed=5)
    peaks = {c.peak_cell for c in cells if c.peak_cell}
    assert peaks, "openloop-quick has a rates = 'auto' group"
    records = [record(c, "failed") for c in cells]
    again = retry.retries(cells, records, run)
    peak_points = {c.point_id for c in cells if c.cell_id in peaks}
    first = [c.point_id in peak_points for c in again]
    assert any(first) and first == sorted(first, reverse=True)  # every peak launch before any other
    assert {c.point_id for c in again} == {c.point_id for c in cells}


def test_a_disturbed_launch_is_launched_again_once_without_a_precision_target():
    """noisy_host leaves a launch out of its point; a run without a precision target launches it again once, after
    the planned rounds, so the point keeps its three launches (at most doubling them if the host stays noisy)."""
    from crossbench.decide import disturbed
    from crossbench.plan import experiment

    config = experiment.apply_overrides(experiment.load("quick"), {"shuffle": False})
    resolved = experiment.recorded(config)
    cells = experiment.expand(config)
    pid = cells[0].point_id
    records = [{"cell_id": c.cell_id, "point_id": c.point_id, "status": "ok", "flags": []} for c in cells]
    assert disturbed.relaunches(cells, records, resolved.run) == []
    noisy = [c.cell_id for c in cells if c.point_id == pid][:1]
    for r in records:
        if r["cell_id"] in noisy:
            r["flags"] = ["noisy_host"]
    again = disturbed.relaunches(cells, records, resolved.run)
    assert [(c.point_id, c.repetition) for c in again] == [(pid, 4)]
    cells += again
    assert disturbed.relaunches(cells, records, resolved.run) == []  # its relaunch not yet run
    records.append({"cell_id": again[0].cell_id, "point_id": pid, "status": "ok", "flags": []})
    assert disturbed.relaunches(cells, records, resolved.run) == []  # launched again once: done
    for r in records:
        if r["point_id"] == pid:
            r["flags"] = ["noisy_host"]  # every launch disturbed
    while more := disturbed.relaunches(cells, records, resolved.run):
        cells += more
        records += [{"cell_id": c.cell_id, "point_id": pid, "status": "ok", "flags": ["noisy_host"]} for c in more]
    assert max(c.repetition for c in cells if c.point_id == pid) == 6  # never past twice its 3 rounds
    with_precision = experiment.recorded(experiment.apply_overrides(experiment.load("quick"), {"precision": 0.05}))
    assert disturbed.relaunches(cells, records, with_precision.run) == []  # precision.py's rule decides there
    once = experiment.recorded(experiment.apply_overrides(experiment.load("quick"), {"repetitions": 1}))
    assert disturbed.relaunches(cells, records, once.run) == []  # one launch a point: it is kept


def test_a_knee_sweep_of_one_launch_a_point_launches_a_disturbed_one_again_once():
    """maxthreads-quick (one launch a point, relaunch_disturbed): the disturbed launch of a point is launched again
    once, and not again when that one was disturbed too; without the setting a one-launch run keeps its launch."""
    from crossbench.decide import disturbed
    from crossbench.plan import experiment

    config = experiment.apply_overrides(experiment.load("maxthreads-quick"), {"shuffle": False})
    run = experiment.recorded(config).run
    assert run.relaunch_disturbed and run.repetitions == 1
    cells = experiment.expand(config)
    records = [{"cell_id": c.cell_id, "point_id": c.point_id, "status": "ok", "flags": []} for c in cells]
    records[0]["flags"] = ["noisy_host"]
    again = disturbed.relaunches(cells, records, run)
    assert [(c.point_id, c.repetition) for c in again] == [(cells[0].point_id, 2)]
    cells += again
    records.append(
        {"cell_id": again[0].cell_id, "point_id": again[0].point_id, "status": "ok", "flags": ["noisy_host"]}
    )
    assert disturbed.relaunches(cells, records, run) == []  # never past twice its one round
    without = experiment.recorded(experiment.apply_overrides(config, {"relaunch_disturbed": False})).run
    assert disturbed.relaunches(cells[: len(cells) - 1], records[:-1], without) == []


def test_relaunch_disturbed_is_true_or_false():
    import pytest

    from crossbench.plan import experiment

    config = experiment.load("maxthreads-quick")
    config["run"]["relaunch_disturbed"] = "yes"
    with pytest.raises(experiment.ExperimentError, match="relaunch_disturbed is true or false, not 'yes'"):
        experiment.validate(config)


def test_a_window_too_short_is_launched_again_longer_and_left_out_while_a_longer_one_counts():
    """quick's Tomcat 200 threads at 250 ms under 400 clients, 4 s windows: a launch flagged window_too_short is
    launched again once with 50 of its slowest round trips (2 rounds of 250 ms: 25 s), so one round trip of each
    connection moves its figures by 2 % at most; the point's figures rest on the launches without the flag."""
    from crossbench.decide import disturbed
    from crossbench.figures import points

    run, cells = planned("quick")
    [point] = [p for p in by_point(cells) if p[0].server == "tomcat" and p[0].concurrency == 400 and p[0].delay_ms]
    records = [{**record(c), "flags": ["window_too_short"] if c.repetition == 1 else []} for c in cells]
    again = disturbed.relaunches(cells, records, run)
    [longer] = [c for c in again if c.point_id == point[0].point_id]
    assert (longer.repetition, longer.duration_s, point[0].duration_s) == (4, 25.0, 4)
    assert {c.duration_s for c in again if c.point_id != point[0].point_id and c.delay_ms == 250} == {12.5}
    assert {c.duration_s for c in again if not c.delay_ms} == {8.0}  # no round trip to speak of: twice 4 s
    counted = points.counted([r for r in records if r["point_id"] == point[0].point_id])
    assert [r["repetition"] for r in counted] == [2, 3]
    noisy = [{**r, "flags": ["noisy_host"] if r["flags"] else []} for r in records]
    assert {c.duration_s for c in disturbed.relaunches(cells, noisy, run)} == {4}  # the host, not the window


def test_a_relaunch_still_too_short_is_launched_again_twice_as_long():
    from crossbench.decide import disturbed

    run, cells = planned("quick")
    [point] = [p for p in by_point(cells) if p[0].server == "tomcat" and p[0].concurrency == 400 and p[0].delay_ms]
    first = disturbed.longer(point[0].launch(4), 4.0)
    records = [{**record(c), "flags": ["window_too_short"]} for c in [*point, first]]
    assert disturbed.too_short([*cells, first], records) == {point[0].point_id: 25.0}
    assert disturbed.longer(point[0].launch(5), 25.0).duration_s == 50.0  # twice the 25 s relaunch


def test_a_launch_far_outside_its_siblings_is_launched_again_once_without_a_flag():
    """A launch reading 42 % under two siblings that agree within 1 % (beyond 3 robust spreads, never under 5 %):
    launched again once, and kept in its point. Tomcat's static point at 2,442 / 1,929 / 1,400 req/s has no
    launch far outside the others: three launches that spread cannot say which one is off. 10 % off two
    siblings that agree is within the 5 % floor's 3 spreads."""
    from crossbench.decide import disturbed
    from crossbench.figures import points

    run, cells = planned("quick")
    [static] = [p for p in by_point(cells) if not p[0].delay_ms and p[0].server == "tomcat" and p[0].concurrency == 100]
    others = [record(c) for c in cells if c.point_id != static[0].point_id]

    def again(*rps):
        return disturbed.relaunches(cells, others + [record(c, rps=v) for c, v in zip(static, rps)], run)

    assert points.outliers([record(c, rps=v) for c, v in zip(static, (1000, 1010, 580))]) == [static[2].cell_id]
    assert [(c.point_id, c.repetition, c.duration_s) for c in again(1000, 1010, 580)] == [
        (static[0].point_id, 4, static[0].duration_s)
    ]
    assert again(2442, 1929, 1400) == [] and again(1000, 1010, 900) == [] and again(1000, 1010, 1080) == []
    fourth = static[0].launch(4)
    records = others + [record(c, rps=v) for c, v in zip([*static, fourth], (1000, 1010, 580, 1005))]
    assert disturbed.relaunches([*cells, fourth], records, run) == []  # launched again once: done
    [point] = [p for p in points.aggregate(records) if p["point_id"] == static[0].point_id]
    assert point["n"] == 4 and point["disturbed_cells"] == []  # the outlier stays in its figures
