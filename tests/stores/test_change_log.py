"""The change log the search partitions follow stays bounded: rows older than the retention are pruned, and a
process that had not replayed the pruned rows (or a saved ANN index that old) loads again instead of missing
a change."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from learnloop.errors import StoreError
from learnloop.models import EventAction, Filters, Scope, Status
from learnloop.stores.base import Delete, EventDraft, Insert, SearchRequest, Store, Update
from learnloop.stores.postgres.dialect import POSTGRES
from learnloop.stores.search.ann import Ann
from learnloop.stores.sql import changelog
from learnloop.stores.sql.store import SqlStore
from learnloop.stores.sqlite import SQLiteStore
from learnloop.stores.sqlite.dialect import SQLITE
from tests.conftest import TEST_DIM, make_store, unit_vector
from tests.stores.test_contract import ALICE, BOB, created, insert, record
from tests.support.clock import Clock

HOUR = timedelta(hours=1)


def open_store(path: Path, clock: Clock, **options: object) -> SQLiteStore:
    return SQLiteStore(path, embedding_model="test:model", dimension=TEST_DIM, clock=clock, **options)  # type: ignore[arg-type]


def read(path: Path, sql: str) -> list[tuple[int, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def logged(path: Path) -> list[int]:
    return [seq for (seq,) in read(path, "SELECT seq FROM vector_changes ORDER BY seq")]


def pruned_through(path: Path) -> int:
    return read(path, "SELECT value FROM store_meta WHERE key = 'changes_pruned_through'")[0][0]


async def stored(store: Store, sql: str) -> list[tuple[int, ...]]:
    """`sql` read through the store's own connection (either backend)."""
    assert isinstance(store, SqlStore)
    return await store._run(lambda conn: [tuple(row) for row in conn.execute(sql).fetchall()])


async def logged_in(store: Store) -> list[int]:
    return [seq for (seq,) in await stored(store, "SELECT seq FROM vector_changes ORDER BY seq")]


async def pruned_through_in(store: Store) -> int:
    return (await stored(store, "SELECT value FROM store_meta WHERE key = 'changes_pruned_through'"))[0][0]


async def prune(store: Store, clock: Clock) -> None:
    """A prune pass as the idle housekeeping runs it, due or not (the store's own passes may have run too)."""
    assert isinstance(store, SqlStore)
    while True:
        try:
            await store._run(changelog.prune_changes, clock().timestamp(), HOUR.total_seconds())
            return
        except StoreError as exc:  # another store's idle pass held the writer lock for a moment
            if exc.__cause__ is None or not (SQLITE.busy(exc.__cause__) or POSTGRES.busy(exc.__cause__)):
                raise
            await asyncio.sleep(0.01)


def request(vector: np.ndarray, k: int = 20) -> SearchRequest:
    return SearchRequest(vector=vector, terms=[], filters=Filters(), vector_k=k, text_k=0)


async def test_pruning_removes_only_rows_older_than_the_retention(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "s.db"
    store = open_store(path, clock)
    try:
        for i in range(3):
            await insert(store, ALICE, f"old {i}", seed=i)
        old = logged(path)
        await prune(store, clock)  # marks them as existing now
        assert logged(path) == old and pruned_through(path) == 0
        clock.advance(minutes=30)
        await insert(store, ALICE, "recent", seed=10)
        await prune(store, clock)
        assert logged(path) == [*old, old[-1] + 1] and pruned_through(path) == 0  # nothing an hour old yet
        clock.advance(minutes=31)
        await prune(store, clock)
        assert logged(path) == [old[-1] + 1]
        assert pruned_through(path) == old[-1]
        assert len(read(path, "SELECT * FROM vector_change_marks")) <= 2  # superseded marks go too
    finally:
        await store.aclose()


async def test_the_idle_pass_runs_at_most_once_every_few_minutes(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "s.db"
    store = open_store(path, clock, change_log_retention=timedelta(0))
    try:
        await insert(store, ALICE, "first", seed=1)
        await store._run(store._partitions.housekeeping)  # due: the first pass of this process
        assert logged(path) == []
        await insert(store, ALICE, "second", seed=2)
        clock.advance(seconds=changelog.PRUNE_EVERY - 1)
        await store._run(store._partitions.housekeeping)
        assert len(logged(path)) == 1  # not due yet
        clock.advance(seconds=1)
        await store._run(store._partitions.housekeeping)
        assert logged(path) == []
    finally:
        await store.aclose()


async def test_the_idle_pass_does_not_wait_for_another_writer(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "s.db"
    store = open_store(path, clock)
    try:
        await insert(store, ALICE, "note", seed=1)
        await prune(store, clock)
        clock.advance(hours=2)
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process is writing
        started = time.monotonic()
        assert await store._run(store._partitions.housekeeping) is False
        assert time.monotonic() - started < 5  # not the 30 s busy timeout
        assert len(logged(path)) == 1
        other.execute("COMMIT")
        other.close()
        await store._run(store._partitions.housekeeping)  # tried again on the next idle step, not in minutes
        assert logged(path) == []
    finally:
        await store.aclose()


async def test_a_process_behind_the_pruned_log_reloads_its_partition(backend: str, tmp_path: Path) -> None:
    clock = Clock()
    writer, reader = make_store(backend, tmp_path, clock=clock), make_store(backend, tmp_path, clock=clock)
    assert isinstance(reader, SqlStore)
    try:
        ids = [await insert(writer, ALICE, f"note {i}", seed=i) for i in range(6)]
        await insert(writer, BOB, "bob's note", seed=0)
        assert {c.id for c in await reader.search(ALICE, request(unit_vector(0)))} == set(ids)
        loaded = reader._partitions._partitions[("t1", "alice")]

        # The reader sleeps; the writer inserts, moves a vector, deprecates, deletes, and prunes the log.
        fresh = await insert(writer, ALICE, "fresh", seed=100)
        await writer.apply(ALICE, [Update(ids[0], {}, None, vector=unit_vector(101), embedding_model="test:model")])
        await writer.apply(ALICE, [Update(ids[1], {"status": Status.DEPRECATED}, None)])
        await writer.apply(ALICE, [Delete(ids[2], EventDraft("person", EventAction.DELETED))])
        await prune(writer, clock)
        clock.advance(hours=1, minutes=1)
        await prune(writer, clock)
        assert await logged_in(writer) == [] and await pruned_through_in(writer) > loaded.watermark

        live = {fresh, ids[0], ids[3], ids[4], ids[5]}
        assert {c.id for c in await reader.search(ALICE, request(unit_vector(0)))} == live
        assert reader._partitions._partitions[("t1", "alice")] is not loaded
        moved = await reader.search(ALICE, request(unit_vector(101), k=1))
        assert [c.id for c in moved] == [ids[0]] and moved[0].vector_similarity == pytest.approx(1.0, abs=1e-3)
        assert [c.id for c in await reader.search(ALICE, request(unit_vector(100), k=1))] == [fresh]

        # Caught up again, it follows the (now short) log as before, without another reload.
        reloaded = reader._partitions._partitions[("t1", "alice")]
        later = await insert(writer, ALICE, "later", seed=102)
        assert [c.id for c in await reader.search(ALICE, request(unit_vector(102), k=1))] == [later]
        assert reader._partitions._partitions[("t1", "alice")] is reloaded
    finally:
        await reader.aclose()
        await writer.aclose()


async def test_an_idle_partition_is_not_reloaded_when_only_others_changed(backend: str, tmp_path: Path) -> None:
    clock = Clock()
    writer, reader = make_store(backend, tmp_path, clock=clock), make_store(backend, tmp_path, clock=clock)
    assert isinstance(reader, SqlStore)
    try:
        alice = await insert(writer, ALICE, "alice's note", seed=1)
        assert [c.id for c in await reader.search(ALICE, request(unit_vector(1), k=1))] == [alice]
        loaded = reader._partitions._partitions[("t1", "alice")]
        for i in range(3):
            await insert(writer, BOB, f"bob {i}", seed=10 + i)
        await reader.search(ALICE, request(unit_vector(1), k=1))  # replays the log: nothing of alice's
        await prune(writer, clock)
        clock.advance(hours=2)
        await prune(writer, clock)
        assert await pruned_through_in(writer) > 0
        assert [c.id for c in await reader.search(ALICE, request(unit_vector(1), k=1))] == [alice]
        assert reader._partitions._partitions[("t1", "alice")] is loaded
    finally:
        await reader.aclose()
        await writer.aclose()


async def test_a_saved_index_older_than_the_pruned_log_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock, path = Clock(), tmp_path / "s.db"
    scope = Scope(tenant="t1", user="alice")
    builds: list[int] = []
    build = Ann.build.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Ann], dim: int, ids: np.ndarray, vectors: np.ndarray, *rest: object) -> Ann:
        builds.append(len(ids))
        return build(cls, dim, ids, vectors, *rest)  # type: ignore[no-any-return]

    monkeypatch.setattr(Ann, "build", classmethod(counted))
    store = open_store(path, clock, ann_threshold=50)
    try:
        result = await store.apply(scope, [Insert(record(scope, f"item {i}", seed=i), created()) for i in range(60)])
        ids = [learning.id for learning in result.learnings if learning is not None]
        await store.search(scope, request(unit_vector(0), k=1))  # builds the index
    finally:
        await store.aclose()  # and saves it, with the log's seq it reflects
    assert builds == [60] and list((tmp_path / "s.db.ann").glob("*.hnsw"))

    # Trusted while the log covers what happened since it was saved.
    reopened = open_store(path, clock, ann_threshold=50)
    try:
        assert [c.id for c in await reopened.search(scope, request(unit_vector(5), k=1))] == [ids[5]]
    finally:
        await reopened.aclose()
    assert builds == [60]

    # Another process moves a vector (the count stays the same) and prunes the log past the saved index.
    writer = open_store(path, clock)
    try:
        await writer.apply(scope, [Update(ids[7], {}, None, vector=unit_vector(500), embedding_model="test:model")])
        await prune(writer, clock)
        clock.advance(hours=2)
        await prune(writer, clock)
    finally:
        await writer.aclose()
    assert logged(path) == []

    reopened = open_store(path, clock, ann_threshold=50)
    try:
        found = await reopened.search(scope, request(unit_vector(500), k=1))
        assert [c.id for c in found] == [ids[7]] and found[0].vector_similarity == pytest.approx(1.0, abs=1e-3)
    finally:
        await reopened.aclose()
    assert builds == [60, 60]


async def test_the_log_stays_bounded_under_steady_writes(backend: str, tmp_path: Path) -> None:
    clock = Clock()
    store = make_store(backend, tmp_path, clock=clock)
    assert isinstance(store, SqlStore)
    try:
        learning_id = await insert(store, ALICE, "counter", seed=1)
        for minute in range(180):
            await store.apply(ALICE, [Update(learning_id, {"confidence": 0.5 + minute / 1000}, None)])
            await insert(store, BOB, f"note {minute}", seed=minute)
            clock.advance(minutes=1)
            await store._run(store._partitions.housekeeping)
        # Two rows a minute, kept for the retention and at most about two pass intervals more.
        every = changelog.PRUNE_EVERY / 60
        kept = len(await logged_in(store))
        assert 2 * 59 <= kept <= 2 * (60 + 2 * every + 1)
        assert len(await stored(store, "SELECT * FROM vector_change_marks")) <= (60 + 2 * every) / every + 1
        assert [c.id for c in await store.search(ALICE, request(unit_vector(1), k=1))] == [learning_id]
    finally:
        await store.aclose()


async def test_forgetting_a_user_after_a_prune(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "s.db"
    first, second = open_store(path, clock), open_store(path, clock)
    try:
        alice = await insert(first, ALICE, "alice's note", seed=1)
        bob = await insert(first, BOB, "bob's note", seed=2)
        for scope, expected in ((ALICE, alice), (BOB, bob)):
            assert [c.id for c in await second.search(scope, request(unit_vector(1), k=1))] == [expected]
        await prune(first, clock)
        clock.advance(hours=2)
        await prune(first, clock)
        newer = await insert(first, ALICE, "alice again", seed=3)
        removed = await first.forget_user("t1", "alice")
        assert removed["vector_changes"] == 1 and removed["learnings"] == 2
        assert await second.search(ALICE, request(unit_vector(3))) == []
        assert [c.id for c in await second.search(BOB, request(unit_vector(2)))] == [bob]
        assert read(path, "SELECT learning_id FROM vector_changes WHERE user_id = 'alice'") == []
        assert await second.get(ALICE, newer) is None
    finally:
        await second.aclose()
        await first.aclose()


async def test_rows_from_before_the_upgrade_are_prunable(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "s.db"
    store = open_store(path, clock)
    try:
        for i in range(3):
            await insert(store, ALICE, f"note {i}", seed=i)
    finally:
        await store.aclose()
    conn = sqlite3.connect(path)  # back to the schema before retention: no marks, no pruned seq
    with conn:
        conn.execute("DROP TABLE vector_change_marks")
        conn.execute("DELETE FROM store_meta WHERE key = 'changes_pruned_through'")
        conn.execute("DELETE FROM schema_migrations WHERE version = 7")
    conn.close()
    old = logged(path)
    upgraded = open_store(path, clock)
    try:
        await prune(upgraded, clock)
        assert logged(path) == [] and pruned_through(path) == old[-1]
        assert len(await upgraded.search(ALICE, request(unit_vector(0)))) == 3
    finally:
        await upgraded.aclose()
