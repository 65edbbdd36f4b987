"""What the HTTP service keeps in the learnings' database: API keys, write counters, metric aggregates.

Every method runs as a job on the store's single executor thread (`SqlStore._run`), on the connection
that thread owns, so the service never opens a second writer connection. Bookkeeping the caller should not
wait for (a key's last use, a refusal count) is queued on the same thread without awaiting it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from datetime import UTC, datetime
from typing import Any, TypeVar

from ...models import Scope
from ..service import COUNTER_BUCKET, KeyRecord, MetricRows, with_compacted_retrievals
from ..sql.writes import visible_clause
from .dialect import Connection, dialect_of
from .jobs import ConnectionJobs
from .transactions import read_transaction, write_transaction

__all__ = ["COUNTER_BUCKET", "KeyRecord", "MetricRows", "SqlServiceStore"]

log = logging.getLogger("learnloop.server")

T = TypeVar("T")

_KEY_COLUMNS = "key_id, tenant, user_id, role, name, salt, digest, created_at, last_used_at, revoked_at"


def _ts(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _key_from_row(row: Sequence[Any]) -> KeyRecord:
    key_id, tenant, user_id, role, name, salt, digest, created, used, revoked = row
    created_at = _ts(created)
    assert created_at is not None
    return KeyRecord(
        key_id=key_id,
        tenant=tenant,
        user=user_id or None,
        role=role,
        name=name,
        salt=salt,
        digest=digest,
        created_at=created_at,
        last_used_at=_ts(used),
        revoked_at=_ts(revoked),
    )


class SqlServiceStore:
    def __init__(self, store: ConnectionJobs) -> None:
        self._store = store

    def __repr__(self) -> str:
        return f"SqlServiceStore({self._store.path!r})"

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return await self._store._run(fn, *args)

    def _queue(self, fn: Callable[..., None], *args: Any) -> None:
        """Run `fn` on the store's thread after the jobs already queued, without waiting for it."""
        try:
            future: Future[None] = self._store._submit(fn, *args)
        except RuntimeError:  # the store is closing; bookkeeping is best effort
            return

        def done(f: Future[None]) -> None:
            error = f.exception()
            if error is not None:
                log.warning("service bookkeeping failed: %s", error)

        future.add_done_callback(done)

    # -- API keys ------------------------------------------------------------------------------------

    async def create_key(self, record: KeyRecord) -> None:
        await self._run(self._create_key, record)

    def _create_key(self, conn: Connection, r: KeyRecord) -> None:
        with write_transaction(conn, ordered=False):
            conn.execute(
                f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
                (r.key_id, r.tenant, r.user or "", r.role, r.name, r.salt, r.digest, r.created_at.timestamp()),
            )

    async def get_key(self, key_id: str) -> KeyRecord | None:
        return await self._run(self._get_key, key_id)

    def _get_key(self, conn: Connection, key_id: str) -> KeyRecord | None:
        row = conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_id = ?", (key_id,)).fetchone()
        return None if row is None else _key_from_row(row)

    async def list_keys(self, tenant: str | None = None) -> list[KeyRecord]:
        return await self._run(self._list_keys, tenant)

    def _list_keys(self, conn: Connection, tenant: str | None) -> list[KeyRecord]:
        if tenant is None:
            rows = conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created_at, key_id").fetchall()
        else:
            rows = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE tenant = ? ORDER BY created_at, key_id", (tenant,)
            ).fetchall()
        return [_key_from_row(r) for r in rows]

    async def has_active_admin(self, tenant: str) -> bool:
        return await self._run(self._has_active_admin, tenant)

    def _has_active_admin(self, conn: Connection, tenant: str) -> bool:
        row = conn.execute(
            "SELECT 1 FROM api_keys WHERE tenant = ? AND role = 'admin' AND revoked_at IS NULL LIMIT 1", (tenant,)
        ).fetchone()
        return row is not None

    async def revoke_key(self, key_id: str, at: datetime) -> bool:
        """Revoke a key; False if there is no such active key."""
        return await self._run(self._revoke_key, key_id, at.timestamp())

    def _revoke_key(self, conn: Connection, key_id: str, at: float) -> bool:
        with write_transaction(conn, ordered=False):
            cursor = conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL", (at, key_id)
            )
        return cursor.rowcount > 0

    def touch_key(self, key_id: str, at: datetime) -> None:
        self._queue(self._touch_key, key_id, at.timestamp())

    def _touch_key(self, conn: Connection, key_id: str, at: float) -> None:
        with write_transaction(conn, ordered=False):
            conn.execute("UPDATE api_keys SET last_used_at = ? WHERE key_id = ?", (at, key_id))

    # -- counters ------------------------------------------------------------------------------------

    def add_count(self, tenant: str, name: str, at: datetime, value: int = 1) -> None:
        bucket = int(at.timestamp()) // COUNTER_BUCKET * COUNTER_BUCKET
        self._queue(self._add_count, tenant, name, bucket, value)

    def _add_count(self, conn: Connection, tenant: str, name: str, bucket: int, value: int) -> None:
        with write_transaction(conn, ordered=False):
            conn.execute(
                "INSERT INTO write_counters (tenant, name, bucket, value) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (tenant, name, bucket) DO UPDATE SET value = write_counters.value + excluded.value",
                (tenant, name, bucket, value),
            )

    async def flush(self) -> None:
        """Wait for queued bookkeeping (jobs run in order, so an empty job waits for all before it)."""
        await self._run(lambda conn: None)

    # -- event stream ---------------------------------------------------------------------------------

    async def tail_start(self, scope: Scope, count: int) -> int:
        """The sequence number after which the scope's last `count` events follow (for count 0: now)."""
        return await self._run(self._tail_start, scope, count)

    def _tail_start(self, conn: Connection, scope: Scope, count: int) -> int:
        if count <= 0:
            return int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])
        clause, params = visible_clause(scope)
        row = conn.execute(
            f"SELECT seq FROM events WHERE {clause} ORDER BY seq DESC LIMIT 1 OFFSET ?", [*params, count]
        ).fetchone()
        return 0 if row is None else int(row[0])

    # -- metric aggregates ---------------------------------------------------------------------------

    async def metric_rows(self, scope: Scope, since: datetime, bucket_seconds: int, counters: bool) -> MetricRows:
        return await self._run(self._metric_rows, scope, since.timestamp(), bucket_seconds, counters)

    def _metric_rows(self, conn: Connection, scope: Scope, since: float, b: int, counters: bool) -> MetricRows:
        clause, params = visible_clause(scope)
        window = [*params, since]
        dialect = dialect_of(conn)
        bucket = f"{dialect.whole(f'at / {b}')} * {b}"
        before_status, after_status = dialect.json_text("before", "status"), dialect.json_text("after", "status")
        with read_transaction(conn):
            learnings = conn.execute(
                f"SELECT status, origin, COUNT(*) FROM learnings WHERE {clause} GROUP BY status, origin", params
            ).fetchall()
            action_totals = conn.execute(
                f"SELECT action, COUNT(*) FROM events WHERE {clause} GROUP BY action", params
            ).fetchall()
            actions = conn.execute(
                f"SELECT {bucket}, action, COUNT(*) FROM events WHERE {clause} AND at >= ? GROUP BY 1, 2", window
            ).fetchall()
            moves = conn.execute(
                f"SELECT {bucket}, {before_status}, {after_status}, COUNT(*) "
                f"FROM events WHERE {clause} AND at >= ? AND learning_id IS NOT NULL "
                f"AND {before_status} IS DISTINCT FROM {after_status} GROUP BY 1, 2, 3",
                window,
            ).fetchall()
            purged = conn.execute(
                f"SELECT {bucket}, CAST(SUM(COALESCE({dialect.json_length('data', 'ids')}, 0)) AS BIGINT) FROM events "
                f"WHERE {clause} AND at >= ? AND action = 'purged' GROUP BY 1",
                window,
            ).fetchall()
            hit = f"CASE WHEN COALESCE({dialect.json_number('data', 'count')}, 0) > 0 THEN 1 ELSE 0 END"
            retrievals = conn.execute(
                f"SELECT {bucket}, COUNT(*), CAST(SUM({hit}) AS BIGINT) FROM events "
                f"WHERE {clause} AND at >= ? AND action = 'retrieved' GROUP BY 1",
                window,
            ).fetchall()
            totals = conn.execute(
                f"SELECT COUNT(*), CAST(COALESCE(SUM({hit}), 0) AS BIGINT) FROM events "
                f"WHERE {clause} AND action = 'retrieved'",
                params,
            ).fetchone()
            # Retrieval events older than the retention live on as per-hour counts (see `event_retention`);
            # an hour counts from the one holding `since`, as the write counters do.
            first_hour = int(since) // COUNTER_BUCKET * COUNTER_BUCKET
            compacted = conn.execute(
                f"SELECT {dialect.whole(f'bucket / {b}')} * {b}, CAST(SUM(retrievals) AS BIGINT), "
                f"CAST(SUM(hits) AS BIGINT) FROM retrieval_counts "
                f"WHERE {clause} AND bucket >= ? GROUP BY 1",
                [*params, first_hour],
            ).fetchall()
            compacted_totals = conn.execute(
                "SELECT CAST(COALESCE(SUM(retrievals), 0) AS BIGINT), CAST(COALESCE(SUM(hits), 0) AS BIGINT) "
                f"FROM retrieval_counts WHERE {clause}",
                params,
            ).fetchone()
            counter_rows: list[tuple[int, str, int]] = []
            counter_totals: list[tuple[str, int]] = []
            if counters:
                counter_rows = conn.execute(
                    f"SELECT {dialect.whole(f'bucket / {b}')} * {b}, name, CAST(SUM(value) AS BIGINT) "
                    "FROM write_counters WHERE tenant = ? AND bucket >= ? GROUP BY 1, 2",
                    (scope.tenant, int(since) // COUNTER_BUCKET * COUNTER_BUCKET),
                ).fetchall()
                counter_totals = conn.execute(
                    "SELECT name, CAST(SUM(value) AS BIGINT) FROM write_counters WHERE tenant = ? GROUP BY name",
                    (scope.tenant,),
                ).fetchall()
        live = MetricRows(
            learnings=[(r[0], r[1], r[2]) for r in learnings],
            action_totals=[(r[0], r[1]) for r in action_totals],
            actions=[(r[0], r[1], r[2]) for r in actions],
            status_moves=[(r[0], r[1], r[2], r[3]) for r in moves],
            purged=[(r[0], r[1]) for r in purged],
            retrievals=[(r[0], r[1], r[2] or 0) for r in retrievals],
            retrieval_totals=(totals[0], totals[1]),
            counters=[(r[0], r[1], r[2]) for r in counter_rows],
            counter_totals=[(r[0], r[1]) for r in counter_totals],
        )
        return with_compacted_retrievals(live, compacted, (compacted_totals[0], compacted_totals[1]))
