"""Every error the runner refuses with before its first cell derives from one base, Refusal, whose exit status the
top floor returns (run.run, serve.main): one except clause there, not a list that a new refusal can miss."""

import ast

import pytest

from crossbench import oskit, paths
from crossbench.database.cluster import DatabaseError
from crossbench.decide.slo import SloError
from crossbench.drivers.base import DriverRefused
from crossbench.hosts.hostsfile import HostsError
from crossbench.loadgen.base import LoadgenError
from crossbench.plan.experiment_schema import ExperimentError
from crossbench.record.rundir import RunDirError
from crossbench.refusal import Refusal
from crossbench.run import run
from crossbench.run.run_checks import Refused
from crossbench.servers.base import CannotRunHere, SettingsError, ToolMissing

REFUSALS = (
    ExperimentError,
    Refused,
    RunDirError,
    CannotRunHere,
    paths.BuildMissing,
    LoadgenError,
    DriverRefused,
    ToolMissing,
    SettingsError,
    oskit.LimitTooLow,
    oskit.PortInUse,
    DatabaseError,
    HostsError,
    SloError,
)


@pytest.mark.parametrize("error", REFUSALS, ids=lambda e: e.__name__)
def test_every_refusal_derives_from_the_one_base_and_says_exit_status_2(error):
    assert issubclass(error, Refusal) and error.exit_code == 2


def test_the_top_floor_catches_the_base_not_a_list():
    source = ast.parse(open(run.__file__).read())
    caught = [
        ast.unparse(handler.type)
        for handler in ast.walk(source)
        if isinstance(handler, ast.ExceptHandler) and handler.type is not None
    ]
    assert "Refusal" in caught
    assert not any(error.__name__ in text for text in caught for error in REFUSALS)


def test_a_refused_run_returns_its_exit_status(tmp_path, capsys):
    args = run.parse_args(["--experiment", "quick", "--servers", "nosuchserver", "--out", str(tmp_path / "r")])
    assert run.run(args, None) == 2
    assert capsys.readouterr().err.startswith("run_all: ")
