"""The holdback experiment's tables (`stores.holdback`), as SQL run on the store's thread."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from ..holdback import Arm, ArmedTurn, HoldbackSettings, Mode
from .dialect import Connection
from .jobs import ConnectionJobs
from .transactions import write_transaction

__all__ = ["SqlHoldbackStore"]

T = TypeVar("T")
_SETTINGS = "namespace, enabled, share, mode, salt, updated_at"


class SqlHoldbackStore:
    def __init__(self, store: ConnectionJobs) -> None:
        self._store = store

    def __repr__(self) -> str:
        return f"SqlHoldbackStore({self._store.path!r})"

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return await self._store._run(fn, *args)

    async def list_settings(self, tenant: str) -> list[HoldbackSettings]:
        return await self._run(_list_settings, tenant)

    async def put_settings(self, tenant: str, settings: HoldbackSettings, at: datetime) -> HoldbackSettings:
        return await self._run(_put_settings, tenant, settings, at.timestamp())

    async def delete_settings(self, tenant: str, namespace: str) -> bool:
        return await self._run(_delete_settings, tenant, namespace)

    async def pins(self, tenant: str) -> dict[str, Arm]:
        return await self._run(_pins, tenant)

    async def pin(self, tenant: str, user: str, arm: Arm | None, at: datetime) -> None:
        await self._run(_pin, tenant, user, arm, at.timestamp())

    async def armed_turns(self, tenant: str, since: datetime | None, limit: int) -> list[ArmedTurn]:
        return await self._run(_armed_turns, tenant, None if since is None else since.timestamp(), limit)


def _settings(row: Sequence[Any]) -> HoldbackSettings:
    namespace, enabled, share, mode, salt, updated = row
    return HoldbackSettings(
        share=float(share),
        mode=cast(Mode, mode),
        enabled=bool(enabled),
        salt=salt,
        namespace=namespace,
        updated_at=datetime.fromtimestamp(updated, UTC),
    )


def _list_settings(conn: Connection, tenant: str) -> list[HoldbackSettings]:
    rows = conn.execute(
        f"SELECT {_SETTINGS} FROM holdback_settings WHERE tenant = ? ORDER BY namespace", (tenant,)
    ).fetchall()
    return [_settings(row) for row in rows]


def _put_settings(conn: Connection, tenant: str, s: HoldbackSettings, at: float) -> HoldbackSettings:
    with write_transaction(conn):
        conn.execute(
            f"INSERT INTO holdback_settings (tenant, {_SETTINGS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (tenant, namespace) DO UPDATE SET enabled = excluded.enabled, share = excluded.share, "
            "mode = excluded.mode, salt = excluded.salt, updated_at = excluded.updated_at",
            (tenant, s.namespace, int(s.enabled), s.share, s.mode, s.salt, at),
        )
        row = conn.execute(
            f"SELECT {_SETTINGS} FROM holdback_settings WHERE tenant = ? AND namespace = ?", (tenant, s.namespace)
        ).fetchone()
    return _settings(row)


def _delete_settings(conn: Connection, tenant: str, namespace: str) -> bool:
    with write_transaction(conn):
        cursor = conn.execute("DELETE FROM holdback_settings WHERE tenant = ? AND namespace = ?", (tenant, namespace))
        return cursor.rowcount > 0


def _pins(conn: Connection, tenant: str) -> dict[str, Arm]:
    rows = conn.execute("SELECT user_id, arm FROM holdback_pins WHERE tenant = ? ORDER BY user_id", (tenant,))
    return {user: cast(Arm, arm) for user, arm in rows}


def _pin(conn: Connection, tenant: str, user: str, arm: Arm | None, at: float) -> None:
    with write_transaction(conn):
        if arm is None:
            conn.execute("DELETE FROM holdback_pins WHERE tenant = ? AND user_id = ?", (tenant, user))
            return
        conn.execute(
            "INSERT INTO holdback_pins (tenant, user_id, arm, pinned_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant, user_id) DO UPDATE SET arm = excluded.arm, pinned_at = excluded.pinned_at",
            (tenant, user, arm, at),
        )


def _armed_turns(conn: Connection, tenant: str, since: float | None, limit: int) -> list[ArmedTurn]:
    where = "tenant = ? AND user_id <> '' AND duplicate_of IS NULL"  # a repeated message is not a turn of its own
    args: tuple[Any, ...] = (tenant,)
    if since is not None:
        where, args = f"{where} AND started_at >= ?", (*args, since)
    rows = conn.execute(
        "SELECT user_id, session, started_at, status, context, feedback_type, feedback_score, tool_calls "
        f"FROM conversations WHERE {where} ORDER BY started_at DESC LIMIT ?",
        (*args, limit),
    ).fetchall()
    out = []
    for user, session, started, status, context, feedback_type, feedback_score, calls in reversed(rows):
        kept = json.loads(context)
        armed = kept.get("holdback") or {}
        out.append(
            ArmedTurn(
                user=user,
                session=session,
                started_at=datetime.fromtimestamp(started, UTC),
                status=status,
                arm=armed.get("arm"),
                experiment=armed.get("experiment"),
                feedback_type=feedback_type,
                feedback_score=feedback_score,
                tool_calls=json.loads(calls),
                namespace=str(kept.get("namespace") or ""),
            )
        )
    return out
