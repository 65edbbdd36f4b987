"""Channel identities, canonical users and link codes (`stores.identities`) as SQL run on the store's thread.

Every statement names the tenant; every write is one transaction. A failed redemption is committed before the
caller hears of it, so a lock-out counts attempts across requests and processes."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from ...errors import ConflictError, NotFound, ValidationError
from ..identities import IdentityRow, IdentityTouch, LinkOutcome, LinkPolicy, MergeStep, RedeemRow, UserRow
from .dialect import Connection
from .jobs import ConnectionJobs
from .transactions import read_transaction, write_transaction
from .user_merge import finish_merge, merge_root

__all__ = ["IDENTITY_USER_TABLES", "SqlIdentityStore"]

T = TypeVar("T")
# Forgetting a user deletes their rows in these (link codes they issued, attempts they made, their identities).
IDENTITY_USER_TABLES = ("channel_identities", "link_codes", "link_attempts", "canonical_users")
_IDENTITY = (
    "channel, channel_key, user_id, masked_id, username, metadata, active, created_at, last_active "
    "FROM channel_identities"
)
_USER = "user_id, display_name, interaction_count, first_seen, last_seen, merged_into, merge_done FROM canonical_users"


def _at(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def _identity(row: Any) -> IdentityRow:
    return IdentityRow(
        channel=row[0],
        channel_key=row[1],
        user=row[2],
        masked_id=row[3],
        username=row[4],
        metadata=json.loads(row[5]),
        active=bool(row[6]),
        created_at=_at(row[7]),
        last_active=_at(row[8]),
    )


def _user(row: Any) -> UserRow:
    return UserRow(
        user=row[0],
        display_name=row[1],
        interaction_count=int(row[2]),
        first_seen=_at(row[3]),
        last_seen=_at(row[4]),
        merged_into=row[5],
        merge_done=bool(row[6]),
    )


class SqlIdentityStore:
    def __init__(self, store: ConnectionJobs, moved: Callable[[str], None] = lambda tenant: None) -> None:
        self._store = store
        # Told (on the store's thread) when a merge moved rows past the tool store, so its caches reload.
        self._moved = moved

    def __repr__(self) -> str:
        return f"SqlIdentityStore({self._store.path!r})"

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return await self._store._run(fn, *args)

    async def touch(self, tenant: str, touch: IdentityTouch) -> tuple[IdentityRow, UserRow, bool]:
        return await self._run(_touch, tenant, touch)

    async def identity(self, tenant: str, channel: str, channel_key: str) -> IdentityRow | None:
        return await self._run(_get_identity, tenant, channel, channel_key)

    async def identities(self, tenant: str, user: str) -> list[IdentityRow]:
        return await self._run(_identities, tenant, user)

    async def user(self, tenant: str, user: str) -> UserRow | None:
        return await self._run(_get_user, tenant, user)

    async def merged_users(self, tenant: str, into: str) -> list[str]:
        return await self._run(_merged_users, tenant, into)

    async def pending_merges(self, tenant: str) -> list[tuple[str, str]]:
        return await self._run(_pending, tenant)

    async def issue_code(
        self, tenant: str, channel: str, channel_key: str, code_hash: str, now: datetime, expires_at: datetime
    ) -> str:
        return await self._run(_issue, tenant, channel, channel_key, code_hash, now.timestamp(), expires_at.timestamp())

    async def redeem_code(
        self, tenant: str, channel: str, channel_key: str, code_hash: str, now: datetime, policy: LinkPolicy
    ) -> RedeemRow:
        return await self._run(_redeem, tenant, channel, channel_key, code_hash, now.timestamp(), policy)

    async def unlink(self, tenant: str, channel: str, channel_key: str, fresh_user: str, now: datetime) -> str:
        return await self._run(_unlink, tenant, channel, channel_key, fresh_user, now.timestamp())

    async def set_active(self, tenant: str, channel: str, channel_key: str, active: bool) -> IdentityRow:
        return await self._run(_set_active, tenant, channel, channel_key, active)

    async def merging_tenants(self) -> list[str]:
        return await self._run(_merging_tenants)

    async def merge_target(self, tenant: str, user: str) -> str:
        return await self._run(merge_root, tenant, user)

    async def finish_merge(
        self, tenant: str, from_user: str, into_user: str, half_life_days: float, kept: Sequence[int] = ()
    ) -> MergeStep:
        return await self._run(self._finish, tenant, from_user, into_user, half_life_days, tuple(kept))

    def _finish(
        self,
        conn: Connection,
        tenant: str,
        from_user: str,
        into_user: str,
        half_life_days: float,
        kept: tuple[int, ...],
    ) -> MergeStep:
        step = finish_merge(conn, tenant, from_user, into_user, half_life_days * 86_400.0, kept)
        if step.moved:
            self._moved(tenant)
        return step


def _ensure_user(conn: Connection, tenant: str, user: str, now: float, display_name: str | None) -> None:
    conn.execute(
        "INSERT INTO canonical_users (tenant, user_id, display_name, interaction_count, first_seen, last_seen) "
        "VALUES (?, ?, ?, 0, ?, ?) ON CONFLICT (tenant, user_id) DO NOTHING",
        (tenant, user, display_name, now, now),
    )


def _owner(conn: Connection, key: tuple[str, str, str]) -> str | None:
    """The user a (tenant, channel, channel_key) identity belongs to, if it exists."""
    row = conn.execute(
        "SELECT user_id FROM channel_identities WHERE tenant = ? AND channel = ? AND channel_key = ?", key
    ).fetchone()
    return None if row is None else str(row[0])


def _touch(conn: Connection, tenant: str, touch: IdentityTouch) -> tuple[IdentityRow, UserRow, bool]:
    now = touch.at.timestamp()
    key = (tenant, touch.channel, touch.channel_key)
    with write_transaction(conn, ordered=False):
        owner = _owner(conn, key)
        created = False
        if owner is None:
            # Two first messages at once (PostgreSQL takes only row locks here): one inserts, the other finds it.
            created = bool(
                conn.execute(
                    "INSERT INTO channel_identities (tenant, channel, channel_key, user_id, masked_id, username, "
                    "metadata, active, created_at, last_active) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?) "
                    "ON CONFLICT (tenant, channel, channel_key) DO NOTHING",
                    (*key, touch.new_user, touch.masked_id, touch.username, json.dumps(touch.metadata or {}), now, now),
                ).rowcount
            )
            if not created:
                owner = _owner(conn, key)
        if created:
            user = touch.new_user
            _ensure_user(conn, tenant, user, now, touch.display_name)
        else:
            assert owner is not None
            user = owner
            sets: list[str] = ["last_active = CASE WHEN last_active > ? THEN last_active ELSE ? END"]
            params: list[Any] = [now, now]
            if touch.username is not None:
                sets.append("username = ?")
                params.append(touch.username)
            if touch.metadata is not None:
                sets.append("metadata = ?")
                params.append(json.dumps(touch.metadata))
            conn.execute(
                f"UPDATE channel_identities SET {', '.join(sets)} WHERE tenant = ? AND channel = ? AND channel_key = ?",
                (*params, *key),
            )
            _ensure_user(conn, tenant, user, now, touch.display_name)
        conn.execute(
            "UPDATE canonical_users SET interaction_count = interaction_count + ?, "
            "last_seen = CASE WHEN last_seen > ? THEN last_seen ELSE ? END, "
            "first_seen = CASE WHEN first_seen < ? THEN first_seen ELSE ? END, "
            "display_name = COALESCE(?, display_name) WHERE tenant = ? AND user_id = ?",
            (1 if touch.count else 0, now, now, now, now, touch.display_name, tenant, user),
        )
        identity = _get_identity(conn, *key)
        account = _get_user(conn, tenant, user)
    assert identity is not None and account is not None
    return identity, account, created


def _get_identity(conn: Connection, tenant: str, channel: str, channel_key: str) -> IdentityRow | None:
    row = conn.execute(
        f"SELECT {_IDENTITY} WHERE tenant = ? AND channel = ? AND channel_key = ?", (tenant, channel, channel_key)
    ).fetchone()
    return None if row is None else _identity(row)


def _identities(conn: Connection, tenant: str, user: str) -> list[IdentityRow]:
    rows = conn.execute(
        f"SELECT {_IDENTITY} WHERE tenant = ? AND user_id = ? ORDER BY last_active DESC, channel, channel_key",
        (tenant, user),
    ).fetchall()
    return [_identity(row) for row in rows]


def _get_user(conn: Connection, tenant: str, user: str) -> UserRow | None:
    row = conn.execute(f"SELECT {_USER} WHERE tenant = ? AND user_id = ?", (tenant, user)).fetchone()
    return None if row is None else _user(row)


def _merged_users(conn: Connection, tenant: str, into: str) -> list[str]:
    found: list[str] = []
    frontier = [into]
    with read_transaction(conn):
        while frontier:  # a user merged into one that was merged in turn
            rows = conn.execute(
                f"SELECT user_id FROM canonical_users WHERE tenant = ? AND merged_into IN "
                f"({', '.join('?' for _ in frontier)})",
                (tenant, *frontier),
            ).fetchall()
            frontier = [r[0] for r in rows if r[0] not in found and r[0] != into]
            found += frontier
    return found


def _pending(conn: Connection, tenant: str) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT user_id, merged_into FROM canonical_users WHERE tenant = ? AND merged_into IS NOT NULL "
        "AND merge_done = 0 ORDER BY first_seen",
        (tenant,),
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def _merging_tenants(conn: Connection) -> list[str]:
    rows = conn.execute(
        "SELECT DISTINCT tenant FROM canonical_users WHERE merged_into IS NOT NULL AND merge_done = 0 ORDER BY tenant"
    ).fetchall()
    return [str(r[0]) for r in rows]


def _issue(
    conn: Connection, tenant: str, channel: str, channel_key: str, code_hash: str, now: float, expires: float
) -> str:
    with write_transaction(conn, ordered=False):
        owner = _owner(conn, (tenant, channel, channel_key))
        if owner is None:
            raise NotFound(f"no {channel} identity with that id: resolve it first", channel=channel)
        # One live code per identity: a new one replaces the last; expired and used ones go with it.
        conn.execute(
            "DELETE FROM link_codes WHERE tenant = ? AND ((channel = ? AND channel_key = ?) OR expires_at <= ?)",
            (tenant, channel, channel_key, now),
        )
        added = conn.execute(
            "INSERT INTO link_codes (tenant, code_hash, user_id, channel, channel_key, created_at, expires_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, code_hash) DO NOTHING",
            (tenant, code_hash, owner, channel, channel_key, now, expires),
        ).rowcount
        if not added:  # another identity's live code is the same (one in about 10^12): the caller draws again
            raise ConflictError("that code is taken: issue another", field="code")
    return owner


def _redeem(
    conn: Connection, tenant: str, channel: str, channel_key: str, code_hash: str, now: float, policy: LinkPolicy
) -> RedeemRow:
    key = (tenant, channel, channel_key)
    with write_transaction(conn):
        mine = _owner(conn, key)
        if mine is None:
            raise NotFound(f"no {channel} identity with that id: resolve it first", channel=channel)
        attempts = conn.execute(
            "SELECT failures, locked_until, updated_at FROM link_attempts "
            "WHERE tenant = ? AND channel = ? AND channel_key = ?",
            key,
        ).fetchone()
        if attempts is not None and attempts[1] is not None and float(attempts[1]) > now:
            return RedeemRow(LinkOutcome.LOCKED, retry_at=_at(float(attempts[1])), failures=int(attempts[0]))
        code = conn.execute(
            "SELECT user_id, channel, channel_key, used_at, expires_at FROM link_codes "
            "WHERE tenant = ? AND code_hash = ?",
            (tenant, code_hash),
        ).fetchone()
        if code is not None and code[3] is not None and code[0] == mine:
            # The code this identity linked with, sent again (the person retries after an error): no guess, and
            # the caller finishes the merge it began.
            return RedeemRow(LinkOutcome.ALREADY, into_user=str(code[0]), from_user=mine)
        if code is None or code[3] is not None or float(code[4]) <= now:
            return _failed(conn, key, mine, attempts, now, policy)
        if (code[1], code[2]) == (channel, channel_key):
            return RedeemRow(LinkOutcome.OWN_CODE)
        conn.execute("UPDATE link_codes SET used_at = ? WHERE tenant = ? AND code_hash = ?", (now, tenant, code_hash))
        # Failures are not forgiven by a good code: one identity could otherwise guess without end between codes
        # it issues itself. They go when a lock-out starts or when they age out (`_failed`).
        into, from_user = str(code[0]), mine
        if into == from_user:
            return RedeemRow(LinkOutcome.ALREADY, into_user=into, from_user=from_user)
        _begin_merge(conn, tenant, from_user, into, now)
    return RedeemRow(LinkOutcome.LINKED, into_user=into, from_user=from_user)


def _failed(
    conn: Connection, key: tuple[str, str, str], user: str, attempts: Any, now: float, policy: LinkPolicy
) -> RedeemRow:
    # Failures older than a lock-out's length are forgotten: a typo a day never adds up to one.
    recent = attempts is not None and float(attempts[2]) > now - policy.lockout_seconds
    failures = (int(attempts[0]) if recent else 0) + 1
    locked = failures >= policy.max_failures
    locked_until = now + policy.lockout_seconds if locked else None
    conn.execute(
        "INSERT INTO link_attempts (tenant, channel, channel_key, user_id, failures, locked_until, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, channel, channel_key) DO UPDATE SET "
        "failures = excluded.failures, locked_until = excluded.locked_until, updated_at = excluded.updated_at, "
        "user_id = excluded.user_id",
        # A lock-out starts the count again: after it, another `max_failures` tries.
        (*key, user, 0 if locked else failures, locked_until, now),
    )
    if locked:
        assert locked_until is not None
        return RedeemRow(LinkOutcome.LOCKED, retry_at=_at(locked_until), failures=failures)
    return RedeemRow(LinkOutcome.INVALID, failures=failures)


def _begin_merge(conn: Connection, tenant: str, from_user: str, into: str, now: float) -> None:
    """The redeemer's user joins the issuer's: its identities, codes and counters move now (so the next message
    from any of them is the issuer's user's), and it is marked as merging; its other rows follow (`finish_merge`)."""
    _ensure_user(conn, tenant, into, now, None)
    _ensure_user(conn, tenant, from_user, now, None)
    old = _get_user(conn, tenant, from_user)
    assert old is not None
    conn.execute(
        "UPDATE canonical_users SET interaction_count = interaction_count + ?, "
        "first_seen = CASE WHEN first_seen < ? THEN first_seen ELSE ? END, "
        "last_seen = CASE WHEN last_seen > ? THEN last_seen ELSE ? END, "
        "display_name = COALESCE(display_name, ?) WHERE tenant = ? AND user_id = ?",
        (
            old.interaction_count,
            old.first_seen.timestamp(),
            old.first_seen.timestamp(),
            old.last_seen.timestamp(),
            old.last_seen.timestamp(),
            old.display_name,
            tenant,
            into,
        ),
    )
    conn.execute(
        "UPDATE canonical_users SET merged_into = ?, merge_done = 0, interaction_count = 0 "
        "WHERE tenant = ? AND user_id = ?",
        (into, tenant, from_user),
    )
    # Users merged into the redeemer's earlier keep pointing at it: a merge follows the chain to its end
    # (`merge_root`), so one still moving rows when this link came carries on to the issuer's user.
    for table in ("channel_identities", "link_codes", "link_attempts"):
        conn.execute(f"UPDATE {table} SET user_id = ? WHERE tenant = ? AND user_id = ?", (into, tenant, from_user))


def _unlink(conn: Connection, tenant: str, channel: str, channel_key: str, fresh_user: str, now: float) -> str:
    key = (tenant, channel, channel_key)
    # Ordered, as a link is: two unlinks of one user's last two identities at once must not both pass the
    # "only identity" check (on PostgreSQL an unordered write takes row locks only, and this one reads a count).
    with write_transaction(conn):
        left = _owner(conn, key)
        if left is None:
            raise NotFound(f"no {channel} identity with that id", channel=channel)
        others = conn.execute(
            "SELECT COUNT(*) FROM channel_identities WHERE tenant = ? AND user_id = ?", (tenant, left)
        ).fetchone()[0]
        if int(others) < 2:
            raise ValidationError(
                "this is the user's only identity: there is nothing to unlink it from", field="channel_user_id"
            )
        _ensure_user(conn, tenant, fresh_user, now, None)
        conn.execute(
            "UPDATE channel_identities SET user_id = ? WHERE tenant = ? AND channel = ? AND channel_key = ?",
            (fresh_user, *key),
        )
        conn.execute("DELETE FROM link_codes WHERE tenant = ? AND channel = ? AND channel_key = ?", key)
        conn.execute(
            "UPDATE link_attempts SET user_id = ? WHERE tenant = ? AND channel = ? AND channel_key = ?",
            (fresh_user, *key),
        )
    return left


def _set_active(conn: Connection, tenant: str, channel: str, channel_key: str, active: bool) -> IdentityRow:
    key = (tenant, channel, channel_key)
    with write_transaction(conn, ordered=False):
        conn.execute(
            "UPDATE channel_identities SET active = ? WHERE tenant = ? AND channel = ? AND channel_key = ?",
            (1 if active else 0, *key),
        )
        found = _get_identity(conn, *key)
    if found is None:
        raise NotFound(f"no {channel} identity with that id", channel=channel)
    return found
