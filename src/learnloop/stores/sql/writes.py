"""Applying write operations inside one transaction."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ...errors import ConflictError, NotFound, PermissionDenied, ValidationError
from ...models import Event, Learning, Scope
from ..base import (
    NEW_ID,
    AddLink,
    AddSource,
    CarryLinks,
    Delete,
    EventDraft,
    Insert,
    NewId,
    Operation,
    PutVocabulary,
    ResolveLink,
    Touch,
    Update,
)
from ..records import Counted
from ..search.stored_terms import stored_terms
from . import review
from .dialect import Connection, dialect_of
from .rows import (
    COUNTER_FIELDS,
    FIELD_COLUMNS,
    LEARNING_COLUMNS,
    LEARNING_ROWS,
    column_value,
    counter_values,
    event_from_row,
    learning_from_row,
    learning_snapshot,
    new_learning_values,
    scope_token,
)

__all__ = ["INSERT_EVENT", "apply_operations", "candidate_rows", "event_values", "owner_clause", "visible_clause"]

_COUNTERS = {"hits", "streak", "failures", "version"}
# The fields a learning's stored keyword terms are made of.
_TERM_FIELDS = frozenset({"text", "topic", "tags"})
# LEARNING_COLUMNS after the id, as `new_learning_values` and `counter_values` name them.
_STORED_COLUMNS = tuple(column.strip() for column in LEARNING_COLUMNS.split(",")[1:])


def visible_clause(scope: Scope, *, by_id: bool = False) -> tuple[str, list[Any]]:
    """Rows the scope may read: its own and, for a user, the tenant's global ones.

    With `by_id` the clause only checks rows found by primary key: the unary `+` keeps SQLite from
    choosing the (tenant, user) index and scanning every row of the user instead (a backend without such
    hints drops it).
    """
    p = "+" if by_id else ""
    if scope.user is None:
        return f"{p}tenant = ?", [scope.tenant]
    return f"{p}tenant = ? AND {p}user_id IN (?, '')", [scope.tenant, scope.user]


def owner_clause(scope: Scope, *, by_id: bool = False) -> tuple[str, list[Any]]:
    """Rows the scope may change."""
    p = "+" if by_id else ""
    if scope.user is None:
        return f"{p}tenant = ?", [scope.tenant]
    return f"{p}tenant = ? AND {p}user_id = ?", [scope.tenant, scope.user]


def _fetch(conn: Connection, where: str, params: list[Any]) -> Learning | None:
    row = conn.execute(f"SELECT {LEARNING_COLUMNS} FROM {LEARNING_ROWS} WHERE {where}", params).fetchone()
    return None if row is None else learning_from_row(row)


def _fetch_owned(conn: Connection, scope: Scope, learning_id: int) -> Learning:
    clause, params = owner_clause(scope, by_id=True)
    found = _fetch(conn, f"id = ? AND {clause}", [learning_id, *params])
    if found is None:
        raise NotFound(f"learning {learning_id} not found", id=learning_id)
    return found


def _note_vector_change(conn: Connection, learning: Learning) -> None:
    conn.execute(
        "INSERT INTO vector_changes (tenant, user_id, learning_id) VALUES (?, ?, ?)",
        (learning.tenant, learning.user or "", learning.id),
    )


INSERT_EVENT = (
    "INSERT INTO events (tenant, user_id, learning_id, actor, action, panel, before, after, reason, at, data) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq, tenant, user_id, learning_id, actor, action, "
    "panel, before, after, reason, at, data"
)


def event_values(
    scope: Scope,
    draft: EventDraft,
    now: datetime,
    *,
    learning_id: int | None,
    owner: str | None,
    before: Learning | None = None,
    after: Learning | None = None,
) -> tuple[Any, ...]:
    # Events about a user's learning belong to that user; events on global rows to the acting user,
    # so that forgetting a user removes every event that speaks of them.
    return (
        scope.tenant,
        owner or scope.user or "",
        learning_id,
        draft.actor,
        draft.action.value,
        draft.panel.value,
        learning_snapshot(before),
        learning_snapshot(after),
        draft.reason,
        now.timestamp(),
        json.dumps(draft.data, default=str),
    )


def _append_event(
    conn: Connection,
    scope: Scope,
    draft: EventDraft,
    now: datetime,
    *,
    learning_id: int | None,
    owner: str | None,
    before: Learning | None = None,
    after: Learning | None = None,
) -> Event:
    values = event_values(scope, draft, now, learning_id=learning_id, owner=owner, before=before, after=after)
    return event_from_row(conn.execute(INSERT_EVENT, values).fetchone())


def _insert(conn: Connection, scope: Scope, ops: Sequence[Insert], now: datetime) -> list[tuple[Learning, Event]]:
    """A run of Inserts: their rows, change-log rows and events, each kind as one batch of statements (on a
    server, one round trip per kind rather than three per learning), in the operations' order."""
    dialect = dialect_of(conn)
    rows = []
    counters = []
    for op in ops:
        record = op.record
        if record.tenant != scope.tenant or not scope.owns(record.tenant, record.user):
            raise PermissionDenied("cannot write a learning outside the caller's scope")
        rows.append(new_learning_values(record, now, dialect.embedding_param))
        counters.append(counter_values(record.hits, record.streak, record.last_retrieved_at))
    columns = ", ".join(rows[0])
    marks = ", ".join("?" for _ in rows[0])
    ids = dialect.returning_many(
        conn, f"INSERT INTO learnings ({columns}) VALUES ({marks}) RETURNING id", [list(v.values()) for v in rows]
    )
    # The rows as stored, from what was just written: reading them back would only repeat these values.
    learnings = [
        learning_from_row((found[0], *({**values, **counted}[column] for column in _STORED_COLUMNS)))
        for found, values, counted in zip(ids, rows, counters, strict=True)
    ]
    # Counters of their own only for learnings that bring some (an import's): the others' are 0 until retrieved.
    counted_rows = [
        (learning.id, learning.tenant, learning.user or "", c["hits"], c["streak"], c["last_retrieved_at"])
        for learning, c in zip(learnings, counters, strict=True)
        if c["hits"] or c["streak"] or c["last_retrieved_at"] is not None
    ]
    if counted_rows:
        conn.executemany(
            "INSERT INTO learning_counters (learning_id, tenant, user_id, hits, streak, last_retrieved_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            counted_rows,
        )
    conn.executemany(
        "INSERT INTO vector_changes (tenant, user_id, learning_id) VALUES (?, ?, ?)",
        [(learning.tenant, learning.user or "", learning.id) for learning in learnings],
    )
    drafts = [
        event_values(scope, op.event, now, learning_id=learning.id, owner=learning.user, after=learning)
        for op, learning in zip(ops, learnings, strict=True)
    ]
    events = [event_from_row(row) for row in dialect.returning_many(conn, INSERT_EVENT, drafts)]
    return list(zip(learnings, events, strict=True))


def _update(conn: Connection, scope: Scope, op: Update, now: datetime) -> tuple[Learning, Event | None]:
    before = _fetch_owned(conn, scope, op.id)
    if op.expect_revision is not None and before.revision != op.expect_revision:
        raise ConflictError(
            f"learning {op.id} changed since it was read (revision {before.revision}, expected {op.expect_revision})",
            id=op.id,
        )
    assignments: list[str] = ["revision = revision + 1"]
    params: list[Any] = []
    for field, value in op.changes.items():
        if field in COUNTER_FIELDS:
            continue  # `learning_counters`, below
        if field == "source":
            for part in ("session", "message", "interaction", "context", "author"):
                assignments.append(f"source_{part} = ?")
                params.append(getattr(value, part))
            continue
        column = FIELD_COLUMNS.get(field)
        if column is None:
            raise ValidationError(f"field {field!r} cannot be updated")
        assignments.append(f"{column} = ?")
        params.append(column_value(field, value))
    for field, amount in op.increments.items():
        if field not in _COUNTERS:
            raise ValidationError(f"field {field!r} cannot be incremented")
        if field not in COUNTER_FIELDS:
            assignments.append(f"{field} = {field} + ?")
            params.append(amount)
    if "updated_at" not in op.changes:
        assignments.append("updated_at = ?")
        params.append(now.timestamp())
    if "user" in op.changes:
        new_user = op.changes["user"]
        if not scope.owns(scope.tenant, new_user):
            raise PermissionDenied("cannot move a learning outside the caller's scope")
        assignments.append("scope_token = ?")
        params.append(scope_token(scope.tenant, new_user))
    if not _TERM_FIELDS.isdisjoint(op.changes):
        # The stored keyword terms follow the text, topic and tags as they will be (`search.stored_terms`).
        text, topic, tags = (op.changes.get(field, getattr(before, field)) for field in ("text", "topic", "tags"))
        assignments.append("index_terms = ?")
        params.append(stored_terms(text, topic, tags))
    if op.vector is not None:
        assignments += ["embedding = ?", "embedding_model = ?"]
        params += [dialect_of(conn).embedding_param(op.vector), op.embedding_model]
    conn.execute(f"UPDATE learnings SET {', '.join(assignments)} WHERE id = ?", [*params, op.id])
    _update_counters(conn, before, op)
    after = _fetch(conn, "id = ?", [op.id])
    assert after is not None  # read and updated in this transaction
    # Logged for every update: besides the indexed fields, partitions hold what ranking reads (updated_at,
    # hits), and an update always moves updated_at.
    _note_vector_change(conn, before)
    if after.user != before.user:
        _note_vector_change(conn, after)
    event = None
    if op.event is not None:
        event = _append_event(
            conn, scope, op.event, now, learning_id=op.id, owner=after.user, before=before, after=after
        )
    return after, event


def _delete(conn: Connection, scope: Scope, op: Delete, now: datetime) -> tuple[Learning, Event]:
    before = _fetch_owned(conn, scope, op.id)
    conn.execute("DELETE FROM learnings WHERE id = ?", (op.id,))
    conn.execute("DELETE FROM learning_sources WHERE tenant = ? AND learning_id = ?", (scope.tenant, op.id))
    conn.execute(
        "DELETE FROM learning_links WHERE tenant = ? AND (learning_id = ? OR other_id = ?)",
        (scope.tenant, op.id, op.id),
    )
    _note_vector_change(conn, before)
    event = _append_event(conn, scope, op.event, now, learning_id=op.id, owner=before.user, before=before)
    return before, event


def _update_counters(conn: Connection, before: Learning, op: Update) -> None:
    """An update's changes of the counters a retrieval records, in `learning_counters`: values set, or added to in
    SQL (`increments`), so that hits a retrieval commits meanwhile are kept."""
    changes = {field: op.changes[field] for field in COUNTER_FIELDS if field in op.changes}
    increments = {field: op.increments[field] for field in ("hits", "streak") if field in op.increments}
    if not changes and not increments:
        return
    # The row a learning without counters would get (they are 0, 0 and NULL until then), and the change of one.
    start = counter_values(0, 0, None)
    assignments, params = [], []
    for field in COUNTER_FIELDS:
        if field in changes:
            start[field] = column_value(field, changes[field])
            if field in increments:
                start[field] += increments[field]
            assignments.append(f"{field} = ?")
            params.append(start[field])
        elif field in increments:
            start[field] = increments[field]
            assignments.append(f"{field} = learning_counters.{field} + ?")
            params.append(increments[field])
    owner = op.changes.get("user", before.user) or ""  # the row's owner after the update (a trigger moves others)
    conn.execute(
        "INSERT INTO learning_counters (learning_id, tenant, user_id, hits, streak, last_retrieved_at) "
        f"VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (learning_id) DO UPDATE SET {', '.join(assignments)}",
        [before.id, before.tenant, owner, start["hits"], start["streak"], start["last_retrieved_at"], *params],
    )


def _touch(conn: Connection, scope: Scope, op: Touch) -> list[Counted]:
    """hits + 1, streak + 1 and the time, for the visible learnings of `op`: one upsert of their narrow counter
    rows (the learnings rows are only read, for their owners)."""
    if not op.ids:
        return []
    clause, params = visible_clause(scope, by_id=True)
    marks = ", ".join("?" for _ in op.ids)
    rows = conn.execute(
        "INSERT INTO learning_counters (learning_id, tenant, user_id, hits, streak, last_retrieved_at) "
        f"SELECT id, tenant, user_id, 1, 1, ? FROM learnings WHERE id IN ({marks}) AND {clause} "
        "ON CONFLICT (learning_id) DO UPDATE SET hits = learning_counters.hits + 1, "
        "streak = learning_counters.streak + 1, last_retrieved_at = excluded.last_retrieved_at "
        "RETURNING learning_id, user_id, hits, streak, last_retrieved_at",
        [op.at.timestamp(), *op.ids, *params],
    ).fetchall()
    by_id = {row[0]: row for row in rows}
    return [Counted(i, by_id[i][1] or None, *by_id[i][2:]) for i in op.ids if i in by_id]


def visible_by_id(conn: Connection, scope: Scope, ids: Sequence[int], status: str = "") -> dict[int, Learning]:
    """The learnings of `ids` the scope may read, as they are now; `status` narrows them with a fixed SQL
    condition on the status column ("= 'candidate'", "!= 'deprecated'")."""
    if not ids:
        return {}
    clause, params = visible_clause(scope, by_id=True)
    marks = ", ".join("?" for _ in ids)
    narrowed = f" AND status {status}" if status else ""
    rows = conn.execute(
        f"SELECT {LEARNING_COLUMNS} FROM {LEARNING_ROWS} WHERE id IN ({marks}) AND {clause}{narrowed}",
        [*ids, *params],
    ).fetchall()
    return {row[0]: learning_from_row(row) for row in rows}


def candidate_rows(conn: Connection, scope: Scope, ids: Sequence[int]) -> list[Learning]:
    """The visible learnings of `ids` that are candidates, as they are now, in the order of `ids`."""
    by_id = visible_by_id(conn, scope, ids, "= 'candidate'")
    return [by_id[i] for i in ids if i in by_id]


def apply_operations(
    conn: Connection,
    scope: Scope,
    operations: Sequence[Operation],
    now: datetime,
    *,
    touched: list[Counted] | None = None,
) -> tuple[list[Learning | None], list[Event]]:
    """Apply every operation or none (the caller holds the write transaction). The counters `Touch` operations
    changed, as they are after them, are added to `touched` if given."""
    learnings: list[Learning | None] = []
    events: list[Event] = []
    inserted: int | None = None

    def new_id(value: int | NewId) -> int:
        if isinstance(value, NewId):
            if inserted is None:
                raise ValidationError("an operation names the new learning, but no Insert came before it")
            return inserted
        return value

    inserts: list[Insert] = []  # consecutive Inserts, written together before the next other operation

    def write_inserts() -> None:
        nonlocal inserted
        for learning, event in _insert(conn, scope, inserts, now):
            inserted = learning.id
            learnings.append(learning)
            events.append(event)
        inserts.clear()

    for op in operations:
        if isinstance(op, Insert):
            inserts.append(op)
            continue
        if inserts:
            write_inserts()
        if isinstance(op, Update):
            if any(value is NEW_ID for value in op.changes.values()):
                op = Update(
                    op.id,
                    {k: new_id(v) if v is NEW_ID else v for k, v in op.changes.items()},
                    op.event,
                    op.vector,
                    op.embedding_model,
                    op.expect_revision,
                    op.increments,
                )
            learning, maybe_event = _update(conn, scope, op, now)
            learnings.append(learning)
            if maybe_event is not None:
                events.append(maybe_event)
        elif isinstance(op, Delete):
            learning, event = _delete(conn, scope, op, now)
            learnings.append(learning)
            events.append(event)
        elif isinstance(op, Touch):
            rows = _touch(conn, scope, op)
            if touched is not None:
                touched += rows
            learnings.append(None)
        elif isinstance(op, AddLink):
            link = review.add_link(conn, scope, op, new_id(op.learning_id), now)
            data = {**op.event.data, **review.link_event_data(link)}
            events.append(
                _append_event(
                    conn,
                    scope,
                    EventDraft(op.event.actor, op.event.action, op.event.panel, op.event.reason, data),
                    now,
                    learning_id=link.learning_id,
                    owner=link.user,
                )
            )
            learnings.append(None)
        elif isinstance(op, AddSource):
            review.add_source(conn, scope, op, new_id(op.learning_id), now)
            learnings.append(None)
        elif isinstance(op, CarryLinks):
            review.carry_links(conn, scope, op, new_id(op.to_id))
            learnings.append(None)
        elif isinstance(op, ResolveLink):
            link, owner = review.resolve_link(conn, scope, op, now)
            data = {**op.event.data, **review.link_event_data(link), "resolution": op.resolution.value}
            draft = EventDraft(op.event.actor, op.event.action, op.event.panel, op.event.reason, data)
            events.append(_append_event(conn, scope, draft, now, learning_id=link.learning_id, owner=owner or None))
            learnings.append(None)
        elif isinstance(op, PutVocabulary):
            conn.execute(
                "INSERT INTO vocabularies (tenant, namespace, body, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (tenant, namespace) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at",
                (scope.tenant, op.vocabulary.namespace, op.vocabulary.model_dump_json(), now.timestamp()),
            )
            events.append(_append_event(conn, scope, op.event, now, learning_id=None, owner=None))
            learnings.append(None)
        else:
            learning_id = op.learning_id
            if op.user is not None and not scope.owns(scope.tenant, op.user):
                raise PermissionDenied("cannot record an event for another user")
            if learning_id is not None:
                _fetch_owned_or_visible(conn, scope, learning_id)
            events.append(_append_event(conn, scope, op.event, now, learning_id=learning_id, owner=op.user))
            learnings.append(None)
    if inserts:
        write_inserts()
    return learnings, events


def _fetch_owned_or_visible(conn: Connection, scope: Scope, learning_id: int) -> Learning:
    clause, params = visible_clause(scope, by_id=True)
    found = _fetch(conn, f"id = ? AND {clause}", [learning_id, *params])
    if found is None:
        raise NotFound(f"learning {learning_id} not found", id=learning_id)
    return found
