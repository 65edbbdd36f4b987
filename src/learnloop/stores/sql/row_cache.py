"""Decoded rows of the learnings retrievals keep, and their open conflict partners, between retrievals.

A retrieval reads whole rows for the handful of learnings it keeps and their open possible-conflict links: two
statements and a row decoding per item, about a sixth of a warm retrieval at 10k learnings (2026-11-27). The
same learnings come back often (a user's standing preferences answer many questions), so their decoded rows
are kept while nothing can have changed them: while the store's stamp stands still (SQLite: `PRAGMA
data_version`, which moves when another connection commits, and this connection's change count).

Every retrieval's bookkeeping (hit counts and its event; later, the promotions it earns) moves the stamp. When such a
commit wrote nothing but `Touch`, `AppendEvent` and `Update` (a promotion; links stay) and no other connection
committed in between, the touched rows take the counters the commit returned, the updated ones are dropped,
and the rest carried to the new stamp. Anything else clears the cache: it holds only what a read at the current
stamp would return. Callers get copies, so changing a returned learning never reaches the cache.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence

from ...models import Learning, Scope, Source, constructed
from ..records import AppendEvent, Counted, FollowUp, Operation, Touch, Update
from .bookkeeping import Bookkeeping, Deferred, FollowUps
from .rows import from_ts

__all__ = ["RowCache", "Written", "served"]

# Enough for the learnings a busy process retrieves between two writes; past it the oldest entries go.
_CAPACITY = 4_096


class RowCache:
    """`foreign(before, after)`: whether another connection may have committed between two stamps."""

    def __init__(self, foreign: Callable[[Hashable, Hashable], bool], capacity: int = _CAPACITY) -> None:
        self.foreign = foreign
        self.capacity = capacity
        self.stamp: Hashable | None = None
        self._rows: dict[int, tuple[Learning, str | None]] = {}  # id -> (row, gate version)
        # (tenant, user of the scope, id) -> ids of its open possible-conflict partners: links are read per scope.
        self._partners: dict[tuple[str, str | None, int], tuple[int, ...]] = {}

    def at(self, stamp: Hashable) -> None:
        """Make the cache hold rows as of `stamp`: everything goes if the stamp moved."""
        if stamp != self.stamp:
            self.clear()
            self.stamp = stamp

    def clear(self) -> None:
        self._rows.clear()
        self._partners.clear()
        self.stamp = None

    def row(self, learning_id: int) -> tuple[Learning, str | None] | None:
        return self._rows.get(learning_id)

    def put_row(self, learning: Learning, gate_version: str | None) -> None:
        rows = self._rows
        if len(rows) >= self.capacity and learning.id not in rows:
            del rows[next(iter(rows))]
        rows[learning.id] = (learning, gate_version)

    def partners(self, scope: Scope, learning_id: int) -> tuple[int, ...] | None:
        return self._partners.get((scope.tenant, scope.user, learning_id))

    def put_partners(self, scope: Scope, learning_id: int, partners: tuple[int, ...]) -> None:
        found = self._partners
        if len(found) >= self.capacity:
            del found[next(iter(found))]
        found[(scope.tenant, scope.user, learning_id)] = partners

    def refresh(self, counted: Iterable[Counted]) -> None:
        """Counters a commit changed and returned (retrievals' hits): cached rows take their new values."""
        rows = self._rows
        for counts in counted:
            held = rows.get(counts.id)
            if held is not None:
                # In place: the cache's own objects are never handed out (`served` copies them).
                values = held[0].__dict__
                values["hits"], values["streak"] = counts.hits, counts.streak
                values["last_retrieved_at"] = from_ts(counts.last_retrieved_at)

    def watch(self, batch: Deferred) -> tuple[Deferred, Written]:
        """The batch of bookkeeping writes with their follow-ups wrapped to note what they write too (a follow-up
        handed back for later is wrapped again, for its own batch, when it comes)."""
        written = Written()

        def noting(then: FollowUp) -> FollowUp:
            def noted(touched: list[Learning]) -> Sequence[Operation]:
                more = then(touched)
                written.note(more)
                return more

            return noted

        watched: Deferred = []
        for item, future in batch:
            if isinstance(item, Bookkeeping):
                written.note(item.operations)
                if item.then is not None:
                    item = Bookkeeping(item.scope, item.operations, noting(item.then))
            elif isinstance(item, FollowUps):
                item = FollowUps(item.scope, item.ids, noting(item.then), item.done)
            else:
                written.other = True
            watched.append((item, future))
        return watched, written

    def carry(self, stamps: tuple[Hashable, Hashable] | None, written: Written) -> None:
        """After a bookkeeping commit: keep the cache at the new stamp if that commit changed nothing it holds
        but rows `refresh` replaced and rows an update changed, which go (`stamps`: before and after it)."""
        if stamps is None or written.other or self.stamp != stamps[0] or self.foreign(*stamps):
            self.clear()
            return
        for learning_id in written.updated:
            self._rows.pop(learning_id, None)
        self.stamp = stamps[1]


class Written:
    """What a batch of bookkeeping writes changes that the cache may hold: rows `Update`s change (a status
    promotion; links stay), or anything else (`other`: the cache is cleared)."""

    def __init__(self) -> None:
        self.updated: set[int] = set()
        self.other = False

    def note(self, operations: Iterable[Operation]) -> None:
        for op in operations:
            if isinstance(op, Update):
                self.updated.add(op.id)
            elif not isinstance(op, (Touch, AppendEvent)):
                self.other = True


def served(learning: Learning) -> Learning:
    """A copy of a cached learning for a caller (the cache's own is never handed out)."""
    values = dict(learning.__dict__)
    values["tags"] = list(values["tags"])
    values["source"] = constructed(Source, dict(values["source"].__dict__))
    return constructed(Learning, values)
