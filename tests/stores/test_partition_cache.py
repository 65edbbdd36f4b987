"""The partition cache over a source with no SQL at all: what a second backend must answer (`PartitionSource`)
is enough for loading, catching up, reloading past a pruned log, dropping everything when a user is
forgotten, and evicting the least recently used partitions by vector count."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from learnloop.models import Filters, Scope
from learnloop.simhash import simhash64_hex
from learnloop.stores.base import SearchRequest
from learnloop.stores.search.partition_cache import LogBounds, PartitionCache, PartitionKey
from tests.conftest import TEST_DIM, unit_vector

ALICE = Scope(tenant="t1", user="alice")


class MemorySource:
    """Learnings and a change log in dicts; `stamp` moves with every write, as a database's would."""

    def __init__(self) -> None:
        self.rows: dict[int, dict[str, Any]] = {}
        self.log: list[tuple[int, PartitionKey, int]] = []  # (seq, partition, learning id)
        self.pruned_through = 0
        self.forget_epoch = 0
        self.writes = 0
        self.loads = 0

    def write(self, learning_id: int, user: str, text: str, status: str = "verified") -> None:
        self.rows[learning_id] = {"user": user, "text": text, "status": status}
        self._changed(learning_id, user)

    def delete(self, learning_id: int) -> None:
        self._changed(learning_id, self.rows.pop(learning_id)["user"])

    def _changed(self, learning_id: int, user: str) -> None:
        self.writes += 1
        self.log.append((self.writes, ("t1", user), learning_id))

    def prune(self) -> None:
        self.pruned_through = self.writes
        self.log.clear()

    # -- PartitionSource --

    def stamp(self, conn: None) -> int:
        return self.writes + 1000 * self.forget_epoch

    @contextmanager
    def snapshot(self, conn: None) -> Iterator[None]:
        yield

    def log_bounds(self, conn: None) -> LogBounds:
        return LogBounds(self.writes, self.pruned_through, self.forget_epoch)

    def live_rows(self, conn: None, key: PartitionKey, ids: Sequence[int] | None) -> list[Sequence[Any]]:
        if ids is None:
            self.loads += 1
        wanted = self.rows if ids is None else {i: self.rows[i] for i in ids if i in self.rows}
        return [
            self._row(learning_id, row)
            for learning_id, row in sorted(wanted.items())
            if ("t1", row["user"]) == key and row["status"] != "deprecated"
        ]

    def changed(self, conn: None, key: PartitionKey, after: int) -> list[int]:
        return [learning_id for seq, k, learning_id in self.log if k == key and seq > after]

    @staticmethod
    def _row(learning_id: int, row: dict[str, Any]) -> tuple[Any, ...]:
        text = row["text"]
        vector = unit_vector(text, TEST_DIM).tobytes()
        tags = json.dumps(["brewing"])
        # In PARTITION_FIELDS order: id, status, category, namespace, type, simhash64, embedding, text, topic,
        # tags, hits, updated_at, said_at, event_at, event_until, index_terms (None: tokenised from the text).
        identity = (learning_id, row["status"], "equipment", "learning", "fact", simhash64_hex(text))
        return (*identity, vector, text, "", tags, 0, 0.0, None, None, None, None)


def cache(source: MemorySource, max_vectors: int = 1000) -> PartitionCache[None]:
    return PartitionCache(
        source, embedding_model="m", dimension=TEST_DIM, ann_threshold=1 << 30, max_vectors=max_vectors, ann_dir=None
    )


def found(partitions: PartitionCache[None], text: str, scope: Scope = ALICE) -> list[int]:
    """The ids a search of the scope finds: with these few rows, every live one (the vector search keeps 5)."""
    request = SearchRequest(vector=unit_vector(text, TEST_DIM), terms=text.split(), filters=Filters(), vector_k=5)
    return sorted(partitions.search(None, scope, request).ids.tolist())


def test_a_partition_loads_once_and_follows_the_log() -> None:
    source = MemorySource()
    source.write(1, "alice", "mash at 66 C")
    partitions = cache(source)
    assert found(partitions, "mash at 66 C") == [1]
    source.write(2, "alice", "boil for 60 minutes")
    source.write(1, "alice", "mash at 66 C", status="deprecated")
    source.write(3, "bob", "bob's kettle")
    assert found(partitions, "boil for 60 minutes") == [2]  # caught up: 2 added, 1 gone, bob's elsewhere
    source.delete(2)
    assert found(partitions, "boil for 60 minutes") == []
    assert source.loads == 2  # alice's partition and the tenant's global one, each read whole once


def test_a_partition_behind_the_pruned_log_reloads_and_a_forget_drops_them_all() -> None:
    source = MemorySource()
    source.write(1, "alice", "mash at 66 C")
    partitions = cache(source)
    found(partitions, "mash")
    loads = source.loads
    source.write(2, "alice", "whirlpool for 20 minutes")
    assert found(partitions, "whirlpool for 20 minutes") == [1, 2]
    assert source.loads == loads  # caught up from the log
    source.write(3, "alice", "chill to 20 C")
    source.prune()  # the change that added 3 is gone from the log
    assert found(partitions, "chill to 20 C") == [1, 2, 3]
    assert source.loads == loads + 2  # both partitions were behind the pruned part: read whole again
    source.forget_epoch += 1
    found(partitions, "mash")
    assert source.loads == loads + 4  # a user forgotten anywhere: every partition dropped


def test_least_recently_used_partitions_go_when_the_vectors_do_not_fit() -> None:
    source = MemorySource()
    for n, user in enumerate(["ann", "ben", "cy"]):
        source.write(n * 10 + 1, user, f"{user} one")
        source.write(n * 10 + 2, user, f"{user} two")
    partitions = cache(source, max_vectors=4)
    for user in ["ann", "ben", "cy"]:
        found(partitions, "one", Scope(tenant="t1", user=user))
    kept = set(partitions._partitions)
    assert ("t1", "ann") not in kept and {("t1", "ben"), ("t1", "cy")} <= kept
