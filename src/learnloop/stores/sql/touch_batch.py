"""A run of retrievals' bookkeeping (each a `Touch` and its `retrieved` events) written as one batch: one read of
the touched learnings' owners, one multi-row counters upsert, one read of the counters after it and the events
in one go, instead of a savepoint, an upsert, an event insert and a release per retrieval. The store's thread
holds the connection (and shares the interpreter with the searches) for a flush of up to 64 retrievals; most of
that time was per-statement overhead of those four statements.

What each retrieval is told is what applying them one by one in order would give: the counters after its own
touch (the final counts less the later touches of the same run), its events in order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ...models import Event, Scope
from ..records import AppendEvent, Counted, Operation, Touch
from .dialect import Connection
from .rows import event_from_row
from .writes import INSERT_EVENT, event_values

__all__ = ["Batched", "apply_touches", "batchable"]

# Parameters per statement stay well below SQLite's limit (32,766) and PostgreSQL's (65,535).
_IDS_PER_READ = 900
_EVENTS_PER_INSERT = 64

# A retrieval's counters and events as one-by-one application would have returned them.
Batched = tuple[list[Counted], list[Event]]


def batchable(operations: Sequence[Operation]) -> bool:
    """A retrieval's shape: one `Touch`, then events tied to no learning and no other user (which cannot fail
    for lack of a row, so the batch needs no savepoint per item)."""
    return (
        bool(operations)
        and isinstance(operations[0], Touch)
        and all(isinstance(op, AppendEvent) and op.learning_id is None and op.user is None for op in operations[1:])
    )


def apply_touches(conn: Connection, items: Sequence[tuple[Scope, Sequence[Operation]]], now: datetime) -> list[Batched]:
    """Apply `batchable` items in order (the caller holds the write transaction); `now` is the events' time."""
    touches = [(scope, _touch_of(operations)) for scope, operations in items]
    owners = _owners(conn, sorted({i for _, touch in touches for i in touch.ids}))
    # Each item's visible learnings, once each (an id named twice in one Touch counts once, as `IN (...)` does).
    seen = [
        [i for i in dict.fromkeys(touch.ids) if i in owners and _visible(scope, *owners[i])] for scope, touch in touches
    ]
    upserts = [
        (i, owners[i][0], owners[i][1], touch.at.timestamp())
        for (_, touch), ids in zip(touches, seen, strict=True)
        for i in ids
    ]
    if upserts:
        conn.executemany(
            "INSERT INTO learning_counters (learning_id, tenant, user_id, hits, streak, last_retrieved_at) "
            "VALUES (?, ?, ?, 1, 1, ?) ON CONFLICT (learning_id) DO UPDATE SET hits = learning_counters.hits + 1, "
            "streak = learning_counters.streak + 1, last_retrieved_at = excluded.last_retrieved_at",
            upserts,
        )
    counted = _counted_per_item(conn, touches, seen)
    drafts = [
        event_values(scope, op.event, now, learning_id=None, owner=None)
        for scope, operations in items
        for op in operations[1:]
        if isinstance(op, AppendEvent)
    ]
    rows = iter(_insert_events(conn, drafts))
    return [
        (touched, [event_from_row(next(rows)) for _ in operations[1:]])
        for touched, (_, operations) in zip(counted, items, strict=True)
    ]


def _insert_events(conn: Connection, drafts: list[tuple[Any, ...]]) -> list[Any]:
    """The events' rows as inserted, in order: multi-row statements (a statement each was most of a flush's
    time after the counters), their rows put back in insertion order by sequence number."""
    found: list[Any] = []
    head, tail = INSERT_EVENT.split(" VALUES ", 1)
    marks, returning = tail.split(" RETURNING ", 1)
    for start in range(0, len(drafts), _EVENTS_PER_INSERT):
        part = drafts[start : start + _EVENTS_PER_INSERT]
        sql = f"{head} VALUES {', '.join(marks for _ in part)} RETURNING {returning}"
        found += sorted(conn.execute(sql, [value for draft in part for value in draft]).fetchall(), key=_seq)
    return found


def _seq(row: Any) -> int:
    return int(row[0])


def _touch_of(operations: Sequence[Operation]) -> Touch:
    touch = operations[0]
    assert isinstance(touch, Touch)
    return touch


def _owners(conn: Connection, ids: list[int]) -> dict[int, tuple[str, str]]:
    """Tenant and user of each existing learning of `ids`."""
    found: dict[int, tuple[str, str]] = {}
    for start in range(0, len(ids), _IDS_PER_READ):
        part = ids[start : start + _IDS_PER_READ]
        marks = ", ".join("?" for _ in part)
        for row in conn.execute(f"SELECT id, tenant, user_id FROM learnings WHERE id IN ({marks})", part):
            found[row[0]] = (row[1], row[2])
    return found


def _visible(scope: Scope, tenant: str, user: str) -> bool:
    """`visible_clause` on an owner: the scope's tenant, and its user's or the tenant's global rows."""
    return tenant == scope.tenant and (scope.user is None or user in (scope.user, ""))


def _counted_per_item(
    conn: Connection, touches: list[tuple[Scope, Touch]], seen: list[list[int]]
) -> list[list[Counted]]:
    """Each item's counters right after its touch: the counts read after the whole run, walked back over the
    later touches of the same learnings."""
    touched = sorted({i for ids in seen for i in ids})
    after: dict[int, tuple[str, int, int]] = {}
    for start in range(0, len(touched), _IDS_PER_READ):
        part = touched[start : start + _IDS_PER_READ]
        marks = ", ".join("?" for _ in part)
        sql = f"SELECT learning_id, user_id, hits, streak FROM learning_counters WHERE learning_id IN ({marks})"
        for row in conn.execute(sql, part):
            after[row[0]] = (row[1], row[2], row[3])
    later: Counter[int] = Counter()
    out: list[list[Counted]] = []
    for (_, touch), ids in zip(reversed(touches), reversed(seen), strict=True):
        at = touch.at.timestamp()
        now = {i: Counted(i, after[i][0] or None, after[i][1] - later[i], after[i][2] - later[i], at) for i in ids}
        out.append([now[i] for i in touch.ids if i in now])
        later.update(ids)
    out.reverse()
    return out
