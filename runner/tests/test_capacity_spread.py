"""How far a setting's held rate moves between sittings (decide/capacity_spread.py): its own, on its own machine,
or none."""

from __future__ import annotations

import pytest

from crossbench.decide import capacity_spread

TABLE = '''
[[machine]]
measured_on = "AMD EPYC, 2 cores"
source = "capacity-aa over three runs"

[[machine.setting]]
series = "pools-tomcat-mt20"
held_rps = [100, 100, 95.2]

[[machine.setting]]
series = "event-loops-tornado"
held_rps = [2260, 800, 2560]

[[machine.setting]]
series = "once"
held_rps = [300]
'''


def test_a_setting_gets_its_own_spread_on_its_own_machine_and_no_other(tmp_path):
    path = tmp_path / "spread.toml"
    path.write_text(TABLE)
    pool = capacity_spread.for_setting("pools-tomcat-mt20", "AMD EPYC, 2 cores", path)
    loop = capacity_spread.for_setting("event-loops-tornado", "AMD EPYC, 2 cores", path)
    assert pool.moves == pytest.approx(100 / 95.2 - 1) and loop.moves == pytest.approx(2560 / 800 - 1)
    assert pool.words() == "moves 5 % between sittings (3 on AMD EPYC, 2 cores: held 95.2-100 req/s)"
    assert "moves 220 % between sittings" in loop.words() and "held 800-2,560 req/s" in loop.words()
    for other in ("AMD EPYC, 4 cores", "AMD EPYC 7B13, 2 cores"):  # equal names only, never a part
        assert capacity_spread.for_setting("pools-tomcat-mt20", other, path) is None
    assert capacity_spread.for_setting("pools-tomcat-mt200", "AMD EPYC, 2 cores", path) is None
    assert capacity_spread.for_setting("once", "AMD EPYC, 2 cores", path) is None  # one sitting moves nothing
    assert capacity_spread.words(None) == "not measured between sittings on this machine"


def test_the_shipped_file_lists_each_setting_with_two_sittings_or_more():
    import tomllib

    table = tomllib.loads(capacity_spread.FILE.read_text())
    settings = [s for machine in table["machine"] for s in machine["setting"]]
    assert settings and all(len(s["held_rps"]) >= 2 for s in settings)
    assert "unmeasured" not in table and all("run_sd" not in machine for machine in table["machine"])
