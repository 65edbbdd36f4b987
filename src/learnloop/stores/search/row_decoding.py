"""A backend's learning rows (`PARTITION_FIELDS`) decoded into what a partition holds: filter codes, ranking
columns, vectors and keyword terms.

A cold user's first search loads their partition from the rows, so this is on its path for every row they
have. A whole load decodes column by column (`decode_rows`) into the same arrays a snapshot restores, the
keyword terms of every row counted in one numpy pass over their term ids; a row the change log replays is
decoded alone (`row_codes`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from .embeddings import HALF_TAG, embedding_halves, embedding_vectors
from .keywords import TermCodebook
from .row_codes import STATUS_CODES, Codebook, RowCodes
from .snapshot import PartitionArrays
from .stored_terms import document_terms, parse_terms

__all__ = [
    "EMBEDDING",
    "PARTITION_FIELDS",
    "aligned",
    "alignment",
    "decode_rows",
    "joined_halves",
    "row_codes",
    "vectors_for",
]

# What a backend hands over of each learning, in this order: the learnings' own columns, the embedding as
# stored (`embeddings`: tagged int8, or an older row's tagged float16 or float32 bytes), tags as a JSON list
# (text, or already decoded), the stored keyword terms (`stored_terms`; None: tokenise the text and topic, which
# are needed only then).
# Positional, since a load reads every row.
PARTITION_FIELDS = (
    "id",
    "status",
    "category",
    "namespace",
    "type",
    "simhash64",
    "embedding",
    "text",
    "topic",
    "tags",
    "hits",
    "updated_at",
    "said_at",
    "event_at",
    "event_until",
    "index_terms",
)
EMBEDDING = PARTITION_FIELDS.index("embedding")
_STORED_TERMS = PARTITION_FIELDS.index("index_terms")
_NONE = float("nan")
# Status text → code: the rows carry the text, and a StrEnum hashes as its value.
_STATUS = {str(status): code for status, code in STATUS_CODES.items()}


def decode_rows(
    rows: Sequence[Sequence[Any]], dimension: int, codebook: Codebook, vocabulary: TermCodebook, watermark: int
) -> PartitionArrays:
    """Every row, in order, as the arrays of a partition's live rows (row i in slot i)."""
    n = len(rows)
    ids, statuses, categories, namespaces, types, sims, embeddings = list(zip(*rows, strict=True))[:7]
    tags = [_tags(row[9]) for row in rows]
    columns: dict[str, npt.NDArray[Any]] = {
        "ids": np.array(ids, dtype=np.int64),
        "vectors": embedding_vectors(embeddings, dimension),
        "status": np.array([_STATUS[s] for s in statuses], dtype=np.int8),
        "category": _coded(codebook, categories),
        "namespace": _coded(codebook, namespaces),
        "type": _coded(codebook, types),
        "simhash": np.array([int(s, 16) for s in sims], dtype=np.uint64),
        "hits": np.array([row[10] for row in rows], dtype=np.int64),
        "updated_at": np.array([row[11] for row in rows], dtype=np.float64),
        # None → NaN (no date), as `row_codes` gives it.
        "said_at": np.array([row[12] for row in rows], dtype=np.float64),
        "event_at": np.array([row[13] for row in rows], dtype=np.float64),
        "event_until": np.array([row[14] for row in rows], dtype=np.float64),
    }
    terms, tf, sizes = _term_counts(rows, tags, vocabulary, n)
    return PartitionArrays(watermark, 0, columns, [tuple(t) for t in tags], terms, tf, sizes)


def row_codes(row: Sequence[Any], codebook: Codebook, vocabulary: TermCodebook) -> RowCodes:
    """One row's codes (a change the log replays)."""
    _, status, category, namespace, type_, sim, _, _, _, stored_tags, hits, updated_at, said, start, end = row[:15]
    tags = _tags(stored_tags)
    terms, counts = vocabulary.encode(_document(row, tags))
    return RowCodes(
        status=_STATUS[status],
        category=codebook.code(category),
        namespace=codebook.code(namespace),
        type=codebook.code(type_),
        simhash=int(sim, 16),
        hits=hits,
        updated_at=updated_at,
        tags=tuple(tags),
        terms=terms,
        term_counts=counts,
        said_at=_NONE if said is None else said,
        event_at=_NONE if start is None else start,
        event_until=_NONE if end is None else end,
    )


def vectors_for(
    ids: npt.NDArray[np.int64], found: Sequence[Sequence[Any]], dimension: int
) -> tuple[npt.NDArray[Any], list[int]]:
    """The vectors of learnings `ids` (a snapshot's rows) from `found`, (id, stored embedding) pairs read from
    the table, and the ids not found (no longer live: the caller removes them). float16 as the table stores
    them, where it does, so nothing is converted until something needs every row as float32."""
    found_ids = np.fromiter((pair[0] for pair in found), dtype=np.int64, count=len(found))
    blobs = [pair[1] for pair in found]
    halves = embedding_halves(blobs, dimension)
    matrix: npt.NDArray[Any] = embedding_vectors(blobs, dimension) if halves is None else halves
    return aligned(ids, found_ids, matrix)


def joined_halves(found_ids: npt.NDArray[np.int64], joined: bytes, dimension: int) -> npt.NDArray[np.float16] | None:
    """The rows of `joined`, every stored embedding of `found_ids` concatenated in their order, as one float16
    matrix; None unless each is a tagged float16 blob (then the caller reads them one by one)."""
    width = 2 * dimension + 1
    if len(joined) != len(found_ids) * width:
        return None
    rows = np.frombuffer(joined, dtype=np.uint8).reshape(len(found_ids), width)
    if len(rows) and not bool((rows[:, 0] == HALF_TAG).all()):
        return None
    return np.ascontiguousarray(rows[:, 1:]).view(np.float16)


def aligned(
    ids: npt.NDArray[np.int64], found_ids: npt.NDArray[np.int64], matrix: npt.NDArray[Any]
) -> tuple[npt.NDArray[Any], list[int]]:
    """The rows of `matrix` (one per `found_ids`) in the order of `ids`, zeros where an id was not found, and
    those ids. Usually the table returns the snapshot's rows in its own order: then `matrix` is the answer."""
    if len(found_ids) == len(ids) and np.array_equal(found_ids, ids):
        return matrix, []
    if len(found_ids) == 0:
        return np.zeros((len(ids), matrix.shape[1]), dtype=matrix.dtype), ids.tolist()
    at, hit = _positions(ids, found_ids)
    # One gather of every row (a missed id takes some row, then zeros): at 100k rows a zeroed matrix filled
    # through a mask cost three passes over 150 MB.
    vectors = matrix[at]
    vectors[~hit] = 0
    return vectors, ids[~hit].tolist()


def alignment(
    ids: npt.NDArray[np.int64], found_ids: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.intp] | None, list[int]]:
    """What `aligned` would gather, without gathering: for each of `ids` the position of the same id among
    `found_ids` (None when they are the same ids in the same order), and the ids not found."""
    if len(found_ids) == len(ids) and np.array_equal(found_ids, ids):
        return None, []
    if len(found_ids) == 0:
        return np.zeros(len(ids), dtype=np.intp), ids.tolist()
    at, hit = _positions(ids, found_ids)
    return at, ids[~hit].tolist()


def _positions(
    ids: npt.NDArray[np.int64], found_ids: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
    order = np.argsort(found_ids, kind="stable")
    at = order[np.minimum(np.searchsorted(found_ids[order], ids), len(found_ids) - 1)]
    return at, found_ids[at] == ids


def _coded(codebook: Codebook, values: Sequence[str | None]) -> npt.NDArray[np.int32]:
    """Codes of `values`, looked up once per distinct value (a user's rows share a few)."""
    seen: dict[str | None, int] = {}
    return np.array([seen[v] if v in seen else seen.setdefault(v, codebook.code(v)) for v in values], dtype=np.int32)


def _document(row: Sequence[Any], tags: list[str]) -> Any:
    stored = row[_STORED_TERMS]
    return document_terms(row[7], row[8], tags) if stored is None else parse_terms(stored)


def _term_counts(
    rows: Sequence[Sequence[Any]], tags: list[list[str]], vocabulary: TermCodebook, n: int
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """Every row's (term id, count) pairs, flat, and how many each row holds: the stored terms split (a term
    repeated once per occurrence), numbered, and counted per row by one `np.unique` over row·2³² + term id.
    Within a row the pairs come by term id; the keyword index scores each pair alone, so the order changes no
    score."""
    tokens = [
        row[_STORED_TERMS].split() if row[_STORED_TERMS] is not None else list(_document(row, row_tags).elements())
        for row, row_tags in zip(rows, tags, strict=True)
    ]
    counts = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=n)
    # Numbered per distinct term first (in order of first occurrence, as `TermCodebook.encode` numbers them), then
    # mapped in C: a user's rows repeat their vocabulary.
    every = list(chain.from_iterable(tokens))
    distinct = {term: slot for slot, term in enumerate(dict.fromkeys(every))}
    own = np.array(vocabulary.ids(list(distinct)), dtype=np.int64)
    flat = own[np.fromiter(map(distinct.__getitem__, every), dtype=np.int64, count=len(every))]
    keys, tf = np.unique((np.repeat(np.arange(n, dtype=np.int64), counts) << 32) | flat, return_counts=True)
    sizes = np.bincount(keys >> 32, minlength=n).astype(np.int64)
    return (keys & 0xFFFFFFFF).astype(np.int32), tf.astype(np.int32), sizes


def _tags(stored: Any) -> list[str]:
    if stored == "[]":  # most rows: no json parse
        return []
    return json.loads(stored) if isinstance(stored, str) else list(stored)
