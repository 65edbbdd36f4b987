"""Cells over the learned query→tool pairs, so a route scans the pairs near its query instead of all of them.

Scanning every pair costs memory bandwidth, not arithmetic: on the 2-core machine a 4,000-tool catalog
scan takes 0.1–0.3 ms while it stays in cache, but with 7,000 pairs beside it both matrices fall out of
cache and a route took 1.5–2.7 ms. Spherical k-means cells (√n of them) let a query read only the pairs
of its nearest cells; a pair similar enough to count as evidence (≥ 0.55 cosine) sits in a cell whose
centre is near the query, so few are missed (tests/tools/test_store_index.py measures how few).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["Cells"]

Vectors = npt.NDArray[np.float32]
_ITERATIONS = 8
_SAMPLE = 20_000


class Cells:
    def __init__(self, centres: Vectors) -> None:
        self.centres = centres

    @property
    def count(self) -> int:
        return len(self.centres)

    @classmethod
    def train(cls, vectors: Vectors, seed: int = 0) -> Cells:
        rng = np.random.default_rng(seed)
        sample = vectors if len(vectors) <= _SAMPLE else vectors[rng.choice(len(vectors), _SAMPLE, replace=False)]
        count = max(1, int(np.sqrt(len(vectors))))
        centres = sample[rng.choice(len(sample), count, replace=False)].copy()
        for _ in range(_ITERATIONS):
            nearest = np.argmax(sample @ centres.T, axis=1)
            sums = np.zeros_like(centres)
            np.add.at(sums, nearest, sample)
            norms = np.linalg.norm(sums, axis=1, keepdims=True)
            empty = norms[:, 0] == 0
            # An empty cell keeps its centre: it may fill up as pairs arrive.
            centres = np.where(empty[:, None], centres, sums / np.maximum(norms, 1e-12)).astype(np.float32)
        return cls(centres)

    def assign(self, vectors: Vectors) -> npt.NDArray[np.int32]:
        nearest: npt.NDArray[np.int32] = np.argmax(vectors @ self.centres.T, axis=1).astype(np.int32)
        return nearest

    def nearest(self, vector: Vectors, probes: int) -> npt.NDArray[np.int32]:
        sims = self.centres @ vector
        probes = min(probes, len(sims))
        chosen: npt.NDArray[np.int32] = np.argpartition(-sims, probes - 1)[:probes].astype(np.int32)
        return chosen
