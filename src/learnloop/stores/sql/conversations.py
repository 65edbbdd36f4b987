"""The conversation record and turn state (`stores.conversations`), as SQL run on the store's thread.

Every state change is one BEGIN IMMEDIATE transaction that reads the row and moves it only from the state it
expects, so a finish retried at the same moment as the first, or two workers claiming together, act once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TypeVar

from ...errors import ConflictError, NotFound, ValidationError
from ...models import Scope
from ..agent_claims import abandoned
from ..conversations import RESPONSE_REDACTED, ConversationTurn, FinishReceipt, NewTurn, SilenceVerdict, TurnStatus
from ..sql.rows import from_ts
from .dialect import Connection, dialect_of
from .jobs import ConnectionJobs
from .transactions import write_transaction

__all__ = ["SqlConversationStore"]

T = TypeVar("T")
_COLUMNS = (
    "tenant, id, user_id, session, channel, status, message, response, context, tool_calls, meta, steps, "
    "started_at, finished_at, expires_at, attempts, error, feedback_type, feedback_score, silence, duplicate_of"
)


class SqlConversationStore:
    def __init__(self, store: ConnectionJobs) -> None:
        self._store = store

    def __repr__(self) -> str:
        return f"SqlConversationStore({self._store.path!r})"

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return await self._store._run(fn, *args)

    async def begin_turn(self, scope: Scope, turn: NewTurn, duplicate_window: float = 0.0) -> ConversationTurn:
        return await self._run(_begin, scope, turn, duplicate_window)

    async def get_turn(self, scope: Scope, turn_id: str) -> ConversationTurn | None:
        return await self._run(_get, scope, turn_id)

    async def add_tool_call(
        self, scope: Scope, turn_id: str, call: Mapping[str, Any], now: datetime, limit: int
    ) -> int:
        return await self._run(_add_call, scope, turn_id, dict(call), now.timestamp(), limit)

    async def finish_turn(
        self, scope: Scope, turn_id: str, response: str, meta: Mapping[str, Any], now: datetime
    ) -> FinishReceipt:
        return await self._run(_finish, scope, turn_id, response, dict(meta), now.timestamp())

    async def claim_work(self, claimer: str, now: datetime, lease: float) -> ConversationTurn | None:
        return await self._run(_claim, claimer, now.timestamp(), lease)

    async def commit_step(self, turn: ConversationTurn, step: str, result: Any) -> None:
        await self._run(_commit_step, turn.tenant, turn.id, step, json.dumps(result))

    async def complete_work(self, turn: ConversationTurn) -> None:
        await self._run(_complete, turn.tenant, turn.id)

    async def fail_work(self, turn: ConversationTurn, error: str, retry_at: datetime) -> None:
        await self._run(_fail, turn.tenant, turn.id, error[:500], retry_at.timestamp())

    async def record_feedback(self, scope: Scope, turn_id: str, kind: str, score: float) -> None:
        await self._run(_record_feedback, scope, turn_id, kind, score)

    async def previous_turn(self, scope: Scope, session: str, before: datetime) -> ConversationTurn | None:
        return await self._run(_previous, scope, session, before.timestamp())

    async def expire_turns(self, now: datetime, limit: int = 500) -> list[ConversationTurn]:
        return await self._run(_expire, now.timestamp(), limit)

    async def settle_silence(
        self, now: datetime, window: float, kind: str, score: float, limit: int = 500
    ) -> SilenceVerdict:
        return await self._run(_settle_silence, now.timestamp(), window, kind, score, limit)

    async def list_turns(
        self,
        scope: Scope,
        *,
        session: str | None = None,
        status: Sequence[TurnStatus] = (),
        limit: int = 100,
        channel: str | None = None,
    ) -> list[ConversationTurn]:
        return await self._run(_list, scope, session, tuple(status), limit, channel)


def _turn(row: Sequence[Any]) -> ConversationTurn:
    (tenant, turn_id, user, session, channel, status, message, response, context, calls, meta, steps) = row[:12]
    started, finished, expires, attempts, error, feedback_type, feedback_score, silence, duplicate_of = row[12:]
    return ConversationTurn(
        tenant=tenant,
        id=turn_id,
        user=user or None,
        session=session,
        channel=channel,
        status=status,
        message=message,
        response=response,
        context=json.loads(context),
        tool_calls=json.loads(calls),
        meta=json.loads(meta),
        steps=json.loads(steps),
        started_at=datetime.fromtimestamp(started, UTC),
        finished_at=from_ts(finished),
        expires_at=datetime.fromtimestamp(expires, UTC),
        attempts=attempts,
        error=error,
        feedback_type=feedback_type,
        feedback_score=feedback_score,
        silence=silence,
        duplicate_of=duplicate_of,
    )


def _with_first_response(conn: Connection, turn: ConversationTurn) -> ConversationTurn:
    """A duplicate's response is the first turn's: cached with that turn, read from it."""
    if turn.duplicate_of is None or turn.response is not None:
        return turn
    row = conn.execute(
        "SELECT response, meta FROM conversations WHERE tenant = ? AND id = ?", (turn.tenant, turn.duplicate_of)
    ).fetchone()
    if row is None or row[0] is None or json.loads(row[1] or "{}").get(RESPONSE_REDACTED):
        return turn  # no answer yet, or only its blanked form: the caller answers anew
    return replace(turn, response=row[0])


def _owner_clause(scope: Scope) -> tuple[str, tuple[Any, ...]]:
    if scope.user is None:
        return "tenant = ?", (scope.tenant,)
    return "tenant = ? AND user_id = ?", (scope.tenant, scope.user)


def _get(conn: Connection, scope: Scope, turn_id: str) -> ConversationTurn | None:
    where, args = _owner_clause(scope)
    row = conn.execute(f"SELECT {_COLUMNS} FROM conversations WHERE {where} AND id = ?", (*args, turn_id)).fetchone()
    return None if row is None else _with_first_response(conn, _turn(row))


def _require(conn: Connection, scope: Scope, turn_id: str) -> ConversationTurn:
    found = _get(conn, scope, turn_id)
    if found is None:
        raise NotFound(f"no turn {turn_id!r}")
    return found


def _begin(conn: Connection, scope: Scope, turn: NewTurn, window: float) -> ConversationTurn:
    with write_transaction(conn):
        first = _repeated(conn, scope, turn, window)
        try:
            conn.execute(
                "INSERT INTO conversations (tenant, id, user_id, session, channel, status, message, context, "
                "started_at, expires_at, message_hash, duplicate_of) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    scope.tenant,
                    turn.id,
                    scope.user or "",
                    turn.session,
                    turn.channel,
                    "open" if first is None else "done",
                    turn.message,
                    json.dumps(dict(turn.context)),
                    turn.started_at.timestamp(),
                    turn.expires_at.timestamp(),
                    turn.message_hash,
                    first,
                ),
            )
        except dialect_of(conn).integrity_errors as exc:
            raise ConflictError(f"turn {turn.id!r} exists already") from exc
        return _require(conn, scope, turn.id)


def _repeated(conn: Connection, scope: Scope, turn: NewTurn, window: float) -> str | None:
    """The first turn `turn` repeats, if it is a duplicate (see `stores.conversations`)."""
    if not turn.message_hash or window <= 0:
        return None
    at = turn.started_at.timestamp()
    if scope.user is None:  # no person to follow across sessions
        where, args = "tenant = ? AND user_id = '' AND session = ?", (scope.tenant, turn.session)
    else:
        where, args = "tenant = ? AND user_id = ?", (scope.tenant, scope.user)
    latest = conn.execute(
        f"SELECT id, message_hash, started_at, status, duplicate_of FROM conversations WHERE {where} "
        "AND started_at <= ? ORDER BY started_at DESC LIMIT 1",
        (*args, at),
    ).fetchone()
    if latest is None or latest[1] != turn.message_hash or latest[3] == "abandoned" or at - latest[2] > window:
        return None
    return str(latest[4] or latest[0])


def _add_call(conn: Connection, scope: Scope, turn_id: str, call: dict[str, Any], now: float, limit: int) -> int:
    with write_transaction(conn):
        turn = _require(conn, scope, turn_id)
        if turn.duplicate_of is None and turn.status != "open":
            raise ConflictError(f"turn {turn_id!r} is {turn.status}: tool calls go to an open turn")
        if turn.duplicate_of is None and turn.expires_at.timestamp() <= now:
            raise ConflictError(f"turn {turn_id!r} has expired")
        if call.get("id") is not None and any(c.get("id") == call["id"] for c in turn.tool_calls):
            return len(turn.tool_calls)  # the same call reported again: it is recorded once
        if len(turn.tool_calls) >= limit:
            raise ValidationError(f"a turn records at most {limit} tool calls", field="name")
        calls = [*turn.tool_calls, call]
        conn.execute(
            "UPDATE conversations SET tool_calls = ? WHERE tenant = ? AND id = ?",
            (json.dumps(calls), turn.tenant, turn_id),
        )
        return len(calls)


def _finish(
    conn: Connection, scope: Scope, turn_id: str, response: str, meta: dict[str, Any], now: float
) -> FinishReceipt:
    with write_transaction(conn):
        turn = _require(conn, scope, turn_id)
        if turn.status in ("finished", "done"):
            return FinishReceipt(turn, first=False)
        if turn.status == "abandoned" or turn.expires_at.timestamp() <= now:
            raise ConflictError(f"turn {turn_id!r} expired before it was finished")
        conn.execute(
            "UPDATE conversations SET status = 'finished', response = ?, meta = ?, finished_at = ? "
            "WHERE tenant = ? AND id = ?",
            (response, json.dumps(meta), now, turn.tenant, turn_id),
        )
        return FinishReceipt(_require(conn, scope, turn_id), first=True)


def _claim(conn: Connection, claimer: str, now: float, lease: float) -> ConversationTurn | None:
    # A plain read first: idle workers never take the write lock.
    if conn.execute("SELECT 1 FROM conversations WHERE status = 'finished' LIMIT 1").fetchone() is None:
        return None
    with write_transaction(conn):
        heads = conn.execute(
            f"SELECT {_COLUMNS}, claimed_by, claimed_at FROM conversations c WHERE status = 'finished' AND NOT EXISTS ("
            "  SELECT 1 FROM conversations e WHERE e.tenant = c.tenant AND e.user_id = c.user_id"
            "  AND e.session = c.session AND e.status = 'finished' AND e.started_at < c.started_at"
            ") ORDER BY started_at LIMIT 100"
        ).fetchall()
        row = next((r for r in heads if _free(r[-2], r[-1], now, lease)), None)
        if row is None:
            return None
        turn = _turn(row[:-2])
        conn.execute(
            "UPDATE conversations SET claimed_by = ?, claimed_at = ?, attempts = attempts + 1 "
            "WHERE tenant = ? AND id = ?",
            (claimer, now + lease, turn.tenant, turn.id),
        )
        return turn


def _free(claimed_by: str | None, held_until: float | None, now: float, lease: float) -> bool:
    """`claimed_at` holds when a claim (or the wait before a retry) ends; a holder that died on this host frees
    its claim at once, as the learning agent's queue does (`stores.agent_claims.abandoned`)."""
    if held_until is None or held_until <= now:
        return True
    return claimed_by is not None and abandoned(claimed_by, held_until - lease, now, lease)


def _commit_step(conn: Connection, tenant: str, turn_id: str, step: str, result: str) -> None:
    with write_transaction(conn):
        conn.execute(
            f"UPDATE conversations SET steps = {dialect_of(conn).json_set_key('steps')} WHERE tenant = ? AND id = ?",
            (json.dumps(step), result, tenant, turn_id),
        )


def _complete(conn: Connection, tenant: str, turn_id: str) -> None:
    with write_transaction(conn):
        conn.execute(
            "UPDATE conversations SET status = 'done', claimed_by = NULL, claimed_at = NULL, error = NULL "
            "WHERE tenant = ? AND id = ? AND status = 'finished'",
            (tenant, turn_id),
        )


def _fail(conn: Connection, tenant: str, turn_id: str, error: str, retry_at: float) -> None:
    with write_transaction(conn):
        conn.execute(
            "UPDATE conversations SET claimed_by = NULL, claimed_at = ?, error = ? WHERE tenant = ? AND id = ?",
            (retry_at, error, tenant, turn_id),
        )


def _record_feedback(conn: Connection, scope: Scope, turn_id: str, kind: str, score: float) -> None:
    where, args = _owner_clause(scope)
    with write_transaction(conn):
        conn.execute(
            f"UPDATE conversations SET feedback_type = ?, feedback_score = ? WHERE {where} AND id = ?",
            (kind, score, *args, turn_id),
        )


def _previous(conn: Connection, scope: Scope, session: str, before: float) -> ConversationTurn | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM conversations WHERE tenant = ? AND user_id = ? AND session = ? AND started_at < ? "
        "AND duplicate_of IS NULL ORDER BY started_at DESC LIMIT 1",
        (scope.tenant, scope.user or "", session, before),
    ).fetchone()
    return None if row is None else _turn(row)


def _expire(conn: Connection, now: float, limit: int) -> list[ConversationTurn]:
    due = conn.execute("SELECT 1 FROM conversations WHERE status = 'open' AND expires_at <= ? LIMIT 1", (now,))
    if due.fetchone() is None:  # housekeeping with nothing to do takes no write lock
        return []
    with write_transaction(conn):
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM conversations WHERE status = 'open' AND expires_at <= ? "
            "ORDER BY started_at LIMIT ?",
            (now, limit),
        ).fetchall()
        for row in rows:
            conn.execute("UPDATE conversations SET status = 'abandoned' WHERE tenant = ? AND id = ?", (row[0], row[1]))
    return [_turn((*row[:5], "abandoned", *row[6:])) for row in rows]


def _settle_silence(conn: Connection, now: float, window: float, kind: str, score: float, limit: int) -> SilenceVerdict:
    verdict = SilenceVerdict()
    due = conn.execute(
        "SELECT 1 FROM conversations WHERE status = 'done' AND silence = 0 AND finished_at <= ? LIMIT 1",
        (now - window,),
    )
    if due.fetchone() is None:
        return verdict
    with write_transaction(conn):
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM conversations WHERE status = 'done' AND silence = 0 AND finished_at <= ? "
            "ORDER BY finished_at LIMIT ?",
            (now - window, limit),
        ).fetchall()
        for row in rows:
            turn = _turn(row)
            assert turn.finished_at is not None
            answered = conn.execute(
                "SELECT 1 FROM conversations WHERE tenant = ? AND user_id = ? AND session = ? AND started_at > ? "
                "AND started_at <= ? AND duplicate_of IS NULL LIMIT 1",
                (
                    turn.tenant,
                    turn.user or "",
                    turn.session,
                    turn.started_at.timestamp(),
                    turn.finished_at.timestamp() + window,
                ),
            ).fetchone()
            if answered:
                conn.execute("UPDATE conversations SET silence = 2 WHERE tenant = ? AND id = ?", (turn.tenant, turn.id))
                verdict.answered += 1
                continue
            conn.execute(
                "UPDATE conversations SET silence = 1, feedback_type = coalesce(feedback_type, ?), "
                "feedback_score = coalesce(feedback_score, ?) WHERE tenant = ? AND id = ?",
                (kind, score, turn.tenant, turn.id),
            )
            verdict.silent.append(turn)
    return verdict


def _list(
    conn: Connection, scope: Scope, session: str | None, status: tuple[str, ...], limit: int, channel: str | None
) -> list[ConversationTurn]:
    where, args = _owner_clause(scope)
    if session is not None:
        where, args = f"{where} AND session = ?", (*args, session)
    if channel is not None:
        where, args = f"{where} AND channel = ?", (*args, channel)
    if status:
        where, args = f"{where} AND status IN ({','.join('?' * len(status))})", (*args, *status)
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM conversations WHERE {where} ORDER BY started_at DESC LIMIT ?", (*args, limit)
    ).fetchall()
    return [_with_first_response(conn, _turn(row)) for row in rows]
