"""In-memory search partitions: vectors (exact numpy or HNSW) and BM25 keywords.

The backend holds every embedding and text; a partition is one (tenant, user) slice of the live (not
deprecated) learnings, loaded on first use and kept in step with the backend's change log (SQLite:
`vector_changes`), so writes made by other processes are seen too. Rows live in slots: a changed row takes
a new slot and its old one is marked dead; compaction drops dead slots once they are a quarter of the total.
Filters are evaluated on per-slot codes before top-k selection, so filtered-out rows never take a slot in
the results.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ...models import Filters
from .ann import Ann, EfSchedule, ef_schedule
from .keywords import KeywordIndex, Matched, held_at
from .row_codes import STATUS_CODES, Codebook, RowCodes
from .snapshot import PartitionArrays

__all__ = ["Partition", "Selection"]

log = logging.getLogger("learnloop.vectors")

_MIN_DEAD_FOR_COMPACTION = 256
# The saved index's layout: its graph and labels without the vectors (see `Ann.save_links`), for indexes below
# `_LINKS_ONLY_BELOW` live vectors. Putting the vectors back costs a process that reopens the file about 0.15 s
# at 10k but 0.8 s at 100k (first query 1.4 s against 0.57 s for hnswlib's own file), so larger indexes keep
# hnswlib's whole file (1.7 KB per vector) and their first query stays under a second; a partition restored
# from its snapshot also takes its vectors from that file rather than from the table (`preload_saved_ann`).
_LINKS_ONLY = "links-only"
_LINKS_ONLY_BELOW = 50_000
# Unindexed vectors allowed before writes index them as they go (searches score these exactly).
_MAX_UNINDEXED = 128
# Per-slot arrays, grown and compacted together.
_COLUMNS = (
    "ids",
    "vectors",
    "alive",
    "status",
    "category",
    "namespace",
    "type",
    "simhash",
    "hits",
    "updated_at",
    "tags",
    "said_at",
    "event_at",
    "event_until",
)

Mask = npt.NDArray[np.bool_]
Vectors = npt.NDArray[np.float32]
Scores = npt.NDArray[np.float32]
Slots = npt.NDArray[np.int64]
Ids = npt.NDArray[np.int64]
_NO_SLOTS: Slots = np.zeros(0, dtype=np.int64)
_NO_SCORES: Scores = np.zeros(0, dtype=np.float32)


@dataclass(frozen=True)
class Selection:
    """The slots that are alive and pass a query's filters (shared and cached: callers must not modify it)."""

    mask: Mask
    count: int  # slots set in `mask`


class SavedRows:
    """Vectors a restored partition holds before converting them (float16 rows, as the table stores them) or before
    gathering them into slot order (the float32 rows of its saved HNSW file, mapped). Slot `s` is row `order[s]`
    of `rows` (`s` itself when `order` is None), or, where `order[s]` is negative, row `-1 - order[s]` of `patched`
    (rows read from the table since: those changed after the file was saved)."""

    def __init__(
        self,
        rows: npt.NDArray[Any],
        order: npt.NDArray[np.intp] | None = None,
        patched: Vectors | None = None,
    ) -> None:
        self.rows, self.order, self.patched = rows, order, patched

    def at(self, slots: npt.NDArray[np.int64] | list[int]) -> Vectors:
        """The float32 vectors of `slots` (a new array)."""
        if self.order is None:
            rows: Vectors = self.rows[slots].astype(np.float32)
            return rows
        return self._gathered(self.order[slots])

    def every(self) -> Vectors:
        """Every slot's vector, float32, in slot order (a new array)."""
        if self.order is None:
            rows: Vectors = self.rows.astype(np.float32)
            return rows
        return self._gathered(self.order)

    def _gathered(self, where: npt.NDArray[np.intp]) -> Vectors:
        if self.patched is None:
            gathered: Vectors = self.rows[where].astype(np.float32, copy=False)
            return gathered
        rows: Vectors = self.rows[np.maximum(where, 0)].astype(np.float32, copy=False)
        patched = where < 0
        rows[patched] = self.patched[-1 - where[patched]]
        return rows


class Partition:
    """The live rows of one (tenant, user) slice: vectors, keyword index, filter codes, SimHashes."""

    def __init__(
        self,
        dim: int,
        watermark: int,
        ann_threshold: int,
        ann_path: Path | None,
        changes_since: Callable[[int], list[int] | None],
        ef: EfSchedule | None = None,
    ) -> None:
        self.dim = dim
        self.watermark = watermark
        self.ann_threshold = ann_threshold
        self.ef = ef_schedule("") if ef is None else ef  # the index's search breadth by size
        self.ann_path = ann_path
        self.changes_since = changes_since
        self.size = 0  # slots in use, dead ones included
        self.ids = np.zeros(0, dtype=np.int64)
        self._vectors = np.zeros((0, dim), dtype=np.float32)
        # A restored partition's vectors until something needs them all as float32 (see `vectors`): float16 as the
        # table stores them, or the rows of its saved HNSW file (`SavedRows`).
        self._pending: SavedRows | None = None
        self.alive = np.zeros(0, dtype=bool)
        self.status = np.zeros(0, dtype=np.int8)
        self.category = np.zeros(0, dtype=np.int32)
        self.namespace = np.zeros(0, dtype=np.int32)
        self.type = np.zeros(0, dtype=np.int32)
        self.simhash = np.zeros(0, dtype=np.uint64)
        # What ranking reads besides status, so a search reads whole rows only for the few it keeps.
        self.hits = np.zeros(0, dtype=np.int64)
        self.updated_at = np.zeros(0, dtype=np.float64)
        self.tags = np.empty(0, dtype=object)
        self.said_at = np.zeros(0, dtype=np.float64)
        self.event_at = np.zeros(0, dtype=np.float64)
        self.event_until = np.zeros(0, dtype=np.float64)
        self.slot_of: dict[int, int] = {}
        self.keywords = KeywordIndex()
        self.ann: Ann | None = None
        # The saved whole index, loaded before the partition was restored to take its vectors from (see
        # `preload_saved_ann`): the first search's `ensure_ann` adopts it instead of reading the file again.
        self.preloaded_ann: tuple[Ann, int] | None = None  # and the seq it was saved at
        self.ann_dirty = False
        # Live ids whose current vector the ANN index does not hold yet: searches score them exactly, and
        # they are indexed when the store is idle (an HNSW insert costs a few hundred microseconds).
        self.unindexed: dict[int, None] = {}
        # Filter masks are rebuilt only when the rows change: most queries repeat the same filters.
        self.version = 0
        self._selections: dict[tuple[Any, ...], Selection] = {}
        self._selections_version = 0
        # The source's stamp when this partition last caught up (see `partition_cache.PartitionSource.stamp`).
        self.synced: Hashable | None = None
        # Changes of any kind (hit counts too) since the saved snapshot, if any (see `snapshot`); None: never saved.
        self.unsaved: int | None = None
        # The last keyword search's query terms and rows (version), and the weight each slot holds of them.
        self._weighed: tuple[tuple[tuple[int, ...], int], Matched] | None = None

    @property
    def vectors(self) -> Vectors:
        """Every slot's vector, float32. A restored partition converts or gathers them on first use (numpy converts
        float16 in software: about half a second at 100k rows; putting 100k rows of a saved index in slot order
        takes 0.1 s), which a search through the HNSW index never needs: it reads the few rows it scores exactly
        through `vector_rows`."""
        if self._pending is not None:
            self._vectors, self._pending = self._pending.every(), None
        return self._vectors

    @vectors.setter
    def vectors(self, value: Vectors) -> None:
        self._vectors, self._pending = value, None

    @property
    def vectors_pending(self) -> bool:
        """Restored vectors not yet converted to float32 in slot order (an idle step converts them)."""
        return self._pending is not None

    def vector_rows(self, slots: npt.NDArray[np.int64] | list[int]) -> Vectors:
        """The float32 vectors of `slots`, without converting every row of a restored partition."""
        if self._pending is not None:
            return self._pending.at(slots)
        return self._vectors[slots]

    @property
    def n(self) -> int:
        """Live rows."""
        return len(self.slot_of)

    # -- mutation ------------------------------------------------------------------------------------

    def _reserve(self, extra: int) -> None:
        need = self.size + extra
        if need <= len(self.ids):
            return
        capacity = max(need, 2 * len(self.ids), 64)
        for name in _COLUMNS:
            array = getattr(self, name)
            grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
            grown[: self.size] = array[: self.size]
            setattr(self, name, grown)

    def bulk_load(self, ids: Sequence[int], vectors: Vectors, codes: Sequence[RowCodes]) -> None:
        self._reserve(len(ids))
        start, end = self.size, self.size + len(ids)
        self.ids[start:end] = ids
        self.vectors[start:end] = vectors
        self.alive[start:end] = True
        self.status[start:end] = [c.status for c in codes]
        self.category[start:end] = [c.category for c in codes]
        self.namespace[start:end] = [c.namespace for c in codes]
        self.type[start:end] = [c.type for c in codes]
        self.simhash[start:end] = np.array([c.simhash for c in codes], dtype=np.uint64)
        self.hits[start:end] = [c.hits for c in codes]
        self.updated_at[start:end] = [c.updated_at for c in codes]
        self.said_at[start:end] = [c.said_at for c in codes]
        self.event_at[start:end] = [c.event_at for c in codes]
        self.event_until[start:end] = [c.event_until for c in codes]
        for offset, code in enumerate(codes):
            self.tags[start + offset] = code.tags
        for offset, learning_id in enumerate(ids):
            self.slot_of[learning_id] = start + offset
        if len(codes) > 1:
            self.keywords.add_many([c.terms for c in codes], [c.term_counts for c in codes])
        else:
            for code in codes:
                self.keywords.add(code.terms, code.term_counts)
        self.size = end
        self.version += 1

    def arrays(self, forget_epoch: int) -> PartitionArrays:
        """The live rows, compacted, as a snapshot saves them."""
        keep = np.flatnonzero(self.alive[: self.size])
        skipped = ("alive", "tags", "vectors")  # vectors: a snapshot reads them from the table (see `snapshot`)
        terms, tf, sizes = self.keywords.documents(keep)
        return PartitionArrays(
            watermark=self.watermark,
            forget_epoch=forget_epoch,
            columns={name: getattr(self, name)[keep] for name in _COLUMNS if name not in skipped},
            tags=[tuple(tags) for tags in self.tags[keep].tolist()],
            doc_terms=terms,
            doc_tf=tf,
            doc_sizes=sizes,
        )

    def restore(self, arrays: PartitionArrays, saved_rows: SavedRows | None = None) -> None:
        """Fill an empty partition from a snapshot's arrays (with the vectors read for them) or its rows decoded;
        it then reflects the log up to their watermark. `saved_rows`: the vectors instead as the rows of the saved
        HNSW file and the row of each slot (see `vectors`)."""
        n = len(arrays.columns["ids"])
        # The arrays as they come (no copy into zeroed columns): `_reserve` grows them on the next write.
        for name, column in arrays.columns.items():
            setattr(self, name, column)
        if saved_rows is not None:
            self._pending = saved_rows
        elif arrays.columns["vectors"].dtype == np.float16:
            self._pending = SavedRows(arrays.columns["vectors"])
        self.alive = np.ones(n, dtype=bool)
        self.tags = np.empty(n, dtype=object)
        for slot, tags in enumerate(arrays.tags):
            self.tags[slot] = tags
        self.slot_of = dict(zip(arrays.columns["ids"].tolist(), range(n), strict=True))
        self.keywords.restore(arrays.doc_terms, arrays.doc_tf, arrays.doc_sizes)
        self.size = n
        self.watermark = arrays.watermark
        self.version += 1
        self.unsaved = 0

    def upsert(self, learning_id: int, vector: Vectors, codes: RowCodes) -> None:
        self._note_change()
        old = self.slot_of.get(learning_id)
        # A status or category change keeps the vector, and the index needs no costly re-insert for it.
        moved = old is None or not np.array_equal(self.vector_rows([old])[0], vector)
        self._kill(learning_id)
        self.bulk_load([learning_id], vector.reshape(1, -1), [codes])
        if self.ann is not None and moved:
            self.unindexed[learning_id] = None
            if len(self.unindexed) > _MAX_UNINDEXED:  # writes without a pause: keep the exact part small
                self.index_pending(len(self.unindexed) - _MAX_UNINDEXED)
        self._maybe_compact()

    def touch(self, learning_id: int, hits: int) -> None:
        """A change only ranking reads (a retrieval's hit count): in place, no new slot, filters unchanged."""
        slot = self.slot_of.get(learning_id)
        if slot is not None:
            self.hits[slot] = hits
            self._note_change()

    def _note_change(self) -> None:
        if self.unsaved is not None:
            self.unsaved += 1

    def coverage(self, slots: Slots, terms: Sequence[int], asked: int) -> npt.NDArray[np.float64] | None:
        """The share of the query's keyword weight each of `slots` holds: the IDF of the query's terms it contains
        over the IDF of all of them (`asked` terms, of which `terms` are known to the store; an unknown term
        weighs as much as the rarest possible one). Unlike a BM25 score, it does not move with the partition's
        size: "which yeast?" matched on "use" alone holds a small share however many learnings there are.
        None when the query weighs nothing."""
        if asked == 0:
            return None
        weights = self.keywords.idf_weights(terms)
        unknown = (asked - len(set(terms))) * self.keywords.max_idf()
        total = sum(weights.values()) + unknown
        if total <= 0:
            return None
        return self._held_at(terms, slots) / total

    def _held_at(self, terms: Sequence[int], slots: Slots) -> npt.NDArray[np.float64]:
        """`KeywordIndex.held_weight` at `slots`, from the keyword search of the same query and rows if it ran."""
        if self._weighed is not None and self._weighed[0] == (tuple(terms), self.version):
            return held_at(self._weighed[1], slots)
        every = self.keywords.held_weight(terms)
        inside = slots < every.size  # a slot the keyword index has not reached holds no term yet
        held = np.zeros(len(slots), dtype=np.float64)
        held[inside] = every[slots[inside]]
        return held

    def remove(self, learning_id: int) -> None:
        self._note_change()
        if self._kill(learning_id) and self.ann is not None:
            self.unindexed.pop(learning_id, None)
            self.ann.remove(learning_id)
            self.ann_dirty = True
        self._maybe_compact()

    def index_pending(self, limit: int | None = None) -> bool:
        """Add up to `limit` (default: all) of the unindexed vectors to the ANN index; True while some remain."""
        if self.ann is None:
            self.unindexed.clear()
            return False
        ids = list(itertools.islice(self.unindexed, limit))
        if ids:
            self.ann.upsert(np.array(ids, dtype=np.int64), self.vector_rows([self.slot_of[i] for i in ids]))
            self.ann_dirty = True
            for learning_id in ids:
                del self.unindexed[learning_id]
        return bool(self.unindexed)

    def _kill(self, learning_id: int) -> bool:
        slot = self.slot_of.pop(learning_id, None)
        if slot is None:
            return False
        self.alive[slot] = False
        self.keywords.kill(slot)
        self.version += 1
        return True

    def _maybe_compact(self) -> None:
        dead = self.size - self.n
        if dead < max(_MIN_DEAD_FOR_COMPACTION, self.size // 4):
            return
        keep = np.flatnonzero(self.alive[: self.size]).astype(np.int32)
        for name in _COLUMNS:
            setattr(self, name, getattr(self, name)[keep].copy())
        self.size = len(keep)
        self.slot_of = {int(i): s for s, i in enumerate(self.ids[: self.size].tolist())}
        self.keywords.compact(keep)
        self.version += 1

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
        live = np.flatnonzero(self.alive[: self.size])
        self.ann = Ann.build(self.dim, self.ids[live], self.vectors[live], self.ef)
        self.ann_dirty = True
        self.unindexed.clear()
        self.save_ann()

    def _load_ann(self) -> bool:
        assert self.ann_path is not None
        saved = self._saved_ann()
        if saved is None:
            return False
        ann, saved_at = saved
        changed = self.changes_since(saved_at) if saved_at <= self.watermark else None
        if changed is None:
            return False  # saved by a newer writer, or the change log no longer covers the gap
        for learning_id in set(changed):  # replay what happened since the file was written
            slot = self.slot_of.get(learning_id)
            if slot is None:
                ann.remove(learning_id)
            else:
                ann.upsert(np.array([learning_id], dtype=np.int64), self.vector_rows([slot]))
        if ann.live != self.n:
            return False
        self.ann = ann
        self.ann_dirty = bool(changed)
        self.unindexed.clear()
        return True

    def _saved_ann(self) -> tuple[Ann, int] | None:
        """The saved index and the seq it was saved at: the one `preload_saved_ann` loaded (with the seq read with
        it, should another process have saved a newer one since), else the files'."""
        if self.preloaded_ann is not None:
            (ann, saved_at), self.preloaded_ann = self.preloaded_ann, None
            return ann, saved_at
        assert self.ann_path is not None
        meta_path = self.ann_path.with_suffix(".json")
        if not (self.ann_path.exists() and meta_path.exists()):
            return None
        try:  # the metadata first: a writer replaces the index, then its metadata
            meta = json.loads(meta_path.read_text())
            capacity, deleted = 2 * self.n + 1024, meta.get("deleted", [])
            if meta.get("layout") == _LINKS_ONLY:
                ann = Ann.load_links(self.ann_path, capacity, deleted, self._vectors_of, self.ef)
            else:  # a whole hnswlib file (from `_LINKS_ONLY_BELOW` vectors, and as saved before that layout)
                ann = Ann.load(self.ann_path, self.dim, capacity, deleted, self.ef)
            return ann, int(meta["watermark"])
        except (OSError, ValueError, KeyError, RuntimeError, EOFError):
            return None

    def preload_saved_ann(self, rows: int, newest: int) -> tuple[int, npt.NDArray[np.int64], Vectors] | None:
        """Load the saved index now if it is a whole hnswlib file (which holds every indexed vector as float32)
        from a reader that had seen no commit past `newest`, the log's newest seq, for a partition of `rows`
        live rows; returns the seq it was saved at with its elements' labels and vectors (`Ann.load_with_vectors`:
        the caller takes the vectors of rows unchanged since then from it), or None when there is no such file."""
        if self.ann_path is None or rows < self.ann_threshold:
            return None
        try:
            meta = json.loads(self.ann_path.with_suffix(".json").read_text())
            saved_at = int(meta["watermark"])
            if meta.get("layout") == _LINKS_ONLY or saved_at > newest:
                return None
            capacity, deleted = 2 * rows + 1024, meta.get("deleted", [])
            ann, labels, vectors = Ann.load_with_vectors(self.ann_path, self.dim, capacity, deleted, self.ef)
        except (OSError, ValueError, KeyError, RuntimeError, EOFError, ImportError):
            return None
        self.preloaded_ann = ann, saved_at
        return saved_at, labels, vectors

    def _vectors_of(self, ids: npt.NDArray[np.uint64]) -> npt.NDArray[Any]:
        """The vectors of learning `ids` (zeros for an id no longer live), as the partition holds them (a restored
        partition's float16, which the index converts as it copies them in; an idle step converts the partition's
        own later). Usually the index holds every live row in slot order: then they are the partition's rows."""
        found = map(self.slot_of.get, ids.tolist(), itertools.repeat(-1, len(ids)))
        slots = np.fromiter(found, dtype=np.int64, count=len(ids))
        if self._pending is not None and self._pending.order is not None:
            self.vectors  # noqa: B018 (in slot order first)
        rows = self._vectors if self._pending is None else self._pending.rows
        if len(slots) == self.size and np.array_equal(slots, np.arange(self.size)):
            return rows[: self.size]
        vectors = np.zeros((len(ids), self.dim), dtype=rows.dtype)
        known = slots >= 0
        vectors[known] = rows[slots[known]]
        return vectors

    def save_ann(self) -> None:
        if self.ann_path is not None:
            self.index_pending()  # the file must hold every vector up to the watermark it records
        if self.ann is None or self.ann_path is None or not self.ann_dirty:
            return
        self.ann_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.ann_path.with_suffix(".tmp")
        links_only = self.ann.live < _LINKS_ONLY_BELOW
        if links_only:
            self.ann.save_links(tmp)
        else:
            self.ann.index.save_index(str(tmp))
        os.replace(tmp, self.ann_path)
        meta: dict[str, object] = {"watermark": self.watermark, "count": self.n, "deleted": sorted(self.ann.deleted)}
        if links_only:
            meta["layout"] = _LINKS_ONLY
        self.ann_path.with_suffix(".json").write_text(json.dumps(meta))
        self.ann_dirty = False

    def drop_ann_files(self) -> None:
        if self.ann_path is not None:
            for path in (self.ann_path, self.ann_path.with_suffix(".json")):
                path.unlink(missing_ok=True)

    # -- queries -------------------------------------------------------------------------------------

    def select(self, filters: Filters, codebook: Codebook) -> Selection:
        """Slots that are alive and pass the filters."""
        if self._selections_version != self.version:
            self._selections, self._selections_version = {}, self.version
        key = (
            tuple(sorted(filters.statuses)),
            filters.namespace,
            None if filters.categories is None else tuple(sorted(filters.categories)),
            None if filters.types is None else tuple(sorted(filters.types)),
        )
        found = self._selections.get(key)
        if found is None:
            mask = self._build_mask(filters, codebook)
            mask.setflags(write=False)
            found = self._selections[key] = Selection(mask, int(np.count_nonzero(mask)))
        return found

    def _build_mask(self, filters: Filters, codebook: Codebook) -> Mask:
        size = self.size
        mask = self.alive[:size].copy()

        def restrict(column: npt.NDArray[Any], allowed: list[int]) -> None:
            nonlocal mask
            if len(allowed) == 1:  # the usual case (one namespace), and far cheaper than isin
                mask &= column[:size] == allowed[0]
            else:
                mask &= np.isin(column[:size], np.asarray(allowed, dtype=column.dtype))

        statuses = {STATUS_CODES[s] for s in filters.statuses if s in STATUS_CODES}
        if statuses != set(STATUS_CODES.values()):
            restrict(self.status, sorted(statuses))
        if filters.namespace is not None:
            restrict(self.namespace, _codes(codebook, [filters.namespace]))
        if filters.categories is not None:
            restrict(self.category, _codes(codebook, filters.categories))
        if filters.types is not None:
            restrict(self.type, _codes(codebook, [t.value for t in filters.types]))
        return mask

    def search(self, vector: Vectors, k: int, selection: Selection) -> list[tuple[int, float]]:
        """(learning id, cosine similarity) of the nearest live rows passing `selection`, best first."""
        slots, similarities = self.search_slots(vector, k, selection)
        return list(zip(self.ids[slots].tolist(), similarities.tolist(), strict=True))

    def search_slots(self, vector: Vectors, k: int, selection: Selection) -> tuple[Slots, Scores]:
        """Slots and cosine similarities of the nearest live rows passing `selection`, best first."""
        if self.n == 0 or k <= 0:
            return _NO_SLOTS, _NO_SCORES
        self.ensure_ann()
        if self.ann is not None and selection.count / self.size > 0.25:
            everything = selection.count == self.n  # every live row passes, and the index holds only live rows
            wanted = k if everything else k * 2  # room for the rows the filters drop
            labels, similarities = self.ann.query_arrays(vector, wanted)
            if self.unindexed:
                labels, similarities = self._with_unindexed(labels, similarities, vector, wanted)
            # dict.get over the labels in C (`map` with a default per label), not a generator of Python calls.
            found = map(self.slot_of.get, labels.tolist(), itertools.repeat(-1, len(labels)))
            slots = np.fromiter(found, dtype=np.int64, count=len(labels))
            keep = slots >= 0
            if not everything:
                keep[keep] = selection.mask[slots[keep]]
            kept = int(np.count_nonzero(keep))
            if kept >= min(k, selection.count):
                if kept == len(slots):  # the usual case: every label is a live slot that passes (no gathers)
                    return slots[:k], similarities[:k]
                return slots[keep][:k], similarities[keep][:k]
        return self._top(self.vectors[: self.size] @ vector, k, selection.mask, positive_only=False)

    def _with_unindexed(self, labels: Ids, similarities: Scores, vector: Vectors, k: int) -> tuple[Ids, Scores]:
        """ANN hits with the unindexed rows scored exactly (their index entries, if any, are stale), best first."""
        pending = np.fromiter(self.unindexed, dtype=np.int64, count=len(self.unindexed))
        ids, scores = pending, self.vector_rows([self.slot_of[i] for i in pending.tolist()]) @ vector
        if len(ids) > k:
            best = np.argpartition(-scores, k - 1)[:k]
            ids, scores = ids[best], scores[best]
        indexed = ~np.isin(labels, pending)
        merged_ids = np.concatenate((labels[indexed], ids))
        merged = np.concatenate((similarities[indexed], scores.astype(np.float32, copy=False)))
        order = np.argsort(-merged, kind="stable")
        return merged_ids[order], merged[order]

    def keyword_search(self, terms: Sequence[int], k: int, selection: Selection) -> list[tuple[int, float]]:
        """(learning id, BM25 score) of the best keyword matches passing `selection`, best first."""
        slots, scores = self.keyword_slots(terms, k, selection)
        return list(zip(self.ids[slots].tolist(), scores.tolist(), strict=True))

    def keyword_slots(self, terms: Sequence[int], k: int, selection: Selection) -> tuple[Slots, Scores]:
        """Slots and BM25 scores of the best keyword matches passing `selection`, best first."""
        scores, matched = self.keywords.weigh(terms)
        self._weighed = ((tuple(terms), self.version), matched)  # what `coverage` of the same query reads
        if scores is None:
            return _NO_SLOTS, _NO_SCORES
        # Every slot live and passing (no dead slots, no filter): the mask would change nothing, and ANDing it in is
        # a pass over every slot (about 15 µs at 100k).
        everything = selection.count == self.size
        return self._top(scores[: self.size], k, None if everything else selection.mask, positive_only=True)

    def _top(self, scores: Scores, k: int, mask: Mask | None, *, positive_only: bool) -> tuple[Slots, Scores]:
        if positive_only:
            # One boolean mask, then its nonzero slots: numpy finds the nonzero entries of a bool array several times
            # faster than those of a float32 one (10k slots: 11 against 52 µs; 100k: 103 against 587 µs).
            positive = scores > 0
            slots = (positive if mask is None else positive & mask[: len(scores)]).nonzero()[0]
        else:
            assert mask is not None
            slots = mask.nonzero()[0]
        if slots.size == 0:
            return _NO_SLOTS, _NO_SCORES
        values = scores[slots]
        # The arrays' methods: numpy's function wrappers (`np.argsort` and the like) cost microseconds each.
        if slots.size > k:
            best = (-values).argpartition(k - 1)[:k]
            slots, values = slots[best], values[best]
        order = (-values).argsort(kind="stable")
        return slots[order], values[order]

    def near_simhash(self, simhash: int, max_distance: int, selection: Selection) -> list[tuple[int, int]]:
        if self.n == 0:
            return []
        distances = np.bitwise_count(self.simhash[: self.size] ^ np.uint64(simhash))
        slots = np.flatnonzero((distances <= max_distance) & selection.mask)
        order = slots[np.argsort(distances[slots], kind="stable")]
        return list(zip(self.ids[order].tolist(), distances[order].astype(int).tolist(), strict=True))


def _codes(codebook: Codebook, values: Iterable[str]) -> list[int]:
    return sorted({code for value in values if (code := codebook.known(value)) is not None})
