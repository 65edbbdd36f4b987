"""Keeping each tenant's in-memory `ToolIndex` in step with the SQLite file.

Triggers append every catalog and learned-pair change to `tool_changes`; before each use an index replays
the entries past its watermark, so writes of other processes and deletions made by `forget_user` reach it.
Writes made here run in one transaction that first replays pending changes under the write lock, so the
index never misses a row written between its last replay and the write.

The log is trimmed per tenant (`trim_changes`): a busy tenant never pushes another tenant's entries out.
Trimming leaves a marker, a 'catalog' entry whose `ref` is the last sequence number trimmed (the triggers'
own catalog entries have ref 0): an index whose watermark is below it may have missed entries and is
loaded again — inside the caller's transaction when there is one, since SQLite does not nest them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

from ..search.tool_index import CatalogRow, PairRow, ToolIndex
from .connection import read_transaction, write_transaction
from .rows import vector_from_blob

__all__ = ["IndexKeeper", "trim_changes"]

T = TypeVar("T")

_PAIR_SELECT = (
    "SELECT id, user_id, tool, query_hash, embedding, confidence, uses, last_used_at, embedding_model FROM tool_pairs"
)


class IndexKeeper:
    """The routing indexes of one store, by tenant. Only ever used on the store's executor thread."""

    def __init__(self, dimension: int, embedding_model: str) -> None:
        self.dimension = dimension
        self.embedding_model = embedding_model
        self._indexes: dict[str, ToolIndex] = {}

    def index(self, conn: sqlite3.Connection, tenant: str) -> ToolIndex:
        index = self._indexes.get(tenant)
        if index is None:
            return self._load(conn, tenant)
        return self._catch_up(conn, tenant, index)

    def write(self, conn: sqlite3.Connection, tenant: str, work: Callable[[ToolIndex], T]) -> T:
        """Run `work` in one write transaction with an index that has seen every committed change."""
        index = self._indexes.get(tenant) or self._load(conn, tenant)
        try:
            with write_transaction(conn):
                index = self._catch_up(conn, tenant, index)
                result = work(index)
                last = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM tool_changes").fetchone()[0]
        except BaseException:
            self._indexes.pop(tenant, None)  # it may hold rows that were rolled back
            raise
        index.watermark = max(index.watermark, last)
        return result

    def refresh_catalog(self, conn: sqlite3.Connection, tenant: str, index: ToolIndex) -> None:
        """After a catalog write in this transaction: the index reflects it before the watermark passes it."""
        index.load_catalog(self._catalog_rows(conn, tenant))

    def _pair(self, row: tuple[Any, ...]) -> PairRow:
        return PairRow(row[0], row[1], row[2], row[3], vector_from_blob(row[4]), row[5], row[6], row[7])

    def _load(self, conn: sqlite3.Connection, tenant: str) -> ToolIndex:
        index = ToolIndex(self.dimension)
        # One snapshot for the watermark and the rows; within a write transaction that one already is.
        snapshot: AbstractContextManager[Any] = nullcontext() if conn.in_transaction else read_transaction(conn)
        with snapshot:
            index.watermark = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM tool_changes").fetchone()[0]
            index.load_catalog(self._catalog_rows(conn, tenant))
            for row in conn.execute(
                f"{_PAIR_SELECT} WHERE tenant = ? AND embedding_model = ?", (tenant, self.embedding_model)
            ):
                index.upsert_pair(self._pair(row))
        self._indexes[tenant] = index
        return index

    def _catalog_rows(self, conn: sqlite3.Connection, tenant: str) -> list[CatalogRow]:
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

    def _catch_up(self, conn: sqlite3.Connection, tenant: str, index: ToolIndex) -> ToolIndex:
        newest = conn.execute("SELECT MAX(seq) FROM tool_changes").fetchone()[0]
        if newest is None or newest <= index.watermark:
            return index  # nothing written anywhere since: the common case, one indexed lookup
        changes = conn.execute(
            "SELECT seq, kind, ref FROM tool_changes WHERE tenant = ? AND seq > ? ORDER BY seq",
            (tenant, index.watermark),
        ).fetchall()
        if not changes:
            index.watermark = newest  # only other tenants changed
            return index
        if any(kind == "catalog" and ref > index.watermark for _, kind, ref in changes):
            return self._load(conn, tenant)  # entries it had not replayed yet were trimmed from the log
        if any(kind == "catalog" for _, kind, _ in changes):
            index.load_catalog(self._catalog_rows(conn, tenant))
        pair_ids = sorted({ref for _, kind, ref in changes if kind == "pair"})
        if pair_ids:
            marks = ", ".join("?" for _ in pair_ids)
            found = {row[0]: row for row in conn.execute(f"{_PAIR_SELECT} WHERE id IN ({marks})", pair_ids)}
            for pair_id in pair_ids:
                row = found.get(pair_id)
                if row is None or row[8] != self.embedding_model:
                    index.remove_pair(pair_id)
                else:
                    index.upsert_pair(self._pair(row))
        index.watermark = changes[-1][0]
        return index


def trim_changes(conn: sqlite3.Connection, tenant: str, keep: int) -> int:
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
