"""run_all.sh starts the build of the pinned generators a run needs at once (crossbench.run.unbuilt): the quick
profile's held windows need vegeta, maxthreads-quick's oha, a run of wrk and ab alone needs nothing, and arguments
the runner refuses or a dry run start no build. It plans as --dry-run does, on the standard library alone, and
writes nothing."""

import os
import re
import subprocess
import sys

import pytest

from crossbench import paths


def unbuilt(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "CROSSBENCH_TOOLS": str(tmp_path / "tools"),  # an empty cache: nothing built
        "PYTHONPATH": os.pathsep.join(str(paths.REPO / d) for d in ("runner", "analysis", "python-contract")),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return subprocess.run(
        [sys.executable, "-B", "-m", "crossbench.run.unbuilt", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.spawns
@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (["--quick"], "vegeta\n"),
        (["--experiment", "maxthreads-quick"], "oha\n"),  # held_windows = true: the first that holds them
        (["--experiment", "seed000-quick"], ""),  # ab and the head-of-line probe: nothing pinned
        (["--quick", "--dry-run"], ""),  # a dry run builds nothing
        (["--quick", "--duration", "0"], ""),  # refused by the runner, which says why
    ],
)
def test_the_generators_to_build_at_once_are_the_plans(tmp_path, args, wanted):
    done = unbuilt(tmp_path, *args, "--out", str(tmp_path / "run"))
    assert done.returncode == 0 and done.stdout == wanted, (done.stdout, done.stderr[-400:])
    assert done.stderr == "" and sorted(p.name for p in tmp_path.iterdir()) == [], list(tmp_path.iterdir())


@pytest.mark.spawns
def test_a_run_held_by_k6_builds_k6_alone(tmp_path, tmp_path_factory):
    """held_windows = "k6": the delayed cells need k6 and nothing needs vegeta, so only k6 is built."""
    quick = (paths.RUNNER / "experiments" / "quick.toml").read_text()
    held_by_k6 = tmp_path_factory.mktemp("experiment") / "quick-k6.toml"
    held_by_k6.write_text(re.sub(r"(?m)^held_windows = \S+", 'held_windows = "k6"', quick))
    done = unbuilt(tmp_path, "--experiment", str(held_by_k6), "--out", str(tmp_path / "run"))
    assert done.returncode == 0 and done.stdout == "k6\n", (done.stdout, done.stderr[-400:])
