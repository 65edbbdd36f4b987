"""A new SQLite file uses 8 KB pages (a learning's ~1.1 KB row fills a 4 KB page only three times); a file
created with 4 KB pages keeps them and opens as before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from learnloop.stores.sqlite.connection import connect


def page_size(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
        conn.close()


def test_a_new_file_has_8_kb_pages_and_an_older_one_keeps_its_own(tmp_path: Path) -> None:
    connect(tmp_path / "new.db").close()
    assert page_size(tmp_path / "new.db") == 8192
    older = sqlite3.connect(tmp_path / "old.db")
    older.execute("PRAGMA page_size = 4096")
    older.execute("CREATE TABLE t (x)")
    older.close()
    conn = connect(tmp_path / "old.db")
    try:
        assert conn.execute("SELECT COUNT(*) FROM learnings").fetchone() == (0,)  # migrated
    finally:
        conn.close()
    assert page_size(tmp_path / "old.db") == 4096
