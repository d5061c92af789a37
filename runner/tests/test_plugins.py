"""Servers are plug-ins: the runner, analysis and tests know a server only through its plug-in, and each
plug-in's knobs behave as the experiment files and the command line expect."""
from __future__ import annotations

import re

import pytest

from crossbench import paths, servers
from crossbench.servers import PLUGINS, SettingsError

SERVER_BRANCH = re.compile(r'(==|!=)\s*"(' + "|".join(PLUGINS) + r')"|\bserver\s*(==|!=)')
SCANNED = [paths.RUNNER / "crossbench", paths.REPO / "analysis" / "crossbench_analysis", paths.RUNNER / "tests",
           paths.REPO / "analysis" / "tests"]


def test_no_code_branches_on_a_server_name():
    """Adding a server is one module, one app folder and one TOML section: no branch on a server name elsewhere."""
    found = []
    for folder in SCANNED:
        for source in folder.rglob("*.py"):
            if source.parent.name == "servers" and source.parent.parent.name == "crossbench":
                continue      # the plug-ins themselves
            for number, line in enumerate(source.read_text().splitlines(), 1):
                if SERVER_BRANCH.search(line):
                    found.append(f"{source.relative_to(paths.REPO)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_each_plugin_declares_what_the_runner_needs(name):
    plugin = PLUGINS[name]
    assert plugin.name == name and "/hello" in plugin.endpoints
    assert plugin.endpoints <= {*servers.ENDPOINTS, *servers.TFB_ENDPOINTS, *servers.DB_ENDPOINTS}
    defaults = plugin.settings({})
    assert set(defaults) == {k.name for k in plugin.knobs}
    assert plugin.variants({}) == [defaults]
    assert plugin.process_count(defaults) >= 1
    assert all(k.kind in ("int", "choice", "text", "bool", "list") for k in plugin.knobs)
    with pytest.raises(SettingsError, match="unknown"):
        plugin.settings({"no_such_knob": 1})


@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_int_knobs_refuse_zero_and_text(name):
    plugin = PLUGINS[name]
    for knob in (k for k in plugin.knobs if k.kind == "int"):
        for bad in (0, -3, "8", True):
            with pytest.raises(SettingsError, match=f"{knob.name} must be a positive integer"):
                plugin.settings({knob.name: bad})


def test_a_sweep_gives_one_variant_per_value_and_a_label_each():
    tornado = PLUGINS["tornado"]
    variants = tornado.variants({"processes": [1, 2, 4]})
    assert [v["processes"] for v in variants] == [1, 2, 4]
    assert [tornado.variant_label(v) for v in variants] == ["", "-p2", "-p4"]


def test_unavailable_servers_are_refused_with_the_reason(monkeypatch):
    monkeypatch.setitem(servers.UNAVAILABLE, "japronto", "does not build on Python 3.11 (test reason)")
    with pytest.raises(servers.UnknownServer, match="japronto is not available: does not build"):
        servers.get("japronto")


def test_tomcat_makes_its_class_data_archive_once_then_maps_it(tmp_path, monkeypatch):
    from crossbench.servers.tomcat import CdsArchive
    archive = CdsArchive(tmp_path / "cds" / "tomcat.jsa")
    assert archive.option() == f"-XX:ArchiveClassesAtExit={archive.making}"
    archive.keep()                                  # the JVM made nothing (killed): nothing to keep
    assert not archive.path.exists()
    archive.making.write_bytes(b"archive")          # what the JVM writes at exit
    archive.keep()
    assert archive.path.read_bytes() == b"archive" and not archive.making.exists()
    assert archive.option() == f"-XX:SharedArchiveFile={archive.path}"


@pytest.mark.live
def test_tomcat_accepts_every_setting_its_rendered_config_gives():
    """Tomcat only warns about an attribute it does not know (the setting is then silently not applied)."""
    from live_servers import running
    with running("tomcat") as server:
        logs = "".join(p.read_text() for p in server.spec.log_path.parent.glob("*.log"))
    assert "Server startup in" in logs
    assert "failed to set property" not in logs, [line for line in logs.splitlines() if "failed to set" in line]
