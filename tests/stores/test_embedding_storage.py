"""Learnings' embeddings are stored as tagged float16 (half the bytes), read back within float16's precision;
a file whose rows hold float32 embeddings opens and answers as before, and its rows are rewritten in place."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np

from learnloop.models import Filters
from learnloop.stores.base import Insert, SearchRequest
from learnloop.stores.search.embeddings import embedding_blob, embedding_halves, embedding_vector, embedding_vectors
from learnloop.stores.sqlite import SQLiteStore
from learnloop.stores.sqlite.connection import connect
from learnloop.stores.sqlite.embedding_storage import _Cursor, shrink_embeddings
from tests.conftest import TEST_DIM, unit_vector
from tests.stores.test_contract import ALICE, BOB, created, record


def test_an_embedding_is_stored_in_half_the_bytes_and_read_back_closely() -> None:
    vector = unit_vector(4)
    blob = embedding_blob(vector)
    assert len(blob) == 2 * TEST_DIM + 1
    assert np.abs(embedding_vector(blob) - vector).max() < 1e-3
    assert embedding_blob(embedding_vector(blob)) == blob, "a second round trip changes nothing"
    wide = vector.astype(np.float32).tobytes()  # an older row: read as it is
    assert np.array_equal(embedding_vector(wide), vector)
    huge = np.full(TEST_DIM, 1e6, dtype=np.float32)  # beyond float16: kept as float32
    assert np.array_equal(embedding_vector(embedding_blob(huge)), huge)
    mixed = embedding_vectors([blob, wide], TEST_DIM)
    assert np.array_equal(mixed, np.stack([embedding_vector(blob), vector]))


def blob_lengths(path: Path) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        return [n for (n,) in conn.execute("SELECT length(embedding) FROM learnings ORDER BY id")]
    finally:
        conn.close()


async def test_an_older_file_with_float32_embeddings_answers_as_before_and_is_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteStore(path, embedding_model="test:model", dimension=TEST_DIM)
    try:
        for scope in (ALICE, BOB):
            await store.apply(scope, [Insert(record(scope, f"note {i}", seed=i), created()) for i in range(30)])
    finally:
        await store.aclose()
    conn = sqlite3.connect(path)  # as an earlier version wrote them
    with conn:
        for learning_id, text in conn.execute("SELECT id, text FROM learnings").fetchall():
            wide = unit_vector(int(text.split()[-1])).astype(np.float32).tobytes()
            conn.execute("UPDATE learnings SET embedding = ? WHERE id = ?", (wide, learning_id))
        conn.execute("DELETE FROM store_meta WHERE key = 'embeddings_checked_through'")
    conn.close()
    assert set(blob_lengths(path)) == {4 * TEST_DIM}
    rewritten_path = tmp_path / "rewritten.db"
    shutil.copy(path, rewritten_path)

    # The idle pass, run here by hand on a connection of its own (a store runs it when idle).
    conn = connect(str(rewritten_path), "NORMAL")
    try:
        cursor = _Cursor()
        rewritten = [shrink_embeddings(conn, cursor, 25) for _ in range(4)]
        checked = conn.execute("SELECT value FROM store_meta WHERE key = 'embeddings_checked_through'").fetchone()
        logged = conn.execute("SELECT COUNT(*) FROM vector_changes").fetchone()[0]
    finally:
        conn.close()
    assert rewritten == [(25, True), (25, True), (10, False), (0, False)]
    assert set(blob_lengths(rewritten_path)) == {2 * TEST_DIM + 1}
    assert checked == (60,), "the next process starts after the rows already checked"
    assert logged >= 60, "every process's partition takes the rewritten rows"

    request = SearchRequest(vector=unit_vector(7), terms=[], filters=Filters(), vector_k=3, text_k=0)
    found = []
    for file in (path, rewritten_path):
        store = SQLiteStore(file, embedding_model="test:model", dimension=TEST_DIM)
        try:
            found.append([(c.id, c.vector_similarity or 0.0) for c in await store.search(ALICE, request)])
        finally:
            await store.aclose()
    older, newer = found
    assert abs(older[0][1] - 1.0) < 1e-6, "float32 rows are read as they are"
    assert [i for i, _ in newer] == [i for i, _ in older]
    assert all(abs(a - b) < 1e-3 for (_, a), (_, b) in zip(newer, older, strict=True))


def test_float16_rows_are_read_back_unconverted_and_only_when_every_row_is_float16() -> None:
    blobs = [embedding_blob(unit_vector(i)) for i in range(5)]
    halves = embedding_halves(blobs, TEST_DIM)
    assert halves is not None and halves.dtype == np.float16 and halves.flags.c_contiguous
    assert np.array_equal(halves.astype(np.float32), embedding_vectors(blobs, TEST_DIM))
    assert embedding_halves([*blobs, unit_vector(9).astype(np.float32).tobytes()], TEST_DIM) is None
    empty = embedding_halves([], TEST_DIM)
    assert empty is not None and empty.shape == (0, TEST_DIM)
