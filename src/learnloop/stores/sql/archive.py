"""Whole-tenant archives (`stores.archive.TenantArchive`): each kind is the table of that name.

Derived tables are not archived: the full-text index and the tool change log are kept by triggers as the rows
are inserted, and the import writes the partitions' change log (`vector_changes`) for every learning it adds,
so a process that has the tenant's partitions loaded catches up as after any other write.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from ...errors import ConflictError, ValidationError
from ..archive import ArchiveRow
from ..search.stored_terms import stored_terms
from .dialect import Connection, dialect_of
from .jobs import ConnectionJobs
from .rows import vector_from_blob
from .transactions import write_transaction

__all__ = ["DERIVED", "KEYS", "KINDS", "SqlTenantArchive"]

# In insert order. Every one has a `tenant` column; those with an integer `id` keep it.
KINDS = (
    "vocabularies",
    "learnings",
    "learning_counters",
    "learning_links",
    "learning_sources",
    "gate_quarantine",
    "events",
    "turns",
    "retrieval_counts",
    "write_counters",
    "tool_catalog",
    "tool_pairs",
    "tool_privacy",
    "tool_recoveries",
    "tool_signals",
    "tool_stats",
    "tool_templates",
    "tool_template_examples",
    "tool_insights",
    "agent_sessions",
    "agent_queue",
    "agent_messages",
    "agent_effects",
    "agent_experience_files",
    "agent_knowledge_pages",
    "agent_knowledge_pointers",
    "conversations",
    "holdback_settings",
    "holdback_pins",
    "user_profiles",
    "user_patterns",
    "canonical_users",
    "channel_identities",
    "link_codes",
    "link_attempts",
)
KEYS = "api_keys"
# Tables with a tenant column that are derived from the others (kept by triggers, or written by the import).
DERIVED = ("vector_changes", "tool_changes")
_PAGE = 1_000
_CHECK = 500


class SqlTenantArchive:
    def __init__(self, store: ConnectionJobs, imported: Callable[[str], None] = lambda tenant: None) -> None:
        self._store = store
        # Told on the store's thread, after an import commits: caches of this process that remember a tenant
        # as empty (the tool store's) must look again.
        self._imported = imported

    async def export_tenant(self, tenant: str, *, keys: bool = False) -> AsyncIterator[ArchiveRow]:
        for kind in (*KINDS, KEYS) if keys else KINDS:
            after: Any = None  # the position of the last row read (SQLite's rowid, PostgreSQL's ctid)
            while True:
                page = await self._store._run(_page, kind, tenant, after)
                for rowid, row in page:
                    after = rowid
                    yield ArchiveRow(kind, row)
                if len(page) < _PAGE:
                    break

    async def import_tenant(self, tenant: str, rows: Iterable[ArchiveRow]) -> dict[str, int]:
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for item in rows:
            if item.kind not in KINDS and item.kind != KEYS:
                raise ValidationError(f"unknown archive kind {item.kind!r}")
            if item.row.get("tenant") != tenant:
                raise ValidationError(f"an archive row of {item.kind} belongs to another tenant")
            by_kind.setdefault(item.kind, []).append(item.row)
        return await self._store._run(_import, tenant, by_kind, self._imported)


def _columns(conn: Connection, table: str) -> list[str]:
    """The table's stored columns (not generated ones), in order."""
    return [row[0] for row in conn.execute(dialect_of(conn).columns_query, (table,))]


def _page(conn: Connection, table: str, tenant: str, after: Any) -> list[tuple[Any, dict[str, Any]]]:
    dialect = dialect_of(conn)
    columns = _columns(conn, table)
    found = conn.execute(
        dialect.page_query(table, ", ".join(columns)),
        (tenant, dialect.first_position if after is None else after, _PAGE),
    ).fetchall()
    return [(row[0], dict(zip(columns, row[1:], strict=True))) for row in found]


def _import(
    conn: Connection,
    tenant: str,
    by_kind: dict[str, list[dict[str, Any]]],
    imported: Callable[[str], None],
) -> dict[str, int]:
    counts: dict[str, int] = {}
    if "learning_counters" not in by_kind:
        by_kind["learning_counters"] = _counters_in_rows(by_kind.get("learnings", []))
    with write_transaction(conn):
        for kind in (*KINDS, KEYS):
            if conn.execute(f"SELECT 1 FROM {kind} WHERE tenant = ? LIMIT 1", (tenant,)).fetchone():
                raise ConflictError(f"the database already holds tenant {tenant!r} ({kind}); import it elsewhere")
        for kind in (*KINDS, KEYS):
            rows = by_kind.get(kind, [])
            if not rows:
                continue
            columns = _columns(conn, kind)
            if kind == "events":
                # Appended under this database's cursor, in their order (see `stores.archive`).
                rows = sorted(rows, key=lambda r: int(r["seq"]))
                columns = [c for c in columns if c != "seq"]
            elif "id" in columns:
                _refuse_taken_ids(conn, kind, [int(r["id"]) for r in rows])
            names = ", ".join(columns)
            marks = ", ".join("?" for _ in columns)
            try:
                conn.executemany(
                    f"INSERT INTO {kind} ({names}) VALUES ({marks})", [_values(conn, kind, r, columns) for r in rows]
                )
            except dialect_of(conn).integrity_errors as exc:
                raise ConflictError(f"cannot import {kind}: {exc}") from exc
            dialect_of(conn).after_import(conn, kind)
            counts[kind] = len(rows)
        conn.executemany(
            "INSERT INTO vector_changes (tenant, user_id, learning_id) VALUES (?, ?, ?)",
            [(tenant, r["user_id"], r["id"]) for r in by_kind.get("learnings", [])],
        )
    imported(tenant)
    return counts


def _counters_in_rows(learnings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The counters an archive made before `learning_counters` existed keeps in its learnings rows."""
    return [
        {
            "learning_id": r["id"],
            "tenant": r["tenant"],
            "user_id": r.get("user_id") or "",
            "hits": r.get("hits") or 0,
            "streak": r.get("streak") or 0,
            "last_retrieved_at": r.get("last_retrieved_at"),
        }
        for r in learnings
        if r.get("hits") or r.get("streak") or r.get("last_retrieved_at") is not None
    ]


def _values(conn: Connection, kind: str, row: dict[str, Any], columns: list[str]) -> list[Any]:
    """A row's values in column order; embeddings (bytes in an archive) as the backend stores them — a
    learning's in the backend's embedding form, a tool table's as a plain vector."""
    dialect = dialect_of(conn)
    encode = dialect.embedding_param if kind == "learnings" else dialect.vector_param
    values = [row.get(c) for c in columns]
    if kind == "learnings" and "index_terms" in columns:
        # Derived from the row's own text, topic and tags, whatever the archive says (an older archive has none,
        # an edited one may hold others).
        tags = row.get("tags") or "[]"
        terms = stored_terms(row["text"], row.get("topic") or "", json.loads(tags) if isinstance(tags, str) else tags)
        values[columns.index("index_terms")] = terms
    for i, column in enumerate(columns):
        blob = values[i]
        if column == "embedding" and isinstance(blob, bytes):
            values[i] = encode(vector_from_blob(blob))
    return values


def _refuse_taken_ids(conn: Connection, table: str, ids: list[int]) -> None:
    for start in range(0, len(ids), _CHECK):
        chunk = ids[start : start + _CHECK]
        marks = ", ".join("?" for _ in chunk)
        taken = conn.execute(f"SELECT id FROM {table} WHERE id IN ({marks}) LIMIT 1", chunk).fetchone()
        if taken is not None:
            raise ConflictError(f"{table} id {taken[0]} is taken in this database; import into another one")
