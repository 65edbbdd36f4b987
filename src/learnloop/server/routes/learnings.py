"""Seed 000's `GET/PUT/DELETE /api/learnings` and the governance around one learning.

There is deliberately no `POST /api/learnings`: learnings are created by the model's tool call
(`/api/tools/save_learning`), by observing a turn (`/api/observe`) or by import.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Path, Query

from ...models import Event, Learning, Origin, Page, Status
from ..auth import ApiDep
from ..errors import ERROR_RESPONSES
from ..schemas import IDENT, NAME, DeletedOut, DeprecateIn, LearningUpdate, ReasonIn, RestoreIn

__all__ = ["router"]

router = APIRouter(prefix="/api/learnings", tags=["learnings"], responses=ERROR_RESPONSES)

LearningId = Annotated[int, Path(ge=1, le=2**53, description="The learning's id")]
UserQuery = Annotated[
    str | None,
    Query(
        pattern=IDENT,
        max_length=128,
        description="Only this user's learnings (a user-bound key may name only its own user)",
    ),
]


@router.get("", summary="List learnings (filter, search, paginate)")
async def list_learnings(
    api: ApiDep,
    category: Annotated[str | None, Query(pattern=NAME, max_length=64)] = None,
    status: Status | None = None,
    user: UserQuery = None,
    text: Annotated[str | None, Query(max_length=500, description="Full-text search")] = None,
    namespace: Annotated[str | None, Query(pattern=NAME, max_length=64)] = None,
    origin: Origin | None = None,
    order: Literal["newest", "oldest", "updated"] = "newest",
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> Page[Learning]:
    """The learnings the key may see, newest first: for a user-bound key its own and the tenant's global
    ones; for admin and app keys every learning of the tenant (narrow with `user`)."""
    owner = api.acting_for(user) if user is not None else None
    return await api.loop.list(
        user=api.scope_user,
        owner=owner,
        category=category,
        status=status,
        namespace=namespace,
        origin=origin,
        text=text or None,
        order=order,
        offset=offset,
        limit=limit,
    )


@router.get("/recent", summary="Recently changed learnings")
async def recent(
    api: ApiDep, user: UserQuery = None, limit: Annotated[int, Query(ge=1, le=100)] = 10
) -> list[Learning]:
    owner = api.acting_for(user) if user is not None else None
    page = await api.loop.list(user=api.scope_user, owner=owner, order="updated", limit=limit)
    return page.items


@router.get("/{learning_id}", summary="One learning")
async def get_learning(api: ApiDep, learning_id: LearningId) -> Learning:
    return await api.loop.get(learning_id, user=api.scope_user)


@router.put("/{learning_id}", summary="Update a learning")
async def update_learning(api: ApiDep, learning_id: LearningId, body: LearningUpdate) -> Learning:
    """Change text, category, topic, tags or type. A new text is re-embedded; a category must be in the
    namespace's vocabulary (422 lists the allowed ones)."""
    return await api.loop.update(
        learning_id,
        user=api.scope_user,
        text=body.text,
        category=body.category,
        topic=body.topic,
        tags=body.tags,
        type=body.type,
        actor=api.actor,
        reason=body.reason,
    )


@router.delete("/{learning_id}", summary="Delete a learning")
async def delete_learning(
    api: ApiDep, learning_id: LearningId, reason: Annotated[str | None, Query(max_length=500)] = None
) -> DeletedOut:
    """Removes the row and its full-text and vector index entries in one transaction; the history stays."""
    deleted = await api.loop.delete(learning_id, user=api.scope_user, actor=api.actor, reason=reason)
    return DeletedOut(id=deleted.id)


@router.post("/{learning_id}/promote", summary="Promote a candidate to verified (409 for any other status)")
async def promote(api: ApiDep, learning_id: LearningId, body: Annotated[ReasonIn | None, Body()] = None) -> Learning:
    reason = body.reason if body else None
    return await api.loop.promote(learning_id, user=api.scope_user, actor=api.actor, reason=reason)


@router.post("/{learning_id}/confirm", summary="Confirm a learning: promote a candidate, raise a verified one")
async def confirm(api: ApiDep, learning_id: LearningId, body: Annotated[ReasonIn | None, Body()] = None) -> Learning:
    """What MCP's `confirm_learning` does: a candidate becomes verified; a verified learning gains confidence.
    A deprecated one is a 409 (restore it instead)."""
    reason = body.reason if body else None
    return await api.loop.confirm(learning_id, user=api.scope_user, actor=api.actor, reason=reason)


@router.post("/{learning_id}/deprecate", summary="Deprecate a learning")
async def deprecate(
    api: ApiDep, learning_id: LearningId, body: Annotated[DeprecateIn | None, Body()] = None
) -> Learning:
    reason = (body or DeprecateIn()).reason
    return await api.loop.deprecate(learning_id, reason, user=api.scope_user, actor=api.actor)


@router.post("/{learning_id}/restore", summary="Bring a deprecated learning back (409 for any other status)")
async def restore(api: ApiDep, learning_id: LearningId, body: Annotated[RestoreIn | None, Body()] = None) -> Learning:
    body = body or RestoreIn()
    return await api.loop.restore(
        learning_id, user=api.scope_user, status=Status(body.status), actor=api.actor, reason=body.reason
    )


@router.get("/{learning_id}/history", summary="Every event of one learning, oldest first")
async def history(api: ApiDep, learning_id: LearningId) -> list[Event]:
    return await api.loop.history(learning_id, user=api.scope_user)
