"""The project's seeded data generator: the tables every server's database endpoints read (SPEC, "The database
endpoints"): world and kv, and TechEmpower's fortune table (its twelve rows, unsafe and non-ASCII ones included,
for /fortunes). Loaded once per cluster with COPY and kept while DATAGEN_VERSION is the same; a change of
version (or of the table sizes) reloads them. /updates writes world's randomnumber column, so after a run that
measured it the column no longer holds the seeded values (the ids and the 1..10000 range stay)."""

from __future__ import annotations

import io
import random
import string
import time

from crossbench.tfb import FORTUNES

from .cluster import DatabaseError, psql

DATAGEN_VERSION = 2  # 2: the fortune table
SEED = 20261122
WORLD_ROWS = 10_000
KV_ROWS = 1_000_000

SCHEMA = """
DROP TABLE IF EXISTS world, kv, fortune, crossbench_meta;
CREATE TABLE world (id integer PRIMARY KEY, randomnumber integer NOT NULL);
CREATE TABLE fortune (id integer PRIMARY KEY, message varchar(2048) NOT NULL);
CREATE TABLE kv (a integer PRIMARY KEY, b char(20) NOT NULL);
CREATE TABLE crossbench_meta (datagen_version integer, world_rows integer, kv_rows integer,
                              loaded_at timestamptz DEFAULT now());
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
"""


def fortune_rows() -> str:
    """COPY's text format: no tab, newline or backslash in these messages, so none needs escaping."""
    return "".join(f"{i}\t{message}\n" for i, message in enumerate(FORTUNES, start=1))


def world_rows(rng: random.Random, rows: int) -> str:
    return "".join(f"{i}\t{rng.randint(1, WORLD_ROWS)}\n" for i in range(1, rows + 1))


def kv_rows(rng: random.Random, rows: int) -> str:
    letters = string.ascii_letters
    return "".join(f"{a}\t{''.join(rng.choices(letters, k=20))}\n" for a in range(1, rows + 1))


def copy_script(world: int, kv: int) -> str:
    """SQL with the COPY data inline (psql reads it from its script); same seed, same rows, every time."""
    rng = random.Random(SEED)
    out = io.StringIO()
    out.write(SCHEMA)
    out.write("COPY world (id, randomnumber) FROM STDIN;\n" + world_rows(rng, world) + "\\.\n")
    out.write("COPY kv (a, b) FROM STDIN;\n" + kv_rows(rng, kv) + "\\.\n")
    out.write("COPY fortune (id, message) FROM STDIN;\n" + fortune_rows() + "\\.\n")
    out.write(
        f"INSERT INTO crossbench_meta (datagen_version, world_rows, kv_rows) VALUES "
        f"({DATAGEN_VERSION}, {world}, {kv});\nANALYZE world;\nANALYZE kv;\nANALYZE fortune;\n"
    )
    return out.getvalue()


def loaded(url: str) -> tuple[int, int, int] | None:
    """(version, world rows, kv rows) of what is loaded, or None when the tables are not there."""
    done = psql(url, "SELECT datagen_version, world_rows, kv_rows FROM crossbench_meta", check=False)
    if done.returncode != 0 or not done.stdout.strip():
        return None
    return tuple(int(v) for v in done.stdout.strip().splitlines()[-1].split("|"))


def ensure_tables(url: str, *, world: int = WORLD_ROWS, kv: int = KV_ROWS) -> float:
    """Loads the tables unless this version and these sizes are already there; returns the seconds it took
    (0 when nothing was loaded)."""
    if loaded(url) == (DATAGEN_VERSION, world, kv):
        return 0.0
    started = time.monotonic()
    psql(url, f"load the tables (datagen {DATAGEN_VERSION})", stdin=copy_script(world, kv), timeout_s=900)
    if loaded(url) != (DATAGEN_VERSION, world, kv):
        raise DatabaseError("the tables were loaded but crossbench_meta does not say so")
    return time.monotonic() - started


def load_command(url: str) -> str:
    """What a user runs to load the tables into an existing database (`--db-url`)."""
    return f"./runner/db.sh load {url}"
