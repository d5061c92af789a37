"""TechEmpower's rules as crossbench/tfb.py states them, on answers made here (each check shown to fail on what it
must refuse), and the tfb experiments' plan: TechEmpower's levels, plaintext alone pipelined, sweeps."""

from __future__ import annotations

import pytest

from crossbench import tfb
from crossbench.plan import experiment
from crossbench.plan.experiment_checks import validate
from crossbench.plan.experiment_schema import ExperimentError

ROWS = "".join(f"<tr><td>{i}</td><td>{m}</td></tr>" for i, m in tfb.EXPECTED_FORTUNES)
PAGE = f"<!DOCTYPE html><html><body><table><tr><th>id</th><th>message</th></tr>{ROWS}</table></body></html>"
ESCAPED = PAGE.replace("<script>", "&lt;script&gt;").replace("</script>", "&lt;/script&gt;")
HTML = {"content-type": "text/html; charset=UTF-8"}


def test_the_expected_fortunes_are_techempowers_twelve_and_the_added_one_sorted():
    assert len(tfb.EXPECTED_FORTUNES) == 13 and tfb.EXPECTED_FORTUNES[0][0] == 11  # '<' sorts first
    assert [m for _, m in tfb.EXPECTED_FORTUNES] == sorted(m for _, m in tfb.EXPECTED_FORTUNES)
    assert (0, "Additional fortune added at request time.") in tfb.EXPECTED_FORTUNES
    assert tfb.EXPECTED_FORTUNES[-1] == (12, "フレームワークのベンチマーク")


def test_an_escaped_page_passes_with_any_escaping_style():
    tfb.check_fortunes(HTML, ESCAPED.encode())
    tfb.check_fortunes(HTML, ESCAPED.replace("&quot;", "&#34;").replace("'", "&#39;").encode())


@pytest.mark.parametrize(
    "page, headers, message",
    [
        (PAGE, HTML, "unescaped"),
        (ESCAPED.replace("<tr><td>0</td>", "<tr><td>99</td>"), HTML, "sorted"),
        (ESCAPED.replace(f"<tr><td>0</td><td>{tfb.ADDED_FORTUNE}</td></tr>", ""), HTML, "sorted"),
        (ESCAPED, {"content-type": "text/html"}, "charset"),
        (ESCAPED.replace("<!DOCTYPE html>", ""), HTML, "DOCTYPE"),
        (ESCAPED.replace("<th>id</th>", ""), HTML, "header row"),
    ],
)
def test_a_page_that_breaks_a_rule_is_refused(page, headers, message):
    with pytest.raises(tfb.RuleBroken, match=message):
        tfb.check_fortunes(headers, page.encode())


def test_latin1_or_reordered_rows_are_refused():
    with pytest.raises(tfb.RuleBroken):
        tfb.check_fortunes(HTML, ESCAPED.encode("utf-8").replace("フ".encode(), b"\xff"))


def test_json_plaintext_and_headers():
    body = b'{"message":"Hello, World!"}'
    tfb.check_json({"content-type": "application/json"}, body)
    with pytest.raises(tfb.RuleBroken, match="not"):
        tfb.check_json({"content-type": "application/json"}, b'{"message":"Hello, world"}')
    with pytest.raises(tfb.RuleBroken, match="Content-Type"):
        tfb.check_json({"content-type": "text/plain"}, body)
    tfb.check_plaintext({"content-type": "text/plain; charset=UTF-8"}, b"Hello, World!")
    with pytest.raises(tfb.RuleBroken, match="body"):
        tfb.check_plaintext({"content-type": "text/plain"}, b"Hello, World!\n")
    complete = {"server": "x", "date": "Tue, 24 Nov 2026 05:00:00 GMT", "content-type": "a/b", "content-length": "27"}
    tfb.check_headers(complete, body, "/json")
    with pytest.raises(tfb.RuleBroken, match="no server"):
        tfb.check_headers({k: v for k, v in complete.items() if k != "server"}, body, "/json")
    with pytest.raises(tfb.RuleBroken, match="Content-Length 26"):
        tfb.check_headers({**complete, "content-length": "26"}, body, "/json")
    tfb.check_answer("/db", {}, b"")  # not one of the two: nothing checked here


def plan(name):
    config = experiment.load(name)
    validate(config)
    return experiment.expand(config)


def test_tfb_runs_techempowers_levels_and_pipelines_only_plaintext():
    cells = plan("tfb")
    assert {c.duration_s for c in cells} == {15} and {c.loadgen for c in cells} == {"wrk"}
    by_group = {}
    for c in cells:
        by_group.setdefault(c.group, set()).add(c.concurrency)
    assert by_group["json"] == by_group["db"] == by_group["fortunes"] == {16, 32, 64, 128, 256, 512}
    assert {c.pipeline for c in cells if c.group == "plaintext"} == {16}
    assert {c.pipeline for c in cells if c.group != "plaintext"} == {1}
    for endpoint in ("/queries", "/updates"):
        assert {c.paths()[0] for c in cells if c.endpoint == endpoint} == {
            f"{endpoint}?queries={n}" for n in (1, 5, 10, 15, 20)
        }
    assert all(c.sweep for c in cells if c.plugin.process_knob)  # every Python stack swept
    assert {c.settings["worker_class"] for c in cells if "worker_class" in c.settings} == {"gthread"}


def test_tfb_quick_covers_all_six_types_on_every_server():
    cells = plan("tfb-quick")
    assert {(c.server, c.endpoint) for c in cells} == {
        (s, e)
        for s in ("tomcat", "tornado", "gunicorn", "uvicorn")
        for e in ("/json", "/plaintext", "/db", "/fortunes", "/queries", "/updates")
    }
    assert sum(c.duration_s + c.warmup_s for c in cells) <= 150


def test_a_group_pipeline_must_be_a_positive_integer():
    config = experiment.load("tfb-quick")
    config["group"][1]["pipeline"] = 0
    with pytest.raises(ExperimentError, match="pipeline"):
        validate(config)
