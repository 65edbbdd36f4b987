"""Export of learnings as JSON Lines, one learning per line, embeddings included, and the line format that
`learnloop.importing` reads back."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import AsyncIterator
from datetime import datetime

import numpy as np
from pydantic import BaseModel, Field

from .engine import Engine
from .errors import ValidationError
from .models import Learning, LearningType, Origin, Scope, Source, Status
from .stores.base import Vector

__all__ = ["NAMESPACE", "ExportedLearning", "export_lines", "stored_vector", "to_line"]

NAMESPACE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


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
    superseded_by: int | None = None
    status_reason: str | None = None
    said_at: datetime | None = None
    event_at: datetime | None = None
    event_until: datetime | None = None


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


def stored_vector(record: ExportedLearning, model_id: str, dimension: int) -> Vector | None:
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
