"""The event log's cursor contract (`stores.base.EventLog`), with two writers on one database: a reader that
resumes from the last cursor it saw never skips an event, even one whose writer took its id first and committed
after another writer's later id."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

from learnloop.models import Event, EventAction, Learning, Scope
from learnloop.stores.base import AppendEvent, EventDraft, Operation, Store
from tests.conftest import make_store

TENANT = Scope(tenant="t1")


def _event(writer: str, n: int) -> AppendEvent:
    return AppendEvent(EventDraft(actor=writer, action=EventAction.RETRIEVED, data={"n": n}))


class Reader:
    """Follows the log like the SSE stream does: `events(after=cursor)`, then the last id seen as the cursor."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.cursor = 0
        self.seen: list[Event] = []

    async def poll(self) -> list[Event]:
        batch = await self.store.events(TENANT, after=self.cursor, limit=1000)
        assert [e.seq for e in batch] == sorted(e.seq for e in batch)
        assert all(e.seq > self.cursor for e in batch)
        if batch:
            self.cursor = batch[-1].seq
            self.seen += batch
        return batch


async def _all_events(store: Store) -> list[Event]:
    return await store.events(TENANT, after=0, limit=100_000)


async def test_an_event_committed_after_a_later_id_is_not_skipped(backend: str, tmp_path: Path) -> None:
    first, second, reading = (make_store(backend, tmp_path) for _ in range(3))
    for store in (first, second, reading):
        await store.start()
    reader = Reader(reading)
    inside, release = threading.Event(), threading.Event()

    def hold(_: list[Learning]) -> Sequence[Operation]:
        # Runs inside the first writer's transaction, after its event took its place in the log.
        inside.set()
        release.wait(10)
        return []

    try:
        held = first.submit(TENANT, [_event("first", 0)], then=hold)
        assert await asyncio.to_thread(inside.wait, 10)
        racing = asyncio.ensure_future(second.apply(TENANT, [_event("second", 0)]))
        await asyncio.sleep(0.2)  # the second writer is now waiting for, or past, the first one
        await reader.poll()
        release.set()
        await asyncio.wrap_future(held)
        await racing
        await reader.poll()
        assert sorted(e.actor for e in reader.seen) == ["first", "second"]
        assert [e.seq for e in reader.seen] == [e.seq for e in await _all_events(reading)]
    finally:
        release.set()
        for store in (first, second, reading):
            await store.aclose()


async def test_a_reader_following_two_busy_writers_sees_every_event_once(backend: str, tmp_path: Path) -> None:
    writers = [make_store(backend, tmp_path) for _ in range(2)]
    reading = make_store(backend, tmp_path)
    for store in (*writers, reading):
        await store.start()
    reader = Reader(reading)
    done = asyncio.Event()

    async def write(store: Store, name: str) -> None:
        for n in range(60):
            await store.apply(TENANT, [_event(name, n), _event(name, n + 1000)])

    async def follow() -> None:
        while not done.is_set():
            await reader.poll()
            await asyncio.sleep(0)

    try:
        following = asyncio.ensure_future(follow())
        await asyncio.gather(*(write(store, f"w{i}") for i, store in enumerate(writers)))
        done.set()
        await following
        while await reader.poll():
            pass
        everything = await _all_events(reading)
        assert len(everything) == 240
        assert [e.seq for e in reader.seen] == [e.seq for e in everything]
    finally:
        for store in (*writers, reading):
            await store.aclose()
