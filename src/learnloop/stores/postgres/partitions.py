"""The SQL reads behind the in-memory search partitions of a PostgreSQL database (`stores.search.partition_cache`).

The same log as SQLite's: every change of a learning's row appends to `vector_changes` in its transaction, and
one writer at a time keeps its sequence in commit order, so a reader that replayed through seq n has seen every
change up to n. Per-user vector search is then exact, in memory, as on SQLite; the vectors themselves live in
pgvector columns.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..search.partition_cache import PARTITION_FIELDS, LogBounds, PartitionCache, PartitionKey
from ..sql.changelog import LOG_BOUNDS, change_log_pruner
from ..sql.event_retention import retrieval_compactor
from ..sql.transactions import read_transaction
from .dialect import POSTGRES, PgConnection

__all__ = ["PostgresPartitionSource", "postgres_partitions"]

_COLUMNS = ", ".join(PARTITION_FIELDS)
_LIVE = (
    f"SELECT {_COLUMNS} FROM learnings "
    "WHERE tenant = ? AND user_id = ? AND status != 'deprecated' AND embedding_model = ?"
)
# The log's bounds with the commit stamp, in one round trip.
_STAMPED_BOUNDS = LOG_BOUNDS.replace(" FROM ", f", {POSTGRES.commit_stamp.removeprefix('SELECT ')} FROM ", 1)


class PostgresPartitionSource:
    def __init__(self, embedding_model: str) -> None:
        self.embedding_model = embedding_model
        # The dialect's commit stamp as last read on the store's thread (every search reads it): the tool store
        # tells from it whether another process may have committed since (see SqlToolStore.may_know).
        self.commit_stamp_seen: Hashable = None

    def stamp(self, conn: PgConnection) -> LogBounds:
        """The log's bounds: while they stand still nothing was committed that a partition must replay (every
        write logs its learnings; forgetting a user moves the epoch)."""
        newest, pruned_through, epoch, self.commit_stamp_seen = conn.execute(_STAMPED_BOUNDS).fetchone() or (
            0,
            0,
            0,
            None,
        )
        return LogBounds(int(newest), int(pruned_through), int(epoch))

    def snapshot(self, conn: PgConnection) -> AbstractContextManager[object]:
        return read_transaction(conn)

    def log_bounds(self, conn: PgConnection) -> LogBounds:
        newest, pruned_through, epoch = conn.execute(LOG_BOUNDS).fetchone() or (0, 0, 0)
        return LogBounds(int(newest), int(pruned_through), int(epoch))

    def live_rows(self, conn: PgConnection, key: PartitionKey, ids: Sequence[int] | None) -> list[Any]:
        params: list[Any] = [key[0], key[1], self.embedding_model]
        if ids is None:
            return conn.execute(_LIVE, params).fetchall()
        return conn.execute(f"{_LIVE} AND embedding IS NOT NULL AND id = ANY(?)", [*params, list(ids)]).fetchall()

    def changed(self, conn: PgConnection, key: PartitionKey, after: int) -> list[int]:
        rows = conn.execute(
            "SELECT learning_id FROM vector_changes WHERE tenant = ? AND user_id = ? AND seq > ? ORDER BY seq",
            (key[0], key[1], after),
        ).fetchall()
        return [r[0] for r in rows]


def postgres_partitions(
    source: PostgresPartitionSource,
    *,
    dimension: int,
    ann_threshold: int,
    max_vectors: int,
    ann_dir: Path | None,
    change_retention: timedelta,
    retrieval_retention: timedelta,
    clock: Callable[[], datetime],
) -> PartitionCache[PgConnection]:
    """The database's partition cache. `ann_dir` keeps its HNSW indexes between runs (checked against the change
    log when loaded, so one folder must serve one database only); None rebuilds them in memory. The idle passes
    that prune the change log and fold old retrieval events are the shared ones (`stores.sql`)."""
    return PartitionCache(
        source,
        embedding_model=source.embedding_model,
        dimension=dimension,
        ann_threshold=ann_threshold,
        max_vectors=max_vectors,
        ann_dir=ann_dir,
        passes=(
            change_log_pruner(change_retention, clock).step,
            retrieval_compactor(retrieval_retention, clock).step,
        ),
    )
