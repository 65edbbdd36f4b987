"""User profiles (`stores.profiles`) as SQL run on the store's thread; every write is one transaction."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from ...errors import ValidationError
from ...models import Scope
from ..profiles import PatternRow, ProfileRecord
from .dialect import Connection
from .jobs import ConnectionJobs
from .transactions import read_transaction, write_transaction

__all__ = ["PROFILE_USER_TABLES", "SqlProfileStore"]

T = TypeVar("T")
PROFILE_USER_TABLES = ("user_patterns", "user_profiles")
_DAY = 86_400.0


def _user(scope: Scope) -> tuple[str, str]:
    if not scope.user:
        raise ValidationError("a profile belongs to a user: name one", field="user")
    return scope.tenant, scope.user


def _at(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


class SqlProfileStore:
    def __init__(self, store: ConnectionJobs) -> None:
        self._store = store

    def __repr__(self) -> str:
        return f"SqlProfileStore({self._store.path!r})"

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return await self._store._run(fn, *args)

    async def observe(
        self, scope: Scope, patterns: Sequence[tuple[str, str]], now: datetime, half_life_days: float
    ) -> None:
        await self._run(_observe, _user(scope), sorted(set(patterns)), now.timestamp(), half_life_days * _DAY)

    async def get(self, scope: Scope) -> ProfileRecord | None:
        return await self._run(_get, _user(scope))

    async def set_overrides(self, scope: Scope, overrides: Mapping[str, Any], now: datetime) -> ProfileRecord:
        return await self._run(_set_overrides, _user(scope), json.dumps(dict(overrides)), now.timestamp())

    async def remove_patterns(self, scope: Scope, kind: str, values: Sequence[str] | None) -> int:
        return await self._run(_remove, _user(scope), kind, None if values is None else list(values))

    async def forget(self, scope: Scope) -> int:
        return await self._run(_forget, _user(scope))


def _ensure_profile(conn: Connection, owner: tuple[str, str], now: float) -> None:
    conn.execute(
        "INSERT INTO user_profiles (tenant, user_id, interactions, overrides, created_at, updated_at) "
        "VALUES (?, ?, 0, '{}', ?, ?) ON CONFLICT (tenant, user_id) DO NOTHING",
        (*owner, now, now),
    )


def _observe(
    conn: Connection, owner: tuple[str, str], patterns: list[tuple[str, str]], now: float, half_life: float
) -> None:
    # Ordered: the weights are read, decayed and written back, so two interactions of a user must not interleave.
    with write_transaction(conn):
        _ensure_profile(conn, owner, now)
        conn.execute(
            "UPDATE user_profiles SET interactions = interactions + 1, updated_at = ? WHERE tenant = ? AND user_id = ?",
            (now, *owner),
        )
        for kind, value in patterns:
            row = conn.execute(
                "SELECT weight, last_at FROM user_patterns WHERE tenant = ? AND user_id = ? AND kind = ? AND value = ?",
                (*owner, kind, value),
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO user_patterns (tenant, user_id, kind, value, weight, count, first_at, last_at) "
                    "VALUES (?, ?, ?, ?, 1.0, 1, ?, ?)",
                    (*owner, kind, value, now, now),
                )
                continue
            # Decayed to now, then this observation: the frequency of seed 001 §4.5, kept in one number.
            weight = float(row[0]) * 0.5 ** (max(0.0, now - float(row[1])) / half_life) + 1.0
            conn.execute(
                "UPDATE user_patterns SET weight = ?, count = count + 1, last_at = ? "
                "WHERE tenant = ? AND user_id = ? AND kind = ? AND value = ?",
                (weight, max(now, float(row[1])), *owner, kind, value),
            )


def _get(conn: Connection, owner: tuple[str, str]) -> ProfileRecord | None:
    with read_transaction(conn):
        head = conn.execute(
            "SELECT interactions, overrides, created_at, updated_at FROM user_profiles "
            "WHERE tenant = ? AND user_id = ?",
            owner,
        ).fetchone()
        rows = conn.execute(
            "SELECT kind, value, weight, count, first_at, last_at FROM user_patterns WHERE tenant = ? AND user_id = ? "
            "ORDER BY kind, weight DESC, value",
            owner,
        ).fetchall()
    if head is None:
        return None
    return ProfileRecord(
        user=owner[1],
        interactions=int(head[0]),
        overrides=json.loads(head[1]),
        created_at=_at(head[2]),
        updated_at=_at(head[3]),
        patterns=[PatternRow(r[0], r[1], float(r[2]), int(r[3]), _at(r[4]), _at(r[5])) for r in rows],
    )


def _set_overrides(conn: Connection, owner: tuple[str, str], overrides: str, now: float) -> ProfileRecord:
    with write_transaction(conn, ordered=False):
        _ensure_profile(conn, owner, now)
        conn.execute(
            "UPDATE user_profiles SET overrides = ?, updated_at = ? WHERE tenant = ? AND user_id = ?",
            (overrides, now, *owner),
        )
    found = _get(conn, owner)
    assert found is not None
    return found


def _remove(conn: Connection, owner: tuple[str, str], kind: str, values: list[str] | None) -> int:
    removed = 0
    with write_transaction(conn, ordered=False):
        if values is None:
            removed = conn.execute(
                "DELETE FROM user_patterns WHERE tenant = ? AND user_id = ? AND kind = ?", (*owner, kind)
            ).rowcount
        for value in values or ():
            removed += conn.execute(
                "DELETE FROM user_patterns WHERE tenant = ? AND user_id = ? AND kind = ? AND value = ?",
                (*owner, kind, value),
            ).rowcount
    return removed


def _forget(conn: Connection, owner: tuple[str, str]) -> int:
    removed = 0
    with write_transaction(conn, ordered=False):
        for table in PROFILE_USER_TABLES:
            removed += conn.execute(f"DELETE FROM {table} WHERE tenant = ? AND user_id = ?", owner).rowcount
    return removed
