"""The Store contract. Every backend runs this same suite through the `store` fixture."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from learnloop.errors import ConflictError, NotFound, PermissionDenied
from learnloop.models import (
    EventAction,
    Filters,
    LearningType,
    Origin,
    Scope,
    Source,
    Status,
    Vocabulary,
    utcnow,
)
from learnloop.simhash import simhash64_hex
from learnloop.stores.base import (
    NEW_ID,
    AppendEvent,
    Delete,
    EventDraft,
    Insert,
    ListQuery,
    NewLearning,
    SearchRequest,
    Store,
    Touch,
    Update,
)
from tests.conftest import TEST_DIM, make_store, unit_vector

ALICE = Scope(tenant="t1", user="alice")
BOB = Scope(tenant="t1", user="bob")
TENANT = Scope(tenant="t1")
OTHER_TENANT = Scope(tenant="t2", user="alice")


def record(scope: Scope, text: str, *, seed: int | str | None = None, **fields: object) -> NewLearning:
    return NewLearning(
        tenant=scope.tenant,
        user=fields.pop("user", scope.user),  # type: ignore[arg-type]
        text=text,
        vector=unit_vector(seed if seed is not None else text),
        embedding_model="test:model",
        simhash64=simhash64_hex(text),
        namespace=fields.pop("namespace", "learning"),  # type: ignore[arg-type]
        **fields,  # type: ignore[arg-type]
    )


def created(actor: str = "person") -> EventDraft:
    return EventDraft(actor=actor, action=EventAction.CREATED)


async def insert(store: Store, scope: Scope, text: str, **fields: object) -> int:
    result = await store.apply(scope, [Insert(record(scope, text, **fields), created())])
    learning = result.learnings[0]
    assert learning is not None
    return learning.id


async def test_insert_returns_row_and_event(store: Store) -> None:
    result = await store.apply(
        ALICE,
        [
            Insert(
                record(
                    ALICE,
                    "Grainfather boil-off is 3.5 L/hr",
                    category="equipment",
                    tags=("boil", "water"),
                    type=LearningType.FACT,
                    origin=Origin.TOOL,
                    source=Source(session="s1", context="brew day"),
                ),
                created("tool"),
            )
        ],
    )
    learning = result.learnings[0]
    assert learning is not None
    assert learning.user == "alice" and learning.tenant == "t1"
    assert learning.tags == ["boil", "water"]
    assert learning.status is Status.CANDIDATE
    assert learning.source.session == "s1" and learning.source.context == "brew day"
    assert len(learning.simhash64) == 16
    assert [e.action for e in result.events] == ["created"]
    assert result.events[0].learning_id == learning.id
    assert result.events[0].after is not None and result.events[0].after["text"] == learning.text


async def test_get_is_scoped(store: Store) -> None:
    learning_id = await insert(store, ALICE, "alice's learning")
    assert await store.get(ALICE, learning_id) is not None
    assert await store.get(TENANT, learning_id) is not None
    assert await store.get(BOB, learning_id) is None
    assert await store.get(OTHER_TENANT, learning_id) is None


async def test_global_learnings_are_visible_to_users_but_owned_by_the_tenant(store: Store) -> None:
    global_id = await insert(store, TENANT, "shared knowledge")
    assert (await store.get(ALICE, global_id)) is not None
    with pytest.raises(NotFound):
        await store.apply(ALICE, [Update(global_id, {"topic": "x"}, None)])
    await store.apply(TENANT, [Update(global_id, {"topic": "x"}, None)])


async def test_cannot_insert_for_another_user(store: Store) -> None:
    with pytest.raises(PermissionDenied):
        await store.apply(ALICE, [Insert(record(BOB, "bob's"), created())])


async def test_update_bumps_revision_and_checks_expected_revision(store: Store) -> None:
    learning_id = await insert(store, ALICE, "mash at 66 C")
    first = await store.get(ALICE, learning_id)
    assert first is not None
    result = await store.apply(
        ALICE,
        [Update(learning_id, {"topic": "mash"}, EventDraft("person", EventAction.EDITED), expect_revision=1)],
    )
    updated = result.learnings[0]
    assert updated is not None and updated.revision == 2 and updated.topic == "mash"
    assert result.events[0].before is not None and result.events[0].before["topic"] == ""
    with pytest.raises(ConflictError):
        await store.apply(ALICE, [Update(learning_id, {"topic": "again"}, None, expect_revision=1)])


async def test_transaction_is_all_or_nothing(store: Store) -> None:
    keep = await insert(store, ALICE, "keep me")
    with pytest.raises(NotFound):
        await store.apply(
            ALICE,
            [
                Insert(record(ALICE, "never stored"), created()),
                Update(keep, {"topic": "changed"}, None),
                Update(999_999, {"topic": "missing"}, None),
            ],
        )
    page = await store.list_learnings(ALICE, ListQuery(user="alice"))
    assert [learning.text for learning in page.items] == ["keep me"]
    assert page.items[0].topic == ""
    assert [e.action for e in await store.events(ALICE)] == ["created"]


async def test_delete_removes_row_and_index_entries(store: Store) -> None:
    learning_id = await insert(store, ALICE, "boil-off rate is 3.5 L/hr", seed=1)
    request = SearchRequest(vector=unit_vector(1), terms=["boil"], filters=Filters())
    assert [c.id for c in await store.search(ALICE, request)] == [learning_id]
    result = await store.apply(ALICE, [Delete(learning_id, EventDraft("person", EventAction.DELETED))])
    assert result.learnings[0] is not None and result.learnings[0].id == learning_id
    assert await store.get(ALICE, learning_id) is None
    assert await store.search(ALICE, request) == []
    history = await store.history(ALICE, learning_id)
    assert [e.action for e in history] == ["created", "deleted"]


async def test_search_fuses_vector_and_text_and_filters_before_ranking(store: Store) -> None:
    near = await insert(store, ALICE, "yeast attenuation notes", seed=10, category="ingredient")
    keyword = await insert(store, ALICE, "boil-off is lower on this kettle", seed=11, category="equipment")
    await insert(store, ALICE, "old wrong fact about boil", seed=12, status=Status.DEPRECATED)
    await insert(store, BOB, "bob's boil note", seed=10)
    found = await store.search(
        ALICE, SearchRequest(vector=unit_vector(10), terms=["boil"], filters=Filters(), vector_k=5, text_k=5)
    )
    by_id = {c.id: c for c in found}
    assert set(by_id) == {near, keyword}
    assert by_id[near].vector_rank == 1 and by_id[near].vector_similarity == pytest.approx(1.0, abs=1e-3)
    assert by_id[keyword].text_rank == 1
    only_equipment = await store.search(
        ALICE,
        SearchRequest(vector=unit_vector(10), terms=["notes"], filters=Filters(categories=["equipment"])),
    )
    assert [c.id for c in only_equipment] == [keyword]


async def test_search_sees_status_changes_and_deletes_made_by_another_process(backend: str, tmp_path: Path) -> None:
    first, second = make_store(backend, tmp_path), make_store(backend, tmp_path)
    try:
        learning_id = await insert(first, ALICE, "boil-off 3.5", seed=5)
        request = SearchRequest(vector=unit_vector(5), terms=[], filters=Filters())
        assert [c.id for c in await second.search(ALICE, request)] == [learning_id]
        await first.apply(ALICE, [Update(learning_id, {"status": Status.DEPRECATED}, None)])
        assert await second.search(ALICE, request) == []
        other = await insert(first, ALICE, "mash 66", seed=6)
        assert [c.id for c in await second.search(ALICE, request)] == [other]
    finally:
        await first.aclose()
        await second.aclose()


async def test_touch_counts_hits_and_streaks_without_a_new_revision(store: Store) -> None:
    learning_id = await insert(store, ALICE, "boil-off 3.5")
    global_id = await insert(store, TENANT, "shared")
    now = utcnow()
    await store.apply(ALICE, [Touch((learning_id, global_id), now), Touch((learning_id,), now)])
    mine = await store.get(ALICE, learning_id)
    shared = await store.get(ALICE, global_id)
    assert mine is not None and shared is not None
    assert (mine.hits, mine.streak, mine.revision) == (2, 2, 1)
    assert shared.hits == 1
    assert mine.last_retrieved_at is not None


async def test_touch_ignores_rows_outside_the_scope(store: Store) -> None:
    bobs = await insert(store, BOB, "bob's")
    await store.apply(ALICE, [Touch((bobs,), utcnow())])
    learning = await store.get(BOB, bobs)
    assert learning is not None and learning.hits == 0


async def test_list_filters_orders_and_paginates(store: Store) -> None:
    ids = [
        await insert(store, ALICE, f"learning number {i}", category="recipe" if i % 2 else "equipment")
        for i in range(7)
    ]
    await insert(store, BOB, "bob's learning")
    page = await store.list_learnings(ALICE, ListQuery(limit=3))
    assert [learning.id for learning in page.items] == ids[::-1][:3]
    assert page.total == 7 and page.has_more
    second = await store.list_learnings(ALICE, ListQuery(limit=3, offset=3))
    assert [learning.id for learning in second.items] == ids[::-1][3:6]
    recipes = await store.list_learnings(ALICE, ListQuery(category="recipe"))
    assert {learning.id for learning in recipes.items} == set(ids[1::2])
    everyone = await store.list_learnings(TENANT, ListQuery())
    assert everyone.total == 8
    bob_only = await store.list_learnings(TENANT, ListQuery(user="bob"))
    assert [learning.text for learning in bob_only.items] == ["bob's learning"]
    found = await store.list_learnings(ALICE, ListQuery(text="numb"))
    assert found.total == 7
    oldest = await store.list_learnings(ALICE, ListQuery(order="oldest", limit=1))
    assert oldest.items[0].id == ids[0]


async def test_near_duplicates_by_simhash(store: Store) -> None:
    text = "Grainfather Gen 1 boil-off rate is about 3.5 L/hr, lower than the usual 4-5 L/hr"
    learning_id = await insert(store, ALICE, text)
    await insert(store, ALICE, "US-05 attenuates to 82 percent in this system")
    found = await store.near_duplicates(ALICE, simhash64_hex(text.lower() + "."), 6, "learning")
    assert [i for i, _ in found] == [learning_id]
    assert await store.near_duplicates(BOB, simhash64_hex(text), 6, "learning") == []


async def test_a_run_of_inserts_is_written_in_order_with_its_events(store: Store) -> None:
    # Consecutive Inserts are written together (one batch per table); what follows them sees the last one.
    older = await insert(store, ALICE, "older note")
    texts = ["run one", "run two", "after the update"]
    result = await store.apply(
        ALICE,
        [
            Insert(record(ALICE, texts[0], topic="one"), created("import")),
            Insert(record(ALICE, texts[1], tags=("two",)), created("import")),
            Update(older, {"superseded_by": NEW_ID}, None),
            Insert(record(ALICE, texts[2]), created("import")),
        ],
    )
    first, second, updated, third = result.learnings
    assert first is not None and second is not None and updated is not None and third is not None
    assert [first.text, second.text, third.text] == texts
    assert older < first.id < second.id < third.id
    assert updated.superseded_by == second.id
    assert [(e.learning_id, e.action) for e in result.events] == [
        (i, "created") for i in (first.id, second.id, third.id)
    ]
    assert [e.seq for e in result.events] == sorted(e.seq for e in result.events)
    stored = await store.events(ALICE, after=result.events[0].seq - 1)
    assert [(e.seq, e.learning_id, e.actor) for e in stored] == [
        (e.seq, e.learning_id, "import") for e in result.events
    ]
    assert result.events[1].after is not None and result.events[1].after["tags"] == ["two"]
    for learning in (first, second, third):
        assert await store.get(ALICE, learning.id) == learning
    found = await store.search(ALICE, SearchRequest(vector=unit_vector(texts[1]), terms=["two"], filters=Filters()))
    by_id = {c.id: c for c in found}
    assert by_id[second.id].vector_rank == 1 and by_id[second.id].text_rank == 1


async def test_events_are_ordered_and_resumable(store: Store) -> None:
    a = await insert(store, ALICE, "first")
    await insert(store, BOB, "second")
    await store.apply(ALICE, [AppendEvent(EventDraft("system", EventAction.RETRIEVED, data={"ids": [a]}))])
    tenant_events = await store.events(TENANT)
    assert [e.seq for e in tenant_events] == sorted(e.seq for e in tenant_events)
    assert len(tenant_events) == 3
    after_first = await store.events(TENANT, after=tenant_events[0].seq)
    assert len(after_first) == 2
    alice_events = await store.events(ALICE)
    assert all(e.user in (None, "alice") for e in alice_events) and len(alice_events) == 2
    assert await store.events(OTHER_TENANT) == []


async def test_vocabularies_are_per_tenant(store: Store) -> None:
    vocabulary = Vocabulary.from_mapping({"equipment": "gear"}, namespace="brewing")
    await store.put_vocabulary("t1", vocabulary, EventDraft("person", EventAction.VOCABULARY_CHANGED))
    assert await store.get_vocabulary("t1", "brewing") == vocabulary
    assert await store.get_vocabulary("t2", "brewing") is None
    assert [v.namespace for v in await store.list_vocabularies("t1")] == ["brewing"]


async def test_purge_deprecated_respects_age_and_scope(store: Store) -> None:
    old = await insert(
        store, ALICE, "old and wrong", status=Status.DEPRECATED, updated_at=utcnow() - timedelta(days=40)
    )
    fresh = await insert(store, ALICE, "recently wrong", status=Status.DEPRECATED)
    bobs = await insert(store, BOB, "bob old", status=Status.DEPRECATED, updated_at=utcnow() - timedelta(days=40))
    purged = await store.purge_deprecated(ALICE, utcnow() - timedelta(days=30), "person")
    assert purged == [old]
    assert await store.get(ALICE, fresh) is not None
    assert await store.get(BOB, bobs) is not None


async def test_export_streams_owned_rows_with_vectors(store: Store) -> None:
    await insert(store, ALICE, "one", seed=1)
    await insert(store, ALICE, "two", seed=2)
    await insert(store, BOB, "bob's")
    rows = [(learning, vector) async for learning, vector in store.export(ALICE)]
    assert [learning.text for learning, _ in rows] == ["one", "two"]
    assert all(vector is not None and vector.shape == (TEST_DIM,) for _, vector in rows)
    # SQLite stores int8 with a per-vector scale (`stores.search.embeddings`): within half a step of that scale.
    step = float(np.abs(unit_vector(1)).max()) / 127
    np.testing.assert_allclose(rows[0][1], unit_vector(1), atol=step / 2 * (1 + 1e-5))  # type: ignore[arg-type]


async def test_existing_texts(store: Store) -> None:
    await insert(store, ALICE, "one")
    assert await store.existing_texts(ALICE, "learning", ["one", "two"]) == {"one"}
    assert await store.existing_texts(BOB, "learning", ["one"]) == set()


async def test_hnsw_partition_agrees_with_exact_search(backend: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((20, TEST_DIM)).astype(np.float32)
    vectors = centres[np.arange(400) % 20] + 0.3 * rng.standard_normal((400, TEST_DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    exact = make_store(backend, tmp_path / "exact")
    approximate = make_store(backend, tmp_path / "ann", ann_threshold=100)
    try:
        for s in (exact, approximate):
            await s.apply(
                ALICE, [Insert(_with_vector(ALICE, f"item {i}", v), created()) for i, v in enumerate(vectors)]
            )
        overlap = []
        for centre in centres:
            request = SearchRequest(
                vector=centre / np.linalg.norm(centre), terms=[], filters=Filters(), vector_k=10, text_k=0
            )
            a = {c.id for c in await exact.search(ALICE, request)}
            b = {c.id for c in await approximate.search(ALICE, request)}
            overlap.append(len(a & b) / 10)
        assert float(np.mean(overlap)) >= 0.9
    finally:
        await exact.aclose()
        await approximate.aclose()
    assert list((tmp_path / "ann").glob("*.ann/*.hnsw")), "the HNSW index is persisted next to the file"


def _with_vector(scope: Scope, text: str, vector: np.ndarray) -> NewLearning:
    return NewLearning(
        tenant=scope.tenant,
        user=scope.user,
        text=text,
        vector=vector,
        embedding_model="test:model",
        simhash64=simhash64_hex(text),
        namespace="learning",
    )
