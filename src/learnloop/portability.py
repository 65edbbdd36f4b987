"""Export and import of learnings as JSON Lines, one learning per line, embeddings included.

An import is checked whole (shape, vectors, categories) and then written in one transaction: a file with one
bad line writes nothing and the error names the line. Re-importing the same file adds nothing (rows with the
same owner, namespace and text are skipped). Imported texts follow the write gate's *redact* policy
(`capture.fields`): an export is a record that must come back whole, so a harmful span in a text, topic, tag or
source context is replaced by its kind (and the exported vector, computed from the raw text, is not reused);
source ids follow the *hash* policy.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import AsyncIterator, Iterable
from datetime import datetime

import numpy as np
from pydantic import BaseModel, Field
from pydantic import ValidationError as PydanticValidationError

from .capture.fields import hashed_source, redact_text
from .capture.write import normalise_tags, normalise_text
from .engine import Engine
from .errors import ValidationError
from .models import EventAction, Learning, LearningType, Origin, Scope, Source, Status, Vocabulary, check_identifier
from .simhash import simhash64_hex
from .stores.base import EventDraft, Insert, NewLearning, Operation, PutVocabulary, Update, Vector

__all__ = ["ExportedLearning", "ImportReport", "export_lines", "import_lines"]

_BATCH = 256
_NAMESPACE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


class ExportedLearning(BaseModel):
    id: int | None = None
    user: str | None = None
    namespace: str = "learning"
    category: str | None = None
    type: LearningType = LearningType.FACT
    text: str
    topic: str = ""
    tags: list[str] = Field(default_factory=list)
    status: Status = Status.CANDIDATE
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    hits: int = Field(default=0, ge=0)
    streak: int = Field(default=0, ge=0)
    failures: int = Field(default=0, ge=0)
    version: int = Field(default=1, ge=1)
    supersedes: int | None = None
    origin: Origin = Origin.IMPORT
    source: Source = Field(default_factory=Source)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_retrieved_at: datetime | None = None
    embedding_model: str | None = None
    embedding: str | None = None


class ImportReport(BaseModel):
    read: int
    imported: int
    skipped_existing: int
    reembedded: int
    ids: dict[int, int] = Field(default_factory=dict)


def to_line(learning: Learning, vector: Vector | None) -> str:
    body = learning.model_dump(mode="json", exclude={"tenant", "revision", "simhash64"})
    if vector is not None:
        body["embedding"] = base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode()
    return json.dumps(body, ensure_ascii=False)


async def export_lines(engine: Engine, scope: Scope) -> AsyncIterator[str]:
    """The tenant's stored vocabularies first (so categories resolve on import), then one line per learning."""
    await engine.ensure_started()
    for vocabulary in await engine.store.list_vocabularies(scope.tenant):
        yield json.dumps({"vocabulary": vocabulary.model_dump(mode="json")}, ensure_ascii=False)
    async for learning, vector in engine.store.export(scope):
        yield to_line(learning, vector)


_Problems = list[str]


def _first_message(exc: Exception) -> str:
    if isinstance(exc, PydanticValidationError):
        return str(exc.errors()[0]["msg"])
    if isinstance(exc, ValidationError):
        return exc.message
    return f"not a learning or vocabulary line ({exc})"


def _parse(
    engine: Engine, lines: Iterable[str], scope: Scope
) -> tuple[list[Vocabulary], list[tuple[int, ExportedLearning, Vector | None]]]:
    """Every line checked before anything is written: shape, text, the write gate, the stored vector."""
    parsed: list[tuple[int, ExportedLearning, Vector | None]] = []
    vocabularies: list[Vocabulary] = []
    problems: _Problems = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            if line.lstrip().startswith('{"vocabulary"'):
                vocabularies.append(Vocabulary.model_validate(json.loads(line)["vocabulary"]))
                continue
            record = ExportedLearning.model_validate_json(line)
            record.text = normalise_text(record.text)
            record.tags = list(normalise_tags(record.tags))
            _redact(engine, record)
            if record.user is not None:
                check_identifier(record.user, "user")
            if not _NAMESPACE.match(record.namespace):
                raise ValidationError(f"namespace {record.namespace!r} is not a valid name", field="namespace")
            vector = _stored_vector(record, engine.embedder.model_id, engine.embedder.dimension)
        except RecursionError:
            problems.append(f"line {number}: nested too deeply")
            continue
        except (PydanticValidationError, ValidationError, ValueError, KeyError) as exc:
            problems.append(f"line {number}: {_first_message(exc)}")
            continue
        if scope.user is not None:
            record.user = scope.user
        parsed.append((number, record, vector))
    _reject_if(problems)
    return vocabularies, parsed


def _redact(engine: Engine, record: ExportedLearning) -> None:
    """The *redact* policy on an imported record's texts and the *hash* policy on its source ids."""
    gate = engine.gate
    text, topic = redact_text(gate, record.text), redact_text(gate, record.topic)
    tags = list(dict.fromkeys(redact_text(gate, tag) for tag in record.tags))
    context = record.source.context
    source = record.source.model_copy(update={"context": None if context is None else redact_text(gate, context)})
    if text != record.text:
        record.embedding = None  # computed from the raw text: embeddings can be inverted
    record.text, record.topic, record.tags = text, topic, tags
    record.source = hashed_source(gate, source)


def _reject_if(problems: _Problems) -> None:
    if problems:
        shown = "; ".join(problems[:10]) + (f"; … {len(problems) - 10} more" if len(problems) > 10 else "")
        raise ValidationError(f"import rejected, nothing written: {shown}", problems=problems[:100])


def _stored_vector(record: ExportedLearning, model_id: str, dimension: int) -> Vector | None:
    """The exported vector when it is of this model and sound; None means embed again."""
    if record.embedding is None or record.embedding_model != model_id:
        return None
    try:
        raw = base64.b64decode(record.embedding, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValidationError("embedding is not valid base64", field="embedding") from exc
    if len(raw) != 4 * dimension:
        raise ValidationError(f"embedding has {len(raw) // 4} dimensions, the model has {dimension}", field="embedding")
    vector = np.frombuffer(raw, dtype=np.float32)
    if not np.all(np.isfinite(vector)):
        raise ValidationError("embedding has non-finite values", field="embedding")
    return vector


async def import_lines(engine: Engine, scope: Scope, lines: Iterable[str], actor: str = "import") -> ImportReport:
    """Validate everything, embed what needs it, then write vocabularies and learnings in ONE transaction."""
    await engine.ensure_started()
    vocabularies, records = _parse(engine, lines, scope)
    adopted: dict[str, Vocabulary] = {}
    for vocabulary in vocabularies:
        # A namespace the tenant has not configured takes the exported vocabulary; a configured one wins.
        if await engine.store.get_vocabulary(scope.tenant, vocabulary.namespace) is None:
            adopted[vocabulary.namespace] = vocabulary
    problems: _Problems = []
    for number, record, _ in records:
        vocabulary = adopted.get(record.namespace) or await engine.vocabulary(scope.tenant, record.namespace)
        try:
            vocabulary.check(record.category)
        except ValidationError as exc:
            problems.append(f"line {number}: {exc.message}")
    _reject_if(problems)

    fresh = [(record, vector) for _, record, vector in records if not await _already_there(engine, scope, record)]
    report = ImportReport(read=len(records), imported=0, skipped_existing=len(records) - len(fresh), reembedded=0)
    missing = [i for i, (_, vector) in enumerate(fresh) if vector is None]
    computed: dict[int, Vector] = {}
    for start in range(0, len(missing), _BATCH):
        chunk = missing[start : start + _BATCH]
        vectors = await engine.embedder.embed([fresh[i][0].text for i in chunk])
        computed.update({i: vectors[row] for row, i in enumerate(chunk)})
    report.reembedded = len(missing)

    ops: list[Operation] = [
        PutVocabulary(
            vocabulary,
            EventDraft(
                actor=actor,
                action=EventAction.VOCABULARY_CHANGED,
                data={"namespace": vocabulary.namespace, "categories": vocabulary.names},
            ),
        )
        for vocabulary in adopted.values()
    ]
    old_ids = [record.id for record, _ in fresh]
    for i, (record, vector) in enumerate(fresh):
        ops.append(
            Insert(
                _new_learning(engine, scope, record, vector if vector is not None else computed[i]),
                EventDraft(actor=actor, action=EventAction.IMPORTED),
            )
        )
    if ops:
        result = await engine.apply(scope, ops)
        inserted = [learning for learning in result.learnings[len(adopted) :] if learning is not None]
        report.ids = {old: new.id for old, new in zip(old_ids, inserted, strict=True) if old is not None}
        report.imported = len(inserted)
        await _link_versions(engine, scope, fresh, report.ids, inserted)
    for namespace in adopted:
        engine.forget_vocabulary(scope.tenant, namespace)
    return report


def _new_learning(engine: Engine, scope: Scope, record: ExportedLearning, vector: Vector) -> NewLearning:
    return NewLearning(
        tenant=scope.tenant,
        user=record.user,
        text=record.text,
        vector=vector,
        embedding_model=engine.embedder.model_id,
        simhash64=simhash64_hex(record.text),
        namespace=record.namespace,
        category=record.category,
        type=record.type,
        topic=record.topic,
        tags=tuple(record.tags),
        status=record.status,
        confidence=record.confidence,
        origin=record.origin,
        source=record.source,
        version=record.version,
        hits=record.hits,
        streak=record.streak,
        failures=record.failures,
        created_at=record.created_at,
        updated_at=record.updated_at,
        last_retrieved_at=record.last_retrieved_at,
    )


async def _link_versions(
    engine: Engine,
    scope: Scope,
    fresh: list[tuple[ExportedLearning, Vector | None]],
    ids: dict[int, int],
    inserted: list[Learning],
) -> None:
    """Version chains point at exported ids; once every row has its new id, point them at those."""
    links = [
        Update(new.id, {"supersedes": ids[record.supersedes]}, None)
        for (record, _), new in zip(fresh, inserted, strict=True)
        if record.supersedes is not None and record.supersedes in ids
    ]
    if links:
        await engine.apply(scope, links)


async def _already_there(engine: Engine, scope: Scope, record: ExportedLearning) -> bool:
    owner = Scope(tenant=scope.tenant, user=record.user)
    found = await engine.store.existing_texts(owner, record.namespace, [record.text])
    return record.text in found
