"""The write gate's quarantine: which learnings a recheck put aside, and the gate version that last
checked the whole store (migration 0020). Moving a learning's status is the governed write's job (events, index);
this module keeps the review list and reads learnings in id order for the recheck, across tenants."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..quarantine import QuarantineRow, StoredText
from .dialect import Connection
from .jobs import ConnectionJobs
from .transactions import write_transaction

__all__ = ["QuarantineRow", "SqlQuarantineStore", "StoredText"]

T = TypeVar("T")
_ACTIVE = ("candidate", "verified")


class SqlQuarantineStore:
    def __init__(self, store: ConnectionJobs) -> None:
        self._store = store

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return await self._store._run(fn, *args)

    async def gate_version(self) -> str | None:
        return await self._run(_gate_version)

    async def set_gate_version(self, version: str) -> None:
        await self._run(_set_gate_version, version)

    async def live_texts(self, after_id: int, limit: int, *, unchecked_by: str | None = None) -> list[StoredText]:
        """Candidate and verified learnings of every tenant with an id above `after_id`, in id order."""
        return await self._run(_live_texts, after_id, limit, unchecked_by)

    async def mark_checked(self, texts: Sequence[StoredText], version: str) -> None:
        await self._run(_mark_checked, list(texts), version)

    async def add(
        self, tenant: str, learning_id: int, previous_status: str, rule: str, kind: str, version: str
    ) -> None:
        await self._run(_add, tenant, learning_id, previous_status, rule, kind, version)

    async def listed(self, tenant: str | None, include_released: bool = False) -> list[QuarantineRow]:
        return await self._run(_listed, tenant, include_released)

    async def get(self, tenant: str, learning_id: int) -> QuarantineRow | None:
        return await self._run(_get, tenant, learning_id)

    async def mark_released(self, tenant: str, learning_id: int, actor: str) -> None:
        await self._run(_mark_released, tenant, learning_id, actor)


def _gate_version(conn: Connection) -> str | None:
    row = conn.execute("SELECT value FROM gate_state WHERE key = 'rule_version'").fetchone()
    return None if row is None else str(row[0])


def _set_gate_version(conn: Connection, version: str) -> None:
    with write_transaction(conn):
        conn.execute(
            "INSERT INTO gate_state (key, value) VALUES ('rule_version', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (version,),
        )


def _live_texts(conn: Connection, after_id: int, limit: int, unchecked_by: str | None) -> list[StoredText]:
    rows = conn.execute(
        "SELECT tenant, user_id, id, status, text, topic, tags, COALESCE(source_context, '') FROM learnings "
        "WHERE id > ? AND status IN (?, ?) AND (CAST(? AS TEXT) IS NULL OR gate_version IS NULL OR gate_version != ?) "
        "ORDER BY id LIMIT ?",
        (after_id, *_ACTIVE, unchecked_by, unchecked_by, limit),
    ).fetchall()
    return [StoredText(r[0], r[1] or None, r[2], r[3], r[4], r[5], r[6], r[7]) for r in rows]


def _mark_checked(conn: Connection, texts: list[StoredText], version: str) -> None:
    if not texts:
        return
    with write_transaction(conn):
        conn.executemany(
            "UPDATE learnings SET gate_version = ? WHERE tenant = ? AND id = ? AND text = ?",
            [(version, t.tenant, t.id, t.text) for t in texts],
        )


def _add(conn: Connection, tenant: str, learning_id: int, previous: str, rule: str, kind: str, version: str) -> None:
    with write_transaction(conn):
        conn.execute(
            "INSERT INTO gate_quarantine (tenant, learning_id, previous_status, rule, kind, gate_version, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, learning_id) DO UPDATE SET "
            "previous_status = excluded.previous_status, rule = excluded.rule, kind = excluded.kind, "
            "gate_version = excluded.gate_version, at = excluded.at, released_at = NULL, released_by = NULL",
            (tenant, learning_id, previous, rule, kind, version, time.time()),
        )


_COLUMNS = "tenant, learning_id, previous_status, rule, kind, gate_version, at, released_at, released_by"


def _listed(conn: Connection, tenant: str | None, include_released: bool) -> list[QuarantineRow]:
    where, args = [], []
    if tenant is not None:
        where.append("q.tenant = ?")
        args.append(tenant)
    if not include_released:
        where.append("q.released_at IS NULL")
    # A learning deleted since (or forgotten with its user) leaves the list with it.
    sql = (
        f"SELECT {', '.join('q.' + c for c in _COLUMNS.split(', '))} FROM gate_quarantine q "
        "JOIN learnings l ON l.id = q.learning_id AND l.tenant = q.tenant"
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + " ORDER BY q.at, q.learning_id"
    )
    return [QuarantineRow(*row) for row in conn.execute(sql, args).fetchall()]


def _get(conn: Connection, tenant: str, learning_id: int) -> QuarantineRow | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM gate_quarantine WHERE tenant = ? AND learning_id = ?", (tenant, learning_id)
    ).fetchone()
    return None if row is None else QuarantineRow(*row)


def _mark_released(conn: Connection, tenant: str, learning_id: int, actor: str) -> None:
    with write_transaction(conn):
        conn.execute(
            "UPDATE gate_quarantine SET released_at = ?, released_by = ? WHERE tenant = ? AND learning_id = ?",
            (time.time(), actor, tenant, learning_id),
        )
