"""Ranking: the fast path must order and score exactly as the plain definition does, in both orders (seed 004's
and the blend), and seed 004's order holds in its own scenarios."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime

import pytest

from learnloop.capture.timing import TimeSpan
from learnloop.models import Filters, Learning, Limits, RetrievedItem, Status
from learnloop.pool_ranking import rank_pool
from learnloop.retrieval import RetrievalConfig, Scored, rank_candidates
from learnloop.stores.base import Candidate
from learnloop.stores.candidate_pool import CandidatePool

NOW = datetime(2026, 6, 1, tzinfo=UTC)
_TIER = {Status.VERIFIED: 2, Status.CANDIDATE: 1, Status.DEPRECATED: 0}


def reference(
    candidates: list[Candidate], filters: Filters, limits: Limits, config: RetrievalConfig
) -> list[tuple[int, float, float, float]]:
    """The ranking as specified, written for clarity: (id, score, relevance, recency) of what is kept."""
    kept = [
        c
        for c in candidates
        if c.status is not Status.DEPRECATED
        and c.status in filters.statuses
        and (filters.tags is None or set(filters.tags) & set(c.tags))
        and ((c.vector_similarity or 0.0) >= config.min_similarity or (c.text_coverage or 0.0) >= config.min_coverage)
    ]
    sims = [c.vector_similarity for c in kept if c.vector_similarity is not None]
    low, high = (min(sims), max(sims)) if sims else (0.0, 1.0)
    top_text = max((c.text_score for c in kept if c.text_score is not None), default=0.0)
    rows = []
    for c in kept:
        if config.fusion == "rrf":
            fused = 0.0
            if c.vector_rank is not None:
                fused += config.vector_weight / (config.rrf_k + c.vector_rank)
            if c.text_rank is not None:
                fused += (1 - config.vector_weight) / (config.rrf_k + c.text_rank)
            relevance = fused / (1.0 / (config.rrf_k + 1))
        else:
            vector = 0.0
            if c.vector_similarity is not None:
                vector = (c.vector_similarity - low) / (high - low) if high - low > 1e-6 else 1.0
            text = c.text_score / top_text if c.text_score is not None and top_text > 0 else 0.0
            relevance = config.vector_weight * vector + (1 - config.vector_weight) * text
        if relevance < limits.min_relevance:
            continue
        age_days = max(0.0, (NOW.timestamp() - c.updated_at) / 86_400)
        recency = float(0.5 ** (age_days / config.half_life_days))
        score = relevance * (1 - config.recency_weight * (1 - recency))
        score *= 1 + config.hits_weight * math.log1p(c.hits)
        rows.append((score, relevance, recency, c))
    if config.order == "seed004":
        band = config.score_band
        rows.sort(
            key=lambda r: (-_TIER[r[3].status], -math.floor(r[1] / band + 1e-9), -r[3].updated_at, -r[3].hits, r[3].id)
        )
        best = rows[: limits.top_k]
    else:
        rows.sort(key=lambda r: (-r[0], -r[3].updated_at, -r[3].hits, r[3].id))
        best = rows[: limits.top_k]
        best.sort(key=lambda r: (-_TIER[r[3].status], -r[0]))
    return [(c.id, score, relevance, recency) for score, relevance, recency, c in best]


def pool(rng: random.Random, size: int) -> list[Candidate]:
    out = []
    for i in range(size):
        vector = rng.random() < 0.7
        text = not vector or rng.random() < 0.4
        out.append(
            Candidate(
                id=i + 1,
                status=rng.choice([Status.VERIFIED, Status.CANDIDATE, Status.CANDIDATE]),
                hits=rng.choice([0, 0, 1, 3, 40]),
                # Ties on purpose: the tie-breaks (recency, hits, id) must hold too.
                updated_at=NOW.timestamp() - rng.choice([0, 0, 86_400, 30 * 86_400, 400 * 86_400, -3600]),
                tags=rng.choice([[], ["brew"], ["brew", "kit"]]),
                vector_similarity=round(rng.uniform(0.0, 0.9), 2) if vector else None,
                vector_rank=i + 1 if vector else None,
                text_score=round(rng.uniform(0.5, 9.0), 1) if text else None,
                text_rank=i + 1 if text else None,
                text_coverage=round(rng.uniform(0.0, 1.0), 2) if text else None,
            )
        )
    return out


@pytest.mark.parametrize("order", ["seed004", "blend"])
@pytest.mark.parametrize("fusion", ["linear", "rrf"])
@pytest.mark.parametrize("seed", range(20))
def test_ranking_matches_the_definition(order: str, fusion: str, seed: int) -> None:
    rng = random.Random(seed)
    candidates = pool(rng, rng.choice([0, 1, 5, 74]))
    config = RetrievalConfig(fusion=fusion, min_similarity=0.2, order=order)  # type: ignore[arg-type]
    filters = Filters(
        statuses=rng.choice([[Status.VERIFIED, Status.CANDIDATE], [Status.VERIFIED]]),
        tags=rng.choice([None, ["kit"]]),
    )
    limits = Limits(top_k=rng.choice([1, 6, 10]), min_relevance=rng.choice([0.0, 0.3]))
    got = rank_candidates(candidates, filters, limits, config, NOW)
    assert [(r.candidate.id, r.score, r.relevance, r.recency) for r in got] == reference(
        candidates, filters, limits, config
    )
    assert _facts(rank_pool(CandidatePool.of(candidates), filters, limits, config, NOW)) == _facts(got)


def _facts(ranked: list[Scored]) -> list[tuple[object, ...]]:
    return [(r.candidate.id, r.score, r.relevance, r.recency, r.timely, r.used, r.why) for r in ranked]


@pytest.mark.parametrize("fusion", ["linear", "rrf"])
@pytest.mark.parametrize("seed", range(30))
def test_ranking_on_columns_is_the_ranking_on_objects(fusion: str, seed: int) -> None:
    """The pool's columns (what a search hands over) rank exactly as its candidates do, dates and time spans
    included: the same ids in the same order, the same floats to the last bit."""
    rng = random.Random(seed)
    candidates = pool(rng, rng.choice([0, 1, 5, 74, 120]))
    nan = float("nan")
    for c in candidates:
        c.said_at = rng.choice([nan, NOW.timestamp() - rng.choice([1, 40, 400]) * 86_400])
        c.event_at = rng.choice([nan, NOW.timestamp() - rng.choice([2, 35, 300]) * 86_400])
        c.event_until = c.event_at + 86_400
    span = rng.choice(
        [
            None,
            TimeSpan(datetime(2026, 4, 1, tzinfo=UTC), datetime(2026, 5, 1, tzinfo=UTC), "month", "in April"),
            TimeSpan(datetime(2026, 5, 25, tzinfo=UTC), datetime(2026, 6, 8, tzinfo=UTC), "week", "this week"),
        ]
    )
    # A vector weight past 1 makes some fused relevances negative: the floor of 0 then drops them.
    config = RetrievalConfig(
        fusion=fusion,  # type: ignore[arg-type]
        min_similarity=rng.choice([0.2, 0.5]),
        vector_weight=rng.choice([0.3, 0.3, 1.5]),
    )
    filters = Filters(
        statuses=rng.choice([[Status.VERIFIED, Status.CANDIDATE], [Status.VERIFIED], [Status.CANDIDATE]]),
        tags=rng.choice([None, ["kit"], ["brew"]]),
    )
    limits = Limits(top_k=rng.choice([1, 6, 10, 30]), min_relevance=rng.choice([0.0, 0.3]))
    expected = rank_candidates(candidates, filters, limits, config, NOW, span)
    assert _facts(rank_pool(CandidatePool.of(candidates), filters, limits, config, NOW, span)) == _facts(expected)


def _candidate(
    id_: int, similarity: float, *, status: Status = Status.CANDIDATE, age_days: float = 0, hits: int = 0
) -> Candidate:
    return Candidate(
        id=id_,
        status=status,
        hits=hits,
        updated_at=NOW.timestamp() - age_days * 86_400,
        tags=[],
        vector_similarity=similarity,
        vector_rank=id_,
    )


def _order(candidates: list[Candidate], top_k: int = 6) -> list[int]:
    config = RetrievalConfig(min_similarity=0.3, vector_weight=1.0)
    got = rank_candidates(candidates, Filters(), Limits(top_k=top_k), config, NOW)
    return [r.candidate.id for r in got]


def test_a_relevant_verified_learning_comes_first_however_many_candidates_score_higher() -> None:
    candidates = [_candidate(i, 0.83 + i / 100) for i in range(1, 8)]
    verified = _candidate(99, 0.5, status=Status.VERIFIED)
    assert _order([*candidates, verified])[0] == 99


def test_relevance_comes_before_recency_and_hits() -> None:
    # Cosines span 0.3 (the pool's lowest) to 0.9 so that the scaled relevance of 0.80 and 0.78 differ by more
    # than a band.
    floor, top = _candidate(1, 0.3), _candidate(2, 0.9)
    old, new = _candidate(10, 0.80, age_days=365), _candidate(11, 0.78, age_days=0)
    ranked = _order([floor, top, old, new], top_k=4)
    assert ranked.index(10) < ranked.index(11)
    unused, used = _candidate(20, 0.80), _candidate(21, 0.78, hits=50)
    ranked = _order([floor, top, unused, used], top_k=4)
    assert ranked.index(20) < ranked.index(21)


def test_within_a_band_recency_then_hits_break_the_tie() -> None:
    floor, top = _candidate(1, 0.3), _candidate(2, 0.9)
    older, newer = _candidate(10, 0.800, age_days=30), _candidate(11, 0.801, age_days=0)
    ranked = _order([floor, top, older, newer], top_k=4)
    assert ranked.index(11) < ranked.index(10)


@pytest.mark.parametrize("similarity", [0.83, None])
def test_an_item_built_without_validation_is_the_validated_one(similarity: float | None) -> None:
    learning = Learning(
        id=7, tenant="t", user="alice", text="boil-off 3.5 L/h", simhash64="0" * 16, created_at=NOW, updated_at=NOW
    )
    candidate = _candidate(7, 0.5, hits=2)
    candidate.vector_similarity, candidate.text_rank = similarity, 3
    candidate.conflicts = (learning.model_copy(update={"id": 8}),)
    scored = Scored(candidate, 0.412345678, 0.51234567, 0.98765, timely=True, used=False)
    item = scored.item(learning)
    validated = RetrievedItem(**{name: getattr(item, name) for name in RetrievedItem.model_fields})
    assert item == validated
    assert item.model_dump_json() == validated.model_dump_json()
    assert item.model_fields_set == validated.model_fields_set
