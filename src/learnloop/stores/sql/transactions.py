"""Explicit transactions on a shared-SQL connection (the driver runs in autocommit; we say where they begin)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from .dialect import Connection, dialect_of

__all__ = ["read_transaction", "write_transaction"]

C = TypeVar("C", bound=Connection)


@contextmanager
def write_transaction(conn: C, *, ordered: bool = True) -> Iterator[C]:
    """Takes the writer lock up front (SQLite: BEGIN IMMEDIATE), so two writers never deadlock on an upgrade.
    `ordered=False` is for a write that appends to none of the ordered logs (events, change logs): on PostgreSQL
    it takes only the row locks its statements take, so it must change shared rows with atomic statements
    (n = n + 1) or lock the row it reads first (`Dialect.lock_row`)."""
    dialect = dialect_of(conn)
    try:
        # Inside the try: a writer lock that cannot be had (no waiting allowed) leaves an open transaction.
        for statement in dialect.begin_write if ordered else dialect.begin_unordered:
            conn.execute(statement)
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        # Also when COMMIT itself fails (disk full, I/O error): the one connection must not stay inside a
        # transaction, or every later write on it would fail.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


@contextmanager
def read_transaction(conn: C) -> Iterator[C]:
    """A consistent snapshot across several SELECTs (inside a transaction already open, that one's)."""
    if conn.in_transaction:
        yield conn
        return
    conn.execute(dialect_of(conn).begin_read)
    try:
        yield conn
    finally:
        conn.execute("COMMIT")
