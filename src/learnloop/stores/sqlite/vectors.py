"""In-memory vector partitions over the SQLite file: exact numpy scans, HNSW when a partition grows.

SQLite holds every embedding; a partition is one (tenant, user) slice of the live (not deprecated)
learnings, loaded on first use and kept in step with the `vector_changes` log, so writes made by other
processes are seen too. Filters are evaluated on per-row codes held next to the vectors, before top-k
selection, so filtered-out rows never take a slot.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ...models import Filters, Status

__all__ = ["Codebook", "Partition", "RowCodes"]

log = logging.getLogger("learnloop.vectors")

STATUS_CODES = {Status.CANDIDATE: 1, Status.VERIFIED: 2}
_HNSW_M = 16
_HNSW_EF_CONSTRUCTION = 128
_HNSW_EF_SEARCH = 96


class Codebook:
    """Interns strings (categories, namespaces, types) to small integers for vectorised filtering."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}

    def code(self, value: str | None) -> int:
        if value is None:
            return -1
        found = self._codes.get(value)
        if found is None:
            found = self._codes[value] = len(self._codes)
        return found

    def known(self, value: str) -> int | None:
        return self._codes.get(value)


@dataclass(frozen=True)
class RowCodes:
    status: int
    category: int
    namespace: int
    type: int
    simhash: int


class _Ann:
    """An hnswlib index keyed by learning id, inner-product space (vectors are unit length)."""

    def __init__(self, dim: int, capacity: int) -> None:
        import hnswlib

        self.index: Any = hnswlib.Index(space="ip", dim=dim)
        self.index.init_index(
            max_elements=max(capacity, 1024), ef_construction=_HNSW_EF_CONSTRUCTION, M=_HNSW_M
        )
        self.index.set_ef(_HNSW_EF_SEARCH)
        self.deleted: set[int] = set()

    @classmethod
    def load(cls, path: Path, dim: int, capacity: int) -> _Ann:
        import hnswlib

        ann = cls.__new__(cls)
        ann.index = hnswlib.Index(space="ip", dim=dim)
        ann.index.load_index(str(path), max_elements=capacity)
        ann.index.set_ef(_HNSW_EF_SEARCH)
        ann.deleted = set()
        return ann

    def upsert(self, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        needed = self.index.get_current_count() + len(ids)
        if needed > self.index.get_max_elements():
            self.index.resize_index(max(needed, self.index.get_max_elements() * 2))
        for learning_id in ids.tolist():
            if learning_id in self.deleted:
                self.index.unmark_deleted(learning_id)
                self.deleted.discard(learning_id)
        self.index.add_items(vectors, ids, num_threads=1)

    def remove(self, learning_id: int) -> None:
        if learning_id not in self.deleted:
            try:
                self.index.mark_deleted(learning_id)
            except RuntimeError:
                return  # never added: nothing to hide
            self.deleted.add(learning_id)

    def query(self, vector: npt.NDArray[np.float32], k: int) -> tuple[list[int], list[float]]:
        k = min(k, self.index.get_current_count() - len(self.deleted))
        while k > 0:
            try:
                labels, distances = self.index.knn_query(vector, k=k, num_threads=1)
            except RuntimeError:
                k //= 2  # fewer reachable elements than asked for
                continue
            return labels[0].tolist(), (1.0 - distances[0]).tolist()
        return [], []


class Partition:
    """The live vectors of one (tenant, user) slice, with their filter codes and SimHashes."""

    def __init__(
        self,
        dim: int,
        watermark: int,
        ann_threshold: int,
        ann_path: Path | None,
        changes_since: Callable[[int], list[int] | None],
    ) -> None:
        self.dim = dim
        self.changes_since = changes_since
        self.watermark = watermark
        self.ann_threshold = ann_threshold
        self.ann_path = ann_path
        self.n = 0
        self.ids = np.empty(0, dtype=np.int64)
        self.vectors = np.empty((0, dim), dtype=np.float32)
        self.status = np.empty(0, dtype=np.int8)
        self.category = np.empty(0, dtype=np.int32)
        self.namespace = np.empty(0, dtype=np.int32)
        self.type = np.empty(0, dtype=np.int32)
        self.simhash = np.empty(0, dtype=np.uint64)
        self.position: dict[int, int] = {}
        self.ann: _Ann | None = None
        self.ann_dirty = False

    # -- mutation ------------------------------------------------------------------------------------

    def _reserve(self, extra: int) -> None:
        need = self.n + extra
        if need <= len(self.ids):
            return
        size = max(need, len(self.ids) * 2, 64)
        self.ids = _grow(self.ids, size)
        self.vectors = _grow(self.vectors, size)
        self.status = _grow(self.status, size)
        self.category = _grow(self.category, size)
        self.namespace = _grow(self.namespace, size)
        self.type = _grow(self.type, size)
        self.simhash = _grow(self.simhash, size)

    def bulk_load(self, ids: list[int], vectors: npt.NDArray[np.float32], codes: list[RowCodes]) -> None:
        self._reserve(len(ids))
        start, end = self.n, self.n + len(ids)
        self.ids[start:end] = ids
        self.vectors[start:end] = vectors
        self.status[start:end] = [c.status for c in codes]
        self.category[start:end] = [c.category for c in codes]
        self.namespace[start:end] = [c.namespace for c in codes]
        self.type[start:end] = [c.type for c in codes]
        self.simhash[start:end] = np.array([c.simhash for c in codes], dtype=np.uint64)
        for offset, learning_id in enumerate(ids):
            self.position[learning_id] = start + offset
        self.n = end

    def upsert(self, learning_id: int, vector: npt.NDArray[np.float32], codes: RowCodes) -> None:
        pos = self.position.get(learning_id)
        if pos is None:
            self.bulk_load([learning_id], vector.reshape(1, -1), [codes])
        else:
            self.vectors[pos] = vector
            self.status[pos] = codes.status
            self.category[pos] = codes.category
            self.namespace[pos] = codes.namespace
            self.type[pos] = codes.type
            self.simhash[pos] = np.uint64(codes.simhash)
        if self.ann is not None:
            self.ann.upsert(np.array([learning_id], dtype=np.int64), vector.reshape(1, -1))
            self.ann_dirty = True

    def remove(self, learning_id: int) -> None:
        pos = self.position.pop(learning_id, None)
        if pos is None:
            return
        last = self.n - 1
        if pos != last:  # move the last row into the hole
            moved = int(self.ids[last])
            for array in (self.ids, self.vectors, self.status, self.category, self.namespace, self.type):
                array[pos] = array[last]
            self.simhash[pos] = self.simhash[last]
            self.position[moved] = pos
        self.n = last
        if self.ann is not None:
            self.ann.remove(learning_id)
            self.ann_dirty = True

    # -- approximate index ---------------------------------------------------------------------------

    def ensure_ann(self) -> None:
        """Build (or load) the HNSW index once the partition is large enough to need one."""
        if self.ann is not None or self.n < self.ann_threshold:
            return
        try:
            import hnswlib  # noqa: F401
        except ImportError:
            log.warning("partition has %d vectors; install learnloop[ann] for an HNSW index", self.n)
            self.ann_threshold = 1 << 62
            return
        if self.ann_path is not None and self._load_ann():
            return
        self.ann = _Ann(self.dim, self.n * 2)
        self.ann.upsert(self.ids[: self.n].copy(), self.vectors[: self.n])
        self.ann_dirty = True
        self.save_ann()

    def _load_ann(self) -> bool:
        assert self.ann_path is not None
        meta_path = self.ann_path.with_suffix(".json")
        if not (self.ann_path.exists() and meta_path.exists()):
            return False
        try:
            meta = json.loads(meta_path.read_text())
            saved_at = int(meta["watermark"])
            changed = self.changes_since(saved_at) if saved_at <= self.watermark else None
            if changed is None:
                return False  # saved by a newer writer, or the change log no longer covers the gap
            ann = _Ann.load(self.ann_path, self.dim, self.n * 2)
            ann.deleted = set(meta.get("deleted", []))
        except (OSError, ValueError, KeyError, RuntimeError):
            return False
        for learning_id in set(changed):  # replay what happened since the file was written
            pos = self.position.get(learning_id)
            if pos is None:
                ann.remove(learning_id)
            else:
                ann.upsert(np.array([learning_id], dtype=np.int64), self.vectors[pos : pos + 1])
        if ann.index.get_current_count() - len(ann.deleted) != self.n:
            return False
        self.ann = ann
        self.ann_dirty = bool(changed)
        return True

    def save_ann(self) -> None:
        if self.ann is None or self.ann_path is None or not self.ann_dirty:
            return
        self.ann_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.ann_path.with_suffix(".tmp")
        self.ann.index.save_index(str(tmp))
        os.replace(tmp, self.ann_path)
        meta = {"watermark": self.watermark, "count": self.n, "deleted": sorted(self.ann.deleted)}
        self.ann_path.with_suffix(".json").write_text(json.dumps(meta))
        self.ann_dirty = False

    def drop_ann_files(self) -> None:
        if self.ann_path is not None:
            for path in (self.ann_path, self.ann_path.with_suffix(".json")):
                path.unlink(missing_ok=True)

    # -- queries -------------------------------------------------------------------------------------

    def mask(self, filters: Filters, codebook: Codebook) -> npt.NDArray[np.bool_] | None:
        """Rows passing the filters, or None when every row passes."""
        n = self.n
        mask: npt.NDArray[np.bool_] | None = None

        def restrict(column: npt.NDArray[Any], allowed: Iterable[int]) -> None:
            nonlocal mask
            codes = np.fromiter(allowed, dtype=column.dtype)
            part = np.isin(column[:n], codes)
            mask = part if mask is None else mask & part

        statuses = {STATUS_CODES[s] for s in filters.statuses if s in STATUS_CODES}
        if statuses != set(STATUS_CODES.values()):
            restrict(self.status, statuses)
        if filters.namespace is not None:
            restrict(self.namespace, _codes(codebook, [filters.namespace]))
        if filters.categories is not None:
            restrict(self.category, _codes(codebook, filters.categories))
        if filters.types is not None:
            restrict(self.type, _codes(codebook, [t.value for t in filters.types]))
        if mask is not None and bool(mask.all()):
            return None
        return mask

    def search(
        self, vector: npt.NDArray[np.float32], k: int, mask: npt.NDArray[np.bool_] | None
    ) -> list[tuple[int, float]]:
        if self.n == 0 or k <= 0:
            return []
        self.ensure_ann()
        if self.ann is not None and (mask is None or float(mask.mean()) > 0.25):
            found = self._search_ann(vector, k, mask)
            if found is not None:
                return found
        return self._search_exact(vector, k, mask)

    def _search_exact(
        self, vector: npt.NDArray[np.float32], k: int, mask: npt.NDArray[np.bool_] | None
    ) -> list[tuple[int, float]]:
        if mask is None:
            rows = None
            scores = self.vectors[: self.n] @ vector
        else:
            rows = np.flatnonzero(mask)
            if rows.size == 0:
                return []
            scores = self.vectors[rows] @ vector
        k = min(k, scores.size)
        top = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
        top = top[np.argsort(-scores[top], kind="stable")]
        positions = top if rows is None else rows[top]
        return list(zip(self.ids[positions].tolist(), scores[top].tolist(), strict=True))

    def _search_ann(
        self, vector: npt.NDArray[np.float32], k: int, mask: npt.NDArray[np.bool_] | None
    ) -> list[tuple[int, float]] | None:
        assert self.ann is not None
        labels, sims = self.ann.query(vector, k if mask is None else k * 4)
        if mask is None:
            return list(zip(labels, sims, strict=True))
        kept = [(i, s) for i, s in zip(labels, sims, strict=True) if mask[self.position[i]]]
        return kept[:k] if len(kept) >= k else None

    def near_simhash(
        self, simhash: int, max_distance: int, mask: npt.NDArray[np.bool_] | None
    ) -> list[tuple[int, int]]:
        if self.n == 0:
            return []
        distances = np.bitwise_count(self.simhash[: self.n] ^ np.uint64(simhash))
        close = distances <= max_distance
        if mask is not None:
            close &= mask
        rows = np.flatnonzero(close)
        order = rows[np.argsort(distances[rows], kind="stable")]
        return list(zip(self.ids[order].tolist(), distances[order].astype(int).tolist(), strict=True))


def _codes(codebook: Codebook, values: Iterable[str]) -> list[int]:
    return [code for value in values if (code := codebook.known(value)) is not None]


def _grow(array: npt.NDArray[Any], size: int) -> npt.NDArray[Any]:
    grown = np.empty((size, *array.shape[1:]), dtype=array.dtype)
    grown[: len(array)] = array
    return grown
