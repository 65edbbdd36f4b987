"""Export and import of learnings as JSON Lines, one learning per line, embeddings included.

An import is checked whole before anything is written: a file with one bad line writes nothing and the
error names the line. Re-importing the same file adds nothing (rows with the same owner, namespace and
text are skipped), so an interrupted import can simply be run again.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Iterable
from datetime import datetime

import numpy as np
from pydantic import BaseModel, Field
from pydantic import ValidationError as PydanticValidationError

from .capture.write import normalise_tags, normalise_text
from .engine import Engine
from .errors import ValidationError
from .models import EventAction, Learning, LearningType, Origin, Scope, Source, Status, Vocabulary
from .simhash import simhash64_hex
from .stores.base import EventDraft, Insert, NewLearning, Vector

__all__ = ["ExportedLearning", "ImportReport", "export_lines", "import_lines"]

_BATCH = 256


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


def _parse(lines: Iterable[str], scope: Scope) -> tuple[list[Vocabulary], list[tuple[int, ExportedLearning]]]:
    parsed: list[tuple[int, ExportedLearning]] = []
    vocabularies: list[Vocabulary] = []
    problems: list[str] = []
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
        except (PydanticValidationError, ValidationError, ValueError, KeyError) as exc:
            if isinstance(exc, PydanticValidationError):
                first = exc.errors()[0]["msg"]
            elif isinstance(exc, ValidationError):
                first = exc.message
            else:
                first = f"not a learning or vocabulary line ({exc})"
            problems.append(f"line {number}: {first}")
            continue
        if scope.user is not None:
            record.user = scope.user
        parsed.append((number, record))
    if problems:
        shown = "; ".join(problems[:10]) + (f"; … {len(problems) - 10} more" if len(problems) > 10 else "")
        raise ValidationError(f"import rejected, nothing written: {shown}", problems=problems[:100])
    return vocabularies, parsed


def _stored_vector(record: ExportedLearning, model_id: str, dimension: int) -> Vector | None:
    if record.embedding is None or record.embedding_model != model_id:
        return None
    vector = np.frombuffer(base64.b64decode(record.embedding), dtype=np.float32)
    return vector if vector.shape == (dimension,) else None


async def import_lines(engine: Engine, scope: Scope, lines: Iterable[str], actor: str = "import") -> ImportReport:
    vocabularies, records = _parse(lines, scope)
    await engine.ensure_started()
    adopted: dict[str, Vocabulary] = {}
    for vocabulary in vocabularies:
        # A namespace the tenant has not configured takes the exported vocabulary; a configured one wins.
        if await engine.store.get_vocabulary(scope.tenant, vocabulary.namespace) is None:
            adopted[vocabulary.namespace] = vocabulary
    for number, record in records:
        vocabulary = adopted.get(record.namespace) or await engine.vocabulary(scope.tenant, record.namespace)
        try:
            vocabulary.check(record.category)
        except ValidationError as exc:
            raise ValidationError(f"import rejected, nothing written: line {number}: {exc.message}") from exc
    for vocabulary in adopted.values():
        draft = EventDraft(
            actor=actor,
            action=EventAction.VOCABULARY_CHANGED,
            data={"namespace": vocabulary.namespace, "categories": vocabulary.names},
        )
        engine.bus.publish([await engine.store.put_vocabulary(scope.tenant, vocabulary, draft)])
        engine.forget_vocabulary(scope.tenant, vocabulary.namespace)
    report = ImportReport(read=len(records), imported=0, skipped_existing=0, reembedded=0)
    for start in range(0, len(records), _BATCH):
        batch = [record for _, record in records[start : start + _BATCH]]
        fresh = [r for r in batch if not await _already_there(engine, scope, r)]
        report.skipped_existing += len(batch) - len(fresh)
        if not fresh:
            continue
        vectors = [_stored_vector(r, engine.embedder.model_id, engine.embedder.dimension) for r in fresh]
        missing = [i for i, v in enumerate(vectors) if v is None]
        if missing:
            computed = await engine.embedder.embed([fresh[i].text for i in missing])
            for row, i in enumerate(missing):
                vectors[i] = computed[row]
            report.reembedded += len(missing)
        ops = []
        for record, vector in zip(fresh, vectors, strict=True):
            assert vector is not None
            supersedes = report.ids.get(record.supersedes) if record.supersedes is not None else None
            new = NewLearning(
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
                supersedes=supersedes,
                version=record.version,
                hits=record.hits,
                streak=record.streak,
                failures=record.failures,
                created_at=record.created_at,
                updated_at=record.updated_at,
                last_retrieved_at=record.last_retrieved_at,
            )
            ops.append(Insert(new, EventDraft(actor=actor, action=EventAction.IMPORTED)))
        result = await engine.apply(scope, ops)
        for record, learning in zip(fresh, result.learnings, strict=True):
            assert learning is not None
            if record.id is not None:
                report.ids[record.id] = learning.id
        report.imported += len(fresh)
    return report


async def _already_there(engine: Engine, scope: Scope, record: ExportedLearning) -> bool:
    owner = Scope(tenant=scope.tenant, user=record.user)
    found = await engine.store.existing_texts(owner, record.namespace, [record.text])
    return record.text in found
