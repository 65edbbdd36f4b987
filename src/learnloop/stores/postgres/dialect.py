"""PostgreSQL's answers to what the shared statements cannot say alike (`stores.sql.dialect.Dialect`), and the
adapter that lets psycopg run those statements: `?` placeholders, SQLite's `+column` planner hints (dropped:
PostgreSQL plans by statistics), integers for flags, and pgvector `vector`s read as the float32 bytes SQLite
stores, so the row mapping and the search partitions take them unchanged."""

from __future__ import annotations

import array
import functools
import re
import struct
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

import numpy as np
import psycopg
from psycopg import adapt, pq
from psycopg.types import TypeInfo

from ...errors import ConfigurationError
from ...terms import query_terms
from ..records import Vector
from ..sql.dialect import Connection, Dialect

__all__ = ["POSTGRES", "PgConnection", "register_vector"]

# The advisory lock every write transaction that appends to an ordered log (events, vector_changes,
# tool_changes) takes first: one such writer at a time, as on SQLite, keeps their sequence numbers in commit
# order (a sequence hands numbers out before commit). Writes that append to none of them (counters, key
# bookkeeping, queue claims) take only row locks (`begin_unordered`).
WRITER_LOCK = 0x6C6C_0001

# A string literal (left alone), a placeholder, a percent sign (psycopg's own placeholder character), or a
# planner hint: a `+` right before a column name, not after an operand.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\?|%|(?<![\w)\]?'])\+(?=[A-Za-z_])")


@functools.lru_cache(maxsize=2048)
def translate(sql: str) -> str:
    """A shared statement in psycopg's placeholder style."""

    def token(match: re.Match[str]) -> str:
        text = match.group(0)
        if text == "?":
            return "%s"
        if text == "%":
            return "%%"
        if text == "+":
            return ""
        return text.replace("%", "%%")  # a literal: psycopg reads % even there, and ? is text

    return _TOKENS.sub(token, sql)


class PgConnection:
    """A psycopg connection (autocommit; transactions are explicit) shaped like the sqlite3 one the shared
    statements were written for."""

    dialect: Dialect

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    def execute(self, sql: str, parameters: Any = (), /) -> psycopg.Cursor[Any]:
        return self.raw.execute(translate(sql), parameters, binary=True)

    def executemany(self, sql: str, parameters: Any, /) -> psycopg.Cursor[Any]:
        cursor = self.raw.cursor()
        cursor.executemany(translate(sql), parameters)
        return cursor

    def fetch_together(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Any]]:
        """The read statements sent in one pipeline and their rows read after one round trip (psycopg's pipeline
        mode), each statement's in order."""
        cursors = [self.raw.cursor(binary=True) for _ in statements]
        with self.raw.pipeline():
            for cursor, (sql, params) in zip(cursors, statements, strict=True):
                cursor.execute(translate(sql), params)
        return [cursor.fetchall() for cursor in cursors]

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != pq.TransactionStatus.IDLE

    def close(self) -> None:
        self.raw.close()


class _IntFlag(adapt.Dumper):
    """Python booleans as integers: the shared schema keeps flags in integer columns, as SQLite does."""

    oid = 20  # int8

    def dump(self, obj: Any) -> bytes:
        return b"1" if obj else b"0"


def register_vector(raw: psycopg.Connection[Any]) -> None:
    """Teach `raw` pgvector's `vector`: numpy arrays are written as vectors and vectors read as float32 bytes."""
    info = TypeInfo.fetch(raw, "vector")
    if info is None:
        raise ConfigurationError(
            "the PostgreSQL database has no pgvector: install pgvector on the server and run CREATE EXTENSION vector "
            "in this database (as a user allowed to)"
        )

    oid = info.oid

    class VectorDumper(adapt.Dumper):
        format = pq.Format.BINARY

        def dump(self, obj: Any) -> bytes:
            values = np.ascontiguousarray(obj, dtype=">f4").ravel()
            return struct.pack(">HH", values.shape[0], 0) + values.tobytes()

    VectorDumper.oid = oid

    class VectorBinaryLoader(adapt.Loader):
        format = pq.Format.BINARY

        def load(self, data: Any) -> bytes:
            # The big-endian floats after the 4-byte header, swapped in place: a third of numpy's time per row
            # (a cold user's search reads every row of theirs).
            values = array.array("f")
            values.frombytes(data[4:])
            if sys.byteorder == "little":
                values.byteswap()
            return values.tobytes()

    class VectorTextLoader(adapt.Loader):
        def load(self, data: Any) -> bytes:
            return np.array(bytes(data)[1:-1].split(b","), dtype=np.float32).tobytes()

    raw.adapters.register_dumper(np.ndarray, VectorDumper)
    raw.adapters.register_loader(oid, VectorBinaryLoader)
    raw.adapters.register_loader(oid, VectorTextLoader)
    raw.adapters.register_dumper(bool, _IntFlag)


def _returning_many(conn: Connection, sql: str, rows: Sequence[Sequence[Any]]) -> list[Any]:
    """Every row's statement sent in one pipeline (psycopg's `executemany`), each one's returned row read back
    in order: one round trip to the server for the batch instead of one per row."""
    if not rows:
        return []
    cursor = cast(PgConnection, conn).raw.cursor(binary=True)
    cursor.executemany(translate(sql), rows, returning=True)
    found = [cursor.fetchone()]
    while cursor.nextset():
        found.append(cursor.fetchone())
    return found


def _fetch_together(conn: Connection, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Any]]:
    return cast(PgConnection, conn).fetch_together(statements)


def _vector_param(vector: Vector) -> Any:
    return np.ascontiguousarray(vector, dtype=np.float32)


def _text_match(text: str) -> tuple[str, list[Any]] | None:
    terms = query_terms(text)
    if not terms:
        return None
    # Each word quoted as a prefix lexeme; to_tsquery stems it as the index was stemmed.
    query = " | ".join("'" + term.replace("\\", "\\\\").replace("'", "''") + "':*" for term in terms)
    return "fts @@ to_tsquery('english', ?)", [query]


def _scrub_source(column: str) -> tuple[str, str]:
    cleared = f"{column}::jsonb"
    for field in ("author", "session", "message", "interaction"):
        cleared = f"jsonb_set({cleared}, '{{source,{field}}}', 'null'::jsonb)"
    return f"{cleared}::text", f"{column}::jsonb #>> '{{source,author}}' = ?"


def _after_forget(conn: Connection) -> None:
    # Nothing to compact by hand: autovacuum reclaims the deleted rows' space.
    return None


def _after_import(conn: Connection, table: str) -> None:
    # Rows inserted with their own ids leave an identity's sequence behind them: move it past the largest (and
    # never back: a sequence that went back would hand out an event cursor again).
    found = conn.execute(
        "SELECT a.attname, pg_get_serial_sequence(?, a.attname) FROM pg_attribute a "
        "WHERE a.attrelid = ?::regclass AND a.attidentity != ''",
        (table, table),
    ).fetchone()
    if found is not None:
        column, sequence = found
        conn.execute(
            f"SELECT setval(?, GREATEST((SELECT MAX({column}) FROM {table}), pg_sequence_last_value(?::regclass), 1))",
            (sequence, sequence),
        )


@contextmanager
def _without_waiting(conn: Connection) -> Iterator[None]:
    """A lock another connection holds (the writer lock first) fails at once with LockNotAvailable."""
    conn.execute("SET lock_timeout = '1ms'")
    try:
        yield
    finally:
        conn.execute("RESET lock_timeout")


POSTGRES = Dialect(
    name="postgres",
    begin_write=("BEGIN", f"SELECT pg_advisory_xact_lock({WRITER_LOCK})"),
    begin_unordered=("BEGIN",),
    begin_read="BEGIN ISOLATION LEVEL REPEATABLE READ",
    errors=(psycopg.Error,),
    integrity_errors=(psycopg.IntegrityError,),
    vector_param=_vector_param,
    embedding_param=_vector_param,
    text_match=_text_match,
    scrub_source=_scrub_source,
    after_forget=_after_forget,
    greatest="GREATEST",
    skip_locked=" FOR UPDATE SKIP LOCKED",
    lock_row=" FOR UPDATE",
    whole=lambda expr: f"FLOOR({expr})::bigint",
    json_text=lambda column, key: f"({column}::jsonb ->> '{key}')",
    json_number=lambda column, key: f"({column}::jsonb ->> '{key}')::float8",
    json_length=lambda column, key: f"jsonb_array_length({column}::jsonb -> '{key}')",
    # The key comes as a JSON string (SQLite's path syntax wants it quoted); #>> '{}' unquotes it.
    json_set_key=lambda column: f"jsonb_set({column}::jsonb, ARRAY[?::jsonb #>> '{{}}'], ?::jsonb)::text",
    # The snapshot names the transactions still running: it moves when one of them commits, or a new one writes.
    commit_stamp="SELECT pg_current_snapshot()::text",
    columns_query=(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = ? AND is_generated = 'NEVER' ORDER BY ordinal_position"
    ),
    page_query=lambda table, columns: (
        f"SELECT ctid::text, {columns} FROM {table} WHERE tenant = ? AND ctid > ?::tid ORDER BY ctid LIMIT ?"
    ),
    first_position="(0,0)",
    after_import=_after_import,
    without_waiting=_without_waiting,
    busy=lambda exc: isinstance(exc, psycopg.errors.LockNotAvailable),
    returning_many=_returning_many,
    fetch_together=_fetch_together,
)
PgConnection.dialect = POSTGRES
