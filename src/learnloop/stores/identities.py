"""Storage of channel identities (`learnloop.channels.identities`): the part a backend offers as `store.identities`.

A channel's user id reaches the store only as its pseudonym (`channel_key`); the service makes it. Every call is
scoped by tenant, and every write is one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

__all__ = [
    "IdentityRow",
    "IdentityStore",
    "IdentityTouch",
    "LinkOutcome",
    "LinkPolicy",
    "MergeStep",
    "RedeemRow",
    "UserRow",
]


@dataclass(frozen=True)
class UserRow:
    user: str
    display_name: str | None
    interaction_count: int
    first_seen: datetime
    last_seen: datetime
    merged_into: str | None = None
    merge_done: bool = False


@dataclass(frozen=True)
class IdentityRow:
    channel: str
    channel_key: str
    user: str
    masked_id: str
    username: str | None
    metadata: dict[str, Any]
    active: bool
    created_at: datetime
    last_active: datetime


@dataclass(frozen=True)
class IdentityTouch:
    """One message from an identity: who it is, what the channel said of them, and when."""

    channel: str
    channel_key: str
    masked_id: str
    new_user: str  # the canonical id to create when the identity is new (the app's, or a fresh one)
    username: str | None
    display_name: str | None
    metadata: dict[str, Any] | None
    at: datetime
    count: bool = True  # an interaction: counted on the canonical user


@dataclass(frozen=True)
class LinkPolicy:
    max_failures: int
    lockout_seconds: float


class LinkOutcome(StrEnum):
    LINKED = "linked"  # the redeemer joined the issuer's user (a merge may follow)
    ALREADY = "already"  # both identities were already one user
    INVALID = "invalid"  # no such code, expired or used: one failure counted
    LOCKED = "locked"  # too many failures: try again after `retry_at`
    OWN_CODE = "own_code"  # redeemed on the identity that issued it


@dataclass(frozen=True)
class RedeemRow:
    outcome: LinkOutcome
    into_user: str | None = None  # the issuer's canonical user
    from_user: str | None = None  # the redeemer's canonical user before (to merge into `into_user`)
    retry_at: datetime | None = None
    failures: int = 0


@dataclass(frozen=True)
class MergeStep:
    """What one `finish_merge` call did. Not `done`: run the merge again (towards `target`), unless `waiting`."""

    done: bool  # every row moved and the merge marked finished (by this call or an earlier one)
    moved: int = 0
    target: str | None = None  # the user to join now: the one asked for has since joined this one
    waiting: bool = False  # a turn of the merged-away user is still open: a later pass finishes the merge
    finished: bool = False  # this call marked it done (not an earlier one)


class IdentityStore(Protocol):
    async def touch(self, tenant: str, touch: IdentityTouch) -> tuple[IdentityRow, UserRow, bool]:
        """The identity (created on first contact, with its canonical user when that is new), its last activity
        and the user's interaction count and last seen moved on; True when the identity is new."""
        ...

    async def identity(self, tenant: str, channel: str, channel_key: str) -> IdentityRow | None: ...

    async def identities(self, tenant: str, user: str) -> list[IdentityRow]: ...

    async def user(self, tenant: str, user: str) -> UserRow | None: ...

    async def merged_users(self, tenant: str, into: str) -> list[str]:
        """Users merged into `into` (directly or through one merged earlier)."""
        ...

    async def pending_merges(self, tenant: str) -> list[tuple[str, str]]:
        """(from, into) of merges that started and have not finished moving rows."""
        ...

    async def merging_tenants(self) -> list[str]:
        """Tenants with a merge not finished (for the housekeeping pass, which serves every tenant)."""
        ...

    async def merge_target(self, tenant: str, user: str) -> str:
        """The user `user` belongs to now: itself, or the end of its chain of merges (A joined B, B joined C: C)."""
        ...

    async def issue_code(
        self, tenant: str, channel: str, channel_key: str, code_hash: str, now: datetime, expires_at: datetime
    ) -> str:
        """Store a code for the identity (its earlier unused codes go); returns the identity's user."""
        ...

    async def redeem_code(
        self, tenant: str, channel: str, channel_key: str, code_hash: str, now: datetime, policy: LinkPolicy
    ) -> RedeemRow:
        """Check the redeemer's lock, then the code: a failure is counted (and committed) before the answer, a
        success uses the code, moves every identity of the redeemer's user to the issuer's and starts the
        merge of the two users (`begin_merge`), in one transaction. A success clears no failure. A used code sent
        again by an identity of the user it joined is `ALREADY`, not a failure (the caller finishes the merge)."""
        ...

    async def unlink(self, tenant: str, channel: str, channel_key: str, fresh_user: str, now: datetime) -> str:
        """Move the identity to a new canonical user `fresh_user`; returns the user it left."""
        ...

    async def set_active(self, tenant: str, channel: str, channel_key: str, active: bool) -> IdentityRow:
        """Let the identity learn, or not (its messages still resolve to its user)."""
        ...

    async def finish_merge(
        self, tenant: str, from_user: str, into_user: str, half_life_days: float, kept: Sequence[int] = ()
    ) -> MergeStep:
        """Move the rest of `from_user`'s rows to `into_user` (history, profile and counters summed) and mark the
        merge done, in one transaction. Nothing moves while `into_user` is no longer the end of the chain or
        `from_user` still has live learnings other than `kept` (the gate refused those); an open turn of
        `from_user` stays with it and leaves the merge unfinished (`waiting`)."""
        ...
