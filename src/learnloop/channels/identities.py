"""`loop.identities`: one person across channels (seed 001 §2 `users` / `channel_sessions`, §7 step 0, §8.8).

    who = await loop.identities.resolve("telegram", "123456789", username="ana")   # first contact makes a user
    await loop.turn(who.user, message)                                              # learning keys on who.user
    code = await loop.identities.issue_link_code("telegram", "123456789")           # shown on Telegram
    await loop.identities.redeem_link_code("whatsapp", "+447700900123", code.code)   # typed on WhatsApp: linked

A channel's user id is a phone number or a session token: it is stored only as a pseudonym and a masked hint,
never in a learning's text or a prompt. Link codes are stored hashed, expire (10 minutes), are single-use, and
an identity that redeems too many wrong ones is locked out for a while. Linking two users that both have history
merges them (`channels.merge`); unlinking gives the identity a fresh user and leaves what was learned behind.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..capture.fields import redact_text, redact_values
from ..errors import (
    ConfigurationError,
    ConflictError,
    LinkCodeInvalid,
    LinkLocked,
    NotFound,
    ValidationError,
)
from ..models import Scope, check_identifier
from ..profile import ProfileService
from ..sdk_edge import sdk_edge
from ..stores.identities import IdentityRow, IdentityStore, IdentityTouch, LinkOutcome, LinkPolicy
from .merge import merge_users
from .records import CanonicalUser, ChannelIdentity, LinkCode, LinkResult, ResolvedUser, UnlinkResult

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = ["IdentityConfig", "IdentityService", "channel_key", "finish_pending_merges", "masked"]

log = logging.getLogger("learnloop.channels")

_REGISTRY = "_learnloop_identity_configs"
_CHANNEL = re.compile(r"^[a-z][a-z0-9_.-]{0,31}$")
_PSEUDONYM = re.compile(r"^id:[0-9a-f]{24}$")
# No 0/O, 1/I/L: a code is read off one screen and typed into another.
_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
_MAX_METADATA = 4096
_MAX_NAME = 128  # characters (code points) of a username or display name kept


@dataclass(frozen=True)
class IdentityConfig:
    code_ttl: timedelta = timedelta(minutes=10)
    code_length: int = 8
    max_failures: int = 5  # wrong codes from one identity before it is locked out
    lockout: timedelta = timedelta(minutes=15)

    def __post_init__(self) -> None:
        if not timedelta(seconds=30) <= self.code_ttl <= timedelta(days=1):
            raise ValidationError("code_ttl must be between 30 seconds and a day", field="code_ttl")
        if not 6 <= self.code_length <= 16:
            raise ValidationError("code_length must be within 6..16", field="code_length")
        if self.max_failures < 1 or self.lockout <= timedelta(0):
            raise ValidationError("max_failures must be at least 1 and lockout positive", field="max_failures")


def channel_key(channel: str, channel_user_id: str) -> str:
    """The pseudonym a channel user id is stored as (a pseudonym given back is taken as it is)."""
    value = _user_id(channel_user_id)
    if _PSEUDONYM.match(value):
        return value
    digest = hashlib.blake2b(f"{channel}\x00{value}".encode(), digest_size=12, person=b"learnloop-chan")
    return f"id:{digest.hexdigest()}"


def masked(channel_user_id: str) -> str:
    """The last few letters or digits, the rest dots: enough to tell two identities apart on a page."""
    if _PSEUDONYM.match(channel_user_id):
        return "•••"
    chars = [c for c in channel_user_id if c.isalnum()]
    keep = 4 if len(chars) >= 8 else 2 if len(chars) >= 5 else 0
    return "•••" + "".join(chars[len(chars) - keep :]) if keep else "•••"


def _channel(channel: str) -> str:
    if not isinstance(channel, str) or not _CHANNEL.match(channel):
        raise ValidationError(
            f"channel must be 1-32 lowercase letters, digits and _.- starting with a letter (got {channel!r})",
            field="channel",
        )
    return channel


def _user_id(value: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 256:
        raise ValidationError("channel_user_id must be 1-256 characters", field="channel_user_id")
    if any(ord(c) < 32 for c in value):
        raise ValidationError("channel_user_id must not hold control characters", field="channel_user_id")
    return value.strip()


def _identity(row: IdentityRow) -> ChannelIdentity:
    return ChannelIdentity(
        channel=row.channel,
        id=row.channel_key,
        masked_id=row.masked_id,
        user=row.user,
        username=row.username,
        metadata=row.metadata,
        active=row.active,
        created_at=row.created_at,
        last_active=row.last_active,
    )


def _configs(engine: Engine) -> dict[str, IdentityConfig]:
    found: dict[str, IdentityConfig] | None = engine.__dict__.get(_REGISTRY)
    if found is None:
        found = engine.__dict__[_REGISTRY] = {}
    return found


def fresh_user_id() -> str:
    return f"user-{secrets.token_hex(8)}"


@sdk_edge
class IdentityService:
    """Canonical users and channel identities of one tenant: `loop.identities`."""

    __learnloop_async__ = True

    def __init__(self, engine: Engine, tenant: str) -> None:
        self._engine = engine
        self.tenant = Scope(tenant=tenant).tenant

    def __repr__(self) -> str:
        return f"IdentityService(tenant={self.tenant!r})"

    @property
    def config(self) -> IdentityConfig:
        return _configs(self._engine).get(self.tenant, IdentityConfig())

    def configure(self, config: IdentityConfig) -> None:
        """Code lifetime and length, and the lock-out, for this tenant (this process)."""
        _configs(self._engine)[self.tenant] = config

    @property
    def store(self) -> IdentityStore:
        store = self._engine.identities
        if store is None:
            raise ConfigurationError(f"{self._engine.store!r} keeps no identities: they need a backend that does")
        return store

    async def _started(self) -> IdentityStore:
        await self._engine.ensure_started()
        return self.store

    # -- resolving -------------------------------------------------------------------------------------

    async def resolve(
        self,
        channel: str,
        channel_user_id: str,
        *,
        username: str | None = None,
        display_name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        at: datetime | None = None,
        user: str | None = None,
    ) -> ResolvedUser:
        """Who a message from this channel identity is from. First contact makes the identity, with a fresh
        canonical user (or `user`, an id the app already has); every call counts one interaction."""
        return await self._touch(channel, channel_user_id, username, display_name, metadata, at, user, count=True)

    async def attach(
        self,
        channel: str,
        channel_user_id: str,
        user: str,
        *,
        username: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> ResolvedUser:
        """Tie an identity to a user the app knows (an API or web login) without a code: the app vouches."""
        return await self._touch(channel, channel_user_id, username, None, metadata, None, user, count=False)

    async def _touch(
        self,
        channel: str,
        channel_user_id: str,
        username: str | None,
        display_name: str | None,
        metadata: Mapping[str, Any] | None,
        at: datetime | None,
        user: str | None,
        *,
        count: bool,
    ) -> ResolvedUser:
        channel = _channel(channel)
        key = channel_key(channel, channel_user_id)
        if user is not None:
            check_identifier(user, "user")
        store = await self._started()
        if user is not None:
            found = await store.identity(self.tenant, channel, key)
            if found is not None and found.user != user:
                raise ConflictError(
                    f"this {channel} identity belongs to another user: unlink it first, or link it with a code",
                    field="user",
                )
        touch = IdentityTouch(
            channel=channel,
            channel_key=key,
            masked_id=masked(channel_user_id.strip()),
            new_user=user or fresh_user_id(),
            username=self._text(username, "username"),
            display_name=self._text(display_name, "display_name"),
            metadata=self._metadata(metadata),
            at=at or self._engine.clock(),
            count=count,
        )
        identity, account, created = await store.touch(self.tenant, touch)
        return ResolvedUser(
            user=identity.user,
            channel=channel,
            id=key,
            active=identity.active,
            created=created,
            interaction_count=account.interaction_count,
        )

    def _text(self, value: str | None, field: str) -> str | None:
        """A name the channel gave: kept, with any phone number, email or secret in it redacted. A long one is
        cut, never refused: a channel's names can be longer (Telegram's first and last name, 64 each, joined),
        and refusing one would leave that person unanswered."""
        if value is None:
            return None
        if not isinstance(value, str):
            raise ValidationError(f"{field} must be a string", field=field)
        return redact_text(self._engine.gate, value.strip()[:_MAX_NAME].strip()) or None

    def _metadata(self, metadata: Mapping[str, Any] | None) -> dict[str, Any] | None:
        if metadata is None:
            return None
        if not isinstance(metadata, Mapping):
            raise ValidationError("metadata must be an object", field="metadata")
        value = redact_values(self._engine.gate, dict(metadata))
        if len(repr(value)) > _MAX_METADATA:
            raise ValidationError(f"metadata must be under {_MAX_METADATA} characters", field="metadata")
        return dict(value)

    # -- reading ---------------------------------------------------------------------------------------

    async def user(self, user: str) -> CanonicalUser:
        """The canonical user: name, interactions across channels, first and last seen, identities."""
        check_identifier(user, "user")
        store = await self._started()
        row = await store.user(self.tenant, user)
        if row is None:
            raise NotFound(f"no user {user!r} with channel identities", user=user)
        identities = await store.identities(self.tenant, user)
        return CanonicalUser(
            user=row.user,
            display_name=row.display_name,
            interaction_count=row.interaction_count,
            first_seen=row.first_seen,
            last_seen=row.last_seen,
            identities=[_identity(r) for r in identities],
            merged_from=await store.merged_users(self.tenant, user),
        )

    async def identities(self, user: str) -> list[ChannelIdentity]:
        """The user's channel identities, most recently active first (none: an empty list)."""
        check_identifier(user, "user")
        store = await self._started()
        return [_identity(r) for r in await store.identities(self.tenant, user)]

    async def identity(self, channel: str, channel_user_id: str) -> ChannelIdentity:
        channel = _channel(channel)
        store = await self._started()
        row = await store.identity(self.tenant, channel, channel_key(channel, channel_user_id))
        if row is None:
            raise NotFound(f"no {channel} identity with that id", channel=channel)
        return _identity(row)

    async def merged_users(self, user: str) -> list[str]:
        """Users merged into `user` by linking (their ids stay aliases of it; forgetting it forgets them)."""
        check_identifier(user, "user")
        store = await self._started()
        return await store.merged_users(self.tenant, user)

    # -- linking ---------------------------------------------------------------------------------------

    def _hash(self, code: str) -> str:
        normal = code.replace(" ", "").replace("-", "").upper()
        digest = hashlib.blake2b(
            normal.encode(), digest_size=16, key=self.tenant.encode()[:64], person=b"learnloop-link"
        )
        return digest.hexdigest()

    async def issue_link_code(self, channel: str, channel_user_id: str) -> LinkCode:
        """A short code for this identity's user, shown to the person here and typed on the other channel. It
        replaces the identity's earlier code, expires after `config.code_ttl` and works once."""
        channel = _channel(channel)
        key = channel_key(channel, channel_user_id)
        store = await self._started()
        config = self.config
        now = self._engine.clock()
        expires = now + config.code_ttl
        for attempt in range(3):
            code = "".join(secrets.choice(_ALPHABET) for _ in range(config.code_length))
            try:
                user = await store.issue_code(self.tenant, channel, key, self._hash(code), now, expires)
            except ConflictError:
                if attempt == 2:
                    raise
                continue
            return LinkCode(code=code, channel=channel, user=user, expires_at=expires)
        raise AssertionError("unreachable")

    async def redeem_link_code(self, channel: str, channel_user_id: str, code: str) -> LinkResult:
        """Join this identity to the user that issued `code`. A user with history of its own is merged into
        that one. A wrong, expired or used code links nothing (`LinkCodeInvalid`) and counts towards a lock-out
        (`LinkLocked`, with the time to retry); the used code sent again by the identity that used it answers
        `linked=False` and finishes the merge if it was cut short."""
        channel = _channel(channel)
        key = channel_key(channel, channel_user_id)
        if not isinstance(code, str) or len(code) > 64:
            raise ValidationError("code must be a string of at most 64 characters", field="code")
        store = await self._started()
        config = self.config
        now = self._engine.clock()
        policy = LinkPolicy(max_failures=config.max_failures, lockout_seconds=config.lockout.total_seconds())
        found = await store.redeem_code(self.tenant, channel, key, self._hash(code), now, policy)
        if found.outcome is LinkOutcome.LOCKED:
            assert found.retry_at is not None
            wait = max(1, int((found.retry_at - now).total_seconds()) + 1)
            raise LinkLocked(
                f"too many wrong link codes: try again after {found.retry_at.isoformat()}",
                retry_at=found.retry_at.isoformat(),
                retry_after=wait,
            )
        if found.outcome is LinkOutcome.INVALID:
            left = config.max_failures - found.failures
            raise LinkCodeInvalid(
                f"that link code is wrong, expired or used: nothing was linked ({left} tries left)",
                field="code",
                tries_left=left,
            )
        if found.outcome is LinkOutcome.OWN_CODE:
            raise ValidationError(
                "a link code is redeemed on another channel than the one it was issued on", field="code"
            )
        assert found.into_user is not None and found.from_user is not None
        if found.outcome is LinkOutcome.ALREADY:
            await self.finish_merges()  # a retry after a merge was cut short finishes it
            return LinkResult(user=found.into_user, linked=False)
        report = await merge_users(
            self._engine, store, self.tenant, found.from_user, found.into_user, self._half_life()
        )
        # Another link at the same time may have left a merge to follow this one (A joined B while B joined C).
        await self.finish_merges()
        return LinkResult(
            user=report.into,
            linked=True,
            merged_from=found.from_user,
            learnings_moved=report.moved,
            learnings_left=report.left,
        )

    async def finish_merges(self) -> int:
        """Finish merges cut short (a crash, an error) or waiting for a turn that was running; returns how many
        finished. Safe to run at any time and in several processes at once: each learning moves under its
        revision (a second mover's update conflicts and is skipped), and the rest moves in one transaction that
        first checks the merge is still unfinished."""
        store = await self._started()
        done = 0
        for from_user, into in await store.pending_merges(self.tenant):
            report = await merge_users(self._engine, store, self.tenant, from_user, into, self._half_life())
            done += report.finished
        return done

    def _half_life(self) -> float:
        """The profile's decay: a merge adds two users' pattern weights at one time."""
        return ProfileService(self._engine, self.tenant).config.half_life_days

    async def set_active(self, channel: str, channel_user_id: str, active: bool) -> ChannelIdentity:
        """Stop an identity from learning (a shared phone, a test account), or let it again: `resolve` answers
        `active=False` for it, and the caller then runs turns without learning. It still maps to its user."""
        channel = _channel(channel)
        if not isinstance(active, bool):
            raise ValidationError("active must be true or false", field="active")
        store = await self._started()
        return _identity(await store.set_active(self.tenant, channel, channel_key(channel, channel_user_id), active))

    async def unlink(self, channel: str, channel_user_id: str) -> UnlinkResult:
        """The identity leaves its user for a fresh one of its own: what was learned stays with the user it
        left, and its new messages learn into the new one. Its user's only identity cannot be unlinked."""
        channel = _channel(channel)
        key = channel_key(channel, channel_user_id)
        store = await self._started()
        fresh = fresh_user_id()
        previous = await store.unlink(self.tenant, channel, key, fresh, self._engine.clock())
        return UnlinkResult(channel=channel, id=key, user=fresh, previous_user=previous)


async def finish_pending_merges(engine: Engine) -> int:
    """Finish every tenant's unfinished merges; how many. The turns' background work runs it (at service
    start-up, in each housekeeping pass, after turns' work), so a failure is logged, not raised: the next pass
    tries again."""
    store = engine.identities
    if store is None:
        return 0
    done = 0
    for tenant in await store.merging_tenants():
        try:
            done += await IdentityService(engine, tenant).finish_merges()
        except Exception:
            log.exception("finishing the merges of tenant %s failed", tenant)
    return done
