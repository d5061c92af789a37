"""Decisions the suite takes from figures respect their error: a best step beyond the intervals, a tie called a
tie (issue 18's seed004 case: uvicorn 6172, 5090 and 6167 req/s for 1, 2 and 3 workers, one launch each)."""

from crossbench_analysis.judge.decisions import best_of_sweeps, tied_steps


def sweep(rps_by_step: dict[int, list[float]]) -> list[dict]:
    return [
        {
            "cell_id": f"db-uvicorn-w{step}-c16-r{i}",
            "sweep": "db-uvicorn-wN-c16",
            "sweep_step": step,
            "rps": rps,
            "status": "ok",
            "valid": True,
            "server": "uvicorn",
        }
        for step, launches in rps_by_step.items()
        for i, rps in enumerate(launches, 1)
    ]


def test_one_launch_a_step_ranks_nothing_every_other_step_is_a_tie():
    cells = sweep({1: [6172], 2: [5090], 3: [6167]})  # indicative figures feed no comparison
    _, best = best_of_sweeps(cells)
    assert best["db-uvicorn-wN-c16"]["sweep_step"] == 1
    assert tied_steps(cells, "db-uvicorn-wN-c16") == [2, 3]


def test_the_best_step_is_the_best_mean_not_the_best_launch_and_intervals_decide_ties():
    cells = sweep({1: [6000, 6050, 5980], 2: [6400, 5200, 5300], 3: [6200, 6180, 6220]})
    _, best = best_of_sweeps(cells)
    assert best["db-uvicorn-wN-c16"]["sweep_step"] == 3  # step 2 had the best single launch (6400)
    assert best["db-uvicorn-wN-c16"]["rps"] == 6200  # the launch nearest its step's mean
    # step 1: 6010 +- 90 against step 3's 6200 +- 50: apart; step 2's wide interval (5633 +- 1650) reaches it
    assert tied_steps(cells, "db-uvicorn-wN-c16") == [2]
