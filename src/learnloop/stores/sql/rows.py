"""Conversions between SQL rows and learnloop models (the shared schema: times as epoch seconds, JSON as text,
embeddings as float32 bytes when read)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from ...models import Event, Learning, LearningType, Origin, Panel, Source, Status, constructed
from ..base import NewLearning, Vector
from ..search.embeddings import embedding_vector
from ..search.stored_terms import stored_terms

__all__ = [
    "COUNTER_FIELDS",
    "LEARNING_COLUMNS",
    "LEARNING_ROWS",
    "counter_values",
    "event_from_row",
    "from_ts",
    "learning_from_row",
    "learning_snapshot",
    "new_learning_values",
    "scope_token",
    "to_ts",
    "vector_from_blob",
]


_TYPES = {t.value: t for t in LearningType}
_STATUSES = {s.value: s for s in Status}
_ORIGINS = {o.value: o for o in Origin}
_PANELS = {p.value: p for p in Panel}

LEARNING_COLUMNS = (
    "id, tenant, user_id, namespace, category, type, text, topic, tags, status, confidence, hits, streak, "
    "failures, version, revision, supersedes, simhash64, origin, source_session, source_message, "
    "source_interaction, source_context, source_author, created_at, updated_at, last_retrieved_at, "
    "embedding_model, superseded_by, status_reason, said_at, event_at, event_until"
)

# What readers select LEARNING_COLUMNS from: the learnings row joined with its counters (a view, see the
# migration `learning_counters`); writes go to the two tables.
LEARNING_ROWS = "learning_rows"
# The fields a retrieval records, kept in `learning_counters` rather than the learnings row.
COUNTER_FIELDS = ("hits", "streak", "last_retrieved_at")

# Learning field name -> column name, for the fields an Update may change in the learnings row.
FIELD_COLUMNS: dict[str, str] = {
    "namespace": "namespace",
    "category": "category",
    "type": "type",
    "text": "text",
    "topic": "topic",
    "tags": "tags",
    "status": "status",
    "confidence": "confidence",
    "failures": "failures",
    "version": "version",
    "supersedes": "supersedes",
    "simhash64": "simhash64",
    "origin": "origin",
    "updated_at": "updated_at",
    "user": "user_id",
    "superseded_by": "superseded_by",
    "status_reason": "status_reason",
    "said_at": "said_at",
    "event_at": "event_at",
    "event_until": "event_until",
}


def to_ts(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def from_ts(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _at(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def scope_token(tenant: str, user: str | None) -> str:
    """A single full-text token naming a (tenant, user) partition; hashing keeps it one token."""
    digest = hashlib.blake2b(f"{tenant}\x00{user or ''}".encode(), digest_size=8).hexdigest()
    return "s" + digest


def vector_from_blob(blob: bytes) -> Vector:
    """A stored embedding (a learning's: tagged int8, see `search.embeddings`; a tool table's: float32)."""
    return embedding_vector(blob)


def column_value(field: str, value: Any) -> Any:
    """Python value of a Learning field → column value."""
    if field == "tags":
        return json.dumps(list(value))
    if field in ("updated_at", "last_retrieved_at", "said_at", "event_at", "event_until"):
        return to_ts(value)
    if field == "user":
        return value or ""
    if hasattr(value, "value"):  # StrEnum members
        return value.value
    return value


def new_learning_values(record: NewLearning, now: datetime, vector_param: Callable[[Vector], Any]) -> dict[str, Any]:
    created = record.created_at or now
    return {
        "tenant": record.tenant,
        "user_id": record.user or "",
        "namespace": record.namespace,
        "category": record.category,
        "type": record.type.value,
        "text": record.text,
        "topic": record.topic,
        "tags": json.dumps(list(record.tags)),
        "status": record.status.value,
        "confidence": float(record.confidence),
        "failures": int(record.failures),
        "version": int(record.version),
        "revision": 1,
        "supersedes": record.supersedes,
        "simhash64": record.simhash64,
        "origin": record.origin.value,
        "source_session": record.source.session,
        "source_message": record.source.message,
        "source_interaction": record.source.interaction,
        "source_context": record.source.context,
        "source_author": record.source.author,
        "created_at": created.timestamp(),
        "updated_at": (record.updated_at or created).timestamp(),
        "embedding": vector_param(record.vector),
        "embedding_model": record.embedding_model,
        "superseded_by": None,
        "status_reason": record.status_reason,
        "said_at": to_ts(record.said_at or created),
        "event_at": to_ts(record.event_at),
        "event_until": to_ts(record.event_until),
        "scope_token": scope_token(record.tenant, record.user),
        "gate_version": record.gate_version,
        "index_terms": stored_terms(record.text, record.topic, record.tags),
    }


def counter_values(hits: int, streak: int, last_retrieved_at: datetime | None) -> dict[str, Any]:
    """A learning's counters as the columns of `learning_counters` hold them."""
    return {"hits": int(hits), "streak": int(streak), "last_retrieved_at": to_ts(last_retrieved_at)}


def learning_from_row(row: Sequence[Any]) -> Learning:
    (
        id_,
        tenant,
        user_id,
        namespace,
        category,
        type_,
        text,
        topic,
        tags,
        status,
        confidence,
        hits,
        streak,
        failures,
        version,
        revision,
        supersedes,
        simhash,
        origin,
        s_session,
        s_message,
        s_interaction,
        s_context,
        s_author,
        created_at,
        updated_at,
        last_retrieved_at,
        embedding_model,
        superseded_by,
        status_reason,
        said_at,
        event_at,
        event_until,
    ) = row
    source = constructed(
        Source,
        {
            "session": s_session,
            "message": s_message,
            "interaction": s_interaction,
            "context": s_context,
            "author": s_author,
        },
    )
    return constructed(
        Learning,
        {
            "id": id_,
            "tenant": tenant,
            "user": user_id or None,
            "namespace": namespace,
            "category": category,
            "type": _TYPES[type_],
            "text": text,
            "topic": topic,
            "tags": [] if tags == "[]" else json.loads(tags),
            "status": _STATUSES[status],
            "confidence": confidence,
            "hits": hits,
            "streak": streak,
            "failures": failures,
            "version": version,
            "revision": revision,
            "supersedes": supersedes,
            "simhash64": simhash,
            "origin": _ORIGINS[origin],
            "source": source,
            "created_at": _at(created_at),
            "updated_at": _at(updated_at),
            "last_retrieved_at": None if last_retrieved_at is None else _at(last_retrieved_at),
            "embedding_model": embedding_model,
            "superseded_by": superseded_by,
            "status_reason": status_reason,
            "said_at": None if said_at is None else _at(said_at),
            "event_at": None if event_at is None else _at(event_at),
            "event_until": None if event_until is None else _at(event_until),
        },
    )


_SNAPSHOT_EXCLUDED = frozenset({"tenant", "embedding_model", "revision"})
# Fields an event's snapshot of a learning leaves out when they hold these (JSON) values, and puts back when read:
# most learnings keep most defaults, and the full form cost 650 bytes an event, a third of a 10k-learning file.
# `status` is always kept (SQL reads it from the JSON), and so is a `source` naming anyone (a forget scrubs it).
_SNAPSHOT_DEFAULTS: dict[str, Any] = {
    "namespace": "learning",
    "category": None,
    "type": "fact",
    "topic": "",
    "tags": [],
    "confidence": 0.5,
    "hits": 0,
    "streak": 0,
    "failures": 0,
    "version": 1,
    "supersedes": None,
    "origin": "person",
    "source": {"session": None, "message": None, "interaction": None, "context": None, "author": None},
    "last_retrieved_at": None,
    "superseded_by": None,
    "status_reason": None,
    "event_at": None,
    "event_until": None,
}
# Left out when equal to `created_at` (a learning not changed since, said when it was stored).
_SNAPSHOT_AS_CREATED = ("updated_at", "said_at")
_SNAPSHOT_ORDER = tuple(name for name in Learning.model_fields if name not in _SNAPSHOT_EXCLUDED)


def learning_snapshot(learning: Learning | None) -> str | None:
    """The JSON stored in an event's before/after columns: the learning without the fields that hold their
    defaults (`snapshot_from_json` puts them back)."""
    if learning is None:
        return None
    full = learning.model_dump(mode="json", exclude=set(_SNAPSHOT_EXCLUDED))
    created = full.get("created_at")
    compact = {
        name: value
        for name, value in full.items()
        if not (name in _SNAPSHOT_DEFAULTS and _same(value, _SNAPSHOT_DEFAULTS[name]))
        and not (name in _SNAPSHOT_AS_CREATED and value == created)
    }
    return json.dumps(compact, ensure_ascii=False, separators=(",", ":"))


def _same(value: Any, default: Any) -> bool:
    return type(value) is type(default) and value == default


def snapshot_from_json(text: str | None) -> dict[str, Any] | None:
    """An event's before/after as the full snapshot, in field order (stored compact or, before, whole)."""
    if not text:
        return None
    stored: dict[str, Any] = json.loads(text)
    if "created_at" not in stored:
        return stored  # not a learning snapshot: as it was written
    full: dict[str, Any] = {}
    for name in _SNAPSHOT_ORDER:
        if name in stored:
            full[name] = stored[name]
        elif name in _SNAPSHOT_AS_CREATED:
            full[name] = stored["created_at"]
        elif name in _SNAPSHOT_DEFAULTS:
            default = _SNAPSHOT_DEFAULTS[name]
            full[name] = (
                dict(default) if isinstance(default, dict) else list(default) if isinstance(default, list) else default
            )
    full.update((name, value) for name, value in stored.items() if name not in full)
    return full


def event_from_row(row: Sequence[Any]) -> Event:
    seq, tenant, user_id, learning_id, actor, action, panel, before, after, reason, at, data = row
    return constructed(
        Event,
        {
            "seq": seq,
            "tenant": tenant,
            "user": user_id or None,
            "learning_id": learning_id,
            "actor": actor,
            "action": action,
            "panel": _PANELS[panel],
            "before": snapshot_from_json(before),
            "after": snapshot_from_json(after),
            "reason": reason,
            "at": _at(at),
            "data": json.loads(data),
        },
    )
