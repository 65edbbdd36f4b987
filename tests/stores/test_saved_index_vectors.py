"""A partition restored from its snapshot takes its vectors from the saved HNSW index when that is a whole
hnswlib file (from 50k vectors), instead of reading every embedding back from the table: the rows the change log
shows changed since the index was saved, and those it does not hold, are read from the table, and the answers
are those of a process that loaded the partition from its rows."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from learnloop.models import Filters, Status
from learnloop.stores.base import Delete, Insert, SearchRequest, Update
from learnloop.stores.search import partition, partition_cache
from learnloop.stores.search.ann import Ann
from learnloop.stores.search.partition import Partition
from learnloop.stores.search.row_codes import RowCodes
from tests.conftest import TEST_DIM, make_store, unit_vector
from tests.stores.test_contract import ALICE, created, record
from tests.stores.test_partition_snapshot import answers, ask, close_without_saving, fill

ANN_THRESHOLD = 20


@pytest.fixture(autouse=True)
def whole_index_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Snapshots and whole hnswlib files for partitions of a test's size (by default a snapshot needs 2,000 rows
    and a whole index file 50,000 vectors)."""
    monkeypatch.setattr(partition_cache, "_SNAPSHOT_MIN_ROWS", 10)
    monkeypatch.setattr(partition, "_LINKS_ONLY_BELOW", 0)


def counted_table_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The restored partitions whose vectors were all read from the table (their row counts)."""
    reads: list[int] = []
    live_vectors = partition_cache.PartitionCache._live_vectors

    def counted(cache: Any, conn: Any, key: Any, ids: Any) -> Any:
        reads.append(len(ids))
        return live_vectors(cache, conn, key, ids)

    monkeypatch.setattr(partition_cache.PartitionCache, "_live_vectors", counted)
    return reads


async def reopened(backend: str, folder: Path) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """A process that opens the files afresh: its answers for alice, and her restored partition's ids and vectors
    (closed without saving, so the files stay as they were)."""
    store = make_store(backend, folder, ann_threshold=ANN_THRESHOLD)
    await store.start()
    try:
        found = await ask(store, ALICE)  # type: ignore[arg-type]
        [restored] = [p for key, p in store._partitions._partitions.items() if key[1]]  # type: ignore[attr-defined]
        live = restored.alive[: restored.size]
        return found, restored.ids[: restored.size][live], restored.vectors[: restored.size][live]
    finally:
        await close_without_saving(store)  # type: ignore[arg-type]


async def test_a_restored_partition_takes_its_vectors_from_the_whole_saved_index(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store(backend, tmp_path, ann_threshold=ANN_THRESHOLD)
    await store.start()
    try:
        ids = await fill(store, ALICE, 60)  # type: ignore[arg-type]
        await ask(store, ALICE)  # type: ignore[arg-type]  (builds the index)
    finally:
        await store.aclose()  # saves the index (a whole hnswlib file) and the snapshot
    writer = make_store(backend, tmp_path, ann_threshold=ANN_THRESHOLD)
    await writer.start()
    try:  # another process: changes alice's rows after the index was saved, never loads her partition
        changes = [
            Delete(ids[0], created()),
            Update(ids[1], {}, created(), vector=unit_vector(3), embedding_model="test:model"),
            Insert(record(ALICE, "boil note new: the kettle boiled over", seed=3), created()),
        ]
        await writer.apply(ALICE, changes)  # type: ignore[arg-type]
    finally:
        await writer.aclose()
    reads = counted_table_reads(monkeypatch)
    from_index = await reopened(backend, tmp_path)
    assert reads == [], "alice's vectors came from her saved index"
    monkeypatch.setattr(partition.Partition, "preload_saved_ann", lambda *args: None)
    from_table = await reopened(backend, tmp_path)
    assert reads == [60]
    assert from_index[0] == from_table[0]
    assert np.array_equal(from_index[1], from_table[1]) and np.array_equal(from_index[2], from_table[2])
    assert ids[1] in {hit[0] for hit in from_index[0][0]}, "the re-embedded row is found by its new vector"
    assert all(hit[0] != ids[0] for hits in from_index[0] for hit in hits)


async def test_an_unchanged_saved_index_lends_its_rows_until_every_vector_is_needed(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing changed since the index was saved: the restored partition keeps the file's rows (in the file's
    order, which a status change made differ from the slots') and gathers them only when it needs them all; the
    rows it reads meanwhile, and the answers, are those of a process that read every vector from the table."""
    store = make_store(backend, tmp_path, ann_threshold=ANN_THRESHOLD)
    await store.start()
    try:
        ids = await fill(store, ALICE, 60)  # type: ignore[arg-type]
        await ask(store, ALICE)  # type: ignore[arg-type]  (builds the index)
        await store.apply(ALICE, [Update(ids[4], {"status": Status.VERIFIED}, created())])  # moves its slot
        await ask(store, ALICE)  # type: ignore[arg-type]
    finally:
        await store.aclose()

    async def first_search(preloaded: bool) -> tuple[Any, Partition, bool, np.ndarray]:
        reopened = make_store(backend, tmp_path, ann_threshold=ANN_THRESHOLD)
        await reopened.start()
        request = SearchRequest(vector=unit_vector(3), terms=["boil"], filters=Filters(), vector_k=15, text_k=15)
        found = answers(await reopened.search(ALICE, request))
        [restored] = [p for key, p in reopened._partitions._partitions.items() if key[1]]  # type: ignore[attr-defined]
        pending = restored.vectors_pending
        rows = restored.vector_rows(np.arange(restored.size))
        assert np.array_equal(restored.vectors[: restored.size], rows)
        found = [found, *await ask(reopened, ALICE)]  # type: ignore[arg-type]
        await close_without_saving(reopened)  # type: ignore[arg-type]
        return found, restored, pending, rows

    reads = counted_table_reads(monkeypatch)
    from_index, restored, pending, rows = await first_search(True)
    assert reads == [] and pending, "alice's vectors lent by her saved index"
    monkeypatch.setattr(partition.Partition, "preload_saved_ann", lambda *args: None)
    from_table, table_partition, _, table_rows = await first_search(False)
    assert reads == [60]
    assert from_index == from_table
    assert np.array_equal(restored.ids[: restored.size], table_partition.ids[: table_partition.size])
    assert np.array_equal(rows, table_rows)


async def test_a_saved_index_behind_too_many_changes_leaves_the_vectors_to_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store("sqlite", tmp_path, ann_threshold=ANN_THRESHOLD)
    await store.start()
    try:
        ids = await fill(store, ALICE, 60)  # type: ignore[arg-type]
        await ask(store, ALICE)  # type: ignore[arg-type]
    finally:
        await store.aclose()
    monkeypatch.setattr(partition_cache, "_REPLAY_AT_MOST", 2)
    writer = make_store("sqlite", tmp_path, ann_threshold=ANN_THRESHOLD)
    await writer.start()
    try:  # a fifth of the rows re-embedded: more than the index is trusted to be patched for
        changes = [
            Update(learning_id, {}, created(), vector=unit_vector(100 + n), embedding_model="test:model")
            for n, learning_id in enumerate(ids[:13])
        ]
        await writer.apply(ALICE, changes)  # type: ignore[arg-type]
    finally:
        await writer.aclose()
    reads = counted_table_reads(monkeypatch)
    store = make_store("sqlite", tmp_path, ann_threshold=ANN_THRESHOLD)
    await store.start()
    try:
        found = await ask(store, ALICE)  # type: ignore[arg-type]
    finally:
        await store.aclose()
    assert reads == [60]
    assert found[0]


def test_an_index_file_gives_back_the_vectors_and_labels_it_holds(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((30, TEST_DIM)).astype(np.float32)
    ids = np.arange(100, 130, dtype=np.int64)
    ann = Ann.build(TEST_DIM, ids, vectors)
    ann.remove(105)
    path = tmp_path / "index.hnsw"
    ann.index.save_index(str(path))
    loaded, labels, held = Ann.load_with_vectors(path, TEST_DIM, 100, [105])
    assert loaded.live == 29
    assert labels.tolist() == [-1 if i == 105 else i for i in ids.tolist()]
    assert np.array_equal(held, vectors) and not held.flags.writeable and type(held) is np.ndarray
    path.write_bytes(path.read_bytes()[:200])  # cut short: hnswlib refuses it, or the layout check does
    with pytest.raises((ValueError, RuntimeError)):
        Ann.load_with_vectors(path, TEST_DIM, 100, [105])


def test_an_index_saved_without_its_vectors_is_deflated_and_loads_back_whole(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    vectors = rng.standard_normal((40, TEST_DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(1, 41, dtype=np.int64)
    ann = Ann.build(TEST_DIM, ids, vectors)
    path = tmp_path / "links.hnsw"
    ann.save_links(path)
    with zipfile.ZipFile(path) as saved:
        assert {member.compress_type for member in saved.infolist()} == {zipfile.ZIP_DEFLATED}
    loaded = Ann.load_links(path, 100, [], lambda labels: vectors[labels.astype(np.int64) - 1])
    for row in range(0, 40, 7):
        assert loaded.query(vectors[row], 5) == ann.query(vectors[row], 5)


def test_a_preloaded_index_replays_the_log_from_the_seq_it_was_saved_at(tmp_path: Path) -> None:
    """Another process may save a newer index between the restore that preloads the file and the first search
    that adopts it: the replay starts from the seq read with the preloaded file, not from the newer metadata."""
    rng = np.random.default_rng(9)
    vectors = rng.standard_normal((30, TEST_DIM)).astype(np.float32)
    codes = [
        RowCodes(
            status=1,
            category=-1,
            namespace=0,
            type=0,
            simhash=i,
            terms=[],
            term_counts=[],
            hits=0,
            updated_at=0.0,
            tags=(),
        )
        for i in range(30)
    ]
    path = tmp_path / "index.hnsw"
    saver = Partition(TEST_DIM, 5, ANN_THRESHOLD, path, lambda seq: [])
    saver.bulk_load(list(range(1, 31)), vectors, codes)
    saver.ensure_ann()  # built and saved at seq 5, a whole hnswlib file
    arrays = saver.arrays(forget_epoch=0)
    asked: list[int] = []
    restored = Partition(TEST_DIM, 5, ANN_THRESHOLD, path, lambda seq: asked.append(seq) or [])
    preloaded = restored.preload_saved_ann(30, newest=9)
    assert preloaded is not None and preloaded[0] == 5
    path.with_suffix(".json").write_text(json.dumps({"watermark": 8, "count": 30, "deleted": []}))
    arrays.columns["vectors"] = vectors
    restored.restore(arrays)
    restored.ensure_ann()
    assert asked == [5] and restored.ann is not None and restored.ann.live == 30
