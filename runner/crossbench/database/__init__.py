"""The database the database endpoints read: a throwaway PostgreSQL cluster the run owns (cluster.py), the
project's seeded tables (datagen.py), optionally PgBouncer before it (pgbouncer.py), and the checks the runner
makes (checks.py). See README.md in this folder."""

from __future__ import annotations

from .checks import STATEMENTS, reset_statements, statement_calls, tables_missing
from .cluster import Cluster, DatabaseError, psql
from .datagen import DATAGEN_VERSION, ensure_tables, load_command

__all__ = [
    "DATAGEN_VERSION",
    "STATEMENTS",
    "Cluster",
    "DatabaseError",
    "ensure_tables",
    "load_command",
    "psql",
    "reset_statements",
    "statement_calls",
    "tables_missing",
]
