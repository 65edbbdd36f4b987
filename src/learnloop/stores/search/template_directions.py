"""The query direction of every active tool template of a tenant, kept between retrievals, and the choice of
the templates a query is about.

A template keeps the sum of the query vectors that used it: its direction is what it is for. Reading 300
template vectors from SQLite took 2.6 ms per `retrieve_context`; this cache is checked against a fingerprint
of the rows instead (count, active count, last use), which moves whenever a vector or a status can have
changed: a success updates both the vector and `last_used_at`; archiving, reviving, seeding and forgetting
change the counts. Failures and feedback change neither. The backend reads the fingerprint and the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...models import Scope
from ..records import Vector

__all__ = ["DirectionRow", "Directions", "TemplateDirections", "direction_similarity"]

# (template id, owner ('' when shared), intent, summed query vector as float32 bytes or None, its model)
DirectionRow = tuple[int, str, str, bytes | None, str | None]


def direction_similarity(summed: Vector, vector: Vector) -> float | None:
    """Cosine of a query with a template's summed query vectors; None while the template has no direction."""
    norm = float(np.linalg.norm(summed))
    return float(summed @ vector) / norm if norm > 0 else None


@dataclass(frozen=True)
class Directions:
    fingerprint: Hashable
    ids: npt.NDArray[np.int64]
    owners: list[str]
    intents: list[str]
    vectors: npt.NDArray[np.float32] | None  # unit rows; None when no template has a query vector yet
    with_vector: npt.NDArray[np.bool_]

    @classmethod
    def of(cls, fingerprint: Hashable, rows: Sequence[DirectionRow], embedding_model: str) -> Directions:
        usable = np.array([r[3] is not None and r[4] == embedding_model for r in rows], dtype=bool)
        vectors = None
        if usable.any():
            blob = b"".join(r[3] for r, ok in zip(rows, usable, strict=True) if ok and r[3] is not None)
            sums = np.frombuffer(blob, dtype=np.float32).reshape(int(usable.sum()), -1)
            vectors = np.zeros((len(rows), sums.shape[1]), dtype=np.float32)
            vectors[usable] = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
        return cls(
            fingerprint=fingerprint,
            ids=np.array([r[0] for r in rows], dtype=np.int64),
            owners=[r[1] for r in rows],
            intents=[r[2] for r in rows],
            vectors=vectors,
            with_vector=usable,
        )

    def relevant(
        self, scope: Scope, vector: Vector | None, floor: float, intent: str | None, limit: int
    ) -> dict[int, float | None]:
        """Templates the scope sees that are about a query: of the same `intent` (id → None) first, then those
        whose direction is at least `floor` similar to `vector` (id → similarity), most similar first."""
        if not len(self.ids):
            return {}
        visible = np.array([scope.user is None or o in ("", scope.user) for o in self.owners], dtype=bool)
        scores: dict[int, float | None] = {}
        if vector is not None and self.vectors is not None:
            sims = self.vectors @ vector
            for position in np.flatnonzero(visible & self.with_vector & (sims >= floor)).tolist():
                scores[int(self.ids[position])] = float(sims[position])
        if intent:
            for position in np.flatnonzero(visible).tolist():
                if self.intents[position] == intent:
                    scores.setdefault(int(self.ids[position]), None)
        chosen = sorted(scores, key=lambda i: -(s if (s := scores[i]) is not None else 2.0))[:limit]
        return {i: scores[i] for i in chosen}


class TemplateDirections:
    """`Directions` per (tenant, embedding model), read again only when the backend's fingerprint moved."""

    def __init__(self) -> None:
        self._cached: dict[tuple[str, str], Directions] = {}

    def get(
        self,
        tenant: str,
        embedding_model: str,
        fingerprint: Hashable,
        rows: Callable[[], Sequence[DirectionRow]],
    ) -> Directions:
        key = (tenant, embedding_model)
        found = self._cached.get(key)
        if found is None or found.fingerprint != fingerprint:
            found = self._cached[key] = Directions.of(fingerprint, rows(), embedding_model)
        return found
