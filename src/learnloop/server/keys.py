"""API keys: how they look, how they are issued, how a presented key is checked.

A key is `ll_<key_id>_<secret>`. `key_id` is public and finds the stored row; only an HMAC-SHA256 of the
secret under a per-key random salt is stored, so a copy of the database does not yield usable keys. The
full key is shown once, when it is created.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from ..errors import AuthenticationError, NotFound, PermissionDenied, ValidationError
from ..models import check_identifier, utcnow
from ..stores.service import KeyRecord, ServiceStore

__all__ = ["IssuedKey", "KeyRing", "Principal", "Role", "digest", "issue_key", "parse_key", "verify"]

PREFIX = "ll"
_CACHE_SECONDS = 2.0  # how long a revoked key may still work in a process that saw it a moment ago
_TOUCH_SECONDS = 60.0
_KEY = re.compile(r"^ll_([0-9a-f]{16})_([A-Za-z0-9_-]{32,128})$")


class Role(StrEnum):
    ADMIN = "admin"  # everything in its tenant, including the tenant's vocabulary
    APP = "app"  # reads and writes for any user of its tenant
    USER = "user"  # only its own user's data (and reads of the tenant's global learnings)


@dataclass(frozen=True)
class IssuedKey:
    record: KeyRecord
    key: str  # the full secret key; never stored


def digest(salt: str, secret: str) -> str:
    return hmac.new(bytes.fromhex(salt), secret.encode("ascii"), hashlib.sha256).hexdigest()


def issue_key(
    tenant: str, role: Role | str, *, user: str | None = None, name: str = "", now: datetime | None = None
) -> IssuedKey:
    """A fresh key for `tenant`; user-bound keys (role `user`) need `user`, the others must not have one."""
    role = Role(role)
    check_identifier(tenant, "tenant")
    if role is Role.USER:
        if user is None:
            raise ValidationError("a user-bound key needs a user", field="user")
        check_identifier(user, "user")
    elif user is not None:
        raise ValidationError(f"{role.value} keys act for every user of the tenant; drop the user", field="user")
    if len(name) > 200:
        raise ValidationError("key names are at most 200 characters", field="name")
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    record = KeyRecord(
        key_id=key_id,
        tenant=tenant,
        user=user,
        role=role.value,
        name=name,
        salt=salt,
        digest=digest(salt, secret),
        created_at=now or utcnow(),
    )
    return IssuedKey(record=record, key=f"{PREFIX}_{key_id}_{secret}")


def parse_key(raw: str) -> tuple[str, str] | None:
    """(key_id, secret) of a well-formed key, else None."""
    match = _KEY.match(raw.strip())
    return None if match is None else (match.group(1), match.group(2))


def verify(record: KeyRecord, secret: str) -> bool:
    """Constant-time comparison, so response timing says nothing about how much of a guess was right."""
    return hmac.compare_digest(digest(record.salt, secret), record.digest)


@dataclass(frozen=True)
class Principal:
    key_id: str
    tenant: str
    role: Role
    user: str | None  # set only for user-bound keys

    @property
    def scope_user(self) -> str | None:
        """The user every store call is scoped to: None (whole tenant) for admin and app keys."""
        return self.user if self.role is Role.USER else None

    def acting_for(self, requested: str | None) -> str | None:
        """The end user a call acts for. A user-bound key acts for its own user only; naming another user
        gets the same answer as an unknown one."""
        if self.role is not Role.USER:
            return requested
        if requested is not None and requested != self.user:
            raise NotFound(f"user {requested!r} not found", user=requested)
        return self.user

    def require_admin(self, what: str) -> None:
        if self.role is not Role.ADMIN:
            raise PermissionDenied(f"{what} needs an admin key", role=self.role.value)

    def require_tenant_key(self, what: str) -> None:
        if self.role is Role.USER:
            raise PermissionDenied(f"{what} needs an admin or app key", role=self.role.value)


class KeyRing:
    """Checks presented keys against the stored ones, with a short cache so most requests skip the store."""

    def __init__(self, store: ServiceStore) -> None:
        self._store = store
        self._cache: dict[str, tuple[float, KeyRecord | None]] = {}
        self._touched: dict[str, float] = {}

    async def resolve(self, raw: str) -> Principal:
        parsed = parse_key(raw)
        if parsed is None:
            raise AuthenticationError("malformed API key; keys look like ll_<id>_<secret>")
        key_id, secret = parsed
        record = await self._record(key_id)
        if record is None or not record.active or not verify(record, secret):
            raise AuthenticationError("unknown or revoked API key")
        self._touch(key_id)
        return Principal(key_id=key_id, tenant=record.tenant, role=Role(record.role), user=record.user)

    async def _record(self, key_id: str) -> KeyRecord | None:
        now = time.monotonic()
        cached = self._cache.get(key_id)
        if cached is not None and now - cached[0] < _CACHE_SECONDS:
            return cached[1]
        record = await self._store.get_key(key_id)
        if len(self._cache) > 10_000:  # unknown ids are cached too; keep guessing from growing memory
            self._cache.clear()
        self._cache[key_id] = (now, record)
        return record

    def _touch(self, key_id: str) -> None:
        now = time.monotonic()
        if now - self._touched.get(key_id, -_TOUCH_SECONDS) >= _TOUCH_SECONDS:
            self._touched[key_id] = now
            self._store.touch_key(key_id, utcnow())

    def forget(self, key_id: str) -> None:
        self._cache.pop(key_id, None)

    def forget_user(self, tenant: str, user: str) -> None:
        """Drop the cached keys of a user who was just forgotten (the store deleted them), so this process
        refuses them at once instead of when the cache runs out."""
        for key_id, (_, record) in list(self._cache.items()):
            if record is not None and record.tenant == tenant and record.user == user:
                self._cache.pop(key_id, None)
