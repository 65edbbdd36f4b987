"""Import of learnings from JSON Lines (as `export` writes them): streamed, checked line by line, written in
batches.

Lines are read and checked a batch at a time, in a worker thread (JSON, shape, text, the write gate, the stored
vector), so neither the file nor its parsing ever sits whole in memory or on the event loop. A bad line is
rejected with its number and the reason, and the others go on; each batch of good lines (with the vocabularies
it brings) is one transaction, so no long write transaction holds other writers back. Lines already present
(same owner, namespace and text) are skipped, which makes an import safe to run again, and `start_line` resumes
one where it stopped. Vectors exported by this embedding model are kept; others are computed, a few texts per
call so that the embedder stays available to requests. `pause_share` makes the import leave that share of its
time to other work (the service passes 0.5): a background import never starves interactive requests.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field

from pydantic import BaseModel, Field
from pydantic import ValidationError as PydanticValidationError

from .capture.fields import hashed_source, redact_text
from .capture.write import normalise_tags, normalise_text
from .engine import Engine
from .errors import ValidationError
from .models import EventAction, Scope, Vocabulary, check_identifier
from .portability import NAMESPACE, ExportedLearning, stored_vector
from .simhash import simhash64_hex
from .stores.base import EventDraft, Insert, NewLearning, Operation, PutVocabulary, Update, Vector
from .textcheck import check_value

__all__ = [
    "ImportReport",
    "ImportSettings",
    "OnBatch",
    "RejectedLine",
    "count_lines",
    "file_lines",
    "import_lines",
]

#: How many rejected lines a report lists (all are counted).
MAX_LISTED_REJECTIONS = 1000


class RejectedLine(BaseModel):
    line: int
    reason: str


class ImportReport(BaseModel):
    """What an import did so far (passed to `on_batch` after every batch) or in all."""

    read: int = Field(default=0, description="Learning lines read (blank and vocabulary lines not counted)")
    imported: int = 0
    skipped_existing: int = 0
    reembedded: int = 0
    rejected: int = 0
    rejected_lines: list[RejectedLine] = Field(default_factory=list, description="The first 1,000 rejections")
    last_line: int = Field(default=0, description="Every line up to this one is handled: resume after it")
    ids: dict[int, int] = Field(default_factory=dict, description="Exported id → new id")

    def after(self, earlier: ImportReport) -> ImportReport:
        """This report of a resumed import, with the counts of the run before it added in."""
        listed = (earlier.rejected_lines + self.rejected_lines)[:MAX_LISTED_REJECTIONS]
        return self.model_copy(
            update={
                "read": earlier.read + self.read,
                "imported": earlier.imported + self.imported,
                "skipped_existing": earlier.skipped_existing + self.skipped_existing,
                "reembedded": earlier.reembedded + self.reembedded,
                "rejected": earlier.rejected + self.rejected,
                "rejected_lines": listed,
                "ids": earlier.ids | self.ids,
            }
        )

    def reject(self, line: int, reason: str) -> None:
        self.rejected += 1
        if len(self.rejected_lines) < MAX_LISTED_REJECTIONS:
            self.rejected_lines.append(RejectedLine(line=line, reason=reason))


@dataclass(frozen=True)
class ImportSettings:
    batch_size: int = 64  # learnings per transaction
    embed_chunk: int = 16  # texts per embedding call
    pause_share: float = 0.0  # share of wall time left to other work, 0 ≤ x < 1


OnBatch = Callable[[ImportReport], Awaitable[None] | None]


@dataclass
class _Batch:
    vocabularies: list[tuple[int, Vocabulary]] = field(default_factory=list)
    records: list[tuple[int, ExportedLearning, Vector | None]] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    last_line: int = 0


def _reason(exc: Exception) -> str:
    if isinstance(exc, PydanticValidationError):
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    if isinstance(exc, ValidationError):
        return exc.message
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    return f"not a learning or vocabulary line ({exc})"


def _check_line(engine: Engine, scope: Scope, raw: str | bytes) -> ExportedLearning | Vocabulary:
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    document = json.loads(text)
    if not isinstance(document, dict):
        raise ValidationError("a line must be a JSON object")
    check_value(document, "line")
    if set(document) == {"vocabulary"}:
        return Vocabulary.model_validate(document["vocabulary"])
    record = ExportedLearning.model_validate(document)
    record.text = normalise_text(record.text)
    record.tags = list(normalise_tags(record.tags))
    _redact(engine, record)
    if record.user is not None:
        check_identifier(record.user, "user")
    if not NAMESPACE.match(record.namespace):
        raise ValidationError(f"namespace {record.namespace!r} is not a valid name", field="namespace")
    if scope.user is not None:
        record.user = scope.user
    return record


def _redact(engine: Engine, record: ExportedLearning) -> None:
    """The gate's *redact* policy on an imported record's texts and its *hash* policy on its source ids
    (`capture.fields`): an export is a record that must come back whole, so a harmful span is replaced by its
    kind, and an exported vector computed from the raw text is not reused."""
    gate = engine.gate
    text, topic = redact_text(gate, record.text), redact_text(gate, record.topic)
    tags = list(dict.fromkeys(redact_text(gate, tag) for tag in record.tags))
    context = record.source.context
    source = record.source.model_copy(update={"context": None if context is None else redact_text(gate, context)})
    if text != record.text:
        record.embedding = None  # embeddings can be inverted
    record.text, record.topic, record.tags = text, topic, tags
    record.source = hashed_source(gate, source)


def _read_batch(
    engine: Engine, scope: Scope, lines: Iterator[tuple[int, str | bytes]], size: int, model: str, dim: int
) -> _Batch:
    """The next `size` learning lines (and the vocabulary lines among them), checked; runs in a thread."""
    batch = _Batch()
    for number, raw in lines:
        batch.last_line = number
        if not raw.strip():
            continue
        try:
            checked = _check_line(engine, scope, raw)
            if isinstance(checked, Vocabulary):
                batch.vocabularies.append((number, checked))
                continue
            vector = stored_vector(checked, model, dim)
        except (PydanticValidationError, ValidationError, ValueError, KeyError, RecursionError) as exc:
            batch.problems.append((number, _reason(exc)))
            continue
        batch.records.append((number, checked, vector))
        if len(batch.records) + len(batch.problems) >= size:
            break
    return batch


async def import_lines(
    engine: Engine,
    scope: Scope,
    lines: Iterable[str | bytes],
    actor: str = "import",
    *,
    start_line: int = 1,
    settings: ImportSettings | None = None,
    on_batch: OnBatch | None = None,
) -> ImportReport:
    """Import `lines` from line `start_line` on (line numbers count from 1); see the module docstring."""
    settings = settings or ImportSettings()
    await engine.ensure_started()
    report = ImportReport(last_line=start_line - 1)
    numbered = ((n, raw) for n, raw in enumerate(lines, start=1) if n >= start_line)
    adopted: dict[str, Vocabulary] = {}
    # (new id, field, exported id) of version-chain links whose other end may come later in the file.
    deferred_links: list[tuple[int, str, int]] = []
    model, dim = engine.embedder.model_id, engine.embedder.dimension
    while True:
        began = time.monotonic()
        batch = await asyncio.to_thread(_read_batch, engine, scope, numbered, settings.batch_size, model, dim)
        if batch.last_line == 0:
            break
        report.read += len(batch.records) + len(batch.problems)
        for number, reason in batch.problems:
            report.reject(number, reason)
        await _write_batch(engine, scope, batch, actor, settings, report, adopted, deferred_links)
        report.last_line = batch.last_line
        if on_batch is not None:
            done = on_batch(report)
            if inspect.isawaitable(done):
                await done
        await _yield_time(time.monotonic() - began, settings.pause_share)
    links = [Update(new, {field: report.ids[old]}, None) for new, field, old in deferred_links if old in report.ids]
    if links:
        await engine.apply(scope, links)
    for namespace in adopted:
        engine.forget_vocabulary(scope.tenant, namespace)
    return report


async def _yield_time(busy: float, share: float) -> None:
    """Sleep so that this batch's work is (1 - share) of the time it spans: other requests get the rest."""
    if share <= 0:
        await asyncio.sleep(0)
        return
    await asyncio.sleep(min(2.0, busy * share / (1.0 - share)))


async def _write_batch(
    engine: Engine,
    scope: Scope,
    batch: _Batch,
    actor: str,
    settings: ImportSettings,
    report: ImportReport,
    adopted: dict[str, Vocabulary],
    deferred_links: list[tuple[int, str, int]],
) -> None:
    ops: list[Operation] = []
    for _, vocabulary in batch.vocabularies:
        # A namespace the tenant has not configured takes the exported vocabulary; a configured one wins.
        known = vocabulary.namespace in adopted or await engine.store.get_vocabulary(scope.tenant, vocabulary.namespace)
        if not known:
            adopted[vocabulary.namespace] = vocabulary
            draft = EventDraft(
                actor=actor,
                action=EventAction.VOCABULARY_CHANGED,
                data={"namespace": vocabulary.namespace, "categories": vocabulary.names},
            )
            ops.append(PutVocabulary(vocabulary, draft))
    fresh = await _fresh_records(engine, scope, batch, report, adopted)
    vectors = await _vectors(engine, fresh, settings.embed_chunk, report)
    exported_ids: list[int | None] = []
    for (_, record, _), vector in zip(fresh, vectors, strict=True):
        supersedes = report.ids.get(record.supersedes) if record.supersedes is not None else None
        draft = EventDraft(actor=actor, action=EventAction.IMPORTED)
        ops.append(Insert(_new_learning(engine, scope, record, vector, supersedes), draft))
        exported_ids.append(record.id)
    if not ops:
        return
    result = await engine.apply(scope, ops)
    vocabulary_ops = len(ops) - len(fresh)
    inserted = [learning for learning in result.learnings[vocabulary_ops:] if learning is not None]
    report.imported += len(inserted)
    for (_, record, _), new, old_id in zip(fresh, inserted, exported_ids, strict=True):
        if old_id is not None:
            report.ids[old_id] = new.id
        if record.supersedes is not None and new.supersedes is None:
            deferred_links.append((new.id, "supersedes", record.supersedes))
        if record.superseded_by is not None:
            deferred_links.append((new.id, "superseded_by", record.superseded_by))


async def _fresh_records(
    engine: Engine, scope: Scope, batch: _Batch, report: ImportReport, adopted: dict[str, Vocabulary]
) -> list[tuple[int, ExportedLearning, Vector | None]]:
    """The batch's records in the vocabulary, not already stored (by the store, or earlier in this batch)."""
    checked: list[tuple[int, ExportedLearning, Vector | None]] = []
    for number, record, vector in batch.records:
        vocabulary = adopted.get(record.namespace) or await engine.vocabulary(scope.tenant, record.namespace)
        try:
            vocabulary.check(record.category)
        except ValidationError as exc:
            report.reject(number, exc.message)
            continue
        checked.append((number, record, vector))
    groups: dict[tuple[str | None, str], list[str]] = {}
    for _, record, _ in checked:
        groups.setdefault((record.user, record.namespace), []).append(record.text)
    present: set[tuple[str | None, str, str]] = set()
    for (user, namespace), texts in groups.items():
        owner = Scope(tenant=scope.tenant, user=user)
        present |= {(user, namespace, t) for t in await engine.store.existing_texts(owner, namespace, texts)}
    fresh = []
    for item in checked:
        key = (item[1].user, item[1].namespace, item[1].text)
        if key in present:
            report.skipped_existing += 1
            continue
        present.add(key)
        fresh.append(item)
    return fresh


async def _vectors(
    engine: Engine, fresh: list[tuple[int, ExportedLearning, Vector | None]], chunk: int, report: ImportReport
) -> list[Vector]:
    missing = [i for i, (_, _, vector) in enumerate(fresh) if vector is None]
    computed: dict[int, Vector] = {}
    for start in range(0, len(missing), max(1, chunk)):
        part = missing[start : start + chunk]
        vectors = await engine.embedder.embed([fresh[i][1].text for i in part])
        computed.update({i: vectors[row] for row, i in enumerate(part)})
    report.reembedded += len(missing)
    return [vector if vector is not None else computed[i] for i, (_, _, vector) in enumerate(fresh)]


def _new_learning(
    engine: Engine, scope: Scope, record: ExportedLearning, vector: Vector, supersedes: int | None
) -> NewLearning:
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
        supersedes=supersedes,
        hits=record.hits,
        streak=record.streak,
        failures=record.failures,
        created_at=record.created_at,
        updated_at=record.updated_at,
        last_retrieved_at=record.last_retrieved_at,
        status_reason=record.status_reason,
        said_at=record.said_at or record.created_at,
        event_at=record.event_at,
        event_until=record.event_until,
    )


def file_lines(path: str) -> Iterator[bytes]:
    """The lines of a file as bytes, read lazily (decoding is per line, so one bad line is one rejection)."""
    with open(path, "rb") as handle:
        yield from handle


def count_lines(path: str) -> int:
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
