"""The connection worker runs a short `stale_ok` job on the caller's thread only when that cannot reorder it:
nothing submitted before is unfinished and the thread is not using the connection."""

from __future__ import annotations

import asyncio
import threading

from learnloop.stores.worker import ConnectionWorker


def _worker() -> ConnectionWorker[object]:
    return ConnectionWorker(lambda: object(), lambda conn, batch: None, name="test-worker")


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
