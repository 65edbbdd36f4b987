"""Tool-layer rows as `learnloop.tools.models`, with the figures derived from them (confidence, decay, rates).

Rows are positional, in the order of the column lists below: plain column names every SQL backend can
select. JSON columns may come as text (SQLite) or already decoded (a backend with a JSON type).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ..tools.decay import Knowledge, decayed
from ..tools.models import (
    Insight,
    LearnedPair,
    QueryTemplate,
    RecoveryPattern,
    SignalKind,
    Strength,
    ToolSignal,
    ToolStat,
)
from ..tools.templates import template_confidence

__all__ = [
    "INSIGHT_COLUMNS",
    "PAIR_COLUMNS",
    "RECOVERY_COLUMNS",
    "SIGNAL_COLUMNS",
    "TEMPLATE_COLUMNS",
    "at",
    "insight_from_row",
    "owner",
    "pair_from_row",
    "recovery_from_row",
    "signal_from_row",
    "stat_from_row",
    "template_from_row",
]

SIGNAL_COLUMNS = (
    "id, tenant, user_id, session, kind, tool, tools, arguments, ok, error_type, error, fingerprint, latency_ms, "
    "strength, intent, query_hash, query_text, applied, at"
)
TEMPLATE_COLUMNS = (
    "id, tenant, user_id, intent, tool, signature, params, description, successes, failures, feedback_positive, "
    "feedback_negative, prior, latency_sum, latency_n, origin, status, created_at, last_used_at"
)
RECOVERY_COLUMNS = (
    "id, tenant, user_id, fingerprint, error_type, failed_tool, failed_params, recovery_tool, recovery_params, "
    "description, times_applied, times_succeeded, status, created_at, last_used_at"
)
PAIR_COLUMNS = "id, tenant, user_id, tool, query_hash, query_text, confidence, uses, strength, created_at, last_used_at"
INSIGHT_COLUMNS = "type, key, value, sample_size, confidence, updated_at"


def at(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def owner(user_id: str) -> str | None:
    return user_id or None


def _json(value: Any, default: Any) -> Any:
    if not value:
        return default
    return json.loads(value) if isinstance(value, str) else value


def signal_from_row(row: tuple[Any, ...]) -> ToolSignal:
    return ToolSignal(
        id=row[0],
        tenant=row[1],
        user=owner(row[2]),
        session=row[3],
        kind=SignalKind(row[4]),
        tool=row[5],
        tools=_json(row[6], []),
        arguments=_json(row[7], {}),
        ok=None if row[8] is None else bool(row[8]),
        error_type=row[9],
        error=row[10],
        fingerprint=row[11],
        latency_ms=row[12],
        strength=None if row[13] is None else Strength(row[13]),
        intent=row[14],
        query_hash=row[15],
        query=row[16],
        applied=bool(row[17]),
        at=at(row[18]),
    )


def template_from_row(
    row: tuple[Any, ...], now: datetime, examples: list[str] | None = None, similarity: float | None = None
) -> QueryTemplate:
    successes, failures, positive, negative, prior = row[8], row[9], row[10], row[11], row[12]
    confidence = template_confidence(successes, failures, positive, negative, prior)
    return QueryTemplate(
        id=row[0],
        tenant=row[1],
        user=owner(row[2]),
        intent=row[3],
        tool=row[4],
        signature=row[5],
        params=_json(row[6], {}),
        description=row[7],
        successes=successes,
        failures=failures,
        feedback_positive=positive,
        feedback_negative=negative,
        confidence=round(confidence, 6),
        effective_confidence=round(decayed(confidence, row[18], now, Knowledge.TEMPLATE), 6),
        avg_latency_ms=round(row[13] / row[14], 3) if row[14] else 0.0,
        examples=examples or [],
        origin=row[15],
        status=row[16],
        similarity=None if similarity is None else round(similarity, 6),
        created_at=at(row[17]),
        last_used_at=at(row[18]),
    )


def recovery_from_row(row: tuple[Any, ...], now: datetime) -> RecoveryPattern:
    applied, succeeded = row[10], row[11]
    confidence = succeeded / applied if applied else 0.0
    return RecoveryPattern(
        id=row[0],
        tenant=row[1],
        user=owner(row[2]),
        fingerprint=row[3],
        error_type=row[4],
        failed_tool=row[5],
        failed_params=_json(row[6], {}),
        recovery_tool=row[7],
        recovery_params=_json(row[8], {}),
        description=row[9],
        times_applied=applied,
        times_succeeded=succeeded,
        confidence=round(confidence, 6),
        effective_confidence=round(decayed(confidence, row[14], now, Knowledge.RECOVERY), 6),
        status=row[12],
        created_at=at(row[13]),
        last_used_at=at(row[14]),
    )


def pair_from_row(row: tuple[Any, ...], now: datetime) -> LearnedPair:
    return LearnedPair(
        id=row[0],
        tenant=row[1],
        user=owner(row[2]),
        tool=row[3],
        query_hash=row[4],
        query=row[5],
        confidence=round(row[6], 6),
        weight=round(decayed(row[6], row[10], now, Knowledge.USER_PATTERN), 6),
        uses=row[7],
        strength=Strength(row[8]),
        created_at=at(row[9]),
        last_used_at=at(row[10]),
    )


def stat_from_row(row: tuple[Any, ...]) -> ToolStat:
    intent, tool, successes, failures, latency_sum, latency_n, last = row[:7]
    total = successes + failures
    return ToolStat(
        intent=intent,
        tool=tool,
        successes=successes,
        failures=failures,
        success_rate=round(successes / total, 6) if total else 0.0,
        avg_latency_ms=round(latency_sum / latency_n, 3) if latency_n else 0.0,
        last_used_at=at(last),
    )


def insight_from_row(row: tuple[Any, ...], now: datetime) -> Insight:
    return Insight(
        type=row[0],
        key=row[1],
        value=_json(row[2], {}),
        sample_size=row[3],
        confidence=row[4],
        effective_confidence=round(decayed(row[4], row[5], now, Knowledge.INSIGHT), 6),
        updated_at=at(row[5]),
    )
