"""A small connection pool beside the store's own connection, for the parts whose jobs touch no search
partition and keep no cache (the HTTP service's API keys, write counters and metrics; the learning agent's
sessions, queue and files): on PostgreSQL they need not queue on the store's one thread behind searches and
saves, and several run at once.

The parts take it as their `ConnectionJobs` (the protocol the store itself offers them). One promise of the
store's thread is kept: a job runs after every job queued before it without waiting (`_submit`) has finished,
so a caller reads what it queued (a flushed counter, a touched key)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Protocol, TypeVar

import psycopg
from psycopg_pool import ConnectionPool

from .dialect import PgConnection, register_vector

__all__ = ["PoolOwner", "PooledJobs"]

T = TypeVar("T")


class PoolOwner(Protocol):
    """What the pool needs of the store it serves (`PostgresStore`)."""

    url: str
    embedding_model: str
    dimension: int

    @property
    def path(self) -> str: ...

    def _guarded(self, fn: Callable[..., T], args: tuple[Any, ...]) -> Callable[[PgConnection], T]: ...

    def _connected(self) -> None:
        """Return once the store's own connection is open (the schema migrated, pgvector there)."""
        ...


class PooledJobs:
    """Jobs of `store`'s parts on up to `size` pooled connections of its database (opened at the first job,
    after the store's own connection has migrated the schema)."""

    def __init__(self, store: PoolOwner, size: int) -> None:
        self._store = store
        self._size = size
        self._lock = threading.Lock()
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="learnloop-postgres-pool")
        self._queued: set[Future[Any]] = set()
        self._closed = False

    @property
    def path(self) -> str:
        return self._store.path

    @property
    def embedding_model(self) -> str:
        return self._store.embedding_model

    @property
    def dimension(self) -> int:
        return self._store.dimension

    async def _run(self, fn: Callable[..., T], *args: Any, stale_ok: bool = False) -> T:
        with self._lock:
            before = list(self._queued)
        return await asyncio.wrap_future(self._executor.submit(self._call, fn, args, before))

    def _submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        with self._lock:
            if self._closed:
                raise RuntimeError("the store is closed")
            future = self._executor.submit(self._call, fn, args, [])
            self._queued.add(future)
        future.add_done_callback(self._done)
        return future

    def _done(self, future: Future[Any]) -> None:
        with self._lock:
            self._queued.discard(future)

    def _call(self, fn: Callable[..., T], args: tuple[Any, ...], before: list[Future[Any]]) -> T:
        wait(before)
        with self._open().connection() as raw:
            return self._store._guarded(fn, args)(PgConnection(raw))

    def _open(self) -> ConnectionPool[psycopg.Connection[Any]]:
        with self._lock:
            if self._closed:
                raise RuntimeError("the store is closed")
            if self._pool is not None:
                return self._pool
        self._store._connected()
        with self._lock:
            if self._pool is None:
                pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
                    self._store.url,
                    min_size=1,
                    max_size=self._size,
                    kwargs={"autocommit": True, "connect_timeout": 10, "application_name": "learnloop"},
                    configure=register_vector,
                    name="learnloop",
                    open=False,
                )
                pool.open(wait=True, timeout=30)
                self._pool = pool
            return self._pool

    def close(self) -> None:
        """Wait for the jobs queued, then close the connections (blocks: call it off the event loop)."""
        with self._lock:
            self._closed = True
        self._executor.shutdown(wait=True)
        if self._pool is not None:
            self._pool.close()
