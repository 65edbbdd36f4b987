"""Reads for seed 001 §11's metrics and the feedback records (`stores.learning_metrics`), as SQL on the store's
thread; one read transaction per call, so the figures are of one moment."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from ...models import Scope
from ..conversations import distinct_calls
from ..learning_metrics import FeedbackRecord, LearningMetricRows
from ..retention import COUNTER_BUCKET
from .dialect import Connection, dialect_of
from .jobs import ConnectionJobs
from .transactions import read_transaction

__all__ = ["SqlLearningMetricsStore"]

T = TypeVar("T")
_COLD_START_ROWS = 100_000  # turns read for the cold-start figure (the newest users' beyond it are left out)


def _user_clause(scope: Scope, column: str = "user_id") -> tuple[str, tuple[Any, ...]]:
    if scope.user is None:
        return "tenant = ?", (scope.tenant,)
    return f"tenant = ? AND {column} = ?", (scope.tenant, scope.user)


class SqlLearningMetricsStore:
    def __init__(self, store: ConnectionJobs) -> None:
        self._store = store

    def __repr__(self) -> str:
        return f"SqlLearningMetricsStore({self._store.path!r})"

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return await self._store._run(fn, *args)

    async def feedback_records(
        self, scope: Scope, *, since: datetime, types: tuple[str, ...] = (), limit: int = 100
    ) -> list[FeedbackRecord]:
        return await self._run(_feedback_records, scope, since.timestamp(), types, limit)

    async def learning_metric_rows(
        self, scope: Scope, since: datetime, bucket_seconds: int, channel: str | None = None
    ) -> LearningMetricRows:
        return await self._run(_rows, scope, since.timestamp(), bucket_seconds, channel)


def _feedback_records(
    conn: Connection, scope: Scope, since: float, types: tuple[str, ...], limit: int
) -> list[FeedbackRecord]:
    clause, params = _user_clause(scope)
    typed = f" AND feedback_type IN ({', '.join('?' for _ in types)})" if types else ""
    with read_transaction(conn):
        spoken = conn.execute(
            f"SELECT user_id, session, turn, feedback_type, feedback_score, at FROM turns WHERE {clause} "
            f"AND feedback_type IS NOT NULL AND at >= ?{typed} ORDER BY at DESC LIMIT ?",
            (*params, since, *types, limit),
        ).fetchall()
        silent = conn.execute(
            f"SELECT user_id, session, id, feedback_type, feedback_score, finished_at FROM conversations "
            f"WHERE {clause} AND silence = 1 AND feedback_type IS NOT NULL AND finished_at >= ?{typed} "
            "ORDER BY finished_at DESC LIMIT ?",
            (*params, since, *types, limit),
        ).fetchall()
    sources: tuple[tuple[Literal["message", "silence"], list[Any]], ...] = (("message", spoken), ("silence", silent))
    records = [
        FeedbackRecord(
            user=row[0] or None,
            session=row[1],
            type=row[3],
            score=float(row[4] or 0.0),
            at=datetime.fromtimestamp(row[5], UTC),
            source=source,
            turn=str(row[2]),
        )
        for source, rows in sources
        for row in rows
    ]
    records.sort(key=lambda r: r.at, reverse=True)
    return records[:limit]


def _rows(conn: Connection, scope: Scope, since: float, step: int, channel: str | None) -> LearningMetricRows:
    dialect = dialect_of(conn)
    mine, mine_params = _user_clause(scope)
    tenant = (scope.tenant,)
    # The turn tables keep the channel; the tool tables do not (a channel's calls are read from its turns).
    turn_of, turn_params = (
        (mine, mine_params) if channel is None else (f"{mine} AND channel = ?", (*mine_params, channel))
    )

    def bucket(column: str) -> str:
        return f"{dialect.whole(f'{column} / {step}')} * {step}"

    with read_transaction(conn):
        feedback = conn.execute(
            f"SELECT {bucket('at')}, feedback_type, COUNT(*), SUM(feedback_score) FROM turns WHERE {turn_of} "
            "AND feedback_type IS NOT NULL AND at >= ? GROUP BY 1, 2",
            (*turn_params, since),
        ).fetchall()
        silence = conn.execute(
            f"SELECT {bucket('finished_at')}, feedback_type, COUNT(*), SUM(feedback_score) FROM conversations "
            f"WHERE {turn_of} AND silence = 1 AND feedback_type IS NOT NULL AND finished_at >= ? GROUP BY 1, 2",
            (*turn_params, since),
        ).fetchall()
        calls = conn.execute(
            f"SELECT {bucket('at')}, COUNT(*), SUM(ok) FROM tool_signals WHERE {mine} AND kind = 'call' "
            "AND at >= ? GROUP BY 1",
            (*mine_params, since),
        ).fetchall()
        calls_total = conn.execute(
            f"SELECT COUNT(*), SUM(ok) FROM tool_signals WHERE {mine} AND kind = 'call'", mine_params
        ).fetchone()
        recoveries = conn.execute(
            "SELECT SUM(times_applied), SUM(times_succeeded) FROM tool_recoveries WHERE tenant = ?", tenant
        ).fetchone()
        templates = conn.execute(
            "SELECT origin, SUM(successes), COUNT(*) FROM tool_templates WHERE tenant = ? GROUP BY origin", tenant
        ).fetchall()
        tool_uses = conn.execute(
            "SELECT intent, tool, SUM(successes + failures) FROM tool_stats WHERE tenant = ? AND intent <> '' "
            "GROUP BY intent, tool",
            tenant,
        ).fetchall()
        preferences = conn.execute(
            "SELECT key, value FROM tool_insights WHERE tenant = ? AND type = 'tool_preference'", tenant
        ).fetchall()
        counters = (
            []
            if scope.user is not None  # the template counters are the tenant's
            else conn.execute(
                f"SELECT {bucket('bucket')}, name, CAST(SUM(value) AS BIGINT) FROM write_counters WHERE tenant = ? "
                "AND name LIKE 'template.%' AND bucket >= ? GROUP BY 1, 2",
                (scope.tenant, int(since) // COUNTER_BUCKET * COUNTER_BUCKET),
            ).fetchall()
        )
        turns = conn.execute(
            f"SELECT user_id, steps FROM conversations WHERE {turn_of} AND status = 'done' AND user_id <> '' "
            "AND duplicate_of IS NULL "
            "ORDER BY user_id, started_at LIMIT ?",
            (*turn_params, _COLD_START_ROWS),
        ).fetchall()
        cut = None if channel is None else _channel_rows(conn, turn_of, turn_params, since, step)
    preferred: dict[str, str] = {}
    for key, value in preferences:
        tool = json.loads(value).get("preferred_tool")
        if isinstance(tool, str):
            preferred[key] = tool
    user_turns: dict[str, list[bool]] = {}
    for user, steps in turns:
        signals = json.loads(steps).get("signals") or {}
        user_turns.setdefault(user, []).append(bool(signals.get("hits")))
    rows = LearningMetricRows(
        feedback=[(int(b), t, int(n), float(s or 0.0)) for b, t, n, s in [*feedback, *silence]],
        calls=[(int(b), int(n), int(ok or 0)) for b, n, ok in calls],
        calls_total=(int(calls_total[0] or 0), int(calls_total[1] or 0)),
        recoveries=(int(recoveries[0] or 0), int(recoveries[1] or 0)),
        templates=[(origin, int(s or 0), int(n)) for origin, s, n in templates],
        tool_uses=[(intent, tool, int(n or 0)) for intent, tool, n in tool_uses],
        preferred=preferred,
        user_turns=user_turns,
        counters=[(int(b), name, int(v or 0)) for b, name, v in counters],
    )
    return rows if cut is None else replace(rows, **cut)


def _channel_rows(conn: Connection, where: str, params: tuple[Any, ...], since: float, step: int) -> dict[str, Any]:
    """The tool-call and template figures of one channel, from its turns' conversation records: the calls as
    the tool layer counted them (`distinct_calls`) and the template hits and misses their work recorded."""
    records = conn.execute(
        f"SELECT started_at, tool_calls, steps FROM conversations WHERE {where} "
        "AND duplicate_of IS NULL AND status IN ('done', 'abandoned') ORDER BY started_at DESC LIMIT ?",
        (*params, _COLD_START_ROWS),
    ).fetchall()
    calls: dict[int, list[int]] = {}
    templates: dict[int, list[float]] = {}
    total = ok_total = 0
    for started, tool_calls, steps in records:
        made = distinct_calls(json.loads(tool_calls))
        ok = sum(1 for call in made if call.get("error") is None)
        total, ok_total = total + len(made), ok_total + ok
        if started < since:
            continue
        bucket = int(started) // step * step
        if made:
            counted = calls.setdefault(bucket, [0, 0])
            counted[0], counted[1] = counted[0] + len(made), counted[1] + ok
        signals = json.loads(steps).get("signals") or {}
        hits, misses = signals.get("hits") or [], signals.get("misses") or []
        if hits or misses:
            figures = templates.setdefault(bucket, [0, 0, 0.0])
            figures[0] += len(hits)
            figures[1] += len(misses)
            figures[2] += sum(float(h.get("confidence") or 0.0) for h in hits)
    return {
        "calls": [(b, n, ok) for b, (n, ok) in sorted(calls.items())],
        "calls_total": (total, ok_total),
        "counters": [],
        "turn_templates": [(b, int(h), int(m), c) for b, (h, m, c) in sorted(templates.items())],
    }
