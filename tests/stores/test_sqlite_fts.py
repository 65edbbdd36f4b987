"""SQLite's full-text index keeps only which rows hold a term (migration 0015: `detail=none`, `columnsize=0`):
listing's word filter still finds words the tokenizer splits ("7.5", "O'Brien"), and a file migrated from the
full index finds what it found before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from learnloop.stores.records import ListQuery
from learnloop.stores.sqlite import SQLiteStore
from learnloop.stores.sqlite.dialect import match_expression
from tests.conftest import TEST_DIM
from tests.stores.test_contract import ALICE, insert

TEXTS = (
    "Dead space is 7.5 litres on the Gen 1",
    "O'Brien's kettle boils over with the lid on",
    "Mash at 66 C for an hour",
)


def test_a_split_word_asks_for_all_of_its_parts() -> None:
    assert match_expression("7.5 litres", prefix=True) == '("7" AND "5"*) OR "litres"*'
    assert match_expression("o'brien boil") == '("o" AND "brien") OR "boil"'


def open_store(path: Path) -> SQLiteStore:
    return SQLiteStore(path, embedding_model="test:model", dimension=TEST_DIM)


async def found(store: SQLiteStore, text: str) -> list[str]:
    page = await store.list_learnings(ALICE, ListQuery(text=text))
    return sorted(learning.text for learning in page.items)


async def test_listing_finds_words_in_the_smaller_index_as_in_the_full_one(tmp_path: Path) -> None:
    path = tmp_path / "fts.db"
    store = open_store(path)
    try:
        for text in TEXTS:
            await insert(store, ALICE, text)
    finally:
        await store.aclose()
    # The file as before migration 0015: the full index (positions and column sizes), all its rows indexed.
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP TABLE learnings_fts")
        conn.execute(
            "CREATE VIRTUAL TABLE learnings_fts USING fts5(text, topic, tags, scope_token, content = 'learnings', "
            "content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        conn.execute("INSERT INTO learnings_fts (learnings_fts) VALUES ('rebuild')")
        conn.execute("DELETE FROM schema_migrations WHERE version = 15")
    conn.close()
    store = open_store(path)  # migrates again
    try:
        assert await found(store, "7.5") == [TEXTS[0]]
        assert await found(store, "O'Brien") == [TEXTS[1]]
        assert await found(store, "boiling lit") == sorted(TEXTS[:2])
        await insert(store, ALICE, "Lid off for the last 10.5 minutes")  # kept up to date by the triggers
        assert await found(store, "10.5") == ["Lid off for the last 10.5 minutes"]
    finally:
        await store.aclose()
    conn = sqlite3.connect(path)
    schema = dict(conn.execute("SELECT name, sql FROM sqlite_schema WHERE name LIKE 'learnings_%'").fetchall())
    conn.close()
    assert "detail = none" in schema["learnings_fts"] and "columnsize = 0" in schema["learnings_fts"]
    assert "learnings_fts_docsize" not in schema
    assert schema["learnings_by_session"].endswith("WHERE source_session IS NOT NULL")
