"""The observer's per-session turn records, and the duplicate window of seed 001 §8.6 over them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ...models import Scope
from ..base import TurnRecord
from .dialect import Connection
from .transactions import write_transaction

__all__ = ["claim_turn", "last_turn", "put_turn"]

_COLUMNS = (
    "session, turn, message_hash, topic_terms, retrieved_ids, saved_ids, at, feedback_type, feedback_score, "
    "carried, channel"
)


def last_turn(conn: Connection, owner: Scope, session: str) -> TurnRecord | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM turns WHERE tenant = ? AND user_id = ? AND session = ? ORDER BY turn DESC LIMIT 1",
        (owner.tenant, owner.user or "", session),
    ).fetchone()
    return None if row is None else _record(row)


def _latest_of_user(conn: Connection, owner: Scope) -> TurnRecord | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM turns WHERE tenant = ? AND user_id = ? ORDER BY at DESC, turn DESC LIMIT 1",
        (owner.tenant, owner.user),
    ).fetchone()
    return None if row is None else _record(row)


def _record(row: Sequence[Any]) -> TurnRecord:
    return TurnRecord(
        session=row[0],
        turn=row[1],
        message_hash=row[2],
        topic_terms=tuple(json.loads(row[3])),
        retrieved_ids=tuple(json.loads(row[4])),
        saved_ids=tuple(json.loads(row[5])),
        at=datetime.fromtimestamp(row[6], UTC),
        feedback_type=row[7],
        feedback_score=row[8],
        carried=json.loads(row[9]),
        channel=row[10],
    )


def claim_turn(
    conn: Connection, owner: Scope, turn: TurnRecord, window_seconds: float
) -> tuple[TurnRecord | None, int | None]:
    """One transaction, so two copies of the same message arriving together cannot both count.

    A duplicate repeats the user's latest message within the window, whatever the session or channel it came on
    (one person on Telegram and the web). Without a user there is no person to follow across sessions: the
    session's latest message is compared."""
    with write_transaction(conn):
        previous = last_turn(conn, owner, turn.session)
        latest = previous if owner.user is None else _latest_of_user(conn, owner)
        if (
            latest is not None
            and latest.message_hash == turn.message_hash
            and 0 <= (turn.at - latest.at).total_seconds() <= window_seconds
        ):
            return latest, None
        number = 1 if previous is None else previous.turn + 1
        _insert(conn, owner, replace(turn, turn=number))
        return previous, number


def put_turn(conn: Connection, owner: Scope, turn: TurnRecord) -> None:
    with write_transaction(conn):
        _insert(conn, owner, turn)


def _insert(conn: Connection, owner: Scope, turn: TurnRecord) -> None:
    conn.execute(
        "INSERT INTO turns (tenant, user_id, session, turn, message_hash, topic_terms, "
        "retrieved_ids, saved_ids, feedback_type, feedback_score, at, carried, channel) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (tenant, user_id, session, turn) DO UPDATE SET message_hash = excluded.message_hash, "
        "topic_terms = excluded.topic_terms, retrieved_ids = excluded.retrieved_ids, saved_ids = excluded.saved_ids, "
        "feedback_type = excluded.feedback_type, feedback_score = excluded.feedback_score, at = excluded.at, "
        "carried = excluded.carried, channel = excluded.channel",
        (
            owner.tenant,
            owner.user or "",
            turn.session,
            turn.turn,
            turn.message_hash,
            json.dumps(list(turn.topic_terms)),
            json.dumps(list(turn.retrieved_ids)),
            json.dumps(list(turn.saved_ids)),
            turn.feedback_type,
            turn.feedback_score,
            turn.at.timestamp(),
            json.dumps(dict(turn.carried), ensure_ascii=False),
            turn.channel,
        ),
    )
