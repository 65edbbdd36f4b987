"""The embedded backend: one SQLite file (WAL), FTS5 full text, in-memory search partitions.

The statements and the thread that runs them are the shared ones (`stores.sql.store.SqlStore`); what is SQLite's
own is here: the file and its pragmas, the optional parts on the same file, and `PRAGMA data_version`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Hashable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from threadpoolctl import threadpool_limits

from ...errors import StoreError, ValidationError
from ...models import utcnow
from ..retention import DEFAULT_RETENTION
from ..sql.row_cache import RowCache
from ..sql.store import SqlStore
from .connection import connect
from .partitions import SQLitePartitionSource, sqlite_partitions

__all__ = ["SQLiteStore"]

T = TypeVar("T")


class SQLiteStore(SqlStore[sqlite3.Connection]):
    """`Store` on a SQLite file. `path` may be ":memory:" for throwaway use. `change_log_retention` is how long
    other processes have to catch up from the change log before they must reload a search partition.
    `retrieval_event_retention` is how long 'retrieved' events stay in the event log before they are folded
    into per-hour counts (the metrics stay the same; see `event_retention`)."""

    def __init__(
        self,
        path: str | Path,
        *,
        embedding_model: str,
        dimension: int,
        synchronous: str = "NORMAL",
        ann_threshold: int = 8_192,
        max_cached_vectors: int = 2_000_000,
        blas_threads: int | None = 1,
        clock: Callable[[], datetime] = utcnow,
        change_log_retention: timedelta = DEFAULT_RETENTION.change_log,
        retrieval_event_retention: timedelta = DEFAULT_RETENTION.retrieval_events,
    ) -> None:
        self.path = str(path)
        self.synchronous = synchronous
        self.ann_threshold = ann_threshold
        self.max_cached_vectors = max_cached_vectors
        self.blas_threads = blas_threads
        self._source = SQLitePartitionSource(embedding_model)
        super().__init__(
            embedding_model=embedding_model,
            dimension=dimension,
            clock=clock,
            partitions=sqlite_partitions(
                self.path,
                self._source,
                dimension=dimension,
                ann_threshold=ann_threshold,
                max_vectors=max_cached_vectors,
                change_retention=change_log_retention,
                retrieval_retention=retrieval_event_retention,
                clock=clock,
            ),
            thread_name="learnloop-sqlite",
        )
        # The stamp here moves with every commit of any connection (data_version: another's; the change count:
        # this one's), so rows read at a stamp are current while it stands still.
        self._rows = RowCache(foreign=_another_committed)

    # A search on current partitions runs on the caller's thread: "current" is a PRAGMA on the open file.
    inline_search = True

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    @property
    def data_version_seen(self) -> int:
        """PRAGMA data_version when the store's thread last read it; moves when another process commits."""
        return self._source.data_version_seen

    def note_data_version(self, version: Hashable) -> None:
        """Record a data_version (an int) read by a job on the store's thread."""
        if isinstance(version, int):
            self._source.data_version_seen = version

    # -- plumbing ------------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self.blas_threads is not None:
            threadpool_limits(limits=self.blas_threads, user_api="blas")
        return connect(self.path, self.synchronous)

    @staticmethod
    def _guarded(fn: Callable[..., T], args: tuple[Any, ...]) -> Callable[[sqlite3.Connection], T]:
        def job(conn: sqlite3.Connection) -> T:
            try:
                return fn(conn, *args)
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite error: {exc}") from exc
            except OverflowError as exc:  # an id or offset beyond SQLite's 64-bit integers
                raise ValidationError(f"a number is out of range: {exc}") from exc

        return job


def _another_committed(before: Hashable, after: Hashable) -> bool:
    """Whether another connection committed between two stamps (`SQLitePartitionSource.stamp`)."""
    return not (isinstance(before, tuple) and isinstance(after, tuple) and before[0] == after[0])
