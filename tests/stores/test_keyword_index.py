"""The in-memory BM25 index: loading many documents at once gives exactly what adding them one by one gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learnloop.stores.search.keywords import KeywordIndex, _stable_order, held_at

documents = st.lists(st.dictionaries(st.integers(0, 30), st.integers(1, 4), max_size=8), min_size=1, max_size=40)


def _arrays(doc: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    return np.array(list(doc), dtype=np.int32), np.array(list(doc.values()), dtype=np.int32)


@settings(max_examples=60, deadline=None)
@given(before=documents, batch=documents, query=st.lists(st.integers(0, 35), min_size=1, max_size=5))
def test_adding_many_at_once_equals_adding_one_by_one(
    before: list[dict[int, int]], batch: list[dict[int, int]], query: list[int]
) -> None:
    one, many = KeywordIndex(), KeywordIndex()
    for doc in before:
        one.add(*_arrays(doc))
        many.add(*_arrays(doc))
    for doc in batch:
        one.add(*_arrays(doc))
    many.add_many(*zip(*(_arrays(doc) for doc in batch), strict=True))
    assert one.df == many.df and one.live_docs == many.live_docs and one.total_len == many.total_len
    assert np.array_equal(one.doc_len[: one.slots], many.doc_len[: many.slots])
    a, b = one.scores(query), many.scores(query)
    assert (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))
    assert np.array_equal(one.held_weight(query), many.held_weight(query))


@settings(max_examples=60, deadline=None)
@given(
    docs=documents,
    later=documents,
    dead=st.sets(st.integers(0, 79)),
    query=st.lists(st.integers(0, 35), min_size=1, max_size=5),
)
def test_held_weight_at_the_hits_is_held_weight(
    docs: list[dict[int, int]], later: list[dict[int, int]], dead: set[int], query: list[int]
) -> None:
    """What coverage reads for a search's hits (binary searches of the matched postings, frozen and recent)
    is the whole-index held weight at those slots, bit for bit."""
    index = KeywordIndex()
    index.add_many(*zip(*(_arrays(doc) for doc in docs), strict=True))
    for doc in later:
        index.add(*_arrays(doc))
    for slot in dead:
        if slot < index.slots:
            index.kill(slot)
    slots = np.arange(index.slots + 3, dtype=np.int64)[::-1]  # any order, and past the last slot
    every = index.held_weight(query)
    expected = np.array([every[s] if s < every.size else 0.0 for s in slots.tolist()])
    assert np.array_equal(held_at(index.weigh(query)[1], slots), expected)


@pytest.mark.parametrize("vocabulary", [1, 300, 65_536, 70_000, 5_000_000])
def test_postings_are_ordered_as_a_stable_sort_orders_them(vocabulary: int) -> None:
    """The radix order that loads a large index is exactly a stable sort's, small or large vocabulary."""
    terms = np.random.default_rng(vocabulary).integers(0, vocabulary, 50_000).astype(np.int32)
    assert np.array_equal(_stable_order(terms), np.argsort(terms, kind="stable"))
    assert len(_stable_order(terms[:0])) == 0


# A change to the index: add a document, kill a live slot (by its rank among the live ones), or move a live slot's
# document to a new slot (a status change: killed, then the same terms added).
changes = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.dictionaries(st.integers(0, 30), st.integers(1, 4), min_size=1, max_size=8)),
        st.tuples(st.just("kill"), st.integers(0, 1000)),
        st.tuples(st.just("move"), st.integers(0, 1000)),
    ),
    max_size=30,
)


@settings(max_examples=80, deadline=None)
@given(docs=documents, steps=changes, queries=st.lists(st.lists(st.integers(0, 35), max_size=5), min_size=1))
def test_kept_weights_score_as_weights_computed_afresh(
    docs: list[dict[int, int]], steps: list[tuple[str, object]], queries: list[list[int]]
) -> None:
    """Term weights and length normalisations kept across changes (only what a change touches is recomputed)
    give the scores, to the bit, of the same index with every kept value dropped first."""
    index = KeywordIndex()
    index.add_many(*zip(*(_arrays(doc) for doc in docs), strict=True))
    for kind, value in steps:
        for query in queries:  # weights kept from before the change
            index.weigh(query)
        live = np.flatnonzero(index.alive[: index.slots])
        if kind == "add":
            index.add(*_arrays(value))  # type: ignore[arg-type]
        elif len(live) > 1:
            slot = int(live[int(value) % len(live)])  # type: ignore[call-overload]
            terms, tf = index.terms_of(slot).copy(), _tf_of(index, slot)
            index.kill(slot)
            if kind == "move":
                index.add(terms, tf)
        kept = [index.weigh(query) for query in queries]
        index._renumbered()
        fresh = [index.weigh(query) for query in queries]
        for (kept_scores, kept_matched), (scores, matched) in zip(kept, fresh, strict=True):
            assert (kept_scores is None) == (scores is None)
            assert kept_scores is None or np.array_equal(kept_scores, scores)
            assert [(s.tolist(), w) for s, w in kept_matched] == [(s.tolist(), w) for s, w in matched]


def test_a_moved_document_keeps_every_other_terms_weights() -> None:
    index = KeywordIndex()
    index.add_many(*zip(*(_arrays({t: 1, 10 + t % 3: 2}) for t in range(9)), strict=True))
    index.weigh([10, 11, 3])
    kept = {term: index._weights[term][1] for term in (10, 11, 3)}
    terms, tf = index.terms_of(3).copy(), _tf_of(index, 3)  # document 3: terms 3 and 10
    index.kill(3)
    index.add(terms, tf)
    index.weigh([10, 11, 3])
    assert index._weights[11][1] is kept[11], "a term the moved document does not hold: kept as it was"
    assert len(index._weights[10][1]) == len(kept[10]) + 1, "its own terms: one more posting (the new slot)"


def _tf_of(index: KeywordIndex, slot: int) -> np.ndarray:
    if slot < index.based:
        return index.base_tf[index.base_offsets[slot] : index.base_offsets[slot + 1]].copy()
    return index.recent_tf[slot - index.based].copy()
