"""Learnings' vectors on PostgreSQL: kept in the row (storage MAIN, not pgvector's EXTERNAL, which moved a 384-dim
vector of a row over about 2 kB to the TOAST table) and read back exactly as written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import psycopg
import pytest

from learnloop.models import EventAction, Scope
from learnloop.simhash import simhash64_hex
from learnloop.stores.base import EventDraft, Insert, NewLearning
from learnloop.stores.postgres.connection import connect
from tests.conftest import make_store
from tests.support.postgres import database_url, drop_databases

pytestmark = pytest.mark.postgres

ALICE = Scope(tenant="t1", user="alice")


def test_a_vector_reads_back_as_the_float32_bytes_written(tmp_path: Path) -> None:
    conn = connect(database_url(tmp_path))
    try:
        values = np.random.default_rng(3).standard_normal(384).astype(np.float32)
        values[:3] = [0.0, -1.5e-30, 3.4e38]
        read = conn.execute("SELECT ?::vector", (values,)).fetchone()[0]
        assert read == values.tobytes()
    finally:
        conn.close()
        drop_databases()


async def test_a_learnings_vector_stays_in_its_row(tmp_path: Path) -> None:
    store = make_store("postgres", tmp_path, dimension=384)
    await store.start()
    rng = np.random.default_rng(5)
    # Words that do not compress, so the row stays over the 2 kB at which PostgreSQL moves values out of it.
    text = " ".join("".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), 7)) for _ in range(120))
    vector = rng.standard_normal(384).astype(np.float32)
    record = NewLearning(
        tenant=ALICE.tenant,
        user=ALICE.user,
        text=text,
        vector=vector / np.linalg.norm(vector),
        embedding_model="test:model",
        simhash64=simhash64_hex(text),
        namespace="learning",
    )
    try:
        result = await store.apply(ALICE, [Insert(record, EventDraft("person", EventAction.CREATED))])
        assert result.learnings[0] is not None
        learning_id = result.learnings[0].id
    finally:
        await store.aclose()
    try:
        with psycopg.connect(database_url(tmp_path), autocommit=True) as raw:
            storage = raw.execute(
                "SELECT attstorage FROM pg_attribute WHERE attrelid = 'learnings'::regclass AND attname = 'embedding'"
            ).fetchone()
            assert storage == ("m",)
            # Out of line, the row would hold an 18-byte pointer to the TOAST table instead of the vector.
            inline = raw.execute(
                "SELECT pg_column_size(embedding) = 8 + 4 * vector_dims(embedding) FROM learnings WHERE id = %s",
                (learning_id,),
            ).fetchone()
            assert inline == (True,)
    finally:
        drop_databases()
