"""Ranking: the fast path must order and score exactly as the plain definition does."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime

import pytest

from learnloop.models import Filters, Limits, Status
from learnloop.retrieval import RetrievalConfig, rank_candidates
from learnloop.stores.base import Candidate

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
        and (c.text_rank is not None or (c.vector_similarity or 0.0) >= config.min_similarity)
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
            )
        )
    return out


@pytest.mark.parametrize("fusion", ["linear", "rrf"])
@pytest.mark.parametrize("seed", range(20))
def test_ranking_matches_the_definition(fusion: str, seed: int) -> None:
    rng = random.Random(seed)
    candidates = pool(rng, rng.choice([0, 1, 5, 74]))
    config = RetrievalConfig(fusion=fusion, min_similarity=0.2)  # type: ignore[arg-type]
    filters = Filters(
        statuses=rng.choice([[Status.VERIFIED, Status.CANDIDATE], [Status.VERIFIED]]),
        tags=rng.choice([None, ["kit"]]),
    )
    limits = Limits(top_k=rng.choice([1, 6, 10]), min_relevance=rng.choice([0.0, 0.3]))
    got = rank_candidates(candidates, filters, limits, config, NOW)
    assert [(r.candidate.id, r.score, r.relevance, r.recency) for r in got] == reference(
        candidates, filters, limits, config
    )
