"""`GET /api/feedback`: the verdicts on answers (seed 001 §3.1's response_feedback) — from the user's next
message or their silence — newest first. A user-bound key reads its own user's."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel

from ...errors import ValidationError
from ...learning_metrics import feedback_records
from ..auth import ApiDep
from ..errors import ERROR_RESPONSES
from ..schemas import IDENT

__all__ = ["router"]

_TYPE = re.compile(r"^[a-z_]{1,40}$")

router = APIRouter(tags=["metrics"], responses=ERROR_RESPONSES)


class FeedbackOut(BaseModel):
    user: str | None
    session: str
    type: str
    score: float
    at: datetime
    source: Literal["message", "silence"]
    turn: str


@router.get("/api/feedback", summary="Feedback records: the verdicts on answers, newest first")
async def list_feedback(
    api: ApiDep,
    days: Annotated[float, Query(gt=0, le=366)] = 7,
    type: Annotated[list[str] | None, Query(max_length=20, description="only these feedback types")] = None,
    user: Annotated[str | None, Query(pattern=IDENT, max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[FeedbackOut]:
    for kind in type or ():
        if not _TYPE.match(kind):
            raise ValidationError(f"not a feedback type: {kind[:40]!r}", field="type")
    scope_user = api.acting_for(user) if user is not None else api.scope_user
    records = await feedback_records(
        api.loop.engine,
        api.loop.scope(scope_user),
        since=api.now() - timedelta(days=days),
        types=tuple(type or ()),
        limit=limit,
    )
    return [FeedbackOut(**vars(r)) for r in records]
