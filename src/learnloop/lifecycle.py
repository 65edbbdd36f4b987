"""Status transitions and the evidence rules that drive them.

One table says which actor kinds may move a learning from one status to another. Everything that changes
a status (confirmation, retrieval evidence, negative feedback, supersession, a person in the review page)
goes through `check_transition`, so the rules live in exactly one place.

Confidence decays for preferences (seed 001 §4.5: "preferences can shift over time", 30-day half-life): the
stored confidence is what a preference had when it was last stated, confirmed or merged (`updated_at`), and
`effective_confidence` halves it for every 30 days since. Facts, procedures and the rest keep theirs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from .errors import InvalidTransition, ValidationError
from .models import Learning, LearningType, Status

__all__ = [
    "TRANSITIONS",
    "ActorKind",
    "LifecyclePolicy",
    "Promotion",
    "actor_kind",
    "check_transition",
    "effective_confidence",
    "evidence_promotion",
    "failure_outcome",
]


class ActorKind(StrEnum):
    PERSON = "person"
    SYSTEM = "system"
    TOOL = "tool"
    OBSERVER = "observer"
    AGENT = "agent"
    FEEDBACK = "feedback"
    IMPORT = "import"


_EVERYONE = frozenset(ActorKind)

# (from, to) -> who may make the move. Leaving `deprecated` is a human decision only.
TRANSITIONS: dict[tuple[Status, Status], frozenset[ActorKind]] = {
    (Status.CANDIDATE, Status.VERIFIED): _EVERYONE,
    (Status.CANDIDATE, Status.DEPRECATED): _EVERYONE,
    (Status.VERIFIED, Status.DEPRECATED): _EVERYONE,
    (Status.VERIFIED, Status.CANDIDATE): _EVERYONE,
    (Status.DEPRECATED, Status.CANDIDATE): frozenset({ActorKind.PERSON}),
    (Status.DEPRECATED, Status.VERIFIED): frozenset({ActorKind.PERSON}),
}


def actor_kind(actor: str) -> ActorKind:
    """Actors are written `kind` or `kind:name` ("person:alice", "system:auto-promote")."""
    kind = actor.partition(":")[0]
    try:
        return ActorKind(kind)
    except ValueError as exc:
        allowed = ", ".join(k.value for k in ActorKind)
        raise ValidationError(f"actor {actor!r} must start with one of: {allowed}") from exc


def check_transition(current: Status, target: Status, actor: str) -> None:
    if current == target:
        raise InvalidTransition(f"learning is already {target.value}", status=current.value)
    allowed = TRANSITIONS.get((current, target), frozenset())
    if actor_kind(actor) not in allowed:
        who = ", ".join(sorted(k.value for k in allowed)) or "nobody"
        raise InvalidTransition(
            f"{current.value} → {target.value} is not allowed for {actor!r} (allowed: {who})",
            status=current.value,
            target=target.value,
        )


@dataclass(frozen=True)
class LifecyclePolicy:
    """Thresholds of seed 004, configurable per loop."""

    promote_on_streak: int = 3
    promote_on_hits: int = 5
    auto_promotion_confidence: float = 0.6
    confirmation_confidence: float = 0.9
    tool_confidence: float = 0.8
    observer_confidence: float = 0.5
    failure_confidence_step: float = 0.2
    # Seed 001 §4.5: a preference's confidence halves every this many days it is not reaffirmed (None: never).
    preference_half_life_days: float | None = 30.0

    def __post_init__(self) -> None:
        if self.promote_on_streak < 1 or self.promote_on_hits < 1:
            raise ValidationError("promotion thresholds must be at least 1")
        if self.preference_half_life_days is not None and self.preference_half_life_days <= 0:
            raise ValidationError("preference_half_life_days must be positive")
        for name in ("auto_promotion_confidence", "confirmation_confidence", "tool_confidence"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValidationError(f"{name} must be within [0, 1]")


@dataclass(frozen=True)
class Promotion:
    reason: str
    confidence: float


def evidence_promotion(learning: Learning, policy: LifecyclePolicy) -> Promotion | None:
    """Candidate → verified when retrieval evidence is strong and nothing went wrong with it.

    Automatic promotion caps confidence lower than a person's confirmation would set it.
    """
    if learning.status is not Status.CANDIDATE or learning.failures > 0:
        return None
    if learning.streak >= policy.promote_on_streak:
        reason = f"retrieved {learning.streak} times in a row without negative feedback"
    elif learning.hits >= policy.promote_on_hits:
        reason = f"retrieved {learning.hits} times without negative feedback"
    else:
        return None
    return Promotion(reason=reason, confidence=min(learning.confidence, policy.auto_promotion_confidence))


def effective_confidence(learning: Learning, now: datetime, policy: LifecyclePolicy | None = None) -> float:
    """The confidence a learning has at `now`: a preference's decays with the time since it was last
    reaffirmed (`LifecyclePolicy.preference_half_life_days`); every other type's is what is stored."""
    half_life = (policy or _DEFAULT_POLICY).preference_half_life_days
    if learning.type is not LearningType.PREFERENCE or half_life is None:
        return learning.confidence
    age_days = max(0.0, (now - learning.updated_at).total_seconds() / 86_400)
    return float(learning.confidence * 0.5 ** (age_days / half_life))


def failure_outcome(learning: Learning, policy: LifecyclePolicy) -> tuple[Status, float]:
    """Negative feedback: a verified learning is demoted to candidate, a candidate is deprecated."""
    confidence = max(0.0, learning.confidence - policy.failure_confidence_step)
    if learning.status is Status.VERIFIED:
        return Status.CANDIDATE, confidence
    return Status.DEPRECATED, confidence


_DEFAULT_POLICY = LifecyclePolicy()
