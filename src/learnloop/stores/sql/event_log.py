"""Reading the event log: a scope's events after a cursor, in cursor (seq) order.

Every change appends its event in the transaction that makes it (`writes`); one writer at a time makes seq
commit-ordered, which the `EventLog` cursor contract needs.
"""

from __future__ import annotations

from ...models import Event, Scope
from .dialect import Connection
from .rows import event_from_row
from .writes import visible_clause

__all__ = ["read_events"]

_EVENT_COLUMNS = "seq, tenant, user_id, learning_id, actor, action, panel, before, after, reason, at, data"


def read_events(conn: Connection, scope: Scope, after: int, limit: int, learning_id: int | None) -> list[Event]:
    clause, params = visible_clause(scope)
    where = [clause, "seq > ?"]
    params.append(after)
    if learning_id is not None:
        where.append("learning_id = ?")
        params.append(learning_id)
    rows = conn.execute(
        f"SELECT {_EVENT_COLUMNS} FROM events WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [event_from_row(r) for r in rows]
