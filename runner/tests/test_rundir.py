import pytest

from crossbench.record.rundir import RunDir, RunDirError


def test_records_survive_and_resume_sees_them(tmp_path):
    run = RunDir(tmp_path / "run")
    run.create({"run_id": "x"}, [{"cell_id": "a"}, {"cell_id": "b"}])
    run.append({"cell_id": "a", "status": "ok"})
    with open(run.cells_file, "a") as out:
        out.write('{"cell_id": "b", "sta')  # a crash in the middle of a write
    assert RunDir(tmp_path / "run").finished_ids() == {"a"}
    meta, plan = run.load()
    assert meta == {"run_id": "x"} and [p["cell_id"] for p in plan] == ["a", "b"]


def test_a_record_appended_after_a_torn_line_is_kept(tmp_path):
    """--resume after a crash mid-write: the next record must not be glued to the torn line and lost."""
    run = RunDir(tmp_path / "run")
    run.create({"run_id": "x"}, [{"cell_id": "a"}, {"cell_id": "b"}])
    run.append({"cell_id": "a", "status": "ok"})
    with open(run.cells_file, "a") as out:
        out.write('{"cell_id": "b", "sta')
    run.append({"cell_id": "b", "status": "ok"})
    assert run.finished_ids() == {"a", "b"}
    assert run.cells_file.read_text().splitlines()[1] == '{"cell_id": "b", "sta'


def test_create_refuses_an_existing_run(tmp_path):
    run = RunDir(tmp_path / "run")
    run.create({}, [])
    with pytest.raises(RunDirError, match="--resume"):
        RunDir(tmp_path / "run").create({}, [])


def test_load_refuses_a_stranger(tmp_path):
    with pytest.raises(RunDirError, match="not a crossbench run directory"):
        RunDir(tmp_path).load()
