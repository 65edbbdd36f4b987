"""Learnings' embeddings are stored as tagged int8 with a per-vector scale (about a quarter of float32's bytes),
read back within half a step of the scale; a file whose rows hold float32 or float16 embeddings (as earlier
versions wrote them) opens and answers as before, and its rows are rewritten in place."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from learnloop.models import Filters
from learnloop.stores.base import Insert, SearchRequest
from learnloop.stores.search.embeddings import (
    embedding_blob,
    embedding_halves,
    embedding_vector,
    embedding_vectors,
    quantised_rows,
)
from learnloop.stores.sqlite import SQLiteStore
from learnloop.stores.sqlite.connection import connect
from learnloop.stores.sqlite.embedding_storage import _Cursor, shrink_embeddings
from tests.conftest import TEST_DIM, unit_vector
from tests.stores.test_contract import ALICE, BOB, created, record


def half_blob(vector: np.ndarray) -> bytes:
    """A learning's embedding as versions before int8 stored it: tagged float16."""
    return b"\x02" + np.asarray(vector, dtype=np.float16).tobytes()


def test_an_embedding_is_stored_in_a_byte_a_component_and_read_back_closely() -> None:
    vector = unit_vector(4)
    blob = embedding_blob(vector)
    assert len(blob) == TEST_DIM + 5, "a tag, the scale, a byte per component"
    step = float(np.abs(vector).max()) / 127
    assert np.abs(embedding_vector(blob) - vector).max() <= step / 2 * (1 + 1e-5)
    assert embedding_blob(embedding_vector(blob)) == blob, "a second round trip changes nothing"
    assert np.array_equal(embedding_vector(embedding_blob(-vector)), -embedding_vector(blob)), "symmetric steps"
    assert not embedding_vector(embedding_blob(np.zeros(TEST_DIM))).any()
    wide = vector.astype(np.float32).tobytes()  # older rows: read as they are
    assert np.array_equal(embedding_vector(wide), vector)
    half = half_blob(vector)
    assert np.array_equal(embedding_vector(half), vector.astype(np.float16).astype(np.float32))
    huge = np.full(TEST_DIM, np.inf, dtype=np.float32)  # not finite: kept as float32
    assert np.array_equal(embedding_vector(embedding_blob(huge)), huge)
    big = np.full(TEST_DIM, 1e6, dtype=np.float32)  # any magnitude: the scale follows it
    assert np.allclose(embedding_vector(embedding_blob(big)), big)
    mixed = embedding_vectors([blob, wide, half], TEST_DIM)
    assert np.array_equal(mixed, np.stack([embedding_vector(blob), vector, embedding_vector(half)]))


def test_int8_rows_read_together_are_the_rows_read_one_by_one() -> None:
    blobs = [embedding_blob(unit_vector(i)) for i in range(7)]
    one_by_one = np.stack([embedding_vector(blob) for blob in blobs])
    assert np.array_equal(embedding_vectors(blobs, TEST_DIM), one_by_one), "bit for bit: the same multiplies"
    joined = quantised_rows(b"".join(blobs), len(blobs), TEST_DIM)
    assert joined is not None and np.array_equal(joined, one_by_one)
    assert quantised_rows(b"".join(blobs) + b"\x00", len(blobs), TEST_DIM) is None
    assert quantised_rows(b"".join([half_blob(unit_vector(9)), *blobs]), len(blobs) + 1, TEST_DIM) is None
    empty = quantised_rows(b"", 0, TEST_DIM)
    assert empty is not None and empty.shape == (0, TEST_DIM)


def blob_lengths(path: Path) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        return [n for (n,) in conn.execute("SELECT length(embedding) FROM learnings ORDER BY id")]
    finally:
        conn.close()


@pytest.mark.parametrize("layout", ["float32", "float16"])
async def test_an_older_file_answers_as_before_and_is_rewritten(tmp_path: Path, layout: str) -> None:
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
            vector = unit_vector(int(text.split()[-1]))
            older = vector.astype(np.float32).tobytes() if layout == "float32" else half_blob(vector)
            conn.execute("UPDATE learnings SET embedding = ? WHERE id = ?", (older, learning_id))
        conn.execute("DELETE FROM store_meta WHERE key = 'embeddings_quantised_through'")
        # A file the float16 pass walked records its own mark: it does not stop the int8 pass.
        conn.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES ('embeddings_checked_through', 60)")
    conn.close()
    assert set(blob_lengths(path)) == {4 * TEST_DIM if layout == "float32" else 2 * TEST_DIM + 1}
    rewritten_path = tmp_path / "rewritten.db"
    shutil.copy(path, rewritten_path)

    # The idle pass, run here by hand on a connection of its own (a store runs it when idle).
    conn = connect(str(rewritten_path), "NORMAL")
    try:
        cursor = _Cursor()
        rewritten = [shrink_embeddings(conn, cursor, 25) for _ in range(4)]
        checked = conn.execute("SELECT value FROM store_meta WHERE key = 'embeddings_quantised_through'").fetchone()
        logged = conn.execute("SELECT COUNT(*) FROM vector_changes").fetchone()[0]
    finally:
        conn.close()
    assert rewritten == [(25, True), (25, True), (10, False), (0, False)]
    assert set(blob_lengths(rewritten_path)) == {TEST_DIM + 5}
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
    assert abs(older[0][1] - 1.0) < (1e-6 if layout == "float32" else 1e-3), "older rows are read as they are"
    assert [i for i, _ in newer] == [i for i, _ in older]
    assert all(abs(a - b) < 5e-3 for (_, a), (_, b) in zip(newer, older, strict=True))


def test_float16_rows_are_read_back_unconverted_and_only_when_every_row_is_float16() -> None:
    blobs = [half_blob(unit_vector(i)) for i in range(5)]
    halves = embedding_halves(blobs, TEST_DIM)
    assert halves is not None and halves.dtype == np.float16 and halves.flags.c_contiguous
    assert np.array_equal(halves.astype(np.float32), embedding_vectors(blobs, TEST_DIM))
    assert embedding_halves([*blobs, unit_vector(9).astype(np.float32).tobytes()], TEST_DIM) is None
    assert embedding_halves([*blobs, embedding_blob(unit_vector(9))], TEST_DIM) is None
    empty = embedding_halves([], TEST_DIM)
    assert empty is not None and empty.shape == (0, TEST_DIM)
