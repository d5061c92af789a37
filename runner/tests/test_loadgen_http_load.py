"""http_load adapter: refusals, command line, and the parser on every real http_load output we have.

The outputs are copies of /work/shared/fixtures/http_load (ACME http_load 09Mar2016 on 127.0.0.1),
kept in the repository so these tests run without it; test_copies_match_shared checks the copies
whenever the shared folder is there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_loadgen_support import counting_server, need  # noqa: F401  (pytest fixture)

from crossbench.loadgen import http_load
from crossbench.loadgen.base import ERROR_KINDS, LoadgenError, LoadSpec

FIXTURES = Path(__file__).parent / "fixtures" / "loadgen" / "http_load"
SHARED = Path("/work/shared/fixtures/http_load")
OUTPUTS = sorted(p.name for p in FIXTURES.glob("*.out"))


def spec(**overrides) -> LoadSpec:
    values = dict(
        urls=("http://127.0.0.1:8080/static/small.png", "http://127.0.0.1:8080/static/big.jpg"),
        concurrency=100,
        duration_s=60,
        timeout_s=10,
        keepalive=False,
    )
    return LoadSpec(**{**values, **overrides})


def parse(name: str):
    out, err = FIXTURES / name, (FIXTURES / name).with_suffix(".err")
    return http_load.parse(out.read_text(), tool_version="09Mar2016", stderr=err.read_text() if err.exists() else None)


def test_copies_match_shared():
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is not there; the copies in {FIXTURES} are what the tests use")
    for original in SHARED.iterdir():
        copy = FIXTURES / original.name
        assert copy.read_bytes() == original.read_bytes(), original.name


# --- refusals and command line ----------------------------------------------------------------


def test_refuses_above_1000_parallel(tmp_path):
    with pytest.raises(LoadgenError, match="FD_SETSIZE"):
        http_load.build_command(spec(concurrency=1001), tmp_path)
    assert "1000" in http_load.build_command(spec(concurrency=1000), tmp_path)


@pytest.mark.parametrize(
    "bad",
    [dict(keepalive=True), dict(pipeline=2), dict(concurrency=0), dict(urls=("https://127.0.0.1/",)), dict(urls=())],
)
def test_refused_specs(tmp_path, bad):
    with pytest.raises(LoadgenError):
        http_load.build_command(spec(**bad), tmp_path)


def test_runs_under_ulimit_1024(tmp_path):
    cmd = http_load.build_command(spec(duration_s=5.5, timeout_s=2), tmp_path)
    assert cmd[:3] == ["bash", "-c", 'ulimit -n 1024 && exec "$0" "$@"']
    assert cmd[3:] == [
        "http_load",
        "-parallel",
        "100",
        "-seconds",
        "6",
        "-timeout",
        "2",
        str(tmp_path / "http_load.urls"),
    ]
    assert http_load.build_command(spec(cpus=(0, 1)), tmp_path)[:4] == ["taskset", "-c", "0,1", "bash"]


def test_url_file_has_one_url_per_line_and_no_blank_line():
    text = http_load.url_file_text(spec())
    assert text == "http://127.0.0.1:8080/static/small.png\nhttp://127.0.0.1:8080/static/big.jpg\n"


# --- parser on the real outputs ---------------------------------------------------------------

VALID = {  # name: (responses, seconds, bytes, first-response mean, max) as printed in the file
    "parallel10_seconds5.out": (17816, 5.0, 92014800, 1.59562, 425.995),
    "rate50_seconds5.out": (249, 5.00001, 1343330, 1.04591, 81.948),
    "parallel10_fetches100.out": (100, 1.02358, 492352, 2.44067, 9.019),
    "parallel1000_seconds10.out": (28404, 10.0, 146699000, 4.00595, 6688.39),
    "parallel1_seconds65_verbose.out": (324, 65.0, 1661470, 0.819701, 7.319),
}
CORRUPT = {"parallel1100_fd_overflow.out", "rate_server_never_answers.out"}


def test_every_output_is_classified():
    assert set(OUTPUTS) == set(VALID) | CORRUPT


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_outputs(name):
    responses, seconds, size, mean, high = VALID[name]
    result = parse(name)
    assert (result.requests, result.duration_s, result.bytes) == (responses, seconds, size)
    assert result.latency_ms == {"mean": mean, "p50": None, "p90": None, "p99": None, "max": high}
    assert result.errors == dict.fromkeys(ERROR_KINDS, 0)
    assert result.extra["status_codes"] == {200: responses}
    assert "first response byte" in result.latency_source


def test_extra_figures_from_the_1000_parallel_run():
    extra = parse("parallel1000_seconds10.out").extra
    assert extra["fetches"] == 28404 and extra["max_parallel"] == 1000
    assert extra["fetches_per_sec"] == 2840.4
    assert extra["connect_ms"] == {"mean": 10.4715, "max": 3074.61, "min": 0.026}
    assert extra["first_response_ms"]["min"] == 0.159


def test_verbose_progress_line_is_not_an_error():
    result = parse("parallel1_seconds65_verbose.out")
    assert result.extra["stderr_messages"] == {} and result.error_count == 0


@pytest.mark.parametrize("with_stderr", [True, False])
def test_fd_overflow_is_refused(with_stderr):
    out = (FIXTURES / "parallel1100_fd_overflow.out").read_text()
    err = (FIXTURES / "parallel1100_fd_overflow.err").read_text() if with_stderr else None
    with pytest.raises(LoadgenError, match="corrupt"):
        http_load.parse(out, stderr=err)


def test_overflow_stderr_is_read_in_its_summarised_form():
    counts = http_load.stderr_messages((FIXTURES / "parallel1100_fd_overflow.err").read_text())
    assert counts == {"byte count wrong": 84418 + 84259, "Operation already in progress": 81940 + 81743}
    # and the byte-count lines add up to the stdout line
    assert "168677 bad byte counts" in (FIXTURES / "parallel1100_fd_overflow.out").read_text()


def test_no_response_codes_is_refused():
    with pytest.raises(LoadgenError, match="no response codes"):
        parse("rate_server_never_answers.out")


def test_run_directory_is_parsed_with_its_stderr(tmp_path):
    (tmp_path / "http_load.stdout").write_bytes((FIXTURES / "parallel1100_fd_overflow.out").read_bytes())
    (tmp_path / "http_load.stderr").write_bytes((FIXTURES / "parallel1100_fd_overflow.err").read_bytes())
    with pytest.raises(LoadgenError, match="Operation already in progress"):
        http_load.parse(tmp_path)
    (tmp_path / "http_load.stdout").write_bytes((FIXTURES / "rate50_seconds5.out").read_bytes())
    (tmp_path / "http_load.stderr").write_text("")
    result = http_load.parse(tmp_path)
    assert result.requests == 249 and len(result.raw_files) == 2


def test_timeouts_and_refusals_explain_fetches_without_codes():
    # assembled from the line formats above: every fetch refused or timed out is a result, not garbage
    out = (
        "20 fetches, 10 max parallel, 0 bytes, in 5.00012 seconds\n0 mean bytes/connection\n"
        "3.99990 fetches/sec, 0 bytes/sec\nmsecs/connect: 0.1 mean, 0.2 max, 0.05 min\n5 timeouts\n"
        "HTTP response codes:\n"
    )
    err = "".join(f"http://127.0.0.1:9/x: {m}\n" for m in ["Connection refused"] * 15 + ["timed out"] * 5)
    result = http_load.parse(out, stderr=err)
    assert result.requests == 0 and result.errors["connect"] == 15 and result.errors["timeout"] == 5


# --- run() wiring, with a stand-in http_load that replays a real output -------------------------


@pytest.mark.spawns  # http_load (a stand-in)
def test_run_with_a_stand_in_binary(tmp_path, monkeypatch):
    bin_dir, out_dir = tmp_path / "bin", tmp_path / "cell"
    bin_dir.mkdir()
    fake = bin_dir / "http_load"  # the version string is what the real binary carries for User-Agent
    fake.write_text(f"""#!/bin/sh
# http_load 09Mar2016 stand-in
echo "$@" > {tmp_path}/args; ulimit -n > {tmp_path}/ulimit; cp "$7" {tmp_path}/urls
cat {FIXTURES / "parallel10_seconds5.out"}
""")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    result = http_load.run(spec(concurrency=10, duration_s=5), out_dir)
    assert (tmp_path / "ulimit").read_text().strip() == "1024"
    assert (tmp_path / "args").read_text().split() == [
        "-parallel",
        "10",
        "-seconds",
        "5",
        "-timeout",
        "10",
        str(out_dir / "http_load.urls"),
    ]
    assert (tmp_path / "urls").read_text() == http_load.url_file_text(spec())
    assert result.requests == 17816 and result.tool_version == "09Mar2016"
    assert result.extra["command"][:3] == ["bash", "-c", 'ulimit -n 1024 && exec "$0" "$@"']
    assert {Path(p).name for p in result.raw_files} == {"http_load.stdout", "http_load.stderr", "http_load.urls"}


@pytest.mark.spawns  # http_load (a stand-in)
def test_nonzero_exit_is_an_error(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "http_load").write_text("#!/bin/sh\necho 'http_load: parallel may be at most 1021' >&2\nexit 1\n")
    (bin_dir / "http_load").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    with pytest.raises(LoadgenError, match="parallel may be at most 1021"):
        http_load.run(spec(), tmp_path / "cell")


# --- live -------------------------------------------------------------------------------------
# What http_load sent and the server saw (counts and connections), no figure: it shares the cores.


@pytest.mark.live
@pytest.mark.shares_cores
def test_live_run(counting_server, tmp_path):
    need("http_load")
    urls = (counting_server.url("/a"), counting_server.url("/b"))
    result = http_load.run(LoadSpec(urls=urls, concurrency=4, duration_s=1, timeout_s=2, keepalive=False), tmp_path)
    seen = counting_server.seen
    assert result.requests > 0 and seen.hits["/a"] > 0 and seen.hits["/b"] > 0
    assert seen.connections >= seen.requests
