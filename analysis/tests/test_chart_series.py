"""The chart kit's series: a server's settings take its palette's shades in reading order, whatever order the
shuffled run measured them in, so a setting keeps its colour from chart to chart and from run to run."""
from pathlib import Path

from crossbench_analysis.charts import export
from crossbench_analysis.charts.kit_labels import palette, panel_style, series_of
from crossbench_analysis.read.runinfo import load_run

FIXTURES = Path(__file__).parent / "fixtures" / "runs"


def cell(index: int, setting: str, max_threads, executor: str) -> dict:
    return {"cell_id": f"c{index}", "index": index, "server": "tomcat", "setting": setting, "group": "delay",
            "endpoint": "/delay/sync", "max_threads": max_threads, "executor": executor, "concurrency": 10}


def test_settings_take_shades_in_reading_order_not_run_order():
    shuffled = [cell(0, "tomcat virtual", None, "virtual"), cell(1, "tomcat maxThreads=50", 50, "platform"),
                cell(2, "tomcat maxThreads=200", 200, "platform"), cell(3, "tomcat maxThreads=20", 20, "platform")]
    series, of_cell = series_of(shuffled, lambda c: 1)
    panel_style(1, series, {})
    shades = palette("tomcat")
    by_setting = {c["setting"]: of_cell[c["cell_id"]].color for c in shuffled}
    assert [by_setting[s] for s in ("tomcat maxThreads=20", "tomcat maxThreads=50", "tomcat maxThreads=200",
                                    "tomcat virtual")] == [shades[i % len(shades)] for i in range(4)]
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
