"""The governed write every capture path ends in: validate → gate → dedupe → one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel

from ..engine import Engine
from ..errors import ConflictError, ValidationError, WriteRefused
from ..lifecycle import actor_kind, check_transition
from ..models import EventAction, Learning, LearningType, LinkKind, Origin, Scope, Source, Status
from ..simhash import simhash64_hex
from ..stores.base import (
    NEW_ID,
    AddLink,
    AddSource,
    CarryLinks,
    EventDraft,
    Insert,
    NewLearning,
    Operation,
    Update,
    Vector,
)
from ..textcheck import check_text
from .dedupe import DedupeAction, DedupeDecision, decide
from .fields import hashed_source
from .gate import LEARNED_ID
from .gate_version import gate_version
from .poisoning_model import VECTOR_MODELS
from .timing import resolve

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
    link: LinkKind | None = None  # created, but linked to `related_id` as a possible duplicate or conflict

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
    at: datetime | None = None  # when it was said (default: now): the anchor of "yesterday", "last quarter"


def normalise_text(text: object) -> str:
    if not isinstance(text, str):
        raise ValidationError("learning text must be a string", field="text")
    check_text(text, "text")
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
        at=_aware(request.at) if request.at is not None else engine.clock(),
    )


def _aware(at: datetime) -> datetime:
    if not isinstance(at, datetime):
        raise ValidationError("at must be a datetime", field="at")
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


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
    if verdict.rule == LEARNED_ID or (verdict.allowed and engine.gate.learns):
        # The learned poisoning classifier reads the learning's own text (not topic, tags and context joined),
        # with the embedding the write computes anyway (cached for it) when it is the bundled MiniLM's.
        vector = await engine.embed_one(request.text) if engine.embedder.model_id in VECTOR_MODELS else None
        verdict = engine.gate.check_learned(request.text, vector)
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
    span = resolve(request.text, request.at or engine.clock())
    near = await engine.store.near_duplicates(
        owner, simhash, policy.simhash_bits, request.namespace, include_global=False
    )
    if near:
        # Near-identical text: the words alone may already say it is known, with no embedding to compute
        # (a replayed conversation costs almost nothing).
        known = {learning.id: learning for learning in await engine.store.get_many(owner, [i for i, _ in near])}
        pairs = [(known[i], None) for i, _ in near if i in known]
        decision = decide(request.text, pairs, policy, request.tags, span)
        target = decision.target
        if decision.action is DedupeAction.SKIP and target and _normal_text(target.text) == _normal_text(request.text):
            return _skipped(decision)
    vector = await engine.embed_one(request.text)
    decided: list[DedupeDecision] = []
    open_links = await _open_link_count(engine, owner)
    settled = await _adjudicated(engine, owner, request, vector)

    def plan(neighbours: list[tuple[Learning, float]]) -> list[Operation]:
        # The store calls this inside the write's transaction: what it judges is what the operations change.
        decision = decide(request.text, [(n, s) for n, s in neighbours], policy, request.tags, span)
        target = decision.target
        if decision.link is not None and target is not None and (target.id, target.revision) in settled:
            decision = settled[target.id, target.revision]
        if decision.link is not None and open_links >= engine.max_open_links:
            decision = replace(decision, link=None, reason=f"{decision.reason} (review queue full: not linked)")
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
    if decision.action is DedupeAction.CREATE:
        if decision.link is not None and target is not None:
            reason = f"saved as #{learning.id}; linked to #{target.id} for review: {decision.reason}"
            return SaveResult(
                action=SaveAction.CREATED, learning=learning, related_id=target.id, reason=reason, link=decision.link
            )
        return SaveResult(action=SaveAction.CREATED, learning=learning, reason=f"saved as #{learning.id}")
    assert target is not None
    if decision.action is DedupeAction.MERGE:
        reason = f"merged with #{target.id} as #{learning.id}: {decision.reason}"
        return SaveResult(action=SaveAction.MERGED, learning=learning, related_id=target.id, reason=reason)
    reason = f"saved as #{learning.id}; {decision.reason}"
    return SaveResult(action=SaveAction.NEW_VERSION, learning=learning, related_id=target.id, reason=reason)


async def _adjudicated(
    engine: Engine, owner: Scope, request: SaveRequest, vector: Vector
) -> dict[tuple[int, int], DedupeDecision]:
    """With an adjudicator: the model's decision for the pair the rules would link for review (looked up again
    inside the write's transaction, and used only if that neighbour is still the one the model saw)."""
    adjudicator = engine.adjudicator
    if adjudicator is None:
        return {}
    policy = engine.dedupe_policy
    neighbours = await engine.store.similar(
        owner, vector, request.namespace, policy.neighbours, min_similarity=policy.lowest_similarity
    )
    first = decide(request.text, [(n, s) for n, s in neighbours], policy, request.tags)
    if first.link is None or first.target is None:
        return {}
    settled = await adjudicator.settle(request.text, first.target, first, policy)
    return {(first.target.id, first.target.revision): settled}


async def _open_link_count(engine: Engine, owner: Scope) -> int:
    page = await engine.store.links(owner, open_only=True, limit=1)
    return page.total


def _normal_text(text: str) -> str:
    return " ".join(text.casefold().split())


def _operations(
    engine: Engine, scope: Scope, request: SaveRequest, vector: Vector, simhash: str, decision: DedupeDecision
) -> list[Operation]:
    """What the decision writes. Nothing is overwritten: a merge and a new version are new rows, and the row
    they replace is deprecated naming its successor, with its sources carried over."""
    record = _record(engine, scope, request, vector, simhash)
    created = AddSource("created", request.origin, request.source, text=request.text)
    if decision.action is DedupeAction.SKIP:
        target = decision.target
        assert target is not None
        if _normal_text(target.text) == _normal_text(request.text):
            return []
        # Said again in other words: the learning that knew it keeps this wording among its sources.
        return [AddSource("skipped", request.origin, request.source, text=request.text, learning_id=target.id)]
    if decision.action is DedupeAction.CREATE:
        ops: list[Operation] = [Insert(record, EventDraft(actor=request.actor, action=EventAction.CREATED)), created]
        if decision.link is not None and decision.target is not None:
            ops.append(
                AddLink(
                    other_id=decision.target.id,
                    kind=decision.link,
                    reason=decision.reason,
                    similarity=decision.similarity,
                    event=EventDraft(actor=request.actor, action=EventAction.LINKED, reason=decision.reason),
                )
            )
        return ops
    old = decision.target
    assert old is not None
    check_transition(old.status, Status.DEPRECATED, request.actor)
    if decision.action is DedupeAction.MERGE:
        return _merge(engine, request, record, old, decision)
    return [
        Insert(
            replace(record, supersedes=old.id, version=old.version + 1),
            EventDraft(actor=request.actor, action=EventAction.CREATED, reason=decision.reason),
        ),
        created,
        _retire(old, request.actor, EventAction.SUPERSEDED, f"replaced: {decision.reason}"),
        CarryLinks(old.id),
    ]


def _retire(old: Learning, actor: str, action: EventAction, reason: str) -> Update:
    return Update(
        id=old.id,
        changes={"status": Status.DEPRECATED, "superseded_by": NEW_ID, "status_reason": reason},
        event=EventDraft(actor=actor, action=action, reason=reason),
        expect_revision=old.revision,
    )


def _merge(
    engine: Engine, request: SaveRequest, record: NewLearning, old: Learning, decision: DedupeDecision
) -> list[Operation]:
    """A new row holding both claims (hits + 1, version + 1, the old one's counters and age); the old row is
    deprecated naming it, and its sources move with it. A user's confirmation (a verified save) promotes."""
    text = decision.text or old.text
    status = old.status
    confidence = old.confidence
    if request.status is Status.VERIFIED and old.status is Status.CANDIDATE:
        check_transition(old.status, Status.VERIFIED, request.actor)
        status, confidence = Status.VERIFIED, max(old.confidence, request.confidence)
    merged = replace(
        record,
        text=text,
        simhash64=simhash64_hex(text),
        category=old.category or record.category,
        type=old.type,
        topic=old.topic or record.topic,
        tags=tuple(dict.fromkeys([*old.tags, *record.tags])),
        status=status,
        confidence=confidence,
        origin=old.origin,
        supersedes=old.id,
        version=old.version + 1,
        hits=old.hits + 1,
        streak=old.streak,
        failures=old.failures,
        created_at=old.created_at,
        last_retrieved_at=old.last_retrieved_at,
        status_reason=f"merged from #{old.id}: {decision.reason}",
    )
    return [
        Insert(
            merged,
            EventDraft(
                actor=request.actor,
                action=EventAction.MERGED,
                reason=decision.reason,
                data={"merged": [old.id], "incoming": request.text},
            ),
        ),
        AddSource("merged", request.origin, request.source, text=request.text, copy_from=old.id),
        _retire(old, request.actor, EventAction.MERGED, f"merged into a new version: {decision.reason}"),
        CarryLinks(old.id),
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
    span = resolve(request.text, request.at or engine.clock())
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
        said_at=request.at,
        event_at=None if span is None else span.start,
        event_until=None if span is None else span.end,
        # `save` ran this text through the gate before it got here.
        gate_version=gate_version(engine.gate),
    )
