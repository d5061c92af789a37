"""The chart kit's series: a server's settings take its palette's shades in reading order, whatever order the
shuffled run measured them in, so a setting keeps its colour from chart to chart and from run to run."""
from crossbench_analysis.charts.kit_labels import palette, panel_style, series_of


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
