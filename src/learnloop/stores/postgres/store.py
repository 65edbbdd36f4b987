"""The PostgreSQL backend: learnings, events and the change log in PostgreSQL, vectors in pgvector columns,
per-user exact search in the shared in-memory partitions (`stores.search`).

The statements and the worker thread are the shared ones (`stores.sql.store.SqlStore`); what is PostgreSQL's
own is the connection (`connection`, `dialect`), the schema (`migrations/postgres`) and how its errors read.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Hashable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from threadpoolctl import threadpool_limits

from ...errors import StoreError, ValidationError
from ...models import Scope, utcnow
from ..records import Candidate, SearchRequest, Select
from ..retention import DEFAULT_RETENTION
from ..sql.agent import SqlAgentStore
from ..sql.service import SqlServiceStore
from ..sql.store import SqlStore
from .connection import check_url, connect
from .dialect import PgConnection
from .listener import EventListener, Ring
from .partitions import PostgresPartitionSource, postgres_partitions
from .pool import PooledJobs

__all__ = ["PostgresStore"]

T = TypeVar("T")


class PostgresStore(SqlStore[PgConnection]):
    """`Store` on the PostgreSQL database at `url` (postgresql://user:password@host:port/database). `ann_dir` is
    a folder of this database's own where the search partitions' HNSW indexes are kept between runs (None:
    rebuilt after a restart). The retentions are as for `SQLiteStore`. `pool_size` connections at most serve
    the HTTP service's keys and counters beside the store's own (`pool`)."""

    def __init__(
        self,
        url: str,
        *,
        embedding_model: str,
        dimension: int,
        ann_threshold: int = 8_192,
        max_cached_vectors: int = 2_000_000,
        blas_threads: int | None = 1,
        clock: Callable[[], datetime] = utcnow,
        ann_dir: str | Path | None = None,
        change_log_retention: timedelta = DEFAULT_RETENTION.change_log,
        retrieval_event_retention: timedelta = DEFAULT_RETENTION.retrieval_events,
        pool_size: int = 4,
    ) -> None:
        check_url(url)
        self.url = url
        self.ann_threshold = ann_threshold
        self.blas_threads = blas_threads
        self._source = source = PostgresPartitionSource(embedding_model)
        super().__init__(
            embedding_model=embedding_model,
            dimension=dimension,
            clock=clock,
            partitions=postgres_partitions(
                source,
                dimension=dimension,
                ann_threshold=ann_threshold,
                max_vectors=max_cached_vectors,
                ann_dir=None if ann_dir is None else Path(ann_dir),
                change_retention=change_log_retention,
                retrieval_retention=retrieval_event_retention,
                clock=clock,
            ),
            thread_name="learnloop-postgres",
        )

        self._listener: EventListener | None = None
        self._pool = PooledJobs(self, pool_size)

    def __repr__(self) -> str:
        return f"PostgresStore({self.path!r})"

    def watch_events(self, ring: Ring) -> EventListener:
        """Call `ring(tenant, user)` whenever any process commits events on this database (LISTEN/NOTIFY on
        a connection of its own, until `aclose`); started once, later calls return the same listener."""
        if self._worker.closing:
            raise RuntimeError("the store is closed")
        if self._listener is None:
            self._listener = EventListener(self.url, ring)
        return self._listener

    @functools.cached_property
    def agent(self) -> SqlAgentStore:
        """The learning agent's sessions, queue and files, on the pooled connections (`pool`): a worker's claim
        or lease renewal does not wait behind the searches and saves of its process."""
        return SqlAgentStore(self._pool)

    @functools.cached_property
    def service(self) -> SqlServiceStore:
        """The HTTP service's API keys, counters and metrics, on the pooled connections (`pool`): an API
        request's key lookup or counter does not wait behind this process's searches and saves."""
        return SqlServiceStore(self._pool)

    async def aclose(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            await asyncio.to_thread(listener.close)
        await asyncio.to_thread(self._pool.close)
        await super().aclose()

    @property
    def path(self) -> str:
        """Where the database is, for messages: the URL without user or password."""
        scheme, _, rest = self.url.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}"

    @property
    def data_version_seen(self) -> Hashable:
        """The commit stamp when the store's thread last read it; moves when another process commits."""
        return self._source.commit_stamp_seen

    def note_data_version(self, version: Hashable) -> None:
        self._source.commit_stamp_seen = version

    def _search(
        self, conn: PgConnection, scope: Scope, request: SearchRequest, select: Select | None, seen: list[Hashable]
    ) -> list[Candidate]:
        # One statement reads the stamp, and a user's rows whose partition is not loaded yet, before the cache
        # asks for them one by one (see `partitions`). The cache's table of loaded partitions is read directly:
        # a wrong guess costs only a read, never a result.
        key = (scope.tenant, scope.user or "")
        self._source.prefetch(conn, key, cold=key not in self._partitions._partitions)
        try:
            return super()._search(conn, scope, request, select, seen)
        finally:
            self._source.done()

    def _connect(self) -> PgConnection:
        if self.blas_threads is not None:
            threadpool_limits(limits=self.blas_threads, user_api="blas")
        return connect(self.url)

    def _connected(self) -> None:
        if self._worker.connection is None:  # not connected yet: let it migrate the schema first
            self._worker.submit(lambda conn: None).result()

    @staticmethod
    def _guarded(fn: Callable[..., T], args: tuple[Any, ...]) -> Callable[[PgConnection], T]:
        def job(conn: PgConnection) -> T:
            try:
                return fn(conn, *args)
            except psycopg.DataError as exc:  # a NUL in text, a number out of range
                raise ValidationError(f"a value PostgreSQL cannot store: {exc}") from exc
            except psycopg.Error as exc:
                raise StoreError(f"PostgreSQL error: {exc}") from exc

        return job
