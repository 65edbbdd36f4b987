"""Fusion of a search's vector and keyword hits into ranking candidates, over the in-memory partitions.

Both searches are filtered before top-k (per-slot codes, see `partition`); their hits are merged by id,
each carrying its vector similarity and rank, its BM25 score and rank, and the share of the query's keyword
weight it holds. What ranking reads of each hit comes from the partitions too, so a backend reads whole rows
only for the candidates a retrieval keeps.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...errors import StoreError
from ...models import Scope, Status
from ...terms import stem
from ..records import Candidate, SearchRequest, Select
from .keywords import TermCodebook
from .partition import Partition, RankingColumns
from .row_codes import Codebook

__all__ = ["Hit", "Hits", "Ranking", "chosen_candidates", "fuse_hits", "partition_keys"]

# A learning's vector similarity and rank, keyword score and rank (None where that search missed it).
# … and the share of the query's keyword weight (IDF) the learning holds (None: the query had no keywords).
Hit = tuple[float | None, int | None, float | None, int | None, float | None]
Hits = dict[int, Hit]
# What ranking reads of a hit, from the in-memory partitions: status, hits, updated_at, tags.
Ranking = dict[int, RankingColumns]


_NO_HIT: Hit = (None, None, None, None, None)


def partition_keys(scope: Scope, include_global: bool) -> list[tuple[str, str]]:
    """(tenant, user_id) partitions a scope searches: its user's, and the tenant's global one."""
    keys = [(scope.tenant, scope.user or "")]
    if include_global and scope.user is not None:
        keys.append((scope.tenant, ""))
    return keys


def fuse_hits(
    partitions: Sequence[Partition],
    request: SearchRequest,
    codebook: Codebook,
    vocabulary: TermCodebook,
    dimension: int,
) -> tuple[Hits, Ranking]:
    """Vector and keyword hits of `partitions` (the scope's, see `partition_keys`), filtered before top-k:
    id → ranks and scores, and what ranking reads of each hit (status, hits, updated_at, tags)."""
    selections = [p.select(request.filters, codebook) for p in partitions]
    vector_hits: list[tuple[int, float]] = []
    if request.vector is not None and request.vector_k > 0:
        query = np.ascontiguousarray(request.vector, dtype=np.float32)
        if query.shape != (dimension,):
            raise StoreError(f"query vector has shape {query.shape}, expected ({dimension},)")
        for partition, selection in zip(partitions, selections, strict=True):
            vector_hits += partition.search(query, request.vector_k, selection)
        vector_hits = sorted(vector_hits, key=lambda pair: -pair[1])[: request.vector_k]
    text_hits: list[tuple[int, float]] = []
    terms = vocabulary.known([stem(t) for t in request.terms])
    if terms and request.text_k > 0:
        for partition, selection in zip(partitions, selections, strict=True):
            text_hits += partition.keyword_search(terms, request.text_k, selection)
        text_hits = sorted(text_hits, key=lambda pair: -pair[1])[: request.text_k]
    found: Hits = {i: (similarity, rank, None, None, None) for rank, (i, similarity) in enumerate(vector_hits, start=1)}
    for rank, (learning_id, score) in enumerate(text_hits, start=1):
        similarity, vector_rank, _, _, _ = found.get(learning_id, _NO_HIT)
        found[learning_id] = (similarity, vector_rank, score, rank, None)
    ranking: Ranking = {}
    pending = list(found)
    query_terms = [stem(t) for t in request.terms]
    for partition in partitions:  # a hit lives in exactly one of the scope's partitions
        mine = [i for i in pending if i in partition.slot_of]
        ranking.update(partition.ranking(mine))
        # Absolute evidence for every hit, whichever search found it: its cosine with the query and the share
        # of the query's keyword weight it holds. Relevance thresholds need both (a BM25 score or a rank
        # moves with the size of the partition; these do not).
        unscored = [i for i in mine if found[i][0] is None]  # keyword hits the vector search did not return
        similarities = partition.similarities(unscored, request.vector) if request.vector is not None else {}
        coverage = partition.coverage(mine, vocabulary.known(query_terms), len(set(query_terms))) if query_terms else {}
        for i in mine:
            known, vector_rank, text_score, text_rank, _ = found[i]
            found[i] = (
                similarities.get(i, known) if known is None else known,
                vector_rank,
                text_score,
                text_rank,
                coverage.get(i),
            )
        pending = [i for i in pending if i not in ranking]
        if not pending:
            break
    return found, ranking


def chosen_candidates(found: Hits, ranking: Ranking, select: Select | None) -> list[Candidate]:
    """The hits as candidates without their rows: all of them, or (with `select`) those it keeps, in its order."""
    pool = [_candidate(learning_id, *columns, found) for learning_id in found if (columns := ranking.get(learning_id))]
    return pool if select is None else list(select(pool))


def _candidate(
    learning_id: int,
    status: Status,
    hits: int,
    updated_at: float,
    tags: list[str],
    said_at: float,
    event_at: float,
    event_until: float,
    found: Hits,
) -> Candidate:
    # Positional, in `Candidate` field order: this runs for every hit of every query.
    candidate = Candidate(learning_id, status, hits, updated_at, tags, *found[learning_id])
    candidate.said_at, candidate.event_at, candidate.event_until = said_at, event_at, event_until
    return candidate
