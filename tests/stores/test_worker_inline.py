"""The connection worker runs a short `stale_ok` job on the caller's thread only when that cannot reorder it:
nothing submitted before is unfinished and the thread is not using the connection."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future

from learnloop.stores import worker as worker_module
from learnloop.stores.worker import ConnectionWorker


def _worker() -> ConnectionWorker[object]:
    return ConnectionWorker(lambda: object(), lambda conn, batch: [], name="test-worker")


async def test_an_idle_worker_runs_an_inline_job_on_the_calling_thread() -> None:
    worker = _worker()
    try:
        await worker.run(lambda conn: None)  # opens the connection
        here = threading.get_ident()
        assert await worker.run(lambda conn: threading.get_ident(), stale_ok=True, inline=lambda conn: True) == here
        # Not short (the test says no), not stale_ok, or no test: the worker's thread.
        assert await worker.run(lambda conn: threading.get_ident(), stale_ok=True, inline=lambda conn: False) != here
        assert await worker.run(lambda conn: threading.get_ident(), inline=lambda conn: True) != here
        assert await worker.run(lambda conn: threading.get_ident(), stale_ok=True) != here
    finally:
        await asyncio.to_thread(worker.close, lambda conn: None)


async def test_an_inline_job_waits_its_turn_behind_unfinished_jobs() -> None:
    worker = _worker()
    try:
        await worker.run(lambda conn: None)
        started, release, order = threading.Event(), threading.Event(), []

        def slow(conn: object) -> None:
            started.set()
            release.wait(5)
            order.append("slow")

        first = asyncio.ensure_future(worker.run(slow))
        await asyncio.to_thread(started.wait, 5)
        later = asyncio.ensure_future(
            worker.run(lambda conn: order.append("search"), stale_ok=True, inline=lambda conn: True)
        )
        await asyncio.sleep(0.05)
        assert order == []  # queued behind the unfinished job, not run here
        release.set()
        await asyncio.gather(first, later)
        assert order == ["slow", "search"]
    finally:
        await asyncio.to_thread(worker.close, lambda conn: None)


async def test_no_inline_job_runs_before_the_connection_opens_or_after_close() -> None:
    worker = _worker()
    here = threading.get_ident()
    assert await worker.run(lambda conn: threading.get_ident(), stale_ok=True, inline=lambda conn: True) != here
    await asyncio.to_thread(worker.close, lambda conn: None)
    try:
        await worker.run(lambda conn: None, stale_ok=True, inline=lambda conn: True)
    except RuntimeError:
        pass
    else:
        raise AssertionError("a closed worker ran a job")


async def test_bookkeeping_waits_for_a_pause_in_inline_searches_within_bounds() -> None:
    """While searches run inline the gathered bookkeeping waits (a flush would hand the next searches to the
    thread), up to `_MAX_DEFERRED` items or `_MAX_DEFER_SECONDS` after the first; without searches, a pause
    flushes it. Decided on the recorded instants, not on a clock."""
    worker = _worker()
    try:
        await worker.run(lambda conn: None)
        assert not worker._searching()  # no inline search yet
        await worker.run(lambda conn: None, stale_ok=True, inline=lambda conn: True)
        gate = threading.Event()
        held = worker.submit(lambda conn: gate.wait(), stale_ok=True)  # the thread busy: it flushes nothing meanwhile
        with worker._lock:
            worker._deferred.append((object(), Future()))
            worker._deferred_since = time.monotonic()
            worker._inline_at = time.monotonic() + 60  # a search "just now" for as long as the test runs
        assert worker._searching()
        with worker._lock:
            worker._deferred_since = time.monotonic() - worker_module._MAX_DEFER_SECONDS
        assert not worker._searching(), "the oldest item waited long enough"
        with worker._lock:
            worker._deferred_since = time.monotonic()
            worker._deferred.extend((object(), Future()) for _ in range(worker_module._MAX_DEFERRED))
        assert not worker._searching(), "enough items gathered"
        with worker._lock:
            del worker._deferred[1:]
            worker._inline_at = 0.0
        assert not worker._searching(), "no search lately: a pause"
        with worker._lock:
            worker._deferred.clear()
        gate.set()
        await asyncio.wrap_future(held)
    finally:
        await asyncio.to_thread(worker.close, lambda conn: None)


async def test_follow_ups_a_flush_hands_back_wait_for_a_pause_or_a_job_that_could_observe_them() -> None:
    """A flush's follow-ups (a retrieval's promotions) are not committed by a flush that only relieves the
    gathered counters; they are at a pause in the searches, `_MAX_DEFERRED` at a time after `_MAX_LATER_SECONDS`
    under steady searches, and all before a caller's job. Decided on the recorded instants, not on a clock."""
    flushed: list[list[str]] = []

    def flush(conn: object, batch: list[tuple[object, Future[object]]]) -> list[tuple[object, Future[object]]]:
        flushed.append([str(item) for item, _ in batch])
        for item, future in batch:
            if item == "follow-up":
                future.set_result(None)
        return [("follow-up", future) for item, future in batch if item == "counters"]

    worker: ConnectionWorker[object] = ConnectionWorker(lambda: object(), flush, name="test-worker")
    try:
        await worker.run(lambda conn: None)
        gate = threading.Event()
        held = worker.submit(lambda conn: gate.wait(), stale_ok=True)  # the thread busy: the test flushes
        counted: list[Future[object]] = [Future() for _ in range(worker_module._MAX_DEFERRED + 1)]
        with worker._lock:
            worker._deferred += [("counters", future) for future in counted]
            worker._inline_at = time.monotonic() + 60  # a search "just now" for as long as the test runs
        worker._flush(later=worker._later_due())
        assert len(flushed) == 1 and not any(f.done() for f in counted)  # the promotions wait
        assert worker._searching() and worker._later_due() == 0
        worker._later_since = time.monotonic() - worker_module._MAX_LATER_SECONDS
        assert not worker._searching(), "the follow-ups waited long enough"
        worker._flush(later=worker._later_due())
        assert len(flushed[1]) == worker_module._MAX_DEFERRED and len(worker._later) == 1  # the oldest, a batch
        worker._later_since = time.monotonic()
        gate.set()
        await asyncio.wrap_future(held)
        await worker.run(lambda conn: None)  # a caller's job: it could read the promotions
        assert flushed[2:] == [["follow-up"]] and all(f.done() for f in counted) and worker._later == []
    finally:
        await asyncio.to_thread(worker.close, lambda conn: None)
