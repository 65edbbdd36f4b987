"""The governed write every capture path ends in: validate → gate → dedupe → one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel

from ..engine import Engine
from ..errors import ValidationError
from ..lifecycle import actor_kind
from ..models import EventAction, Learning, LearningType, Origin, Scope, Source, Status
from ..simhash import simhash64_hex
from ..stores.base import EventDraft, Insert, NewLearning

__all__ = ["SaveAction", "SaveRequest", "SaveResult", "save"]

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


async def save(engine: Engine, scope: Scope, request: SaveRequest) -> SaveResult:
    request = await validated(engine, scope, request)
    vector = await engine.embed_one(request.text)
    record = NewLearning(
        tenant=scope.tenant,
        user=request.user,
        text=request.text,
        vector=vector,
        embedding_model=engine.embedder.model_id,
        simhash64=simhash64_hex(request.text),
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
    result = await engine.apply(
        scope, [Insert(record, EventDraft(actor=request.actor, action=EventAction.CREATED))]
    )
    learning = result.learnings[0]
    assert learning is not None
    return SaveResult(action=SaveAction.CREATED, learning=learning, reason=f"saved as #{learning.id}")
