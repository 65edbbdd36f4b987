"""Each tenant's category vocabularies, one JSON body per namespace; a change appends its event (`writes`)."""

from __future__ import annotations

from datetime import datetime

from ...models import Event, Scope, Vocabulary
from ..base import EventDraft, PutVocabulary
from .dialect import Connection
from .transactions import write_transaction
from .writes import apply_operations

__all__ = ["get_vocabulary", "list_vocabularies", "put_vocabulary"]


def get_vocabulary(conn: Connection, tenant: str, namespace: str) -> Vocabulary | None:
    row = conn.execute(
        "SELECT body FROM vocabularies WHERE tenant = ? AND namespace = ?", (tenant, namespace)
    ).fetchone()
    return None if row is None else Vocabulary.model_validate_json(row[0])


def list_vocabularies(conn: Connection, tenant: str) -> list[Vocabulary]:
    rows = conn.execute("SELECT body FROM vocabularies WHERE tenant = ? ORDER BY namespace", (tenant,))
    return [Vocabulary.model_validate_json(r[0]) for r in rows]


def put_vocabulary(conn: Connection, tenant: str, vocabulary: Vocabulary, event: EventDraft, now: datetime) -> Event:
    with write_transaction(conn):
        _, events = apply_operations(conn, Scope(tenant=tenant), [PutVocabulary(vocabulary, event)], now)
    return events[0]
