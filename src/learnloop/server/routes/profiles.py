"""The user profile (seed 001 §2 layer 2, §9): `GET/PUT/DELETE /api/profiles/{user}`. A user-bound key sees and
edits only its own user's profile."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, Field

from ...profile import KINDS, ProfileEdit, UserProfile
from ..auth import ApiDep
from ..errors import ERROR_RESPONSES
from ..schemas import IDENT, Strict

__all__ = ["router"]

router = APIRouter(prefix="/api/profiles", tags=["profiles"], responses=ERROR_RESPONSES)

UserPath = Annotated[str, Path(pattern=IDENT, max_length=128)]
_VALUE = Annotated[str, Field(min_length=1, max_length=100)]


class ProfileEditIn(Strict):
    """Fields left out stay as they are; null gives the field back to what the patterns say."""

    favourite_metrics: list[_VALUE] | None = Field(default=None, max_length=10)
    preferred_time_range: _VALUE | None = None


class Removed(BaseModel):
    removed: int


@router.get("/{user}", summary="A user's profile: favourite metrics, time range, query types, patterns")
async def get_profile(api: ApiDep, user: UserPath) -> UserProfile:
    return await api.loop.profiles.get(api.acting_for(user) or user)


@router.put("/{user}", summary="Set what a user's profile says by hand (it wins over the learned patterns)")
async def edit_profile(api: ApiDep, user: UserPath, body: ProfileEditIn) -> UserProfile:
    edit = ProfileEdit.model_validate({name: getattr(body, name) for name in body.model_fields_set})
    return await api.loop.profiles.edit(api.acting_for(user) or user, edit)


@router.delete("/{user}", summary="Forget a user's profile, or one kind of pattern in it")
async def forget_profile(
    api: ApiDep,
    user: UserPath,
    kind: Annotated[str | None, Query(description=f"one of {', '.join(KINDS)}", max_length=32)] = None,
    value: Annotated[list[str] | None, Query(max_length=20, description="only these values of the kind")] = None,
) -> Removed:
    removed = await api.loop.profiles.forget(api.acting_for(user) or user, kind=kind, values=value)
    return Removed(removed=removed)
