"""Several processes opening one fresh database at the same moment: the migrations run once, under the write
lock (`connection._migrate` takes it before reading what is applied), and every process starts."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from pathlib import Path

from learnloop.stores.migrations import migrations_for

PROCESSES = 4


def _open_at(path: str, start_at: float) -> int:
    from learnloop.stores.sqlite.connection import connect

    time.sleep(max(0.0, start_at - time.time()))
    conn = connect(path)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0])
    finally:
        conn.close()


def test_processes_starting_together_migrate_once(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    # Every child has imported learnloop well before this moment, so they open the file together.
    start_at = time.time() + 4.0
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        counts = pool.starmap(_open_at, [(path, start_at)] * PROCESSES, chunksize=1)
    known = migrations_for("sqlite")
    assert counts == [len(known)] * PROCESSES
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
    assert [version for (version,) in rows] == [m.version for m in known]
