"""--resume DIR continues a run as it was planned; the one thing it may change is raising TechEmpower's best-level
launches (--best-level-launches), recorded in the run's metadata before any launch."""

import json

import pytest

from crossbench.decide import best_levels
from crossbench.plan import experiment
from crossbench.record.rundir import RunDir
from crossbench.refusal import Refusal
from crossbench.run import run


def tfb_run_dir(tmp_path, launches=3):
    config = experiment.apply_overrides(experiment.load("tfb-quick"), {"best_level_launches": launches})
    run_dir = RunDir(tmp_path / "run")
    run_dir.create({"run_id": "run", "config": config}, [c.to_dict() for c in experiment.expand(config)])
    return run_dir


@pytest.mark.spawns  # git, for the revision the raise was made on
def test_a_resume_raises_the_count_and_the_next_resume_keeps_it(tmp_path):
    run_dir = tfb_run_dir(tmp_path)
    args = run.parse_args(["--resume", str(run_dir.path), "--best-level-launches", "4"])
    config, resolved, *_ = run.resumed(args)
    assert resolved.run.best_level_launches == 4
    run.record_raise(run_dir, config)
    meta = json.loads(run_dir.metadata_file.read_text())
    assert meta["config"]["run"]["best_level_launches"] == 4
    assert [a["best_level_launches"] for a in meta["amended"]] == [{"from": 3, "to": 4}]
    assert meta["amended"][0]["at"] and "git_revision" in meta["amended"][0]
    _, again, *_ = run.resumed(run.parse_args(["--resume", str(run_dir.path)]))
    assert again.run.best_level_launches == 4


def test_the_raised_count_launches_the_best_levels_again(tmp_path):
    """Every best level already at 3 launches gets a fourth once the count is 4, and only then."""
    run_dir = tfb_run_dir(tmp_path)
    _, resolved, cells, *_ = run.resumed(run.parse_args(["--resume", str(run_dir.path)]))
    records = [{**c.to_dict(), "status": "ok", "flags": [], "rps": 100.0 + c.repetition} for c in cells]
    tomcat = [c for c in cells if c.server == "tomcat"]
    more = [c.launch(n) for c in tomcat for n in (2, 3)]
    records += [{**c.to_dict(), "status": "ok", "flags": [], "rps": 100.0} for c in more]
    assert not [c for c in best_levels.next_launches(cells + more, records, resolved.run) if c.server == "tomcat"]
    _, raised, *_ = run.resumed(run.parse_args(["--resume", str(run_dir.path), "--best-level-launches", "4"]))
    fourth = [c for c in best_levels.next_launches(cells + more, records, raised.run) if c.server == "tomcat"]
    assert sorted(c.repetition for c in fourth) == [4] * len(tomcat)


@pytest.mark.parametrize("lower", ["2", "0"])
def test_a_resume_never_lowers_the_count(tmp_path, lower):
    run_dir = tfb_run_dir(tmp_path)
    with pytest.raises(Refusal, match="never lowers"):
        run.resumed(run.parse_args(["--resume", str(run_dir.path), "--best-level-launches", lower]))
    assert "amended" not in json.loads(run_dir.metadata_file.read_text())


@pytest.mark.parametrize(
    "option, named",
    [
        (["--servers", "tomcat"], "--servers"),
        (["--duration", "5s"], "--duration"),
        (["--no-shuffle"], "--shuffle/--no-shuffle"),
    ],
)
def test_other_matrix_options_do_not_go_with_resume(tmp_path, capsys, option, named):
    with pytest.raises(SystemExit) as stopped:
        run.parse_args(["--resume", str(tmp_path), *option])
    assert stopped.value.code == 2
    assert f"; {named} does not go with it" in capsys.readouterr().err
