"""What `loop.identities` answers: canonical users, their channel identities, link codes and link results.

A channel's user id (a phone number on WhatsApp, a session token on the web) is never given back: an identity
shows its pseudonym `id` (what the store keys on, accepted wherever a channel user id is) and `masked_id`, the
last characters, for a person to tell two identities apart."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["CanonicalUser", "ChannelIdentity", "LinkCode", "LinkResult", "ResolvedUser", "UnlinkResult"]


class ChannelIdentity(BaseModel):
    channel: str
    id: str = Field(description="the channel user id's pseudonym (id:<hash>)")
    masked_id: str = Field(description="the last characters of the channel user id, the rest masked")
    user: str = Field(description="the canonical user it maps to")
    username: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    active: bool = True
    created_at: datetime
    last_active: datetime


class CanonicalUser(BaseModel):
    user: str
    display_name: str | None = None
    interaction_count: int = 0
    first_seen: datetime
    last_seen: datetime
    identities: list[ChannelIdentity] = Field(default_factory=list)
    merged_from: list[str] = Field(default_factory=list, description="users merged into this one by linking")


class ResolvedUser(BaseModel):
    """Who a channel message is from: `user` is the id to learn, retrieve and run the agent for."""

    user: str
    channel: str
    id: str
    active: bool = Field(description="false: the identity must not learn")
    created: bool = Field(description="first contact: the identity (and maybe the user) was made just now")
    interaction_count: int


class LinkCode(BaseModel):
    """Give `code` to the person: redeemed on another channel before `expires_at`, it links that identity."""

    code: str
    channel: str
    user: str
    expires_at: datetime


class LinkResult(BaseModel):
    user: str = Field(description="the canonical user both identities map to now")
    linked: bool = Field(description="false: they were one user already")
    merged_from: str | None = Field(default=None, description="the redeemer's former user, merged into `user`")
    learnings_moved: int = 0
    learnings_left: list[int] = Field(
        default_factory=list, description="learnings the write gate now refuses: kept with the former user"
    )


class UnlinkResult(BaseModel):
    channel: str
    id: str
    user: str = Field(description="the identity's new canonical user (it starts with no learnings)")
    previous_user: str = Field(description="keeps everything learned so far")
