"""The SQL reads behind the in-memory search partitions of one SQLite file (`stores.search.partition_cache`).

Partitions follow `vector_changes`, the log that triggers append to on every change of a learning's row;
`store_meta` records how far the log was pruned and the forget epoch. The cache, its eviction and its ANN
files are SQL-agnostic and live in `stores.search`; the reads are the shared SQL of `stores.sql.partition_source`;
this module adds when the file may have changed (`PRAGMA data_version`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..retention import DEFAULT_RETENTION
from ..search.partition_cache import PartitionCache, PartitionKey
from ..sql.changelog import change_log_pruner
from ..sql.dialect import Connection
from ..sql.event_retention import retrieval_compactor
from ..sql.partition_source import SqlPartitionSource
from ..sql.terms_backfill import terms_backfiller
from .embedding_storage import embedding_shrinker

__all__ = ["SQLitePartitionSource", "sqlite_partitions"]


# Every live row's id and stored embedding in one row: the blobs joined by SQLite (group_concat keeps a blob's
# bytes; cast back, they are the blobs end to end), so reading 10k vectors back builds no object per row.
_LIVE_EMBEDDINGS = (
    "SELECT group_concat(id), CAST(group_concat(embedding, x'') AS BLOB) FROM learnings WHERE tenant = ? "
    "AND user_id = ? AND status != 'deprecated' AND embedding_model = ? AND embedding IS NOT NULL"
)


class SQLitePartitionSource(SqlPartitionSource):
    def __init__(self, embedding_model: str) -> None:
        super().__init__(embedding_model)
        # PRAGMA data_version as last read on the store's thread: other threads may read it (an int, set
        # whole) to tell whether another process has committed since (see SqlToolStore.may_know).
        self.data_version_seen = -1

    def live_embeddings(self, conn: Connection, key: PartitionKey) -> tuple[npt.NDArray[np.int64], bytes] | None:
        try:
            ids, joined = conn.execute(_LIVE_EMBEDDINGS, (key[0], key[1], self.embedding_model)).fetchone()
        except sqlite3.DataError:  # over SQLite's largest value (1 GB: a partition of over a million vectors)
            return None
        if ids is None:
            return np.zeros(0, dtype=np.int64), b""
        return np.array(ids.split(","), dtype=np.int64), bytes(joined)

    def stamp(self, conn: sqlite3.Connection) -> tuple[int, int]:
        """(data_version, total_changes): moves when another connection committed or this one wrote."""
        stamp = conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes
        self.data_version_seen = stamp[0]
        return stamp


def sqlite_partitions(
    path: str,
    source: SQLitePartitionSource,
    *,
    dimension: int,
    ann_threshold: int,
    max_vectors: int,
    change_retention: timedelta = DEFAULT_RETENTION.change_log,
    retrieval_retention: timedelta = DEFAULT_RETENTION.retrieval_events,
    clock: Callable[[], datetime],
) -> PartitionCache[sqlite3.Connection]:
    """The file's partition cache: ANN indexes and snapshots saved beside the file (`<path>.ann/`), and the idle
    passes that prune the change log, fold old retrieval events and rewrite older embeddings in int8 run
    before new vectors are indexed."""
    return PartitionCache(
        source,
        embedding_model=source.embedding_model,
        dimension=dimension,
        ann_threshold=ann_threshold,
        max_vectors=max_vectors,
        ann_dir=None if path == ":memory:" else Path(path + ".ann"),
        passes=(
            change_log_pruner(change_retention, clock).step,
            retrieval_compactor(retrieval_retention, clock).step,
            embedding_shrinker(clock).step,
            terms_backfiller(clock).step,
        ),
    )
