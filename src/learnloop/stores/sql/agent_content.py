"""Experience files and the default knowledge base of the learning agent, as SQL on the executor thread.

Experience files belong to exactly one owner (a user, or '' for the tenant) and project. Knowledge rows are
read from the owner's own rows plus the tenant's shared ones (the owner's row wins on an id clash), and
changed only in the owner's own rows, like learnings.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ...agent.records import (
    EditExperience,
    ExperienceChange,
    ExperienceFile,
    ExperienceFileInfo,
    ExperienceOp,
    KnowledgePage,
    KnowledgePointer,
    Workspace,
)
from ...errors import NotFound, ValidationError
from ..base import Vector
from .dialect import Connection, dialect_of

__all__ = [
    "apply_experience",
    "delete_file",
    "delete_knowledge",
    "get_page",
    "get_pointer",
    "list_files",
    "list_pages",
    "list_pointers",
    "pointer_vectors",
    "put_page",
    "put_pointer",
    "read_file",
    "update_knowledge",
]

_PAGE_COLUMNS = "page_id, title, content, kind, cross_references, metadata, project, user_id, created_at, updated_at"
_POINTER_COLUMNS = (
    "pointer_id, page_id, title, description, cross_references, metadata, project, user_id, embedding_model, "
    "created_at, updated_at"
)
_TABLES = {"page": ("agent_knowledge_pages", "page_id"), "pointer": ("agent_knowledge_pointers", "pointer_id")}
# Columns an update may set; names reach the SQL text, so nothing else gets through.
_EDITABLE = {
    "page": {"title", "content", "kind", "cross_references", "metadata"},
    "pointer": {"title", "description", "cross_references", "metadata", "page_id"},
}


def _dt(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def _owner(workspace: Workspace) -> str:
    return workspace.owner or ""


# -- experience files ----------------------------------------------------------------------------------


def read_file(conn: Connection, workspace: Workspace, path: str) -> ExperienceFile | None:
    row = conn.execute(
        "SELECT path, content, updated_by_session, created_at, updated_at FROM agent_experience_files "
        "WHERE tenant = ? AND user_id = ? AND project = ? AND path = ?",
        (workspace.tenant, _owner(workspace), workspace.project, path),
    ).fetchone()
    if row is None:
        return None
    return ExperienceFile(
        path=row[0],
        content=row[1],
        chars=len(row[1]),
        updated_by_session=row[2],
        created_at=_dt(row[3]),
        updated_at=_dt(row[4]),
        project=workspace.project,
        user=workspace.owner,
    )


def list_files(conn: Connection, workspace: Workspace) -> list[ExperienceFileInfo]:
    rows = conn.execute(
        "SELECT path, LENGTH(content), updated_by_session, updated_at FROM agent_experience_files "
        "WHERE tenant = ? AND user_id = ? AND project = ? ORDER BY path",
        (workspace.tenant, _owner(workspace), workspace.project),
    ).fetchall()
    return [ExperienceFileInfo(path=r[0], chars=r[1], updated_by_session=r[2], updated_at=_dt(r[3])) for r in rows]


def apply_experience(conn: Connection, op: ExperienceOp, now: float) -> ExperienceChange:
    """Apply a write or an edit (the caller holds the write transaction)."""
    workspace = op.workspace
    current = read_file(conn, workspace, op.path)
    if isinstance(op, EditExperience):
        if current is None:
            raise NotFound(f"experience file {op.path!r} does not exist", path=op.path)
        if not op.old_text or op.old_text not in current.content:
            raise NotFound(f"old_text was not found in {op.path!r}; read the file and try again", path=op.path)
        content = current.content.replace(op.old_text, op.new_text, 1)
    else:
        content = op.content
    conn.execute(
        "INSERT INTO agent_experience_files (tenant, user_id, project, path, content, updated_by_session, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (tenant, user_id, project, path) DO UPDATE SET content = excluded.content, "
        "updated_by_session = excluded.updated_by_session, updated_at = excluded.updated_at",
        (workspace.tenant, _owner(workspace), workspace.project, op.path, content, op.session, now, now),
    )
    return ExperienceChange(
        path=op.path,
        created=current is None,
        chars_before=0 if current is None else current.chars,
        chars_after=len(content),
    )


def delete_file(conn: Connection, workspace: Workspace, path: str) -> bool:
    cursor = conn.execute(
        "DELETE FROM agent_experience_files WHERE tenant = ? AND user_id = ? AND project = ? AND path = ?",
        (workspace.tenant, _owner(workspace), workspace.project, path),
    )
    return cursor.rowcount > 0


# -- knowledge -----------------------------------------------------------------------------------------


def _page(row: tuple[Any, ...]) -> KnowledgePage:
    return KnowledgePage(
        id=row[0],
        title=row[1],
        content=row[2],
        kind=row[3],
        cross_references=json.loads(row[4]),
        metadata=json.loads(row[5]),
        project=row[6],
        user=row[7] or None,
        created_at=_dt(row[8]),
        updated_at=_dt(row[9]),
    )


def _pointer(row: tuple[Any, ...]) -> KnowledgePointer:
    return KnowledgePointer(
        id=row[0],
        page_id=row[1],
        title=row[2],
        description=row[3],
        cross_references=json.loads(row[4]),
        metadata=json.loads(row[5]),
        project=row[6],
        user=row[7] or None,
        embedding_model=row[8],
        created_at=_dt(row[9]),
        updated_at=_dt(row[10]),
    )


def _owners(workspace: Workspace, visible: bool) -> tuple[str, list[Any]]:
    """Rows the workspace reads (`visible`: its own and the tenant's shared ones) or changes (its own)."""
    params: list[Any] = [workspace.tenant, workspace.project, _owner(workspace)]
    if visible and workspace.owner is not None:
        return "tenant = ? AND project = ? AND user_id IN (?, '')", params
    return "tenant = ? AND project = ? AND user_id = ?", params


def put_page(conn: Connection, workspace: Workspace, page: KnowledgePage, now: float) -> KnowledgePage:
    conn.execute(
        "INSERT INTO agent_knowledge_pages (tenant, user_id, project, page_id, title, content, kind, "
        "cross_references, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (tenant, user_id, project, page_id) DO UPDATE SET title = excluded.title, "
        "content = excluded.content, kind = excluded.kind, cross_references = excluded.cross_references, "
        "metadata = excluded.metadata, updated_at = excluded.updated_at",
        (
            workspace.tenant,
            _owner(workspace),
            workspace.project,
            page.id,
            page.title,
            page.content,
            page.kind,
            json.dumps(page.cross_references, default=str),
            json.dumps(page.metadata, default=str),
            now,
            now,
        ),
    )
    found = get_page(conn, workspace, page.id, visible=False)
    assert found is not None
    return found


def put_pointer(
    conn: Connection,
    workspace: Workspace,
    pointer: KnowledgePointer,
    vector: Vector | None,
    embedding_model: str | None,
    now: float,
) -> KnowledgePointer:
    blob = None if vector is None else dialect_of(conn).vector_param(vector)
    conn.execute(
        "INSERT INTO agent_knowledge_pointers (tenant, user_id, project, pointer_id, page_id, title, description, "
        "cross_references, metadata, embedding, embedding_model, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (tenant, user_id, project, pointer_id) DO UPDATE SET page_id = excluded.page_id, "
        "title = excluded.title, description = excluded.description, cross_references = excluded.cross_references, "
        "metadata = excluded.metadata, embedding = excluded.embedding, embedding_model = excluded.embedding_model, "
        "updated_at = excluded.updated_at",
        (
            workspace.tenant,
            _owner(workspace),
            workspace.project,
            pointer.id,
            pointer.page_id,
            pointer.title,
            pointer.description,
            json.dumps(pointer.cross_references, default=str),
            json.dumps(pointer.metadata, default=str),
            blob,
            embedding_model if blob is not None else None,
            now,
            now,
        ),
    )
    found = get_pointer(conn, workspace, pointer.id, visible=False)
    assert found is not None
    return found


def get_page(conn: Connection, workspace: Workspace, page_id: str, *, visible: bool) -> KnowledgePage | None:
    clause, params = _owners(workspace, visible)
    row = conn.execute(
        f"SELECT {_PAGE_COLUMNS} FROM agent_knowledge_pages WHERE {clause} AND page_id = ? "
        "ORDER BY user_id DESC LIMIT 1",
        [*params, page_id],
    ).fetchone()
    return None if row is None else _page(row)


def get_pointer(conn: Connection, workspace: Workspace, pointer_id: str, *, visible: bool) -> KnowledgePointer | None:
    clause, params = _owners(workspace, visible)
    row = conn.execute(
        f"SELECT {_POINTER_COLUMNS} FROM agent_knowledge_pointers WHERE {clause} AND pointer_id = ? "
        "ORDER BY user_id DESC LIMIT 1",
        [*params, pointer_id],
    ).fetchone()
    return None if row is None else _pointer(row)


def list_pages(conn: Connection, workspace: Workspace, limit: int, offset: int) -> list[KnowledgePage]:
    clause, params = _owners(workspace, True)
    rows = conn.execute(
        f"SELECT {_PAGE_COLUMNS} FROM agent_knowledge_pages WHERE {clause} ORDER BY page_id, user_id LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    return [_page(r) for r in rows]


def list_pointers(
    conn: Connection, workspace: Workspace, page_id: str | None, limit: int, offset: int
) -> list[KnowledgePointer]:
    clause, params = _owners(workspace, True)
    if page_id is not None:
        clause += " AND page_id = ?"
        params.append(page_id)
    rows = conn.execute(
        f"SELECT {_POINTER_COLUMNS} FROM agent_knowledge_pointers WHERE {clause} "
        "ORDER BY pointer_id, user_id LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    return [_pointer(r) for r in rows]


def pointer_vectors(
    conn: Connection, workspace: Workspace, embedding_model: str
) -> tuple[list[KnowledgePointer], Vector | None]:
    """Every visible pointer embedded with `embedding_model`, and their vectors as one matrix."""
    clause, params = _owners(workspace, True)
    rows = conn.execute(
        f"SELECT {_POINTER_COLUMNS}, embedding FROM agent_knowledge_pointers WHERE {clause} "
        "AND embedding IS NOT NULL AND embedding_model = ? ORDER BY user_id DESC",
        [*params, embedding_model],
    ).fetchall()
    seen: set[str] = set()
    kept = []
    for row in rows:  # the owner's row first: it hides a shared row with the same id
        if row[0] not in seen:
            seen.add(row[0])
            kept.append(row)
    if not kept:
        return [], None
    matrix = np.frombuffer(b"".join(r[-1] for r in kept), dtype=np.float32).reshape(len(kept), -1)
    return [_pointer(r[:-1]) for r in kept], matrix


def update_knowledge(
    conn: Connection,
    workspace: Workspace,
    target: str,
    item_id: str,
    changes: dict[str, Any],
    vector: Vector | None,
    embedding_model: str | None,
    now: float,
) -> None:
    """Change fields of one of the workspace's own pages or pointers; NotFound if it has no such row."""
    table, key = _TABLES[target]
    assignments = ["updated_at = ?"]
    params: list[Any] = [now]
    for column, value in changes.items():
        if column not in _EDITABLE[target]:
            raise ValidationError(f"{target} field {column!r} cannot be changed", field=column)
        assignments.append(f"{column} = ?")
        params.append(json.dumps(value, default=str) if column in ("cross_references", "metadata") else value)
    if vector is not None:
        assignments += ["embedding = ?", "embedding_model = ?"]
        params += [dialect_of(conn).vector_param(vector), embedding_model]
    clause, owner_params = _owners(workspace, False)
    cursor = conn.execute(
        f"UPDATE {table} SET {', '.join(assignments)} WHERE {clause} AND {key} = ?",
        [*params, *owner_params, item_id],
    )
    if cursor.rowcount == 0:
        raise NotFound(f"{target} {item_id!r} not found in this workspace's own knowledge", id=item_id)


def delete_knowledge(conn: Connection, workspace: Workspace, target: str, item_id: str) -> bool:
    table, key = _TABLES[target]
    clause, params = _owners(workspace, False)
    cursor = conn.execute(f"DELETE FROM {table} WHERE {clause} AND {key} = ?", [*params, item_id])
    return cursor.rowcount > 0
