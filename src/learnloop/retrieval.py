"""Hybrid retrieval: vector and keyword candidates fused, then ranked status > relevance > recency > hits.

Candidates come from the store already filtered (scope, namespace, category, type, status; deprecated
never). Fusion is reciprocal-rank fusion of the two lists; relevance then decides which `top_k` items are
kept, and among those verified learnings are shown before candidates (seed 004's "prefer verified").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from .models import Filters, Learning, Limits, RetrievedItem, Status
from .prompting import RenderedBlock, Section, render_block
from .stores.base import Candidate

__all__ = ["MEMORY_SECTION_TITLE", "RetrievalConfig", "rank_candidates", "render_memories"]

MEMORY_SECTION_TITLE = "Relevant memories (from your history):"
_STATUS_TIER = {Status.VERIFIED: 2, Status.CANDIDATE: 1, Status.DEPRECATED: 0}


@dataclass(frozen=True)
class RetrievalConfig:
    """Ranking knobs. Defaults were chosen on the LoCoMo dev split (see bench/locomo_recall.py)."""

    rrf_k: int = 60
    vector_weight: float = 1.0
    text_weight: float = 1.0
    candidate_pool: int = 50
    # A vector-only candidate below this cosine similarity is noise, not memory.
    min_similarity: float = 0.2
    half_life_days: float = 90.0
    recency_weight: float = 0.15
    hits_weight: float = 0.05


def _recency(learning: Learning, now: datetime, half_life_days: float) -> float:
    age_days = max(0.0, (now - learning.updated_at).total_seconds() / 86_400)
    return float(0.5 ** (age_days / half_life_days))


def _why(item: Candidate, recency: float, learning: Learning) -> str:
    parts = []
    if item.vector_rank is not None and item.vector_similarity is not None:
        parts.append(f"semantic match {item.vector_similarity:.2f} (#{item.vector_rank})")
    if item.text_rank is not None:
        parts.append(f"keyword match (#{item.text_rank})")
    parts.append(learning.status.value)
    if learning.hits:
        parts.append(f"used {learning.hits}×")
    if recency < 0.5:
        parts.append("older")
    return "; ".join(parts)


def rank_candidates(
    candidates: Sequence[Candidate],
    filters: Filters,
    limits: Limits,
    config: RetrievalConfig,
    now: datetime,
) -> list[RetrievedItem]:
    best = config.vector_weight / (config.rrf_k + 1) + config.text_weight / (config.rrf_k + 1)
    scored: list[RetrievedItem] = []
    for item in candidates:
        learning = item.learning
        if learning.status is Status.DEPRECATED or learning.status not in filters.statuses:
            continue
        if filters.tags is not None and not set(filters.tags) & set(learning.tags):
            continue
        if item.text_rank is None and (item.vector_similarity or 0.0) < config.min_similarity:
            continue
        fused = 0.0
        if item.vector_rank is not None:
            fused += config.vector_weight / (config.rrf_k + item.vector_rank)
        if item.text_rank is not None:
            fused += config.text_weight / (config.rrf_k + item.text_rank)
        relevance = fused / best
        if relevance < limits.min_relevance:
            continue
        recency = _recency(learning, now, config.half_life_days)
        score = relevance * (1 - config.recency_weight * (1 - recency))
        score *= 1 + config.hits_weight * math.log1p(learning.hits)
        scored.append(
            RetrievedItem(
                learning=learning,
                score=round(score, 6),
                relevance=round(relevance, 6),
                vector_similarity=item.vector_similarity,
                text_rank=item.text_rank,
                vector_rank=item.vector_rank,
                recency=round(recency, 4),
                why=_why(item, recency, learning),
            )
        )
    scored.sort(key=lambda r: (-r.score, -r.learning.updated_at.timestamp(), -r.learning.hits, r.learning.id))
    kept = scored[: limits.top_k]
    kept.sort(key=lambda r: (-_STATUS_TIER[r.learning.status], -r.score))
    return kept


def render_memories(
    items: Sequence[RetrievedItem], limits: Limits
) -> tuple[RenderedBlock, list[RetrievedItem]]:
    """The seed 004 block for `items`, and the items that made it into the block."""
    lines = [f"[{i.learning.status.value}/{i.learning.label}] {i.learning.text}" for i in items]
    block = render_block(
        [Section(MEMORY_SECTION_TITLE, lines)],
        max_chars=limits.max_chars,
        max_tokens=limits.max_tokens,
        max_items=limits.max_items,
    )
    return block, [items[i] for i in block.kept.get(MEMORY_SECTION_TITLE, [])]
