"""Findings on the recorded runs (fixtures/runs/, captured from real runs): each figure checked against the cell
it comes from in cells.jsonl, read here independently; flagged cells left out with their reason; and the
sentences follow the data: change a record and the finding changes."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from analysis_markers import needs_gnuplot
from synthetic_run import rewrite

from crossbench.figures.points import fmt_interval, short
from crossbench_analysis import analyze
from crossbench_analysis.findings import findings
from crossbench_analysis.findings.findings_knees import offset_clause
from crossbench_analysis.judge.knee_rule import Knee
from crossbench_analysis.judge.knees import Overheads
from crossbench_analysis.read.runinfo import load_run

RUNS = Path(__file__).parent / "fixtures" / "runs"


def cells(name: str) -> dict[str, dict]:
    return {c["cell_id"]: c for c in map(json.loads, (RUNS / name / "cells.jsonl").read_text().splitlines())}


def found(run_dir: Path) -> list:
    return findings.compute(load_run(run_dir))


def one(items, *words):
    """The one finding whose sentence holds every word."""
    hits = [f for f in items if all(w in f.sentence for w in words)]
    assert len(hits) == 1, f"{words}: {[f.sentence for f in items]}"
    return hits[0]


def copy(tmp_path: Path, name: str) -> Path:
    shutil.copytree(RUNS / name, tmp_path / name)
    return tmp_path / name


def test_quick_bends_and_static_mix_match_the_cells():
    c = cells("quick")
    items = found(RUNS / "quick")
    # judged by the latency ratio, as the knees judge it: Tomcat's C=100 reads 1.088 (its efficiency ratio 1.104
    # counts the answers the window's edge cut off)
    tomcat = one(items, "tomcat maxThreads=200", "does not bend up to C=100", "Latency ratio")
    cell = "delay-tomcat-mt200-delay_sync-c100-d250-r1"
    assert tomcat.figure == pytest.approx(c[cell]["latency_ratio"]) and tomcat.n == 1 and tomcat.interval is None
    assert cell in tomcat.cells and tomcat.label == "latency ratio at C=100"
    # both of the seed's ratios lead the sentence, each a figure of its own
    assert tomcat.sentence.startswith(
        f"Latency ratio {short(c[cell]['latency_ratio'])} and efficiency "
        f"ratio {short(c[cell]['efficiency_ratio'])} (1 launch) at C=100: "
    )
    # C=400 is flagged (ratio_disagreement): left out, and said so
    assert tomcat.left_out == [{"cell": "delay-tomcat-mt200-delay_sync-c400-d250-r1", "reason": "ratio_disagreement"}]
    assert tomcat.sentence.endswith("(1 launch left out: ratio_disagreement)") and len(tomcat.sentence) <= 200
    # one launch a point: one launch past the hinge's fit (C=329), so the bracket, the fit indicative
    tornado = one(items, "tornado (/delay/async", "Knee between C=100 and C=400")
    assert "indicative: 1 launch past it" in tornado.detail
    assert tornado.figure == pytest.approx(c["delay-tornado-delay_async-c400-d250-r1"]["latency_ratio"])
    assert "(1 launch)" in tornado.figure_text and tornado.chart == "efficiency"
    # the ratios past the knee, and why, in a sentence of their own
    assert one(items, "at C=400: tornado (/delay/async", "nothing caps how many are served at once")
    # one launch a point: indicative figures rank nothing
    best = one(items, "No ranking of tomcat maxThreads=200 and tornado on the static mix at C=100")
    assert best.figure == pytest.approx(c["static-tomcat-mt200-static_mix-c100-d0-r1"]["rps"])
    assert "under 3 launches on a side" in best.sentence
    plateau = one(items, "130 threads (1 launch) at most, at C=100")
    assert "never filled its pool (at most 101 of 200 busy)" in plateau.sentence and "busy or idle" in plateau.detail
    # about 200 characters at most: one claim a sentence, its details in the fold
    assert all(len(f.sentence) <= 200 for f in items), [f.sentence for f in items if len(f.sentence) > 200]


def test_maxthreads_knee_against_the_pool_and_virtual_threads():
    c = cells("maxthreads-quick")
    items = found(RUNS / "maxthreads-quick")
    # one launch a point: the hinge's fit (C=50.6) has one launch past it, so the bracket around it
    mt50 = one(items, "maxThreads=50", "Knee between C=20 and C=100")
    assert "fit C=50.6, indicative" in mt50.detail
    assert mt50.figure == pytest.approx(c["delay-tomcat-mt50-delay_sync-c100-d200-r1"]["latency_ratio"])
    assert one(items, "at C=100: tomcat maxThreads=50", "the pool serves 50 at once, so C / 50 = 2.0 rounds")
    virtual = one(items, "tomcat virtual", "does not bend up to C=100")
    assert virtual.figure == pytest.approx(c["delay-tomcat-virtual-delay_sync-c100-d200-r1"]["latency_ratio"])
    # C=50 and 100 flagged: C=10 (1.015) and C=20 (1.104) put N at 18.4, a bend of under 10 % at C=20
    mt20 = one(items, "maxThreads=20", "does not bend up to C=20", "N ≥ 18.4")
    assert sorted(x["cell"] for x in mt20.left_out) == [
        "delay-tomcat-mt20-delay_sync-c100-d200-r1",
        "delay-tomcat-mt20-delay_sync-c50-d200-r1",
    ]
    assert one(items, "maxThreads=20", "44 threads (1 launch) at most").chart == "maxthreads_threads"
    assert not [f for f in items if "per thread" in f.sentence], "two settings are no slope"


def test_seed000_blocking_handler_and_a_probe_left_out():
    c = cells("seed000-quick")
    items = found(RUNS / "seed000-quick")
    tornado = one(items, "tornado's /delay/async against its /delay/sync")
    ratio = c["ab_async-tornado-delay_async-c8-d300-r1"]["rps"] / c["ab_sync-tornado-delay_sync-c8-d300-r1"]["rps"]
    # one launch a point: the ratio is said, and no claim rests on it
    assert tornado.sentence.startswith(f"{ratio:.1f} times (indicative): ")
    assert "no claim either way" in tornado.sentence and "holds its one loop" not in tornado.sentence
    blocked = one(items, "/now on tornado", "/delay/sync busy")
    assert blocked.figure is None and "every cell of it was left out (1, flagged few_completions)" in blocked.sentence
    free = one(items, "/now on tornado", "/delay/async busy")
    assert free.figure == pytest.approx(c["hol_async-tornado-delay_async-c4-d300-r1"]["latency_ms"]["p99"])


def test_seed003_seed001_seed004_openloop_figures():
    c = cells("seed003-quick")
    items = found(RUNS / "seed003-quick")
    assert one(items, "tomcat maxThreads=200 held 500 of 500").figure == pytest.approx(
        c["hold-tomcat-mt200-hello-c500-d0-r1"]["rss_per_connection_kb"]
    )
    # the limit under the connections asked for: its flagged launch is the seed's answer, said with its numbers
    limit = one(items, "maxConnections=300").sentence
    assert "held 300 of 500 keep-alive connections at once in 1 launch: its limit" in limit
    assert "requests failed (timeout 398 a launch)" in limit
    c = cells("seed001-quick")
    assert one(found(RUNS / "seed001-quick"), "the most on pipelined /hello").figure == pytest.approx(
        c["hello-tornado-hello-c100-d0-r1"]["rps"]
    )
    c = cells("seed004-quick")
    items = found(RUNS / "seed004-quick")
    table = one(items, "the lowest of 4 on db (/db")
    assert table.figure == pytest.approx(c["db-uvicorn-w3-db-c16-d0-r1"]["latency_ms"]["p99"])
    pool = one(items, "tomcat maxThreads=200 on /db/slow")
    gain = (
        c["pools-tomcat-mt200-pool16-db_slow-c16-d5-r1"]["rps"] / c["pools-tomcat-mt200-pool2-db_slow-c16-d5-r1"]["rps"]
    )
    assert pool.sentence.startswith(f"{gain:.1f} times (indicative): ") and "no claim" in pool.sentence
    assert "no claim" in one(items, "gunicorn 2 sync workers on /db/slow").sentence
    # one launch a step: indicative figures rank nothing, so every other step is a tie
    assert "not told apart from 1" in one(items, "uvicorn's best count").sentence
    assert "not told apart from 1, 2" in one(items, "tornado's best count").sentence  # 1 launch
    for sentence in (one(items, f"{server}'s best count").sentence for server in ("uvicorn", "tornado", "gunicorn")):
        count = int(sentence.split(" ", 1)[0])  # "1 process: ...", "3 processes: ..."
        assert sentence.startswith(f"{count} process{'es' * (count != 1)}: "), sentence
    c = cells("openloop-quick")
    tomcat = one(found(RUNS / "openloop-quick"), "tomcat maxThreads=20", "group delay)")
    assert tomcat.sentence.startswith("50 req/s offered and sustained: ")
    assert "not 150 req/s (unsustainable)" in tomcat.sentence
    assert tomcat.figure == pytest.approx(c["delay-tomcat-mt20-delay_sync-c1000-d200-q50-r1"]["latency_ms"]["p99"])


def test_changing_the_data_changes_the_sentence(tmp_path):
    run = copy(tmp_path, "quick")

    def change(r):
        if r["cell_id"] == "delay-tomcat-mt200-delay_sync-c100-d250-r1":
            r["latency_ratio"] = 1.2
        if r["cell_id"] == "static-tornado-static_mix-c100-d0-r1":
            r["rps"] = 1000.0

    rewrite(run, change)
    items = found(run)
    bend = one(items, "tomcat maxThreads=200", "Knee between C=1 and C=100")
    assert bend.figure == 1.2 and one(items, "at C=100: tomcat maxThreads=200", "C is within the pool of 200")
    assert one(items, "on the static mix at C=100: under 3").sentence.startswith("No ranking of tornado and")


def test_a_finding_whose_cells_are_all_flagged_says_so(tmp_path):
    run = copy(tmp_path, "quick")
    rewrite(run, lambda r: r.update(flags=["noisy_host"], valid=False) if "-tornado-" in r["cell_id"] else None)
    items = found(run)
    gone = one(items, "Where tornado (/delay/async")
    assert "no figure, every cell of it was left out (3, flagged noisy_host (3))" in gone.sentence
    assert len(gone.left_out) == 3 and gone.figure is None


@pytest.mark.spawns  # gnuplot
@needs_gnuplot
def test_analysis_writes_findings_json_md_and_puts_them_first_in_the_report(tmp_path):
    run = copy(tmp_path, "seed004-quick")
    analyze(run)
    records = json.loads((run / "findings.json").read_text())["findings"]
    assert records
    for r in records:
        assert {"sentence", "figure", "interval", "unit", "chart", "cells", "left_out"} <= set(r)
        if r["chart"]:
            assert (run / r["chart"]).is_file(), r["chart"]
        for cell in r["cells"]:
            assert (run / "cells" / cell).is_dir(), cell
    md = (run / "findings.md").read_text()
    assert all(r["sentence"] in md for r in records)
    html = (run / "report.html").read_text()
    assert html.index('id="findings"') < html.index('id="charts"')
    said = findings.text(run).splitlines()
    assert " ".join(line.strip() for line in said[said.index("findings:") + 1 :]).startswith(records[0]["sentence"])
    assert max(len(line) for line in said) <= 100


def test_the_efficiency_chart_draws_the_findings_threshold():
    from crossbench_analysis.charts import seed002
    from crossbench_analysis.findings import finding

    assert seed002.BEND == finding.THRESHOLD


def test_a_figure_of_several_launches_carries_its_interval(tmp_path):
    """Three launches of each static point (the second and third 10 % and 20 % slower): the finding states their
    geometric mean and Student's t on their logs, t(0.975, 2) = 4.3027 times s / sqrt(3), worked out by hand; with
    two launches it gives their values, indicative, and no interval (t(1) = 12.7 would be as wide as the figure)."""
    run = copy(tmp_path, "quick")
    records = [json.loads(line) for line in (run / "cells.jsonl").read_text().splitlines()]
    extra = [
        dict(r, cell_id=r["cell_id"].replace("-r1", f"-r{k}"), repetition=k, rps=r["rps"] * share)
        for r in records
        if r["group"] == "static"
        for k, share in ((2, 0.9), (3, 0.8))
    ]
    (run / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records + extra))
    rps = cells("quick")["static-tomcat-mt200-static_mix-c100-d0-r1"]["rps"]
    logs = [math.log(rps * share) for share in (1, 0.9, 0.8)]
    centre = sum(logs) / 3
    half = 4.302653 * math.sqrt(sum((v - centre) ** 2 for v in logs) / 2) / math.sqrt(3)
    tomcat = one(found(run), "tomcat maxThreads=200 on the static mix")
    assert tomcat.figure == pytest.approx(math.exp(centre)) and tomcat.n == 3
    assert tomcat.interval == pytest.approx([math.exp(centre - half), math.exp(centre + half)], rel=1e-5)
    assert "(95 %, 3 launches)" in tomcat.figure_text and tomcat.interval[0] > 0
    assert tomcat.cells == [f"static-tomcat-mt200-static_mix-c100-d0-r{k}" for k in (1, 2, 3)]
    (run / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records + extra if r["repetition"] < 3))
    two = one(found(run), "tomcat maxThreads=200 on the static mix")
    assert two.interval is None and "2 launches: " in two.figure_text and "indicative" in two.figure_text


def test_family_by_experiment_name_and_failed_launches_said_so(tmp_path):
    """On a SYNTHETIC servers run (a toy model, not a measurement): the servers family applies to servers-quick,
    a failed launch is left out as failed (not as flagged), and one server's flagged static cell leaves no
    ranking, which the finding says."""
    from synthetic_run import make_run

    assert findings.family_of("servers-quick") == "servers" and findings.family_of("seed002") == "seed002"
    assert findings.family_of("quick") == "quick" and findings.family_of("my-own") is None
    items = found(make_run(tmp_path / "run", experiment="servers-quick"))
    assert {f.family for f in items} == {"servers"}
    failed = one(items, "tomcat maxThreads=200 (/delay/sync, 3 s)", "bend")
    assert failed.sentence.endswith("(1 launch left out: failed)")
    assert failed.left_out[0]["reason"].startswith("failed: CellFailed")
    assert one(items, "No ranking on the static mix").left_out[0]["reason"] == "errors, timeouts"


def test_a_bend_comes_from_the_hinge_fitted_over_every_launch(tmp_path):
    """Two launches of each delay point, the second 3 % higher: Tomcat's C=1 and C=100 launches put the hinge's
    N at 84.7 (a bend of under 10 % at C=100), so it does not bend; each point's figure, of two launches, is
    indicative (no interval)."""
    run = copy(tmp_path, "quick")
    records = [json.loads(line) for line in (run / "cells.jsonl").read_text().splitlines()]
    extra = [
        dict(
            r,
            cell_id=r["cell_id"].replace("-r1", "-r2"),
            repetition=2,
            efficiency_ratio=r["efficiency_ratio"] * 1.03,
            latency_ratio=r["latency_ratio"] * 1.03,
        )
        for r in records
        if r["group"] == "delay"
    ]
    (run / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records + extra))
    tomcat = one(found(run), "tomcat maxThreads=200", "does not bend up to C=100")
    assert "fitted over 4 launches" in tomcat.detail
    assert tomcat.interval is None and "2 launches" in tomcat.figure_text


def sweep_run(tmp_path: Path, ratios: dict[int, tuple[float, ...]]) -> Path:
    """The quick run with Tomcat's delay sweep replaced: the launches' latency ratios at each concurrency."""
    run = copy(tmp_path, "quick")
    records = [json.loads(line) for line in (run / "cells.jsonl").read_text().splitlines()]
    model = next(r for r in records if r["cell_id"] == "delay-tomcat-mt200-delay_sync-c100-d250-r1")
    rest = [r for r in records if not (r["group"] == "delay" and "-tomcat-" in r["cell_id"])]
    sweep = [
        dict(
            model,
            cell_id=f"delay-tomcat-mt200-delay_sync-c{c}-d250-r{i}",
            concurrency=c,
            repetition=i,
            latency_ratio=ratio,
            efficiency_ratio=ratio,
            flags=[],
            valid=True,
        )
        for c, launches in ratios.items()
        for i, ratio in enumerate(launches, 1)
    ]
    (run / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rest + sweep))
    (run / "points.jsonl").unlink(missing_ok=True)
    return run


def test_the_quick_profiles_tomcat_knee_is_placed_where_its_grid_allows(tmp_path):
    """Three launches at C=100 (about 1.01) and at C=400 (about 1.98), a factor of 4 apart: the bracket, with the
    hinge through them beside it (the interpolation rule said C=113; the findings of the same run said C=400);
    with C=200 measured too, N with its interval, holding maxThreads = 200."""
    run = sweep_run(tmp_path, {100: (1.0, 1.01, 1.02), 400: (1.96, 1.98, 2.0)})
    tomcat = one(found(run), "tomcat maxThreads=200", "Knee between C=100 and C=400")
    assert "the hinge through them: C=204 [" in tomcat.detail and tomcat.label != "fitted knee N"
    finer = sweep_run(tmp_path / "finer", {100: (1.0, 1.01, 1.02), 200: (1.01, 1.02, 1.03), 400: (2.02, 2.04, 2.06)})
    tomcat = one(found(finer), "tomcat maxThreads=200", "Knee at C=")
    assert tomcat.label == "fitted knee N" and tomcat.interval[0] < 200 < tomcat.interval[1] < 220
    # to the digits the interval supports (points.fmt_interval): "C=198 [195, 202]"
    shown = fmt_interval({"value": tomcat.figure, "ci95_low": tomcat.interval[0], "ci95_high": tomcat.interval[1]})
    assert tomcat.sentence.startswith(f"Knee at C={shown}: ") and shown == "198 [195, 202]"
    assert tomcat.n == 9
    assert "its pool of 200" not in tomcat.sentence  # the interval holds the pool: nothing to explain


def test_a_knee_just_past_its_pool_says_the_overheads_measured_on_either_side_put_it_there(tmp_path):
    """Below the pool a request pays the delay and 0.2 % more; past it each round of the queue pays the delay
    alone (ratio / (C / 200) = 1.000): the hinge puts N at 200 x 1.002 / 1.000 = 200.4, its interval missing
    200, and the finding says by how much and what the overheads predict."""
    flat, past = (1.0019, 1.002, 1.0021), (0.9999, 1.0, 1.0001)
    run = sweep_run(
        tmp_path,
        {**{c: flat for c in (50, 100, 200)}, **{c: tuple(c / 200 * r for r in past) for c in (400, 800, 1000)}},
    )
    tomcat = one(found(run), "tomcat maxThreads=200", "Knee at C=")
    assert tomcat.interval[0] > 200 and tomcat.figure == pytest.approx(200.4, abs=0.1)
    assert " % above its pool of 200: the fit estimates 200 x a / a' = 200.40." in tomcat.sentence, tomcat.sentence
    assert (
        "the ratio at C <= 200, a = 1.00200, and per C / 200 past it, a' = 1.00000 (geometric means): "
        "200 x a / a' = 200.40" in tomcat.detail
    )
    assert len(tomcat.sentence) <= 230


def test_a_knee_whose_means_stray_from_the_hinge_says_its_interval_was_widened(tmp_path):
    """A flat side whose overhead drifts with C (1.000, 1.010, 1.020; launches 0.1 % apart): the hinge's lack of
    fit is significant, its interval is widened for it, and the fold says so with the lack of fit's p."""
    spread = (0.999, 1.0, 1.001)
    run = sweep_run(
        tmp_path,
        {
            **{c: tuple(r * k for k in spread) for c, r in ((50, 1.0), (100, 1.01), (200, 1.02))},
            **{c: tuple(c / 200 * k for k in spread) for c in (400, 800, 1000)},
        },
    )
    tomcat = one(found(run), "tomcat maxThreads=200", "Knee at C=")
    assert "its interval widened for the lack of fit (p = " in tomcat.detail, tomcat.detail


def test_a_rise_the_hinge_does_not_fit_is_no_knee_and_no_flat_claim(tmp_path):
    run = sweep_run(
        tmp_path,
        {c: tuple(r * k for k in (0.99, 1.0, 1.01)) for c, r in ((50, 1.0), (100, 1.02), (200, 1.3), (400, 1.35))},
    )
    tomcat = one(found(run), "no knee stated for tomcat maxThreads=200", "does not rise as a pool's C / N")
    assert "does not bend" not in tomcat.sentence


def test_a_server_that_closes_its_connections_keeps_its_figures_and_the_finding_says_it(tmp_path):
    """server_closed_connections is how the server answers (gunicorn's sync workers), not a spoiled
    measurement: the bend stays found, with the words beside it, where a flag that spoils a cell drops it."""
    run = copy(tmp_path, "quick")
    closing = ["server_closed_connections"]
    rewrite(run, lambda r: r.update(flags=closing, valid=False) if "-tornado-" in r["cell_id"] else None)
    tornado = one(found(run), "tornado (/delay/async", "Knee between C=100 and C=400")
    assert "(tornado closed every connection: one request per connection)" in tornado.sentence
    assert tornado.figure is not None and not tornado.left_out


@pytest.mark.parametrize(
    "low, high, said",
    [
        (None, None, "no claim either way"),
        (2.4, 3.1, "holds its one loop"),
        (0.9, 1.2, "costs it little"),
        (1.6, 2.6, "straddles 2"),
    ],
)
def test_a_blocking_handlers_verdict_rests_on_the_ratios_interval_not_its_estimate(low, high, said):
    from crossbench.stats import RatioTest
    from crossbench_analysis.findings.findings_seeds import blocking_verdict

    test = (
        None
        if low is None
        else RatioTest(ratio=(low + high) / 2, low=low, high=high, p_value=0.01, n_a=3, n_b=3, method="Welch")
    )
    assert said in blocking_verdict(test)


def test_launches_that_tie_are_said_to_tie_not_given_an_interval_of_zero_width():
    """maxthreads' peak threads: 77 in each of 3 launches; the figure reads "all 3 launches", never "[77, 77]" nor
    "all 0 launches" (the interval's ends alone carry no count)."""
    from crossbench_analysis.findings.finding import Finding

    tie = Finding(
        "maxthreads", "x", label="peak threads at C=50", figure=77.0, unit="threads", n=3, interval=(77.0, 77.0)
    )
    assert tie.figure_text == "peak threads at C=50: 77 threads (all 3 launches)"
    spread = Finding("maxthreads", "x", figure=77.0, unit="threads", n=3, interval=(70.0, 85.0))
    assert spread.figure_text == "77 [70, 85] threads (95 %, 3 launches)"


def test_an_offset_the_overheads_do_not_predict_is_not_explained_by_them():
    """The clause names pool x a / a' only where the knee's interval holds it: a knee at 200.4 [200.3, 200.5]
    beside overheads that predict 200.24 gets no explanation the data contradict."""
    knee = Knee("fitted", 200.4, 200.3, 200.5, None, 25, 1000)
    assert offset_clause(knee, Overheads(200, 1.0024, 1.0012, 200.24)) == ""
    said = offset_clause(knee, Overheads(200, 1.0032, 1.0012, 200.4))
    assert said == ", 0.20 % above its pool of 200: the fit estimates 200 x a / a' = 200.40", said
