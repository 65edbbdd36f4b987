"""Hybrid retrieval: vector and keyword candidates fused, then ranked status > relevance > recency > hits.

Candidates come from the store already filtered (scope, namespace, category, type, status; deprecated
never). Fusion is a weighted sum of the cosine similarity (min-max scaled over the candidate pool) and the
BM25 score (scaled by the best one); reciprocal-rank fusion is available as an option. Relevance decides
which `top_k` items are kept; among those, verified learnings are shown before candidates (seed 004's
"prefer verified"), and recency and hits adjust the order within a tier.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from .capture.channel_scope import served_on
from .capture.timing import TimeSpan, dated
from .models import Filters, Learning, Limits, RetrievedItem, Status, constructed
from .prompting import RenderedBlock, Section, clean_line, memory_line, quoted, render_block
from .stores.base import Candidate
from .terms import mentions_any
from .tokens import TokenCounter

__all__ = [
    "MEMORY_SECTION_TITLE",
    "RetrievalConfig",
    "Scored",
    "item_line",
    "name_floor",
    "noise_floor",
    "one_line_per_pair",
    "rank_candidates",
    "render_memories",
    "scored_in_order",
    "unnamed_dropped",
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
    # Abstention: a candidate is relevant when its cosine with the query reaches `min_similarity` or it holds
    # `min_coverage` of the query's keyword weight (IDF); below both, it is not shown, and a query nothing fits
    # gets an empty block. None: the embedding model's calibration (`noise_floor`), set when the engine is built.
    min_similarity: float | None = None
    min_coverage: float = 0.3
    # Only what helps counts: a returned learning records a hit and extends its streak (and so can be promoted
    # by evidence) only at this stricter similarity or keyword share; None: the model's (`used_floor`).
    used_similarity: float | None = None
    used_coverage: float = 0.5
    # Seed 004's order among relevant learnings: status, then relevance, then recency, then hits, later keys
    # breaking ties within relevance bands `score_band` wide. "blend" is the earlier weighted mix.
    order: Literal["seed004", "blend"] = "seed004"
    score_band: float = 0.02
    half_life_days: float = 90.0
    recency_weight: float = 0.15
    hits_weight: float = 0.05
    # A question with a time expression ("what did I do last May", "on 3 June, 2023") favours learnings said in
    # that span or about it: their relevance is multiplied by 1 + time_boost. On LoCoMo dev through save() the
    # 82 questions with one go from recall@10 0.585 (neither) to 0.811 (2.0, with `timely_floor`); all
    # questions 0.662 → 0.681 (the store path without dates: 0.660).
    time_boost: float = 2.0
    # Said in the asked span or about it is evidence of relevance too: such a learning needs only this share of the
    # abstention floors (without it, abstention cut the 82 time questions' recall@10 from 0.823 to 0.663).
    timely_floor: float = 0.5
    # A question naming something memory never mentions ("When did Caroline …?" asked of a user whose learnings
    # never name a Caroline): unless one of the learnings kept names it, only those at this cosine are shown.
    # None: the model's calibration (`name_floor`). On LoCoMo dev questions asked of another conversation's user
    # (MiniLM, 0.5) false inclusion fell from 0.406 to 0.040 with recall@10 of the right user 0.665 -> 0.664.
    name_similarity: float | None = None


# Abstention and "used" cosines per embedding model, measured on LoCoMo dev and the no-answer set
# (bench/relevance.py). MiniLM: 0.38 (with a keyword share of 0.3) keeps LoCoMo dev recall@10 at 0.662 (0.671
# without abstention) and shows nothing for 74% of the no-answer set's questions and 59% of LoCoMo questions
# asked of another conversation's user. The static profile separates less: 0.86 keeps recall@10 at 0.661 but
# shows nothing for only 52% of the no-answer questions. "Used" sits where answerable questions' evidence
# mostly is (MiniLM: the README's boil-off example is at 0.44; 18% of no-answer questions have noise above 0.42).
# The third value is `name_floor`. The static profile at 0.95: LoCoMo dev questions asked of another
# conversation's user show something 9.6% of the time, recall@10 of the right user 0.661.
_FLOORS = {"local:minilm-static": (0.86, 0.9, 0.95)}
_MINILM_FLOORS = (0.38, 0.42, 0.5)


def noise_floor(model_id: str) -> float:
    """The cosine below which a match is not relevant for this embedding model (see `RetrievalConfig`)."""
    return _floors(model_id)[0]


def used_floor(model_id: str) -> float:
    """The cosine at which a shown learning counts as used (hits, streaks) for this embedding model."""
    return _floors(model_id)[1]


def name_floor(model_id: str) -> float:
    """The cosine a learning needs when the question names something no kept learning mentions."""
    return _floors(model_id)[2]


def unnamed_dropped(items: list[RetrievedItem], names: frozenset[str], floor: float) -> list[RetrievedItem]:
    """`items` without those below `floor` when the question names something (`terms.query_names`) none of them
    mentions: memory that never speaks of Caroline cannot say when Caroline went anywhere."""
    if not names or not items or any(mentions_any(i.learning.text, names) for i in items):
        return items
    return [i for i in items if (i.vector_similarity or 0.0) >= floor]


def _floors(model_id: str) -> tuple[float, float, float]:
    for prefix, floors in _FLOORS.items():
        if model_id.startswith(prefix):
            return floors
    return _MINILM_FLOORS


@dataclass(frozen=True)
class Scored:
    candidate: Candidate
    score: float
    relevance: float
    recency: float
    timely: bool = False
    used: bool = False  # relevant enough to count: a hit, a streak, positive feedback

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
        # Every field given, each already of its type (the candidate's numbers are Python floats and ints): built
        # without pydantic's validation, which cost more than the rest of this per shown item.
        values = {
            "learning": learning,
            "conflicts": list(self.candidate.conflicts),
            "score": round(self.score, 6),
            "relevance": round(self.relevance, 6),
            "vector_similarity": _float_or_none(self.candidate.vector_similarity),
            "text_rank": _int_or_none(self.candidate.text_rank),
            "vector_rank": _int_or_none(self.candidate.vector_rank),
            "recency": round(self.recency, 4),
            "why": self.why,
            "used": bool(self.used),
        }
        return constructed(RetrievedItem, values)


def _float_or_none(value: float | None) -> float | None:
    return None if value is None else float(value)


def _int_or_none(value: int | None) -> int | None:
    return None if value is None else int(value)


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
    channel = filters.channel
    min_similarity = noise_floor("") if config.min_similarity is None else config.min_similarity
    min_coverage = config.min_coverage
    start, end = (span.start.timestamp(), span.end.timestamp()) if span is not None else (0.0, 0.0)

    # Having been said in the span is evidence only for a span that is over ("last week"): in one still running
    # ("this week", "today") everything said lately is, and it would let all of it past abstention.
    said_counts = end <= now.timestamp()

    def in_span(item: Candidate) -> bool:
        # NaN (no date) compares false: undated learnings are neither favoured nor pushed down.
        return span is not None and (
            (said_counts and start <= item.said_at < end) or (item.event_at < end and start < item.event_until)
        )

    def relevant(item: Candidate, share: float) -> bool:
        similarity, coverage = item.vector_similarity or 0.0, item.text_coverage or 0.0
        return similarity >= min_similarity * share or coverage >= min_coverage * share

    kept_candidates = [
        item
        for item in candidates
        if item.status in statuses
        and (tags is None or not tags.isdisjoint(item.tags))
        and (channel is None or served_on(item.tags, channel))
        and (relevant(item, 1.0) or (in_span(item) and relevant(item, config.timely_floor)))
    ]
    fuse = _fuser(kept_candidates, config)
    now_ts = now.timestamp()
    min_relevance = limits.min_relevance
    boost = 1 + config.time_boost
    # (relevance, timely, candidate) of every relevant candidate: this loop runs over the whole pool of every
    # query, so what only the few kept need (recency, score, `Scored`) waits until they are chosen.
    pool: list[tuple[float, bool, Candidate]] = []
    for item in kept_candidates:
        relevance = fuse(item)
        if relevance < min_relevance:
            continue
        timely = in_span(item)
        pool.append((relevance * boost if timely else relevance, timely, item))
    if config.order == "seed004":
        # Status first, then relevance in bands, then recency, then hits (seed 004): a verified learning that
        # is relevant at all comes before candidates, and within a band the newer, then the more used, leads.
        band = config.score_band

        def key(entry: tuple[float, bool, Candidate]) -> tuple[int, int, float, int, int]:
            relevance, _, item = entry
            tier = -_STATUS_TIER[item.status]
            return (tier, -math.floor(relevance / band + 1e-9), -item.updated_at, -item.hits, item.id)

        return scored_in_order(heapq.nsmallest(limits.top_k, pool, key=key), config, now)
    # Tuples in ranking order: best score, then the more recently updated, the more used, the older id.
    rows = [
        (-score, -item.updated_at, -item.hits, item.id, relevance, recency, timely, item)
        for relevance, timely, item in pool
        for score, recency in (_score_of(relevance, item, config, now_ts),)
    ]
    best = heapq.nsmallest(limits.top_k, rows)
    kept = [
        _scored(relevance, timely, item, -negated, recency, config)
        for negated, _, _, _, relevance, recency, timely, item in best
    ]
    kept.sort(key=lambda r: (-_STATUS_TIER[r.candidate.status], -r.score))
    return kept


def scored_in_order(
    chosen: Sequence[tuple[float, bool, Candidate]], config: RetrievalConfig, now: datetime
) -> list[Scored]:
    """`Scored` of (relevance, timely, candidate) entries already in seed 004's order."""
    now_ts = now.timestamp()
    return [
        _scored(relevance, timely, item, *_score_of(relevance, item, config, now_ts), config)
        for relevance, timely, item in chosen
    ]


def _score_of(relevance: float, item: Candidate, config: RetrievalConfig, now_ts: float) -> tuple[float, float]:
    recency = _recency(item.updated_at, now_ts, config.half_life_days)
    score = relevance * (1 - config.recency_weight * (1 - recency))
    return score * (1 + config.hits_weight * math.log1p(item.hits)), recency


def _scored(
    relevance: float, timely: bool, item: Candidate, score: float, recency: float, config: RetrievalConfig
) -> Scored:
    used_similarity = used_floor("") if config.used_similarity is None else config.used_similarity
    used = (item.vector_similarity or 0.0) >= used_similarity or (item.text_coverage or 0.0) >= config.used_coverage
    # The frozen dataclass's fields set through its __dict__: its __init__ sets them one `object.__setattr__` at a
    # time, three times slower, for every item of every retrieval.
    scored = object.__new__(Scored)
    scored.__dict__.update(candidate=item, score=score, relevance=relevance, recency=recency, timely=timely, used=used)
    return scored


def item_line(item: RetrievedItem) -> str:
    """One bullet of the block, the text quoted as data. A learning with a possible conflict is shown with it,
    newer first and dated, so the model sees that something changed rather than two facts that disagree."""
    learning = item.learning
    status, label = learning.status.value, learning.label
    if not item.conflicts:
        return _plain_line(status, label, learning.text, learning.event_at, learning.event_until)
    newest, *older = sorted([learning, *item.conflicts], key=_said, reverse=True)
    earlier = "; ".join(f"{_said(x):%Y-%m-%d}: {quoted(clean_line(_text(x)))}" for x in older)
    return f"{memory_line(status, label, _text(newest))} (said {_said(newest):%Y-%m-%d}; earlier, {earlier})"


@functools.lru_cache(maxsize=4096)
def _plain_line(status: str, label: str, text: str, event_at: datetime | None, event_until: datetime | None) -> str:
    """The line of a learning without conflicts. Kept: the same learnings answer question after question, and
    dating, flattening and quoting a text cost more than the rest of its item."""
    return memory_line(status, label, dated(text, event_at, event_until))


def _said(learning: Learning) -> datetime:
    return learning.said_at or learning.created_at


def _text(learning: Learning) -> str:
    """The text, with the date its relative time expression stands for ("yesterday (7 May 2023)")."""
    return dated(learning.text, learning.event_at, learning.event_until)


def one_line_per_pair(items: Sequence[RetrievedItem]) -> list[RetrievedItem]:
    """`items` without those already shown as another item's possible conflict."""
    if not any(item.conflicts for item in items):  # the usual case: only a repeated id would go
        ids = {item.learning.id for item in items}
        if len(ids) == len(items):
            return list(items)
    shown: set[int] = set()
    unique: list[RetrievedItem] = []
    for item in items:
        if item.learning.id in shown:
            continue
        shown |= {item.learning.id, *(x.id for x in item.conflicts)}
        unique.append(item)
    return unique


def render_memories(
    items: Sequence[RetrievedItem], limits: Limits, counter: TokenCounter | None = None
) -> tuple[RenderedBlock, list[RetrievedItem]]:
    """The seed 004 block for `items`, and the items that made it into the block. A pair in possible conflict
    is one line, however many of its learnings were retrieved."""
    items = one_line_per_pair(items)
    lines = [item_line(i) for i in items]
    block = render_block(
        [Section(MEMORY_SECTION_TITLE, lines)],
        max_chars=limits.max_chars,
        max_tokens=limits.max_tokens,
        max_items=limits.max_items,
        counter=counter,
    )
    return block, [items[i] for i in block.kept.get(MEMORY_SECTION_TITLE, [])]
