"""Purging deprecated learnings, forgetting a user, and streaming an export."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from ...models import EventAction, Learning, Scope
from ..base import AppendEvent, EventDraft, Vector
from .dialect import Connection, dialect_of
from .rows import LEARNING_COLUMNS, LEARNING_ROWS, learning_from_row, vector_from_blob
from .tools_scrub import anonymise_failures
from .transactions import write_transaction
from .writes import apply_operations, owner_clause

__all__ = ["export_batch", "forget_user", "purge_deprecated"]


def purge_deprecated(conn: Connection, scope: Scope, older_than: datetime, actor: str, now: datetime) -> list[int]:
    clause, params = owner_clause(scope)
    with write_transaction(conn):
        ids = [
            r[0]
            for r in conn.execute(
                f"SELECT id FROM learnings WHERE {clause} AND status = 'deprecated' AND updated_at < ?",
                [*params, older_than.timestamp()],
            )
        ]
        if ids:
            marks = ", ".join("?" for _ in ids)
            conn.execute(f"DELETE FROM learnings WHERE id IN ({marks})", ids)
            conn.execute(
                f"DELETE FROM learning_sources WHERE tenant = ? AND learning_id IN ({marks})", [scope.tenant, *ids]
            )
            conn.execute(
                f"DELETE FROM learning_links WHERE tenant = ? AND (learning_id IN ({marks}) OR other_id IN ({marks}))",
                [scope.tenant, *ids, *ids],
            )
            draft = EventDraft(actor=actor, action=EventAction.PURGED, data={"ids": ids})
            apply_operations(conn, scope, [AppendEvent(event=draft)], now)
    return ids


def forget_user(conn: Connection, tenant: str, user: str, user_tables: Sequence[str], now: datetime) -> dict[str, int]:
    """Every row of the user goes; tenant-global learnings they contributed stay, without their name, and so do
    their failed tool calls, anonymised (seed 001 §8.10)."""
    removed: dict[str, int] = {}
    with write_transaction(conn):
        if "tool_signals" in user_tables:
            removed["anonymised_failures"] = anonymise_failures(conn, tenant, user)
        for table in ("learning_counters", "learnings", "events", "vector_changes", *user_tables):
            cursor = conn.execute(f"DELETE FROM {table} WHERE tenant = ? AND user_id = ?", (tenant, user))
            removed[table] = cursor.rowcount
        cursor = conn.execute(
            "UPDATE learnings SET source_author = NULL, source_session = NULL, source_message = NULL, "
            "source_interaction = NULL WHERE tenant = ? AND user_id = '' AND source_author = ?",
            (tenant, user),
        )
        removed["anonymised"] = cursor.rowcount
        conn.execute(
            "UPDATE learning_sources SET author = NULL, session = NULL, message = NULL, interaction = NULL "
            "WHERE tenant = ? AND user_id = '' AND author = ?",
            (tenant, user),
        )
        for column in ("before", "after"):
            scrubbed, by_author = dialect_of(conn).scrub_source(column)
            conn.execute(f"UPDATE events SET {column} = {scrubbed} WHERE tenant = ? AND {by_author}", (tenant, user))
        conn.execute("UPDATE store_meta SET value = value + 1 WHERE key = 'forget_epoch'")
        conn.execute(
            "INSERT INTO events (tenant, user_id, learning_id, actor, action, panel, at, data) "
            "VALUES (?, '', NULL, 'system:forget', ?, 'learning', ?, ?)",
            (tenant, EventAction.USER_FORGOTTEN.value, now.timestamp(), json.dumps(removed)),
        )
    dialect_of(conn).after_forget(conn)
    return removed


def export_batch(conn: Connection, scope: Scope, after_id: int) -> list[tuple[Learning, Vector | None]]:
    clause, params = owner_clause(scope)
    rows = conn.execute(
        f"SELECT {LEARNING_COLUMNS}, embedding FROM {LEARNING_ROWS} WHERE {clause} AND id > ? ORDER BY id LIMIT 500",
        [*params, after_id],
    ).fetchall()
    return [(learning_from_row(row[:-1]), None if row[-1] is None else vector_from_blob(row[-1])) for row in rows]
