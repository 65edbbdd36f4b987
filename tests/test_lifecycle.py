from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from learnloop.errors import InvalidTransition, ValidationError
from learnloop.lifecycle import (
    TRANSITIONS,
    ActorKind,
    LifecyclePolicy,
    actor_kind,
    check_transition,
    evidence_promotion,
    failure_outcome,
)
from learnloop.models import Learning, Status

statuses = st.sampled_from(list(Status))
actors = st.sampled_from([k.value for k in ActorKind]).flatmap(lambda kind: st.sampled_from([kind, f"{kind}:someone"]))


def learning(**fields: object) -> Learning:
    now = datetime.now(UTC)
    base = {
        "id": 1,
        "tenant": "t",
        "user": "u",
        "text": "x",
        "simhash64": "0" * 16,
        "created_at": now,
        "updated_at": now,
    }
    return Learning.model_validate(base | fields)


@given(statuses, statuses, actors)
def test_transitions_follow_the_table_exactly(current: Status, target: Status, actor: str) -> None:
    allowed = TRANSITIONS.get((current, target), frozenset())
    if current != target and actor_kind(actor) in allowed:
        check_transition(current, target, actor)
    else:
        with pytest.raises(InvalidTransition):
            check_transition(current, target, actor)


@given(statuses, actors)
def test_only_a_person_brings_back_a_deprecated_learning(target: Status, actor: str) -> None:
    if target is Status.DEPRECATED:
        return
    if actor_kind(actor) is ActorKind.PERSON:
        check_transition(Status.DEPRECATED, target, actor)
    else:
        with pytest.raises(InvalidTransition):
            check_transition(Status.DEPRECATED, target, actor)


@given(st.lists(st.tuples(statuses, actors), max_size=30))
def test_any_walk_through_the_table_keeps_deprecated_sticky_for_machines(
    walk: list[tuple[Status, str]],
) -> None:
    status = Status.CANDIDATE
    for target, actor in walk:
        try:
            check_transition(status, target, actor)
        except InvalidTransition:
            continue
        if status is Status.DEPRECATED:
            assert actor_kind(actor) is ActorKind.PERSON
        status = target


def test_unknown_actor_kind_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        actor_kind("robot:x")


@given(st.integers(0, 10), st.integers(0, 10), st.integers(0, 3), st.floats(0, 1))
def test_evidence_promotion_rules(hits: int, streak: int, failures: int, confidence: float) -> None:
    policy = LifecyclePolicy()
    promotion = evidence_promotion(learning(hits=hits, streak=streak, failures=failures, confidence=confidence), policy)
    expected = failures == 0 and (streak >= 3 or hits >= 5)
    assert (promotion is not None) == expected
    if promotion is not None:
        assert promotion.confidence <= policy.auto_promotion_confidence
        assert promotion.confidence <= confidence


def test_verified_learnings_are_never_auto_promoted_again() -> None:
    assert evidence_promotion(learning(status=Status.VERIFIED, hits=50, streak=50), LifecyclePolicy()) is None


def test_failure_demotes_verified_and_deprecates_candidates() -> None:
    policy = LifecyclePolicy()
    assert failure_outcome(learning(status=Status.VERIFIED, confidence=0.9), policy) == (
        Status.CANDIDATE,
        pytest.approx(0.7),
    )
    assert failure_outcome(learning(status=Status.CANDIDATE, confidence=0.1), policy)[0] is Status.DEPRECATED


def test_policy_validates_thresholds() -> None:
    with pytest.raises(ValidationError):
        LifecyclePolicy(promote_on_streak=0)
    with pytest.raises(ValidationError):
        LifecyclePolicy(auto_promotion_confidence=1.5)


def test_a_preferences_confidence_halves_every_30_days_it_is_not_restated() -> None:
    """Seed 001 §4.5: user preferences decay with a 30-day half-life (before: their confidence never moved)."""
    from datetime import UTC, datetime, timedelta

    from learnloop.lifecycle import LifecyclePolicy, effective_confidence
    from learnloop.models import Learning, LearningType

    said = datetime(2026, 1, 1, tzinfo=UTC)
    preference = Learning(
        id=1,
        tenant="t",
        user="alice",
        type=LearningType.PREFERENCE,
        text="Alice prefers revenue in euros",
        confidence=0.8,
        simhash64="0" * 16,
        created_at=said,
        updated_at=said,
    )
    assert effective_confidence(preference, said) == 0.8
    assert effective_confidence(preference, said + timedelta(days=30)) == 0.4
    assert round(effective_confidence(preference, said + timedelta(days=60)), 6) == 0.2
    fact = preference.model_copy(update={"type": LearningType.FACT})
    assert effective_confidence(fact, said + timedelta(days=60)) == 0.8  # other types keep theirs
    steady = LifecyclePolicy(preference_half_life_days=None)
    assert effective_confidence(preference, said + timedelta(days=60), steady) == 0.8
