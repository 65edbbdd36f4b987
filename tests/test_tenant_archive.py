"""Whole-tenant export and import: a populated tenant moved to a fresh database comes back row for row."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import learnloop
from learnloop.embedders.base import Embedder
from learnloop.errors import ConflictError
from learnloop.factory import build_engine
from learnloop.server.keys import issue_key
from learnloop.server.state import service_store_for
from learnloop.stores.search.embeddings import embedding_blob, embedding_vector
from learnloop.stores.sql import archive as archive_tables
from learnloop.stores.sql.archive import DERIVED, KEYS, KINDS
from learnloop.stores.sql.rows import vector_from_blob
from learnloop.stores.sql.store import SqlStore
from learnloop.stores.sqlite.connection import connect
from learnloop.tenant_archive import export_tenant, import_tenant
from tests.conftest import BREWING, _Shared, make_store
from tests.support.postgres import drop_databases

TENANT = "acme"
LOOKUP = {
    "name": "lookup_customer",
    "description": "Look up a customer's account, billing address and plan by email",
    "input_schema": {"type": "object", "properties": {"email": {"type": "string"}}},
}


async def populate(loop: learnloop.Loop) -> None:
    first = await loop.save("Mash at 66 C for a drier finish", user="alice", category="technique", tags=["mash"])
    await loop.save("Mash at 66 C for a drier finish", user="alice", category="technique")  # a duplicate
    await loop.save("Mash at 68 C for a fuller body", user="alice", category="technique")
    await loop.save("Our kettle boils off 4 litres an hour", user=None, category="equipment")
    await loop.save("The user prefers US-05 yeast for pale ales", user="bob", category="ingredient")
    assert first.learning is not None
    await loop.save("The user's editor is Vim.", user="alice", category="equipment")
    await loop.save("The user's editor is Emacs.", user="alice", category="equipment")  # linked for review
    await loop.update(first.learning.id, user="alice", text="Mash at 65 C for a drier finish")
    await loop.set_vocabulary({"technique": "How to brew", "equipment": "What to brew with"})
    await loop.retrieve_context("alice", "what mash temperature?")
    await loop.observe("What mash temperature should I use?", "Try 66 C.", user="alice", session="s1")
    await loop.tools.register([LOOKUP])
    await loop.tools.set_context("s1", "find the customer ann@example.com", user="alice")
    await loop.tools.record_call("s1", "lookup_customer", {"email": "ann@example.com"}, user="alice")
    await loop.agent.write_file("routing_rules.md", "# Routing\n- mash questions: mash.md\n", user="alice")
    await loop.agent.add_page({"id": "pg1", "title": "Mash guide", "content": "Step mashing"}, user="alice")
    await service_store_for(loop).create_key(issue_key(loop.tenant, "admin", name="ops").record)


def rows(path: Path, table: str, tenant: str) -> list[tuple[Any, ...]]:
    """Every row of the tenant in `table`, in a stable order; events without their database cursor."""
    with sqlite3.connect(path) as conn:
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info('{table}')")]
        if table == "events":
            kept = ", ".join(c for c in columns if c != "seq")
            return conn.execute(f"SELECT {kept} FROM events WHERE tenant = ? ORDER BY seq", (tenant,)).fetchall()
        return sorted(
            conn.execute(f"SELECT * FROM {table} WHERE tenant = ?", (tenant,)).fetchall(), key=lambda r: repr(r)
        )


async def test_a_tenant_moves_to_a_fresh_database_row_for_row(
    open_loop: Callable[..., learnloop.Loop], tmp_path: Path
) -> None:
    source = open_loop("source.db")
    try:
        await populate(source.for_tenant(TENANT))
        await source.for_tenant("other").save("Other tenant's secret recipe", user=None)
        archive = tmp_path / "acme.jsonl"
        counts = await export_tenant(source.engine, TENANT, archive)
        with_keys = tmp_path / "acme-keys.jsonl"
        await export_tenant(source.engine, TENANT, with_keys, keys=True)
    finally:
        await source.aclose()
    assert KEYS not in counts
    for kind in ("learnings", "learning_links", "learning_sources", "events", "vocabularies", "tool_catalog"):
        assert counts.get(kind, 0) > 0, kind
    assert counts.get("agent_experience_files") == 1
    assert counts.get("agent_knowledge_pages") == 1

    target = open_loop("target.db")
    try:
        with archive.open("rb") as lines:
            report = await import_tenant(target.engine, lines)
        assert report.rows == counts
        for table in KINDS:
            assert rows(tmp_path / "target.db", table, TENANT) == rows(tmp_path / "source.db", table, TENANT), table
        assert rows(tmp_path / "target.db", KEYS, TENANT) == []
        with archive.open("rb") as lines, pytest.raises(ConflictError):
            await import_tenant(target.engine, lines)  # the tenant is there already: nothing written twice
        moved = await target.for_tenant(TENANT).retrieve_context("alice", "what mash temperature?")
        assert "65 C" in moved.block
        assert (await target.for_tenant("other").list()).total == 0
    finally:
        await target.aclose()

    keyed = open_loop("keyed.db")
    try:
        with with_keys.open("rb") as lines:
            await import_tenant(keyed.engine, lines, regate=True)
    finally:
        await keyed.aclose()
    assert rows(tmp_path / "keyed.db", KEYS, TENANT) == rows(tmp_path / "source.db", KEYS, TENANT) != []


def _loop_on(backend: str, folder: Path, embedder: Embedder) -> learnloop.Loop:
    store = make_store(backend, folder, embedding_model=embedder.model_id, dimension=embedder.dimension)
    vocabulary = learnloop.Vocabulary.from_mapping(BREWING)
    return learnloop.Loop(build_engine(store, _Shared(embedder), default_vocabulary=vocabulary))  # type: ignore[arg-type]


async def _stored(loop: learnloop.Loop, table: str) -> list[dict[str, Any]]:
    """The tenant's rows of `table` as the archive reads them (events without their database's cursor)."""
    store = loop.engine.store
    assert isinstance(store, SqlStore)
    found = [row for _, row in await store._run(archive_tables._page, table, TENANT, None)]
    for row in found:
        if isinstance(row.get("embedding"), bytes):
            # SQLite keeps a learning's embedding in int8 (with its scale), PostgreSQL in pgvector's float32:
            # compared as SQLite would store each (a second round trip changes nothing), in float16, which leaves
            # out a last-bit difference of the scale.
            stored = embedding_vector(embedding_blob(vector_from_blob(row["embedding"])))
            row["embedding"] = tuple(np.asarray(stored, dtype=np.float16).tolist())
    if table == "events":
        return [{k: v for k, v in row.items() if k != "seq"} for row in sorted(found, key=lambda r: r["seq"])]
    return sorted(found, key=repr)


@pytest.mark.postgres
@pytest.mark.parametrize(("origin", "destination"), [("sqlite", "postgres"), ("postgres", "sqlite")])
async def test_a_tenant_moves_between_backends_row_for_row(
    origin: str, destination: str, tmp_path: Path, embedder: Embedder
) -> None:
    source = _loop_on(origin, tmp_path / "source", embedder)
    target = _loop_on(destination, tmp_path / "target", embedder)
    try:
        await populate(source.for_tenant(TENANT))
        archive = tmp_path / "acme.jsonl"
        counts = await export_tenant(source.engine, TENANT, archive, keys=True)
        with archive.open("rb") as lines:
            report = await import_tenant(target.engine, lines)
        assert report.rows == counts
        for table in (*KINDS, KEYS):
            assert await _stored(target, table) == await _stored(source, table), table
        moved = await target.for_tenant(TENANT).retrieve_context("alice", "what mash temperature?")
        assert "65 C" in moved.block
        # The target's own writes come after the imported ids (PostgreSQL's id sequences moved past them).
        saved = await target.for_tenant(TENANT).save("Sparge at 78 C", user="alice", category="technique")
        assert saved.learning is not None
        assert saved.learning.id > max(row["id"] for row in await _stored(source, "learnings"))
    finally:
        await source.aclose()
        await target.aclose()
        drop_databases()


def test_every_table_a_tenant_owns_is_archived_or_derived() -> None:
    """A migration that adds a tenant's table must say how it moves: archived, or rebuilt from the others."""
    conn = connect(":memory:")
    try:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        owned = {t for t in tables if "tenant" in {row[1] for row in conn.execute(f"PRAGMA table_info('{t}')")}}
    finally:
        conn.close()
    assert owned == {*KINDS, KEYS, *DERIVED}
