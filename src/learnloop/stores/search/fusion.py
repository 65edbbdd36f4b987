"""Fusion of a search's vector and keyword hits into ranking candidates, over the in-memory partitions.

Both searches are filtered before top-k (per-slot codes, see `partition`); their hits are merged by id,
each carrying its vector similarity and rank, its BM25 score and rank, and the share of the query's keyword
weight it holds. What ranking reads of each hit comes from the partitions too, so a backend reads whole rows
only for the candidates a retrieval keeps. Everything is columns (`CandidatePool`): a pool of a hundred hits
builds no object per hit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ...errors import StoreError
from ...models import Scope
from ...terms import stem
from ..candidate_pool import CandidatePool
from ..records import Candidate, SearchRequest, Select
from .keywords import TermCodebook
from .partition import Partition, Scores, Slots
from .row_codes import STATUS_CODES, Codebook

__all__ = ["chosen_candidates", "fuse_hits", "partition_keys"]

_STATUSES = {code: status for status, code in STATUS_CODES.items()}
_NO_SLOTS: Slots = np.zeros(0, dtype=np.int64)
_NO_SCORES: Scores = np.zeros(0, dtype=np.float32)
# Per partition column, where ranking reads it (the pool's field of the same name).
_RANKING_COLUMNS = ("status", "hits", "updated_at", "said_at", "event_at", "event_until", "tags")


def partition_keys(scope: Scope, include_global: bool) -> list[tuple[str, str]]:
    """(tenant, user_id) partitions a scope searches: its user's, and the tenant's global one."""
    keys = [(scope.tenant, scope.user or "")]
    if include_global and scope.user is not None:
        keys.append((scope.tenant, ""))
    return keys


def _merged(found: list[tuple[int, Slots, Scores]], k: int) -> tuple[Slots, Slots, Scores]:
    """(partition, slot, score) of the best `k` of every partition's hits, best first (ties: earlier partition
    first, then the partition's own order)."""
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    if len(found) == 1:
        which, slots, scores = found[0]
        return np.full(len(slots), which, dtype=np.int64), slots, scores
    parts = np.concatenate([np.full(len(slots), which, dtype=np.int64) for which, slots, _ in found])
    slots = np.concatenate([slots for _, slots, _ in found])
    scores = np.concatenate([scores for _, _, scores in found])
    order = np.argsort(-scores, kind="stable")[:k]
    return parts[order], slots[order], scores[order]


def fuse_hits(
    partitions: Sequence[Partition],
    request: SearchRequest,
    codebook: Codebook,
    vocabulary: TermCodebook,
    dimension: int,
) -> CandidatePool:
    """Vector and keyword hits of `partitions` (the scope's, see `partition_keys`), filtered before top-k, with
    their ranks and scores and what ranking reads of each (status, hits, updated_at, tags, dates): vector hits
    in rank order, then keyword hits the vector search missed, in theirs."""
    # An empty partition (the tenant's global one, usually) has no hits: no filter mask, no search.
    searched = [(which, p, p.select(request.filters, codebook)) for which, p in enumerate(partitions) if p.n]
    vector_found: list[tuple[int, Slots, Scores]] = []
    query: npt.NDArray[np.float32] | None = None
    if request.vector is not None:
        query = np.ascontiguousarray(request.vector, dtype=np.float32)
        if request.vector_k > 0:
            if query.shape != (dimension,):
                raise StoreError(f"query vector has shape {query.shape}, expected ({dimension},)")
            for which, partition, selection in searched:
                slots, similarities = partition.search_slots(query, request.vector_k, selection)
                if len(slots):
                    vector_found.append((which, slots, similarities))
    text_found: list[tuple[int, Slots, Scores]] = []
    query_terms = [stem(t) for t in request.terms]
    terms = vocabulary.known(query_terms)
    if terms and request.text_k > 0:
        for which, partition, selection in searched:
            slots, scores = partition.keyword_slots(terms, request.text_k, selection)
            if len(slots):
                text_found.append((which, slots, scores))
    holding = sorted({which for which, _, _ in vector_found} | {which for which, _, _ in text_found})
    if len(holding) == 1:
        return _one_partition(partitions[holding[0]], vector_found, text_found, query, query_terms, terms)
    v_part, v_slot, v_sim = _merged(vector_found, request.vector_k)
    t_part, t_slot, t_score = _merged(text_found, request.text_k)
    # A hit is (partition, slot); keyword hits the vector search also found join its row.
    joined = _joined(v_part, v_slot, t_part, t_slot)
    text_only = joined < 0
    vectors, extra = len(v_slot), int(np.count_nonzero(text_only))
    size = vectors + extra
    parts = np.concatenate((v_part, t_part[text_only])) if extra else v_part
    slots = np.concatenate((v_slot, t_slot[text_only])) if extra else v_slot
    similarity = np.full(size, np.nan)
    similarity[:vectors] = v_sim
    vector_rank = np.zeros(size, dtype=np.int64)
    vector_rank[:vectors] = np.arange(1, vectors + 1)
    joined[text_only] = np.arange(vectors, size)
    text_score = np.full(size, np.nan)
    text_score[joined] = t_score
    text_rank = np.zeros(size, dtype=np.int64)
    text_rank[joined] = np.arange(1, len(t_slot) + 1)
    coverage = np.full(size, np.nan)
    columns: dict[str, npt.NDArray[Any]] = {}
    for which in holding:  # none (no hits), or several: each partition's hits are written where they stand
        partition = partitions[which]
        mine = np.flatnonzero(parts == which)
        own = slots[mine]
        for name in _RANKING_COLUMNS:
            values = getattr(partition, name)[own]
            if name not in columns:
                columns[name] = np.empty(size, dtype=values.dtype)
            columns[name][mine] = values
        # Absolute evidence for every hit, whichever search found it: its cosine with the query and the share
        # of the query's keyword weight it holds. Relevance thresholds need both (a BM25 score or a rank
        # moves with the size of the partition; these do not).
        unscored = mine[mine >= vectors]  # keyword hits the vector search did not return
        if query is not None and len(unscored):
            similarity[unscored] = partition.vector_rows(slots[unscored]) @ query
        if query_terms:
            shares = partition.coverage(own, terms, len(set(query_terms)))
            if shares is not None:
                coverage[mine] = shares

    def column(name: str) -> npt.NDArray[Any]:
        found = columns.get(name)
        return np.empty(0, dtype=object if name == "tags" else np.float64) if found is None else found

    return CandidatePool(
        ids=_ids(partitions, parts, slots),
        similarity=similarity,
        vector_rank=vector_rank,
        text_score=text_score,
        text_rank=text_rank,
        coverage=coverage,
        status=column("status"),
        statuses=_STATUSES,
        hits=column("hits"),
        updated_at=column("updated_at"),
        said_at=column("said_at"),
        event_at=column("event_at"),
        event_until=column("event_until"),
        tags=column("tags"),
    )


def _one_partition(
    partition: Partition,
    vector_found: list[tuple[int, Slots, Scores]],
    text_found: list[tuple[int, Slots, Scores]],
    query: npt.NDArray[np.float32] | None,
    query_terms: list[str],
    terms: list[int],
) -> CandidatePool:
    """`fuse_hits` when one partition holds every hit (the user's; the tenant's global one is usually small or
    empty): the same columns, joined by slot alone, each read with one gather and no per-partition masks."""
    v_slot, v_sim = (vector_found[0][1], vector_found[0][2]) if vector_found else (_NO_SLOTS, _NO_SCORES)
    t_slot, t_score = (text_found[0][1], text_found[0][2]) if text_found else (_NO_SLOTS, _NO_SCORES)
    vectors, texts = len(v_slot), len(t_slot)
    if vectors and texts:
        joined = _positions(v_slot, t_slot)
    else:
        joined = _filled(texts, -1, np.int64)
    text_only = joined < 0
    extra_slots = t_slot[text_only]
    size = vectors + len(extra_slots)
    slots = np.concatenate((v_slot, extra_slots)) if len(extra_slots) else v_slot
    joined[text_only] = np.arange(vectors, size)
    similarity = np.empty(size)
    similarity[:vectors] = v_sim
    # Keyword hits the vector search did not return: their cosine with the query, exactly.
    if query is not None and len(extra_slots):
        similarity[vectors:] = partition.vector_rows(extra_slots) @ query
    else:
        similarity[vectors:] = np.nan
    vector_rank = np.arange(1, size + 1)
    vector_rank[vectors:] = 0
    text_score = _filled(size, np.nan, np.float64)
    text_score[joined] = t_score
    text_rank = np.zeros(size, dtype=np.int64)
    text_rank[joined] = np.arange(1, texts + 1)
    shares = partition.coverage(slots, terms, len(set(query_terms))) if query_terms else None
    return CandidatePool(
        ids=partition.ids[slots],
        similarity=similarity,
        vector_rank=vector_rank,
        text_score=text_score,
        text_rank=text_rank,
        coverage=_filled(size, np.nan, np.float64) if shares is None else shares,
        status=partition.status[slots],
        statuses=_STATUSES,
        hits=partition.hits[slots],
        updated_at=partition.updated_at[slots],
        said_at=partition.said_at[slots],
        event_at=partition.event_at[slots],
        event_until=partition.event_until[slots],
        tags=partition.tags[slots],
    )


def _filled(size: int, value: float, dtype: type[np.generic]) -> npt.NDArray[Any]:
    """`np.full(size, value, dtype)` without its Python wrapper (half its cost at a pool's size)."""
    array = np.empty(size, dtype=dtype)
    array.fill(value)
    return array


def _positions(haystack: Slots, needles: Slots) -> Slots:
    """For each needle, the index of its first occurrence in `haystack`, or -1: a stable sort and a binary search,
    five array calls whatever the pool's size (a dict of the haystack took twice as long at a pool's fifty)."""
    order = haystack.argsort(kind="stable")  # equal slots keep their order: the first occurrence is found first
    ordered = haystack[order]
    at = ordered.searchsorted(needles)
    at[at == len(ordered)] = 0  # past the last slot: compared with the first below, which cannot match
    return np.where(ordered[at] == needles, order[at], -1)


def _joined(v_part: Slots, v_slot: Slots, t_part: Slots, t_slot: Slots) -> Slots:
    """For each keyword hit, the index of the same (partition, slot) among the vector hits, or -1 (keys:
    partition · 2⁴⁰ + slot)."""
    if not len(t_slot) or not len(v_slot):
        return np.full(len(t_slot), -1, dtype=np.int64)
    return _positions((v_part << 40) | v_slot, (t_part << 40) | t_slot)  # slots stay below 2**40


def _ids(partitions: Sequence[Partition], parts: Slots, slots: Slots) -> npt.NDArray[np.int64]:
    ids = np.zeros(len(slots), dtype=np.int64)
    for which, partition in enumerate(partitions):
        mine = parts == which
        ids[mine] = partition.ids[slots[mine]]
    return ids


def chosen_candidates(pool: CandidatePool, select: Select | None) -> list[Candidate]:
    """The hits as candidates without their rows: all of them, or (with `select`) those it keeps, in its order."""
    return list(pool) if select is None else list(select(pool))
