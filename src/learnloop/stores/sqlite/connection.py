"""Opening a SQLite file for learnloop: pragmas, migrations, explicit transactions."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from ...errors import ConfigurationError, StoreError
from ..migrations import migrations_for
from ..sql.transactions import read_transaction, write_transaction
from .dialect import SQLiteConnection

__all__ = ["connect", "read_transaction", "write_transaction"]

_SYNCHRONOUS = {"OFF", "NORMAL", "FULL", "EXTRA"}


def connect(path: Path | str, synchronous: str = "NORMAL") -> SQLiteConnection:
    """Open (creating if needed) and migrate a learnloop database.

    WAL with synchronous=NORMAL survives a killed process (kill -9) without losing a committed
    transaction; FULL also survives power loss at the cost of an fsync per commit.
    """
    mode = synchronous.upper()
    if mode not in _SYNCHRONOUS:
        raise ConfigurationError(f"sqlite_synchronous must be one of {sorted(_SYNCHRONOUS)}, got {synchronous!r}")
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(
            str(path), isolation_level=None, check_same_thread=False, timeout=30.0, factory=SQLiteConnection
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open SQLite database {str(path)!r}: {exc}") from exc
    conn.execute("PRAGMA busy_timeout = 30000")
    # A new file's pages (an existing file keeps its own): a learning's row is about 1.1 KB, its float16
    # embedding most of it, so a 4 KB page holds three and leaves a quarter of itself empty; an 8 KB page holds
    # seven. The learnings table of a 10k-learning file measured 1,369 bytes a learning in 4 KB pages and 1,172
    # in 8 KB ones (the whole file 38.9 -> 35.2 MB). Stored as int8 since, the row is about 0.8 KB.
    conn.execute("PRAGMA page_size = 8192")
    _use_wal(conn, timeout=30.0)
    conn.execute(f"PRAGMA synchronous = {mode}")
    conn.execute("PRAGMA foreign_keys = ON")
    # Forgetting a user must not leave their text in freed pages of the file.
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute("PRAGMA cache_size = -65536")
    # Memory-mapped reads: fetching a few dozen candidate rows by id then costs no read() system calls.
    conn.execute("PRAGMA mmap_size = 1073741824")
    _migrate(conn)
    return conn


def _use_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch a file to WAL. Several processes opening one fresh file together: the switch needs the file to
    itself and SQLite answers "database is locked" at once instead of waiting on the busy timeout, so it is
    retried until `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


def _migrate(conn: sqlite3.Connection) -> None:
    with write_transaction(conn):
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
        )
        applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
        known = migrations_for("sqlite")
        if applied - {m.version for m in known}:
            raise StoreError("the database was written by a newer learnloop; upgrade learnloop to open it")
        for migration in known:
            if migration.version in applied:
                continue
            for statement in _statements(migration.sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, time.time()),
            )


def _statements(script: str) -> Iterator[str]:
    """Split a script into statements, keeping trigger bodies (which contain `;`) whole."""
    buffer: list[str] = []
    for line in script.splitlines():
        if not buffer and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buffer.append(line)
        candidate = "\n".join(buffer)
        if sqlite3.complete_statement(candidate):
            yield candidate
            buffer = []
    if "".join(buffer).strip():
        raise StoreError("migration script ends with an incomplete statement")
