"""The conversation record and turn state of `loop.turn()` (`learnloop.turns`): the part a backend offers as
`store.conversations`.

A turn is begun (`open`), gathers the tool calls the app reports, and is finished once: finishing queues its
background work in the same transaction (`finished`), so an acknowledged finish survives a crash. Work is
claimed under a lease, its steps are recorded as they complete, and a turn is `done` when all have run. Turns
never finished expire (`abandoned`). Any process sharing the database can continue a turn another began.

A turn begun with the same message (`message_hash`) as the user's latest turn within the duplicate window, on any
channel and in any session, is a *duplicate* (seed 001 §8.6): recorded `done` at once with `duplicate_of` naming
the first turn, it has no work and never expires, its finish changes nothing, and its `response` reads as the first
turn's (None while that one is open, or when its answer was stored redacted: `RESPONSE_REDACTED` in its meta).
Tool calls reported on it are kept on its record and teach nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from ..models import Scope

# The meta key of a turn whose answer the gate redacted before storing: its stored response is not what was sent.
RESPONSE_REDACTED = "response_redacted"

__all__ = [
    "RESPONSE_REDACTED",
    "ConversationStore",
    "ConversationTurn",
    "FinishReceipt",
    "NewTurn",
    "SilenceVerdict",
    "TurnStatus",
    "distinct_calls",
]

TurnStatus = Literal["open", "finished", "done", "abandoned"]


@dataclass(frozen=True)
class NewTurn:
    id: str
    session: str
    channel: str
    message: str
    context: Mapping[str, Any]
    started_at: datetime
    expires_at: datetime
    message_hash: str = ""  # "" never matches: the turn is not checked for being a duplicate


@dataclass(frozen=True)
class ConversationTurn:
    tenant: str
    id: str
    user: str | None
    session: str
    channel: str
    status: TurnStatus
    message: str
    response: str | None
    context: dict[str, Any]
    tool_calls: list[dict[str, Any]]
    meta: dict[str, Any]
    steps: dict[str, Any]
    started_at: datetime
    finished_at: datetime | None
    expires_at: datetime
    attempts: int = 0
    error: str | None = None
    feedback_type: str | None = None
    feedback_score: float | None = None
    silence: int = 0
    duplicate_of: str | None = None  # the first turn of the same message, when this one repeats it

    @property
    def scope(self) -> Scope:
        return Scope(tenant=self.tenant, user=self.user)

    @property
    def tool_calls_json(self) -> list[dict[str, Any]]:
        """The tool calls in seed 001 §3.2's shape (`conversations.tool_calls_json`): tool, params, success,
        time_ms. `tool_calls` keeps them as reported (name, arguments, result, error, ms, and the call id)."""
        return [
            {
                "tool": call["name"],
                "params": call.get("arguments") or {},
                "success": call.get("error") is None,
                "time_ms": call.get("ms"),
            }
            for call in self.tool_calls
        ]


@dataclass(frozen=True)
class FinishReceipt:
    turn: ConversationTurn
    first: bool  # False: the turn was finished before (a retried finish does nothing)


@dataclass
class SilenceVerdict:
    """Turns housekeeping decided about: `silent` got the no-reply score (once); `answered` were followed up."""

    silent: list[ConversationTurn] = field(default_factory=list)
    answered: int = 0


class ConversationStore(Protocol):
    async def begin_turn(self, scope: Scope, turn: NewTurn, duplicate_window: float = 0.0) -> ConversationTurn:
        """Record the turn `open` — or, atomically, as a duplicate when the user's latest turn (the session's
        without a user), begun at most `duplicate_window` seconds before and not abandoned, has the same
        `message_hash`."""
        ...

    async def get_turn(self, scope: Scope, turn_id: str) -> ConversationTurn | None:
        """The turn if it belongs to `scope` (a user-bound scope sees only its user's turns)."""
        ...

    async def add_tool_call(
        self, scope: Scope, turn_id: str, call: Mapping[str, Any], now: datetime, limit: int
    ) -> int:
        """Append one call to an open turn (or a duplicate) holding fewer than `limit`; returns how many it has.
        A call with an `id` the turn holds already (a client's retry) is not appended again. NotFound,
        ConflictError (not open), ValidationError (at the limit)."""
        ...

    async def finish_turn(
        self, scope: Scope, turn_id: str, response: str, meta: Mapping[str, Any], now: datetime
    ) -> FinishReceipt:
        """Finish an open turn and queue its work in one transaction; a finished one is returned as it is."""
        ...

    async def claim_work(self, claimer: str, now: datetime, lease: float) -> ConversationTurn | None:
        """The oldest finished turn whose work is free (not claimed, or its lease ran out) and that has no earlier
        unfinished work in its session, now claimed by `claimer`; None when there is none."""
        ...

    async def commit_step(self, turn: ConversationTurn, step: str, result: Any) -> None: ...

    async def complete_work(self, turn: ConversationTurn) -> None: ...

    async def fail_work(self, turn: ConversationTurn, error: str, retry_at: datetime) -> None:
        """Release the claim with the error; the work is claimable again from `retry_at`."""
        ...

    async def record_feedback(self, scope: Scope, turn_id: str, kind: str, score: float) -> None:
        """The verdict on a turn (from the next message, or silence)."""
        ...

    async def previous_turn(self, scope: Scope, session: str, before: datetime) -> ConversationTurn | None:
        """The latest turn of the session begun before `before` that is not a duplicate."""
        ...

    async def expire_turns(self, now: datetime, limit: int = 500) -> list[ConversationTurn]:
        """Mark open turns past their expiry `abandoned` and return them (each once)."""
        ...

    async def settle_silence(
        self, now: datetime, window: float, kind: str, score: float, limit: int = 500
    ) -> SilenceVerdict:
        """Done turns finished more than `window` seconds ago: with no later turn of the session begun within the
        window they are silent and get (`kind`, `score`) as their feedback when they have none; each turn is
        decided once."""
        ...

    async def list_turns(
        self,
        scope: Scope,
        *,
        session: str | None = None,
        status: Sequence[TurnStatus] = (),
        limit: int = 100,
        channel: str | None = None,
    ) -> list[ConversationTurn]: ...


def distinct_calls(calls: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """A turn's calls as the tool layer counts them (seed 001 §8.6: a call recorded twice counts once): the first
    of each call id, and of each tool called with the same arguments to the same outcome (a client's retried
    report, or the same lookup made twice, tells the tool layer nothing new). Results and timings are not
    compared."""
    seen: set[str] = set()
    kept: list[Mapping[str, Any]] = []
    for call in calls:
        key = call.get("id") or json.dumps(
            [call["name"], call.get("arguments") or {}, call.get("error")], sort_keys=True, default=str
        )
        if key not in seen:
            seen.add(key)
            kept.append(call)
    return kept
