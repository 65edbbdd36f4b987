"""The in-memory search partitions of one SQLite file: loading, following the change log, evicting.

A partition is one (tenant, user) slice of the live learnings. It is loaded on first use, brought up to
date from `vector_changes` before every use (so writes from other processes are seen), and evicted least
recently used when the cache holds too many vectors. Only the store's connection thread touches it. The
log is pruned (see `changelog`): a partition that fell behind the pruned part is loaded again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from ...models import Filters, Learning, Scope, Status, utcnow
from ...terms import index_terms
from ..base import SearchRequest, Vector
from ..retention import DEFAULT_RETENTION
from ..search.fusion import Hits, Ranking, fuse_hits, partition_keys
from ..search.keywords import TermCodebook
from ..search.partition import Partition
from ..search.row_codes import STATUS_CODES, Codebook, RowCodes
from .changelog import LOG_BOUNDS, change_log_pruner
from .connection import read_transaction
from .event_retention import retrieval_compactor
from .rows import vector_from_blob

__all__ = ["PartitionCache", "PartitionKey"]

PartitionKey = tuple[str, str]

# Vectors indexed per idle step: a job arriving meanwhile waits about a millisecond at most.
_INDEX_STEP = 4
_COLUMNS = (
    "id, status, category, namespace, type, simhash64, embedding, text, topic, tags, hits, updated_at, said_at, "
    "event_at, event_until"
)
# Positions after `_COLUMNS` in a catch-up read.
_TENANT, _USER, _MODEL = 15, 16, 17
_NONE = float("nan")


class PartitionCache:
    def __init__(
        self,
        path: str,
        *,
        embedding_model: str,
        dimension: int,
        ann_threshold: int,
        max_vectors: int,
        change_retention: timedelta = DEFAULT_RETENTION.change_log,
        retrieval_retention: timedelta = DEFAULT_RETENTION.retrieval_events,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.path = path
        self.embedding_model = embedding_model
        self.dimension = dimension
        self.ann_threshold = ann_threshold
        self.max_vectors = max_vectors
        self.codebook = Codebook()
        self.terms = TermCodebook()
        self._partitions: OrderedDict[PartitionKey, Partition] = OrderedDict()
        self._forget_epoch: int | None = None
        self._pruner = change_log_pruner(change_retention, clock)
        self._compactor = retrieval_compactor(retrieval_retention, clock)
        self._unindexed: set[PartitionKey] = set()  # partitions that may hold vectors their ANN index lacks
        # PRAGMA data_version as last read on the store's thread: other threads may read it (an int, set
        # whole) to tell whether another process has committed since (see SQLiteToolStore.may_know).
        self.data_version_seen = -1

    # -- queries -------------------------------------------------------------------------------------

    def search(self, conn: sqlite3.Connection, scope: Scope, request: SearchRequest) -> tuple[Hits, Ranking]:
        """Vector and keyword hits of the scope's partitions, filtered before top-k: id → ranks and scores,
        and what ranking reads of each hit (status, hits, updated_at, tags), as of this search."""
        partitions = [self.get(conn, key) for key in partition_keys(scope, request.filters.include_global)]
        return fuse_hits(partitions, request, self.codebook, self.terms, self.dimension)

    def touch(self, scope: Scope, learnings: Sequence[Learning]) -> None:
        """Retrievals' new hit counts, committed by this process: into the loaded partitions, in place.

        Other processes' retrievals change only these counts, which are not in the change log (a row per
        hit would outgrow everything else); their partitions see them when the row next changes or reloads.
        """
        for learning in learnings:
            partition = self._partitions.get((scope.tenant, learning.user or ""))
            if partition is not None:
                partition.touch(learning.id, learning.hits, learning.updated_at.timestamp())

    def near_simhash(
        self,
        conn: sqlite3.Connection,
        scope: Scope,
        simhash: int,
        max_distance: int,
        namespace: str | None,
        include_global: bool,
    ) -> list[tuple[int, int]]:
        filters = Filters(namespace=namespace)
        found: list[tuple[int, int]] = []
        for key in partition_keys(scope, include_global):
            partition = self.get(conn, key)
            found += partition.near_simhash(simhash, max_distance, partition.select(filters, self.codebook))
        return sorted(found, key=lambda pair: pair[1])

    def nearest(
        self, conn: sqlite3.Connection, owner: Scope, vector: Vector, namespace: str | None, k: int
    ) -> list[tuple[int, float]]:
        """The owner's own partition only (exactly that user, or the global one for user None)."""
        partition = self.get(conn, (owner.tenant, owner.user or ""))
        query = np.ascontiguousarray(vector, dtype=np.float32)
        return partition.search(query, k, partition.select(Filters(namespace=namespace), self.codebook))

    # -- lifecycle -----------------------------------------------------------------------------------

    def _follow_log(self, conn: sqlite3.Connection) -> tuple[int, int]:
        """The log's newest seq and the highest seq pruned from it. A user forgotten by any process: drop every
        cached partition (without saving its ANN index, which may hold that user's vectors); the others reload
        from the file on their next use."""
        newest, pruned_through, epoch = conn.execute(LOG_BOUNDS).fetchone()
        if self._forget_epoch is not None and epoch != self._forget_epoch:
            self._partitions.clear()
        self._forget_epoch = epoch
        return int(newest), int(pruned_through)

    @staticmethod
    def _stamp(conn: sqlite3.Connection) -> tuple[int, int]:
        """Moves whenever anything may have changed the file: another connection committed (data_version) or
        this one wrote (total_changes). While it stands still, the change log has nothing new to replay."""
        return conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes

    def get(self, conn: sqlite3.Connection, key: PartitionKey) -> Partition:
        stamp = self._stamp(conn)
        self.data_version_seen = stamp[0]
        partition = self._partitions.get(key)
        if partition is not None and partition.synced == stamp:
            self._partitions.move_to_end(key)
            return partition
        rows: list[Any] = []
        # The log's bounds and the replay in one snapshot: a prune committed in between cannot hide rows.
        with read_transaction(conn):
            newest, pruned_through = self._follow_log(conn)
            partition = self._partitions.get(key)
            if partition is not None and partition.watermark < pruned_through:
                del self._partitions[key]  # changes it has not replayed are gone from the log
                partition = None
            if partition is None:
                rows = conn.execute(
                    f"SELECT {_COLUMNS} FROM learnings "
                    "WHERE tenant = ? AND user_id = ? AND status != 'deprecated' AND embedding_model = ?",
                    (key[0], key[1], self.embedding_model),
                ).fetchall()
            else:
                self._catch_up(conn, key, partition, newest)
        if partition is None:
            partition = self._load(conn, key, newest, rows)
            self._partitions[key] = partition
            self._evict()
        else:
            self._partitions.move_to_end(key)
        partition.synced = stamp
        return partition

    def housekeeping(self, conn: sqlite3.Connection) -> bool:
        """One idle step: prune the change log or compact old retrieval events when a pass is due (rarely), else
        index new vectors; True while more remains."""
        return self._pruner.step(conn) or self._compactor.step(conn) or self.index_pending(conn)

    def index_pending(self, conn: sqlite3.Connection) -> bool:
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

    def close(self) -> None:
        for partition in self._partitions.values():
            partition.save_ann()
        self._partitions.clear()

    def _ann_path(self, key: PartitionKey) -> Path | None:
        if self.path == ":memory:":
            return None
        digest = hashlib.blake2b(f"{key[0]}\x00{key[1]}\x00{self.embedding_model}".encode(), digest_size=12)
        return Path(self.path + ".ann") / f"{digest.hexdigest()}.hnsw"

    def _codes(self, row: Sequence[Any]) -> RowCodes:
        """Codes of a row selected with `_COLUMNS`."""
        _, status, category, namespace, type_, sim, _, text, topic, tags, hits, updated_at, said, start, end = row[:15]
        tag_list = json.loads(tags)
        terms, counts = self.terms.encode(index_terms(f"{text}\n{topic}\n{' '.join(tag_list)}"))
        return RowCodes(
            status=STATUS_CODES[Status(status)],
            category=self.codebook.code(category),
            namespace=self.codebook.code(namespace),
            type=self.codebook.code(type_),
            simhash=int(sim, 16),
            hits=hits,
            updated_at=updated_at,
            tags=tuple(tag_list),
            terms=terms,
            term_counts=counts,
            said_at=_NONE if said is None else said,
            event_at=_NONE if start is None else start,
            event_until=_NONE if end is None else end,
        )

    def _load(self, conn: sqlite3.Connection, key: PartitionKey, watermark: int, rows: list[Any]) -> Partition:
        """A partition of `rows`, read (with `_COLUMNS`) in the snapshot in which `watermark` was the log's newest."""
        partition = Partition(
            self.dimension,
            watermark,
            self.ann_threshold,
            self._ann_path(key),
            functools.partial(self._changes_since, conn, key),
        )
        if rows:
            vectors = np.frombuffer(b"".join(row[6] for row in rows), dtype=np.float32).reshape(len(rows), -1)
            partition.bulk_load([r[0] for r in rows], vectors, [self._codes(r) for r in rows])
            partition.keywords.freeze()
        return partition

    @staticmethod
    def _changes_since(conn: sqlite3.Connection, key: PartitionKey, seq: int) -> list[int] | None:
        """Learnings changed after `seq`; None when the log was pruned past it (a saved index that old is
        rebuilt, not trusted)."""
        with read_transaction(conn):
            if conn.execute(LOG_BOUNDS).fetchone()[1] > seq:
                return None
            rows = conn.execute(
                "SELECT learning_id FROM vector_changes WHERE tenant = ? AND user_id = ? AND seq > ?",
                (key[0], key[1], seq),
            ).fetchall()
        return [r[0] for r in rows]

    def _catch_up(self, conn: sqlite3.Connection, key: PartitionKey, partition: Partition, newest: int) -> None:
        """Called in the snapshot in which `newest`, the log's newest seq, was read."""
        if newest <= partition.watermark:
            return
        changes = conn.execute(
            "SELECT seq, learning_id FROM vector_changes WHERE tenant = ? AND user_id = ? AND seq > ? ORDER BY seq",
            (key[0], key[1], partition.watermark),
        ).fetchall()
        if not changes:
            # Up to date through `newest` even when only other partitions changed: a watermark left behind
            # would fall under the pruned part of the log and force a needless reload.
            partition.watermark = newest
            return
        ids = sorted({learning_id for _, learning_id in changes})
        marks = ", ".join("?" for _ in ids)
        rows = conn.execute(
            f"SELECT {_COLUMNS}, tenant, user_id, embedding_model FROM learnings WHERE id IN ({marks})", ids
        ).fetchall()
        current = {row[0]: row for row in rows}
        for learning_id in ids:
            row = current.get(learning_id)
            if (
                row is not None
                and row[1] != "deprecated"
                and (row[_TENANT], row[_USER]) == key
                and row[_MODEL] == self.embedding_model
                and row[6] is not None
            ):
                partition.upsert(learning_id, vector_from_blob(row[6]), self._codes(row))
            else:
                partition.remove(learning_id)
        partition.watermark = newest
        if partition.unindexed:
            self._unindexed.add(key)

    def _evict(self) -> None:
        total = sum(p.n for p in self._partitions.values())
        while total > self.max_vectors and len(self._partitions) > 1:
            _, oldest = self._partitions.popitem(last=False)
            oldest.save_ann()
            total -= oldest.n
