"""Which search partitions a process holds in memory, and keeping them current: loading, catching up, evicting.

A partition is one (tenant, user) slice of the live learnings (`partition.Partition`). It is loaded on first
use, brought up to date from the backend's change log before every use (so writes of other processes are
seen), and evicted least recently used when the cache holds too many vectors. Only the store's connection
thread touches it. The log is pruned: a partition that fell behind the pruned part is loaded again.

Nothing here is SQL: the backend reads rows and the log through a `PartitionSource` and runs its own
maintenance passes, which the idle step calls before indexing new vectors.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from ...models import Filters, Scope
from ..candidate_pool import CandidatePool
from ..records import Counted, SearchRequest, Vector
from .ann import ef_schedule
from .embeddings import embedding_vector, quantised_rows
from .fusion import fuse_hits, partition_keys
from .keywords import TermCodebook
from .partition import Partition, SavedRows
from .row_codes import Codebook
from .row_decoding import (
    EMBEDDING,
    PARTITION_FIELDS,
    aligned,
    alignment,
    decode_rows,
    joined_halves,
    row_codes,
    vectors_for,
)
from .snapshot import read_snapshot, write_snapshot

__all__ = ["PARTITION_FIELDS", "LogBounds", "PartitionCache", "PartitionKey", "PartitionSource"]

log = logging.getLogger("learnloop.vectors")

PartitionKey = tuple[str, str]
Conn = TypeVar("Conn")
Conn_contra = TypeVar("Conn_contra", contravariant=True)

# Vectors indexed per idle step: a job arriving meanwhile waits about a millisecond at most.
_INDEX_STEP = 4
# A partition this small loads from its rows in a few tens of milliseconds: no snapshot file for it.
_SNAPSHOT_MIN_ROWS = 2_000
# Changes a partition restored from its snapshot replays from the log at most (or a fifth of its rows, if more):
# beyond that, reading every row costs less than replaying them one by one.
_REPLAY_AT_MOST = 2_000
# Unsaved changes (or a tenth of the rows, if more) after which an idle step saves the snapshot again: the log
# replay on the next load stays short.
_SNAPSHOT_BEHIND = 1_000


class LogBounds(NamedTuple):
    newest: int  # the change log's newest seq (also when every row has been pruned)
    pruned_through: int  # the highest seq pruned from it: a reader behind it has lost changes
    forget_epoch: int  # moves whenever a user is forgotten, by any process


class PartitionSource(Protocol[Conn_contra]):
    """The reads a backend answers for the cache, each on the store's connection."""

    def stamp(self, conn: Conn_contra) -> Hashable:
        """A value that moves whenever anything may have changed the data (another connection committed, or
        this one wrote): while it stands still, the change log has nothing new to replay."""
        ...

    def snapshot(self, conn: Conn_contra) -> AbstractContextManager[object]:
        """One consistent read snapshot for the calls inside it."""
        ...

    def log_bounds(self, conn: Conn_contra) -> LogBounds: ...

    def live_rows(self, conn: Conn_contra, key: PartitionKey, ids: Sequence[int] | None) -> list[Sequence[Any]]:
        """The partition's live (not deprecated) learnings embedded with the store's model, as `PARTITION_FIELDS`:
        all of them, or (with `ids`) those of `ids` that still are."""
        ...

    def live_vectors(self, conn: Conn_contra, key: PartitionKey) -> list[Sequence[Any]]:
        """(id, embedding as stored) of the same learnings as `live_rows` with no `ids`: the vectors of a partition
        restored from its snapshot, which does not hold them."""
        ...

    def changed(self, conn: Conn_contra, key: PartitionKey, after: int) -> list[int]:
        """Learnings of the partition the change log records after seq `after` (repeats allowed)."""
        ...

    def live_embeddings(self, conn: Conn_contra, key: PartitionKey) -> tuple[npt.NDArray[np.int64], bytes] | None:
        """The ids of `live_vectors`' rows and their stored embeddings joined in the same order, in one value (no
        object per row), if the backend reads them so; None: the cache reads `live_vectors`."""
        ...


class PartitionCache(Generic[Conn]):
    """`passes` are the backend's maintenance passes for idle time (each: run if due, True while a backlog
    remains); `ann_dir` holds the partitions' saved HNSW indexes (None: not saved)."""

    def __init__(
        self,
        source: PartitionSource[Conn],
        *,
        embedding_model: str,
        dimension: int,
        ann_threshold: int,
        max_vectors: int,
        ann_dir: Path | None,
        passes: Sequence[Callable[[Conn], bool]] = (),
    ) -> None:
        self.source = source
        self.embedding_model = embedding_model
        self.dimension = dimension
        self.ann_threshold = ann_threshold
        self.max_vectors = max_vectors
        self.ann_dir = ann_dir
        self.passes = tuple(passes)
        self.codebook = Codebook()
        self.terms = TermCodebook()
        self._partitions: OrderedDict[PartitionKey, Partition] = OrderedDict()
        self._forget_epoch: int | None = None
        self._unindexed: set[PartitionKey] = set()  # partitions that may hold vectors their ANN index lacks

    # -- queries -------------------------------------------------------------------------------------

    def search(self, conn: Conn, scope: Scope, request: SearchRequest, stamp: Hashable | None = None) -> CandidatePool:
        """Vector and keyword hits of the scope's partitions, filtered before top-k, with their ranks and scores
        and what ranking reads of each hit (status, hits, updated_at, tags, dates), as of this search (`stamp`:
        the source's, just read by the caller on this connection)."""
        # One stamp for every partition of the search: nothing is committed between their checks (this thread or
        # the caller holding the connection runs them back to back).
        if stamp is None:
            stamp = self.source.stamp(conn)
        partitions = [self.get(conn, key, stamp) for key in partition_keys(scope, request.filters.include_global)]
        return fuse_hits(partitions, request, self.codebook, self.terms, self.dimension)

    def current(self, conn: Conn, scope: Scope, include_global: bool, seen: list[Hashable] | None = None) -> bool:
        """Whether a search of the scope would find its partitions loaded and up to date (nothing to read or
        replay first: it runs in memory, in a millisecond or two). If so, the stamp read is added to `seen`, for
        the search that runs next on the same connection and thread (one PRAGMA less on the caller's thread)."""
        keys = partition_keys(scope, include_global)
        if any(key not in self._partitions for key in keys):
            return False
        stamp = self.source.stamp(conn)
        if all(self._partitions[key].synced == stamp for key in keys):
            if seen is not None:
                seen.append(stamp)
            return True
        return False

    def keep_current(
        self, conn: Conn, write: Callable[[], None], also: Hashable | None = None
    ) -> tuple[Hashable, Hashable] | None:
        """Run `write`, this process's bookkeeping (hit counts, which `touch` applies to the partitions in place).
        Its commit moves the source's stamp, so every partition would look stale and the next search of each
        would leave the caller's thread only to find nothing to replay. When the change log stood still across
        it (nothing to replay, no prune, no forget), the partitions current before are current after. Returns the
        stamps before and after it when a partition or another holder (current at `also`, a stamp) was current
        before it, else None."""
        before, bounds = self.source.stamp(conn), self.source.log_bounds(conn)
        write()
        held = [p for p in self._partitions.values() if p.synced == before]
        if also != before and not held:
            return None
        # The stamp before the bounds: a commit of another process between the two reads moves the bounds too.
        after = self.source.stamp(conn)
        if self.source.log_bounds(conn) == bounds:
            for partition in held:
                partition.synced = after
        return before, after

    def touch(self, scope: Scope, counted: Sequence[Counted]) -> None:
        """Retrievals' new hit counts, committed by this process: into the loaded partitions, in place.

        Other processes' retrievals change only these counts, which are not in the change log (a row per
        hit would outgrow everything else); their partitions see them when the row next changes or reloads.
        """
        for learning in counted:
            partition = self._partitions.get((scope.tenant, learning.user or ""))
            if partition is not None:
                partition.touch(learning.id, learning.hits)

    def near_simhash(
        self, conn: Conn, scope: Scope, simhash: int, max_distance: int, namespace: str | None, include_global: bool
    ) -> list[tuple[int, int]]:
        filters = Filters(namespace=namespace)
        found: list[tuple[int, int]] = []
        for key in partition_keys(scope, include_global):
            partition = self.get(conn, key)
            found += partition.near_simhash(simhash, max_distance, partition.select(filters, self.codebook))
        return sorted(found, key=lambda pair: pair[1])

    def nearest(
        self, conn: Conn, owner: Scope, vector: Vector, namespace: str | None, k: int
    ) -> list[tuple[int, float]]:
        """The owner's own partition only (exactly that user, or the global one for user None)."""
        partition = self.get(conn, (owner.tenant, owner.user or ""))
        query = np.ascontiguousarray(vector, dtype=np.float32)
        return partition.search(query, k, partition.select(Filters(namespace=namespace), self.codebook))

    # -- lifecycle -----------------------------------------------------------------------------------

    def _follow_log(self, conn: Conn) -> LogBounds:
        """The log's bounds. A user forgotten by any process: drop every cached partition (without saving its
        ANN index, which may hold that user's vectors); the others reload on their next use."""
        bounds = self.source.log_bounds(conn)
        if self._forget_epoch is not None and bounds.forget_epoch != self._forget_epoch:
            self._partitions.clear()
        self._forget_epoch = bounds.forget_epoch
        return bounds

    def get(self, conn: Conn, key: PartitionKey, stamp: Hashable | None = None) -> Partition:
        """The partition, loaded or brought up to date if the source's stamp moved since it was (`stamp`: the
        source's, just read by the caller)."""
        if stamp is None:
            stamp = self.source.stamp(conn)
        partition = self._partitions.get(key)
        if partition is not None and partition.synced == stamp:
            self._partitions.move_to_end(key)
            return partition
        rows: list[Sequence[Any]] = []
        # The log's bounds and the replay in one snapshot: a prune committed in between cannot hide rows.
        with self.source.snapshot(conn):
            bounds = self._follow_log(conn)
            partition = self._partitions.get(key)
            if partition is not None and partition.watermark < bounds.pruned_through:
                del self._partitions[key]  # changes it has not replayed are gone from the log
                partition = None
            loaded = partition is None
            if partition is None:
                partition = self._restored(conn, key, bounds)
            # A snapshot far behind the log: replaying row by row would cost more than reading them all.
            if partition is not None and not self._catch_up(conn, key, partition, bounds.newest, loaded):
                partition = None
            if partition is None:
                rows = self.source.live_rows(conn, key, None)
        if partition is None:
            partition = self._load(conn, key, bounds.newest, rows)
        self._partitions[key] = partition
        self._partitions.move_to_end(key)
        if loaded:
            self._evict()
        partition.synced = stamp
        return partition

    def housekeeping(self, conn: Conn) -> bool:
        """One idle step: the backend's maintenance passes when one is due (rarely), else index new vectors, else
        convert a restored partition's vectors, else save one partition's snapshot that is missing or far behind;
        True while more remains."""
        return (
            any(step(conn) for step in self.passes)
            or self.index_pending()
            or self._convert_one()
            or self._save_one_snapshot()
        )

    def _convert_one(self) -> bool:
        """Convert one restored partition's float16 vectors, so a later write or exact scan does not wait for it."""
        for partition in self._partitions.values():
            if partition.vectors_pending:
                partition.vectors  # noqa: B018 (the conversion is the point)
                return True
        return False

    def _save_one_snapshot(self) -> bool:
        for key, partition in self._partitions.items():
            behind = partition.unsaved is None or partition.unsaved >= max(_SNAPSHOT_BEHIND, partition.n // 10)
            if behind and partition.n >= _SNAPSHOT_MIN_ROWS:
                self._save_snapshot(key, partition)
                return True
        return False

    def _save_snapshot(self, key: PartitionKey, partition: Partition) -> None:
        """Save the partition's snapshot if it has changed since the last one (and is worth one)."""
        path = self._snapshot_path(key)
        if path is None or partition.unsaved == 0 or partition.n < _SNAPSHOT_MIN_ROWS or self._forget_epoch is None:
            return
        try:
            arrays = partition.arrays(self._forget_epoch)
            write_snapshot(path, arrays, self.embedding_model, self.codebook, self.terms)
        except OSError:
            log.warning("could not save the search partition snapshot %s", path, exc_info=True)
            return
        partition.unsaved = 0

    def _restored(self, conn: Conn, key: PartitionKey, bounds: LogBounds) -> Partition | None:
        """The partition from its snapshot, if there is one the log can bring up to date (called in the
        snapshot in which `bounds` were read; the caller replays the log from the snapshot's watermark)."""
        path = self._snapshot_path(key)
        if path is None:
            return None
        arrays = read_snapshot(path, self.embedding_model, self.codebook, self.terms)
        if arrays is None:
            return None
        # Written before a user was forgotten (it may hold them), or its gap no longer in the log, or written
        # by a process that had seen commits this read snapshot does not: the rows decide.
        if arrays.forget_epoch != bounds.forget_epoch or not bounds.pruned_through <= arrays.watermark <= bounds.newest:
            return None
        # The vectors as the table holds them now, in the snapshot the log is replayed in: a row changed since
        # the watermark is replayed whole, and one no longer live (its removal also in the log) is dropped.
        partition = self._new_partition(conn, key, arrays.watermark)
        ids = arrays.columns["ids"]
        taken = self._vectors_from_saved_ann(conn, key, partition, ids, bounds)
        vectors, gone = self._live_vectors(conn, key, ids) if taken is None else taken
        if isinstance(vectors, SavedRows):  # the saved index's rows as they are: the partition takes them when needed
            arrays.columns["vectors"] = np.zeros((0, self.dimension), dtype=np.float32)
            partition.restore(arrays, saved_rows=vectors)
        else:
            arrays.columns["vectors"] = vectors
            partition.restore(arrays)
        for learning_id in gone:
            partition.remove(learning_id)
        return partition

    def _vectors_from_saved_ann(
        self, conn: Conn, key: PartitionKey, partition: Partition, ids: npt.NDArray[np.int64], bounds: LogBounds
    ) -> tuple[npt.NDArray[np.float32] | SavedRows, list[int]] | None:
        """The vectors of learnings `ids` as the table holds them now, taken from the partition's saved whole
        HNSW index (which its first search loads anyway) for the rows the log shows unchanged since it was saved,
        and from the table for the others; and the ids no longer live. None when there is no such index, or the
        log no longer covers its gap, or too many rows changed since: the caller reads every vector from the
        table (at 100k rows about 0.6 s of SQLite reads, against 0.04 s to copy them out of the index)."""
        preloaded = partition.preload_saved_ann(len(ids), bounds.newest)
        if preloaded is None:
            return None
        saved_at, labels, held = preloaded
        changed = self.source.changed(conn, key, saved_at) if saved_at >= bounds.pruned_through else None
        if changed is None or len(set(changed)) > max(_REPLAY_AT_MOST, len(ids) // 5):
            partition.preloaded_ann = None
            return None
        order, absent = alignment(ids, labels)
        stale = ids[np.isin(ids, np.asarray(changed, dtype=np.int64))].tolist()
        reread = sorted(set(absent).union(stale))
        found = {row[0]: row[EMBEDDING] for row in self.source.live_rows(conn, key, reread)} if reread else {}
        # The partition keeps the mapped rows, the row of each slot and the rows read again, and reads the few it
        # scores exactly from them: gathering 100k rows into slot order cost the first query 0.1 s (a million: over
        # a second). An idle step gathers them (`Partition.vectors`).
        patched = None
        if reread:
            wanted = np.asarray(reread, dtype=np.int64)
            order = np.arange(len(ids), dtype=np.intp) if order is None else order.copy()
            slots = np.flatnonzero(np.isin(ids, wanted))
            order[slots] = -1 - np.searchsorted(wanted, ids[slots])
            patched = np.zeros((len(wanted), self.dimension), dtype=np.float32)
            for row, learning_id in enumerate(reread):
                if learning_id in found:
                    patched[row] = embedding_vector(found[learning_id])
        return SavedRows(held, order, patched), [learning_id for learning_id in reread if learning_id not in found]

    def _live_vectors(
        self, conn: Conn, key: PartitionKey, ids: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[Any], list[int]]:
        """The stored vectors of learnings `ids` as the table holds them now, and the ids no longer live."""
        joined = self.source.live_embeddings(conn, key)
        if joined is not None:
            found_ids, stored = joined
            matrix: npt.NDArray[Any] | None = joined_halves(found_ids, stored, self.dimension)
            if matrix is None:
                matrix = quantised_rows(stored, len(found_ids), self.dimension)
            if matrix is not None:
                return aligned(ids, found_ids, matrix)
        return vectors_for(ids, self.source.live_vectors(conn, key), self.dimension)

    def index_pending(self) -> bool:
        """One small step of adding new vectors to the partitions' ANN indexes; True while more remain."""
        while self._unindexed:
            key = next(iter(self._unindexed))
            partition = self._partitions.get(key)
            if partition is not None and partition.index_pending(_INDEX_STEP):
                return True
            self._unindexed.discard(key)
            if partition is not None:
                return bool(self._unindexed)
        return False

    def forget(self, key: PartitionKey) -> None:
        """Drop a partition and its persisted ANN index (the user is being forgotten)."""
        partition = self._partitions.pop(key, None)
        if partition is None:
            partition = Partition(self.dimension, 0, 0, self._ann_path(key), lambda seq: None)
        partition.drop_ann_files()
        snapshot = self._snapshot_path(key)
        if snapshot is not None:
            snapshot.unlink(missing_ok=True)

    def close(self) -> None:
        for key, partition in self._partitions.items():
            partition.save_ann()
            self._save_snapshot(key, partition)
        self._partitions.clear()

    def _snapshot_path(self, key: PartitionKey) -> Path | None:
        path = self._ann_path(key)
        return None if path is None else path.with_suffix(".snapshot")

    def _ann_path(self, key: PartitionKey) -> Path | None:
        if self.ann_dir is None:
            return None
        digest = hashlib.blake2b(f"{key[0]}\x00{key[1]}\x00{self.embedding_model}".encode(), digest_size=12)
        return self.ann_dir / f"{digest.hexdigest()}.hnsw"

    def _new_partition(self, conn: Conn, key: PartitionKey, watermark: int) -> Partition:
        return Partition(
            self.dimension,
            watermark,
            self.ann_threshold,
            self._ann_path(key),
            functools.partial(self._changes_since, conn, key),
            ef_schedule(self.embedding_model),
        )

    def _load(self, conn: Conn, key: PartitionKey, watermark: int, rows: list[Sequence[Any]]) -> Partition:
        """A partition of `rows`, read in the snapshot in which `watermark` was the log's newest."""
        partition = self._new_partition(conn, key, watermark)
        if rows:
            partition.restore(decode_rows(rows, self.dimension, self.codebook, self.terms, watermark))
            partition.unsaved = None  # no snapshot holds these rows
        return partition

    def _changes_since(self, conn: Conn, key: PartitionKey, seq: int) -> list[int] | None:
        """Learnings changed after `seq`; None when the log was pruned past it (a saved index that old is
        rebuilt, not trusted)."""
        with self.source.snapshot(conn):
            if self.source.log_bounds(conn).pruned_through > seq:
                return None
            return self.source.changed(conn, key, seq)

    def _catch_up(self, conn: Conn, key: PartitionKey, partition: Partition, newest: int, bounded: bool) -> bool:
        """Called in the snapshot in which `newest`, the log's newest seq, was read. `bounded`: replay only a
        few changes (see `_REPLAY_AT_MOST`), else return False having changed nothing."""
        if newest <= partition.watermark:
            return True
        ids = sorted(set(self.source.changed(conn, key, partition.watermark)))
        if bounded and len(ids) > max(_REPLAY_AT_MOST, partition.n // 5):
            return False
        if ids:
            current = {row[0]: row for row in self.source.live_rows(conn, key, ids)}
            for learning_id in ids:
                row = current.get(learning_id)
                if row is None:
                    partition.remove(learning_id)
                else:
                    vector = embedding_vector(row[EMBEDDING])
                    partition.upsert(learning_id, vector, row_codes(row, self.codebook, self.terms))
        # Up to date through `newest` even when only other partitions changed: a watermark left behind
        # would fall under the pruned part of the log and force a needless reload.
        partition.watermark = newest
        if partition.unindexed:
            self._unindexed.add(key)
        return True

    def _evict(self) -> None:
        total = sum(p.n for p in self._partitions.values())
        while total > self.max_vectors and len(self._partitions) > 1:
            key, oldest = self._partitions.popitem(last=False)
            oldest.save_ann()
            self._save_snapshot(key, oldest)
            total -= oldest.n
