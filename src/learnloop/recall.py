"""retrieve_context: embed the query, search, rank, render, and record what was used."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from .capture.carried import Carried
from .capture.fields import harmful, identifier
from .capture.gate_version import gate_version
from .capture.timing import resolve
from .engine import Engine
from .errors import ValidationError
from .governance import status_update
from .holdback.assignment import Assignment, context_assignment
from .lifecycle import evidence_promotion
from .models import (
    EventAction,
    Filters,
    Learning,
    LearningType,
    Limits,
    RetrievalResult,
    RetrievedItem,
    Scope,
    Status,
    constructed,
)
from .pool_ranking import rank_pool
from .prompting import Section
from .retrieval import Scored, name_floor, rank_candidates, render_memories, unnamed_dropped
from .stores.base import AppendEvent, Candidate, EventDraft, Operation, SearchRequest, Touch, Vector
from .stores.candidate_pool import CandidatePool
from .terms import MAX_QUERY_CHARS, query_names, query_terms
from .tokens import TokenCounter
from .tools.context import may_add_sections, render_with_tool_sections, retrieval_sections

__all__ = ["record_retrieval", "retrieve"]


async def retrieve(
    engine: Engine,
    scope: Scope,
    query: str,
    *,
    filters: Filters,
    limits: Limits,
    query_vector: Vector | None = None,
    record: bool = True,
    actor: str = "system:retrieval",
    at: datetime | None = None,
    session: str | None = None,
    assignment: Assignment | None = None,
    sections: Sequence[Section] = (),
    counter: TokenCounter | None = None,
) -> RetrievalResult:
    """`session`: the conversation asked in; corrections the user made earlier in it ("No, I meant last month")
    are shown first whatever the query (seed 001 §2, layer 1: in-flight corrections). `assignment` is the user's
    holdback arm when the caller has it already (`loop.turn()`); a user held back gets an empty result and records
    no hits. `sections` join the block under the same budget (a turn's user profile); `counter` makes
    `max_tokens` a counted token budget (a turn's seed 001 budget) instead of an estimate."""
    if not isinstance(query, str) or not query.strip():
        raise ValidationError("query is empty", field="query")
    query = query.strip()[:MAX_QUERY_CHARS]
    if assignment is None:
        await engine.ensure_started()
        assignment = await context_assignment(engine, scope, filters.namespace)
    if not assignment.shows_memory:
        return constructed(RetrievalResult, {"query": query, "items": [], "block": "", "tokens": 0, "dropped": 0})
    if filters.categories is not None and filters.namespace is not None:
        vocabulary = await engine.vocabulary(scope.tenant, filters.namespace)
        for category in filters.categories:
            vocabulary.check(category)
    if query_vector is None:
        query_vector = await engine.embed_one(query, purpose="query")
    elif query_vector.shape != (engine.embedder.dimension,):
        raise ValidationError(f"query_vector must have shape ({engine.embedder.dimension},)", field="query_vector")
    await engine.ensure_started()
    pool = max(engine.retrieval.candidate_pool, limits.top_k * 4)
    request = SearchRequest(
        vector=np.asarray(query_vector, dtype=np.float32),
        terms=query_terms(query),
        filters=filters,
        vector_k=pool,
        text_k=pool,
    )
    now = engine.clock()
    # The time a question asks about ("last May", "on 3 June, 2023"), resolved against when it is asked.
    span = resolve(query, at or now)
    ranked: list[Scored] = []

    def select(candidates: Sequence[Candidate]) -> list[Candidate]:
        # Called by the store between its two reads, so whole rows are read only for what ranks.
        if isinstance(candidates, CandidatePool):
            ranked.extend(rank_pool(candidates, filters, limits, engine.retrieval, now, span))
        else:
            ranked.extend(rank_candidates(candidates, filters, limits, engine.retrieval, now, span))
        return [r.candidate for r in ranked]

    search = engine.store.search(scope, request, select=select)
    if may_add_sections(engine, scope):
        # Both reads queue on the store; starting them together overlaps their hand-offs.
        loaded, tool_sections = await asyncio.gather(search, retrieval_sections(engine, scope, query, query_vector))
    else:
        loaded = await search
        # The search brought the store's view up to date: tool knowledge written since (by another
        # process) shows now, at the cost of a second hand-off this once.
        sections_now = may_add_sections(engine, scope)
        tool_sections = await retrieval_sections(engine, scope, query, query_vector) if sections_now else []
    present = {c.id for c in loaded}
    kept = [r for r in ranked if r.candidate.id in present]
    # What the current write gate refuses is never served, even before a recheck quarantines it; a learning this
    # very gate accepted (when it was saved, or by a recheck) needs no second reading.
    version = gate_version(engine.gate)
    served = [r.item(r.candidate.learning()) for r in kept]
    items = [
        item
        for r, item in zip(kept, served, strict=True)
        if r.candidate.gate_version == version or not harmful(engine.gate, item.learning.text)
    ]
    floor = engine.retrieval.name_similarity
    # A month or weekday the question dates itself with ("last May") names no one.
    named = query.replace(span.expression, " ") if span is not None and span.expression else query
    items = unnamed_dropped(items, query_names(named), name_floor("") if floor is None else floor)
    if session:
        items = await _with_session_corrections(engine, scope, session, items)
    shown_sections = [*tool_sections, *sections]
    if shown_sections:
        block, included = render_with_tool_sections(items, limits, shown_sections, counter)
    else:
        block, included = render_memories(items, limits, counter)
    if record:
        _record(engine, scope, included, actor, query)
    # Every field given and of its type (the items are built above): no validation pass over the items.
    values = {
        "query": query,
        "items": included,
        "block": block.text,
        "tokens": block.tokens,
        "dropped": len(kept) - len(included),
    }
    return constructed(RetrievalResult, values)


async def _with_session_corrections(
    engine: Engine, scope: Scope, session: str, items: list[RetrievedItem]
) -> list[RetrievedItem]:
    last = await engine.store.last_turn(scope, identifier(engine.gate, session) or session)
    ids = Carried.of(None if last is None else last.carried).corrections
    if not ids:
        return items
    learnings = await engine.store.get_many(scope, list(ids))
    pinned = [
        constructed(
            RetrievedItem,
            {
                "learning": learning,
                "conflicts": [],
                "score": 1.0,
                "relevance": 1.0,
                "vector_similarity": None,
                "text_rank": None,
                "vector_rank": None,
                "recency": 1.0,
                "why": "a correction the user made earlier in this session",
                "used": False,
            },
        )
        for learning in learnings
        if learning.type is LearningType.CORRECTION and learning.status is not Status.DEPRECATED
    ]
    shown = {item.learning.id for item in pinned}
    return [*pinned, *(item for item in items if item.learning.id not in shown)]


def _record(engine: Engine, scope: Scope, items: list[RetrievedItem], actor: str, query: str) -> None:
    """hits + 1 and streak + 1 for what the model will see and one event, written in the background so the caller
    does not wait; evidence promotions, decided on the counts as they are then, at the next pause in the searches
    or before a read that could see them (see `stores.sql.bookkeeping`).
    The event names the query (its start), so a reader of the activity panel sees what was asked."""
    shown = [item.learning.id for item in items]
    # Only what was relevant enough to help counts as used: noise shown at the edge of relevance records no
    # hit and extends no streak, so it is never promoted by retrievals it did not serve.
    ids = tuple(item.learning.id for item in items if item.used)
    data = {"ids": shown, "used": list(ids), "count": len(shown), "query": _clipped(query)}
    event = AppendEvent(EventDraft(actor=actor, action=EventAction.RETRIEVED, data=data))
    policy = engine.policy

    def promotions(touched: list[Learning]) -> list[Operation]:
        ops: list[Operation] = []
        for learning in touched:
            promotion = evidence_promotion(learning, policy)
            if promotion is not None and scope.owns(scope.tenant, learning.user):
                ops.append(
                    status_update(
                        learning,
                        Status.VERIFIED,
                        "system:auto-promote",
                        promotion.reason,
                        confidence=promotion.confidence,
                    )
                )
        return ops

    touch = Touch(ids=ids, at=engine.clock(), follow_from=(policy.promote_on_streak, policy.promote_on_hits))
    engine.submit(scope, [touch, event], then=promotions)


_QUERY_CHARS = 120


def _clipped(query: str) -> str:
    text = " ".join(query.split())
    return text if len(text) <= _QUERY_CHARS else text[: _QUERY_CHARS - 1] + "…"


def record_retrieval(engine: Engine, scope: Scope, result: RetrievalResult, assignment: Assignment) -> None:
    """Record what `retrieve(..., record=False)` returned, as `record=True` would have: for a caller that knows
    only afterwards whether the retrieval counts (a turn that turns out to repeat a message counts nothing)."""
    if assignment.shows_memory:
        _record(engine, scope, result.items, "system:retrieval", result.query)
