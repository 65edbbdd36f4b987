"""Hybrid retrieval: vector and keyword candidates fused, then ranked status > relevance > recency > hits.

Candidates come from the store already filtered (scope, namespace, category, type, status; deprecated
never). Fusion is a weighted sum of the cosine similarity (min-max scaled over the candidate pool) and the
BM25 score (scaled by the best one); reciprocal-rank fusion is available as an option. Relevance decides
which `top_k` items are kept; among those, verified learnings are shown before candidates (seed 004's
"prefer verified"), and recency and hits adjust the order within a tier.
"""

from __future__ import annotations

import heapq
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from .capture.timing import TimeSpan, dated
from .models import Filters, Learning, Limits, RetrievedItem, Status
from .prompting import RenderedBlock, Section, clean_line, memory_line, render_block
from .stores.base import Candidate

__all__ = [
    "MEMORY_SECTION_TITLE",
    "RetrievalConfig",
    "Scored",
    "item_line",
    "noise_floor",
    "one_line_per_pair",
    "rank_candidates",
    "render_memories",
]

MEMORY_SECTION_TITLE = "Relevant memories (from your history):"
_STATUS_TIER = {Status.VERIFIED: 2, Status.CANDIDATE: 1, Status.DEPRECATED: 0}


@dataclass(frozen=True)
class RetrievalConfig:
    """Ranking knobs. Fusion defaults were chosen on the LoCoMo dev split (see bench/locomo_recall.py):
    linear fusion with a 0.3 vector share beat RRF, vector-only and BM25-only at recall@5 and @10."""

    fusion: Literal["linear", "rrf"] = "linear"
    vector_weight: float = 0.3
    rrf_k: int = 60
    candidate_pool: int = 50
    # A vector-only candidate below this cosine similarity is noise, not memory. None: the embedding model's
    # noise floor (`noise_floor`), set when the engine is built.
    min_similarity: float | None = None
    half_life_days: float = 90.0
    recency_weight: float = 0.15
    hits_weight: float = 0.05
    # A question with a time expression ("what did I do last May", "on 3 June, 2023") favours learnings said in
    # that span or about it: their relevance is multiplied by 1 + time_boost. On LoCoMo dev through save() the
    # 82 questions with one go from recall@10 0.628 (no boost) to 0.766 (1.0) and 0.823 (2.0, and 4.0: it
    # saturates); all questions 0.663 → 0.679 (the store path without dates: 0.670).
    time_boost: float = 2.0


# Floors for models whose cosine scale differs from MiniLM's, whose 0.2 is the median of unrelated pairs
# (random pairs of LoCoMo turns). The static profile's token averages share most of their direction: its
# median is 0.915. With 0.9, its LoCoMo hybrid recall@5/@10 is 0.574/0.663 (0.577/0.666 with 0.2) and the
# junk bench keeps 23 of 37 learnings live instead of 5, because noise is no longer shown, and blamed.
_NOISE_FLOORS = {"local:minilm-static": 0.9}
_MINILM_NOISE_FLOOR = 0.2


def noise_floor(model_id: str) -> float:
    """The cosine below which a vector-only match is noise for this embedding model."""
    for prefix, floor in _NOISE_FLOORS.items():
        if model_id.startswith(prefix):
            return floor
    return _MINILM_NOISE_FLOOR


@dataclass(frozen=True)
class Scored:
    candidate: Candidate
    score: float
    relevance: float
    recency: float
    timely: bool = False

    @property
    def why(self) -> str:
        item = self.candidate
        parts = []
        if item.vector_rank is not None and item.vector_similarity is not None:
            parts.append(f"semantic match {item.vector_similarity:.2f} (#{item.vector_rank})")
        if item.text_rank is not None:
            parts.append(f"keyword match (#{item.text_rank})")
        parts.append(item.status.value)
        if self.timely:
            parts.append("in the time asked about")
        if item.hits:
            parts.append(f"used {item.hits}×")
        if self.recency < 0.5:
            parts.append("older")
        return "; ".join(parts)

    def item(self, learning: Learning) -> RetrievedItem:
        return RetrievedItem(
            learning=learning,
            conflicts=list(self.candidate.conflicts),
            score=round(self.score, 6),
            relevance=round(self.relevance, 6),
            vector_similarity=self.candidate.vector_similarity,
            text_rank=self.candidate.text_rank,
            vector_rank=self.candidate.vector_rank,
            recency=round(self.recency, 4),
            why=self.why,
        )


def _recency(updated_at: float, now: float, half_life_days: float) -> float:
    age_days = max(0.0, (now - updated_at) / 86_400)
    return float(0.5 ** (age_days / half_life_days))


def _fuser(candidates: Sequence[Candidate], config: RetrievalConfig) -> Callable[[Candidate], float]:
    """A function giving each candidate its fused relevance in [0, 1]."""
    w = config.vector_weight
    if config.fusion == "rrf":
        best = 1.0 / (config.rrf_k + 1)

        def rrf(item: Candidate) -> float:
            fused = 0.0
            if item.vector_rank is not None:
                fused += w / (config.rrf_k + item.vector_rank)
            if item.text_rank is not None:
                fused += (1 - w) / (config.rrf_k + item.text_rank)
            return fused / best

        return rrf
    sims = [c.vector_similarity for c in candidates if c.vector_similarity is not None]
    low, high = (min(sims), max(sims)) if sims else (0.0, 1.0)
    spread = high - low
    top_text = max((c.text_score for c in candidates if c.text_score is not None), default=0.0)

    def linear(item: Candidate) -> float:
        vector = 0.0
        if item.vector_similarity is not None:
            vector = (item.vector_similarity - low) / spread if spread > 1e-6 else 1.0
        text = item.text_score / top_text if item.text_score is not None and top_text > 0 else 0.0
        return w * vector + (1 - w) * text

    return linear


def rank_candidates(
    candidates: Sequence[Candidate],
    filters: Filters,
    limits: Limits,
    config: RetrievalConfig,
    now: datetime,
    span: TimeSpan | None = None,
) -> list[Scored]:
    """The `top_k` most relevant candidates, verified ones first. With `span` (the time a question asks
    about), learnings said in it or about it are favoured (`RetrievalConfig.time_boost`)."""
    statuses = {status for status in filters.statuses if status is not Status.DEPRECATED}
    tags = None if filters.tags is None else set(filters.tags)
    min_similarity = noise_floor("") if config.min_similarity is None else config.min_similarity
    kept_candidates = [
        item
        for item in candidates
        if item.status in statuses
        and (tags is None or not tags.isdisjoint(item.tags))
        and (item.text_rank is not None or (item.vector_similarity or 0.0) >= min_similarity)
    ]
    fuse = _fuser(kept_candidates, config)
    now_ts = now.timestamp()
    half_life, recency_weight, hits_weight = config.half_life_days, config.recency_weight, config.hits_weight
    # Tuples in ranking order (best score, then the more recently updated, the more used, the older id), and
    # `Scored` only for the few kept: this loop runs over the whole candidate pool of every query.
    rows: list[tuple[float, float, int, int, float, float, bool, Candidate]] = []
    min_relevance = limits.min_relevance
    start, end = (span.start.timestamp(), span.end.timestamp()) if span is not None else (0.0, 0.0)
    boost = 1 + config.time_boost
    for item in kept_candidates:
        relevance = fuse(item)
        if relevance < min_relevance:
            continue
        # NaN (no date) compares false: undated learnings are neither favoured nor pushed down.
        timely = span is not None and (
            start <= item.said_at < end or (item.event_at < end and start < item.event_until)
        )
        if timely:
            relevance *= boost
        updated_at = item.updated_at
        recency = _recency(updated_at, now_ts, half_life)
        score = relevance * (1 - recency_weight * (1 - recency))
        score *= 1 + hits_weight * math.log1p(item.hits)
        rows.append((-score, -updated_at, -item.hits, item.id, relevance, recency, timely, item))
    best = heapq.nsmallest(limits.top_k, rows)
    kept = [
        Scored(item, -negated, relevance, recency, timely)
        for negated, _, _, _, relevance, recency, timely, item in best
    ]
    kept.sort(key=lambda r: (-_STATUS_TIER[r.candidate.status], -r.score))
    return kept


def item_line(item: RetrievedItem) -> str:
    """One bullet of the block, the text quoted as data. A learning with a possible conflict is shown with it,
    newer first and dated, so the model sees that something changed rather than two facts that disagree."""
    learning = item.learning
    status, label = learning.status.value, learning.label
    if not item.conflicts:
        return memory_line(status, label, _text(learning))
    newest, *older = sorted([learning, *item.conflicts], key=_said, reverse=True)
    earlier = "; ".join(f"{_said(x):%Y-%m-%d}: {json.dumps(clean_line(_text(x)), ensure_ascii=False)}" for x in older)
    return f"{memory_line(status, label, _text(newest))} (said {_said(newest):%Y-%m-%d}; earlier, {earlier})"


def _said(learning: Learning) -> datetime:
    return learning.said_at or learning.created_at


def _text(learning: Learning) -> str:
    """The text, with the date its relative time expression stands for ("yesterday (7 May 2023)")."""
    return dated(learning.text, learning.event_at, learning.event_until)


def one_line_per_pair(items: Sequence[RetrievedItem]) -> list[RetrievedItem]:
    """`items` without those already shown as another item's possible conflict."""
    shown: set[int] = set()
    unique: list[RetrievedItem] = []
    for item in items:
        if item.learning.id in shown:
            continue
        shown |= {item.learning.id, *(x.id for x in item.conflicts)}
        unique.append(item)
    return unique


def render_memories(items: Sequence[RetrievedItem], limits: Limits) -> tuple[RenderedBlock, list[RetrievedItem]]:
    """The seed 004 block for `items`, and the items that made it into the block. A pair in possible conflict
    is one line, however many of its learnings were retrieved."""
    items = one_line_per_pair(items)
    lines = [item_line(i) for i in items]
    block = render_block(
        [Section(MEMORY_SECTION_TITLE, lines)],
        max_chars=limits.max_chars,
        max_tokens=limits.max_tokens,
        max_items=limits.max_items,
    )
    return block, [items[i] for i in block.kept.get(MEMORY_SECTION_TITLE, [])]
