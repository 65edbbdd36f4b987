"""A search partition saved beside the file (`stores.search.snapshot`) is only a cache: a reopened store answers
exactly as it would from the rows, replays what changed since the snapshot, and ignores a snapshot it cannot
trust (corrupt, truncated, behind the pruned log, from before a user was forgotten)."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from learnloop.models import EventAction, Filters, Scope, Status
from learnloop.stores.base import Candidate, Delete, EventDraft, Insert, SearchRequest, Update
from learnloop.stores.search import partition_cache, snapshot
from learnloop.stores.search.embeddings import embedding_vector, quantised_rows
from learnloop.stores.search.keywords import TermCodebook
from learnloop.stores.search.partition import Partition
from learnloop.stores.search.row_codes import Codebook, RowCodes
from learnloop.stores.search.row_decoding import aligned, joined_halves, vectors_for
from learnloop.stores.search.snapshot import read_snapshot, write_snapshot
from learnloop.stores.sql import changelog
from learnloop.stores.sqlite import SQLiteStore
from learnloop.stores.sqlite.partitions import SQLitePartitionSource
from tests.conftest import TEST_DIM, make_store, unit_vector
from tests.stores.test_contract import ALICE, BOB, created, record
from tests.support.clock import Clock

TOPICS = ("boil", "mash", "yeast", "hops", "water", "kettle")


@pytest.fixture(autouse=True)
def small_snapshots(monkeypatch: pytest.MonkeyPatch) -> None:
    """Snapshots for partitions of a test's size (the default leaves small ones to their rows)."""
    monkeypatch.setattr(partition_cache, "_SNAPSHOT_MIN_ROWS", 10)


@pytest.fixture
def full_loads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The users' partitions loaded from all their rows (not from a snapshot); the tenant's global one, empty
    here, is left out."""
    loads: list[tuple[str, str]] = []
    live_rows = SQLitePartitionSource.live_rows

    def counted(self: SQLitePartitionSource, conn: Any, key: tuple[str, str], ids: Any) -> Any:
        if ids is None and key[1]:
            loads.append(key)
        return live_rows(self, conn, key, ids)

    monkeypatch.setattr(SQLitePartitionSource, "live_rows", counted)
    return loads


def open_store(path: Path, clock: Clock, **options: Any) -> SQLiteStore:
    return SQLiteStore(path, embedding_model="test:model", dimension=TEST_DIM, clock=clock, **options)


def snapshots(path: Path) -> list[Path]:
    return sorted(path.with_name(path.name + ".ann").glob("*.snapshot"))


async def fill(store: SQLiteStore, scope: Scope, count: int) -> list[int]:
    ops = [
        Insert(
            record(
                scope,
                f"{TOPICS[i % 6]} note {i}: the {TOPICS[(i * 5) % 6]} step took {i % 7} minutes",
                seed=i,
                tags=(TOPICS[i % 3],) if i % 4 == 0 else (),
                category="equipment" if i % 5 == 0 else None,
            ),
            created(),
        )
        for i in range(count)
    ]
    result = await store.apply(scope, ops)
    return [learning.id for learning in result.learnings if learning is not None]


def answers(candidates: list[Candidate]) -> list[tuple[Any, ...]]:
    return [
        (c.id, c.status, c.hits, c.vector_similarity, c.vector_rank, c.text_score, c.text_rank, c.text_coverage, c.tags)
        for c in candidates
    ]


async def ask(store: SQLiteStore, scope: Scope) -> list[list[tuple[Any, ...]]]:
    """Hybrid searches with and without filters, as retrieval asks them."""
    found = []
    for seed, words, filters in (
        (3, ["boil", "minutes"], Filters()),
        (7, ["yeast"], Filters(categories=["equipment"])),
        (11, ["kettle", "water", "unheard"], Filters(statuses=[Status.VERIFIED])),
        (20, [], Filters()),
    ):
        request = SearchRequest(vector=unit_vector(seed), terms=words, filters=filters, vector_k=15, text_k=15)
        found.append(answers(await store.search(scope, request)))
    return found


class SetAside:
    """The snapshot files moved out of the way, then put back as they were."""

    def __init__(self, path: Path) -> None:
        self.saved = {file: file.read_bytes() for file in snapshots(path)}
        for file in self.saved:
            file.unlink()

    def put_back(self) -> None:
        for file, data in self.saved.items():
            file.write_bytes(data)


async def close_without_saving(store: SQLiteStore) -> None:
    store._partitions.close = lambda: None  # type: ignore[method-assign]
    await store.aclose()


async def answers_from_rows(path: Path, clock: Clock, scope: Scope) -> list[list[tuple[Any, ...]]]:
    """What a store answers with no snapshot at all."""
    aside = SetAside(path)
    store = open_store(path, clock)
    try:
        return await ask(store, scope)
    finally:
        await close_without_saving(store)
        aside.put_back()


async def saved_store(path: Path, clock: Clock, count: int = 60) -> list[int]:
    store = open_store(path, clock)
    try:
        ids = await fill(store, ALICE, count)
        await fill(store, BOB, 12)
        await ask(store, ALICE)  # loads alice's partition from its rows
    finally:
        await store.aclose()  # and saves it
    assert len(snapshots(path)) == 1, "alice's partition is saved; bob's, never searched, is not"
    return ids


async def reopened_answers(path: Path, clock: Clock) -> list[list[tuple[Any, ...]]]:
    """What a process that opens the file afresh answers for alice."""
    store = open_store(path, clock)
    try:
        return await ask(store, ALICE)
    finally:
        await store.aclose()


async def test_a_reopened_store_answers_from_its_snapshot_as_from_its_rows(
    tmp_path: Path, full_loads: list[tuple[str, str]]
) -> None:
    clock, path = Clock(), tmp_path / "s.db"
    await saved_store(path, clock)
    expected = await answers_from_rows(path, clock, ALICE)
    full_loads.clear()
    assert await reopened_answers(path, clock) == expected
    assert full_loads == []


async def test_changes_made_after_the_snapshot_are_replayed_from_the_log(
    tmp_path: Path, full_loads: list[tuple[str, str]]
) -> None:
    clock, path = Clock(), tmp_path / "s.db"
    ids = await saved_store(path, clock)
    # A process that loaded the partition from its rows before the changes, and replays them as the reopened
    # one must (replayed rows take new slots: ties and single-row float sums then come out as they do here).
    aside = SetAside(path)
    follower = open_store(path, clock)
    await ask(follower, ALICE)
    aside.put_back()
    writer = open_store(path, clock)  # another process: writes, never loads alice's partition
    try:
        await writer.apply(
            ALICE,
            [
                Insert(record(ALICE, "boil note new: the kettle boiled over", seed=3), created()),
                Update(ids[3], {"status": Status.VERIFIED}, EventDraft(actor="person", action=EventAction.PROMOTED)),
                Delete(ids[7], EventDraft(actor="person", action=EventAction.DELETED)),
            ],
        )
    finally:
        await writer.aclose()
    try:
        expected = await ask(follower, ALICE)
    finally:
        await close_without_saving(follower)
    assert any(ids[3] == hit[0] and hit[1] is Status.VERIFIED for hits in expected for hit in hits)
    assert all(hit[0] != ids[7] for hits in expected for hit in hits)
    full_loads.clear()
    assert await reopened_answers(path, clock) == expected
    assert full_loads == []


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "empty", "other model"])
async def test_a_damaged_snapshot_is_ignored(tmp_path: Path, full_loads: list[tuple[str, str]], damage: str) -> None:
    clock, path = Clock(), tmp_path / "s.db"
    await saved_store(path, clock)
    expected = await answers_from_rows(path, clock, ALICE)
    [file] = snapshots(path)
    data = bytearray(file.read_bytes())
    if damage == "flipped byte":
        data[-100] ^= 0x40  # inside the arrays: the checksum no longer matches
    elif damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "empty":
        data = bytearray()
    file.write_bytes(bytes(data))
    full_loads.clear()
    options = {"embedding_model": "test:other"} if damage == "other model" else {}
    store = SQLiteStore(path, **{"embedding_model": "test:model", "dimension": TEST_DIM, "clock": clock, **options})
    try:
        if damage == "other model":
            request = SearchRequest(vector=unit_vector(3), terms=["boil"], filters=Filters(), vector_k=5)
            assert await store.search(ALICE, request) == []
        else:
            assert await ask(store, ALICE) == expected
        assert full_loads == [("t1", "alice")]
    finally:
        await store.aclose()


async def test_a_snapshot_behind_the_pruned_log_is_ignored(tmp_path: Path, full_loads: list[tuple[str, str]]) -> None:
    clock, path = Clock(), tmp_path / "s.db"
    ids = await saved_store(path, clock)
    writer = open_store(path, clock)
    try:
        await writer.apply(ALICE, [Delete(ids[0], EventDraft(actor="person", action=EventAction.DELETED))])
        clock.advance(hours=2)
        await writer._run(changelog.prune_changes, clock().timestamp(), timedelta(hours=1).total_seconds())
        clock.advance(hours=2)
        await writer._run(changelog.prune_changes, clock().timestamp(), timedelta(hours=1).total_seconds())
    finally:
        await writer.aclose()
    expected = await answers_from_rows(path, clock, ALICE)
    assert all(hit[0] != ids[0] for hits in expected for hit in hits)
    full_loads.clear()
    assert await reopened_answers(path, clock) == expected
    assert full_loads == [("t1", "alice")], "the deletion is gone from the log: the rows decide"


async def test_a_snapshot_from_before_a_user_was_forgotten_is_ignored(
    tmp_path: Path, full_loads: list[tuple[str, str]]
) -> None:
    clock, path = Clock(), tmp_path / "s.db"
    await saved_store(path, clock)
    other = open_store(path, clock)
    try:
        await other.forget_user("t1", "bob")
    finally:
        await other.aclose()
    full_loads.clear()
    await reopened_answers(path, clock)
    assert full_loads == [("t1", "alice")]


async def test_forgetting_a_user_deletes_their_snapshot(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "s.db"
    await saved_store(path, clock)
    store = open_store(path, clock)
    try:
        await store.forget_user("t1", "alice")
    finally:
        await store.aclose()
    assert snapshots(path) == []


@pytest.mark.parametrize("deflated", [True, False], ids=["deflated", "whole"])
@pytest.mark.parametrize("half", [True, False], ids=["float16 values", "float32 values"])
def test_a_snapshot_gives_back_the_arrays_it_saved(
    tmp_path: Path, half: bool, deflated: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not deflated:  # as a partition of 50k rows or more saves it
        monkeypatch.setattr(snapshot, "_DEFLATE_BELOW", 0)
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((40, TEST_DIM)).astype(np.float32)
    if half:  # as read from float16 rows
        vectors = vectors.astype(np.float16).astype(np.float32)
    codebook, vocabulary = Codebook(), TermCodebook()
    partition = Partition(TEST_DIM, 7, 1 << 30, None, lambda seq: [])
    documents = [Counter({f"t{i % 5}": 1 + i % 3, f"u{i % 7}": 1}) for i in range(40)]
    terms, counts = vocabulary.encode_many(documents)
    codes = [
        RowCodes(
            status=1 + i % 2,
            category=codebook.code("equipment" if i % 3 else None),
            namespace=codebook.code("learning"),
            type=codebook.code("fact"),
            simhash=i * 977,
            terms=terms[i],
            term_counts=counts[i],
            hits=i,
            updated_at=1000.0 + i,
            tags=("boil",) if i % 4 == 0 else (),
        )
        for i in range(40)
    ]
    partition.bulk_load(list(range(1, 41)), vectors, codes)
    partition.remove(3)
    saved = partition.arrays(forget_epoch=2)
    path = tmp_path / "p.snapshot"
    write_snapshot(path, saved, "test:model", codebook, vocabulary)
    assert "vectors" not in saved.columns and path.stat().st_size < 8_000, "the vectors stay in the table"
    data = path.read_bytes()
    assert json.loads(data[8 : 8 + int.from_bytes(data[:8], "little")])["deflated"] == deflated
    # Another process: its own codes and term ids.
    other_codes, other_terms = Codebook(), TermCodebook()
    other_codes.code("unrelated")
    other_terms.ids(["zzz", "t3"])
    read = read_snapshot(path, "test:model", other_codes, other_terms)
    assert read is not None and read.watermark == 7 and read.forget_epoch == 2
    for name, column in saved.columns.items():
        if name not in ("category", "namespace", "type"):
            np.testing.assert_array_equal(read.columns[name], column, err_msg=name)  # NaN (no date) too
        assert read.columns[name].flags.writeable, "a partition writes hit counts in place"
    names, other_names = codebook.strings(), other_codes.strings()
    for name in ("category", "namespace", "type"):
        expected = [None if c < 0 else names[c] for c in saved.columns[name].tolist()]
        assert [None if c < 0 else other_names[c] for c in read.columns[name].tolist()] == expected
    words, other_words = vocabulary.strings(), other_terms.strings()
    assert [words[t] for t in saved.doc_terms.tolist()] == [other_words[t] for t in read.doc_terms.tolist()]
    assert np.array_equal(read.doc_tf, saved.doc_tf) and np.array_equal(read.doc_sizes, saved.doc_sizes)
    assert read.tags == saved.tags
    assert read_snapshot(path, "test:other", other_codes, other_terms) is None
    # The loader reads the vectors from the table (here: as stored, in another order, one row gone since).
    # Rows as versions before int8 wrote them: float16, or float32.
    stored = [(i + 1, _half_blob(v) if half else v.tobytes()) for i, v in enumerate(vectors) if i + 1 != 8]
    read.columns["vectors"], gone = vectors_for(read.columns["ids"], stored[::-1], TEST_DIM)
    assert gone == [8]
    # Restored, the partition keeps float16 vectors until something needs them all, and reads rows exactly.
    restored = Partition(TEST_DIM, 0, 1 << 30, None, lambda seq: [])
    restored.restore(read)
    restored.remove(8)
    assert restored.vectors_pending == half
    live = vectors[[i for i in range(40) if i + 1 != 3]]  # learning 3 was removed before the save
    np.testing.assert_array_equal(restored.vector_rows(np.array([4, 0, 9])), live[[4, 0, 9]])
    np.testing.assert_array_equal(restored.vectors[restored.alive[: restored.size]], np.delete(live, 6, axis=0))
    assert not restored.vectors_pending
    again = Partition(TEST_DIM, 0, 1 << 30, None, lambda seq: [])
    again.restore(read)
    again.upsert(41, live[0], codes[0])  # a write converts them first
    assert not again.vectors_pending and again.vectors.dtype == np.float32
    np.testing.assert_array_equal(np.delete(again.vectors[: len(live)], 6, axis=0), np.delete(live, 6, axis=0))
    assert read_snapshot(path, "test:model", Codebook(), TermCodebook()) is not None


class SnapshotsAside:
    """Every snapshot under a folder (either backend's) moved out of the way, then put back as it was."""

    def __init__(self, folder: Path) -> None:
        self.saved = {file: file.read_bytes() for file in folder.rglob("*.snapshot")}
        for file in self.saved:
            file.unlink()

    def put_back(self) -> None:
        for file, data in self.saved.items():
            file.write_bytes(data)


async def test_either_backend_restores_its_snapshot_with_the_vectors_of_its_table(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot holds no vectors: the loader reads the table's (PostgreSQL: from the rows its search read
    ahead), and rows deleted or re-embedded since the snapshot are replayed from the log as before."""
    store = make_store(backend, tmp_path)
    await store.start()
    try:
        ids = await fill(store, ALICE, 40)  # type: ignore[arg-type]
        await ask(store, ALICE)  # type: ignore[arg-type]
    finally:
        await store.aclose()  # saves alice's snapshot
    # A process that loads alice's partition from her rows before the changes, and replays them as the reopened
    # one must (see the test above).
    aside = SnapshotsAside(tmp_path)
    assert len(aside.saved) == 1
    follower = make_store(backend, tmp_path)
    await follower.start()
    await ask(follower, ALICE)  # type: ignore[arg-type]
    aside.put_back()
    writer = make_store(backend, tmp_path)
    await writer.start()
    try:  # another process: changes alice's rows, never loads her partition
        changes = [
            Delete(ids[0], created()),
            Update(ids[1], {}, created(), vector=unit_vector(3), embedding_model="test:model"),
        ]
        await writer.apply(ALICE, changes)
    finally:
        await writer.aclose()
    try:
        expected = await ask(follower, ALICE)  # type: ignore[arg-type]
    finally:
        await close_without_saving(follower)  # type: ignore[arg-type]
    assert expected[0][0][0] in (ids[1], ids[3]), "the re-embedded row is as near as the one of the same vector"
    assert all(hit[0] != ids[0] for hits in expected for hit in hits)
    restored: list[int] = []
    live_vectors = partition_cache.PartitionCache._live_vectors

    def counted(cache: Any, conn: Any, key: Any, ids: Any) -> Any:
        restored.append(len(ids))
        return live_vectors(cache, conn, key, ids)

    monkeypatch.setattr(partition_cache.PartitionCache, "_live_vectors", counted)
    store = make_store(backend, tmp_path)
    await store.start()
    try:
        assert await ask(store, ALICE) == expected  # type: ignore[arg-type]
    finally:
        await store.aclose()
    assert restored == [40], "alice's partition came from her snapshot"


async def test_sqlite_reads_a_partitions_vectors_back_joined_as_row_by_row(tmp_path: Path) -> None:
    """The vectors of a restored partition read in one joined value are the row-by-row read's (int8 rows, and
    float16 ones as versions before int8 wrote them); a float32 blob among them (a row written before float16),
    or more bytes than SQLite's largest value, sends the read the row-by-row way."""
    store = make_store("sqlite", tmp_path)
    await store.start()
    try:
        ids = await fill(store, ALICE, 12)  # type: ignore[arg-type]

        source = SQLitePartitionSource("test:model")
        key = (ALICE.tenant, ALICE.user or "")

        def read(conn: Any) -> tuple[Any, Any]:
            return source.live_embeddings(conn, key), source.live_vectors(conn, key)

        (found_ids, joined), rows = await store._run(read)  # type: ignore[attr-defined]
        assert found_ids.tolist() == [row[0] for row in rows]
        assert joined == b"".join(row[1] for row in rows)
        wanted = np.array(ids[::-1], dtype=np.int64)
        by_rows = vectors_for(wanted, rows, TEST_DIM)
        quantised = quantised_rows(joined, len(found_ids), TEST_DIM)
        assert quantised is not None and joined_halves(found_ids, joined, TEST_DIM) is None
        by_join = aligned(wanted, found_ids, quantised)
        assert np.array_equal(by_rows[0], by_join[0]) and by_rows[1] == by_join[1] == []
        assert quantised_rows(joined + b"\x00" * 4, len(found_ids), TEST_DIM) is None
        wide = bytearray(joined)
        wide[0] = 0  # the first row's tag: not int8
        assert quantised_rows(bytes(wide), len(found_ids), TEST_DIM) is None

        older = [(i, _half_blob(embedding_vector(blob))) for i, blob in rows]
        halves = joined_halves(found_ids, b"".join(blob for _, blob in older), TEST_DIM)
        assert halves is not None
        by_half_rows, by_half_join = vectors_for(wanted, older, TEST_DIM), aligned(wanted, found_ids, halves)
        assert np.array_equal(by_half_rows[0], by_half_join[0])
        wide = bytearray(b"".join(blob for _, blob in older))
        wide[0] = 0  # the first row's tag: not float16
        assert joined_halves(found_ids, bytes(wide), TEST_DIM) is None

        def too_big(conn: Any) -> Any:  # a partition whose joined vectors exceed SQLite's largest value
            limit = conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 100)
            try:
                return source.live_embeddings(conn, key)
            finally:
                conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limit)

        assert await store._run(too_big) is None  # type: ignore[attr-defined]
    finally:
        await store.aclose()


def _half_blob(vector: np.ndarray) -> bytes:
    """A learning's embedding as versions before int8 stored it: tagged float16."""
    return b"\x02" + np.asarray(vector, dtype=np.float16).tobytes()
