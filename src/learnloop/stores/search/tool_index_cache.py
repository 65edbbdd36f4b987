"""Each tenant's in-memory `ToolIndex`, kept in step with the backend's tool change log.

The backend appends every catalog and learned-pair change to a log (SQLite: `tool_changes`, written by
triggers); before each use an index replays the entries past its watermark, so writes of other processes
and deletions made by forgetting a user reach it. Writes made through `write` run in one transaction that
first replays pending changes under the write lock, so the index never misses a row written between its
last replay and the write.

The log is trimmed per tenant, leaving a marker: a 'catalog' entry whose `ref` is the last sequence number
trimmed (the ordinary catalog entries have ref 0). An index whose watermark is below it may have missed
entries and is loaded again — inside the caller's transaction when there is one.

Nothing here is SQL: the backend answers the reads of a `ToolChangeSource` on its connection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Generic, Protocol, TypeVar

from .tool_index import CatalogRow, PairRow, ToolIndex

__all__ = ["ToolChange", "ToolChangeSource", "ToolIndexes"]

T = TypeVar("T")
Conn = TypeVar("Conn")
Conn_contra = TypeVar("Conn_contra", contravariant=True)

# (seq, kind 'catalog' or 'pair', ref: the pair's id, or for 'catalog' 0 or the last seq trimmed)
ToolChange = tuple[int, str, int]


class ToolChangeSource(Protocol[Conn_contra]):
    def snapshot(self, conn: Conn_contra) -> AbstractContextManager[object]:
        """One consistent read snapshot (inside a transaction already open, that one)."""
        ...

    def write_transaction(self, conn: Conn_contra) -> AbstractContextManager[object]: ...

    def newest(self, conn: Conn_contra) -> int:
        """The log's newest seq, of any tenant (0 while it is empty)."""
        ...

    def changes(self, conn: Conn_contra, tenant: str, after: int) -> list[ToolChange]:
        """The tenant's entries after seq `after`, in seq order."""
        ...

    def catalog(self, conn: Conn_contra, tenant: str) -> list[CatalogRow]:
        """The tenant's catalog in catalog order, with vectors of the store's embedding model only."""
        ...

    def pairs(self, conn: Conn_contra, tenant: str, ids: Sequence[int] | None) -> list[PairRow]:
        """The tenant's learned pairs embedded with the store's model: all of them, or those of `ids` that are."""
        ...


class ToolIndexes(Generic[Conn]):
    """The routing indexes of one store, by tenant. Only ever used on the store's connection thread."""

    def __init__(self, source: ToolChangeSource[Conn], dimension: int) -> None:
        self.source = source
        self.dimension = dimension
        self._indexes: dict[str, ToolIndex] = {}

    def index(self, conn: Conn, tenant: str) -> ToolIndex:
        index = self._indexes.get(tenant)
        if index is None:
            return self._load(conn, tenant)
        return self._catch_up(conn, tenant, index)

    def write(self, conn: Conn, tenant: str, work: Callable[[ToolIndex], T]) -> T:
        """Run `work` in one write transaction with an index that has seen every committed change."""
        index = self._indexes.get(tenant) or self._load(conn, tenant)
        try:
            with self.source.write_transaction(conn):
                index = self._catch_up(conn, tenant, index)
                result = work(index)
                last = self.source.newest(conn)
        except BaseException:
            self._indexes.pop(tenant, None)  # it may hold rows that were rolled back
            raise
        index.watermark = max(index.watermark, last)
        return result

    def refresh_catalog(self, conn: Conn, tenant: str, index: ToolIndex) -> None:
        """After a catalog write in this transaction: the index reflects it before the watermark passes it."""
        index.load_catalog(self.source.catalog(conn, tenant))

    def _load(self, conn: Conn, tenant: str) -> ToolIndex:
        index = ToolIndex(self.dimension)
        with self.source.snapshot(conn):  # one snapshot for the watermark and the rows
            index.watermark = self.source.newest(conn)
            index.load_catalog(self.source.catalog(conn, tenant))
            for pair in self.source.pairs(conn, tenant, None):
                index.upsert_pair(pair)
        self._indexes[tenant] = index
        return index

    def _catch_up(self, conn: Conn, tenant: str, index: ToolIndex) -> ToolIndex:
        newest = self.source.newest(conn)
        if newest <= index.watermark:
            return index  # nothing written anywhere since: the common case, one indexed lookup
        changes = self.source.changes(conn, tenant, index.watermark)
        if not changes:
            index.watermark = newest  # only other tenants changed
            return index
        if any(kind == "catalog" and ref > index.watermark for _, kind, ref in changes):
            return self._load(conn, tenant)  # entries it had not replayed yet were trimmed from the log
        if any(kind == "catalog" for _, kind, _ in changes):
            index.load_catalog(self.source.catalog(conn, tenant))
        pair_ids = sorted({ref for _, kind, ref in changes if kind == "pair"})
        if pair_ids:
            found = {pair.id: pair for pair in self.source.pairs(conn, tenant, pair_ids)}
            for pair_id in pair_ids:
                pair = found.get(pair_id)
                if pair is None:
                    index.remove_pair(pair_id)
                else:
                    index.upsert_pair(pair)
        index.watermark = changes[-1][0]
        return index
