"""The governed write every capture path ends in: validate → gate → dedupe → one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from ..engine import Engine
from ..errors import ConflictError, ValidationError, WriteRefused
from ..lifecycle import actor_kind, check_transition
from ..models import EventAction, Learning, LearningType, Origin, Scope, Source, Status
from ..simhash import simhash64_hex
from ..stores.base import EventDraft, Insert, NewLearning, Operation, Update, Vector
from .dedupe import DedupeAction, DedupeDecision, better_text, check_simhash, decide
from .fields import hashed_source

__all__ = ["SaveAction", "SaveRequest", "SaveResult", "check_gate", "save"]

MAX_TOPIC_CHARS = 200
MAX_TAGS = 32


class SaveAction(StrEnum):
    CREATED = "created"
    MERGED = "merged"
    NEW_VERSION = "new_version"
    SKIPPED = "skipped"
    REFUSED = "refused"


class SaveResult(BaseModel):
    """What happened to one candidate learning, and why."""

    action: SaveAction
    learning: Learning | None = None
    related_id: int | None = None
    reason: str
    rule: str | None = None

    @property
    def stored(self) -> bool:
        return self.action in (SaveAction.CREATED, SaveAction.MERGED, SaveAction.NEW_VERSION)


@dataclass(frozen=True)
class SaveRequest:
    text: str
    user: str | None
    namespace: str
    category: str | None = None
    type: LearningType = LearningType.FACT
    topic: str = ""
    tags: Sequence[str] = ()
    status: Status = Status.CANDIDATE
    confidence: float = 0.5
    origin: Origin = Origin.PERSON
    source: Source = field(default_factory=Source)
    actor: str = "person"


def normalise_text(text: object) -> str:
    if not isinstance(text, str):
        raise ValidationError("learning text must be a string", field="text")
    cleaned = " ".join(text.split())
    if not cleaned:
        raise ValidationError("learning text is empty", field="text")
    return cleaned


def normalise_tags(tags: Sequence[str]) -> tuple[str, ...]:
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
        raise ValidationError("tags must be a list of strings", field="tags")
    unique = tuple(dict.fromkeys(t.strip().lower() for t in tags if t.strip()))
    if len(unique) > MAX_TAGS:
        raise ValidationError(f"at most {MAX_TAGS} tags", field="tags")
    return unique


async def validated(engine: Engine, scope: Scope, request: SaveRequest) -> SaveRequest:
    vocabulary = await engine.vocabulary(scope.tenant, request.namespace)
    vocabulary.check(request.category)
    actor_kind(request.actor)
    if len(request.topic) > MAX_TOPIC_CHARS:
        raise ValidationError(f"topic is longer than {MAX_TOPIC_CHARS} characters", field="topic")
    if not 0.0 <= request.confidence <= 1.0:
        raise ValidationError("confidence must be within [0, 1]", field="confidence")
    if request.user is not None and scope.user is not None and request.user != scope.user:
        raise ValidationError("user does not match the caller's scope", field="user")
    return SaveRequest(
        text=normalise_text(request.text),
        user=request.user,
        namespace=request.namespace,
        category=request.category,
        type=LearningType(request.type),
        topic=request.topic.strip(),
        tags=normalise_tags(request.tags),
        status=Status(request.status),
        confidence=request.confidence,
        origin=Origin(request.origin),
        source=request.source,
        actor=request.actor,
    )


def check_gate(engine: Engine, text: str, field: str = "text") -> None:
    """For paths that store text outside `save` (edits, imports): refuse what `save` would refuse. Size
    limits are for the learning's text; a short topic or tag is fine."""
    verdict = engine.gate.check(text)
    if not verdict.allowed and not (field != "text" and verdict.kind == "size"):
        raise WriteRefused(verdict.reason or "refused", verdict.rule, verdict.kind, field)


def _gate_text(request: SaveRequest) -> str:
    """Everything of the request that would be stored as text goes through the gate."""
    parts = [request.text, request.topic, " ".join(request.tags), request.source.context or ""]
    return "\n".join(p for p in parts if p)


async def save(engine: Engine, scope: Scope, request: SaveRequest) -> SaveResult:
    """validate → gate → dedupe (SimHash, vector, conflict) → one transaction."""
    request = await validated(engine, scope, request)
    request = replace(request, source=hashed_source(engine.gate, request.source))  # ids: the *hash* policy
    verdict = engine.gate.check(_gate_text(request))
    if not verdict.allowed:
        engine.count(scope.tenant, f"save.refused.{verdict.rule}")
        return SaveResult(action=SaveAction.REFUSED, reason=verdict.reason or "refused", rule=verdict.rule)
    for _ in range(3):
        try:
            result = await _decide_and_write(engine, scope, request)
        except ConflictError:
            continue  # the neighbour changed while we decided; decide again on fresh data
        engine.count(scope.tenant, f"save.{result.action.value}")
        return result
    result = await _decide_and_write(engine, scope, request)
    engine.count(scope.tenant, f"save.{result.action.value}")
    return result


async def _decide_and_write(engine: Engine, scope: Scope, request: SaveRequest) -> SaveResult:
    await engine.ensure_started()
    policy = engine.dedupe_policy
    owner = Scope(tenant=scope.tenant, user=request.user)
    simhash = simhash64_hex(request.text)
    near = await engine.store.near_duplicates(
        owner, simhash, policy.simhash_bits, request.namespace, include_global=False
    )
    if near:
        known = {learning.id: learning for learning in await engine.store.get_many(owner, [i for i, _ in near])}
        pairs = [(known[i], distance) for i, distance in near if i in known]
        decision = check_simhash(request.text, simhash, pairs, policy)
        if decision is not None:
            return _skipped(decision)
    vector = await engine.embed_one(request.text)
    decided: list[DedupeDecision] = []

    def plan(neighbours: list[tuple[Learning, float]]) -> list[Operation]:
        # The store calls this inside the write's transaction: what it judges is what the operations change.
        decision = decide(request.text, neighbours, policy)
        decided.append(decision)
        return _operations(engine, scope, request, vector, simhash, decision)

    result = await engine.store.plan_and_apply(
        scope,
        owner,
        vector,
        request.namespace,
        policy.neighbours,
        plan,
        min_similarity=policy.lowest_similarity,
    )
    engine.bus.publish(result.events)
    decision = decided[0]
    if decision.action is DedupeAction.SKIP:
        return _skipped(decision)
    learning, target = result.learnings[0], decision.target
    assert learning is not None
    if target is None:
        return SaveResult(action=SaveAction.CREATED, learning=learning, reason=f"saved as #{learning.id}")
    if decision.action is DedupeAction.MERGE:
        reason = f"merged into #{target.id}: {decision.reason}"
        return SaveResult(action=SaveAction.MERGED, learning=learning, related_id=target.id, reason=reason)
    reason = f"saved as #{learning.id}; {decision.reason}"
    return SaveResult(action=SaveAction.NEW_VERSION, learning=learning, related_id=target.id, reason=reason)


def _operations(
    engine: Engine, scope: Scope, request: SaveRequest, vector: Vector, simhash: str, decision: DedupeDecision
) -> list[Operation]:
    """What the decision writes: nothing for a skip, an update for a merge, an insert (and, for a new
    version, the old one deprecated) otherwise."""
    if decision.action is DedupeAction.SKIP:
        return []
    if decision.action is DedupeAction.MERGE:
        return [_merge(engine, request, vector, simhash, decision)]
    record = _record(engine, scope, request, vector, simhash)
    if decision.action is not DedupeAction.NEW_VERSION:
        return [Insert(record, EventDraft(actor=request.actor, action=EventAction.CREATED))]
    old = decision.target
    assert old is not None
    check_transition(old.status, Status.DEPRECATED, request.actor)
    return [
        Insert(
            replace(record, supersedes=old.id, version=old.version + 1),
            EventDraft(actor=request.actor, action=EventAction.CREATED, reason=decision.reason),
        ),
        Update(
            id=old.id,
            changes={"status": Status.DEPRECATED},
            event=EventDraft(actor=request.actor, action=EventAction.SUPERSEDED, reason=decision.reason),
            expect_revision=old.revision,
        ),
    ]


def _skipped(decision: DedupeDecision) -> SaveResult:
    target = decision.target
    return SaveResult(
        action=SaveAction.SKIPPED,
        learning=target,
        related_id=None if target is None else target.id,
        reason=decision.reason,
    )


def _record(engine: Engine, scope: Scope, request: SaveRequest, vector: Vector, simhash: str) -> NewLearning:
    return NewLearning(
        tenant=scope.tenant,
        user=request.user,
        text=request.text,
        vector=vector,
        embedding_model=engine.embedder.model_id,
        simhash64=simhash,
        namespace=request.namespace,
        category=request.category,
        type=request.type,
        topic=request.topic,
        tags=tuple(request.tags),
        status=request.status,
        confidence=request.confidence,
        origin=request.origin,
        source=request.source,
    )


def _merge(engine: Engine, request: SaveRequest, vector: Vector, simhash: str, decision: DedupeDecision) -> Update:
    """hits + 1, version + 1, updated now; the better of the two texts is kept; a user's confirmation
    (a verified save) promotes a candidate."""
    target = decision.target
    assert target is not None
    changes: dict[str, Any] = {"version": target.version + 1}
    adopt = better_text(request.text, target.text) == request.text and request.text != target.text
    if adopt:
        changes |= {"text": request.text, "simhash64": simhash}
    if request.status is Status.VERIFIED and target.status is Status.CANDIDATE:
        check_transition(target.status, Status.VERIFIED, request.actor)
        changes |= {"status": Status.VERIFIED, "confidence": max(target.confidence, request.confidence)}
    if request.tags:
        changes["tags"] = list(dict.fromkeys([*target.tags, *request.tags]))
    return Update(
        id=target.id,
        changes=changes,
        event=EventDraft(
            actor=request.actor, action=EventAction.MERGED, reason=decision.reason, data={"incoming": request.text}
        ),
        vector=vector if adopt else None,
        embedding_model=engine.embedder.model_id if adopt else None,
        expect_revision=target.revision,
        increments={"hits": 1},
    )
