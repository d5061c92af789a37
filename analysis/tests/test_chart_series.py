"""The chart kit's series: a server's settings take its palette's shades in reading order, whatever order the
shuffled run measured them in, so a setting keeps its colour from chart to chart and from run to run."""

from pathlib import Path

from crossbench_analysis.charts import export
from crossbench_analysis.charts.kit_labels import palette, panel_style, series_of
from crossbench_analysis.read.runinfo import load_run

FIXTURES = Path(__file__).parent / "fixtures" / "runs"


def cell(index: int, setting: str, max_threads, executor: str) -> dict:
    return {
        "cell_id": f"c{index}",
        "index": index,
        "server": "tomcat",
        "setting": setting,
        "group": "delay",
        "endpoint": "/delay/sync",
        "max_threads": max_threads,
        "executor": executor,
        "concurrency": 10,
    }


def test_settings_take_shades_in_reading_order_not_run_order():
    shuffled = [
        cell(0, "tomcat virtual", None, "virtual"),
        cell(1, "tomcat maxThreads=50", 50, "platform"),
        cell(2, "tomcat maxThreads=200", 200, "platform"),
        cell(3, "tomcat maxThreads=20", 20, "platform"),
    ]
    series, of_cell = series_of(shuffled, lambda c: 1)
    panel_style(1, series, {})
    shades = palette("tomcat")
    by_setting = {c["setting"]: of_cell[c["cell_id"]].color for c in shuffled}
    in_order = [
        by_setting[s]
        for s in ("tomcat maxThreads=20", "tomcat maxThreads=50", "tomcat maxThreads=200", "tomcat virtual")
    ]
    # spread along the palette's ramp, lighter to darker: the first setting the lightest, the last the darkest
    ramp = list(shades[1:])
    assert in_order == [ramp[0], ramp[2], ramp[5], ramp[7]]
    again, of_again = series_of(list(reversed(shuffled)), lambda c: 1)
    panel_style(1, again, {})
    assert {c["setting"]: of_again[c["cell_id"]].color for c in shuffled} == by_setting


def test_the_knee_chart_draws_each_server_in_its_own_shades(tmp_path):
    """The quick fixture run has a knee series for Tomcat and one for Tornado: Tornado in its blue, never in the
    Tomcat shade a single palette for the whole chart gave it."""
    run = load_run(FIXTURES / "quick")
    jobs = {j.name: j for j in export.export(run, tmp_path / "charts")}
    knees = jobs["maxthreads_knees"]
    data = (tmp_path / "charts" / "data" / knees.params["file_1"]).read_text().splitlines()
    setting_names = [line.split("\t")[0].strip('"') for line in data if line.startswith('"')]
    colors = dict(zip(setting_names, knees.params["colors_1"].split()))
    assert colors == {"tomcat maxThreads=200": palette("tomcat")[0], "tornado": palette("tornado")[0]}


def test_a_setting_keeps_its_shade_in_every_panel_of_a_chart():
    """Shades are given per chart, not per panel: a panel that lacks maxThreads=50 draws maxThreads=200 in the same
    shade as the panel that has both."""
    cells = [
        cell(0, "tomcat maxThreads=50", 50, "platform"),
        cell(1, "tomcat maxThreads=200", 200, "platform"),
        {**cell(2, "tomcat maxThreads=200", 200, "platform"), "concurrency": 100},
    ]
    series, of_cell = series_of(cells, lambda c: c["concurrency"])
    first = panel_style(1, series, {})
    second = panel_style(2, [of_cell["c2"]], {})
    assert first["colors_1"].split()[1] == second["colors_2"] == of_cell["c1"].color


def test_no_server_is_drawn_in_the_reference_lines_grey():
    from crossbench.servers import PLUGINS

    greys = {"#777777", "#999999", "#bbbbbb", "#555555", "#444444"}
    for name in PLUGINS:
        for color in palette(name):
            r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
            assert color not in greys and max(r, g, b) - min(r, g, b) > 30, f"{name}: {color} reads as grey"
