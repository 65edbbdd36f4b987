"""retrieve_context: embed the query, search, rank, render, and record what was used."""

from __future__ import annotations

import numpy as np

from .engine import Engine
from .errors import ValidationError
from .governance import status_update
from .lifecycle import evidence_promotion
from .models import EventAction, Filters, Limits, RetrievalResult, RetrievedItem, Scope, Status
from .retrieval import rank_candidates, render_memories
from .stores.base import AppendEvent, EventDraft, Operation, SearchRequest, Touch, Vector
from .terms import query_terms
from .tools.context import render_with_tool_sections, retrieval_sections

__all__ = ["retrieve"]

MAX_QUERY_CHARS = 4000


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
) -> RetrievalResult:
    if not isinstance(query, str) or not query.strip():
        raise ValidationError("query is empty", field="query")
    query = query.strip()[:MAX_QUERY_CHARS]
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
    candidates = await engine.store.search(
        scope,
        SearchRequest(
            vector=np.asarray(query_vector, dtype=np.float32),
            terms=query_terms(query),
            filters=filters,
            vector_k=pool,
            text_k=pool,
        ),
    )
    ranked = rank_candidates(candidates, filters, limits, engine.retrieval, engine.clock())
    learnings = {
        learning.id: learning for learning in await engine.store.get_many(scope, [r.candidate.id for r in ranked])
    }
    items = [r.item(learnings[r.candidate.id]) for r in ranked if r.candidate.id in learnings]
    tool_knowledge = await retrieval_sections(engine, scope, query, query_vector)
    if tool_knowledge:
        block, included = render_with_tool_sections(items, limits, tool_knowledge)
    else:
        block, included = render_memories(items, limits)
    if record:
        _record(engine, scope, included, actor)
    return RetrievalResult(
        query=query,
        items=included,
        block=block.text,
        tokens=block.tokens,
        dropped=len(ranked) - len(included),
    )


def _record(engine: Engine, scope: Scope, items: list[RetrievedItem], actor: str) -> None:
    """hits + 1 and streak + 1 for what the model will see, one event, and evidence promotions — written in
    the background so the caller does not wait, yet before anything this process reads next."""
    ids = tuple(item.learning.id for item in items)
    event = AppendEvent(
        EventDraft(actor=actor, action=EventAction.RETRIEVED, data={"ids": list(ids), "count": len(ids)})
    )
    ops: list[Operation] = [Touch(ids=ids, at=engine.clock()), event]
    promotions: list[Operation] = []
    for item in items:
        seen = item.learning.model_copy(update={"hits": item.learning.hits + 1, "streak": item.learning.streak + 1})
        promotion = evidence_promotion(seen, engine.policy)
        if promotion is not None and scope.owns(scope.tenant, seen.user):
            promotions.append(
                status_update(
                    seen, Status.VERIFIED, "system:auto-promote", promotion.reason, confidence=promotion.confidence
                )
            )
    # If someone changed a learning meanwhile, its promotion waits for a later retrieval.
    engine.submit(scope, ops + promotions, fallback=ops if promotions else None)
