"""The store's shortcuts must answer exactly as the long way round: ranked search reading few rows, rows
built from what was written, planned writes, partitions that skip idle catch-ups, vectors not yet indexed."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from learnloop.errors import NotFound
from learnloop.models import Event, EventAction, Filters, Learning, Origin, Scope, Source, Status, utcnow
from learnloop.stores.base import Candidate, EventDraft, Insert, Operation, SearchRequest, Store, Touch, Update
from learnloop.stores.search.partition import Partition
from learnloop.stores.search.row_codes import Codebook, RowCodes
from learnloop.stores.sqlite import SQLiteStore
from tests.conftest import TEST_DIM, unit_vector
from tests.stores.test_contract import ALICE, BOB, TENANT, created, insert, record


async def test_select_ranks_on_small_rows_and_loads_only_what_it_keeps(store: Store) -> None:
    ids = [await insert(store, ALICE, f"boil note {i}", seed=i) for i in range(6)]
    shared = await insert(store, TENANT, "shared boil note", seed=9, tags=("kit",))
    await insert(store, BOB, "bob's boil note", seed=0)
    request = SearchRequest(vector=unit_vector(0), terms=["boil"], filters=Filters(), vector_k=10, text_k=10)
    plain = await store.search(ALICE, request)
    seen: list[Candidate] = []

    def select(candidates: list[Candidate]) -> list[Candidate]:
        seen.extend(candidates)
        return sorted(candidates, key=lambda c: c.id)[:3][::-1]

    kept = await store.search(ALICE, request, select=select)
    strip = [(c.id, c.status, c.hits, c.tags, c.vector_rank, c.vector_similarity, c.text_rank) for c in plain]
    assert sorted(strip) == sorted(
        (c.id, c.status, c.hits, c.tags, c.vector_rank, c.vector_similarity, c.text_rank) for c in seen
    )
    assert {c.id for c in seen} == {*ids, shared}
    assert [c.id for c in kept] == sorted(ids)[:3][::-1]
    by_id = {c.id: c for c in plain}
    assert [c.learning() for c in kept] == [by_id[c.id].learning() for c in kept]
    assert await store.search(ALICE, request, select=lambda candidates: []) == []


async def test_written_rows_are_returned_as_stored(store: Store) -> None:
    now = utcnow()
    result = await store.apply(
        ALICE,
        [
            Insert(
                record(
                    ALICE,
                    "Grainfather boil-off is 3.5 L/hr — ünïcode",
                    category="equipment",
                    topic="kettle",
                    tags=("boil", "wätter"),
                    status=Status.VERIFIED,
                    confidence=0.7,
                    origin=Origin.TOOL,
                    source=Source(session="s1", message="m", interaction="i", context="brew day", author="a"),
                    hits=2,
                    streak=1,
                    version=3,
                    supersedes=41,
                    created_at=now - timedelta(days=3),
                    updated_at=now - timedelta(days=1),
                    last_retrieved_at=now,
                ),
                created(),
            ),
        ],
    )
    shared = await store.apply(TENANT, [Insert(record(TENANT, "global one", user=None), created())])
    for learning in [*result.learnings, *shared.learnings]:
        assert learning is not None
        assert learning == await store.get(ALICE, learning.id)
        assert learning.model_fields_set == set(Learning.model_fields)
    assert result.events[0].model_fields_set == set(Event.model_fields)
    assert result.events == (await store.events(ALICE))[:1]
    first = result.learnings[0]
    assert first is not None
    updated = await store.apply(
        ALICE, [Update(first.id, {"tags": ["kit"], "status": Status.CANDIDATE}, None, increments={"hits": 1})]
    )
    assert updated.learnings[0] == await store.get(ALICE, first.id)


async def test_a_tag_change_reaches_keyword_search(store: Store) -> None:
    learning_id = await insert(store, ALICE, "mash schedule", seed=1)
    request = SearchRequest(vector=None, terms=["zebra"], filters=Filters(), text_k=5)
    assert await store.search(ALICE, request) == []
    await store.apply(ALICE, [Update(learning_id, {"tags": ["zebra"]}, None)])
    assert [c.id for c in await store.search(ALICE, request)] == [learning_id]


async def test_plan_and_apply_decides_on_the_neighbours_in_one_transaction(store: Store) -> None:
    close = await insert(store, ALICE, "boil-off 3.5 L/hr", seed=3)
    await insert(store, ALICE, "unrelated", seed=4)
    await insert(store, BOB, "bob's twin", seed=3)
    seen: list[list[tuple[Learning, float]]] = []

    def plan(neighbours: list[tuple[Learning, float]]) -> list[Operation]:
        seen.append(neighbours)
        learning, _ = neighbours[0]
        return [Update(learning.id, {"status": Status.VERIFIED}, EventDraft("person", EventAction.PROMOTED))]

    result = await store.plan_and_apply(ALICE, ALICE, unit_vector(3), "learning", 5, plan, min_similarity=0.99)
    assert [(n.id, round(s, 3)) for n, s in seen[0]] == [(close, 1.0)]
    promoted = await store.get(ALICE, close)
    assert promoted is not None and promoted.status is Status.VERIFIED
    assert [e.action for e in result.events] == ["promoted"]
    nothing = await store.plan_and_apply(ALICE, ALICE, unit_vector(3), "learning", 5, lambda n: [])
    assert nothing.learnings == [] and nothing.events == []


async def test_a_failing_plan_writes_nothing(store: Store) -> None:
    learning_id = await insert(store, ALICE, "boil-off 3.5 L/hr", seed=3)

    def plan(neighbours: list[tuple[Learning, float]]) -> list[Operation]:
        return [Update(learning_id, {"status": Status.VERIFIED}, None), Update(10**9, {"hits": 1}, None)]

    with pytest.raises(NotFound):  # the second update names a missing row
        await store.plan_and_apply(ALICE, ALICE, unit_vector(3), "learning", 5, plan)
    learning = await store.get(ALICE, learning_id)
    assert learning is not None and learning.status is Status.CANDIDATE


async def test_same_connection_writes_are_caught_up_without_a_search_in_between(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", embedding_model="test:model", dimension=TEST_DIM)
    try:
        first = await insert(store, ALICE, "first", seed=1)
        request = SearchRequest(vector=unit_vector(1), terms=[], filters=Filters(), vector_k=3, text_k=0)
        assert [c.id for c in await store.search(ALICE, request)] == [first]
        await store.apply(ALICE, [Update(first, {"status": Status.DEPRECATED}, None)])
        second = await insert(store, ALICE, "second", seed=1)
        assert [c.id for c in await store.search(ALICE, request)] == [second]
    finally:
        await store.aclose()


def _codes(codebook: Codebook) -> RowCodes:
    nothing = np.zeros(0, dtype=np.int32)
    return RowCodes(
        status=1,
        category=-1,
        namespace=codebook.code("learning"),
        type=codebook.code("fact"),
        simhash=0,
        terms=nothing,
        term_counts=nothing,
        hits=0,
        updated_at=0.0,
        tags=(),
    )


def test_vectors_not_yet_indexed_are_found_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((300, TEST_DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    codebook = Codebook()
    partition = Partition(TEST_DIM, 0, 100, tmp_path / "p.hnsw", lambda seq: [])
    partition.bulk_load(list(range(1, 301)), vectors, [_codes(codebook) for _ in range(300)])
    selection = partition.select(Filters(namespace="learning"), codebook)
    assert partition.search(vectors[0], 1, selection)[0][0] == 1
    assert partition.ann is not None
    new, moved = unit_vector(1000), unit_vector(1001)
    partition.upsert(1000, new, _codes(codebook))
    partition.upsert(5, moved, _codes(codebook))  # its index entry still holds the old vector
    partition.upsert(6, vectors[5].copy(), _codes(codebook))  # the same vector: nothing to re-index
    assert set(partition.unindexed) == {1000, 5}
    selection = partition.select(Filters(namespace="learning"), codebook)
    for vector, expected in ((new, 1000), (moved, 5)):
        found = partition.search(vector, 3, selection)
        assert found[0][0] == expected and abs(found[0][1] - 1.0) < 1e-5
    assert 5 not in [i for i, _ in partition.search(vectors[4], 3, selection)]
    partition.remove(1000)
    assert 1000 not in partition.unindexed
    assert partition.index_pending(1) is False and not partition.unindexed
    assert partition.search(moved, 1, selection)[0][0] == 5
    partition.upsert(1001, unit_vector(1002), _codes(codebook))
    partition.save_ann()  # the saved index must hold every vector
    assert not partition.unindexed


async def test_new_vectors_are_found_before_and_after_the_index_is_saved(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", embedding_model="test:model", dimension=TEST_DIM, ann_threshold=50)
    scope = Scope(tenant="t1", user="alice")
    try:
        await store.apply(scope, [Insert(record(scope, f"item {i}", seed=i), created()) for i in range(60)])
        request = SearchRequest(vector=unit_vector(999), terms=[], filters=Filters(), vector_k=1, text_k=0)
        await store.search(scope, request)  # loads the partition and builds its index
        fresh = await insert(store, scope, "fresh", seed=999)
        assert [c.id for c in await store.search(scope, request)] == [fresh]
    finally:
        await store.aclose()
    reopened = SQLiteStore(tmp_path / "s.db", embedding_model="test:model", dimension=TEST_DIM, ann_threshold=50)
    try:
        assert [c.id for c in await reopened.search(scope, request)] == [fresh]
    finally:
        await reopened.aclose()


async def test_ranking_reads_from_partitions_follow_retrievals_updates_and_other_processes(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteStore(path, embedding_model="test:model", dimension=TEST_DIM)
    other = SQLiteStore(path, embedding_model="test:model", dimension=TEST_DIM)
    try:
        ids = [await insert(store, ALICE, f"boil note {i}", seed=i, tags=("kit",) if i else ()) for i in range(4)]
        request = SearchRequest(vector=unit_vector(0), terms=["boil"], filters=Filters(), vector_k=10, text_k=10)

        async def both_ways() -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
            seen: list[Candidate] = []
            await store.search(ALICE, request, select=lambda candidates: seen.extend(candidates) or [])
            plain = await store.search(ALICE, request)
            columns = [(c.id, c.status, c.hits, c.updated_at, c.tags) for c in plain]
            return sorted(columns), sorted((c.id, c.status, c.hits, c.updated_at, c.tags) for c in seen)

        await store.search(ALICE, request)  # loads the partition
        store.submit(ALICE, [Touch(ids=(ids[0], ids[1]), at=utcnow())]).result(timeout=10)
        store.submit(ALICE, [Touch(ids=(ids[0],), at=utcnow())]).result(timeout=10)
        await store.apply(ALICE, [Update(ids[2], {"confidence": 0.9}, None, increments={"hits": 4})])
        await other.apply(ALICE, [Update(ids[3], {"status": Status.VERIFIED}, None, increments={"hits": 2})])
        plain, from_partitions = await both_ways()
        assert from_partitions == plain
        assert [hits for _, _, hits, _, _ in plain] == [2, 1, 4, 2]
    finally:
        await other.aclose()
        await store.aclose()


def test_a_reloaded_index_gets_the_vectors_of_live_ids_and_zeros_for_the_rest() -> None:
    """What a links-only HNSW file is given back (`Partition._vectors_of`): by id, in the order asked."""
    codebook = Codebook()
    partition = Partition(TEST_DIM, 0, 1 << 30, None, lambda seq: [])
    vectors = np.stack([unit_vector(i) for i in range(1, 7)])
    partition.bulk_load([10, 20, 30, 40, 50, 60], vectors, [_codes(codebook) for _ in range(6)])
    partition.remove(30)
    partition.upsert(20, unit_vector(99), _codes(codebook))  # a new slot for 20; its old one is dead
    asked = np.array([60, 30, 20, 77, 10], dtype=np.uint64)
    found = partition._vectors_of(asked)
    expected = np.stack([vectors[5], np.zeros(TEST_DIM), unit_vector(99), np.zeros(TEST_DIM), vectors[0]])
    np.testing.assert_array_equal(found, expected.astype(np.float32))
