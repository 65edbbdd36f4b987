"""The reads behind the in-memory search partitions (`stores.search.partition_cache`), in the SQL every backend
shares.

Partitions follow `vector_changes`, the log every change of a learning's row appends to in its transaction;
`store_meta` records how far the log was pruned and the forget epoch. What a backend adds is its `stamp` (the
cheapest value that moves when anything was committed) and, if it likes, faster ways to the same answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import numpy.typing as npt

from ..search.partition_cache import PARTITION_FIELDS, LogBounds, PartitionKey
from .changelog import LOG_BOUNDS
from .dialect import Connection
from .rows import LEARNING_ROWS
from .transactions import read_transaction

__all__ = ["LIVE_ROWS", "SqlPartitionSource"]

# PARTITION_FIELDS are the learnings table's own column names. The text and topic only serve a row whose
# keyword terms are not stored (see `search.stored_terms`): the others' are not read, as a cold user's search
# reads every row of theirs.
_READ = {name: f"CASE WHEN index_terms IS NULL THEN {name} END" for name in ("text", "topic")}
_LIVE = f"FROM {LEARNING_ROWS} WHERE tenant = ? AND user_id = ? AND status != 'deprecated' AND embedding_model = ?"
LIVE_ROWS = f"SELECT {', '.join(_READ.get(name, name) for name in PARTITION_FIELDS)} {_LIVE}"
# What a partition restored from its snapshot reads (see `search.snapshot`).
_LIVE_VECTORS = f"SELECT id, embedding {_LIVE}"


class SqlPartitionSource:
    def __init__(self, embedding_model: str) -> None:
        self.embedding_model = embedding_model

    def snapshot(self, conn: Connection) -> AbstractContextManager[object]:
        return read_transaction(conn)

    def log_bounds(self, conn: Connection) -> LogBounds:
        newest, pruned_through, epoch = conn.execute(LOG_BOUNDS).fetchone() or (0, 0, 0)
        return LogBounds(int(newest), int(pruned_through), int(epoch))

    def live_rows(self, conn: Connection, key: PartitionKey, ids: Sequence[int] | None) -> list[Any]:
        params: list[Any] = [key[0], key[1], self.embedding_model]
        if ids is None:
            return list(conn.execute(LIVE_ROWS, params).fetchall())
        marks = ", ".join("?" for _ in ids)
        rows = conn.execute(f"{LIVE_ROWS} AND embedding IS NOT NULL AND id IN ({marks})", [*params, *ids])
        return list(rows.fetchall())

    def live_vectors(self, conn: Connection, key: PartitionKey) -> list[Any]:
        return list(conn.execute(_LIVE_VECTORS, (key[0], key[1], self.embedding_model)).fetchall())

    def live_embeddings(self, conn: Connection, key: PartitionKey) -> tuple[npt.NDArray[np.int64], bytes] | None:
        return None  # a backend that can join blobs in SQL says so (SQLite)

    def changed(self, conn: Connection, key: PartitionKey, after: int) -> list[int]:
        rows = conn.execute(
            "SELECT learning_id FROM vector_changes WHERE tenant = ? AND user_id = ? AND seq > ? ORDER BY seq",
            (key[0], key[1], after),
        ).fetchall()
        return [r[0] for r in rows]
