"""The tool layer's reads: templates, recovery patterns, statistics, insights, and their inputs."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime
from typing import Any

from ...models import Scope
from ...stores.base import Vector
from ...tools.base import InsightInputs
from ...tools.models import Insight, QueryTemplate, RecoveryPattern, ToolSignal, ToolStat
from ..search.template_directions import DirectionRow, TemplateDirections, direction_similarity
from ..tool_rows import (
    INSIGHT_COLUMNS,
    RECOVERY_COLUMNS,
    SIGNAL_COLUMNS,
    TEMPLATE_COLUMNS,
    insight_from_row,
    recovery_from_row,
    signal_from_row,
    stat_from_row,
    template_from_row,
)
from .dialect import Connection
from .rows import vector_from_blob

__all__ = [
    "insight_inputs",
    "read_insights",
    "read_recent_failures",
    "read_recoveries",
    "read_stats",
    "read_templates",
    "relevant_templates",
    "visible_owners",
]

_STAT_SUMS = (
    "intent, tool, CAST(SUM(successes) AS BIGINT), CAST(SUM(failures) AS BIGINT), SUM(latency_sum), "
    "CAST(SUM(latency_n) AS BIGINT), MAX(last_used_at)"
)


def visible_owners(scope: Scope) -> tuple[str, list[Any]]:
    """Shared knowledge plus the user's own; a tenant-wide scope sees every row of the tenant."""
    if scope.user is None:
        return "tenant = ?", [scope.tenant]
    return "tenant = ? AND user_id IN ('', ?)", [scope.tenant, scope.user]


def _examples(conn: Connection, scope: Scope, ids: list[int]) -> dict[int, list[str]]:
    """Example queries are user text: a user sees only their own, however shared the template."""
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    params: list[Any] = list(ids)
    owner_filter = ""
    if scope.user is not None:
        owner_filter = " AND user_id = ?"
        params.append(scope.user)
    found: dict[int, list[str]] = defaultdict(list)
    for template_id, text in conn.execute(
        f"SELECT template_id, text FROM tool_template_examples WHERE template_id IN ({marks}){owner_filter} "
        "ORDER BY id DESC",
        params,
    ):
        found[template_id].append(text)
    return found


def read_templates(
    conn: Connection,
    scope: Scope,
    now: datetime,
    *,
    intent: str | None = None,
    tool: str | None = None,
    vector: Vector | None = None,
    embedding_model: str | None = None,
    include_archived: bool = False,
    limit: int = 500,
) -> list[QueryTemplate]:
    clause, params = visible_owners(scope)
    where = [clause]
    if intent is not None:
        where.append("intent = ?")
        params.append(intent)
    if tool is not None:
        where.append("tool = ?")
        params.append(tool)
    if not include_archived:
        where.append("status = 'active'")
    rows = conn.execute(
        f"SELECT {TEMPLATE_COLUMNS}, embedding, embedding_model FROM tool_templates WHERE {' AND '.join(where)} "
        "ORDER BY last_used_at DESC LIMIT ?",
        [*params, limit],
    ).fetchall()
    examples = _examples(conn, scope, [r[0] for r in rows])
    out = []
    for row in rows:
        similarity = None
        if vector is not None and row[-2] is not None and row[-1] == embedding_model:
            similarity = direction_similarity(vector_from_blob(row[-2]), vector)
        out.append(template_from_row(row[:-2], now, examples.get(row[0]), similarity))
    return out


def _direction_rows(conn: Connection, tenant: str) -> list[DirectionRow]:
    return conn.execute(
        "SELECT id, user_id, intent, embedding, embedding_model FROM tool_templates "
        "WHERE tenant = ? AND status = 'active'",
        (tenant,),
    ).fetchall()


def relevant_templates(
    conn: Connection,
    directions: TemplateDirections,
    scope: Scope,
    now: datetime,
    vector: Vector | None,
    embedding_model: str,
    floor: float,
    intent: str | None,
    limit: int,
) -> list[QueryTemplate]:
    """Active templates about a query (`Directions.relevant`); only the chosen ones are read in full."""
    # Moves whenever a template's vector or status can have changed (see `template_directions`).
    fingerprint = tuple(
        conn.execute(
            "SELECT COUNT(*), CAST(SUM(CASE WHEN status = 'active' THEN 1 ELSE 0 END) AS BIGINT), MAX(last_used_at) "
            "FROM tool_templates WHERE tenant = ?",
            (scope.tenant,),
        ).fetchone()
    )
    known = directions.get(scope.tenant, embedding_model, fingerprint, lambda: _direction_rows(conn, scope.tenant))
    scores = known.relevant(scope, vector, floor, intent, limit)
    if not scores:
        return []
    chosen = list(scores)
    marks = ", ".join("?" for _ in chosen)
    full = {
        row[0]: row
        for row in conn.execute(f"SELECT {TEMPLATE_COLUMNS} FROM tool_templates WHERE id IN ({marks})", chosen)
    }
    examples = _examples(conn, scope, chosen)
    return [template_from_row(full[i], now, examples.get(i), scores[i]) for i in chosen if i in full]


def read_recoveries(
    conn: Connection,
    scope: Scope,
    now: datetime,
    *,
    fingerprint: str | None = None,
    error_type: str | None = None,
    tool: str | None = None,
    include_archived: bool = False,
    min_confidence: float = 0.0,
    limit: int = 200,
) -> list[RecoveryPattern]:
    clause, params = visible_owners(scope)
    where = [clause]
    if min_confidence > 0:
        where.append("times_succeeded >= ? * times_applied")
        params.append(min_confidence)
    for column, value in (("fingerprint", fingerprint), ("error_type", error_type), ("failed_tool", tool)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if not include_archived:
        where.append("status = 'active'")
    rows = conn.execute(
        f"SELECT {RECOVERY_COLUMNS} FROM tool_recoveries WHERE {' AND '.join(where)} "
        "ORDER BY last_used_at DESC LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [recovery_from_row(r, now) for r in rows]


def read_recent_failures(conn: Connection, scope: Scope, since: datetime, limit: int = 20) -> list[ToolSignal]:
    rows = conn.execute(
        f"SELECT {SIGNAL_COLUMNS} FROM tool_signals WHERE tenant = ? AND user_id = ? AND kind = 'call' "
        "AND ok = 0 AND at >= ? ORDER BY id DESC LIMIT ?",
        (scope.tenant, scope.user or "", since.timestamp(), limit),
    ).fetchall()
    return [signal_from_row(r) for r in rows]


def read_stats(conn: Connection, scope: Scope, intent: str | None) -> list[ToolStat]:
    params: list[Any] = [scope.tenant]
    where = "tenant = ?"
    if scope.user is not None:
        where += " AND user_id = ?"
        params.append(scope.user)
    if intent is not None:
        where += " AND intent = ?"
        params.append(intent)
    rows = conn.execute(
        f"SELECT {_STAT_SUMS} FROM tool_stats WHERE {where} GROUP BY intent, tool ORDER BY SUM(successes) DESC, tool",
        params,
    ).fetchall()
    return [stat_from_row(r) for r in rows]


def read_insights(conn: Connection, tenant: str, now: datetime, type_: str | None, limit: int = 200) -> list[Insight]:
    params: list[Any] = [tenant]
    where = "tenant = ?"
    if type_ is not None:
        where += " AND type = ?"
        params.append(type_)
    rows = conn.execute(
        f"SELECT {INSIGHT_COLUMNS} FROM tool_insights WHERE {where} ORDER BY confidence DESC, updated_at DESC LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [insight_from_row(r, now) for r in rows]


def insight_inputs(conn: Connection, tenant: str, since: datetime, now: datetime) -> InsightInputs:
    """Aggregates over every user; only shared templates and recoveries (private ones stay private)."""
    tenant_scope = Scope(tenant=tenant)
    stats = read_stats(conn, tenant_scope, None)
    users = dict(
        conn.execute(
            "SELECT intent, COUNT(DISTINCT user_id) FROM tool_stats WHERE tenant = ? GROUP BY intent", (tenant,)
        ).fetchall()
    )
    groups = [
        (error_type or "error", tool, count)
        for error_type, tool, count in conn.execute(
            "SELECT error_type, tool, COUNT(*) FROM tool_signals WHERE tenant = ? AND kind = 'call' AND ok = 0 "
            "AND at >= ? GROUP BY error_type, tool",
            (tenant, since.timestamp()),
        )
    ]
    failed = [
        (tool, json.loads(arguments))
        for tool, arguments in conn.execute(
            "SELECT tool, arguments FROM tool_signals WHERE tenant = ? AND kind = 'call' AND ok = 0 AND at >= ? "
            "ORDER BY id DESC LIMIT 2000",
            (tenant, since.timestamp()),
        )
    ]
    call_times = [
        (str(intent or ""), float(stamp))
        for intent, stamp in conn.execute(
            "SELECT intent, at FROM tool_signals WHERE tenant = ? AND kind = 'call' AND ok = 1 AND at >= ? "
            "ORDER BY id DESC LIMIT 5000",
            (tenant, since.timestamp()),
        )
    ]
    shared = Scope(tenant=tenant, user=None)
    # Example queries are a user's words: they never feed anonymised insights.
    templates = [
        t.model_copy(update={"examples": []}) for t in read_templates(conn, shared, now, limit=2000) if t.user is None
    ]
    recoveries = [r for r in read_recoveries(conn, shared, now, limit=2000) if r.user is None]
    return InsightInputs(
        stats=stats,
        users_per_intent={str(k): int(v) for k, v in users.items()},
        failure_groups=groups,
        failed_arguments=failed,
        templates=templates,
        recoveries=recoveries,
        call_times=call_times,
    )
