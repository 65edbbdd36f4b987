"""A search's hits as columns: what ranking reads of each hit in numpy arrays, one row per hit.

A retrieval ranks every hit of its pool (about a hundred) and keeps a handful; building a `Candidate` object
per hit cost more than the search itself. The pool is still a sequence of candidates (built on first access,
then kept), so code that walks candidates one by one works unchanged, while ranking reads the columns.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np
import numpy.typing as npt

from ..models import Status
from .records import Candidate

__all__ = ["CandidatePool"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass
class CandidatePool(Sequence[Candidate]):
    """Column `i` of every array is hit `i`. A missing similarity, BM25 score or coverage is NaN, a missing rank
    0 (ranks start at 1); `status` holds codes that `statuses` maps back."""

    ids: Ints
    similarity: Floats
    vector_rank: Ints
    text_score: Floats
    text_rank: Ints
    coverage: Floats
    status: npt.NDArray[np.int8]
    statuses: dict[int, Status]
    hits: Ints
    updated_at: Floats
    said_at: Floats
    event_at: Floats
    event_until: Floats
    tags: npt.NDArray[np.object_]  # each a tuple of strings
    _built: dict[int, Candidate] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, candidates: Sequence[Candidate]) -> CandidatePool:
        """The columns of `candidates` (for tests and callers holding objects)."""
        codes = {status: code for code, status in enumerate(Status)}

        def floats(values: list[float | None]) -> Floats:
            return np.array([np.nan if v is None else v for v in values], dtype=np.float64)

        tags = np.empty(len(candidates), dtype=object)
        for i, c in enumerate(candidates):
            tags[i] = tuple(c.tags)
        pool = cls(
            ids=np.array([c.id for c in candidates], dtype=np.int64),
            similarity=floats([c.vector_similarity for c in candidates]),
            vector_rank=np.array([c.vector_rank or 0 for c in candidates], dtype=np.int64),
            text_score=floats([c.text_score for c in candidates]),
            text_rank=np.array([c.text_rank or 0 for c in candidates], dtype=np.int64),
            coverage=floats([c.text_coverage for c in candidates]),
            status=np.array([codes[c.status] for c in candidates], dtype=np.int8),
            statuses={code: status for status, code in codes.items()},
            hits=np.array([c.hits for c in candidates], dtype=np.int64),
            updated_at=floats([c.updated_at for c in candidates]),
            said_at=floats([c.said_at for c in candidates]),
            event_at=floats([c.event_at for c in candidates]),
            event_until=floats([c.event_until for c in candidates]),
            tags=tags,
        )
        pool._built = dict(enumerate(candidates))
        return pool

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> Candidate: ...

    @overload
    def __getitem__(self, index: slice) -> list[Candidate]: ...

    def __getitem__(self, index: int | slice) -> Candidate | list[Candidate]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        found = self._built.get(index)
        if found is None:
            found = self._built[index] = self._build(index)
        return found

    def __iter__(self) -> Iterator[Candidate]:
        return (self[i] for i in range(len(self)))

    def take(self, rows: list[int]) -> list[Candidate]:
        """`[self[i] for i in rows]`, the ones not built yet built together: each column gathered and turned into
        Python values once for all of them (a retrieval keeps a handful; per hit, a dozen numpy scalar reads and
        conversions cost about twice as much). The values are the same: `tolist` gives what `float`/`int` do."""
        built = self._built
        missing = [i for i in rows if i not in built]
        if missing:
            at = np.array(missing, dtype=np.intp)
            statuses = self.statuses
            columns = zip(
                missing,
                self.ids[at].tolist(),
                self.status[at].tolist(),
                self.hits[at].tolist(),
                self.updated_at[at].tolist(),
                self.tags[at].tolist(),
                self.similarity[at].tolist(),
                self.vector_rank[at].tolist(),
                self.text_score[at].tolist(),
                self.text_rank[at].tolist(),
                self.coverage[at].tolist(),
                self.said_at[at].tolist(),
                self.event_at[at].tolist(),
                self.event_until[at].tolist(),
                strict=True,
            )
            for (
                i,
                id_,
                status,
                hits,
                updated_at,
                tags,
                similarity,
                v_rank,
                score,
                t_rank,
                coverage,
                said,
                at_,
                until,
            ) in columns:
                candidate = Candidate(
                    id_,
                    statuses[status],
                    hits,
                    updated_at,
                    list(tags),
                    None if similarity != similarity else similarity,  # NaN: that search missed it
                    v_rank or None,
                    None if score != score else score,
                    t_rank or None,
                    None if coverage != coverage else coverage,
                )
                candidate.said_at, candidate.event_at, candidate.event_until = said, at_, until
                built[i] = candidate
        return [built[i] for i in rows]

    def _build(self, i: int) -> Candidate:
        similarity, text_score, coverage = float(self.similarity[i]), float(self.text_score[i]), float(self.coverage[i])
        vector_rank, text_rank = int(self.vector_rank[i]), int(self.text_rank[i])
        candidate = Candidate(
            int(self.ids[i]),
            self.statuses[int(self.status[i])],
            int(self.hits[i]),
            float(self.updated_at[i]),
            list(self.tags[i]),
            None if similarity != similarity else similarity,  # NaN: that search missed it
            vector_rank or None,
            None if text_score != text_score else text_score,
            text_rank or None,
            None if coverage != coverage else coverage,
        )
        candidate.said_at = float(self.said_at[i])
        candidate.event_at = float(self.event_at[i])
        candidate.event_until = float(self.event_until[i])
        return candidate
