"""The tool layer's writes, each run inside one transaction held by the caller.

A call signal is one transaction: the signal row, the learned pair (strong, very strong and discovery
signals), the per-intent statistics, the template it reinforces or weakens, and the recovery pattern it
completes. The signal row, the user's own, keeps the (redacted) arguments; a template or recovery pattern
the tenant shares (user '') keeps only the call's shape (`CallRecord.pattern`, `CallRecord.shape`). The
in-memory routing index is updated as rows are written; if the transaction fails the caller drops the index
so it is reloaded from what was committed.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ...models import Scope
from ...tools.base import CallRecord, LearningPolicy, ObservationRecord
from ...tools.models import RecoveryPattern, SignalReceipt, Strength
from ...tools.recovery import describe_change, suggest
from ..search.tool_index import PairRow, ToolIndex
from ..tool_rows import RECOVERY_COLUMNS, at, recovery_from_row
from ..tool_rules import added_direction, kept_arguments, reinforced, stronger
from .dialect import Connection, dialect_of
from .rows import vector_from_blob

__all__ = ["flush_weak", "learn_pair", "write_call", "write_observation"]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


def learn_pair(
    conn: Connection,
    index: ToolIndex,
    tenant: str,
    owner_id: str,
    tool: str,
    query_hash: str,
    query_text: str | None,
    vector: np.ndarray[Any, np.dtype[np.float32]],
    embedding_model: str,
    weight: float,
    strength: Strength,
    policy: LearningPolicy,
    now: float,
) -> int:
    """Insert a query→tool pair, or reinforce the same query (or a near-identical one) already stored."""
    target = index.pair_for(owner_id, tool, query_hash)
    if target is None:
        nearest = index.nearest_pair(owner_id, tool, vector)
        if nearest is not None and nearest[1] >= policy.merge_similarity:
            target = nearest[0]
    if target is not None:
        row = conn.execute(
            "SELECT confidence, uses, strength, embedding, query_hash FROM tool_pairs WHERE id = ?", (target,)
        ).fetchone()
        if row is not None:
            confidence = reinforced(row[0], weight)
            best = stronger(strength, Strength(row[2]))
            conn.execute(
                "UPDATE tool_pairs SET confidence = ?, uses = uses + 1, strength = ?, last_used_at = ? WHERE id = ?",
                (confidence, best.value, now, target),
            )
            index.upsert_pair(
                PairRow(target, owner_id, tool, row[4], vector_from_blob(row[3]), confidence, row[1] + 1, now)
            )
            return target
    blob = dialect_of(conn).vector_param(vector)
    pair_id = int(
        conn.execute(
            # The same query may be stored with another embedding model's vector, invisible to this index:
            # it is learned again with this model's.
            "INSERT INTO tool_pairs (tenant, user_id, tool, query_hash, query_text, embedding, embedding_model, "
            "confidence, uses, strength, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?) "
            "ON CONFLICT (tenant, user_id, tool, query_hash) DO UPDATE SET query_text = excluded.query_text, "
            "embedding = excluded.embedding, embedding_model = excluded.embedding_model, "
            "confidence = excluded.confidence, uses = 1, strength = excluded.strength, "
            "last_used_at = excluded.last_used_at RETURNING id",
            (tenant, owner_id, tool, query_hash, query_text, blob, embedding_model, weight, strength.value, now, now),
        ).fetchone()[0]
    )
    index.upsert_pair(PairRow(pair_id, owner_id, tool, query_hash, vector, weight, 1, now))
    for weakest in index.weakest_pairs(owner_id, tool, policy.max_pairs_per_tool, now):
        conn.execute("DELETE FROM tool_pairs WHERE id = ?", (weakest,))
        index.remove_pair(weakest)
    return pair_id


def _upsert_stats(conn: Connection, scope: Scope, record: CallRecord, now: float) -> None:
    latency = record.latency_ms
    conn.execute(
        "INSERT INTO tool_stats (tenant, user_id, intent, tool, successes, failures, latency_sum, latency_n, "
        "last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, user_id, intent, tool) DO UPDATE SET "
        "successes = tool_stats.successes + excluded.successes, failures = tool_stats.failures + excluded.failures, "
        "latency_sum = tool_stats.latency_sum + excluded.latency_sum, "
        "latency_n = tool_stats.latency_n + excluded.latency_n, "
        "last_used_at = excluded.last_used_at",
        (
            scope.tenant,
            scope.user or "",
            record.intent,
            record.tool,
            int(record.ok),
            int(not record.ok),
            latency or 0.0,
            int(latency is not None),
            now,
        ),
    )


def _template_success(
    conn: Connection, scope: Scope, record: CallRecord, owner_id: str, policy: LearningPolicy, now: float
) -> int:
    latency = record.latency_ms
    row = conn.execute(
        "INSERT INTO tool_templates (tenant, user_id, intent, tool, signature, params, description, successes, "
        "latency_sum, latency_n, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?) "
        "ON CONFLICT (tenant, user_id, intent, tool, signature) DO UPDATE SET "
        "successes = tool_templates.successes + 1, "
        "latency_sum = tool_templates.latency_sum + excluded.latency_sum, "
        "latency_n = tool_templates.latency_n + excluded.latency_n, "
        "last_used_at = excluded.last_used_at, status = 'active' RETURNING id, embedding, embedding_model",
        (
            scope.tenant,
            owner_id,
            record.intent,
            record.tool,
            record.signature,
            _dumps(kept_arguments(record, owner_id)),
            record.intent,
            latency or 0.0,
            int(latency is not None),
            now,
            now,
        ),
    ).fetchone()
    template_id = int(row[0])
    if record.vector is not None and record.embedding_model is not None:
        stored = vector_from_blob(row[1]) if row[1] is not None and row[2] == record.embedding_model else None
        conn.execute(
            "UPDATE tool_templates SET embedding = ?, embedding_model = ? WHERE id = ?",
            (
                dialect_of(conn).vector_param(added_direction(record.vector, stored)),
                record.embedding_model,
                template_id,
            ),
        )
    if record.example:
        conn.execute(
            "INSERT INTO tool_template_examples (tenant, user_id, template_id, text, at) VALUES (?, ?, ?, ?, ?)",
            (scope.tenant, scope.user or "", template_id, record.example[:200], now),
        )
        conn.execute(
            "DELETE FROM tool_template_examples WHERE template_id = ? AND id NOT IN "
            "(SELECT id FROM tool_template_examples WHERE template_id = ? ORDER BY id DESC LIMIT ?)",
            (template_id, template_id, policy.max_examples),
        )
    return template_id


def _template_failure(conn: Connection, scope: Scope, record: CallRecord, owner_id: str) -> int | None:
    # Only the template whose exact call pattern failed is to blame (seed 001 §8.4: stale templates).
    row = conn.execute(
        "UPDATE tool_templates SET failures = failures + 1 WHERE tenant = ? AND user_id = ? AND intent = ? "
        "AND tool = ? AND signature = ? RETURNING id",
        (scope.tenant, owner_id, record.intent, record.tool, record.signature),
    ).fetchone()
    return None if row is None else int(row[0])


def _recovery(
    conn: Connection,
    scope: Scope,
    record: CallRecord,
    owner_id: str,
    previous: tuple[Any, ...],
    now: float,
) -> RecoveryPattern | None:
    _, failed_tool, failed_arguments, _, fingerprint, error_type, _ = previous
    if not record.ok:
        # The fix was tried again and did not work this time.
        conn.execute(
            "UPDATE tool_recoveries SET times_applied = times_applied + 1, last_used_at = ? WHERE tenant = ? "
            "AND user_id = ? AND fingerprint = ? AND recovery_signature = ?",
            (now, scope.tenant, owner_id, fingerprint, record.signature),
        )
        return None
    failed_params = json.loads(failed_arguments)
    if owner_id == "":
        # The failed call is read back as the user stored it; the tenant's pattern keeps only its shape.
        failed_params = record.shape(failed_tool, failed_params)
    params = kept_arguments(record, owner_id)
    row = conn.execute(
        "INSERT INTO tool_recoveries (tenant, user_id, fingerprint, error_type, failed_tool, failed_params, "
        "recovery_tool, recovery_params, recovery_signature, description, created_at, last_used_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, user_id, fingerprint, recovery_signature) "
        "DO UPDATE SET times_applied = tool_recoveries.times_applied + 1, "
        "times_succeeded = tool_recoveries.times_succeeded + 1, "
        f"last_used_at = excluded.last_used_at, status = 'active' RETURNING {RECOVERY_COLUMNS}",
        (
            scope.tenant,
            owner_id,
            fingerprint,
            error_type or "error",
            failed_tool,
            _dumps(failed_params),
            record.tool,
            _dumps(params),
            record.signature,
            describe_change(failed_tool, failed_params, record.tool, params),
            now,
            now,
        ),
    ).fetchone()
    return None if row is None else recovery_from_row(row, at(now))


def _suggestion_patterns(conn: Connection, scope: Scope, record: CallRecord, now: float) -> list[RecoveryPattern]:
    owners = ["", scope.user] if scope.user else [""]
    marks = ", ".join("?" for _ in owners)
    rows = conn.execute(
        f"SELECT {RECOVERY_COLUMNS} FROM tool_recoveries WHERE tenant = ? AND user_id IN ({marks}) AND "
        "status = 'active' AND (fingerprint = ? OR (error_type = ? AND failed_tool = ?)) LIMIT 50",
        (scope.tenant, *owners, record.fingerprint, record.error_type, record.tool),
    ).fetchall()
    return [recovery_from_row(r, at(now)) for r in rows]


def write_call(
    conn: Connection,
    index: ToolIndex,
    scope: Scope,
    record: CallRecord,
    policy: LearningPolicy,
    embedding_model: str,
    now: float,
) -> SignalReceipt:
    user_id = scope.user or ""
    knowledge_owner = "" if record.shared else user_id
    vector_usable = (
        record.vector is not None and record.embedding_model == embedding_model and record.query_hash is not None
    )
    learnable = vector_usable and record.weight > 0 and record.strength is not None
    apply_now = record.apply_now or not learnable
    previous = conn.execute(
        "SELECT id, tool, arguments, ok, fingerprint, error_type, at FROM tool_signals WHERE tenant = ? AND "
        "user_id = ? AND session = ? AND kind = 'call' ORDER BY id DESC LIMIT 1",
        (scope.tenant, user_id, record.session),
    ).fetchone()
    pending_vector = None if apply_now or record.vector is None else dialect_of(conn).vector_param(record.vector)
    signal_id = int(
        conn.execute(
            "INSERT INTO tool_signals (tenant, user_id, session, kind, tool, arguments, ok, error_type, error, "
            "fingerprint, signature, latency_ms, strength, weight, intent, query_hash, query_text, shared, applied, "
            "embedding, embedding_model, at) VALUES (?, ?, ?, 'call', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?) RETURNING id",
            (
                scope.tenant,
                user_id,
                record.session,
                record.tool,
                _dumps(record.arguments),
                int(record.ok),
                record.error_type,
                None if record.error is None else record.error[:500],
                record.fingerprint,
                record.signature,
                record.latency_ms,
                None if record.strength is None else record.strength.value,
                record.weight,
                record.intent,
                record.query_hash,
                record.query_text,
                int(record.shared),
                int(apply_now),
                pending_vector,
                None if pending_vector is None else record.embedding_model,
                now,
            ),
        ).fetchone()[0]
    )
    if learnable and record.apply_now:
        assert record.vector is not None and record.query_hash is not None and record.strength is not None
        learn_pair(
            conn,
            index,
            scope.tenant,
            user_id,
            record.tool,
            record.query_hash,
            record.query_text,
            record.vector,
            embedding_model,
            record.weight,
            record.strength,
            policy,
            now,
        )
    _upsert_stats(conn, scope, record, now)
    template_id: int | None
    if record.ok:
        template_id = _template_success(conn, scope, record, knowledge_owner, policy, now)
    else:
        template_id = _template_failure(conn, scope, record, knowledge_owner)
    recovery = None
    if previous is not None and previous[3] == 0 and previous[4] and now - previous[6] <= policy.recovery_window_s:
        recovery = _recovery(conn, scope, record, knowledge_owner, previous, now)
    suggestion = None
    if not record.ok and record.fingerprint and record.error_type:
        patterns = _suggestion_patterns(conn, scope, record, now)
        suggestion = suggest(patterns, record.fingerprint, record.error_type, record.tool)
    return SignalReceipt(
        id=signal_id,
        strength=record.strength,
        applied=apply_now,
        template_id=template_id,
        recovery=recovery,
        suggestion=suggestion,
    )


def write_observation(conn: Connection, scope: Scope, record: ObservationRecord, now: float) -> int:
    return int(
        conn.execute(
            "INSERT INTO tool_signals (tenant, user_id, session, kind, tools, intent, query_hash, query_text, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                scope.tenant,
                scope.user or "",
                record.session,
                record.kind.value,
                _dumps(list(record.tools)),
                record.intent,
                record.query_hash,
                record.query_text,
                now,
            ),
        ).fetchone()[0]
    )


def flush_weak(
    conn: Connection,
    index: ToolIndex,
    tenant: str,
    policy: LearningPolicy,
    embedding_model: str,
    now: float,
    limit: int,
) -> int:
    rows = conn.execute(
        "SELECT id, user_id, tool, query_hash, query_text, weight, strength, embedding, embedding_model "
        "FROM tool_signals WHERE tenant = ? AND applied = 0 ORDER BY id LIMIT ?",
        (tenant, limit),
    ).fetchall()
    for _, user_id, tool, query_hash, query_text, weight, strength, blob, model in rows:
        if blob is None or model != embedding_model or query_hash is None or strength is None:
            continue
        learn_pair(
            conn,
            index,
            tenant,
            user_id,
            tool,
            query_hash,
            query_text,
            vector_from_blob(blob),
            embedding_model,
            weight,
            Strength(strength),
            policy,
            now,
        )
    if rows:
        marks = ", ".join("?" for _ in rows)
        conn.execute(
            f"UPDATE tool_signals SET applied = 1, embedding = NULL, embedding_model = NULL WHERE id IN ({marks})",
            [r[0] for r in rows],
        )
    return len(rows)
