"""The one thread that owns a database connection, and the deferred bookkeeping it coalesces.

Every store call is a job run on this thread in submission order, so the connection and the in-memory
partitions need no locks and the event loop never blocks on disk. Bookkeeping writes nobody waits for (the
hits and streaks a retrieval records) are deferred: they collect and commit together, in one transaction,
before the next job that could observe them, when the thread has been idle for a moment, or when enough
have gathered. Jobs marked `stale_ok` (searches, whose ranking may be a few milliseconds behind on hit
counts) run ahead of them, so back-to-back retrievals do not each wait for the previous one's write. What a
flush hands back (a retrieval's promotions, decided on the counts it committed) waits longer: for a pause in
the searches, or a job that could observe it, so that a busy stretch of retrievals commits counters only.
Housekeeping that no caller waits for (indexing new vectors, pruning the change log) runs in small steps
once the thread is idle.

Nothing here is about SQL: the connection is whatever the backend's `connect` returns (SQLite: a
`Conn`), and every job, flush and idle step receives it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

__all__ = ["ConnectionWorker"]

log = logging.getLogger("learnloop.store")

T = TypeVar("T")
Conn = TypeVar("Conn")

_IDLE_FLUSH_SECONDS = 0.02
_MAX_DEFERRED = 64
# While searches keep running inline, the connection is not idle even though the thread's queue is: deferred
# bookkeeping then waits for a pause, for `_MAX_DEFERRED` items, or this long after the first of them. A flush
# holds the connection for several milliseconds (its commit most of it), and every search arriving meanwhile was
# handed to the thread and waited behind it: one flush per 64 retrievals instead of one per 20 ms.
_MAX_DEFER_SECONDS = 0.25
# Follow-ups a flush handed back wait for a pause in the searches; under steady searches, those waiting longer than
# this commit `_MAX_DEFERRED` at a time, so that a backlog never holds the connection long.
_MAX_LATER_SECONDS = 2.0


@dataclass
class _Job(Generic[Conn]):
    fn: Callable[[Conn], Any]
    future: Future[Any]
    stale_ok: bool
    # The closing job: without a connection (it never opened: the database was unreachable) there is nothing
    # to close, and opening one only to close it would fail again.
    final: bool = False
    counted: bool = True  # a caller's job (not a wake-up): inline runs wait until every counted job is done


Deferred = list[tuple[Any, Future[Any]]]


class ConnectionWorker(Generic[Conn]):
    """`flush` commits the gathered bookkeeping items and returns follow-up items (with the futures they settle)
    to flush later, at a pause (see the module's docstring); `idle` is one step of housekeeping, True while more
    remains."""

    def __init__(
        self,
        connect: Callable[[], Conn],
        flush: Callable[[Conn, Deferred], Deferred],
        name: str,
        idle: Callable[[Conn], bool] | None = None,
    ) -> None:
        self._connect = connect
        self._flush_batch = flush
        self._idle = idle
        self._jobs: queue.SimpleQueue[_Job[Conn] | None] = queue.SimpleQueue()
        self._deferred: Deferred = []
        self._later: Deferred = []  # follow-ups flushes handed back (this thread's only)
        self._later_since = 0.0
        self._lock = threading.Lock()
        # Held while the connection is in use (a job, a flush, an idle step), on this thread or inline.
        self._busy = threading.Lock()
        self._pending = 0  # counted jobs submitted and not finished
        self._inline_at = 0.0  # when a job last ran inline (monotonic)
        self._deferred_since = 0.0  # when the oldest unflushed bookkeeping item was deferred
        self._closed = False
        self.connection: Conn | None = None
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    # -- submitting ----------------------------------------------------------------------------------

    def submit(self, fn: Callable[[Conn], T], *, stale_ok: bool = False) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the store is closed")
            self._pending += 1
            self._jobs.put(_Job(fn, future, stale_ok))
        return future

    async def run(
        self, fn: Callable[[Conn], T], *, stale_ok: bool = False, inline: Callable[[Conn], bool] | None = None
    ) -> T:
        """`fn`'s result, run on this worker's thread; or, for a `stale_ok` job with an `inline` test, on the
        calling thread when every job submitted before has finished, the thread is not using the connection and
        `inline(connection)` says the job is short (see `_run_inline`)."""
        if inline is not None and stale_ok:
            ran, value = self._run_inline(fn, inline)
            if ran:
                return cast(T, value)
        return await asyncio.wrap_future(self.submit(fn, stale_ok=stale_ok))

    def _run_inline(self, fn: Callable[[Conn], T], inline: Callable[[Conn], bool]) -> tuple[bool, T | None]:
        """Run `fn` on the calling thread if that cannot change what it sees or the order jobs take effect in:
        nothing submitted is unfinished and the connection is free (the caller then holds it). A search on a
        loaded, current partition takes a millisecond or two; handing it to the thread and back cost as much
        again on an idle machine, and several times that on a loaded one, where each hand-off waits for a core.
        Deferred bookkeeping is not flushed first, as for any `stale_ok` job."""
        if not self._busy.acquire(blocking=False):
            return False, None
        try:
            with self._lock:
                if self._closed or self._pending or self.connection is None:
                    return False, None
            connection = self.connection
            if not inline(connection):
                return False, None
            try:
                value = fn(connection)
            finally:
                self._inline_at = time.monotonic()
        finally:
            self._busy.release()
        # No wake-up for the thread's idle steps: a job that may run here read and replayed nothing, so it left
        # nothing to index or save.
        return True, value

    def defer(self, item: object) -> Future[Any]:
        """Queue a bookkeeping write (`item`, handed to the flush function with the others gathered); it
        commits before anything that could observe it."""
        future: Future[Any] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the store is closed")
            self._deferred.append((item, future))
            count = len(self._deferred)
            if count == 1:
                self._deferred_since = time.monotonic()
            if count == 1 or count >= _MAX_DEFERRED:
                # Wake the thread: to start its idle timer, or (when too many gathered) to flush now.
                self._jobs.put(_Job(lambda conn: None, Future(), stale_ok=count < _MAX_DEFERRED, counted=False))
        return future

    @property
    def closing(self) -> bool:
        return self._closed

    def close(self, final: Callable[[Conn], None]) -> None:
        """Refuse new work, run `final` after everything queued (deferred writes included), stop the thread.
        Blocks until done: call it off the event loop."""
        done: Future[None] = Future()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._jobs.put(_Job(final, done, stale_ok=False, final=True))
            self._jobs.put(None)
        done.result()
        self._thread.join()

    # -- the thread ----------------------------------------------------------------------------------

    def _serve(self) -> None:
        idle_work = False  # after any job, until the idle step reports nothing left
        while True:
            try:
                waiting = self._deferred or self._later or idle_work
                job = self._jobs.get(timeout=_IDLE_FLUSH_SECONDS) if waiting else self._jobs.get()
            except queue.Empty:
                if self._searching():
                    continue
                with self._busy:
                    self._flush(later=self._later_due())  # idle: commit what has gathered
                    idle_work = self._idle_step()
                continue
            if job is None:
                with self._busy:
                    self._flush()
                return
            settle: Callable[[], None] | None = None
            with self._busy:
                try:
                    settle = self._serve_one(job)
                finally:
                    if job.counted:
                        with self._lock:
                            self._pending -= 1
            # The caller hears of its result only once the connection is free and the job no longer counts: its
            # next search may then run inline at once, instead of racing this thread's bookkeeping.
            if settle is not None:
                settle()
            idle_work = self._idle is not None

    def _searching(self) -> bool:
        """Whether searches are running inline (the last one within the idle pause) and the gathered bookkeeping
        may wait for a pause a little longer (see `_MAX_DEFER_SECONDS`)."""
        now = time.monotonic()
        with self._lock:
            if self._closed or len(self._deferred) >= _MAX_DEFERRED:
                return False
            if self._deferred and now - self._deferred_since >= _MAX_DEFER_SECONDS:
                return False
        if self._later and now - self._later_since >= _MAX_LATER_SECONDS:
            return False
        return now - self._inline_at < _IDLE_FLUSH_SECONDS

    def _later_due(self) -> int | None:
        """How many follow-ups to commit now: all (None) at a pause in the searches, a batch when they have waited
        `_MAX_LATER_SECONDS` under steady searches, else none."""
        now = time.monotonic()
        if now - self._inline_at >= _IDLE_FLUSH_SECONDS:
            return None
        return _MAX_DEFERRED if self._later and now - self._later_since >= _MAX_LATER_SECONDS else 0

    def _serve_one(self, job: _Job[Conn]) -> Callable[[], None] | None:
        """Run the job; return what hands its outcome to the caller."""
        if not job.stale_ok:
            # A caller's job may observe the follow-ups too; a wake-up (too many gathered) flushes the counters only.
            self._flush(later=None if job.counted else 0)
        if not job.future.set_running_or_notify_cancel():
            return None
        if job.final and self.connection is None:
            return functools.partial(job.future.set_result, None)
        try:
            value = job.fn(self._connection())
        except BaseException as exc:  # handed to the caller, never lost in this thread
            return functools.partial(job.future.set_exception, exc)
        return functools.partial(job.future.set_result, value)

    def _idle_step(self) -> bool:
        if self._idle is None:
            return False
        try:
            return self._idle(self._connection())
        except Exception:
            log.exception("idle housekeeping failed")
            return False

    def _connection(self) -> Conn:
        if self.connection is None:
            self.connection = self._connect()
        return self.connection

    def _flush(self, later: int | None = None) -> None:
        """Commit the gathered bookkeeping, then the oldest `later` follow-ups waiting for a pause (None: all)."""
        with self._lock:
            batch, self._deferred = self._deferred, []
        if batch:
            handed_back = self._flush_safely(batch)
            if handed_back and not self._later:
                self._later_since = time.monotonic()
            self._later += handed_back
        if later is None or later > 0:
            cut = len(self._later) if later is None else later
            batch, self._later = self._later[:cut], self._later[cut:]
            if batch:
                self._later += self._flush_safely(batch)

    def _flush_safely(self, batch: Deferred) -> Deferred:
        try:
            return self._flush_batch(self._connection(), batch)
        except BaseException as exc:
            log.exception("deferred writes failed")
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return []
