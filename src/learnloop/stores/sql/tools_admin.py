"""The tool layer's less frequent writes: catalog, seed templates, feedback, insights, privacy, maintenance."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ...models import Scope
from ...tools.base import CatalogEntry, InsightDraft
from ...tools.decay import ARCHIVE_BELOW
from ...tools.models import PrivacyMode, QueryTemplate, SeedTemplate, ToolInfo
from ...tools.templates import feedback_split
from ..search.tool_index import ToolIndex
from ..search.tool_index_cache import ToolIndexes
from ..tool_rows import at
from ..tool_rules import pair_faded
from .dialect import Connection, dialect_of
from .tools_reads import read_recoveries, read_templates, visible_owners
from .tools_sync import trim_changes
from .transactions import write_transaction

__all__ = [
    "list_tools",
    "maintain",
    "put_insights",
    "put_tools",
    "seed_templates",
    "set_privacy",
    "template_feedback",
]

# The tenants' routing indexes the tool store keeps (see `SqlToolStore`).
Indexes = ToolIndexes[Connection]

# The change log only has to reach back as far as the slowest process; one that falls behind reloads. Kept
# per tenant: one tenant's writes never trim another's entries.
_CHANGES_KEPT = 50_000


def put_tools(conn: Connection, keeper: Indexes, tenant: str, entries: Sequence[CatalogEntry], now: float) -> None:
    def work(index: ToolIndex) -> None:
        for e in entries:
            blob = None if e.vector is None else dialect_of(conn).vector_param(e.vector)
            conn.execute(
                "INSERT INTO tool_catalog (tenant, name, server, description, input_schema, digest, embedding, "
                "embedding_model, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (tenant, name) DO UPDATE SET server = excluded.server, "
                "description = excluded.description, input_schema = excluded.input_schema, "
                "digest = excluded.digest, updated_at = excluded.updated_at, "
                "embedding = CASE WHEN ? = 1 THEN tool_catalog.embedding ELSE excluded.embedding END, "
                "embedding_model = CASE WHEN ? = 1 THEN tool_catalog.embedding_model ELSE excluded.embedding_model END",
                (
                    tenant,
                    e.name,
                    e.server,
                    e.description,
                    json.dumps(e.input_schema, sort_keys=True),
                    e.digest,
                    blob,
                    e.embedding_model if blob is not None else None,
                    now,
                    now,
                    int(e.keep_vector),
                    int(e.keep_vector),
                ),
            )
        keeper.refresh_catalog(conn, tenant, index)

    keeper.write(conn, tenant, work)


def list_tools(conn: Connection, tenant: str, server: str | None, embedding_model: str | None) -> list[ToolInfo]:
    params: list[Any] = [tenant]
    where = "tenant = ?"
    if server is not None:
        where += " AND server = ?"
        params.append(server)
    rows = conn.execute(
        "SELECT name, description, input_schema, server, digest, embedding IS NOT NULL, embedding_model, "
        f"created_at, updated_at FROM tool_catalog WHERE {where} ORDER BY created_at, name",
        params,
    ).fetchall()
    return [
        ToolInfo(
            name=r[0],
            description=r[1],
            input_schema=json.loads(r[2]),
            server=r[3],
            digest=r[4],
            embedded=bool(r[5]) and (embedding_model is None or r[6] == embedding_model),
            created_at=at(r[7]),
            updated_at=at(r[8]),
        )
        for r in rows
    ]


def seed_templates(conn: Connection, tenant: str, seeds: Sequence[tuple[SeedTemplate, str]], now: float) -> int:
    added = 0
    with write_transaction(conn):
        for seed, signature in seeds:
            # A prior of one success and one failure: seed templates start at confidence 0.5 (seed 001 §8.2).
            cursor = conn.execute(
                "INSERT INTO tool_templates (tenant, user_id, intent, tool, signature, params, description, "
                "prior, origin, created_at, last_used_at) VALUES (?, '', ?, ?, ?, ?, ?, 1, 'seed', ?, ?) "
                "ON CONFLICT DO NOTHING",
                (
                    tenant,
                    seed.intent,
                    seed.tool,
                    signature,
                    json.dumps(seed.params, ensure_ascii=False, default=str),
                    seed.description,
                    now,
                    now,
                ),
            )
            added += cursor.rowcount
    return added


def template_feedback(
    conn: Connection, scope: Scope, ids: Sequence[int], score: float, now: datetime
) -> list[QueryTemplate]:
    if not ids:
        return []
    positive, negative = feedback_split(score)
    clause, params = visible_owners(scope)
    marks = ", ".join("?" for _ in ids)
    with write_transaction(conn):
        conn.execute(
            "UPDATE tool_templates SET feedback_positive = feedback_positive + ?, "
            f"feedback_negative = feedback_negative + ? WHERE id IN ({marks}) AND {clause}",
            [positive, negative, *ids, *params],
        )
    wanted = set(ids)
    return [t for t in read_templates(conn, scope, now, include_archived=True, limit=100_000) if t.id in wanted]


def put_insights(
    conn: Connection, tenant: str, insights: Sequence[InsightDraft], now: float, stale_before: float
) -> tuple[int, int]:
    with write_transaction(conn):
        for insight in insights:
            conn.execute(
                "INSERT INTO tool_insights (tenant, type, key, value, sample_size, confidence, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, type, key) DO UPDATE SET value = excluded.value, "
                "sample_size = excluded.sample_size, confidence = excluded.confidence, "
                "updated_at = excluded.updated_at",
                (
                    tenant,
                    insight.type,
                    insight.key,
                    json.dumps(insight.value, ensure_ascii=False, default=str, sort_keys=True),
                    insight.sample_size,
                    insight.confidence,
                    now,
                ),
            )
        pruned = conn.execute(
            "DELETE FROM tool_insights WHERE tenant = ? AND updated_at < ?", (tenant, stale_before)
        ).rowcount
    return len(insights), pruned


def set_privacy(conn: Connection, tenant: str, user: str, mode: PrivacyMode, now: float) -> None:
    with write_transaction(conn):
        conn.execute(
            "INSERT INTO tool_privacy (tenant, user_id, mode, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant, user_id) DO UPDATE SET mode = excluded.mode, updated_at = excluded.updated_at",
            (tenant, user, mode.value, now),
        )
        if mode is PrivacyMode.FULL:
            return
        # A stricter choice applies to what is stored already, not only to what comes next.
        conn.execute("UPDATE tool_pairs SET query_text = NULL WHERE tenant = ? AND user_id = ?", (tenant, user))
        conn.execute("UPDATE tool_signals SET query_text = NULL WHERE tenant = ? AND user_id = ?", (tenant, user))
        conn.execute("DELETE FROM tool_template_examples WHERE tenant = ? AND user_id = ?", (tenant, user))
        if mode is PrivacyMode.OPT_OUT:
            conn.execute("DELETE FROM tool_pairs WHERE tenant = ? AND user_id = ?", (tenant, user))
            conn.execute(
                "UPDATE tool_signals SET query_hash = NULL, embedding = NULL, embedding_model = NULL, applied = 1 "
                "WHERE tenant = ? AND user_id = ?",
                (tenant, user),
            )


def _archive(conn: Connection, table: str, ids: list[int]) -> None:
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        conn.execute(f"UPDATE {table} SET status = 'archived' WHERE id IN ({marks})", chunk)


def maintain(conn: Connection, keeper: Indexes, tenant: str, now: datetime) -> tuple[int, int, int]:
    """Archive templates and recovery patterns and delete learned pairs whose decayed confidence fell below
    `ARCHIVE_BELOW`; trim the change log."""
    everyone = Scope(tenant=tenant)
    templates = [
        t.id for t in read_templates(conn, everyone, now, limit=1_000_000) if t.effective_confidence < ARCHIVE_BELOW
    ]
    recoveries = [
        r.id for r in read_recoveries(conn, everyone, now, limit=1_000_000) if r.effective_confidence < ARCHIVE_BELOW
    ]

    def work(index: ToolIndex) -> int:
        _archive(conn, "tool_templates", templates)
        _archive(conn, "tool_recoveries", recoveries)
        rows = conn.execute("SELECT id, confidence, last_used_at FROM tool_pairs WHERE tenant = ?", (tenant,))
        faded = [pair_id for pair_id, confidence, last in rows.fetchall() if pair_faded(confidence, last, now)]
        for pair_id in faded:
            conn.execute("DELETE FROM tool_pairs WHERE id = ?", (pair_id,))
            index.remove_pair(pair_id)
        trim_changes(conn, tenant, _CHANGES_KEPT)
        return len(faded)

    pairs = keeper.write(conn, tenant, work)
    return len(templates), len(recoveries), pairs
