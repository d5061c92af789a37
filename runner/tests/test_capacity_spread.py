"""A capacity search's run-to-run spread (decide/capacity_spread.py): a machine's own, else the stated default."""
from __future__ import annotations

import math

import pytest

from crossbench.decide import capacity_spread

TABLE = '''
unmeasured = 0.10
[[machine]]
measured_on = "AMD EPYC, 2 cores"
run_sd = 0.03
run_df = 6
source = "capacity-aa over two runs"
'''


def test_a_machine_gets_its_own_spread_and_no_other_machines(tmp_path):
    path = tmp_path / "spread.toml"
    path.write_text(TABLE)
    own = capacity_spread.for_machine("AMD EPYC, 2 cores", path)
    assert (own.run_sd, own.run_df, own.measured) == (0.03, 6, True)
    assert "measured on AMD EPYC, 2 cores, 6 df" in own.words()
    for other in ("AMD EPYC, 4 cores", "AMD EPYC 7B13, 2 cores"):     # equal names only, never a part
        elsewhere = capacity_spread.for_machine(other, path)
        assert (elsewhere.run_sd, elsewhere.measured) == (0.10, False) and "stated default" in elsewhere.words()


def test_an_interval_is_at_least_as_wide_as_the_spread():
    spread = capacity_spread.Spread(0.03, 6, "m", True, "")
    assert spread.factor() == pytest.approx(math.exp(2.4469 * 0.03), rel=1e-4)     # t(0.975, 6 df)
    low, high = capacity_spread.widened(100.0, 99.0, 101.0, spread)
    assert low == pytest.approx(100 / spread.factor()) and high == pytest.approx(100 * spread.factor())
    assert capacity_spread.widened(100.0, 80.0, 130.0, spread) == (80.0, 130.0)    # a wider fit stays
    default = capacity_spread.Spread(0.10, None, "m", False, "")
    assert default.factor() == pytest.approx(math.exp(1.95996 * 0.10), rel=1e-4)


def test_the_shipped_file_states_its_default():
    assert capacity_spread.for_machine("no such machine, 1 cores").run_sd > 0
