"""The SQL behind each tenant's in-memory tool routing index (`stores.search.tool_index_cache`).

Triggers append every catalog and learned-pair change to `tool_changes`; `ToolIndexes` replays it. This
module reads the log, the catalog and the pairs for it, and trims the log per tenant (`trim_changes`): a busy
tenant never pushes another tenant's entries out. Trimming leaves a marker, a 'catalog' entry whose `ref` is
the last sequence number trimmed (the triggers' own catalog entries have ref 0).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager

from ..search.tool_index import CatalogRow, PairRow
from ..search.tool_index_cache import ToolChange, ToolIndexes
from .dialect import Connection
from .rows import vector_from_blob
from .transactions import read_transaction, write_transaction

__all__ = ["SqlToolChanges", "sql_tool_indexes", "trim_changes"]

_PAIR_SELECT = (
    "SELECT id, user_id, tool, query_hash, embedding, confidence, uses, last_used_at FROM tool_pairs "
    "WHERE tenant = ? AND embedding_model = ?"
)


class SqlToolChanges:
    def __init__(self, embedding_model: str) -> None:
        self.embedding_model = embedding_model

    def snapshot(self, conn: Connection) -> AbstractContextManager[object]:
        return read_transaction(conn)

    def write_transaction(self, conn: Connection) -> AbstractContextManager[object]:
        return write_transaction(conn)

    def newest(self, conn: Connection) -> int:
        return int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM tool_changes").fetchone()[0])

    def changes(self, conn: Connection, tenant: str, after: int) -> list[ToolChange]:
        return conn.execute(
            "SELECT seq, kind, ref FROM tool_changes WHERE tenant = ? AND seq > ? ORDER BY seq", (tenant, after)
        ).fetchall()

    def catalog(self, conn: Connection, tenant: str) -> list[CatalogRow]:
        return [
            CatalogRow(
                name,
                server,
                description,
                json.loads(schema),
                vector_from_blob(blob) if blob is not None and model == self.embedding_model else None,
            )
            for name, server, description, schema, blob, model in conn.execute(
                "SELECT name, server, description, input_schema, embedding, embedding_model FROM tool_catalog "
                "WHERE tenant = ? ORDER BY created_at, name",
                (tenant,),
            )
        ]

    def pairs(self, conn: Connection, tenant: str, ids: Sequence[int] | None) -> list[PairRow]:
        sql, params = _PAIR_SELECT, [tenant, self.embedding_model, *(ids or ())]
        if ids is not None:
            sql += f" AND id IN ({', '.join('?' for _ in ids)})"
        return [
            PairRow(row[0], row[1], row[2], row[3], vector_from_blob(row[4]), row[5], row[6], row[7])
            for row in conn.execute(sql, params)
        ]


def sql_tool_indexes(dimension: int, embedding_model: str) -> ToolIndexes[Connection]:
    return ToolIndexes(SqlToolChanges(embedding_model), dimension)


def trim_changes(conn: Connection, tenant: str, keep: int) -> int:
    """Delete the tenant's change-log entries but its newest `keep`, leaving a marker (see the module
    docstring); runs in the caller's write transaction. Returns how many were deleted."""
    row = conn.execute(
        "SELECT seq FROM tool_changes WHERE tenant = ? ORDER BY seq DESC LIMIT 1 OFFSET ?", (tenant, keep)
    ).fetchone()
    if row is None:
        return 0
    last = int(row[0])
    deleted = conn.execute("DELETE FROM tool_changes WHERE tenant = ? AND seq <= ?", (tenant, last)).rowcount
    conn.execute("INSERT INTO tool_changes (tenant, kind, ref) VALUES (?, 'catalog', ?)", (tenant, last))
    return int(deleted)
