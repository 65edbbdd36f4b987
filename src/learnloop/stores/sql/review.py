"""Links dedupe left for review, and the provenance records of learnings.

The write side runs inside `writes.apply_operations` (one transaction with the learnings it concerns); the
read side are plain scoped queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from ...errors import ConflictError, NotFound, ValidationError
from ...models import LearningLink, LinkKind, Origin, Page, Provenance, Resolution, Scope, Source, constructed
from ..base import AddLink, AddSource, CarryLinks, ResolveLink
from .dialect import Connection

__all__ = [
    "add_link",
    "add_source",
    "carry_links",
    "conflict_partners",
    "conflict_partners_query",
    "get_link",
    "link_event_data",
    "list_links",
    "partners_from_rows",
    "provenance",
    "resolve_link",
]

_LINK_COLUMNS = (
    "id, tenant, user_id, learning_id, other_id, kind, reason, similarity, resolution, created_at, resolved_at, "
    "resolved_by"
)
_KINDS = {k.value: k for k in LinkKind}
_RESOLUTIONS = {r.value: r for r in Resolution}
_ORIGINS = {o.value: o for o in Origin}


def _at(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _link(row: tuple[Any, ...]) -> LearningLink:
    id_, tenant, user_id, learning_id, other_id, kind, reason, similarity, resolution, created, resolved, by = row
    return constructed(
        LearningLink,
        {
            "id": id_,
            "tenant": tenant,
            "user": user_id or None,
            "learning_id": learning_id,
            "other_id": other_id,
            "kind": _KINDS[kind],
            "reason": reason,
            "similarity": similarity,
            "resolution": None if resolution is None else _RESOLUTIONS[resolution],
            "created_at": _at(created),
            "resolved_at": _at(resolved),
            "resolved_by": by,
        },
    )


def _scope_clause(scope: Scope) -> tuple[str, list[Any]]:
    if scope.user is None:
        return "tenant = ?", [scope.tenant]
    return "tenant = ? AND user_id IN (?, '')", [scope.tenant, scope.user]


def _owner_of(conn: Connection, scope: Scope, learning_id: int) -> str:
    """The user_id of a learning the scope may change (NotFound otherwise)."""
    params: list[Any] = [learning_id, scope.tenant]
    clause = "id = ? AND +tenant = ?"
    if scope.user is not None:
        clause += " AND +user_id = ?"
        params.append(scope.user)
    row = conn.execute(f"SELECT user_id FROM learnings WHERE {clause}", params).fetchone()
    if row is None:
        raise NotFound(f"learning {learning_id} not found", id=learning_id)
    return str(row[0])


def add_link(conn: Connection, scope: Scope, op: AddLink, learning_id: int, now: datetime) -> LearningLink:
    owner = _owner_of(conn, scope, learning_id)
    if _owner_of(conn, scope, op.other_id) != owner:
        raise ValidationError("linked learnings must belong to the same owner")
    row = conn.execute(
        f"INSERT INTO learning_links (tenant, user_id, learning_id, other_id, kind, reason, similarity, created_at) "
        f"VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING {_LINK_COLUMNS}",
        (scope.tenant, owner, learning_id, op.other_id, op.kind.value, op.reason, op.similarity, now.timestamp()),
    ).fetchone()
    return _link(row)


def add_source(conn: Connection, scope: Scope, op: AddSource, learning_id: int, now: datetime) -> None:
    owner = _owner_of(conn, scope, learning_id)
    if op.copy_from is not None:
        conn.execute(
            "INSERT INTO learning_sources (tenant, user_id, learning_id, action, origin, session, message, "
            "interaction, context, author, text, at) SELECT tenant, user_id, ?, action, origin, session, message, "
            "interaction, context, author, text, at FROM learning_sources WHERE tenant = ? AND learning_id = ? "
            "ORDER BY id",
            (learning_id, scope.tenant, op.copy_from),
        )
    source = op.source
    if source is None:
        return
    conn.execute(
        "INSERT INTO learning_sources (tenant, user_id, learning_id, action, origin, session, message, interaction, "
        "context, author, text, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            scope.tenant,
            owner,
            learning_id,
            op.action,
            op.origin.value,
            source.session,
            source.message,
            source.interaction,
            source.context,
            source.author,
            op.text,
            now.timestamp(),
        ),
    )


def carry_links(conn: Connection, scope: Scope, op: CarryLinks, to_id: int) -> None:
    for column in ("learning_id", "other_id"):
        conn.execute(
            f"UPDATE learning_links SET {column} = ? WHERE tenant = ? AND {column} = ? AND resolution IS NULL",
            (to_id, scope.tenant, op.from_id),
        )
    # A link of the successor with itself (both sides were carried to it) has nothing left to review.
    conn.execute(
        "UPDATE learning_links SET resolution = 'merge', resolved_at = ?, resolved_by = 'system' "
        "WHERE tenant = ? AND learning_id = ? AND other_id = ? AND resolution IS NULL",
        (datetime.now(UTC).timestamp(), scope.tenant, to_id, to_id),
    )


def resolve_link(conn: Connection, scope: Scope, op: ResolveLink, now: datetime) -> tuple[LearningLink, str]:
    """Close the link; returns it as it was and the owner's user_id (for the event)."""
    found = get_link(conn, scope, op.link_id)
    if found is None:
        raise NotFound(f"link {op.link_id} not found", id=op.link_id)
    _owner_of(conn, scope, found.learning_id)  # the scope must be allowed to change what the link is about
    cursor = conn.execute(
        "UPDATE learning_links SET resolution = ?, resolved_at = ?, resolved_by = ? WHERE id = ? AND resolution "
        "IS NULL",
        (op.resolution.value, now.timestamp(), op.event.actor, op.link_id),
    )
    if cursor.rowcount == 0:
        raise ConflictError(f"link {op.link_id} is already resolved", id=op.link_id)
    return found, found.user or ""


def get_link(conn: Connection, scope: Scope, link_id: int) -> LearningLink | None:
    clause, params = _scope_clause(scope)
    row = conn.execute(
        f"SELECT {_LINK_COLUMNS} FROM learning_links WHERE id = ? AND {clause}", [link_id, *params]
    ).fetchone()
    return None if row is None else _link(row)


def list_links(
    conn: Connection, scope: Scope, open_only: bool, learning_id: int | None, offset: int, limit: int
) -> Page[LearningLink]:
    clause, params = _scope_clause(scope)
    where = [clause]
    if open_only:
        where.append("resolution IS NULL")
    if learning_id is not None:
        where.append("(learning_id = ? OR other_id = ?)")
        params += [learning_id, learning_id]
    sql_where = " AND ".join(where)
    total = conn.execute(f"SELECT count(*) FROM learning_links WHERE {sql_where}", params).fetchone()[0]
    rows = conn.execute(
        f"SELECT {_LINK_COLUMNS} FROM learning_links WHERE {sql_where} ORDER BY id DESC LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    return Page(items=[_link(r) for r in rows], total=total, offset=offset, limit=limit)


def provenance(conn: Connection, scope: Scope, learning_id: int) -> list[Provenance]:
    clause, params = _scope_clause(scope)
    rows = conn.execute(
        "SELECT learning_id, action, origin, session, message, interaction, context, author, text, at "
        f"FROM learning_sources WHERE learning_id = ? AND {clause} ORDER BY id",
        [learning_id, *params],
    ).fetchall()
    return [
        Provenance(
            learning_id=r[0],
            action=r[1],
            origin=_ORIGINS[r[2]],
            source=Source(session=r[3], message=r[4], interaction=r[5], context=r[6], author=r[7]),
            text=r[8],
            at=datetime.fromtimestamp(r[9], UTC),
        )
        for r in rows
    ]


def conflict_partners(conn: Connection, scope: Scope, ids: Sequence[int]) -> dict[int, list[int]]:
    if not ids:
        return {}
    return partners_from_rows(conn.execute(*conflict_partners_query(scope, ids)))


def conflict_partners_query(scope: Scope, ids: Sequence[int]) -> tuple[str, list[Any]]:
    """The statement behind `conflict_partners` (`ids` not empty), for a caller that sends it with others."""
    clause, params = _scope_clause(scope)
    marks = ", ".join("?" for _ in ids)
    # Both directions in one statement: retrieval asks this of every result.
    open_conflicts = f"AND {clause} AND resolution IS NULL AND kind = 'possible_conflict'"
    return (
        f"SELECT learning_id, other_id FROM learning_links WHERE learning_id IN ({marks}) {open_conflicts} "
        f"UNION ALL SELECT other_id, learning_id FROM learning_links WHERE other_id IN ({marks}) {open_conflicts}",
        [*ids, *params, *ids, *params],
    )


def partners_from_rows(rows: Iterable[Any]) -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for mine, theirs in rows:
        found.setdefault(mine, []).append(theirs)
    return found


def link_event_data(link: LearningLink) -> dict[str, Any]:
    return {"link": link.id, "other": link.other_id, "kind": link.kind.value, "similarity": link.similarity}
