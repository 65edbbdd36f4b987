"""What differs between the SQL backends, as data: each backend's connection class names one `Dialect`.

The shared statements are written in the common subset of SQLite and PostgreSQL with `?` placeholders (a
backend whose driver wants another style translates them). What the subset cannot say is here: how a write
transaction starts (and takes the database's single writer lock), how a vector is passed, the full-text match
of a listing's search box, JSON paths, and what each does after forgetting a user.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from ..records import Vector

__all__ = ["Connection", "Cursor", "Dialect", "dialect_of"]


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Any: ...


class Connection(Protocol):
    """The part of a DB-API connection the shared statements use (sqlite3's, or a backend's adapter)."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Any, /) -> Cursor: ...

    @property
    def in_transaction(self) -> bool: ...

    def close(self) -> None: ...


def one_by_one(conn: Connection, sql: str, rows: Sequence[Sequence[Any]]) -> list[Any]:
    """`sql` run once per parameter row, with the row each returns (`RETURNING`), in order."""
    return [conn.execute(sql, row).fetchone() for row in rows]


def each_in_turn(conn: Connection, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Any]]:
    """Each read statement's rows, the statements run one after the other."""
    return [conn.execute(sql, params).fetchall() for sql, params in statements]


@dataclass(frozen=True)
class Dialect:
    name: str
    # Statements that open a write transaction holding the database's writer lock until it ends: one writer
    # at a time is what makes event and change-log sequence numbers commit-ordered (see `base.EventLog`).
    begin_write: tuple[str, ...]
    # Statements that open a write transaction appending to none of the ordered logs (events, vector_changes,
    # tool_changes): counters, key bookkeeping, queue claims. Where the database has row locks (PostgreSQL) they
    # and atomic UPDATEs (n = n + 1) are enough, and such writes do not queue behind the ordered writers.
    begin_unordered: tuple[str, ...]
    # Opens a transaction in which several SELECTs see one snapshot.
    begin_read: str
    # The driver's own errors: a savepoint that raised one is rolled back and the batch goes on.
    errors: tuple[type[Exception], ...]
    # Its errors for a broken unique or foreign key constraint.
    integrity_errors: tuple[type[Exception], ...]
    # A float32 vector as a statement parameter for an embedding column.
    vector_param: Callable[[Vector], Any]
    # A learning's embedding as stored (SQLite: tagged int8, a quarter of the bytes; PostgreSQL: a pgvector value).
    embedding_param: Callable[[Vector], Any]
    # The condition (and its parameters) matching a listing's search box against learnings, or None when the
    # text has no word to search for.
    text_match: Callable[[str], tuple[str, list[Any]] | None]
    # SQL that clears the source fields of a learning snapshot stored as JSON text in `column`, and the
    # condition that its author is the parameter.
    scrub_source: Callable[[str], tuple[str, str]]
    # Run after the transaction that forgot a user commits (compacting what still holds their text).
    after_forget: Callable[[Connection], None]
    # The larger of two values (a scalar function; SQLite's two-argument MAX).
    greatest: str
    # Appended to a SELECT ... LIMIT that picks rows to claim: rows another transaction is claiming are
    # passed over (PostgreSQL's FOR UPDATE SKIP LOCKED; SQLite has one writer and needs nothing).
    skip_locked: str
    # Appended to a SELECT of one row that serialises the writers of what it guards until the transaction ends
    # (PostgreSQL's FOR UPDATE; SQLite's writer lock already does).
    lock_row: str
    # The integer part of a non-negative number, as SQL (a cast truncates on SQLite, rounds on PostgreSQL).
    whole: Callable[[str], str]
    # JSON stored as text: a top-level key's value as text, as a number, and the length of an array under it.
    json_text: Callable[[str, str], str]
    json_number: Callable[[str, str], str]
    json_length: Callable[[str, str], str]
    # `column` (a JSON object as text) with a key set: the parameters are the key as a JSON string and the value
    # as JSON text.
    json_set_key: Callable[[str], str]
    # A query whose one value moves whenever another connection commits (SQLite's PRAGMA data_version): while it
    # stands still, what this connection read is current.
    commit_stamp: str
    # Whole-table reads and writes of the tenant archive: the stored (not generated) column names of the table
    # named by the parameter; a page of a tenant's rows after a position, each led by its position, and the
    # position before the first row; and what to do after rows were inserted with their own ids (move the id
    # sequence past them, where the database does not).
    columns_query: str
    page_query: Callable[[str, str], str]
    first_position: Any
    after_import: Callable[[Connection, str], None]
    # Inside `without_waiting(conn)`, taking a lock another connection holds fails at once with an error that
    # `busy` recognises (housekeeping then tries again later instead of queueing behind real writers).
    without_waiting: Callable[[Connection], AbstractContextManager[None]]
    busy: Callable[[BaseException], bool]
    # A statement with `RETURNING` run once per parameter row, the returned rows in order: a backend with a
    # server sends them together (one round trip for the batch, not one per row; a bulk import's Inserts).
    returning_many: Callable[[Connection, str, Sequence[Sequence[Any]]], list[Any]] = one_by_one
    # Several read statements' rows, each statement's in order: a backend with a server sends them together.
    fetch_together: Callable[[Connection, Sequence[tuple[str, Sequence[Any]]]], list[list[Any]]] = each_in_turn


def dialect_of(conn: object) -> Dialect:
    """The dialect a backend's connection class names in its `dialect` attribute."""
    dialect = getattr(conn, "dialect", None)
    if not isinstance(dialect, Dialect):
        raise TypeError(f"{type(conn).__name__} names no SQL dialect; open it through its backend's connect()")
    return dialect
