"""Changing learnings after they exist: edits, status moves, deletion, purge and forgetting.

Every status change goes through `lifecycle.check_transition`; every read-decide-write sequence carries the
revision it read, and is retried if another writer got there first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from .capture.fields import redact_text, refuse_if_harmful
from .capture.write import check_gate, normalise_tags, normalise_text
from .engine import Engine
from .errors import ConflictError, InvalidTransition, NotFound, ValidationError
from .lifecycle import check_transition, failure_outcome
from .models import EventAction, Learning, LearningType, Scope, Status
from .simhash import simhash64_hex
from .stores.base import Delete, EventDraft, ListQuery, Operation, Update

__all__ = [
    "change_status",
    "confirm",
    "delete",
    "get",
    "promote",
    "promote_last_candidate",
    "report_failure",
    "restore",
    "update",
]

T = TypeVar("T")
_RETRIES = 4

_ACTION_FOR = {
    Status.VERIFIED: EventAction.PROMOTED,
    Status.DEPRECATED: EventAction.DEPRECATED,
}


async def _retrying(attempt: Callable[[], Awaitable[T]]) -> T:
    for _ in range(_RETRIES - 1):
        try:
            return await attempt()
        except ConflictError:
            continue
    return await attempt()


async def get(engine: Engine, scope: Scope, learning_id: int) -> Learning:
    await engine.ensure_started()
    found = await engine.store.get(scope, learning_id)
    if found is None:
        raise NotFound(f"learning {learning_id} not found", id=learning_id)
    return found


def status_update(
    learning: Learning,
    target: Status,
    actor: str,
    reason: str | None,
    *,
    confidence: float | None = None,
    extra: dict[str, Any] | None = None,
) -> Update:
    """The Update that moves `learning` to `target`, checked against the transition table."""
    check_transition(learning.status, target, actor)
    if learning.status is Status.VERIFIED and target is Status.CANDIDATE:
        action = EventAction.DEMOTED
    elif learning.status is Status.DEPRECATED:
        action = EventAction.RESTORED
    else:
        action = _ACTION_FOR[target]
    changes: dict[str, Any] = {"status": target, **(extra or {})}
    if target is not Status.DEPRECATED and learning.superseded_by is not None:
        changes["superseded_by"] = None  # restored: nothing replaces it any more
    if reason is not None:
        changes["status_reason"] = reason
    if confidence is not None:
        changes["confidence"] = round(confidence, 4)
    if target is Status.VERIFIED:
        changes.setdefault("failures", 0)
    return Update(
        id=learning.id,
        changes=changes,
        event=EventDraft(actor=actor, action=action, reason=reason),
        expect_revision=learning.revision,
    )


async def change_status(
    engine: Engine,
    scope: Scope,
    learning_id: int,
    target: Status,
    actor: str,
    reason: str | None = None,
    confidence: Callable[[Learning], float | None] = lambda _: None,
) -> Learning:
    refuse_if_harmful(engine.gate, reason, "reason")  # a reason is stored in the history: the *refuse* policy

    async def attempt() -> Learning:
        learning = await get(engine, scope, learning_id)
        op = status_update(learning, target, actor, reason, confidence=confidence(learning))
        result = await engine.apply(scope, [op])
        updated = result.learnings[0]
        assert updated is not None
        return updated

    return await _retrying(attempt)


def _not_deprecated(learning: Learning, move: str) -> None:
    """A deprecated learning comes back only through `restore`, where the event log says it was restored."""
    if learning.status is Status.DEPRECATED:
        raise InvalidTransition(
            f"learning {learning.id} is deprecated; it cannot be {move}: restore it instead",
            status=learning.status.value,
        )


async def promote(engine: Engine, scope: Scope, learning_id: int, actor: str, reason: str | None) -> Learning:
    """A candidate confirmed: verified, with the confidence a confirmation earns. Only candidates are promoted
    (a deprecated learning is restored, a verified one confirmed)."""
    floor = engine.policy.confirmation_confidence
    refuse_if_harmful(engine.gate, reason, "reason")

    async def attempt() -> Learning:
        learning = await get(engine, scope, learning_id)
        _not_deprecated(learning, "promoted")
        confidence = max(learning.confidence, floor)
        op = status_update(learning, Status.VERIFIED, actor, reason or "confirmed", confidence=confidence)
        updated = (await engine.apply(scope, [op])).learnings[0]
        assert updated is not None
        return updated

    return await _retrying(attempt)


async def confirm(engine: Engine, scope: Scope, learning_id: int, actor: str, reason: str | None) -> Learning:
    """Someone says a learning is right. A candidate is promoted; a verified one keeps its status and gains
    confidence: at least the confirmation level, and half the way to 1 from where it was."""
    refuse_if_harmful(engine.gate, reason, "reason")

    async def attempt() -> Learning:
        learning = await get(engine, scope, learning_id)
        _not_deprecated(learning, "confirmed")
        if learning.status is Status.CANDIDATE:
            return await promote(engine, scope, learning_id, actor, reason)
        raised = max(engine.policy.confirmation_confidence, learning.confidence + (1.0 - learning.confidence) / 2)
        op = Update(
            id=learning.id,
            changes={"confidence": round(min(1.0, raised), 4), "failures": 0},
            event=EventDraft(actor=actor, action=EventAction.CONFIRMED, reason=reason or "confirmed"),
            expect_revision=learning.revision,
        )
        updated = (await engine.apply(scope, [op])).learnings[0]
        assert updated is not None
        return updated

    return await _retrying(attempt)


async def restore(
    engine: Engine, scope: Scope, learning_id: int, target: Status, actor: str, reason: str | None
) -> Learning:
    """A deprecated learning brought back (by a person, as the transition table says). Anything else is not
    deprecated and is refused, rather than silently moved: restoring a verified learning demoted it."""
    if target is Status.DEPRECATED:
        raise ValidationError("a learning is restored as candidate or verified", field="status")
    refuse_if_harmful(engine.gate, reason, "reason")

    async def attempt() -> Learning:
        learning = await get(engine, scope, learning_id)
        if learning.status is not Status.DEPRECATED:
            raise InvalidTransition(
                f"learning {learning_id} is {learning.status.value}, not deprecated: there is nothing to restore",
                status=learning.status.value,
            )
        op = status_update(learning, target, actor, reason or "restored")
        updated = (await engine.apply(scope, [op])).learnings[0]
        assert updated is not None
        return updated

    return await _retrying(attempt)


async def promote_last_candidate(engine: Engine, scope: Scope, actor: str, reason: str | None) -> Learning | None:
    await engine.ensure_started()
    page = await engine.store.list_learnings(scope, ListQuery(user=scope.user, status=Status.CANDIDATE, limit=1))
    if not page.items:
        return None
    return await promote(engine, scope, page.items[0].id, actor, reason or "user confirmed it worked")


async def report_failure(
    engine: Engine,
    scope: Scope,
    learning_ids: Sequence[int],
    actor: str,
    reason: str,
    *,
    spare_candidates: bool = False,
) -> list[Learning]:
    """Negative feedback on learnings that were used: streak reset, demote verified, deprecate candidates
    (`spare_candidates`: count the failure on them and keep them, when the feedback is too unsure to lose them)."""
    reason = redact_text(engine.gate, reason)  # feedback may quote the user: the *redact* policy

    async def attempt() -> list[Learning]:
        learnings = await engine.store.get_many(scope, list(learning_ids))
        ops: list[Operation] = []
        for learning in learnings:
            # A user's bad experience does not demote the tenant's shared knowledge for everyone.
            if learning.status is Status.DEPRECATED or not scope.owns(scope.tenant, learning.user):
                continue
            target, confidence = failure_outcome(learning, engine.policy)
            extra = {"failures": learning.failures + 1, "streak": 0}
            if spare_candidates and target is Status.DEPRECATED:
                ops.append(Update(learning.id, extra, None, expect_revision=learning.revision))
                continue
            ops.append(status_update(learning, target, actor, reason, confidence=confidence, extra=extra))
        if not ops:
            return []
        result = await engine.apply(scope, ops)
        return [learning for learning in result.learnings if learning is not None]

    await engine.ensure_started()
    return await _retrying(attempt)


async def discredit(
    engine: Engine,
    scope: Scope,
    learning_ids: Sequence[int],
    actor: str,
    reason: str,
    *,
    superseded_by: int | None = None,
) -> list[Learning]:
    """The answer that used these learnings failed, was corrected or relied on what is no longer true (seed
    004): they are deprecated with the reason, whatever their status, so they are not surfaced again; a person
    can restore them. `superseded_by`: the learning that states what is true now."""
    reason = redact_text(engine.gate, reason)

    async def attempt() -> list[Learning]:
        learnings = await engine.store.get_many(scope, list(learning_ids))
        ops: list[Operation] = []
        for learning in learnings:
            if learning.status is Status.DEPRECATED or not scope.owns(scope.tenant, learning.user):
                continue
            if learning.id == superseded_by:
                continue
            extra: dict[str, Any] = {"failures": learning.failures + 1, "streak": 0}
            if superseded_by is not None:
                extra["superseded_by"] = superseded_by
            ops.append(status_update(learning, Status.DEPRECATED, actor, reason, extra=extra))
        if not ops:
            return []
        result = await engine.apply(scope, ops)
        return [learning for learning in result.learnings if learning is not None]

    await engine.ensure_started()
    return await _retrying(attempt)


async def update(
    engine: Engine,
    scope: Scope,
    learning_id: int,
    *,
    actor: str,
    text: str | None = None,
    category: str | None = None,
    topic: str | None = None,
    tags: Sequence[str] | None = None,
    type: LearningType | str | None = None,
    reason: str | None = None,
) -> Learning:
    """Edit a learning. A new text is re-embedded and bumps the version. Edited text passes the write gate
    like any other write (`WriteRefused` names the rule)."""
    new_text = None if text is None else normalise_text(text)
    await get(engine, scope, learning_id)  # an unknown id is a 404 whatever the new text holds
    for field_name, value in (("text", new_text), ("topic", topic), ("tags", " ".join(tags or ()))):
        if value:
            check_gate(engine, value, field_name)
    refuse_if_harmful(engine.gate, reason, "reason")
    vector = None if new_text is None else await engine.embed_one(new_text)

    async def attempt() -> Learning:
        learning = await get(engine, scope, learning_id)
        changes: dict[str, Any] = {}
        if new_text is not None and new_text != learning.text:
            changes |= {
                "text": new_text,
                "simhash64": simhash64_hex(new_text),
                "version": learning.version + 1,
            }
        if category is not None and category != learning.category:
            vocabulary = await engine.vocabulary(scope.tenant, learning.namespace)
            changes["category"] = vocabulary.check(category)
        if topic is not None and topic != learning.topic:
            changes["topic"] = topic.strip()
        if tags is not None:
            cleaned = list(normalise_tags(tags))
            if cleaned != learning.tags:
                changes["tags"] = cleaned
        if type is not None and LearningType(type) is not learning.type:
            changes["type"] = LearningType(type)
        if not changes:
            return learning
        op = Update(
            id=learning_id,
            changes=changes,
            event=EventDraft(actor=actor, action=EventAction.EDITED, reason=reason),
            vector=vector if "text" in changes else None,
            embedding_model=engine.embedder.model_id if "text" in changes else None,
            expect_revision=learning.revision,
        )
        result = await engine.apply(scope, [op])
        updated = result.learnings[0]
        assert updated is not None
        return updated

    if type is not None:
        try:
            LearningType(type)
        except ValueError as exc:
            raise ValidationError(f"unknown learning type {type!r}", field="type") from exc
    return await _retrying(attempt)


async def delete(engine: Engine, scope: Scope, learning_id: int, actor: str, reason: str | None) -> Learning:
    refuse_if_harmful(engine.gate, reason, "reason")
    await get(engine, scope, learning_id)
    result = await engine.apply(
        scope, [Delete(learning_id, EventDraft(actor=actor, action=EventAction.DELETED, reason=reason))]
    )
    deleted = result.learnings[0]
    assert deleted is not None
    return deleted


async def purge_deprecated(engine: Engine, scope: Scope, older_than: datetime, actor: str) -> list[int]:
    await engine.ensure_started()
    return await engine.store.purge_deprecated(scope, older_than, actor)
