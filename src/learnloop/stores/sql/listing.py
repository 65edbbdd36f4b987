"""Admin listings: one page of learnings under filters, newest (or oldest, or last updated) first."""

from __future__ import annotations

from ...models import Learning, Page, Scope
from ..base import ListQuery
from .dialect import Connection, dialect_of
from .rows import LEARNING_COLUMNS, LEARNING_ROWS, learning_from_row
from .transactions import read_transaction
from .writes import visible_clause

__all__ = ["list_learnings"]


def list_learnings(conn: Connection, scope: Scope, query: ListQuery) -> Page[Learning]:
    """One page of the scope's learnings, filtered and ordered, with the total."""
    clause, params = visible_clause(scope)
    where = [clause]
    if query.global_only:
        where.append("user_id = ''")
    elif query.user is not None:
        where.append("user_id = ?")
        params.append(query.user)
    for column, value in (
        ("namespace", query.namespace),
        ("category", query.category),
        ("status", query.status),
        ("origin", query.origin),
    ):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(getattr(value, "value", value))
    if query.updated_before is not None:
        where.append("updated_at < ?")
        params.append(query.updated_before.timestamp())
    if query.text:
        match = dialect_of(conn).text_match(query.text)
        if match is None:
            return Page(items=[], total=0, offset=query.offset, limit=query.limit)
        where.append(match[0])
        params += match[1]
    order = {
        "newest": "created_at DESC, id DESC",
        "oldest": "created_at ASC, id ASC",
        "updated": "updated_at DESC, id DESC",
    }[query.order]
    sql_where = " AND ".join(where)
    with read_transaction(conn):
        total = conn.execute(f"SELECT COUNT(*) FROM learnings WHERE {sql_where}", params).fetchone()[0]
        rows = conn.execute(
            f"SELECT {LEARNING_COLUMNS} FROM {LEARNING_ROWS} WHERE {sql_where} ORDER BY {order} LIMIT ? OFFSET ?",
            [*params, query.limit, query.offset],
        ).fetchall()
    return Page(items=[learning_from_row(r) for r in rows], total=total, offset=query.offset, limit=query.limit)
