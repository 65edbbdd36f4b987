"""What a retrieval records per learning (hits, streak, last retrieval) lives in `learning_counters`, a narrow
table beside the learnings rows: readers see it joined (`learning_rows`), writes of every kind keep it in step,
and it goes with its learning. An older SQLite file's counters move there when it opens."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from learnloop.models import Learning, Status, utcnow
from learnloop.stores.base import Delete, EventDraft, Insert, Store, Touch, Update
from learnloop.stores.parts import parts_of
from learnloop.stores.sqlite import connection as sqlite_connection
from learnloop.stores.sqlite.connection import connect
from tests.conftest import make_store
from tests.stores.test_contract import ALICE, BOB, created, insert, record
from tests.stores.test_stored_terms import sql

COUNTERS = "SELECT learning_id, tenant, user_id, hits, streak FROM learning_counters ORDER BY learning_id"


async def test_retrievals_count_in_their_own_rows(store: Store) -> None:
    first, second = await insert(store, ALICE, "boil for 60 minutes"), await insert(store, ALICE, "mash at 66 C")
    assert await sql(store, COUNTERS) == []  # nothing retrieved yet: no rows, counters 0
    at = utcnow()
    store.submit(ALICE, [Touch(ids=(first, second), at=at)]).result(timeout=10)
    store.submit(ALICE, [Touch(ids=(first,), at=at)]).result(timeout=10)
    learning = await store.get(ALICE, first)
    assert learning is not None and (learning.hits, learning.streak) == (2, 2)
    assert (
        learning.last_retrieved_at is not None and abs(learning.last_retrieved_at.timestamp() - at.timestamp()) < 1e-3
    )
    assert await sql(store, COUNTERS) == [(first, "t1", "alice", 2, 2), (second, "t1", "alice", 1, 1)]
    # Another user's touch of alice's learning counts nothing.
    store.submit(BOB, [Touch(ids=(first,), at=at)]).result(timeout=10)
    assert (await sql(store, COUNTERS))[0] == (first, "t1", "alice", 2, 2)


async def test_updates_set_and_add_to_counters(store: Store) -> None:
    learning_id = await insert(store, ALICE, "sparge at 76 C")
    store.submit(ALICE, [Touch(ids=(learning_id,), at=utcnow())]).result(timeout=10)
    # Negative feedback's reset, with other fields of the row in the same update.
    reset = Update(learning_id, {"streak": 0, "failures": 1}, None, increments={"hits": 3})
    after = (await store.apply(ALICE, [reset])).learnings[0]
    assert after is not None and (after.hits, after.streak, after.failures) == (4, 0, 1)
    assert after.revision == 2
    fresh = await insert(store, ALICE, "never retrieved")
    after = (await store.apply(ALICE, [Update(fresh, {"hits": 7}, None)])).learnings[0]
    assert after is not None and (after.hits, after.streak, after.last_retrieved_at) == (7, 0, None)


async def test_inserted_counters_are_kept(store: Store) -> None:
    at = utcnow()
    result = await store.apply(
        ALICE, [Insert(record(ALICE, "imported", hits=5, streak=2, last_retrieved_at=at), created())]
    )
    learning = result.learnings[0]
    assert learning is not None and (learning.hits, learning.streak) == (5, 2)
    read = await store.get(ALICE, learning.id)
    assert read is not None and (read.hits, read.streak) == (5, 2) and read.last_retrieved_at is not None


async def test_counters_go_with_their_learning(store: Store) -> None:
    first, second, third = [await insert(store, s, t) for s, t in ((ALICE, "a"), (ALICE, "b"), (BOB, "c"))]
    store.submit(ALICE, [Touch(ids=(first, second), at=utcnow())]).result(timeout=10)
    store.submit(BOB, [Touch(ids=(third,), at=utcnow())]).result(timeout=10)
    await store.apply(ALICE, [Delete(second, EventDraft(actor="person", action=created().action))])
    removed = await store.forget_user("t1", "bob")
    assert removed["learning_counters"] == 1
    assert [row[0] for row in await sql(store, COUNTERS)] == [first]


async def test_a_follow_up_sees_the_touched_candidates_as_they_are_after(store: Store) -> None:
    candidate = await insert(store, ALICE, "a candidate")
    verified = await insert(store, ALICE, "a verified one", status=Status.VERIFIED)
    seen: list[Learning] = []

    def then(touched: list[Learning]) -> list[Any]:
        seen.extend(touched)
        return []

    store.submit(ALICE, [Touch(ids=(verified, candidate), at=utcnow())], then=then).result(timeout=10)
    assert [(learning.id, learning.hits, learning.streak) for learning in seen] == [(candidate, 1, 1)]


async def test_a_tenant_archive_carries_the_counters(backend: str, tmp_path: Path) -> None:
    source, target = make_store(backend, tmp_path / "a"), make_store(backend, tmp_path / "b")
    await source.start()
    await target.start()
    try:
        learning_id = await insert(source, ALICE, "carried")
        source.submit(ALICE, [Touch(ids=(learning_id,), at=utcnow())]).result(timeout=10)
        archive, target_archive = parts_of(source).archive, parts_of(target).archive
        assert archive is not None and target_archive is not None
        rows = [row async for row in archive.export_tenant("t1")]
        assert [row.row["hits"] for row in rows if row.kind == "learning_counters"] == [1]
        # An archive from before the table kept the counters in the learnings rows.
        older = [row for row in rows if row.kind != "learning_counters"]
        for row in older:
            if row.kind == "learnings":
                row.row.update(hits=4, streak=1, last_retrieved_at=time.time())
        await target_archive.import_tenant("t1", older)
        moved = await target.get(ALICE, learning_id)
        assert moved is not None and (moved.hits, moved.streak) == (4, 1)
    finally:
        await source.aclose()
        await target.aclose()


def test_an_older_file_moves_its_counters_when_it_opens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.db"
    every = sqlite_connection.migrations_for("sqlite")
    before = [m for m in every if m.name != "learning_counters" and m.version < 19]
    monkeypatch.setattr(sqlite_connection, "migrations_for", lambda backend: before)
    conn = connect(path)
    columns = (
        "tenant, user_id, namespace, type, text, status, confidence, hits, streak, simhash64, origin, created_at, "
        "updated_at, last_retrieved_at, scope_token"
    )
    rows = [
        (
            "t1",
            "alice",
            "learning",
            "fact",
            "retrieved",
            "candidate",
            0.5,
            3,
            2,
            "0" * 16,
            "person",
            1.0,
            1.0,
            5.0,
            "s",
        ),
        ("t1", "alice", "learning", "fact", "never", "candidate", 0.5, 0, 0, "0" * 16, "person", 1.0, 1.0, None, "s"),
    ]
    conn.executemany(f"INSERT INTO learnings ({columns}) VALUES ({', '.join('?' * 15)})", rows)
    conn.commit()
    conn.close()
    monkeypatch.setattr(sqlite_connection, "migrations_for", lambda backend: every)
    conn = connect(path)
    try:
        assert conn.execute(COUNTERS).fetchall() == [(1, "t1", "alice", 3, 2)]
        read = "SELECT id, hits, streak, last_retrieved_at FROM learning_rows ORDER BY id"
        assert conn.execute(read).fetchall() == [(1, 3, 2, 5.0), (2, 0, 0, None)]
        assert "hits" not in {row[1] for row in conn.execute("PRAGMA table_info(learnings)")}
    finally:
        conn.close()


async def test_a_follow_up_sees_only_the_candidates_that_reached_a_count(store: Store) -> None:
    learning_id = await insert(store, ALICE, "a candidate retrieved twice")
    seen: list[list[int]] = []

    def then(touched: list[Learning]) -> list[Any]:
        seen.append([learning.id for learning in touched])
        return []

    for _ in range(2):
        touch = Touch(ids=(learning_id,), at=utcnow(), follow_from=(2, 5))
        store.submit(ALICE, [touch], then=then).result(timeout=10)
    assert seen == [[learning_id]]  # streak 1 (nothing to follow up: not run), then 2
