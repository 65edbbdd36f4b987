"""A learning's keyword terms are stored with it (`learnings.index_terms`), so a partition loads without
tokenising texts: every write keeps them in step with the text, topic and tags; an edit below learnloop clears
them; rows from before the column get them from the idle backfill; a load ranks the same either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from learnloop.models import Filters
from learnloop.stores.archive import TenantArchive
from learnloop.stores.base import Insert, SearchRequest, Store, Update
from learnloop.stores.parts import parts_of
from learnloop.stores.search.embeddings import embedding_blob, embedding_vectors
from learnloop.stores.search.keywords import TermCodebook
from learnloop.stores.search.partition import Partition
from learnloop.stores.search.row_codes import Codebook
from learnloop.stores.search.row_decoding import decode_rows, row_codes
from learnloop.stores.search.stored_terms import document_terms, parse_terms, stored_terms
from learnloop.stores.sql.terms_backfill import _Cursor, backfill_terms
from learnloop.terms import stem
from tests.conftest import TEST_DIM, make_store, unit_vector
from tests.stores.test_contract import ALICE, created, insert, record

TEXTS = [
    f"Mash the {grain} at {60 + i % 9} C, mash out and sparge the {grain}"
    for i, grain in enumerate(["pilsner", "munich", "vienna", "wheat", "rye", "oats"] * 5)
]


def test_the_stored_form_parses_to_the_same_counts_in_the_same_order() -> None:
    text, topic, tags = "Boil the wort; boiling wort foams. Boil 60 minutes", "boil", ["kettle", "boil"]
    counts = document_terms(text, topic, tags)
    assert counts["boil"] == 5
    parsed = parse_terms(stored_terms(text, topic, tags))
    assert list(parsed.items()) == list(counts.items()), "the keyword index numbers terms in this order"
    assert stored_terms("the and of", "", []) == ""  # no terms is not unknown (NULL)


async def sql(store: Store, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    def run(conn: Any) -> list[tuple[Any, ...]]:
        cursor = conn.execute(statement, params)
        return [tuple(row) for row in cursor.fetchall()] if cursor.description else []

    result: list[tuple[Any, ...]] = await store._run(run)  # type: ignore[attr-defined]
    return result


async def stored(store: Store) -> dict[int, tuple[str | None, str | None]]:
    """Each learning's stored terms and what they should be."""
    rows = await sql(store, "SELECT id, index_terms, text, topic, tags FROM learnings ORDER BY id")
    return {r[0]: (r[1], stored_terms(r[2], r[3], json.loads(r[4]))) for r in rows}


async def test_every_write_stores_the_terms_of_the_row_as_written(store: Store) -> None:
    first = await insert(store, ALICE, "Mash at 66 C for the body", topic="mash", tags=("grain",))
    second = await insert(store, ALICE, "Whirlpool hops for 20 minutes")
    await store.apply(ALICE, [Update(first, {"text": "Mash at 68 C, sweeter"}, created())])
    await store.apply(ALICE, [Update(second, {"tags": ["hops", "whirlpool"]}, created())])
    third = await insert(store, ALICE, "Chill to 20 C")
    await store.apply(ALICE, [Update(third, {"topic": "cooling"}, created())])
    await store.apply(ALICE, [Update(third, {"confidence": 0.9}, created())])  # no term field: kept
    rows = await stored(store)
    assert all(have == want and have for have, want in rows.values()), rows


async def test_an_edit_below_learnloop_clears_the_terms_and_a_load_tokenises_the_row(
    backend: str, tmp_path: Path
) -> None:
    store = make_store(backend, tmp_path)
    await store.start()
    try:
        edited = await insert(store, ALICE, "Mash at 66 C")
        kept = await insert(store, ALICE, "Boil for 60 minutes")
        await sql(store, "UPDATE learnings SET text = ? WHERE id = ?", ("Decoction mash for melanoidins", edited))
        terms = stored_terms("Boil for 60 minutes", "", ["lager"])
        await sql(store, "UPDATE learnings SET tags = ?, index_terms = ? WHERE id = ?", ('["lager"]', terms, kept))
        rows = await stored(store)
        assert rows[edited][0] is None
        assert rows[kept][0] is not None and rows[kept][0] == rows[kept][1], "set in the same statement: kept"
    finally:
        await store.aclose()
    store = make_store(backend, tmp_path)  # a new process: the partition loads from the rows
    await store.start()
    try:
        request = SearchRequest(vector=None, terms=["decoction"], filters=Filters(), text_k=5)
        assert [c.id for c in await store.search(ALICE, request)] == [edited]
    finally:
        await store.aclose()


async def keyword_hits(backend: str, folder: Path) -> list[tuple[int, float | None, float | None]]:
    """Every learning's keyword score and coverage for one query (the same to the bit, or the load differs)."""
    store = make_store(backend, folder)
    await store.start()
    try:
        # Every row matches within k, so rows of tied scores, which a load may read in another order, are all in.
        request = SearchRequest(vector=unit_vector(3), terms=["mash", "rye", "sparge"], filters=Filters(), text_k=50)
        return sorted((c.id, c.text_score, c.text_coverage) for c in await store.search(ALICE, request))
    finally:
        await store.aclose()


async def test_rows_from_before_the_column_are_backfilled_and_rank_the_same(backend: str, tmp_path: Path) -> None:
    store = make_store(backend, tmp_path)
    await store.start()
    try:
        await store.apply(ALICE, [Insert(record(ALICE, text, seed=i), created()) for i, text in enumerate(TEXTS)])
        ids = sorted(await stored(store))
    finally:
        await store.aclose()
    with_terms = await keyword_hits(backend, tmp_path)
    assert with_terms

    store = make_store(backend, tmp_path)
    await store.start()
    try:  # as the migration leaves an older database: no terms, and the walk's bound at its newest row
        await sql(store, "UPDATE learnings SET index_terms = NULL")
        await sql(store, "UPDATE store_meta SET value = ? WHERE key = 'index_terms_unstored_through'", (ids[-1],))
        await sql(store, "DELETE FROM store_meta WHERE key = 'index_terms_checked_through'")
    finally:
        await store.aclose()
    assert await keyword_hits(backend, tmp_path) == with_terms, "tokenised at load: the same scores"

    store = make_store(backend, tmp_path)
    await store.start()
    try:
        changed = ids[12]  # edited after the pass read it and before it wrote: left for the load to tokenise
        cursor = _Cursor()
        steps = [await store._run(backfill_terms, cursor, 10) for _ in range(2)]  # type: ignore[attr-defined]
        await sql(store, "UPDATE learnings SET index_terms = NULL WHERE id = ?", (changed,))
        steps += [await store._run(backfill_terms, cursor, 10) for _ in range(2)]  # type: ignore[attr-defined]
        assert steps == [(10, True), (10, True), (10, False), (0, False)]
        rows = await stored(store)
        assert [i for i, (have, want) in rows.items() if have != want] == [changed]
        checked = await sql(store, "SELECT value FROM store_meta WHERE key = 'index_terms_checked_through'")
        assert checked == [(ids[-1],)], "the next process starts where this one stopped"
        assert await store._run(backfill_terms, _Cursor(), 10) == (0, False)  # type: ignore[attr-defined]
    finally:
        await store.aclose()
    assert await keyword_hits(backend, tmp_path) == with_terms


async def test_an_imported_archive_gets_terms_from_its_own_text(store: Store, backend: str, tmp_path: Path) -> None:
    await insert(store, ALICE, "Mash at 66 C", tags=("grain",))
    archive = parts_of(store).archive
    assert archive is not None
    rows = [row async for row in archive.export_tenant("t1")]
    for row in rows:
        if row.kind == "learnings":
            row.row["index_terms"] = "forged terms"
    (tmp_path / "target").mkdir()
    target = make_store(backend, tmp_path / "target")
    await target.start()
    try:
        target_archive: TenantArchive | None = parts_of(target).archive
        assert target_archive is not None
        await target_archive.import_tenant("t1", rows)
        assert [have == want for have, want in (await stored(target)).values()] == [True]
    finally:
        await target.aclose()


def test_a_load_decoded_by_columns_holds_what_rows_decoded_one_by_one_hold() -> None:
    """`decode_rows` (a whole load) against `row_codes` (a replayed row), on rows with and without stored terms,
    tags, dates and statuses: the same columns, and keyword scores the same to the bit."""
    rows = []
    for i, text in enumerate(TEXTS):
        tags = json.dumps(["grain", f"batch{i % 3}"] if i % 2 else [])
        terms = None if i % 4 == 0 else stored_terms(text, "mash" if i % 5 else "", json.loads(tags))
        identity = (i + 1, "verified" if i % 3 else "candidate", None if i % 7 else "equipment", "learning", "fact")
        dates = (1000.0 + i, None if i % 2 else 2000.0 + i, None, None)
        topic = "mash" if i % 5 else ""
        rows.append((*identity, f"{i:016x}", embedding_blob(unit_vector(i)), text, topic, tags, i, *dates, terms))
    by_columns, by_rows = (Partition(TEST_DIM, 0, 1 << 30, None, lambda seq: None) for _ in range(2))
    codebook, vocabulary = Codebook(), TermCodebook()
    by_columns.restore(decode_rows(rows, TEST_DIM, codebook, vocabulary, 0))
    codes = [row_codes(row, codebook, vocabulary) for row in rows]
    by_rows.bulk_load([row[0] for row in rows], embedding_vectors([row[6] for row in rows], TEST_DIM), codes)
    for name in ("ids", "vectors", "status", "category", "namespace", "type", "simhash", "hits", "updated_at"):
        assert np.array_equal(getattr(by_columns, name)[: len(rows)], getattr(by_rows, name)[: len(rows)]), name
    for name in ("said_at", "event_at", "event_until"):
        assert np.array_equal(
            getattr(by_columns, name)[: len(rows)], getattr(by_rows, name)[: len(rows)], equal_nan=True
        )
    assert list(by_columns.tags[: len(rows)]) == list(by_rows.tags[: len(rows)])
    query = vocabulary.known([stem(w) for w in ("mash", "rye", "sparge", "grain", "batch1")])
    assert np.array_equal(by_columns.keywords.scores(query), by_rows.keywords.scores(query)[: len(rows)])
