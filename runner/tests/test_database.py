"""The run's own PostgreSQL: rendered settings, a real cluster started, loaded, counted and stopped, and no
postgres left behind, even when the runner is killed outright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import psutil
import pytest
from testkit import alive, wait_until

from crossbench import paths
from crossbench.database import (
    Cluster,
    DatabaseError,
    ensure_tables,
    psql,
    reset_statements,
    statement_calls,
    tables_missing,
)
from crossbench.database.checks import others_busy, wait_idle
from crossbench.database.cluster import HBA, hba, render_conf, settings
from crossbench.database.datagen import copy_script


def test_settings_are_the_runs_own():
    values = settings(54321, paths.REPO / "sock", paths.REPO, 300)
    assert values["listen_addresses"] == "'127.0.0.1'" and values["port"] == "54321"
    assert values["max_connections"] == "300" and values["synchronous_commit"] == "off"
    assert "pg_stat_statements" in values["shared_preload_libraries"]
    assert values["unix_socket_directories"] == f"'{paths.REPO / 'sock'}'"  # not /var/run/postgresql
    assert int(values["shared_buffers"].removesuffix("MB")) <= 2048
    assert "port = 54321\n" in render_conf(values)
    assert "127.0.0.1/32 trust" in HBA and "0.0.0.0" not in HBA


def test_a_database_for_other_hosts_listens_on_their_side_and_lets_in_only_the_runs_hosts():
    values = settings(54321, paths.REPO / "sock", paths.REPO, 300, listen="10.9.0.3")
    assert values["listen_addresses"] == "'127.0.0.1,10.9.0.3'"
    rules = hba(("10.9.0.1", "10.9.0.2"))
    assert rules.startswith(HBA) and rules.endswith("host all all 10.9.0.1/32 trust\nhost all all 10.9.0.2/32 trust\n")
    assert "0.0.0.0" not in rules


def test_the_generator_is_seeded_and_sized():
    script = copy_script(world=5, kv=3)
    assert script == copy_script(world=5, kv=3)
    world = script.split("COPY world (id, randomnumber) FROM STDIN;\n")[1].split("\\.\n")[0].splitlines()
    kv = script.split("COPY kv (a, b) FROM STDIN;\n")[1].split("\\.\n")[0].splitlines()
    assert [int(row.split("\t")[0]) for row in world] == [1, 2, 3, 4, 5]
    assert all(1 <= int(row.split("\t")[1]) <= 10_000 for row in world)
    assert [int(row.split("\t")[0]) for row in kv] == [1, 2, 3]
    assert all(len(row.split("\t")[1]) == 20 and row.split("\t")[1].isalpha() for row in kv)


def live_beside_others(test):
    """A live test that checks what a cluster did (rows, counts, a refusal, an exit, what is left running), never
    a figure: it shares the cores, its cluster in the module's own cache (made and loaded once), its processes
    found from its postmaster's pid, never by name over the machine."""
    for mark in (pytest.mark.live, pytest.mark.shares_cores, pytest.mark.usefixtures("module_database_cache")):
        test = mark(test)
    return test


def cluster_processes(db: Cluster) -> list[psutil.Process]:
    postmaster = psutil.Process(db.pid)
    return [postmaster, *postmaster.children(recursive=True)]


@live_beside_others
def test_a_cluster_starts_loads_counts_queries_and_stops(tmp_path):
    with Cluster(tmp_path) as db:
        ensure_tables(db.url)
        assert tables_missing(db.url) is None
        assert psql(db.url, "SELECT count(*), min(id), max(id) FROM world").stdout.strip() == "10000|1|10000"
        assert psql(db.url, "SELECT count(*), max(a) FROM kv").stdout.strip() == "1000000|1000000"
        reset_statements(db.url)
        for world_id in (1, 77, 10_000):
            psql(db.url, f"SELECT id, randomnumber FROM world WHERE id = {world_id}")
        assert statement_calls(db.url, "FROM world WHERE id") == 3
        started = cluster_processes(db)
        assert len(started) > 1 and (tmp_path / "postgresql.conf").is_file()  # the postmaster and its workers
    assert not [p for p in started if alive(p)], "postgres left running"


@live_beside_others
def test_the_check_after_the_load_waits_for_statements_still_running(tmp_path):
    """A statement another session still runs (a request the server held when the load stopped) keeps the
    database busy: wait_idle gives up at its limit while it runs, and returns only once it has ended."""
    with Cluster(tmp_path) as db:
        sleeper = subprocess.Popen(
            ["psql", db.url, "-X", "-q", "-c", "SELECT pg_sleep(1.5)"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until(lambda: others_busy(db.url) == 1, 10, "the sleeping statement to show as active")
            assert wait_idle(db.url, limit_s=0.2) is False
            assert wait_idle(db.url, limit_s=20) is True
            still = psql(
                db.url,
                "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                "AND query LIKE '%pg_sleep(1.5)%' AND state = 'active'",
            ).stdout.strip()
            assert still == "0"  # the statement had ended when wait_idle said idle
            assert sleeper.wait(timeout=10) == 0
        finally:
            sleeper.kill()
            sleeper.wait()


@live_beside_others
def test_an_empty_database_is_refused_with_the_load_command(tmp_path):
    with Cluster(tmp_path) as db:  # the cluster's files are cached between runs: the database may be left over
        psql(db.url, "DROP DATABASE IF EXISTS empty")
        psql(db.url, "CREATE DATABASE empty")
        try:
            empty = db.url.rsplit("/", 1)[0] + "/empty"
            reason = tables_missing(empty)
            assert reason and "no crossbench tables" in reason and f"./runner/db.sh load {empty}" in reason
        finally:
            psql(db.url, "DROP DATABASE empty")


@live_beside_others
def test_a_port_in_use_is_a_clear_error(tmp_path):
    with Cluster(tmp_path / "a") as db:
        with pytest.raises(Exception, match="already in use"):
            Cluster(tmp_path / "b", port=db.port).start()


KILLED_RUNNER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from crossbench.database import Cluster
db = Cluster(Path(sys.argv[2])).start()
print(db.pid, flush=True)
time.sleep(600)
"""


@live_beside_others
def test_postgres_dies_with_a_runner_killed_outright(tmp_path):
    runner = subprocess.Popen(
        [sys.executable, "-c", KILLED_RUNNER, str(paths.RUNNER), str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        postmaster = psutil.Process(int(runner.stdout.readline()))
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(10)
        wait_until(
            lambda: not alive(postmaster),
            30,
            "postgres to end with its runner",
        )
    finally:
        if runner.poll() is None:
            runner.kill()


def test_no_postgres_installed_names_the_package(monkeypatch, tmp_path):
    from crossbench.database import cluster

    monkeypatch.setattr(cluster.Path, "glob", lambda self, pattern: iter(()))
    with pytest.raises(DatabaseError, match="apt-get install postgresql postgresql-contrib"):
        cluster.bin_dir()
