"""One person across channels (seed 001 §8.8): `/api/identities/...` resolves a channel's user to the canonical
user, links two identities with a code, unlinks one, and shows a user and their channels.

Resolving and attaching need an app or admin key (the app vouches for the channel's id). A user-bound key reads
only its own user, and issues, redeems and unlinks only for identities of its own user."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, Field, StringConstraints

from ...channels.records import CanonicalUser, ChannelIdentity, LinkCode, LinkResult, ResolvedUser, UnlinkResult
from ..auth import Api, ApiDep
from ..errors import ERROR_RESPONSES
from ..schemas import IDENT, Ident, Strict

__all__ = ["router"]

router = APIRouter(
    prefix="/api/identities",
    tags=["identities"],
    responses={
        **ERROR_RESPONSES,
        # The same error shape as every other status.
        400: {**ERROR_RESPONSES[422], "description": "A link code that is wrong, expired or used: nothing linked"},
        429: {**ERROR_RESPONSES[422], "description": "Too many wrong link codes: `retry_at` says when to try again"},
    },
)

UserPath = Annotated[str, Path(pattern=IDENT, max_length=128)]
Channel = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_.-]{0,31}$")]
ChannelUserId = Annotated[str, StringConstraints(min_length=1, max_length=256)]
ShortText = Annotated[str, StringConstraints(max_length=128)]


class IdentityIn(Strict):
    channel: Channel = Field(description="telegram, whatsapp, web, api, … (lowercase)")
    channel_user_id: ChannelUserId = Field(description="the channel's id of the person, or its pseudonym id:…")


class ResolveIn(IdentityIn):
    username: ShortText | None = None
    display_name: ShortText | None = None
    metadata: dict[str, Any] | None = None
    user: Ident | None = Field(default=None, description="attach a new identity to this known user")
    count: bool = Field(default=True, description="false: attach without counting an interaction")


class ActiveIn(IdentityIn):
    active: bool


class RedeemIn(IdentityIn):
    code: Annotated[str, StringConstraints(min_length=1, max_length=64)]


async def _own(api: Api, body: IdentityIn) -> None:
    """A user-bound key acts only on identities of its own user (another's is as good as unknown)."""
    if api.scope_user is None:
        return
    found = await api.loop.identities.identity(body.channel, body.channel_user_id)
    api.acting_for(found.user)


@router.post("/resolve", summary="The canonical user of a channel's user (made on first contact)")
async def resolve(api: ApiDep, body: ResolveIn) -> ResolvedUser:
    api.principal.require_tenant_key("resolving channel identities")
    ids = api.loop.identities
    if not body.count and body.user is not None:
        return await ids.attach(
            body.channel, body.channel_user_id, body.user, username=body.username, metadata=body.metadata
        )
    return await ids.resolve(
        body.channel,
        body.channel_user_id,
        username=body.username,
        display_name=body.display_name,
        metadata=body.metadata,
        user=body.user,
    )


@router.get("/users/{user}", summary="A canonical user: name, interactions, first and last seen, channels")
async def get_user(api: ApiDep, user: UserPath) -> CanonicalUser:
    return await api.loop.identities.user(api.acting_for(user) or user)


@router.get("/users/{user}/identities", summary="A user's channel identities, most recently active first")
async def list_identities(api: ApiDep, user: UserPath) -> list[ChannelIdentity]:
    return await api.loop.identities.identities(api.acting_for(user) or user)


@router.post("/link-codes", summary="Issue a short-lived, single-use code on one identity to link another")
async def issue_code(api: ApiDep, body: IdentityIn) -> LinkCode:
    await _own(api, body)
    return await api.loop.identities.issue_link_code(body.channel, body.channel_user_id)


@router.post("/link", summary="Redeem a link code on another identity: it joins the code's user")
async def redeem(api: ApiDep, body: RedeemIn) -> LinkResult:
    await _own(api, body)
    return await api.loop.identities.redeem_link_code(body.channel, body.channel_user_id, body.code)


@router.post("/unlink", summary="Give an identity a fresh user of its own; what was learned stays")
async def unlink(api: ApiDep, body: IdentityIn) -> UnlinkResult:
    await _own(api, body)
    return await api.loop.identities.unlink(body.channel, body.channel_user_id)


@router.post("/active", summary="Stop an identity from learning, or let it learn again")
async def set_active(api: ApiDep, body: ActiveIn) -> ChannelIdentity:
    api.principal.require_tenant_key("stopping an identity from learning")
    return await api.loop.identities.set_active(body.channel, body.channel_user_id, body.active)


class MergesDone(BaseModel):
    finished: int = Field(description="merges finished by this call (others may have been finished meanwhile)")


@router.post("/merges/finish", summary="Finish merges of linked users cut short (admin; safe to repeat)")
async def finish_merges(api: ApiDep) -> MergesDone:
    api.principal.require_admin("finishing merges")
    return MergesDone(finished=await api.loop.identities.finish_merges())
