"""The review queue dedupe leaves for people: possible duplicates and conflicts, resolving them, undoing a merge
or a replacement, and where a learning came from."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from ...models import Learning, LearningLink, Page, Provenance
from ...review import ReviewItem
from ..auth import ApiDep
from ..errors import ERROR_RESPONSES
from ..schemas import ResolveIn

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["review"], responses=ERROR_RESPONSES)

LearningId = Annotated[int, Path(ge=1, le=2**53, description="The learning's id")]
LinkId = Annotated[int, Path(ge=1, le=2**53, description="The link's id")]


@router.get("/review", summary="Possible duplicates and conflicts waiting for a person")
async def review_queue(
    api: ApiDep,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> Page[ReviewItem]:
    """Open links, newest first, each with both learnings (`new` is the later one). Dedupe creates one when it
    keeps a learning it could not show to be a different fact from an existing one."""
    return await api.loop.review_queue(user=api.scope_user, offset=offset, limit=limit)


@router.post("/review/{link_id}/resolve", summary="Resolve a possible duplicate or conflict")
async def resolve(api: ApiDep, link_id: LinkId, body: ResolveIn) -> list[Learning]:
    """`keep_both`, `keep_new` (the older one is deprecated, naming the newer), `keep_old`, or `merge` (one new
    learning stating both, or `text` if given; both are deprecated naming it). Returns what is live after."""
    return await api.loop.resolve(
        link_id, body.resolution, user=api.scope_user, text=body.text, actor=api.actor, reason=body.reason
    )


@router.post("/learnings/{learning_id}/undo", summary="Undo the merge or replacement that made this learning")
async def undo(api: ApiDep, learning_id: LearningId) -> list[Learning]:
    """The learning it replaced comes back with the status it had; a merge is split back into both texts."""
    return await api.loop.undo(learning_id, user=api.scope_user, actor=api.actor)


@router.get("/learnings/{learning_id}/sources", summary="Where a learning came from")
async def sources(api: ApiDep, learning_id: LearningId) -> list[Provenance]:
    return await api.loop.provenance(learning_id, user=api.scope_user)


@router.get("/learnings/{learning_id}/links", summary="Review links of one learning, open and resolved")
async def links(api: ApiDep, learning_id: LearningId) -> list[LearningLink]:
    return await api.loop.links(learning_id, user=api.scope_user)
