"""What each turn's outcome was, from its conversation record: the verdict the next message (or silence) gave
it, whether that was a correction or a failure, whether its tools worked the first time, and how many turns
its session took to reach a satisfied reply."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..capture.feedback import FeedbackType
from ..stores.holdback import Arm, ArmedTurn, Mode

__all__ = ["OUTCOMES", "Outcome", "TurnOutcome", "turn_outcomes"]

_CORRECTIONS = frozenset({FeedbackType.FOLLOW_UP_CORRECTION, FeedbackType.OUTDATED})
_FAILURES = frozenset({FeedbackType.FAILURE, FeedbackType.EXPLICIT_NEGATIVE, FeedbackType.REPEATED_QUESTION})
# A verdict this good ends a session's search for an answer (an explicit thanks, or a refinement building on it).
_RESOLVED_AT = 0.5


@dataclass(frozen=True)
class Outcome:
    name: str
    label: str
    higher_is_better: bool
    unit: str = "rate"  # "rate" (a share of turns), "score" or "turns"


OUTCOMES = (
    Outcome("feedback", "feedback score", True, "score"),
    Outcome("correction", "corrections", False),
    Outcome("failure", "failures", False),
    Outcome("tool_first_try", "tools right first try", True),
    Outcome("turns_to_resolution", "turns to resolution", False, "turns"),
)


@dataclass(frozen=True)
class TurnOutcome:
    """One armed turn's figures; None where the turn says nothing about that outcome (no verdict yet, no tool
    call). `turns_to_resolution` is set on the first turn of a resolved session only."""

    user: str
    arm: Arm
    experiment: Mode
    user_turn: int  # the user's 1st, 2nd, ... turn with this tenant (every turn counts, armed or not)
    started_at: datetime
    feedback: float | None
    correction: float | None
    failure: float | None
    tool_first_try: float | None
    turns_to_resolution: float | None

    def value(self, outcome: str) -> float | None:
        found: float | None = getattr(self, outcome)
        return found


def _first_try(calls: Sequence[dict[str, object]]) -> float | None:
    """1 when the first call of every tool the turn used succeeded; None for a turn without tool calls."""
    if not calls:
        return None
    first: dict[str, bool] = {}
    for call in calls:
        first.setdefault(str(call.get("name")), call.get("error") is None)
    return float(all(first.values()))


def _resolution(turns: Sequence[ArmedTurn]) -> float | None:
    for position, turn in enumerate(turns, start=1):
        if turn.feedback_score is not None and turn.feedback_score >= _RESOLVED_AT:
            return float(position)
    return None


def turn_outcomes(turns: Sequence[ArmedTurn], namespace: str | None = None) -> list[TurnOutcome]:
    """Outcomes of the armed turns among `turns` (oldest first), of `namespace` only when given; abandoned turns
    and other namespaces' count in the users' turn numbers only."""
    numbers: dict[str, int] = defaultdict(int)
    sessions: dict[tuple[str, str], list[ArmedTurn]] = defaultdict(list)
    numbered: list[tuple[ArmedTurn, int]] = []
    for turn in turns:
        numbers[turn.user] += 1
        if turn.arm is None or turn.experiment is None or turn.status == "abandoned":
            continue
        if namespace is not None and turn.namespace != namespace:
            continue
        numbered.append((turn, numbers[turn.user]))
        sessions[(turn.user, turn.session)].append(turn)
    session_heads = {id(found[0]): _resolution(found) for found in sessions.values()}
    out = []
    for turn, number in numbered:
        kind = turn.feedback_type
        judged = kind is not None
        out.append(
            TurnOutcome(
                user=turn.user,
                arm=turn.arm,  # type: ignore[arg-type]
                experiment=turn.experiment,  # type: ignore[arg-type]
                user_turn=number,
                started_at=turn.started_at,
                feedback=turn.feedback_score,
                correction=float(kind in _CORRECTIONS) if judged else None,
                failure=float(kind in _FAILURES) if judged else None,
                tool_first_try=_first_try(turn.tool_calls),
                turns_to_resolution=session_heads.get(id(turn)),
            )
        )
    return out
