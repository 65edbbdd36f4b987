"""Whole-tenant archives on SQLite (`stores.archive.TenantArchive`): each kind is the table of that name.

Derived tables are not archived: the full-text index and the tool change log are kept by triggers as the rows
are inserted, and the import writes the partitions' change log (`vector_changes`) for every learning it adds,
so a process that has the tenant's partitions loaded catches up as after any other write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from ...errors import ConflictError, ValidationError
from ..archive import ArchiveRow
from ..sql.jobs import ConnectionJobs
from .connection import write_transaction

__all__ = ["DERIVED", "KEYS", "KINDS", "SQLiteTenantArchive"]

# In insert order. Every one has a `tenant` column; those with an integer `id` keep it.
KINDS = (
    "vocabularies",
    "learnings",
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
)
KEYS = "api_keys"
# Tables with a tenant column that are derived from the others (kept by triggers, or written by the import).
DERIVED = ("vector_changes", "tool_changes")
_PAGE = 1_000
_CHECK = 500


class SQLiteTenantArchive:
    def __init__(self, store: ConnectionJobs, imported: Callable[[str], None] = lambda tenant: None) -> None:
        self._store = store
        # Told on the store's thread, after an import commits: caches of this process that remember a tenant
        # as empty (the tool store's) must look again.
        self._imported = imported

    async def export_tenant(self, tenant: str, *, keys: bool = False) -> AsyncIterator[ArchiveRow]:
        for kind in (*KINDS, KEYS) if keys else KINDS:
            after = 0
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


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info('{table}')")]


def _page(conn: sqlite3.Connection, table: str, tenant: str, after: int) -> list[tuple[int, dict[str, Any]]]:
    columns = _columns(conn, table)
    names = ", ".join(columns)
    found = conn.execute(
        f"SELECT rowid, {names} FROM {table} WHERE tenant = ? AND rowid > ? ORDER BY rowid LIMIT ?",
        (tenant, after, _PAGE),
    ).fetchall()
    return [(row[0], dict(zip(columns, row[1:], strict=True))) for row in found]


def _import(
    conn: sqlite3.Connection,
    tenant: str,
    by_kind: dict[str, list[dict[str, Any]]],
    imported: Callable[[str], None],
) -> dict[str, int]:
    counts: dict[str, int] = {}
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
                    f"INSERT INTO {kind} ({names}) VALUES ({marks})", [[r.get(c) for c in columns] for r in rows]
                )
            except sqlite3.IntegrityError as exc:
                raise ConflictError(f"cannot import {kind}: {exc}") from exc
            counts[kind] = len(rows)
        conn.executemany(
            "INSERT INTO vector_changes (tenant, user_id, learning_id) VALUES (?, ?, ?)",
            [(tenant, r["user_id"], r["id"]) for r in by_kind.get("learnings", [])],
        )
    imported(tenant)
    return counts


def _refuse_taken_ids(conn: sqlite3.Connection, table: str, ids: list[int]) -> None:
    for start in range(0, len(ids), _CHECK):
        chunk = ids[start : start + _CHECK]
        marks = ", ".join("?" for _ in chunk)
        taken = conn.execute(f"SELECT id FROM {table} WHERE id IN ({marks}) LIMIT 1", chunk).fetchone()
        if taken is not None:
            raise ConflictError(f"{table} id {taken[0]} is taken in this database; import into another one")
