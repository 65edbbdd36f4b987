"""SQLite's answers to what the shared statements cannot say alike (`stores.sql.dialect.Dialect`)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ...terms import query_terms
from ..records import Vector
from ..search.embeddings import embedding_blob
from ..sql.dialect import Connection, Dialect

__all__ = ["SQLITE", "SQLiteConnection", "match_expression"]


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(text: str, *, prefix: bool = False) -> str | None:
    """An FTS5 expression matching any content word of `text` (prefix matches for search boxes).

    The index keeps which rows hold a term, not where (`detail=none`, migration 0015), so it answers no phrase:
    a word the tokenizer splits ("7.5", "don't") asks for all of its parts, anywhere in the row."""
    terms = query_terms(text)
    if not terms:
        return None
    suffix = "*" if prefix else ""
    return " OR ".join(_word_match(term, suffix) for term in terms)


def _word_match(word: str, suffix: str) -> str:
    parts = [_quote(part) for part in _PARTS.split(word) if part]
    parts[-1] += suffix
    return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"


_PARTS = re.compile(r"[.']")


def _text_match(text: str) -> tuple[str, list[Any]] | None:
    expression = match_expression(text, prefix=True)
    if expression is None:
        return None
    return "id IN (SELECT rowid FROM learnings_fts WHERE learnings_fts MATCH ?)", [expression]


def _vector_param(vector: Vector) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def _scrub_source(column: str) -> tuple[str, str]:
    return (
        f"json_set({column}, '$.source.author', NULL, '$.source.session', NULL, '$.source.message', NULL, "
        "'$.source.interaction', NULL)",
        f"json_extract({column}, '$.source.author') = ?",
    )


def _after_forget(conn: Connection) -> None:
    # Merge full-text segments so deleted postings are gone from the index, not just masked, and empty
    # the WAL so the user's rows are not left in its frames (secure_delete zeroes the freed pages).
    conn.execute("INSERT INTO learnings_fts (learnings_fts) VALUES ('optimize')")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@contextmanager
def _without_waiting(conn: Connection) -> Iterator[None]:
    """busy_timeout 0 inside: a write lock held by another connection raises SQLITE_BUSY at once."""
    previous = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(previous)}")


def _busy(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and exc.sqlite_errorcode & 0xFF in (
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
    )


SQLITE = Dialect(
    name="sqlite",
    begin_write=("BEGIN IMMEDIATE",),
    begin_unordered=("BEGIN IMMEDIATE",),
    begin_read="BEGIN",
    errors=(sqlite3.Error,),
    integrity_errors=(sqlite3.IntegrityError,),
    vector_param=_vector_param,
    embedding_param=embedding_blob,
    text_match=_text_match,
    scrub_source=_scrub_source,
    after_forget=_after_forget,
    greatest="MAX",
    skip_locked="",
    lock_row="",
    whole=lambda expr: f"CAST({expr} AS INTEGER)",
    json_text=lambda column, key: f"json_extract({column}, '$.{key}')",
    json_number=lambda column, key: f"json_extract({column}, '$.{key}')",
    json_length=lambda column, key: f"json_array_length({column}, '$.{key}')",
    json_set_key=lambda column: f"json_set({column}, '$.' || ?, json(?))",
    commit_stamp="PRAGMA data_version",
    columns_query="SELECT name FROM pragma_table_info(?)",
    page_query=lambda table, columns: (
        f"SELECT rowid, {columns} FROM {table} WHERE tenant = ? AND rowid > ? ORDER BY rowid LIMIT ?"
    ),
    first_position=0,
    after_import=lambda conn, table: None,  # AUTOINCREMENT keeps its counter past every id inserted
    without_waiting=_without_waiting,
    busy=_busy,
)


class SQLiteConnection(sqlite3.Connection):
    """A sqlite3 connection that names its dialect for the shared statements (`connect` opens these)."""

    dialect = SQLITE
