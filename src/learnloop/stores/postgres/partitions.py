"""The SQL reads behind the in-memory search partitions of a PostgreSQL database (`stores.search.partition_cache`).

The same log as SQLite's: every change of a learning's row appends to `vector_changes` in its transaction, and
one writer at a time keeps its sequence in commit order, so a reader that replayed through seq n has seen every
change up to n. Per-user vector search is then exact, in memory, as on SQLite; the vectors themselves live in
pgvector columns.

A search reads everything it needs of the database before ranking in one statement (`prefetch`): the commit
stamp and the log's bounds, and for a user whose partition is not loaded that user's rows too. Each round trip
to the server is a wake-up of another process, which on a busy machine costs more than the read itself: a
cold user's search took eight statements (a stamp per partition, BEGIN, bounds, rows, COMMIT, the candidates'
rows and links) and takes three (this one, the candidates' rows and links) in two round trips, the last two
statements sent together (`PgConnection.fetch_together`); a loaded user's, four and three, in two.
One statement sees one snapshot, so the bounds and the rows agree as they did inside REPEATABLE READ.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..search.partition_cache import LogBounds, PartitionCache, PartitionKey
from ..search.row_decoding import EMBEDDING
from ..sql.changelog import LOG_BOUNDS, change_log_pruner
from ..sql.dialect import Connection
from ..sql.event_retention import retrieval_compactor
from ..sql.partition_source import LIVE_ROWS, SqlPartitionSource
from ..sql.terms_backfill import terms_backfiller
from .dialect import POSTGRES, PgConnection

__all__ = ["PostgresPartitionSource", "postgres_partitions"]

# The log's bounds with the commit stamp, in one round trip.
_STAMPED_BOUNDS = LOG_BOUNDS.replace(" FROM ", f", {POSTGRES.commit_stamp.removeprefix('SELECT ')} FROM ", 1)
# The same with one user's live rows: a row per learning, each carrying the bounds (one row of NULLs for a user
# without learnings).
_STAMPED_ROWS = f"SELECT b.*, r.* FROM ({_STAMPED_BOUNDS}) AS b LEFT JOIN LATERAL ({LIVE_ROWS}) AS r ON TRUE"
_BOUNDS_WIDTH = 4


class _Prefetched:
    """What one search read ahead: the stamp for every partition it gets; the bounds (when read with the rows,
    in the same snapshot) and one user's rows, each used once."""

    def __init__(self, stamp: LogBounds, key: PartitionKey | None = None, rows: list[Any] | None = None) -> None:
        self.stamp = stamp
        self.bounds: LogBounds | None = None if key is None else stamp
        self.key = key
        self.rows = rows or []


class PostgresPartitionSource(SqlPartitionSource):
    def __init__(self, embedding_model: str) -> None:
        super().__init__(embedding_model)
        # The dialect's commit stamp as last read on the store's thread (every search reads it): the tool store
        # tells from it whether another process may have committed since (see SqlToolStore.may_know).
        self.commit_stamp_seen: Hashable = None
        self._ahead: _Prefetched | None = None

    def prefetch(self, conn: PgConnection, key: PartitionKey, cold: bool) -> None:
        """Read in one statement what the search about to run asks first: the stamp (the log's bounds) and, when
        `cold` (the key's partition is not loaded), the key's live rows. Used until `done`."""
        if not cold:
            self._ahead = _Prefetched(self._read_stamp(conn))
            return
        rows = conn.execute(_STAMPED_ROWS, (key[0], key[1], self.embedding_model)).fetchall()
        newest, pruned_through, epoch, self.commit_stamp_seen = rows[0][:_BOUNDS_WIDTH]
        live = [row[_BOUNDS_WIDTH:] for row in rows if row[_BOUNDS_WIDTH] is not None]
        self._ahead = _Prefetched(LogBounds(int(newest), int(pruned_through), int(epoch)), key, live)

    def done(self) -> None:
        self._ahead = None

    def stamp(self, conn: Connection) -> LogBounds:
        """The log's bounds: while they stand still nothing was committed that a partition must replay (every
        write logs its learnings; forgetting a user moves the epoch)."""
        return self._read_stamp(conn) if self._ahead is None else self._ahead.stamp

    def _read_stamp(self, conn: Connection) -> LogBounds:
        row = conn.execute(_STAMPED_BOUNDS).fetchone() or (0, 0, 0, None)
        self.commit_stamp_seen = row[3]
        return LogBounds(int(row[0]), int(row[1]), int(row[2]))

    def snapshot(self, conn: Connection) -> AbstractContextManager[object]:
        if self._ahead is not None and self._ahead.bounds is not None:
            return contextlib.nullcontext()  # the bounds and the rows were read in one statement
        return super().snapshot(conn)

    def log_bounds(self, conn: Connection) -> LogBounds:
        ahead = self._ahead
        if ahead is None or ahead.bounds is None:
            return super().log_bounds(conn)
        bounds, ahead.bounds = ahead.bounds, None
        return bounds

    def live_vectors(self, conn: Connection, key: PartitionKey) -> list[Any]:
        ahead = self._ahead
        if ahead is not None and ahead.key == key:  # read with the bounds (the rows stay for `live_rows`)
            return [(row[0], row[EMBEDDING]) for row in ahead.rows]
        return super().live_vectors(conn, key)

    def live_rows(self, conn: Connection, key: PartitionKey, ids: Sequence[int] | None) -> list[Any]:
        ahead = self._ahead
        if ids is None and ahead is not None and ahead.key == key:
            ahead.key = None
            return ahead.rows
        return super().live_rows(conn, key, ids)


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
            terms_backfiller(clock).step,
        ),
    )
