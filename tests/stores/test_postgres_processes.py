"""Several processes on one PostgreSQL database: counters and hit counts stay exact under concurrent increments
from separate processes; writes that append to no ordered log (counters, key bookkeeping, queue claims) do not
wait for the writer lock the event log's writers take; a commit in one process rings another's listener
(LISTEN/NOTIFY)."""

from __future__ import annotations

import asyncio
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from learnloop.models import Scope, utcnow
from learnloop.stores.postgres import PostgresStore
from learnloop.stores.postgres.dialect import WRITER_LOCK
from tests.conftest import TEST_DIM, database_target, make_store
from tests.stores.test_contract import insert

pytestmark = pytest.mark.postgres

ALICE = Scope(tenant="t1", user="alice")
PROCESSES = 4
ROUNDS = 60

# One process of the increment test: ROUNDS counter increments (queued service bookkeeping), ROUNDS hits
# recorded as a retrieval does (deferred bookkeeping) and ROUNDS in a write of their own, all on one learning.
_INCREMENTER = """
import asyncio, sys
from learnloop.models import Scope, utcnow
from learnloop.stores.base import Touch
from learnloop.stores.postgres import PostgresStore

async def main(url: str, dimension: int, learning_id: int, rounds: int) -> None:
    store = PostgresStore(url, embedding_model="test:model", dimension=dimension)
    scope = Scope(tenant="t1", user="alice")
    await store.start()
    pending = []
    for _ in range(rounds):
        store.service.add_count("t1", "increments", utcnow())
        pending.append(store.submit(scope, [Touch((learning_id,), utcnow())]))
        await store.apply(scope, [Touch((learning_id,), utcnow())])
    await store.service.flush()
    for future in pending:
        future.result()
    await store.aclose()

asyncio.run(main(sys.argv[1], *map(int, sys.argv[2:])))
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}


def _increment_from_processes(url: str, learning_id: int) -> list[int]:
    """The exit codes of PROCESSES incrementing processes started together."""
    args = [sys.executable, "-c", _INCREMENTER, url, str(TEST_DIM), str(learning_id), str(ROUNDS)]
    workers = [subprocess.Popen(args, env=_env()) for _ in range(PROCESSES)]
    return [worker.wait(timeout=120) for worker in workers]


async def test_increments_from_several_processes_are_all_counted(tmp_path: Path) -> None:
    store = make_store("postgres", tmp_path)
    try:
        learning_id = await insert(store, ALICE, "the mill gap is 0.9 mm")
        url = database_target("postgres", tmp_path)
        assert await asyncio.to_thread(_increment_from_processes, url, learning_id) == [0] * PROCESSES
        learning = await store.get(ALICE, learning_id)
        assert learning is not None
        assert (learning.hits, learning.streak) == (2 * PROCESSES * ROUNDS, 2 * PROCESSES * ROUNDS)
        with psycopg.connect(url) as conn:
            total = conn.execute(
                "SELECT SUM(value) FROM write_counters WHERE tenant = 't1' AND name = 'increments'"
            ).fetchone()
        assert total == (PROCESSES * ROUNDS,)
    finally:
        await store.aclose()


async def test_counters_and_claims_do_not_wait_for_the_event_writers_lock(tmp_path: Path) -> None:
    store = make_store("postgres", tmp_path)
    assert isinstance(store, PostgresStore)
    try:
        await store.agent.enqueue(ALICE, "s1", "p1", None, "{}", "proj", utcnow())
        with psycopg.connect(store.url) as holder:
            # Another connection's write to the event log, still open.
            holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITER_LOCK,))
            store.service.add_count("t1", "while-held", utcnow())
            await asyncio.wait_for(store.service.flush(), 60)
            claim = await asyncio.wait_for(store.agent.claim("t1", "s1", "worker-1", utcnow(), 30.0), 60)
            assert claim.job is not None and claim.job.package_id == "p1"
            # A write that appends an event does wait for it: seen waiting on the lock, it commits once the
            # holder ends.
            blocked = asyncio.ensure_future(insert(store, ALICE, "mash at 66 C"))
            with psycopg.connect(store.url, autocommit=True) as watcher:
                while not watcher.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE application_name = 'learnloop' "
                    "AND wait_event_type = 'Lock' AND wait_event = 'advisory'"
                ).fetchone():
                    assert not blocked.done()
                    await asyncio.sleep(0.01)
            holder.rollback()
        assert await asyncio.wait_for(blocked, 60) > 0
    finally:
        await store.aclose()


async def test_a_commit_in_one_process_rings_the_listener_of_another(tmp_path: Path) -> None:
    listening = make_store("postgres", tmp_path)
    writing = make_store("postgres", tmp_path)
    assert isinstance(listening, PostgresStore)
    rings: queue.SimpleQueue[tuple[str | None, str | None]] = queue.SimpleQueue()
    try:
        listener = listening.watch_events(lambda tenant, user: rings.put((tenant, user)))
        assert listener.wait_listening(30)
        assert rings.get(timeout=30) == (None, None)  # after connecting: everything may have changed
        await insert(writing, ALICE, "the mill gap is 0.9 mm")
        assert rings.get(timeout=30) == ("t1", "alice")
        await insert(writing, Scope(tenant="t2"), "tenant-wide")
        assert rings.get(timeout=30) == ("t2", None)
    finally:
        await listening.aclose()
        await writing.aclose()


async def test_service_jobs_do_not_queue_behind_the_store_thread(tmp_path: Path) -> None:
    store = make_store("postgres", tmp_path)
    assert isinstance(store, PostgresStore)
    busy, release = threading.Event(), threading.Event()

    def hold(conn: object) -> None:  # a long search or save on the store's own thread
        busy.set()
        release.wait(60)

    try:
        await store.start()
        held = store._worker.submit(hold)
        assert busy.wait(30)
        # Keys and counters run on the pooled connections meanwhile.
        store.service.add_count("t1", "beside", utcnow())
        await asyncio.wait_for(store.service.flush(), 60)
        assert await asyncio.wait_for(store.service.get_key("no-such-key"), 60) is None
        assert not held.done(), held.exception()
        release.set()
        await asyncio.wrap_future(held)
        with psycopg.connect(store.url) as conn:
            row = conn.execute("SELECT SUM(value) FROM write_counters WHERE name = 'beside'").fetchone()
        assert row == (1,)
    finally:
        release.set()
        await store.aclose()
